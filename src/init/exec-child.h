/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The exec child: the process `exec` runs in a running container (src/runtime/exec.c clones it into the
 * container's cgroup). It joins the init's namespaces, becomes root of the container's user namespace,
 * prepares the process (become.h) and execs it. Its pid namespace: where the trampoline can clone (the
 * profile lets it), it joins it for its children only and stays outside, and the trampoline clones the
 * process into it (b.fork_into_pidns): no process of the runtime's binary is ever in the container's pid
 * namespace. Otherwise the runtime clones it into the init's pid namespace from a sealed copy of its
 * binary. Every step is acknowledged over the sync socket (sync.h). */

#include <stdbool.h>
#include <sys/types.h>

#include "become.h"
#include "macro.h"

/* The name the child carries until execve replaces it. */
#define EXEC_CHILD_COMM "sdrun:exec"
/* How long the child waits for the runtime at one step. */
#define EXEC_CHILD_STEP_TIMEOUT_USEC (60 * USEC_PER_SEC)

typedef struct ExecChild {
        Become b;
        int init_pidfd;
        unsigned long
                ns_mask; /* the namespaces to join (the pid namespace: for our children, b.fork_into_pidns) */
        bool wait_go;    /* v1 cgroups are written by the runtime after clone: wait for SYNC_GO */
} ExecChild;

/* Never returns: a failed step is reported on x->b.sync_fd (SYNC_ERROR), and the child exits 1. */
_noreturn_ void exec_child_main(ExecChild *x);

/* Rootless (src/runtime/rootless.h): the runtime may not join a pid namespace that belongs to the container's
 * own user namespace. A short-lived intermediate it clones joins the user and pid namespaces of the init
 * (x->init_pidfd) and clones the exec child as the runtime's own (CLONE_PARENT), into the cgroup v2
 * directory cgroup_fd (>= 0) where the kernel lets it; it reports an ExecViaUserns and the child's pidfd
 * (SYNC_STAGE1_PID) on x->b.sync_fd and exits. The child waits for SYNC_GO (x->wait_go). */
typedef struct ExecViaUserns {
        pid_t pid;
        bool in_cgroup;
} ExecViaUserns;

_noreturn_ void exec_intermediate_main(ExecChild *x, int cgroup_fd);
