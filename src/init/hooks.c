/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "error-util.h"
#include "hooks.h"
#include "log.h"
#include "macro.h"
#include "process-util.h"
#include "string-util.h"
#include "trampoline.h"

#define HOOK_OUTPUT_MAX 8192
/* A hook without a timeout may run as long as it likes, but nothing of ours waits forever: the default
 * bound is generous. */
#define HOOK_DEFAULT_TIMEOUT_USEC (10U * 60U * USEC_PER_SEC)

static char *const empty_env[] = { NULL };

/* >= 0 in the container's init: hooks run in the container execute through this sealed trampoline. */
static int hook_trampoline_fd = -EBADF;
/* A seccomp filter in force refuses execveat: the trampoline is run as /proc/self/fd/N (trampoline.h). */
static bool hook_avoid_execveat = false;

void hooks_exec_through(int trampoline_fd, bool avoid_execveat) {
        hook_trampoline_fd = trampoline_fd;
        hook_avoid_execveat = avoid_execveat;
}

_noreturn_ static void hook_child(const OciHook *h, int in_fd, int out_fd, const char *cwd, pid_t parent) {
        char *default_argv[] = { h->path, NULL };

        /* A hook does not outlive the runtime that runs it (nobody would enforce its timeout). */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                _exit(126);
        if (dup2(in_fd, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
            dup2(out_fd, STDERR_FILENO) < 0)
                _exit(126);
        if (hook_trampoline_fd >= 3) {
                /* Everything but the trampoline, which is close-on-exec itself. */
                if (hook_trampoline_fd > 3)
                        (void) syscall(SYS_close_range, 3U, (unsigned) hook_trampoline_fd - 1, 0U);
                (void) syscall(SYS_close_range, (unsigned) hook_trampoline_fd + 1, ~0U, 0U);
        } else
                (void) syscall(SYS_close_range, 3U, ~0U, 0U);
        sigset_t all;
        sigemptyset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        if (cwd && chdir(cwd) < 0 && chdir("/") < 0)
                _exit(126);
        if (hook_trampoline_fd >= 0) {
                char *err = NULL;
                errno = -trampoline_execve(hook_trampoline_fd, hook_avoid_execveat, -1, h->path,
                                           h->args && h->args[0] ? h->args : default_argv,
                                           h->env ?: empty_env, -1, &err);
                dprintf(STDERR_FILENO, "exec \"%s\": %s\n", h->path, err ?: strerror(errno));
                _exit(127);
        }
        execve(h->path, h->args && h->args[0] ? h->args : default_argv, h->env ?: empty_env);
        dprintf(STDERR_FILENO, "exec \"%s\": %m\n", h->path);
        _exit(127);
}

static void log_hook_output(OciHookKind kind, size_t idx, char *out) {
        for (char *p = out, *line; (line = next_line(&p));)
                log_info("hook %s[%zu]: %s", oci_hook_kind_to_string(kind), idx, line);
}

static int hook_run_one(const OciHook *h, OciHookKind kind, size_t idx, const char *state_json,
                        const char *cwd, char **reterr) {
        _cleanup_close_pair_ int in[2] = { -EBADF, -EBADF }, out[2] = { -EBADF, -EBADF };
        _cleanup_close_ int pidfd = -EBADF;
        char output[HOOK_OUTPUT_MAX + 1];
        size_t out_len = 0, in_off = 0, in_len = strlen(state_json);
        uint64_t timeout = h->has_timeout ? (uint64_t) h->timeout * USEC_PER_SEC : HOOK_DEFAULT_TIMEOUT_USEC;
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + timeout;
        bool timed_out = false;
        siginfo_t si = {};
        pid_t pid;

        if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
                return -errno;

        pid_t parent = getpid();
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0)
                hook_child(h, in[0], out[1], cwd, parent);

        in[0] = safe_close(in[0]);
        out[1] = safe_close(out[1]);
        pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (pidfd < 0) {
                /* Without it the hook's exit and its timeout cannot be watched: never wait unbounded. */
                int k = errno;
                (void) kill(pid, SIGKILL);
                while (waitid(P_PID, (id_t) pid, &si, WEXITED) < 0 && errno == EINTR)
                        ;
                return errorf(reterr, -k, "error running %s hook #%zu: \"%s\": pidfd_open: %s",
                              oci_hook_kind_to_string(kind), idx, h->path, strerror(k));
        }
        /* A hook that exits without reading its stdin must not kill us with SIGPIPE: blocked while we feed
         * it, and a pending one is consumed before the mask is restored. */
        sigset_t pipe_set, saved_mask;
        sigemptyset(&pipe_set);
        sigaddset(&pipe_set, SIGPIPE);
        sigprocmask(SIG_BLOCK, &pipe_set, &saved_mask);
        (void) fcntl(in[1], F_SETFL, O_NONBLOCK);
        (void) fcntl(out[0], F_SETFL, O_NONBLOCK);
        if (in_len == 0)
                in[1] = safe_close(in[1]);

        /* Feed stdin, collect output, watch the hook and the clock, all in one loop. */
        for (;;) {
                struct pollfd p[3] = {
                        { .fd = out[0], .events = POLLIN },
                        { .fd = in[1], .events = POLLOUT },
                        { .fd = pidfd, .events = POLLIN },
                };
                /* Checked before each poll: a hook that keeps writing cannot outlive its timeout. */
                if (now_usec(CLOCK_MONOTONIC) >= deadline) {
                        timed_out = true;
                        (void) kill(pid, SIGKILL);
                        break;
                }
                int k = poll_until(p, 3, deadline);
                if (k < 0 && k != -ETIMEDOUT) {
                        (void) kill(pid, SIGKILL);
                        break;
                }
                if (p[1].revents & (POLLOUT | POLLERR | POLLHUP)) {
                        ssize_t w = write(in[1], state_json + in_off, in_len - in_off);
                        if (w > 0)
                                in_off += (size_t) w;
                        if (w < 0 && errno != EAGAIN && errno != EINTR)
                                in_off = in_len; /* the hook closed stdin: fine */
                        if (in_off >= in_len)
                                in[1] = safe_close(in[1]);
                }
                if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
                        char buf[4096];
                        ssize_t r = read(out[0], buf, sizeof buf);
                        if (r > 0) {
                                size_t c = MIN((size_t) r, HOOK_OUTPUT_MAX - out_len);
                                memcpy(output + out_len, buf, c);
                                out_len += c;
                        } else if (r == 0)
                                out[0] = safe_close(out[0]);
                }
                /* Done when the hook exited and its output is drained (a daemonised grandchild holding the
                 * pipe open must not keep us waiting). */
                if (p[2].revents & POLLIN) {
                        if (out[0] >= 0) {
                                char buf[4096];
                                ssize_t r;
                                while ((r = read(out[0], buf, sizeof buf)) > 0) {
                                        size_t c = MIN((size_t) r, HOOK_OUTPUT_MAX - out_len);
                                        memcpy(output + out_len, buf, c);
                                        out_len += c;
                                }
                        }
                        break;
                }
        }

        while (waitid(P_PID, (id_t) pid, &si, WEXITED) < 0 && errno == EINTR)
                ;
        in[1] = safe_close(in[1]);
        if (!sigismember(&saved_mask, SIGPIPE)) {
                const struct timespec zero = {};
                while (sigtimedwait(&pipe_set, NULL, &zero) > 0)
                        ;
        }
        sigprocmask(SIG_SETMASK, &saved_mask, NULL);
        output[out_len] = 0;
        /* Trim one trailing newline for the error message. */
        char *msg = output;
        if (out_len > 0 && output[out_len - 1] == '\n')
                output[out_len - 1] = 0;
        log_hook_output(kind, idx, output);

        if (timed_out)
                return errorf(reterr, ETIMEDOUT,
                              "error running %s hook #%zu: \"%s\" timed out after %d s and was killed",
                              oci_hook_kind_to_string(kind), idx, h->path,
                              h->has_timeout ? h->timeout : 600);
        if (si.si_code == CLD_EXITED && si.si_status == 0)
                return 0;
        if (si.si_code == CLD_EXITED)
                return errorf(
                        reterr, EIO, "error running %s hook #%zu: \"%s\" failed with exit status %d%s%s",
                        oci_hook_kind_to_string(kind), idx, h->path, si.si_status, *msg ? ": " : "", msg);
        /* runc's words after the path ("error running hook: signal: bad system call"): its seccomp.bats
         * looks for them. */
        char sig[64];
        snprintf(sig, sizeof sig, "%s", strsignal(si.si_status));
        for (char *q = sig; *q; q++)
                *q = (char) tolower((unsigned char) *q);
        return errorf(reterr, EIO,
                      "error running %s hook #%zu: \"%s\" was killed: error running hook: signal: %s",
                      oci_hook_kind_to_string(kind), idx, h->path, sig);
}

int hooks_run(const OciConfig *c, OciHookKind kind, const char *state_json, const char *cwd, char **reterr) {
        int r;

        for (size_t i = 0; i < c->hooks.n_hooks[kind]; i++) {
                log_debug("running %s hook #%zu: %s", oci_hook_kind_to_string(kind), i,
                          c->hooks.hooks[kind][i].path);
                r = hook_run_one(&c->hooks.hooks[kind][i], kind, i, state_json, cwd, reterr);
                if (r < 0)
                        return r;
        }
        return 0;
}

int hooks_run_all_warn(const OciConfig *c, OciHookKind kind, const char *state_json, const char *cwd) {
        for (size_t i = 0; i < c->hooks.n_hooks[kind]; i++) {
                _cleanup_free_ char *err = NULL;
                if (hook_run_one(&c->hooks.hooks[kind][i], kind, i, state_json, cwd, &err) < 0)
                        log_warning("%s", err ?: "hook failed");
        }
        return 0;
}
