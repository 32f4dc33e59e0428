/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Low-level mount helpers for the container init: option parsing, path resolution confined to the
 * rootfs, and mounting onto file descriptors. Everything here runs in the container's namespaces, with
 * the privileges of the init (root in its user namespace). */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* A mounts[].options array split into what each kernel interface wants. */
typedef struct MountSpec {
        unsigned long flags;       /* MS_* to pass to mount(2) (MS_BIND, MS_REC for rbind, MS_RDONLY, ...) */
        unsigned long clear;       /* MS_* an option explicitly cleared ("rw", "suid", "dev", "exec", ...) */
        unsigned long propagation; /* 0 or one of MS_SHARED/SLAVE/PRIVATE/UNBINDABLE, | MS_REC for r-forms */
        uint64_t rec_attr_set;     /* MOUNT_ATTR_* applied with mount_setattr(AT_RECURSIVE) ("rro", ...) */
        uint64_t rec_attr_clr;
        bool idmap;           /* "idmap"/"ridmap" was given */
        bool idmap_recursive; /* "ridmap": the mapping applies to every mount of the tree */
        bool tmpcopyup;       /* "tmpcopyup": copy the rootfs content at the destination into the tmpfs */
        char *data;           /* the other options, comma-joined, for the filesystem; NULL if none */
} MountSpec;

/* Splits options (a NULL-terminated strv, may be NULL) with the table of mount-options.h. The last
 * propagation option wins, as with mount(8). Never fails on unknown names: they are filesystem data. */
int mount_spec_parse(char *const *options, MountSpec *ret);
void mount_spec_done(MountSpec *m);

/* Copy the tree below src_fd into dst_fd (files, directories, symlinks, fifos and device nodes, with modes
 * and owners; dst_fd's own mode and owner are set from src_fd). Never follows symlinks. */
int copy_tree(int src_fd, int dst_fd);

/* The per-mount (not superblock) part of MS_* flags as MOUNT_ATTR_* for mount_setattr(2): bits to set
 * and bits to clear. Only the flags named in `flags` (set) and `clear` (cleared) are touched. */
void mount_flags_to_attr(unsigned long flags, unsigned long clear, uint64_t *ret_set, uint64_t *ret_clr);

/* openat2(root_fd, path, flags|O_CLOEXEC, RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS): every symlink,
 * absolute or "..", is resolved as if root_fd were "/". Returns the fd or negative errno. */
int open_in_root(int root_fd, const char *path, int flags);

/* Resolve path inside root_fd (as open_in_root) and create what is missing: directories with `mode`,
 * and the last component as an empty regular file when as_file. Creation uses *at() calls relative to
 * the already resolved parent, so nothing is ever created outside the root. Returns in
 * *ret_target_fd an O_PATH fd of the target (may be NULL). A dangling symlink on the way (or as the last
 * component) gets its target created, resolved inside the root too (as runc and crun do for an image's
 * /etc/localtime -> ../usr/share/zoneinfo/X); more than 40 of them is -ELOOP. */
int mkdir_p_in_root(int root_fd, const char *path, mode_t mode, bool as_file, int *ret_target_fd);

/* mount(2) onto the object target_fd refers to, through /proc/self/fd/N (needs a procfs at /proc). */
int mount_on_fd(const char *source, int target_fd, const char *fstype, unsigned long flags,
                const char *data);

/* Attach a detached mount tree (from open_tree(OPEN_TREE_CLONE) or fsmount()) onto target_fd. */
int move_mount_to_fd(int tree_fd, int target_fd);

/* mount_setattr(fd, "", AT_EMPTY_PATH [|AT_RECURSIVE]) with the given attributes and propagation (0 or
 * one of MS_SHARED, MS_SLAVE, MS_PRIVATE, MS_UNBINDABLE). */
int mount_setattr_fd(int fd, bool recursive, uint64_t attr_set, uint64_t attr_clr, uint64_t propagation);

/* Make the detached mount tree at fd id-mapped through the user namespace userns_fd (MOUNT_ATTR_IDMAP):
 * its top mount, or every mount of it when recursive. */
int mount_setattr_idmap(int fd, bool recursive, int userns_fd);

/* A detached recursive-or-not clone of the mount tree at fd (open_tree OPEN_TREE_CLONE). */
int clone_tree_fd(int fd, bool recursive);

/* A new detached read-only (if ro) empty tmpfs, as an fsmount() fd. */
int make_tmpfs_tree(bool ro, const char *mode);
