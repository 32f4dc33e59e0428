/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* nsenter-style bootstrap of the container init, in C, without re-executing sdrun: the runtime clones the
 * init (clone3) with its new namespaces straight into the cgroup the runtime is in (the container's scope),
 * and the init sets itself up step by step, acknowledged over a SOCK_SEQPACKET socketpair (sync.h). Joining
 * namespaces by path goes through a short-lived stage1 child that setns()s and clones the init as a sibling
 * (CLONE_PARENT), so the init is always the runtime's own child. A new time namespace is not cloned: the
 * init makes it itself, inside its user namespace (init.c). */

#include <stdbool.h>
#include <sys/types.h>

#include "init.h"
#include "oci-config.h"

typedef struct BootstrapParams {
        /* What the init gets (init.h); bind_source_fds, own_cgroup_fd, root_tree_fd, comm and after_pivot are filled in by
         * bootstrap_clone_init(). */
        InitParams init;
        int init_cgroup_fd; /* >= 0: the init is born in this cgroup v2 directory (a sub-cgroup of the scope) */
        /* The rootfs id-mapped through linux.uidMappings/gidMappings (rootfs_open_idmapped_root()): the
         * automatic user namespace (userns-auto.h). Needs a new user namespace with those mappings. */
        bool idmap_rootfs;
        /* Rootless (rootless.h): the runtime stays where it is. The init is cloned through stage1, which
         * waits until place_stage1(its pid) has put it into the container's scope, so that the init is
         * still born there; a cgroup fd returned in *ret_cgroup_fd (>= 0) replaces init_cgroup_fd. */
        int (*place_stage1)(pid_t stage1_pid, void *userdata, int *ret_cgroup_fd, char **reterr);
        void *place_userdata;
} BootstrapParams;

typedef struct InitProcess {
        pid_t pid;
        int pidfd;
        int sync_fd;
} InitProcess;

/* Clone the init (directly or through stage1) and write its id maps. On return the init waits for SYNC_GO. */
int bootstrap_clone_init(const BootstrapParams *bp, InitProcess *ret, char **reterr);
/* Kill (SIGKILL) and reap the init; safe on a partially filled InitProcess. */
void init_process_kill(InitProcess *ip);
void init_process_done(InitProcess *ip);

/* The message for a dead child: "exited with status N" / "was killed by signal SIGSYS (...)". Reaps it. */
int init_process_describe_death(InitProcess *ip, char **ret);
