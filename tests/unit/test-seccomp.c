/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linux.seccomp: every action and operator observed in a forked child that loads the filter under
 * no_new_privs (no root needed), the notify path answered by the parent, and the agent hand-over. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "macro.h"
#include "process-util.h"
#include "seccomp-agent.h"
#include "seccomp-compile.h"
#include "seccomp-filter.h"
#include "tap.h"

#define MISSING_DIR "/nonexistent-sdrun-seccomp-test/x"

static char *n_mkdirat[] = { "mkdirat", NULL };
static char *n_getppid[] = { "getppid", NULL };
/* What a child needs to exit, also under ASan/UBSan (whose runtime does some of these on the way out),
 * when the default action denies everything else. getppid and mkdirat are not among them. pidfd_getfd (438)
 * is there as the profile's highest number: above it a denying default gives ENOSYS (see test_enosys). */
static char *n_exit[] = { "exit_group",   "exit",   "sigaltstack", "gettid",      "getpid",
                          "mmap",         "munmap", "mprotect",    "madvise",     "write",
                          "read",         "openat", "close",       "readlink",    "rt_sigprocmask",
                          "rt_sigaction", "futex",  "prctl",       "sched_yield", "tgkill",
                          "pidfd_getfd",  NULL };
/* The same without pidfd_getfd: openat (257) is the highest, mkdirat (258) lies above. */
static char *n_exit_low[] = {
        "exit_group",     "exit",         "sigaltstack", "gettid", "getpid",      "mmap",   "munmap",
        "mprotect",       "madvise",      "write",       "read",   "openat",      "close",  "readlink",
        "rt_sigprocmask", "rt_sigaction", "futex",       "prctl",  "sched_yield", "tgkill", NULL
};

/* mkdirat on a path that cannot exist: ENOENT unless a rule matched. Arguments are passed as full
 * 64-bit registers, which is what the filter sees. */
static int probe_mkdirat(long dirfd, long mode) {
        if (syscall(SYS_mkdirat, dirfd, MISSING_DIR, mode) >= 0)
                return 0;
        return errno;
}

static long probe_getppid(void) {
        long r = syscall(SYS_getppid);
        return r < 0 ? -errno : r;
}

/* Wait at most 10 s for pid; then kill it. Returns the status or -1 on timeout. */
static int wait_bounded(pid_t pid) {
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC;
        for (;;) {
                int status;
                pid_t w = waitpid(pid, &status, WNOHANG);
                if (w == pid)
                        return status;
                if (w < 0 || now_usec(CLOCK_MONOTONIC) > deadline) {
                        (void) kill(pid, SIGKILL);
                        (void) waitpid(pid, &status, 0);
                        return -1;
                }
                usleep(5000);
        }
}

typedef int (*child_fn_t)(void *userdata);

/* Fork; the child sets no_new_privs, prepares and loads s, runs fn and exits with its return value
 * (100: prepare failed, 101: load failed). Returns the wait status, or -1 on timeout (child killed). */
static int run_filtered(const OciSeccomp *s, child_fn_t fn, void *userdata) {
        pid_t pid = fork();
        if (pid < 0)
                return -1;
        if (pid == 0) {
                SeccompProgram *ctx = NULL;
                char *err = NULL;
                int fd = -1;

                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                        _exit(99);
                if (oci_seccomp_prepare(s, &ctx, &err) < 0) {
                        fprintf(stderr, "# prepare: %s\n", strna(err));
                        _exit(100);
                }
                if (oci_seccomp_load(ctx, s, &fd, &err) < 0) {
                        fprintf(stderr, "# load: %s\n", strna(err));
                        _exit(101);
                }
                _exit(fn(userdata));
        }

        return wait_bounded(pid);
}

