/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* clone3(2), the one way sdrun clones a process: the runtime's init (directly or from stage1), stage1 itself,
 * and exec's child (directly or from its intermediate). And the clone flags older headers lack. */

#include <sched.h>
#include <stdint.h>
#include <sys/types.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

/* clone3() as fork() does it (no CLONE_VM: the child runs on a copy of our stack and returns 0 here), with
 * CLONE_PIDFD added to flags: *ret_pidfd gets the child's pidfd. exit_signal: the signal the parent gets at
 * the child's death (SIGCHLD, or 0 with CLONE_PARENT). cgroup_fd >= 0: the child is born in that cgroup v2
 * directory (CLONE_INTO_CGROUP). Returns as the system call does: the child's pid, 0 in the child, or -1
 * with errno set. */
pid_t clone3_pidfd(uint64_t flags, int exit_signal, int cgroup_fd, int *ret_pidfd);
