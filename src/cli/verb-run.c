/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "container.h"
#include "macro.h"
#include "process-util.h"

/* Wait for the init, forwarding the signals we get to it; returns its exit status as a shell would. */
static int wait_forwarding(pid_t pid, int pidfd) {
        sigset_t mask;
        _cleanup_close_ int sfd = -EBADF;
        siginfo_t si = {};

        sigfillset(&mask);
        sigdelset(&mask, SIGSEGV);
        sigdelset(&mask, SIGBUS);
        sigdelset(&mask, SIGILL);
        sigdelset(&mask, SIGFPE);
        sigdelset(&mask, SIGKILL);
        sigdelset(&mask, SIGSTOP);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);

        for (;;) {
                struct pollfd p[2] = { { .fd = pidfd, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
                if (poll(p, sfd >= 0 ? 2 : 1, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                if (p[0].revents)
                        break;
                if (p[1].revents & POLLIN) {
                        struct signalfd_siginfo ssi;
                        while (read(sfd, &ssi, sizeof ssi) == sizeof ssi)
                                if (ssi.ssi_signo != SIGCHLD && ssi.ssi_signo != SIGPIPE)
                                        (void) pidfd_send_sig(pidfd, (int) ssi.ssi_signo);
                }
        }
        while (waitid(P_PID, (id_t) pid, &si, WEXITED) < 0) {
                if (errno != EINTR)
                        return 255;
        }
        sigprocmask(SIG_UNBLOCK, &mask, NULL);
        if (si.si_code == CLD_EXITED)
                return si.si_status;
        return 128 + si.si_status;
}

int verb_run(int argc, char *argv[]) {
        CreateOptions o = {};
        _cleanup_free_ char *err = NULL;
        _cleanup_close_ int pidfd = -EBADF;
        bool detach = false, keep = false;
        pid_t pid = 0;
        int r, status;

        if (cli_parse_create_options("run", argc, argv, &o, &detach, &keep) < 0)
                return EXIT_FAILURE;
        log_set_context(o.id, NULL);
        r = container_create(&o, &pid, &pidfd, &err);
        if (r < 0) {
                log_error_errno(r, "run %s: %s", o.id, err ?: strerror(-r));
                return EXIT_FAILURE;
        }
        r = container_start(o.root, o.id, &err);
        if (r < 0) {
                log_error_errno(r, "run %s: %s", o.id, err ?: strerror(-r));
                (void) pidfd_send_sig(pidfd, SIGKILL);
                (void) waitpid(pid, NULL, 0);
                free(err);
                err = NULL;
                if (!keep)
                        (void) container_delete(o.root, o.id, true, &err);
                return EXIT_FAILURE;
        }
        if (detach)
                return EXIT_SUCCESS;

        status = wait_forwarding(pid, pidfd);
        if (!keep) {
                r = container_delete(o.root, o.id, true, &err);
                if (r < 0)
                        log_warning_errno(r, "run %s: delete: %s", o.id, err ?: strerror(-r));
        }
        return status;
}
