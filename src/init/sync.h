/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The sync protocol between the runtime and the container init: SOCK_SEQPACKET messages, each a header and
 * an optional payload, optionally carrying one fd. Every step is acknowledged; an error travels back as
 * (errno, message) and the runtime prints it once. Every receive is bounded and also watches the peer's
 * pidfd, so a child that dies at any step is noticed at once. */

#include <stdint.h>
#include <sys/types.h>

typedef enum SyncType {
        SYNC_GO = 1,       /* runtime → init: id maps written, go on */
        SYNC_PREPARED,     /* init → runtime: namespaces and mounts done; run prestart/createRuntime */
        SYNC_CONTINUE,     /* runtime → init: hooks done; payload: state JSON for createContainer hooks */
        SYNC_CONSOLE,      /* init → runtime: fd is the pty master */
        SYNC_CONSOLE_DONE, /* runtime → init */
        SYNC_READY,        /* init → runtime: blocked before exec, final container process */
        SYNC_COMMITTED,    /* runtime → init: state says created; stop watching the runtime */
        SYNC_ERROR,        /* either way: error = errno, payload = message */
        SYNC_STAGE1_PID,   /* stage1 → runtime: payload = pid_t of the init, fd = its pidfd */
        SYNC_EXEC_FAILED,  /* init/trampoline → start/exec: error = errno of execve, payload = path */
        SYNC_SECCOMP_FD,   /* init → start/exec: fd = seccomp notify listener */
        SYNC_SECCOMP_FD_DONE, /* start/exec → init */
        SYNC_START,           /* start → init: run the user process */
        SYNC_EXEC, /* trampoline → start/exec: the hop ran; the process is the container's from here */
} SyncType;

typedef struct SyncMsg {
        SyncType type;
        int error;
        char *payload; /* NUL-terminated, malloc'd, may be NULL */
        size_t len;
        int fd;       /* -EBADF if none */
        pid_t sender; /* the sending process, in our pid namespace, where the socket has SO_PASSCRED; else 0 */
} SyncMsg;

void sync_msg_done(SyncMsg *m);

int sync_send(int sock, SyncType type, int error, const void *payload, size_t len, int fd);
/* Receive one message. watch_pidfd: if >= 0 and it becomes readable (process died) before a message
 * arrives, returns -ECHILD. timeout_usec: USEC_INFINITY for none; -ETIMEDOUT. Peer closed: -EPIPE. */
int sync_recv(int sock, int watch_pidfd, uint64_t timeout_usec, SyncMsg *ret);
/* As sync_recv(), for the runtime waiting on a container-side process: the caller's SIGTERM, SIGINT or SIGHUP
 * (blocked for the wait, and consumed) ends it with -EINTR, *ret_signal saying which, so that no such wait
 * ends only on SIGKILL or the timeout. The mask is restored before it returns. */
int sync_recv_interruptible(int sock, int watch_pidfd, uint64_t timeout_usec, SyncMsg *ret, int *ret_signal);
/* Send an error message (formatted) and return -error. */
int sync_send_error(int sock, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Receive and require a given type; SYNC_ERROR becomes (-error, *reterr = message). */
int sync_expect(int sock, int watch_pidfd, uint64_t timeout_usec, SyncType type, SyncMsg *ret,
                char **reterr);
