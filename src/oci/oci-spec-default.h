/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include <cjson/cJSON.h>

/* The default config.json of `sdrun spec`: the same shape as `runc spec` (a read-only "rootfs", "sh"
 * with a terminal, the minimal capability set, the usual pseudo-filesystems, masked and read-only /proc
 * paths, new pid/network/ipc/uts/mount namespaces, every device denied).
 *
 * cgroupns: a new cgroup namespace too, as runc and crun add one on a cgroup v2 host (the caller knows the
 * host; on a v1 or hybrid one they leave it out, and runc's tests add their own there).
 *
 * rootless: for an unprivileged owner: a user namespace mapping the caller's euid/egid to 0, no network
 * namespace, /sys bind-mounted from the host instead of a new sysfs, no uid=/gid= mount options, no
 * linux.resources. Returns 0 or -ENOMEM. */
int oci_spec_default(bool rootless, bool cgroupns, cJSON **ret);

/* Format a JSON document for people, as `runc spec` writes config.json: one member or array element per
 * line, indented with tabs, "key": value. Returns a malloc'd string (no trailing newline) or NULL on OOM. */
char *oci_json_format_pretty(const cJSON *j);
