/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The exec child: the process `exec` runs in a running container (src/runtime/exec.c clones it into the
 * init's pid namespace and cgroup). It joins the init's other namespaces, becomes root of the container's
 * user namespace, prepares the process (become.h) and execs it. Every step is acknowledged over the sync
 * socket (sync.h). */

#include <stdbool.h>

#include "become.h"
#include "macro.h"

/* The name the child carries until execve replaces it. */
#define EXEC_CHILD_COMM "sdrun:exec"
/* How long the child waits for the runtime at one step. */
#define EXEC_CHILD_STEP_TIMEOUT_USEC (60 * USEC_PER_SEC)

typedef struct ExecChild {
        Become b;
        int init_pidfd;
        unsigned long ns_mask; /* everything but the pid namespace, which we were born into */
        bool wait_go;          /* v1 cgroups are written by the runtime after clone: wait for SYNC_GO */
} ExecChild;

/* Never returns: a failed step is reported on x->b.sync_fd (SYNC_ERROR), and the child exits 1. */
_noreturn_ void exec_child_main(ExecChild *x);