static bool exited_ok(int status) {
        if (status == -1)
                printf("#   child timed out\n");
        else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
                printf("#   child exited with %d\n", WEXITSTATUS(status));
        else if (WIFSIGNALED(status))
                printf("#   child killed by signal %d\n", WTERMSIG(status));
        return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static bool killed_by(int status, int sig) {
        if (!(status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == sig))
                printf("#   status %d (exited %d code %d, signaled %d sig %d)\n", status, WIFEXITED(status),
                       WEXITSTATUS(status), WIFSIGNALED(status), WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        return status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == sig;
}

/* A list of (dirfd, mode) -> expected errno checks run in the child; exit code = first failing index + 1. */
typedef struct Probe {
        long dirfd, mode;
        int expected;
} Probe;
typedef struct Probes {
        const Probe *p;
        size_t n;
} Probes;

static int child_probes(void *userdata) {
        const Probes *ps = userdata;
        for (size_t i = 0; i < ps->n; i++)
                if (probe_mkdirat(ps->p[i].dirfd, ps->p[i].mode) != ps->p[i].expected)
                        return (int) i + 1;
        /* Other syscalls are untouched. */
        if (probe_getppid() != getppid())
                return 50;
        return 0;
}

#define RUN_PROBES(s, ...)                                  \
        ({                                                  \
                static const Probe _p_[] = { __VA_ARGS__ }; \
                Probes _ps_ = { _p_, ELEMENTSOF(_p_) };     \
                run_filtered((s), child_probes, &_ps_);     \
        })

static void test_errno(void) {
        OciSyscall sc = {
                .names = n_mkdirat, .action = OCI_SECCOMP_ERRNO, .has_errno_ret = true, .errno_ret = EXDEV
        };
        OciSeccomp s = {
                .present = true, .default_action = OCI_SECCOMP_ALLOW, .syscalls = &sc, .n_syscalls = 1
        };

        tap_ok(exited_ok(RUN_PROBES(&s, { 0, 0755, EXDEV })),
               "SCMP_ACT_ERRNO with errnoRet EXDEV: mkdirat fails with EXDEV, the rest is allowed");

        sc.has_errno_ret = false;
        tap_ok(exited_ok(RUN_PROBES(&s, { 0, 0755, EPERM })), "SCMP_ACT_ERRNO without errnoRet: EPERM");
}

static int child_default_errno(void *userdata) {
        if (probe_getppid() != -ENOTSUP)
                return 31;
        if (probe_mkdirat(0, 0) != ENOTSUP)
                return 32;
        return 0;
}

static int child_log(void *userdata) {
        /* LOG lets the call through (and logs it); everything else gets the default EXDEV. */
        if (probe_getppid() != getppid())
                return 41;
        if (probe_mkdirat(0, 0) != EXDEV)
                return 42;
        return 0;
}

static void test_default_action(void) {
        OciSyscall sc[] = {
                { .names = n_exit, .action = OCI_SECCOMP_ALLOW },
        };
        OciSeccomp s = {
                .present = true,
                .default_action = OCI_SECCOMP_ERRNO,
                .has_default_errno_ret = true,
                .default_errno_ret = ENOTSUP,
                .syscalls = sc,
                .n_syscalls = ELEMENTSOF(sc),
        };
        tap_ok(exited_ok(run_filtered(&s, child_default_errno, NULL)),
               "defaultAction SCMP_ACT_ERRNO with defaultErrnoRet ENOTSUP applies to unlisted syscalls");

        OciSyscall sc2[] = {
                { .names = n_exit, .action = OCI_SECCOMP_ALLOW },
                { .names = n_getppid, .action = OCI_SECCOMP_LOG },
        };
        s.default_errno_ret = EXDEV;
        s.syscalls = sc2;
        s.n_syscalls = ELEMENTSOF(sc2);
        tap_ok(exited_ok(run_filtered(&s, child_log, NULL)),
               "SCMP_ACT_LOG allows the syscall under a denying default");
}

static int child_enosys(void *userdata) {
        if (probe_mkdirat(0, 0) != ENOSYS) /* 258: newer than every syscall of the profile */
                return 51;
        if (probe_getppid() != -EXDEV) /* 110: older than the newest, not named: the default */
                return 52;
        if (syscall(1000) >= 0 || errno != ENOSYS) /* no such syscall at all */
                return 53;
        return 0;
}

/* A syscall newer than every one the profile names fails with ENOSYS under a denying default, as with runc
 * (runc's seccomp.bats "-ENOSYS handling"): a libc then falls back to an older call. */
static void test_enosys(void) {
        OciSyscall sc[] = { { .names = n_exit_low, .action = OCI_SECCOMP_ALLOW } };
        OciSeccomp s = { .present = true,
                         .default_action = OCI_SECCOMP_ERRNO,
                         .has_default_errno_ret = true,
                         .default_errno_ret = EXDEV,
                         .syscalls = sc,
                         .n_syscalls = ELEMENTSOF(sc) };
        tap_ok(exited_ok(run_filtered(&s, child_enosys, NULL)),
               "a syscall above the profile's newest gets ENOSYS, an older unnamed one the default errno");
}

static void test_operators(void) {
        OciSeccompArg arg = { .index = 2 };
        OciSyscall sc = { .names = n_mkdirat,
                          .action = OCI_SECCOMP_ERRNO,
                          .has_errno_ret = true,
                          .errno_ret = EXDEV,
                          .args = &arg,
                          .n_args = 1 };
        OciSeccomp s = {
                .present = true, .default_action = OCI_SECCOMP_ALLOW, .syscalls = &sc, .n_syscalls = 1
        };
        const long big = 0x100000005L; /* beyond 32 bits: the comparison is 64-bit */

        arg.op = OCI_SECCOMP_OP_EQ, arg.value = 0555;
        tap_ok(exited_ok(RUN_PROBES(&s, { 0, 0555, EXDEV }, { 0, 0554, ENOENT },
                                    { 0, 0555 | (1L << 32), ENOENT })),
               "SCMP_CMP_EQ");
        arg.op = OCI_SECCOMP_OP_NE, arg.value = 0555;
        tap_ok(exited_ok(RUN_PROBES(&s, { 0, 0555, ENOENT }, { 0, 0554, EXDEV })), "SCMP_CMP_NE");
        arg.op = OCI_SECCOMP_OP_LT, arg.value = 0x100000000;
        tap_ok(exited_ok(RUN_PROBES(&s, { 0, 5, EXDEV }, { 0, big, ENOENT }, { 0, 0x100000000, ENOENT })),
               "SCMP_CMP_LT (64-bit value)");
        arg.op = OCI_SECCOMP_OP_LE, arg.value = 0x100000000;
        tap_ok(exited_ok(RUN_PROBES(&s, { 0, 0x100000000, EXDEV }, { 0, 7, EXDEV }, { 0, big, ENOENT })),
               "SCMP_CMP_LE (64-bit value)");
        arg.op = OCI_SECCOMP_OP_GT, arg.value = 0x100000000;
        tap_ok(exited_ok(RUN_PROBES(&s, { 0, big, EXDEV }, { 0, 0x100000000, ENOENT }, { 0, 7, ENOENT })),
               "SCMP_CMP_GT (64-bit value)");
        arg.op = OCI_SECCOMP_OP_GE, arg.value = 0700;
        tap_ok(exited_ok(RUN_PROBES(&s, { 0, 0700, EXDEV }, { 0, 0777, EXDEV }, { 0, 0677, ENOENT })),
               "SCMP_CMP_GE");
        /* value is the mask, valueTwo the datum: (mode & 0700) == 0500 */
        arg.op = OCI_SECCOMP_OP_MASKED_EQ, arg.value = 0700, arg.value_two = 0500;
        tap_ok(exited_ok(RUN_PROBES(&s, { 0, 0555, EXDEV }, { 0, 0500, EXDEV }, { 0, 0755, ENOENT },
                                    { 0, 0055, ENOENT })),
               "SCMP_CMP_MASKED_EQ: value is the mask, valueTwo the datum");
}

static void test_multiple_args(void) {
        OciSeccompArg and_args[] = {
                { .index = 0, .op = OCI_SECCOMP_OP_EQ, .value = 7 },
                { .index = 2, .op = OCI_SECCOMP_OP_EQ, .value = 0555 },
        };
        OciSyscall sc = { .names = n_mkdirat,
                          .action = OCI_SECCOMP_ERRNO,
                          .has_errno_ret = true,
                          .errno_ret = EXDEV,
                          .args = and_args,
                          .n_args = ELEMENTSOF(and_args) };
        OciSeccomp s = {
                .present = true, .default_action = OCI_SECCOMP_ALLOW, .syscalls = &sc, .n_syscalls = 1
        };

        tap_ok(exited_ok(RUN_PROBES(&s, { 7, 0555, EXDEV }, { 8, 0555, ENOENT }, { 7, 0444, ENOENT })),
               "conditions on different arguments: all must match");

        OciSeccompArg or_args[] = {
                { .index = 2, .op = OCI_SECCOMP_OP_EQ, .value = 0111 },
                { .index = 2, .op = OCI_SECCOMP_OP_EQ, .value = 0222 },
        };
        sc.args = or_args;
        sc.n_args = ELEMENTSOF(or_args);
        tap_ok(exited_ok(RUN_PROBES(&s, { 0, 0111, EXDEV }, { 0, 0222, EXDEV }, { 0, 0333, ENOENT })),
               "the same argument twice: one rule per condition (either matches)");

        /* Two entries for the same syscall, different actions by argument. */
        OciSeccompArg a1 = { .index = 2, .op = OCI_SECCOMP_OP_EQ, .value = 0111 };
        OciSeccompArg a2 = { .index = 2, .op = OCI_SECCOMP_OP_EQ, .value = 0222 };
        OciSyscall two[] = {
                { .names = n_mkdirat,
                  .action = OCI_SECCOMP_ERRNO,
                  .has_errno_ret = true,
                  .errno_ret = EXDEV,
                  .args = &a1,
                  .n_args = 1 },
                { .names = n_mkdirat,
                  .action = OCI_SECCOMP_ERRNO,
                  .has_errno_ret = true,
                  .errno_ret = ENOTSUP,
                  .args = &a2,
                  .n_args = 1 },
        };
        s.syscalls = two;
        s.n_syscalls = ELEMENTSOF(two);
        tap_ok(exited_ok(RUN_PROBES(&s, { 0, 0111, EXDEV }, { 0, 0222, ENOTSUP }, { 0, 0333, ENOENT })),
               "two entries for one syscall with different argument values and actions");
}

static int child_getppid(void *userdata) {
        (void) probe_getppid();
        return 0; /* reached only if not killed */
}

static void *thread_pause(void *userdata) {
        for (;;)
                pause();
        return NULL;
}

static int child_getppid_threaded(void *userdata) {
        pthread_t t;
        if (pthread_create(&t, NULL, thread_pause, NULL) != 0)
                return 3;
        (void) probe_getppid();
        return 0;
}

static void test_kill(void) {
        OciSyscall sc = { .names = n_getppid, .action = OCI_SECCOMP_KILL_PROCESS };
        OciSeccomp s = {
                .present = true, .default_action = OCI_SECCOMP_ALLOW, .syscalls = &sc, .n_syscalls = 1
        };

        tap_ok(killed_by(run_filtered(&s, child_getppid, NULL), SIGSYS),
               "SCMP_ACT_KILL_PROCESS: killed by SIGSYS");
        sc.action = OCI_SECCOMP_KILL_THREAD;
        tap_ok(killed_by(run_filtered(&s, child_getppid, NULL), SIGSYS),
               "SCMP_ACT_KILL_THREAD, single thread: killed by SIGSYS");
        sc.action = OCI_SECCOMP_KILL;
        tap_ok(killed_by(run_filtered(&s, child_getppid, NULL), SIGSYS),
               "SCMP_ACT_KILL (= KILL_THREAD): killed by SIGSYS");
}

/* KILL_THREAD of the main thread while another thread lives: the thread-group leader turns into a zombie
 * that neither wait() nor the exit status reports. /proc/PID/stat shows it: what the runtime must watch. */
static void test_kill_thread_zombie_leader(void) {
        OciSyscall sc = { .names = n_getppid, .action = OCI_SECCOMP_KILL_THREAD };
        OciSeccomp s = {
                .present = true, .default_action = OCI_SECCOMP_ALLOW, .syscalls = &sc, .n_syscalls = 1
        };

        pid_t pid = fork();
        if (pid == 0) {
                SeccompProgram *ctx = NULL;
                int fd;
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || oci_seccomp_prepare(&s, &ctx, NULL) < 0 ||
                    oci_seccomp_load(ctx, &s, &fd, NULL) < 0)
                        _exit(100);
                _exit(child_getppid_threaded(NULL));
        }

        char state = 0;
        int status = 0;
        bool zombie = false, unreaped = false;
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + 5 * USEC_PER_SEC;
        while (now_usec(CLOCK_MONOTONIC) < deadline) {
                if (waitpid(pid, &status, WNOHANG) == pid)
                        break;
                if (pid_get_state(pid, &state) >= 0 && state == 'Z') {
                        zombie = true;
                        unreaped = waitpid(pid, &status, WNOHANG) == 0;
                        break;
                }
                usleep(5000);
        }
        tap_ok(zombie && unreaped,
               "SCMP_ACT_KILL_THREAD of the main thread: leader is 'Z' in /proc/PID/stat, wait() reports nothing");

        (void) kill(pid, SIGKILL);
        tap_is_int(waitpid(pid, &status, 0), pid, "the leftover thread group is killed and reaped");
}

static volatile sig_atomic_t trapped_nr = -1;

static void on_sigsys(int sig, siginfo_t *si, void *ctx) {
        if (si->si_code == 1 /* SYS_SECCOMP */)
                trapped_nr = si->si_syscall;
}

static int child_trap(void *userdata) {
        struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO };
        if (sigaction(SIGSYS, &sa, NULL) < 0)
                return 3;
        (void) probe_getppid();
        return trapped_nr == SYS_getppid ? 0 : 4;
}

