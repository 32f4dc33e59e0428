/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "process-util.h"

/* Returns a pointer just past the ")" that ends the comm field, which may itself contain ")" and spaces. */
static int read_stat_tail(pid_t pid, char *buf, size_t n, char **ret_tail) {
        char path[64];
        _cleanup_close_ int fd = -EBADF;
        int k;

        if (pid <= 0)
                return -EINVAL;
        snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        k = loop_read(fd, buf, n - 1);
        if (k < 0)
                return k;
        buf[k] = 0;
        char *p = strrchr(buf, ')');
        if (!p)
                return -EIO;
        *ret_tail = p + 1;
        return 0;
}

int pid_read_stat(pid_t pid, ProcStat *ret) {
        char buf[1024], *tail = NULL;
        unsigned long long start, pending;
        int r;

        r = read_stat_tail(pid, buf, sizeof buf, &tail);
        if (r < 0)
                return r;
        /* After comm: state(3) ppid pgrp session tty_nr tpgid flags(9) minflt cminflt majflt cmajflt utime
         * stime cutime cstime priority nice num_threads(20) itrealvalue starttime(22) vsize rss rsslim
         * startcode endcode startstack kstkesp kstkeip signal(31). */
        if (sscanf(tail,
                   " %c %*d %*d %*d %*d %*d %u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %ld %*d %llu %*u %*d %*u"
                   " %*u %*u %*u %*u %*u %llu",
                   &ret->state, &ret->flags, &ret->threads, &start, &pending) != 5)
                return -EIO;
        ret->start_time = start;
        ret->sigpending = pending;
        return 0;
}

int pid_get_state(pid_t pid, char *ret) {
        ProcStat st;
        int r = pid_read_stat(pid, &st);
        if (r < 0)
                return r;
        *ret = st.state;
        return 0;
}

int pid_get_start_time(pid_t pid, uint64_t *ret) {
        ProcStat st;
        int r = pid_read_stat(pid, &st);
        if (r < 0)
                return r;
        *ret = st.start_time;
        return 0;
}

/* PF_EXITING of include/linux/sched.h: the task is in do_exit() */
#define PROC_PF_EXITING 0x00000004U

bool proc_stat_is_dying(const ProcStat *st) {
        /* signal(31) is the thread's own pending set, where a fatal signal sent to the process (SIGKILL, a
         * PR_SET_PDEATHSIG of SIGKILL) is queued to every thread until one takes it and the process begins
         * to exit. */
        if (st->sigpending & (1ULL << (SIGKILL - 1)))
                return true;
        /* PF_EXITING is the thread's: the process is dying only when the thread is its last (a leader that
         * exits alone, a seccomp KILL_THREAD, leaves the others running). */
        return (st->flags & PROC_PF_EXITING) && st->threads <= 1;
}

int flock_holder_pid(int fd, pid_t *ret) {
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        char *save = NULL;
        int r;

        if (fstat(fd, &st) < 0)
                return -errno;
        r = read_full_file_at(AT_FDCWD, "/proc/locks", 16 * 1024 * 1024, &buf, NULL);
        if (r < 0)
                return r;
        /* "N: FLOCK  ADVISORY  WRITE PID MAJ:MIN:INODE START END"; a waiter's line has "->" after "N:". */
        for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char kind[16];
                int pid;
                unsigned maj, min;
                unsigned long long ino;

                if (strstr(line, "->") ||
                    sscanf(line, "%*d: %15s %*s %*s %d %x:%x:%llu", kind, &pid, &maj, &min, &ino) != 5 ||
                    !streq(kind, "FLOCK"))
                        continue;
                if (maj == major(st.st_dev) && min == minor(st.st_dev) &&
                    ino == (unsigned long long) st.st_ino) {
                        *ret = pid;
                        return 1;
                }
        }
        return 0;
}

int pidfd_open_verified(pid_t pid, uint64_t start_time) {
        uint64_t st;
        int fd, r;

        if (pid <= 0)
                return -ESRCH;
        fd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (fd < 0)
                return -errno;
        /* The pidfd pins the process; if the start time still matches now, the pidfd refers to it. */
        r = pid_get_start_time(pid, &st);
        if (r < 0 || st != start_time) {
                safe_close(fd);
                return -ESRCH;
        }
        return fd;
}

int pidfd_send_sig(int pidfd, int sig) {
        if (syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) < 0)
                return -errno;
        return 0;
}

uint64_t now_usec(int clock) {
        struct timespec ts;
        clock_gettime(clock, &ts);
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / NSEC_PER_USEC;
}

uint64_t deadline_after(uint64_t timeout_usec) {
        return timeout_usec == USEC_INFINITY ? USEC_INFINITY : now_usec(CLOCK_MONOTONIC) + timeout_usec;
}

int poll_until(struct pollfd *p, nfds_t n, uint64_t deadline) {
        for (;;) {
                int t = -1;
                if (deadline != USEC_INFINITY) {
                        uint64_t now = now_usec(CLOCK_MONOTONIC);
                        /* A spent deadline still looks once. */
                        t = now >= deadline ? 0
                                            : (int) MIN((deadline - now + 999) / 1000, (uint64_t) INT32_MAX);
                }
                int k = poll(p, n, t);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                return k == 0 ? -ETIMEDOUT : k;
        }
}

int pidfd_wait_exit(int pidfd, uint64_t timeout_usec) {
        struct pollfd p = { .fd = pidfd, .events = POLLIN };
        int r = poll_until(&p, 1, deadline_after(timeout_usec));
        return r < 0 ? r : 0;
}

void sigkill_waitp(pid_t *pid) {
        if (!pid || *pid <= 0)
                return;
        (void) kill(*pid, SIGKILL);
        while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
                ;
        *pid = 0;
}
