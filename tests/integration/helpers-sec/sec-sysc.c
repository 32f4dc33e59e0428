/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A static helper copied into test rootfses by test-seccomp.sh and test-security.sh (no libc in the
 * busybox rootfs, hence -static):
 *
 *   sec-sysc call NAME [ARG...]      make syscall NAME with up to 6 integer arguments (decimal or 0x hex),
 *                                    print "ret=R" or "errno=E" and exit 0
 *   sec-sysc thread NAME [ARG...]    start a thread that prints "thread alive" and then sleeps forever, and
 *                                    make the syscall from the main thread (the thread-group leader)
 *   sec-sysc sleep-call MS NAME...   sleep MS milliseconds, then as "call"
 *   sec-sysc fds                     print the fds open in this process ("0 1 2"), as /proc/self/fd lists them
 *   sec-sysc write-exe PATH          try open(PATH, O_WRONLY) and print "opened" or "errno=E"
 *
 * A SIGSYS handler (SCMP_ACT_TRAP) prints "sigsys syscall=NR" and exits 77. Exit 2: usage error. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static const struct {
        const char *name;
        long nr;
} syscalls[] = {
        { "getppid", SYS_getppid },     { "getpid", SYS_getpid },   { "sched_yield", SYS_sched_yield },
        { "getpriority", SYS_getpriority }, { "kill", SYS_kill },     { "mkdir", SYS_mkdir },
        { "personality", SYS_personality }, { "uname", SYS_uname },   { "getcpu", SYS_getcpu },
        { "sync", SYS_sync },
};

static void on_sigsys(int sig, siginfo_t *si, void *uc) {
        char buf[64];
        (void) sig;
        (void) uc;
        int n = snprintf(buf, sizeof buf, "sigsys syscall=%d\n", si->si_syscall);
        (void) !write(STDOUT_FILENO, buf, (size_t) n);
        _exit(77);
}

static long parse_num(const char *s) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 0);
        if (errno != 0 || *end != 0 || end == s) {
                fprintf(stderr, "sec-sysc: bad number \"%s\"\n", s);
                exit(2);
        }
        return (long) v;
}

static int do_call(int argc, char **argv) {
        long nr = -1, a[6] = {};

        if (argc < 1 || argc > 7) {
                fprintf(stderr, "sec-sysc: call NAME [ARG...] (at most 6 arguments)\n");
                return 2;
        }
        for (size_t i = 0; i < sizeof syscalls / sizeof syscalls[0]; i++)
                if (strcmp(syscalls[i].name, argv[0]) == 0)
                        nr = syscalls[i].nr;
        if (nr < 0) {
                fprintf(stderr, "sec-sysc: unknown syscall \"%s\"\n", argv[0]);
                return 2;
        }
        for (int i = 1; i < argc; i++)
                a[i - 1] = parse_num(argv[i]);
        long r = syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
        if (r < 0)
                printf("errno=%d\n", errno);
        else
                printf("ret=%ld\n", r);
        fflush(stdout);
        return 0;
}

static void *thread_main(void *arg) {
        int ready_fd = *(int *) arg;
        printf("thread alive\n");
        fflush(stdout);
        /* Tell the main thread: it makes its syscall only after this line is out (no sleep can promise that on
         * a loaded machine). */
        (void) !write(ready_fd, "x", 1);
        for (;;)
                pause();
        return NULL;
}

static int do_fds(void) {
        DIR *d = opendir("/proc/self/fd");
        if (!d) {
                perror("opendir /proc/self/fd");
                return 1;
        }
        int self = dirfd(d), first = 1;
        struct dirent *de;
        int fds[1024], n = 0;
        while ((de = readdir(d)) && n < 1024) {
                if (de->d_name[0] == '.')
                        continue;
                int fd = atoi(de->d_name);
                if (fd != self)
                        fds[n++] = fd;
        }
        closedir(d);
        for (int i = 0; i < n; i++)
                for (int j = i + 1; j < n; j++)
                        if (fds[j] < fds[i]) {
                                int t = fds[i];
                                fds[i] = fds[j];
                                fds[j] = t;
                        }
        for (int i = 0; i < n; i++) {
                printf("%s%d", first ? "" : " ", fds[i]);
                first = 0;
        }
        printf("\n");
        return 0;
}

int main(int argc, char **argv) {
        struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO };

        setvbuf(stdout, NULL, _IOLBF, 0);
        (void) sigaction(SIGSYS, &sa, NULL);
        if (argc < 2) {
                fprintf(stderr, "usage: sec-sysc call|thread|sleep-call|fds|write-exe ...\n");
                return 2;
        }
        if (strcmp(argv[1], "call") == 0)
                return do_call(argc - 2, argv + 2);
        if (strcmp(argv[1], "thread") == 0) {
                static int ready[2];
                pthread_t t;
                char c;
                if (pipe(ready) < 0) {
                        perror("pipe");
                        return 1;
                }
                int r = pthread_create(&t, NULL, thread_main, &ready[1]);
                if (r != 0) {
                        fprintf(stderr, "pthread_create: %s\n", strerror(r));
                        return 1;
                }
                if (read(ready[0], &c, 1) != 1) { /* the thread has printed */
                        perror("read");
                        return 1;
                }
                return do_call(argc - 2, argv + 2);
        }
        if (strcmp(argv[1], "sleep-call") == 0 && argc >= 4) {
                usleep((useconds_t) (parse_num(argv[2]) * 1000));
                return do_call(argc - 3, argv + 3);
        }
        if (strcmp(argv[1], "fds") == 0)
                return do_fds();
        if (strcmp(argv[1], "write-exe") == 0 && argc == 3) {
                int fd = open(argv[2], O_WRONLY | O_CLOEXEC);
                if (fd < 0)
                        printf("errno=%d\n", errno);
                else
                        printf("opened\n");
                return 0;
        }
        fprintf(stderr, "sec-sysc: unknown mode \"%s\"\n", argv[1]);
        return 2;
}
