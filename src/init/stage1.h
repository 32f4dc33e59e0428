/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* stage1: the short-lived child through which the runtime (src/runtime/bootstrap.c) clones the init where
 * namespaces are joined by path, or rootless: it waits until it is in the container's scope, joins the
 * namespaces (the user namespace first but for what it does not own), and clones the init as the runtime's
 * child (CLONE_PARENT). It reports the init's pid and pidfd (SYNC_STAGE1_PID) and exits. Runs in the
 * container's namespaces from its first setns() on. */

#include <stdbool.h>
#include <sys/types.h>

#include "init.h"
#include "macro.h"
#include "oci-config.h"

typedef struct Stage1Params {
        InitParams *init;        /* stage1's own copy of the init's parameters */
        int sync_fd;             /* to the runtime */
        const int *ns_fds;       /* [_OCI_NS_MAX]: the namespaces to join (by path), -EBADF where none */
        unsigned long new_flags; /* the namespaces the init gets new (clone flags) */
        int init_cgroup_fd;      /* >= 0: the init is born in this cgroup v2 directory */
        bool wait_placed; /* rootless: wait for the runtime's SYNC_GO (it placed us), which may carry the
                           * cgroup fd the init is born in instead */
        pid_t runtime_pid;
} Stage1Params;

_noreturn_ void stage1_main(const Stage1Params *s);

/* The init runs the host's sdrun binary until its last exec: non-dumpable (see stage1.c). Exits on failure. */
void init_make_undumpable(void);

/* Namespace clone flag for a type. */
unsigned long namespace_clone_flag(OciNamespaceType t);
