/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <linux/sched.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clone-util.h"

pid_t clone3_pidfd(uint64_t flags, int exit_signal, int cgroup_fd, int *ret_pidfd) {
        struct clone_args args = {
                .flags = flags | CLONE_PIDFD | (cgroup_fd >= 0 ? CLONE_INTO_CGROUP : 0),
                .pidfd = (uint64_t) (uintptr_t) ret_pidfd,
                .exit_signal = (uint64_t) exit_signal,
                .cgroup = cgroup_fd >= 0 ? (uint64_t) cgroup_fd : 0,
        };
        return (pid_t) syscall(SYS_clone3, &args, sizeof args);
}