static int child_trace(void *userdata) {
        /* No tracer attached: the kernel fails the syscall with ENOSYS. */
        return probe_getppid() == -ENOSYS ? 0 : 1;
}

static void test_trap_trace(void) {
        OciSyscall sc = { .names = n_getppid, .action = OCI_SECCOMP_TRAP };
        OciSeccomp s = {
                .present = true, .default_action = OCI_SECCOMP_ALLOW, .syscalls = &sc, .n_syscalls = 1
        };

        tap_ok(killed_by(run_filtered(&s, child_getppid, NULL), SIGSYS),
               "SCMP_ACT_TRAP without a handler: SIGSYS");
        tap_ok(exited_ok(run_filtered(&s, child_trap, NULL)),
               "SCMP_ACT_TRAP: the handler sees SYS_SECCOMP for getppid");

        sc.action = OCI_SECCOMP_TRACE;
        sc.has_errno_ret = true;
        sc.errno_ret = EXDEV;
        tap_ok(exited_ok(run_filtered(&s, child_trace, NULL)), "SCMP_ACT_TRACE without a tracer: ENOSYS");
}

static int prepare_error(const OciSeccomp *s, char **ret) {
        SeccompProgram *ctx = NULL;
        int r = oci_seccomp_prepare(s, &ctx, ret);
        if (ctx)
                seccomp_program_free(ctx);
        return r;
}

