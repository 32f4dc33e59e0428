/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The container's filesystem, set up by the container init in its new mount namespace (as root in its
 * namespaces). */

#include <stdbool.h>

#include "oci-config.h"

typedef struct RootfsContext {
        const OciConfig *config;
        const char *rootfs;        /* absolute, realpath'd host path of root.path */
        bool no_pivot;             /* --no-pivot: MS_MOVE + chroot instead of pivot_root (ramfs roots) */
        bool new_userns;           /* own user namespace: device nodes are bind-mounted from the host */
        bool own_cgroupns;         /* own cgroup namespace (new, or joined, not ours): fresh cgroup mounts */
        bool own_mountns;          /* false: the runtime's mount namespace, root "/" (see rootfs_prepare) */
        bool new_netns;            /* sysfs is mounted only with a new netns; else /sys is bind-mounted */
        const char *console_slave; /* unused by rootfs_prepare; see rootfs_setup_console() */
        const char *bundle;        /* relative mounts[].source paths are relative to this (NULL: cwd) */
        const int
                *bind_source_fds; /* NULL, or per mounts[] entry a host-side clone of a bind source, or -1 */
        int root_tree_fd;         /* > 0: the rootfs as a detached, id-mapped clone of root.path (see
                                   * rootfs_open_idmapped_root()), attached instead of the rootfs bound
                                   * onto itself; 0 or negative: none */
        int own_cgroup_fd;        /* > 0: the init's cgroup v2 directory, bound at a cgroup mount where a
                                    * fresh cgroup2 cannot be mounted (a user namespace: EBUSY/EPERM), as
                                    * runc does; 0 or negative: none */
} RootfsContext;

/* In the runtime, on the host side, before the init enters a user namespace: for each bind mount (all: every
 * one; else only the id-mapped ones), a detached clone (open_tree) of its source, so that a source only the
 * host's root can reach still binds (the init uses it where it cannot open the source itself). A mount with
 * "idmap"/"ridmap" is id-mapped here through idmap_userns_fds[i] (mount_setattr(MOUNT_ATTR_IDMAP) needs
 * CAP_SYS_ADMIN over the filesystem, which the init in its user namespace lacks), and the init always binds
 * that clone. all is set for a container with a user namespace: the clones are then made rslave (rprivate
 * for rootfsPropagation "[r]private"), never peers of the host's mounts, as the kernel copies the tree into
 * such a mount namespace; without one, so unless rootfsPropagation is "[r]shared". *ret_fds has
 * config->n_mounts entries (-1 where none). *reterr names the mount, as rootfs_prepare() does. */
int rootfs_open_bind_sources(const OciConfig *config, const char *bundle, bool all,
                             const int *idmap_userns_fds, int **ret_fds, char **reterr);
void rootfs_close_bind_sources(int *fds, size_t n);

/* In the runtime, on the host side: root.path (rootfs, realpath'd) and the mounts below it as a detached
 * clone, made rslave (rprivate for rootfsPropagation "[r]private") and id-mapped through userns_fd, for the
 * init to attach in place of the rootfs (RootfsContext.root_tree_fd): the container's root then sees the
 * files of the host's root as its own, and what it writes is owned on disk by the ids the files had,
 * nothing chowned. A filesystem that cannot be id-mapped is named in *reterr. */
int rootfs_open_idmapped_root(const OciConfig *config, const char *rootfs, int userns_fd, int *ret_fd,
                              char **reterr);

/* Without a mount namespace of its own (own_mountns false: create accepted that only for root.path the host's
 * "/", no mounts, maskedPaths, readonlyPaths, linux.devices, rootfsPropagation or read-only root), both steps
 * leave the mount tree and /dev as they are: step 1 only creates a missing process.cwd, step 2 only makes
 * "/" the cwd, and no /dev/console is bound for a terminal.
 *
 * Step 1, in the init, in the new mount namespace, before the createContainer hooks: propagation of the
 * mount tree (rslave, rprivate for rootfsPropagation "[r]private", rshared keeping the host's peer groups
 * for "[r]shared", the mount holding the rootfs then made private), the rootfs
 * bind-mounted onto itself, every mounts[] entry in order (targets created and resolved inside the rootfs
 * only, dangling symlinks included), a missing process.cwd, and, when a mount covers /dev, the default
 * devices, linux.devices, the /dev links, and /dev/console (empty file) when process.terminal. *reterr like
 * `mounts[2]: mount "proc" on "/proc" (type proc): Permission denied`. */
int rootfs_prepare(const RootfsContext *ctx, char **reterr);

/* Step 2, after the createContainer hooks: pivot_root (the old root made rslave, then detached) or, with
 * no_pivot, MS_MOVE + chroot (for rootfsPropagation "[r]shared": the host's tree made rslave, a clone of the
 * rootfs's tree moved onto "/"), cwd "/", rootfsPropagation shared/unbindable, readonlyPaths, maskedPaths,
 * root.readonly. */
int rootfs_finish(const RootfsContext *ctx, char **reterr);

/* When terminal, after rootfs_finish: bind-mount the pty slave (an fd of a pty of the container's own
 * devpts, i.e. opened through /dev/ptmx after pivot_root) onto /dev/console. */
int rootfs_setup_console(int pty_slave_fd, char **reterr);
