/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

typedef enum CgroupLayout {
        CGROUP_LAYOUT_UNIFIED, /* /sys/fs/cgroup is cgroup2 */
        CGROUP_LAYOUT_HYBRID,  /* v1 controllers + /sys/fs/cgroup/unified */
        CGROUP_LAYOUT_LEGACY,  /* v1 only (name=systemd hierarchy) */
} CgroupLayout;

int cgroup_detect_layout(CgroupLayout *ret);
const char *cgroup_layout_to_string(CgroupLayout l);

/* One line of /proc/PID/cgroup: "hierarchy-id:controllers:path". */
typedef struct CgroupMembership {
        char *controllers; /* "" for the v2 hierarchy, "name=systemd", "memory", "cpu,cpuacct", ... */
        char *path;
} CgroupMembership;

int cgroup_read_memberships(pid_t pid, CgroupMembership **ret, size_t *ret_n);
void cgroup_memberships_free(CgroupMembership *m, size_t n);

/* The mount point of the hierarchy that holds `controllers` ("" for cgroup2), or NULL. */
int cgroup_hierarchy_mount(const char *controllers, char **ret);
/* Write pid into <mount of controllers>/<path>/cgroup.procs for every membership given. */
int cgroup_attach_memberships(pid_t pid, const CgroupMembership *m, size_t n);
/* Absolute cgroupfs directory of the unified (v2) cgroup `path`, or of the name=systemd one on legacy. */
int cgroup_unified_dir(const char *path, char **ret);
/* Write "+c" for every controller in DIR/cgroup.controllers to DIR/cgroup.subtree_control (cgroup v2; DIR
 * must hold no process). */
int cgroup_enable_subtree_controllers(const char *dir);
/* Move pid out of the unit whose cgroup path is unit_path, in every hierarchy where it is in it, back to its
 * membership in orig, or to the nearest existing ancestor of that if the cgroup is gone. */
int cgroup_leave_unit(pid_t pid, const CgroupMembership *orig, size_t n_orig, const char *unit_path);