static void test_prepare_checks(void) {
        char *unknown_names[] = { "no_such_syscall_sdrun", "mkdirat", NULL };
        OciSyscall sc = { .names = unknown_names,
                          .action = OCI_SECCOMP_ERRNO,
                          .has_errno_ret = true,
                          .errno_ret = EXDEV };
        OciSeccomp s = {
                .present = true, .default_action = OCI_SECCOMP_ALLOW, .syscalls = &sc, .n_syscalls = 1
        };
        _cleanup_free_ char *e1 = NULL, *e2 = NULL, *e3 = NULL, *e4 = NULL, *e5 = NULL, *e6 = NULL,
                            *e7 = NULL;

        tap_ok(exited_ok(RUN_PROBES(&s, { 0, 0, EXDEV })),
               "an unknown syscall name is skipped, the others still apply");

        char *bad_arch[] = { "SCMP_ARCH_X86_64", "SCMP_ARCH_VAX", NULL };
        s.architectures = bad_arch;
        tap_is_int(prepare_error(&s, &e1), -EINVAL, "unknown architecture rejected");
        tap_is_str(e1, "linux.seccomp.architectures[1]: unknown architecture \"SCMP_ARCH_VAX\"",
                   "its message names the path");

        char *m68k[] = { "SCMP_ARCH_M68K", NULL };
        s.architectures = m68k;
        bool have_m68k = oci_seccomp_arch_from_name("SCMP_ARCH_M68K", NULL) >= 0;
        int r = prepare_error(&s, &e2);
        tap_ok(have_m68k ? r == 0 : (r == -EOPNOTSUPP && e2 && strstr(e2, "not supported by libseccomp")),
               "a spec architecture this libseccomp lacks is a clear error (%s)", strna(e2));

        char *archs[] = { "SCMP_ARCH_X86", "SCMP_ARCH_X32", "SCMP_ARCH_X86_64", NULL };
        s.architectures = archs;
        tap_ok(exited_ok(RUN_PROBES(&s, { 0, 0, EXDEV })),
               "architectures x86, x32 and the native x86_64 load together");
        s.architectures = NULL;

        sc.action = OCI_SECCOMP_ALLOW;
        tap_is_int(prepare_error(&s, &e3), -EINVAL, "errnoRet on SCMP_ACT_ALLOW is rejected");
        tap_ok(e3 && strneq(e3, "linux.seccomp.syscalls[0].errnoRet:", 35), "message: %s", strna(e3));

        sc.action = OCI_SECCOMP_NOTIFY;
        sc.has_errno_ret = false;
        tap_is_int(prepare_error(&s, &e4), -EINVAL, "SCMP_ACT_NOTIFY without listenerPath is rejected");
        tap_is_str(e4, "linux.seccomp.listenerPath: required when an action is SCMP_ACT_NOTIFY",
                   "message names listenerPath");

        OciSeccomp d = { .present = true,
                         .default_action = OCI_SECCOMP_KILL,
                         .has_default_errno_ret = true,
                         .default_errno_ret = 1 };
        tap_is_int(prepare_error(&d, &e5), -EINVAL, "defaultErrnoRet with SCMP_ACT_KILL is rejected");
        tap_ok(e5 && strneq(e5, "linux.seccomp.defaultErrnoRet:", 30), "message: %s", strna(e5));

        char *bad_flag[] = { "SECCOMP_FILTER_FLAG_BOGUS", NULL };
        OciSeccomp f = { .present = true, .default_action = OCI_SECCOMP_ALLOW, .flags = bad_flag };
        tap_is_int(prepare_error(&f, &e6), -EINVAL, "unknown flag rejected");
        tap_is_str(e6, "linux.seccomp.flags[0]: unknown flag \"SECCOMP_FILTER_FLAG_BOGUS\"",
                   "message names the flag");

        char *sendmsg_names[] = { "sendmsg", NULL };
        OciSyscall ns = { .names = sendmsg_names, .action = OCI_SECCOMP_NOTIFY };
        OciSeccomp n = { .present = true,
                         .default_action = OCI_SECCOMP_ALLOW,
                         .syscalls = &ns,
                         .n_syscalls = 1,
                         .listener_path = "/nonexistent" };
        tap_is_int(prepare_error(&n, &e7), -EINVAL,
                   "SCMP_ACT_NOTIFY on sendmsg is rejected (the fd travels with it)");

        /* A rule with the default action is skipped instead of failing in libseccomp. */
        OciSyscall same = { .names = n_mkdirat, .action = OCI_SECCOMP_ERRNO };
        OciSyscall allow_exit = { .names = n_exit, .action = OCI_SECCOMP_ALLOW };
        OciSyscall both[] = { same, allow_exit };
        OciSeccomp e = {
                .present = true, .default_action = OCI_SECCOMP_ERRNO, .syscalls = both, .n_syscalls = 2
        };
        tap_is_int(prepare_error(&e, NULL), 0, "a rule with the default action is skipped");
}

