/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* sd_notify through the container (as runc): with NOTIFY_SOCKET in the runtime's environment, `create` binds
 * the directory NOTIFY_DIR of the container's state directory on NOTIFY_CONTAINER_DIR and sets NOTIFY_SOCKET in
 * the container's environment; `start` binds the datagram socket NOTIFY_DIR/NOTIFY_SOCKET_NAME in it (whoever
 * starts the container listens: nothing is held between create and start), waits for READY=1 and forwards it
 * with MAINPID= to the caller's socket. */

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "macro.h"
#include "oci-config.h"

#define NOTIFY_DIR "notify"
#define NOTIFY_SOCKET_NAME "notify.sock"
#define NOTIFY_CONTAINER_DIR "/run/notify"
#define NOTIFY_CONTAINER_SOCKET NOTIFY_CONTAINER_DIR "/" NOTIFY_SOCKET_NAME
/* Seconds `start` waits for READY=1 unless the container extends it (EXTEND_TIMEOUT_USEC=). */
#define NOTIFY_TIMEOUT_ANNOTATION "io.github.sdrun.notify-timeout"
#define NOTIFY_DEFAULT_TIMEOUT_SEC 300

/* What READY=1 means for a container (a bundle may not know sd_notify): "container" (the default, as runc:
 * the container sends it through its socket) or "started" (sdrun sends it once the process has been
 * executed; the container gets no socket). From the annotation, else the environment variable (a unit's
 * Environment=), else "container". */
typedef enum NotifyReady {
        NOTIFY_READY_CONTAINER,
        NOTIFY_READY_STARTED,
} NotifyReady;
#define NOTIFY_READY_ANNOTATION "io.github.sdrun.notify-ready"
#define NOTIFY_READY_ENV "SDRUN_NOTIFY_READY"
int notify_ready_mode(const OciConfig *c, NotifyReady *ret, char **reterr);

/* The annotation NOTIFY_TIMEOUT_ANNOTATION in usec (*ret unchanged without it); -EINVAL unless 1..86400. */
int notify_timeout_from_config(const OciConfig *c, uint64_t *ret, char **reterr);

/* The caller's NOTIFY_SOCKET ("/path" or "@abstract"), or NULL when unset, empty or unusable. */
const char *notify_host_socket(void);

/* create: add the bind mount of host_dir (the state directory's NOTIFY_DIR) on NOTIFY_CONTAINER_DIR to the
 * parsed config and set NOTIFY_SOCKET=NOTIFY_CONTAINER_SOCKET in process.env (replacing one it had). */
int notify_setup_config(OciConfig *c, const char *host_dir);

/* start: bind the datagram socket NOTIFY_DIR/NOTIFY_SOCKET_NAME below the state directory dir_fd, replacing a
 * stale one, writable for every user of the container. */
int notify_bind(int dir_fd, int *ret_fd, char **reterr);

/* Send msg to the socket address host ("/path" or "@abstract"), from a socket of its own (a one-off). */
int notify_send(const char *host, const char *msg);

/* The proxy between the container's socket and the host's: whatever the container sends, systemd (often
 * PID 1) gets little. Of each datagram only the lines READY=1, STATUS=, RELOADING=1, STOPPING=1, WATCHDOG=,
 * WATCHDOG_USEC=, EXTEND_TIMEOUT_USEC=, ERRNO=, MONOTONIC_USEC= are kept (the container's MAINPID=, FDSTORE=
 * ... are not), and of each field only its latest value; a value that is what was last forwarded is not
 * forwarded again (EXTEND_TIMEOUT_USEC= and MONOTONIC_USEC= excepted: a repeat means something). What is
 * left goes out in one datagram, from one socket, at most NOTIFY_BURST at once and then one every
 * NOTIFY_FORWARD_USEC; READY=1 goes at once and carries MAINPID=mainpid (mainpid > 0). WATCHDOG=1 is apart
 * from the bucket: at most one per second, or per quarter of the watchdog interval (our WATCHDOG_USEC or
 * the container's WATCHDOG_USEC=) when shorter, never more than one per NOTIFY_WATCHDOG_MIN_USEC. The
 * container's socket is read NOTIFY_READ_BATCH datagrams per syscall and at most NOTIFY_READ_BUDGET per
 * wakeup; after a full budget it rests NOTIFY_READ_PAUSE_USEC (the container's senders wait). */
#define NOTIFY_MAX_MESSAGE 4096 /* what systemd reads of one datagram */
#define NOTIFY_BURST 10
#define NOTIFY_FORWARD_USEC (200 * USEC_PER_MSEC)
#define NOTIFY_WATCHDOG_MAX_USEC USEC_PER_SEC
#define NOTIFY_WATCHDOG_MIN_USEC (100 * USEC_PER_MSEC)
#define NOTIFY_READ_BATCH 32
#define NOTIFY_READ_BUDGET 256
#define NOTIFY_READ_PAUSE_USEC (10 * USEC_PER_MSEC)
#define NOTIFY_SEND_TIMEOUT_SEC 1

typedef struct NotifyProxy NotifyProxy;

/* Takes fd (the container's socket, from notify_bind) on success. */
int notify_proxy_new(int fd, const char *host, pid_t mainpid, NotifyProxy **ret);
NotifyProxy *notify_proxy_free(NotifyProxy *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(NotifyProxy *, notify_proxy_free);

/* Before poll(): *ret_pfd is the container's socket (fd -1 while it rests); returns timeout_ms (-1: none)
 * lowered to when something held back may go. */
int notify_proxy_prepare(NotifyProxy *p, struct pollfd *ret_pfd, int timeout_ms);
/* After poll(), with the revents of that pollfd: read what the budget allows, forward what the limits
 * allow. *ret_ready (optional): READY=1 was read (and forwarded); *ret_extend_usec (optional): the last
 * EXTEND_TIMEOUT_USEC= read (0: none). */
int notify_proxy_dispatch(NotifyProxy *p, short revents, bool *ret_ready, uint64_t *ret_extend_usec);

/* The parts of the above, with the clock given (unit tests): take one datagram's lines; forward what the
 * limits allow at now (returns 1 when a datagram went out); when to call again (USEC_INFINITY: never). */
void notify_proxy_feed(NotifyProxy *p, const char *msg, size_t len, bool *ready, uint64_t *extend);
int notify_proxy_flush_at(NotifyProxy *p, uint64_t now);
uint64_t notify_proxy_next(const NotifyProxy *p, uint64_t now);

/* Forward until READY=1; the container's death (pidfd) or timeout_usec passing without READY=1 (each
 * EXTEND_TIMEOUT_USEC= moves the deadline) ends the wait with an error. */
int notify_wait_ready(NotifyProxy *p, int pidfd, const char *id, uint64_t timeout_usec, char **reterr);
