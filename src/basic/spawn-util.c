/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "error-util.h"
#include "macro.h"
#include "process-util.h"
#include "spawn-util.h"

_noreturn_ static void spawn_child(const SpawnParams *p, int in_fd, int out_fd, pid_t parent) {
        /* A child does not outlive the process that runs it (nobody would enforce its deadline). */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                _exit(126);
        if (dup2(in_fd, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
            dup2(out_fd, STDERR_FILENO) < 0)
                _exit(126);
        if (p->keep_fd >= 3) {
                /* Everything but keep_fd (close-on-exec itself, if the exec is to close it). */
                if (p->keep_fd > 3)
                        (void) syscall(SYS_close_range, 3U, (unsigned) p->keep_fd - 1, 0U);
                (void) syscall(SYS_close_range, (unsigned) p->keep_fd + 1, ~0U, 0U);
        } else
                (void) syscall(SYS_close_range, 3U, ~0U, 0U);
        sigset_t all;
        sigemptyset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        if (p->cwd && chdir(p->cwd) < 0 && chdir("/") < 0)
                _exit(126);
        p->exec(p->userdata);
        _exit(127);
}

/* One read of the output pipe, kept up to SPAWN_OUTPUT_MAX bytes; returns read()'s result. */
static ssize_t spawn_read_output(int fd, SpawnResult *ret) {
        char buf[4096];
        ssize_t r = read(fd, buf, sizeof buf);
        if (r > 0) {
                size_t c = MIN((size_t) r, SPAWN_OUTPUT_MAX - ret->output_len);
                memcpy(ret->output + ret->output_len, buf, c);
                ret->output_len += c;
        }
        return r;
}

/* Feed stdin, collect output, watch the child and the clock, all in one loop, until the child exited (its
 * output drained) or was killed, at the deadline or on a failing poll. */
static void spawn_serve(const SpawnParams *p, int *in_fd, int *out_fd, int pidfd, pid_t pid,
                        uint64_t deadline, SpawnResult *ret) {
        size_t in_off = 0;

        for (;;) {
                struct pollfd fds[3] = {
                        { .fd = *out_fd, .events = POLLIN },
                        { .fd = *in_fd, .events = POLLOUT },
                        { .fd = pidfd, .events = POLLIN },
                };
                /* Checked before each poll: a child that keeps writing cannot outlive its deadline. */
                if (now_usec(CLOCK_MONOTONIC) >= deadline) {
                        ret->timed_out = true;
                        (void) kill(pid, SIGKILL);
                        return;
                }
                int k = poll_until(fds, ELEMENTSOF(fds), deadline);
                if (k < 0 && k != -ETIMEDOUT) {
                        (void) kill(pid, SIGKILL);
                        return;
                }
                if (fds[1].revents & (POLLOUT | POLLERR | POLLHUP)) {
                        ssize_t w = write(*in_fd, p->input + in_off, p->input_len - in_off);
                        if (w > 0)
                                in_off += (size_t) w;
                        if (w < 0 && errno != EAGAIN && errno != EINTR)
                                in_off = p->input_len; /* the child closed stdin: fine */
                        if (in_off >= p->input_len)
                                *in_fd = safe_close(*in_fd);
                }
                if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) && spawn_read_output(*out_fd, ret) == 0)
                        *out_fd = safe_close(*out_fd);
                /* Done when the child exited and its output is drained (a daemonised grandchild holding the
                 * pipe open must not keep us waiting). */
                if (fds[2].revents & POLLIN) {
                        while (*out_fd >= 0 && spawn_read_output(*out_fd, ret) > 0)
                                ;
                        return;
                }
        }
}

static void spawn_reap(pid_t pid, siginfo_t *si) {
        while (waitid(P_PID, (id_t) pid, si, WEXITED) < 0 && errno == EINTR)
                ;
}

int spawn_run(const SpawnParams *p, SpawnResult *ret, char **reterr) {
        _cleanup_close_pair_ int in[2] = { -EBADF, -EBADF }, out[2] = { -EBADF, -EBADF };
        _cleanup_close_ int pidfd = -EBADF;
        siginfo_t si = {};

        assert(p && p->exec && ret);
        *ret = (SpawnResult){};
        uint64_t deadline = deadline_after(p->timeout_usec);
        if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
                return errorf(reterr, errno, "pipe: %m");

        pid_t parent = getpid();
        pid_t pid = fork();
        if (pid < 0)
                return errorf(reterr, errno, "fork: %m");
        if (pid == 0)
                spawn_child(p, in[0], out[1], parent);

        in[0] = safe_close(in[0]);
        out[1] = safe_close(out[1]);
        pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (pidfd < 0) {
                /* Without it the child's exit and its deadline cannot be watched: never wait unbounded. */
                int k = errno;
                (void) kill(pid, SIGKILL);
                spawn_reap(pid, &si);
                return errorf(reterr, k, "pidfd_open: %s", strerror(k));
        }
        /* A child that exits without reading its stdin must not kill us with SIGPIPE: blocked while we feed
         * it, and a pending one is consumed before the mask is restored. */
        sigset_t pipe_set, saved_mask;
        sigemptyset(&pipe_set);
        sigaddset(&pipe_set, SIGPIPE);
        sigprocmask(SIG_BLOCK, &pipe_set, &saved_mask);
        (void) fcntl(in[1], F_SETFL, O_NONBLOCK);
        (void) fcntl(out[0], F_SETFL, O_NONBLOCK);
        if (p->input_len == 0)
                in[1] = safe_close(in[1]);

        spawn_serve(p, &in[1], &out[0], pidfd, pid, deadline, ret);

        spawn_reap(pid, &si);
        in[1] = safe_close(in[1]);
        if (!sigismember(&saved_mask, SIGPIPE)) {
                const struct timespec zero = {};
                while (sigtimedwait(&pipe_set, NULL, &zero) > 0)
                        ;
        }
        sigprocmask(SIG_SETMASK, &saved_mask, NULL);
        ret->code = si.si_code;
        ret->status = si.si_status;
        ret->output[ret->output_len] = 0;
        return 0;
}