static int child_nothing(void *userdata) {
        return probe_mkdirat(0, 0) == ENOENT ? 0 : 1;
}

static void test_flags(void) {
        char *flags[] = { "SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
                          "SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", NULL };
        OciSeccomp s = { .present = true, .default_action = OCI_SECCOMP_ALLOW, .flags = flags };

        for (size_t i = 0; flags[i]; i++)
                tap_ok(oci_seccomp_flag_supported(flags[i]), "kernel supports %s", flags[i]);
        tap_ok(!oci_seccomp_flag_supported("SECCOMP_FILTER_FLAG_BOGUS"), "an unknown flag is not supported");
        tap_ok(exited_ok(run_filtered(&s, child_nothing, NULL)),
               "a filter with all four flags loads (WAIT_KILLABLE_RECV without a listener is dropped)");
}

static void test_tables(void) {
        size_t n = 0;

        tap_ok(oci_seccomp_arch_from_name("SCMP_ARCH_X86_64", NULL) == 0, "x86_64 resolves");
        tap_is_int(oci_seccomp_arch_from_name("SCMP_ARCH_BOGUS", NULL), -EINVAL, "an unknown arch");
        for (size_t i = 0; i < OCI_SECCOMP_N_ARCHS; i++)
                tap_ok(oci_seccomp_arch_find(oci_seccomp_archs[i].name) == &oci_seccomp_archs[i] &&
                               oci_seccomp_arch_from_name(oci_seccomp_archs[i].name, NULL) != -EINVAL,
                       "arch %s: found in the one table", oci_seccomp_archs[i].name);
        for (const char *const *a = oci_seccomp_action_names; *a; a++)
                n++;
        tap_is_int(n, 9, "nine actions");
        n = 0;
        for (const char *const *o = oci_seccomp_op_names; *o; o++)
                n++;
        tap_is_int(n, 7, "seven operators");
        tap_is_str(oci_seccomp_op_to_string(OCI_SECCOMP_OP_MASKED_EQ), "SCMP_CMP_MASKED_EQ",
                   "operator name");
        tap_is_str(oci_seccomp_action_to_string(OCI_SECCOMP_KILL_PROCESS), "SCMP_ACT_KILL_PROCESS",
                   "action name");
        unsigned long f;
        tap_ok(oci_seccomp_flag_from_name("SECCOMP_FILTER_FLAG_LOG", &f) == 0 &&
                       f == SECCOMP_FILTER_FLAG_LOG,
               "flag look-up");
        tap_is_int(oci_seccomp_flag_from_name("SECCOMP_FILTER_FLAG_BOGUS", NULL), -EINVAL, "unknown flag");
}

