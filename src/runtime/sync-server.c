/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "error-util.h"
#include "macro.h"
#include "process-util.h"
#include "seccomp-agent.h"
#include "seccomp-filter.h"
#include "sync-server.h"

/* How long a killed peer is waited for: a process in a frozen cgroup dies only on thaw, and no wait of the
 * runtime is unbounded. */
#define SYNC_KILL_WAIT_USEC (5 * USEC_PER_SEC)

/* The one kill policy: a serve that fails leaves its peer killed (or, frozen, at least sent SIGKILL). */
static int serve_fail(SyncServer *s, int r) {
        s->peer_dead =
                pidfd_wait_exit(s->pidfd, 0) >= 0 || (pidfd_send_sig(s->pidfd, SIGKILL) >= 0 &&
                                                      pidfd_wait_exit(s->pidfd, SYNC_KILL_WAIT_USEC) >= 0);
        return r < 0 ? r : -r;
}

/* A receive that brought no message: the caller's signal, the peer's death or silence, a broken socket. */
static int serve_receive_failed(SyncServer *s, int r, int sig, char **reterr) {
        const SyncWording *w = s->wording;

        if (r == -EPIPE || r == -ECHILD) {
                if (s->on_hangup) {
                        r = s->on_hangup(s, reterr);
                        return r < 0 ? serve_fail(s, r) : r;
                }
                return serve_fail(s, errorf(reterr, ECHILD, "%s died", w->peer));
        }
        if (r == -EINTR) {
                (void) serve_fail(s, r);
                return errorf(reterr, EINTR, "%sinterrupted by SIG%s while waiting for %s%s%s%s", w->prefix,
                              sigabbrev_np(sig) ?: "?", w->awaited, w->killed ? "; " : "",
                              strempty(w->killed),
                              !w->killed     ? ""
                              : s->peer_dead ? " was killed"
                                             : " was sent SIGKILL");
        }
        if (r == -ETIMEDOUT)
                return serve_fail(s, errorf(reterr, r, "%s", w->timed_out));
        return serve_fail(s, errorf(reterr, r, "sync with %s: %s", w->peer, strerror(-r)));
}

/* The peer's own failure: its errno and message. */
static int serve_peer_error(SyncServer *s, const SyncMsg *m, char **reterr) {
        int r = m->error > 0 ? -m->error : -EIO;
        return errorf(reterr, r, "%s%s", s->wording->error_prefix, m->payload ?: s->wording->error_default);
}

int sync_serve(SyncServer *s, char **reterr) {
        for (;;) {
                SyncMsg m;
                int sig = 0, r;

                r = sync_recv_interruptible(s->sock, s->pidfd, s->timeout_usec, &m, &sig);
                if (r < 0)
                        return serve_receive_failed(s, r, sig, reterr);

                SyncHandler h = (size_t) m.type < ELEMENTSOF(s->handlers) ? s->handlers[m.type] : NULL;
                if (m.type == SYNC_ERROR)
                        r = serve_peer_error(s, &m, reterr);
                else if (h)
                        r = h(s, &m, reterr);
                else
                        r = errorf(reterr, EBADMSG, "unexpected message %d from %s", (int) m.type,
                                   s->wording->peer);
                sync_msg_done(&m);
                if (r < 0)
                        return serve_fail(s, r);
                if (r > 0)
                        return r;
        }
}

int sync_handle_exec(SyncServer *s, SyncMsg *m, char **reterr) {
        s->exec_seen = true;
        return 0;
}

int sync_answer_seccomp(SyncServer *s, SyncMsg *m, const OciSeccomp *seccomp, pid_t pid,
                        const char *state_json, char **reterr) {
        int r = oci_seccomp_send_to_agent(seccomp, m->fd, pid, state_json, reterr);
        if (r < 0)
                return errwrap(reterr, r, "linux.seccomp.listenerPath");
        (void) sync_send(s->sock, SYNC_SECCOMP_FD_DONE, 0, NULL, 0, -EBADF);
        return 0;
}
