/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "fileio.h"
#include "foreground.h"
#include "host-console.h"
#include "macro.h"
#include "notify.h"
#include "process-util.h"

int foreground_block_signals(void) {
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

/* Move what is readable on `in` to `out`; false on EOF or error. */
static bool pump(int in, int out) {
        char buf[8192];
        ssize_t k = read(in, buf, sizeof buf);
        if (k < 0 && (errno == EINTR || errno == EAGAIN))
                return true;
        if (k <= 0)
                return false;
        return loop_write(out, buf, (size_t) k) >= 0;
}

int foreground_wait(pid_t pid, int pidfd, int sfd, int master, NotifyProxy *notify) {
        struct termios saved;
        bool restore = false, stdin_open = master >= 0;
        siginfo_t si = {};

        /* With a pty of our own (a foreground run with process.terminal, as runc does): our terminal goes
         * raw and its size follows ours; what is typed goes to the container, what it prints comes back. */
        if (master >= 0 && isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0) {
                struct termios raw = saved;
                cfmakeraw(&raw);
                restore = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
                console_copy_winsize(STDIN_FILENO, master);
        }

        /* A process whose main thread was killed (a seccomp KILL_THREAD of the leader) lives on while
         * another thread does, as for runc and crun: the pidfd reports the whole thread group's exit. */
        for (;;) {
                struct pollfd p[5] = {
                        { .fd = pidfd, .events = POLLIN },
                        { .fd = sfd, .events = POLLIN },
                        { .fd = master, .events = POLLIN },
                        { .fd = stdin_open ? STDIN_FILENO : -1, .events = POLLIN },
                        { .fd = -1 },
                };
                int timeout = notify ? notify_proxy_prepare(notify, &p[4], -1) : -1;
                if (poll(p, 5, timeout) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                if (p[2].revents & POLLIN)
                        (void) pump(master, STDOUT_FILENO);
                if (p[3].revents & (POLLIN | POLLHUP)) {
                        if (!pump(STDIN_FILENO, master))
                                stdin_open = false;
                }
                /* STATUS=, RELOADING=1, STOPPING=1, WATCHDOG=1 ... (a foreground run stays the main process). */
                if (notify)
                        (void) notify_proxy_dispatch(notify, p[4].revents, NULL, NULL);
                if (p[0].revents)
                        break;
                if (p[1].revents & POLLIN) {
                        struct signalfd_siginfo ssi;
                        while (read(sfd, &ssi, sizeof ssi) == sizeof ssi) {
                                if (ssi.ssi_signo == SIGWINCH && master >= 0)
                                        console_copy_winsize(STDIN_FILENO, master);
                                else if (ssi.ssi_signo != SIGCHLD && ssi.ssi_signo != SIGPIPE)
                                        (void) pidfd_send_sig(pidfd, (int) ssi.ssi_signo);
                        }
                }
        }
        if (master >= 0) {
                /* What the container wrote last is still in the pty. */
                int fl = fcntl(master, F_GETFL);
                if (fl >= 0)
                        (void) fcntl(master, F_SETFL, fl | O_NONBLOCK);
                while (pump(master, STDOUT_FILENO)) {
                        struct pollfd q = { .fd = master, .events = POLLIN };
                        if (poll(&q, 1, 0) <= 0)
                                break;
                }
        }
        if (restore)
                (void) tcsetattr(STDIN_FILENO, TCSANOW, &saved);
        while (waitid(P_PID, (id_t) pid, &si, WEXITED) < 0)
                if (errno != EINTR)
                        return -errno;
        if (si.si_code == CLD_EXITED)
                return si.si_status;
        return 128 + si.si_status;
}