/* Notify: the child loads the filter and passes the listener over a socketpair; the parent answers. */

static int send_fd(int sock, int fd) {
        union {
                struct cmsghdr h;
                uint8_t buf[CMSG_SPACE(sizeof(int))];
        } control = {};
        char b = 'F';
        struct iovec iov = { .iov_base = &b, .iov_len = 1 };
        struct msghdr mh = {
                .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof control
        };
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
        return sendmsg(sock, &mh, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

/* Receive up to one fd plus data; returns bytes read, *ret_fd -1 if none. */
static ssize_t recv_fd(int sock, void *buf, size_t size, int *ret_fd) {
        union {
                struct cmsghdr h;
                uint8_t buf[CMSG_SPACE(sizeof(int))];
        } control = {};
        struct iovec iov = { .iov_base = buf, .iov_len = size };
        struct msghdr mh = {
                .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof control
        };
        *ret_fd = -1;
        ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
        if (n < 0)
                return -errno;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
                        memcpy(ret_fd, CMSG_DATA(c), sizeof(int));
        return n;
}

/* Answer notifications on fd: getppid -> value 4242, anything else -> EXDEV. Returns how many. */
static int answer_notifications(int fd, int max) {
        struct seccomp_notif *req = NULL;
        struct seccomp_notif_resp *resp = NULL;
        int n = 0;

        /* libseccomp answers EOPNOTSUPP from its notify calls until it has probed the kernel's API level. */
        if (seccomp_api_get() < 5)
                return -EOPNOTSUPP;
        if (seccomp_notify_alloc(&req, &resp) < 0)
                return -ENOMEM;
        while (n < max) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                if (poll(&p, 1, 5000) <= 0 || !(p.revents & POLLIN))
                        break;
                /* The kernel refuses a request buffer that is not zeroed (EINVAL). */
                memset(req, 0, sizeof *req);
                if (seccomp_notify_receive(fd, req) < 0)
                        break;
                memset(resp, 0, sizeof *resp);
                resp->id = req->id;
                if (req->data.nr == SYS_getppid)
                        resp->val = 4242;
                else
                        resp->error = -EXDEV;
                if (seccomp_notify_respond(fd, resp) < 0)
                        break;
                n++;
        }
        seccomp_notify_free(req, resp);
        return n;
}

static char *notify_flags[] = { "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", "SECCOMP_FILTER_FLAG_TSYNC",
                                NULL };
static OciSyscall notify_rules[] = {
        { .names = n_getppid, .action = OCI_SECCOMP_NOTIFY },
        { .names = n_mkdirat, .action = OCI_SECCOMP_NOTIFY },
};
static OciSeccomp notify_profile = {
        .present = true,
        .default_action = OCI_SECCOMP_ALLOW,
        .flags = notify_flags,
        .syscalls = notify_rules,
        .n_syscalls = ELEMENTSOF(notify_rules),
        .listener_path = NULL, /* set per test */
        .listener_metadata = "MKNOD=/dev/null",
};

/* Child side: load, pass the listener to the parent, then make the notified syscalls. */
static _noreturn_ void notify_child(int sock) {
        SeccompProgram *ctx = NULL;
        char *err = NULL;
        int fd = -1;

        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                _exit(99);
        if (oci_seccomp_prepare(&notify_profile, &ctx, &err) < 0) {
                fprintf(stderr, "# prepare: %s\n", strna(err));
                _exit(100);
        }
        if (oci_seccomp_load(ctx, &notify_profile, &fd, &err) < 0) {
                fprintf(stderr, "# load: %s\n", strna(err));
                _exit(101);
        }
        if (fd < 0)
                _exit(102);
        if (send_fd(sock, fd) < 0)
                _exit(103);
        close(fd);
        if (probe_getppid() != 4242)
                _exit(1);
        if (probe_mkdirat(0, 0) != EXDEV)
                _exit(2);
        _exit(0);
}

static void test_notify(void) {
        int sp[2];
        char b;

        notify_profile.listener_path = "/run/unused-by-this-test.sock";
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0) {
                tap_ok(false, "socketpair: %m");
                return;
        }
        pid_t pid = fork();
        if (pid == 0) {
                close(sp[0]);
                notify_child(sp[1]);
        }
        close(sp[1]);

        int fd = -1;
        struct pollfd p = { .fd = sp[0], .events = POLLIN };
        if (poll(&p, 1, 5000) == 1)
                (void) recv_fd(sp[0], &b, 1, &fd);
        tap_ok(fd >= 0, "the child passes the listener fd of its SCMP_ACT_NOTIFY filter");
        tap_is_int(answer_notifications(fd, 2), 2, "the parent answers getppid (value) and mkdirat (errno)");

        int status = wait_bounded(pid);
        tap_ok(exited_ok(status), "the child saw the answers (getppid = 4242, mkdirat = EXDEV)");
        safe_close(fd);
        close(sp[0]);
}

