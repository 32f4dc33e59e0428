/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The last hop into a container process (see trampoline.h): a tiny static program without libc and without
 * an ELF interpreter that the runtime runs from a sealed memfd, so that the process which executes the
 * container's program has an unwritable /proc/self/exe, never the runtime's binary.
 *
 *   argv[0]  the path of the program to execute (resolved by execve in the caller's root and cwd)
 *   argv[1]  "a" or "e" (execute with execveat or with execve: the system call that ran the trampoline, so
 *            that a seccomp rule which kills that call kills the hop, before SYNC_EXEC), then optionally
 *            "f" (fork first: see below) and "t" (with "f": make fd 0 the new process's controlling
 *            terminal), then the sync socket's fd number or "-1", then optionally ":" and the fd of the
 *            working directory to return to (the runtime ran us by a path relative to its verified
 *            /proc/self/fd: the cwd was that), which is closed before anything else happens
 *   argv[2…] the program's argv
 *
 * "f" is `exec`'s hop (src/runtime/exec.c): the caller has joined the container's pid namespace for its
 * children only and stays outside it, so that no process of the runtime's binary is ever in there. The
 * trampoline clones the process into that namespace as the runtime's own child (CLONE_PARENT, so that the
 * runtime waits for it; CLONE_VFORK, so that the caller exits only once it has executed the program or
 * failed) and exits. The new process dies with the runtime until it says SYNC_EXEC (PR_SET_PDEATHSIG), makes
 * itself a session leader (and takes the terminal), and goes on as below. The runtime learns its pid from the
 * credentials of its SYNC_EXEC (SO_PASSCRED). A failing clone is reported as SYNC_ERROR.
 *
 * The environment passes through unchanged. On the sync socket it first says SYNC_EXEC (the hop worked:
 * from here on the process is the container's, whatever kills it), marks the socket close-on-exec (so
 * that the runtime sees EOF once the program runs), and on failure sends SYNC_EXEC_FAILED (errno, path)
 * and exits 127. Run by anyone else (a container that
 * executes /proc/self/exe of a process still in here), it executes what it is told, as any program could. */
#include <asm/unistd.h>
#include <stddef.h>
#include <stdint.h>

#include "../sync.h"

#define F_SETFD_ 2
#define FD_CLOEXEC_ 1
#define CLONE_VFORK_ 0x00004000
#define CLONE_PARENT_ 0x00008000
#define SIGCHLD_ 17
#define SIGKILL_ 9
#define PR_SET_PDEATHSIG_ 1
#define TIOCSCTTY_ 0x540E

#if defined(__x86_64__)
static long sys5(long n, long a, long b, long c, long d, long e) {
        register long r10 __asm__("r10") = d, r8 __asm__("r8") = e;
        long r;
        __asm__ volatile("syscall"
                         : "=a"(r)
                         : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
                         : "rcx", "r11", "memory");
        return r;
}
__asm__(".text\n.global _start\n_start:\n\txor %rbp, %rbp\n\tmov %rsp, %rdi\n\tand $-16, %rsp\n"
        "\tcall tramp_main\n\thlt\n");
#elif defined(__aarch64__)
static long sys5(long n, long a, long b, long c, long d, long e) {
        register long x8 __asm__("x8") = n, x0 __asm__("x0") = a, x1 __asm__("x1") = b, x2 __asm__("x2") = c,
                         x3 __asm__("x3") = d, x4 __asm__("x4") = e;
        __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4) : "memory");
        return x0;
}
__asm__(".text\n.global _start\n_start:\n\tmov x29, #0\n\tmov x30, #0\n\tmov x0, sp\n\tand sp, x0, #-16\n"
        "\tbl tramp_main\n\tbrk #0\n");
#else
#error "sdrun-trampoline: add the syscall and _start glue for this architecture"
#endif

#define sys3(n, a, b, c) sys5(n, a, b, c, 0, 0)
#define AT_FDCWD_ (-100)

__attribute__((noreturn)) static void die(int status) {
        for (;;)
                (void) sys3(__NR_exit_group, status, 0, 0);
}

