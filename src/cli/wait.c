/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "macro.h"
#include "process-util.h"

int cli_block_forwarded_signals(void) {
        sigset_t mask;

        /* Blocked before the process exists, so that no signal meant for it is lost; the process itself
         * starts with an empty mask. */
        sigfillset(&mask);
        sigdelset(&mask, SIGSEGV);
        sigdelset(&mask, SIGBUS);
        sigdelset(&mask, SIGILL);
        sigdelset(&mask, SIGFPE);
        sigdelset(&mask, SIGKILL);
        sigdelset(&mask, SIGSTOP);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return -errno;
        int fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        return fd < 0 ? -errno : fd;
}

int cli_wait_forwarding_signals(pid_t pid, int pidfd, int sfd) {
        siginfo_t si = {};

        /* A process whose main thread was killed (a seccomp KILL_THREAD of the leader) lives on while
         * another thread does, as for runc and crun: the pidfd reports the whole thread group's exit. */
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
        while (waitid(P_PID, (id_t) pid, &si, WEXITED) < 0)
                if (errno != EINTR)
                        return -errno;
        if (si.si_code == CLD_EXITED)
                return si.si_status;
        return 128 + si.si_status;
}
