/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* sd_notify through the container (as runc): with NOTIFY_SOCKET in the runtime's environment, `create` binds
 * the directory NOTIFY_DIR of the container's state directory on NOTIFY_CONTAINER_DIR and sets NOTIFY_SOCKET in
 * the container's environment; `start` binds the datagram socket NOTIFY_DIR/NOTIFY_SOCKET_NAME in it (whoever
 * starts the container listens: nothing is held between create and start), waits for READY=1 and forwards it
 * with MAINPID= to the caller's socket. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

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

/* The lines of one datagram from the container that go to the caller: READY=1, STATUS=, RELOADING=1,
 * STOPPING=1, WATCHDOG=, WATCHDOG_USEC=, EXTEND_TIMEOUT_USEC=, ERRNO=, MONOTONIC_USEC=; MAINPID=mainpid is added
 * to READY=1 (mainpid > 0), the container's own MAINPID= is dropped. *ret_out NULL: nothing to forward. */
int notify_filter(const char *msg, size_t len, pid_t mainpid, char **ret_out, bool *ret_ready,
                  uint64_t *ret_extend_usec);

/* Send msg to the socket address host ("/path" or "@abstract"). */
int notify_send(const char *host, const char *msg);

/* Read what is queued on fd and forward it to host. *ret_ready (optional) is set when READY=1 was among it;
 * *ret_extend_usec (optional) to the last EXTEND_TIMEOUT_USEC= seen (0: none). */
int notify_forward(int fd, const char *host, pid_t mainpid, bool *ret_ready, uint64_t *ret_extend_usec);

/* Forward until READY=1; the container's death (pidfd) or timeout_usec passing without READY=1 (each
 * EXTEND_TIMEOUT_USEC= moves the deadline) ends the wait with an error. */
int notify_wait_ready(int fd, int pidfd, const char *id, const char *host, pid_t mainpid,
                      uint64_t timeout_usec, char **reterr);
