/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sync-server.c, the runtime's one server of the sync protocol, against a forked peer: handlers per type, a
 * handler that ends the serve, the peer's SYNC_ERROR and an unexpected message (worded by the server, the peer
 * killed), a hang-up with and without a handler, the timeout, and a failing handler (the peer killed). */

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error-util.h"
#include "macro.h"
#include "process-util.h"
#include "sync-server.h"
#include "tap.h"

typedef enum PeerEnd {
        PEER_WAIT, /* stays until killed */
        PEER_EXIT,
        PEER_SIGTERM_PARENT, /* sends the runtime SIGTERM, then waits */
} PeerEnd;

typedef struct Peer {
        pid_t pid;
        int pidfd, sock;
} Peer;

/* A peer that sends types[] (SYNC_ERROR with EACCES and "boom"), then waits or exits. */
static int peer_start(const SyncType *types, size_t n, PeerEnd end, Peer *ret) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        pid_t pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                close(sv[0]);
                for (size_t i = 0; i < n; i++)
                        if (types[i] == SYNC_ERROR)
                                (void) sync_send_error(sv[1], EACCES, "boom");
                        else
                                (void) sync_send(sv[1], types[i], 0, NULL, 0, -EBADF);
                if (end == PEER_EXIT)
                        _exit(0);
                if (end == PEER_SIGTERM_PARENT) {
                        (void) usleep(100 * 1000);
                        (void) kill(getppid(), SIGTERM);
                }
                for (;;)
                        pause();
        }
        close(sv[1]);
        *ret = (Peer){ .pid = pid, .pidfd = (int) syscall(SYS_pidfd_open, pid, 0), .sock = sv[0] };
        return ret->pidfd < 0 ? -errno : 0;
}

/* Whether the peer was dead already; then it is killed (if need be) and reaped. */
static bool peer_finish(Peer *p) {
        bool dead = pidfd_wait_exit(p->pidfd, 0) >= 0;
        (void) pidfd_send_sig(p->pidfd, SIGKILL);
        (void) waitpid(p->pid, NULL, 0);
        close(p->pidfd);
        close(p->sock);
        return dead;
}

static const SyncWording wording = {
        .peer = "the peer",
        .prefix = "test: ",
        .awaited = "the peer",
        .timed_out = "the peer did not answer in time",
        .error_prefix = "peer failed: ",
        .error_default = "no message",
};

static unsigned n_prepared;

static int on_prepared(SyncServer *s, SyncMsg *m, char **reterr) {
        n_prepared++;
        return 0;
}

static int on_ready(SyncServer *s, SyncMsg *m, char **reterr) {
        return 1;
}

static int on_seccomp_fails(SyncServer *s, SyncMsg *m, char **reterr) {
        return errorf(reterr, EIO, "the handler failed");
}

static int on_hangup_ok(SyncServer *s, char **reterr) {
        return 0;
}

static const SyncWording wording_killed = {
        .peer = "the peer",
        .prefix = "test: ",
        .awaited = "the peer to exec",
        .killed = "it",
        .timed_out = "the peer did not answer in time",
        .error_prefix = "",
        .error_default = "no message",
};

static int serve(const Peer *p, int (*on_hangup)(SyncServer *s, char **reterr), uint64_t timeout_usec,
                 SyncServer *ret, char **reterr) {
        *ret = (SyncServer){
                .sock = p->sock,
                .pidfd = p->pidfd,
                .timeout_usec = timeout_usec,
                .wording = &wording,
                .handlers = {
                        [SYNC_PREPARED] = on_prepared,
                        [SYNC_READY] = on_ready,
                        [SYNC_EXEC] = sync_handle_exec,
                        [SYNC_SECCOMP_FD] = on_seccomp_fails,
                },
                .on_hangup = on_hangup,
        };
        return sync_serve(ret, reterr);
}

