/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The container init: the container side of `create` and `start`. It is cloned by the runtime
 * (src/runtime/bootstrap.c) with its new namespaces, inside the container's cgroup, and sets itself up step by
 * step, acknowledged over the sync socket (sync.h): become root of its user namespace, hostname, sysctls,
 * rootfs, the credentials (credentials.h), createContainer hooks, pivot_root, console, the process prepared
 * (become.h); then it waits for `start` on the start socket, runs the startContainer hooks and becomes the
 * user's process.
 *
 * Everything the init needs from the runtime comes in through InitParams: this folder does not depend on
 * src/runtime. */

#include <stdbool.h>
#include <sys/types.h>

#include "credentials.h"
#include "macro.h"
#include "oci-config.h"
#include "seccomp-filter.h"

typedef struct InitParams {
        const OciConfig *config;
        const char *id;
        const char *bundle; /* absolute */
        const char *rootfs; /* absolute, resolved */
        bool no_pivot;
        bool no_new_keyring;
        unsigned preserve_fds; /* fds 3 .. 3+n-1 pass into the container (incl. LISTEN_FDS) */
        unsigned listen_fds;   /* of those, the first n are socket activation's: LISTEN_FDS=n LISTEN_PID=1 */
        const char *listen_fdnames; /* their LISTEN_FDNAMES, or NULL */
        int start_listen_fd;  /* the start barrier: a listening socket; the init accepts `start` on it */
        int close_in_init_fd; /* an fd the init must drop at once (the create lock), or -1 */
        bool has_console_socket;
        bool own_cgroupns; /* a cgroup namespace of its own, new or joined by path, not the runtime's */
        bool own_mountns;  /* the same for the mount namespace; without one (create accepted only root.path
                            * "/" and nothing to mount) the rootfs steps mount nothing */
        const int *bind_source_fds;     /* see rootfs_open_bind_sources() */
        int own_cgroup_fd;              /* rootless: the cgroup directory the init was born in, or -1 */
        int root_tree_fd;               /* > 0: the id-mapped rootfs (RootfsContext.root_tree_fd) */
        const char *comm;               /* the init's name until it execs the user process */
        const SeccompProgram *seccomp;  /* linux.seccomp, compiled by the runtime before the clone */
        const Credentials *credentials; /* the runtime's CREDENTIALS_DIRECTORY, read; NULL: none */
        void (*after_pivot)(void); /* called right after rootfs_finish() (CRIU's /dev/null stdio), or NULL */
} InitParams;

/* The init's main function: never returns. A failure before `start` is reported on sync_fd (SYNC_ERROR, with
 * the message of the step that failed), one after it on the starter's connection; the init then exits 1.
 * runtime_pid: the runtime that cloned it (it dies with it until create has committed). */
_noreturn_ void init_main(const InitParams *p, int sync_fd, pid_t runtime_pid);
