/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The one table of config.json mount option names that sdrun understands (mounts[].options). mount.c
 * uses it to turn options into mount(2)/mount_setattr(2) arguments; oci-features.c lists its names in
 * `sdrun features` (mountOptions). An option that is not in the table is not an error: it is passed to
 * the filesystem as mount data ("mode=755", "size=65536k", "newinstance", ...), joined with commas. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum MountOptionKind {
        /* Sets or clears MS_* bits in the flags of mount(2): `flags` are the bits, `clear` says which. */
        MOUNT_OPTION_FLAG,
        /* A propagation change applied with a separate mount(2) call after the mount: `flags` is one of
         * MS_PRIVATE, MS_SHARED, MS_SLAVE, MS_UNBINDABLE, with MS_REC for the r-forms. */
        MOUNT_OPTION_PROPAGATION,
        /* A recursive attribute change applied with mount_setattr(2, AT_RECURSIVE) after the mount:
         * `attr_set` and `attr_clr` are struct mount_attr's fields (MOUNT_ATTR_*). */
        MOUNT_OPTION_RECURSIVE,
        /* An id-mapped mount (uses the mount's uidMappings/gidMappings); `recursive` for "ridmap". */
        MOUNT_OPTION_IDMAP,
        /* "tmpcopyup" (runc/crun extension, used by Podman): a tmpfs starts with a copy of what the
         * rootfs had at its destination. */
        MOUNT_OPTION_TMPCOPYUP,
        _MOUNT_OPTION_KIND_MAX,
} MountOptionKind;

typedef struct MountOption {
        const char *name;
        MountOptionKind kind;
        /* MOUNT_OPTION_FLAG: clear `flags` instead of setting them. */
        bool clear;
        /* MOUNT_OPTION_FLAG, MOUNT_OPTION_PROPAGATION: MS_* bits. */
        unsigned long flags;
        /* MOUNT_OPTION_RECURSIVE: MOUNT_ATTR_* bits to set and to clear. */
        uint64_t attr_set;
        uint64_t attr_clr;
        /* MOUNT_OPTION_IDMAP: applies to the whole subtree ("ridmap"). */
        bool recursive;
} MountOption;

/* NULL if the name is not an option of the table (then it is mount data). */
const MountOption *mount_option_lookup(const char *name);

/* Iterate over the table in its (alphabetical) order: returns NULL past the end. */
const MountOption *mount_option_get(size_t i);