/* The runtime side: oci_seccomp_send_to_agent() to a listening socket; this process plays the agent. */
static void test_send_to_agent(void) {
        char path[] = "/tmp/sdrun-test-seccomp-XXXXXX";
        char sockpath[sizeof path + 16];
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_free_ char *err = NULL, *err2 = NULL;
        int sp[2], status, fd = -1;
        char b;

        if (!mkdtemp(path) || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0) {
                tap_ok(false, "setup: %m");
                return;
        }
        snprintf(sockpath, sizeof sockpath, "%s/agent.sock", path);
        notify_profile.listener_path = sockpath;

        int lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        strcpy(sa.sun_path, sockpath);
        if (lsock < 0 || bind(lsock, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(lsock, 4) < 0) {
                tap_ok(false, "agent socket: %m");
                return;
        }

        pid_t pid = fork();
        if (pid == 0) {
                close(sp[0]);
                notify_child(sp[1]);
        }
        close(sp[1]);
        struct pollfd p = { .fd = sp[0], .events = POLLIN };
        if (poll(&p, 1, 5000) == 1)
                (void) recv_fd(sp[0], &b, 1, &fd);

        const char *state =
                "{\"ociVersion\":\"1.3.0\",\"id\":\"c1\",\"status\":\"creating\",\"pid\":1234,\"bundle\":\"/b\"}";
        int r = fd >= 0 ? oci_seccomp_send_to_agent(&notify_profile, fd, pid, state, &err) : -EBADF;
        tap_is_int(r, 0, "oci_seccomp_send_to_agent() %s", strna(err));
        safe_close(fd);

        /* Agent side. */
        int conn = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
        char buf[4096];
        size_t len = 0;
        int agent_fd = -1;
        for (;;) {
                int got = -1;
                ssize_t n = recv_fd(conn, buf + len, sizeof buf - 1 - len, &got);
                if (got >= 0) {
                        if (agent_fd < 0 && len == 0)
                                agent_fd = got;
                        else
                                close(got); /* fds only in the first message */
                }
                if (n <= 0)
                        break;
                len += (size_t) n;
        }
        buf[len] = 0;
        close(conn);
        tap_ok(agent_fd >= 0, "the agent receives the seccomp fd with SCM_RIGHTS");

        cJSON *j = cJSON_Parse(buf);
        cJSON *fds = cJSON_GetObjectItem(j, "fds"), *st = cJSON_GetObjectItem(j, "state");
        tap_ok(j && cJSON_IsString(cJSON_GetObjectItem(j, "ociVersion")) && cJSON_GetArraySize(fds) == 1 &&
                       streq_ptr(cJSON_GetStringValue(cJSON_GetArrayItem(fds, 0)), "seccompFd") &&
                       cJSON_GetNumberValue(cJSON_GetObjectItem(j, "pid")) == pid &&
                       streq_ptr(cJSON_GetStringValue(cJSON_GetObjectItem(j, "metadata")),
                                 "MKNOD=/dev/null") &&
                       streq_ptr(cJSON_GetStringValue(cJSON_GetObjectItem(st, "id")), "c1") &&
                       streq_ptr(cJSON_GetStringValue(cJSON_GetObjectItem(st, "status")), "creating"),
               "the container process state has ociVersion, fds, pid, metadata and state: %s", buf);
        cJSON_Delete(j);

        tap_is_int(answer_notifications(agent_fd, 2), 2, "the agent answers through the received fd");
        status = wait_bounded(pid);
        tap_ok(exited_ok(status), "the container process saw the agent's answers");
        safe_close(agent_fd);
        close(sp[0]);
        close(lsock);
        unlink(sockpath);

        /* Nobody listening: a prompt, clear error. */
        uint64_t t0 = now_usec(CLOCK_MONOTONIC);
        r = oci_seccomp_send_to_agent_timeout(&notify_profile, 0, pid, state, USEC_PER_SEC, &err2);
        tap_ok(r == -ENOENT && err2 && strstr(err2, sockpath) &&
                       now_usec(CLOCK_MONOTONIC) - t0 < 2 * USEC_PER_SEC,
               "no agent: fails promptly naming the socket (%s)", strna(err2));

        /* A listener that never accepts: the connection is queued and the state fits the socket buffer,
         * so the send completes; a full backlog times out instead of hanging. */
        lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (lsock >= 0 && bind(lsock, (struct sockaddr *) &sa, sizeof sa) >= 0 && listen(lsock, 0) >= 0) {
                int fill[4] = { -1, -1, -1, -1 };
                /* Fill the backlog with non-blocking connects. */
                for (size_t i = 0; i < ELEMENTSOF(fill); i++) {
                        fill[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                        (void) connect(fill[i], (struct sockaddr *) &sa, sizeof sa);
                }
                _cleanup_free_ char *err3 = NULL;
                t0 = now_usec(CLOCK_MONOTONIC);
                r = oci_seccomp_send_to_agent_timeout(&notify_profile, 0, pid, state, 300 * USEC_PER_MSEC,
                                                      &err3);
                uint64_t dt = now_usec(CLOCK_MONOTONIC) - t0;
                tap_ok(r == -ETIMEDOUT && dt < 2 * USEC_PER_SEC,
                       "a stuck agent: bounded by the timeout (%s)", strna(err3));
                for (size_t i = 0; i < ELEMENTSOF(fill); i++)
                        safe_close(fill[i]);
        }
        safe_close(lsock);
        unlink(sockpath);
        rmdir(path);
}

static void test_process_state(void) {
        _cleanup_free_ char *doc = NULL;
        OciSeccomp s = { .listener_path = "/x" };

        tap_is_int(oci_seccomp_container_process_state(&s, 42, "{\"id\":\"a\"}", &doc), 0,
                   "process state builds");
        tap_is_str(doc,
                   "{\"ociVersion\":\"1.3.0\",\"fds\":[\"seccompFd\"],\"pid\":42,\"state\":{\"id\":\"a\"}}",
                   "no metadata key without listenerMetadata");
        free(TAKE_PTR(doc));
        tap_is_int(oci_seccomp_container_process_state(&s, 42, "[1]", &doc), -EINVAL,
                   "state must be an object");
}

int main(void) {
        test_tables();
        test_process_state();
        test_errno();
        test_default_action();
        test_enosys();
        test_operators();
        test_multiple_args();
        test_kill();
        test_kill_thread_zombie_leader();
        test_trap_trace();
        test_prepare_checks();
        test_flags();
        test_notify();
        test_send_to_agent();
        return tap_done();
}