int main(void) {
        SyncServer s;
        Peer p;

        {
                static const SyncType t[] = { SYNC_PREPARED, SYNC_PREPARED, SYNC_READY };
                _cleanup_free_ char *err = NULL;
                n_prepared = 0;
                if (peer_start(t, ELEMENTSOF(t), PEER_WAIT, &p) >= 0) {
                        tap_is_int(serve(&p, NULL, 5 * USEC_PER_SEC, &s, &err), 1,
                                   "a handler's positive value ends the serve with it");
                        tap_is_int(n_prepared, 2, "each message went to its type's handler");
                        tap_ok(!peer_finish(&p), "a serve that succeeds leaves the peer alone");
                }
        }
        {
                static const SyncType t[] = { SYNC_PREPARED, SYNC_ERROR };
                _cleanup_free_ char *err = NULL;
                if (peer_start(t, ELEMENTSOF(t), PEER_WAIT, &p) >= 0) {
                        tap_is_int(serve(&p, NULL, 5 * USEC_PER_SEC, &s, &err), -EACCES,
                                   "SYNC_ERROR: the peer's errno");
                        tap_is_str(err, "peer failed: boom",
                                   "SYNC_ERROR: the caller's prefix and the peer's message");
                        tap_ok(s.peer_dead && peer_finish(&p), "SYNC_ERROR: the peer was killed");
                }
        }
        {
                static const SyncType t[] = { SYNC_CONSOLE };
                _cleanup_free_ char *err = NULL;
                if (peer_start(t, ELEMENTSOF(t), PEER_WAIT, &p) >= 0) {
                        tap_is_int(serve(&p, NULL, 5 * USEC_PER_SEC, &s, &err), -EBADMSG,
                                   "a message without a handler fails the serve");
                        tap_is_str(err, "unexpected message 4 from the peer", "it is worded by the server");
                        tap_ok(peer_finish(&p), "an unexpected message: the peer was killed");
                }
        }
        {
                static const SyncType t[] = { SYNC_SECCOMP_FD };
                _cleanup_free_ char *err = NULL;
                if (peer_start(t, ELEMENTSOF(t), PEER_WAIT, &p) >= 0) {
                        tap_is_int(serve(&p, NULL, 5 * USEC_PER_SEC, &s, &err), -EIO,
                                   "a failing handler fails the serve");
                        tap_is_str(err, "the handler failed", "with the handler's message");
                        tap_ok(peer_finish(&p), "a failing handler: the peer was killed");
                }
        }
        {
                static const SyncType t[] = { SYNC_EXEC };
                _cleanup_free_ char *err = NULL;
                if (peer_start(t, ELEMENTSOF(t), PEER_EXIT, &p) >= 0) {
                        tap_is_int(serve(&p, on_hangup_ok, 5 * USEC_PER_SEC, &s, &err), 0,
                                   "a hang-up ends the serve as on_hangup says");
                        tap_ok(s.exec_seen, "SYNC_EXEC was seen");
                        peer_finish(&p);
                }
        }
        {
                _cleanup_free_ char *err = NULL;
                if (peer_start(NULL, 0, PEER_EXIT, &p) >= 0) {
                        tap_is_int(serve(&p, NULL, 5 * USEC_PER_SEC, &s, &err), -ECHILD,
                                   "a hang-up without on_hangup fails");
                        tap_is_str(err, "the peer died", "worded with the peer's name");
                        peer_finish(&p);
                }
        }
        {
                _cleanup_free_ char *err = NULL;
                if (peer_start(NULL, 0, PEER_WAIT, &p) >= 0) {
                        tap_is_int(serve(&p, NULL, 200 * USEC_PER_MSEC, &s, &err), -ETIMEDOUT,
                                   "a silent peer: the wait is bounded");
                        tap_is_str(err, "the peer did not answer in time",
                                   "with the caller's timeout message");
                        tap_ok(s.peer_dead && peer_finish(&p), "a silent peer is killed");
                }
        }
        {
                _cleanup_free_ char *err = NULL;
                /* Blocked before the peer exists: a SIGTERM that comes before the wait stays pending for it. */
                sigset_t term, old;
                sigemptyset(&term);
                sigaddset(&term, SIGTERM);
                sigprocmask(SIG_BLOCK, &term, &old);
                if (peer_start(NULL, 0, PEER_SIGTERM_PARENT, &p) >= 0) {
                        SyncServer t = { .sock = p.sock,
                                         .pidfd = p.pidfd,
                                         .timeout_usec = 5 * USEC_PER_SEC,
                                         .wording = &wording_killed };
                        tap_is_int(sync_serve(&t, &err), -EINTR, "the caller's SIGTERM ends the wait");
                        tap_is_str(
                                err,
                                "test: interrupted by SIGTERM while waiting for the peer to exec; it was killed",
                                "worded with the caller's prefix, what it awaited and the kill");
                        tap_ok(t.peer_dead && peer_finish(&p), "an interrupted wait: the peer was killed");
                }
                sigprocmask(SIG_SETMASK, &old, NULL);
        }
        return tap_done();
}
