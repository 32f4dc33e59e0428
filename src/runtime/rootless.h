/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Rootless: an unprivileged user (or root of a user namespace that is not the host's, as Podman runs its
 * runtime) runs containers in scopes of their own systemd user manager. What changes against root:
 *  - the scope is created over the user's bus, with a short-lived stage1 child as its first process (the
 *    runtime could move itself into the user's scope but never back out: the common ancestor of the two
 *    cgroups is not the user's), and the init is cloned from there, so it is still born in the scope;
 *  - the id maps of a new user namespace are written directly only for the single mapping of the caller,
 *    else by newuidmap/newgidmap (/etc/subuid, /etc/subgid);
 *  - resources become unit properties only where the user manager has the controller delegated;
 *  - what needs privilege on the host is refused before anything exists;
 *  - no systemd-machined registration (machined is system-wide and refuses unprivileged callers). */

#include <stdbool.h>
#include <sys/types.h>

#include "cgroup-props.h"
#include "cgroup-util.h"
#include "oci-config.h"
#include "sdunit.h"
#include "unit-property.h"

/* Whether we run without privilege on the host: euid != 0, or in a user namespace that is not the
 * initial one (its uid_map is not "0 0 4294967295"). SDRUN_ROOTLESS=1/0 overrides (tests). */
bool rootless_detect(void);
/* --rootless true|false (1, 0) or auto (-1). */
void rootless_set_override(int v);
/* Only the uid_map test. */
bool running_in_userns(void);

/* Write /proc/PID/{uid,gid}_map of the init's new user namespace from the config. Privileged (euid 0, in
 * any namespace): directly. Unprivileged: one mapping of size 1 onto our own euid/egid is written directly
 * (after "deny" in /proc/PID/setgroups, which the kernel requires for gid_map); anything else through
 * newuidmap/newgidmap, which check /etc/subuid and /etc/subgid. Errors name the config field. */
int userns_write_id_maps(pid_t pid, const OciConfig *c, char **reterr);

/* A user namespace with these id mappings (written as userns_write_id_maps() writes them), as an fd in *ret:
 * what an id-mapped mount maps through. what: the config field the mappings belong to ("mounts[2]"). Its
 * short-lived first process is reaped before this returns. */
int userns_open_mapped(const OciIdMapping *uid, size_t n_uid, const OciIdMapping *gid, size_t n_gid,
                       const char *what, int *ret, char **reterr);

/* Refuse what an unprivileged user cannot have, from config.json alone, before anything exists (errors
 * name the JSON path): a new user namespace is required unless we already run in one; sysctls outside
 * the container's own namespaces are refused in any case (is_paths_ns_sysctl_ok). */
int rootless_validate_config(const OciConfig *c, char **reterr);

/* The controllers the user manager can give its units: cgroup.controllers of its own cgroup (cgroup v2;
 * empty on v1 layouts, where nothing is delegated to users). manager_cgroup: the user manager's
 * ControlGroup ("/user.slice/user-1000.slice/user@1000.service"). Returns a malloc'd space-separated list. */
int rootless_delegated_controllers(const char *manager_cgroup, CgroupLayout layout, char **ret);

/* The unit properties whose controller is not in `delegated` (a space-separated list): on cgroup v2 an
 * error naming the property and the controller (-EOPNOTSUPP, as runc fails to write the file); on v1, where
 * nothing is delegated to a user manager, a warning, and the property is dropped. Device rules are dropped
 * with a debug message only: a user's manager has no device cgroup, and in the user namespace device access
 * is the host's file permissions on bound nodes. Accounting switches (...Accounting=) are kept. */
int rootless_filter_properties(UnitPropertyList *props, const char *delegated, CgroupLayout layout,
                               char **reterr);

/* The v1 cgroup file writes, on a v1 or hybrid layout, where nothing is delegated to a user manager: dropped
 * with the same warning, naming the JSON field (the v2 ones are kept: the user owns its delegated cgroup). */
void rootless_filter_writes(CgroupFileWrites *w, CgroupLayout layout);

/* Both of the above for the user manager behind bus (its ControlGroup asked over the bus). */
int rootless_filter_resources(SdUnitBus *bus, CgroupLayout layout, UnitPropertyList *props, char **reterr);

/* The same check for a container of the system manager on cgroup v2: each controller the properties need
 * should be one the host's hierarchy offers (cgroupfs_root/cgroup.controllers, e.g. "/sys/fs/cgroup"), or
 * systemd takes the property and applies nothing (a kernel booted with cgroup_disable=memory, controllers
 * held by v1 hierarchies). A warning naming the property and the controller, as Docker warns and runs: a host
 * without the controller cannot have the limit, and refusing would stop every container an engine gives a
 * default limit. Device rules are BPF programs there, no controller: not checked. */
void cgroup_check_host_controllers(const UnitPropertyList *props, const char *cgroupfs_root);

/* The controller a unit property needs ("memory", "pids", "cpu", "io", "cpuset", "devices"), or NULL. */
const char *unit_property_controller(const char *name);