/* A decimal fd number ending at NUL or ':', or -1. */
static int parse_fd(const char *s) {
        int v = 0;

        if (!s || *s == '-' || !*s || *s == ':')
                return -1;
        for (; *s && *s != ':'; s++) {
                if (*s < '0' || *s > '9' || v > 100000)
                        return -1;
                v = v * 10 + (*s - '0');
        }
        return v;
}

/* One SOCK_SEQPACKET message: the header of sync.c, then text (a path, or what failed) with its NUL. */
static void report(int fd, uint32_t type, long error, const char *text) {
        struct {
                uint32_t type;
                int32_t error;
                uint32_t len;
                char text[4096];
        } m;
        size_t n = 0;

        if (fd < 0)
                return;
        /* Field by field: an initializer would zero the whole buffer, for which the compiler emits a call to
         * memset, and there is no libc here. */
        m.type = type;
        m.error = (int32_t) error;
        while (text[n] && n < sizeof m.text - 1) {
                m.text[n] = text[n];
                n++;
        }
        m.text[n++] = 0;
        m.len = (uint32_t) n;
        (void) sys3(__NR_write, fd, (long) &m, (long) (offsetof(__typeof__(m), text) + n));
}

/* "f": clone the process into the pid namespace for our children, as the runtime's child; only the new
 * process returns. */
static void fork_into_pid_namespace(int fd, int ctty) {
        long pid = sys5(__NR_clone, CLONE_PARENT_ | CLONE_VFORK_ | SIGCHLD_, 0, 0, 0, 0);

        if (pid < 0) {
                report(fd, SYNC_ERROR, -pid,
                       "the exec trampoline could not clone the process into the "
                       "container's pid namespace");
                die(127);
        }
        if (pid > 0)
                die(0); /* it has executed the program, or failed and said so */
        (void) sys5(__NR_prctl, PR_SET_PDEATHSIG_, SIGKILL_, 0, 0, 0);
        (void) sys3(__NR_setsid, 0, 0, 0);
        if (ctty) {
                long r = sys3(__NR_ioctl, 0, TIOCSCTTY_, 0);
                if (r < 0) {
                        report(fd, SYNC_ERROR, -r, "make the pty the controlling terminal");
                        die(127);
                }
        }
}

__attribute__((noreturn, used)) void tramp_main(long *sp);
__attribute__((noreturn, used)) void tramp_main(long *sp) {
        long argc = sp[0];
        char **argv = (char **) (sp + 1);
        char **envp = argv + argc + 1;
        const char *cwd = 0, *flags;
        int fd, cwd_fd, fork = 0, ctty = 0;
        long r = 0;

        if (argc < 3 || !argv[1][0])
                die(127);
        for (flags = argv[1] + 1; *flags == 'f' || *flags == 't'; flags++) {
                if (*flags == 'f')
                        fork = 1;
                else
                        ctty = 1;
        }
        fd = parse_fd(flags);
        for (const char *p = argv[1]; *p; p++)
                if (*p == ':')
                        cwd = p + 1;
        cwd_fd = parse_fd(cwd);
        /* Back to the working directory first: the process cloned below never has the fd directory as its. */
        if (cwd_fd >= 0) {
                r = sys3(__NR_fchdir, cwd_fd, 0, 0);
                (void) sys3(__NR_close, cwd_fd, 0, 0);
        }
        if (fork)
                fork_into_pid_namespace(fd, ctty);
        if (fd >= 0) {
                uint32_t hdr[3] = { SYNC_EXEC, 0, 0 };
                (void) sys3(__NR_write, fd, (long) hdr, sizeof hdr);
                (void) sys3(__NR_fcntl, fd, F_SETFD_, FD_CLOEXEC_);
        }
        /* From here on the runtime knows this process (its SYNC_EXEC is queued): it no longer dies with it. */
        if (fork)
                (void) sys5(__NR_prctl, PR_SET_PDEATHSIG_, 0, 0, 0, 0);
        /* A failing fchdir is reported below as a failing execve would be. */
        if (r >= 0)
                r = argv[1][0] == 'a' ? sys5(__NR_execveat, AT_FDCWD_, (long) argv[0], (long) (argv + 2),
                                             (long) envp, 0)
                                      : sys3(__NR_execve, (long) argv[0], (long) (argv + 2), (long) envp);
        report(fd, SYNC_EXEC_FAILED, -r, argv[0]);
        die(127);
}
