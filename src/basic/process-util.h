/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <poll.h>
#include <stdint.h>
#include <sys/types.h>

/* What the runtime reads of /proc/PID/stat, in one read. */
typedef struct ProcStat {
        char state;          /* R, S, Z, ... (field 3) */
        unsigned flags;      /* PF_* (field 9) */
        long threads;        /* num_threads (field 20) */
        uint64_t start_time; /* clock ticks since boot (field 22) */
        uint64_t sigpending; /* the thread's own pending signals (field 31) */
} ProcStat;
int pid_read_stat(pid_t pid, ProcStat *ret);
/* The process has a SIGKILL pending or its last thread has begun to exit: it will never run user code
 * again. Its /proc entries stay until it is reaped, and its cgroup may be empty before it is a zombie. */
bool proc_stat_is_dying(const ProcStat *st);

/* Start time of a process in clock ticks since boot (field 22 of /proc/PID/stat); used with the pid to
 * recognise a process again and never signal a reused pid. */
int pid_get_start_time(pid_t pid, uint64_t *ret);
/* State letter of /proc/PID/stat (R, S, Z, ...). */
int pid_get_state(pid_t pid, char *ret);
/* The pid /proc/locks names for the flock() on fd's file (the process that took it, in our pid namespace):
 * 1 and *ret set when there is one, 0 when none. Outside the initial pid namespace the kernel lists no lock
 * whose taker it cannot show there (gone, or in a namespace not below ours). */
int flock_holder_pid(int fd, pid_t *ret);
/* A pidfd for pid, verified to be the same process as (pid, start_time): -ESRCH if gone or reused. */
int pidfd_open_verified(pid_t pid, uint64_t start_time);
int pidfd_send_sig(int pidfd, int sig);
/* The CLOCK_MONOTONIC time timeout_usec from now (USEC_INFINITY stays USEC_INFINITY: no deadline). */
uint64_t deadline_after(uint64_t timeout_usec);
/* poll() until one of the fds is ready (returns how many) or the deadline (deadline_after(); USEC_INFINITY:
 * none) passes (-ETIMEDOUT): EINTR is retried, a spent deadline (a timeout of 0) still looks once. */
int poll_until(struct pollfd *p, nfds_t n, uint64_t deadline);
/* Wait until the pidfd becomes readable (process exited) or timeout_usec passed (-ETIMEDOUT). */
int pidfd_wait_exit(int pidfd, uint64_t timeout_usec);
uint64_t now_usec(int clock);

/* Kill (SIGKILL) and reap a child on scope exit. */
void sigkill_waitp(pid_t *pid);
#define _cleanup_sigkill_wait_ _cleanup_(sigkill_waitp)
