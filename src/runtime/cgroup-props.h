/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* linux.resources and org.systemd.property.* annotations -> systemd unit properties (plain data, no
 * D-Bus), plus the cgroup file writes for what systemd cannot express. Pure mapping functions are
 * unit-tested without a bus (tests/unit/test-cgroup-props.c). Implemented in cgroup-props.c (resources,
 * file-write list, conversions), cgroup-props-annotations.c (annotations) and cgroup-fs.c (applying the
 * writes to cgroupfs, the freezer). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup-util.h"
#include "oci-config.h"
#include "unit-property.h"

/* One write into the container's delegated cgroup, relative to the unit's ControlGroup. */
typedef struct CgroupFileWrite {
        char *controller; /* "" for the unified (v2) hierarchy, else a v1 controller ("memory", "devices", ...) */
        char *file;       /* "memory.swappiness", "hugetlb.2MB.max", "devices.deny", ... */
        char *value;
        char *field; /* the JSON path the write comes from ("linux.resources.cpu.quota"), for errors; or NULL */
        bool optional; /* skipped when the file does not exist (a v2 controller the cgroup does not have) */
} CgroupFileWrite;

typedef struct CgroupFileWrites {
        CgroupFileWrite *items;
        size_t n_items;
} CgroupFileWrites;

void cgroup_file_writes_done(CgroupFileWrites *w);
int cgroup_file_writes_add(CgroupFileWrites *w, const char *controller, const char *file, const char *value);
/* The same, naming the JSON path in the error of a write the kernel refuses. */
int cgroup_file_writes_add_for(CgroupFileWrites *w, const char *field, const char *controller,
                               const char *file, const char *value, bool optional);

/* Map every field of linux.resources to unit properties (appended to *props) and file writes (appended to
 * *ret_writes, which the caller initialises). layout picks the v2 (UNIFIED) or v1 (HYBRID, LEGACY)
 * property names. Errors name the JSON path ("linux.resources.cpu.cpus: ..."). Fields with no meaning on
 * the layout are refused (-EOPNOTSUPP) rather than dropped, except the ones the spec marks as NOT
 * RECOMMENDED (memory.kernel: ignored everywhere; memory.kernelTCP: v1 only) and the v1-only tuning knobs
 * that cgroup v2 has no file for (memory.swappiness, memory.disableOOMKiller, memory.useHierarchy): those
 * are ignored on v2, as runc and crun do. memory.checkBeforeUpdate concerns `update` only. */
int cgroup_props_from_resources(const OciResources *r, CgroupLayout layout, UnitPropertyList *props,
                                CgroupFileWrites *ret_writes, char **reterr);

/* The default devices (null, zero, full, random, urandom, tty, console, ptmx, pts, net/tun, and mknod of
 * any device) allowed after the configured rules, as runc and crun do, so that a config denying everything
 * (what `runc spec` writes) still has a working /dev/null: appended as DeviceAllow= when *props restricts
 * devices (DevicePolicy= present), else as devices.allow writes when *w carries v1 devices rules, else
 * nothing (no restriction). Call after cgroup_props_from_resources(). */
int cgroup_props_add_default_devices(UnitPropertyList *props, CgroupFileWrites *w);

/* Write each entry once into the unit's cgroup (unit_cgroup_path as in ControlGroup=, e.g.
 * "/machine.slice/x.scope"): v2 entries below /sys/fs/cgroup (unified layout) or /sys/fs/cgroup/unified
 * (hybrid), v1 entries below /sys/fs/cgroup/<controller>. A v1 controller systemd does not manage (cpuset,
 * hugetlb, net_cls, net_prio, rdma, ...) gets the directory created (cpuset: cpus/mems copied from the
 * parent) and the unit's processes moved in first. Errors name the file. */
int cgroup_apply_file_writes(const CgroupFileWrites *w, const char *unit_cgroup_path, CgroupLayout layout,
                             char **reterr);
/* The same below another cgroupfs root (tests). */
int cgroup_apply_file_writes_at(const char *cgroupfs_root, const CgroupFileWrites *w,
                                const char *unit_cgroup_path, CgroupLayout layout, char **reterr);

/* Every device of linux.resources.blockIO (weights and throttles) is a block device here: systemd skips a
 * device it cannot find without an error (the limit would silently not apply), the kernel's files refuse
 * it (-ENODEV), as runc and crun then fail. */
int cgroup_check_block_devices(const OciResources *r, char **reterr);

/* On a v1 or hybrid layout, systemd puts a unit's processes into the cgroup of the unit only in the
 * hierarchies of the controllers the unit uses: where cpuacct is mounted apart from cpu it stays in the root
 * cgroup there, and blkio does too with IOAccounting off. Statistics (containerd's metrics, podman stats,
 * `events --stats`) would then read the host's counters. Move the calling process (and whatever else the unit
 * holds) into the unit's path in every hierarchy of a controller systemd removes again when the unit goes
 * (cpu, cpuacct, blkio, memory, devices, pids), as runc joins all of them: nothing is left behind. */
int cgroup_join_v1_accounting(const char *unit_cgroup_path, CgroupLayout layout, char **reterr);
void cgroup_remove_v1_accounting(const char *unit_cgroup_path, CgroupLayout layout);
/* On a v1 or hybrid layout: every process of the unit (its cgroup and those below, in the hierarchy systemd
 * tracks it in) that sits in a frozen v1 freezer cgroup (put there by someone else: sdrun's own pause uses
 * the v2 freezer) is moved to the freezer hierarchy's root, which thaws it, so that SIGKILL can end it. A
 * frozen process never dies: delete --force would wait for the stop job in vain and leave it. */
void cgroup_thaw_v1_frozen(const char *unit_cgroup_path, CgroupLayout layout);
int cgroup_join_v1_accounting_at(const char *cgroupfs_root, const char *unit_cgroup_path,
                                 CgroupLayout layout, char **reterr);
/* The hierarchies systemd never trims nor realizes a unit in (cpuacct mounted apart from cpu, freezer, cpuset,
 * net_cls/net_prio, perf_event, hugetlb, rdma, misc): the calling process (and every process of the unit)
 * joins the unit's path there right after entering the scope, before the init and its cgroup namespace
 * exist, so that the namespace's root there is the unit's path (runc joins all hierarchies too): otherwise
 * the container sits in the root cgroup and its freezer or cpuset mount shows, and read-write controls, the
 * host's whole tree. systemd does not remove these directories: `delete` does, with whatever the container
 * made below (cgroup_remove_v1_accounting() removes the unit's path in every v1 controller hierarchy), and
 * so does a create that fails; after a create killed half-way they stay, empty, until `delete` of its
 * leftover state. */
int cgroup_join_v1_untrimmed(const char *unit_cgroup_path, CgroupLayout layout, char **reterr);
int cgroup_join_v1_untrimmed_at(const char *cgroupfs_root, const char *unit_cgroup_path, CgroupLayout layout,
                                char **reterr);

/* annotations "org.systemd.property.NAME" = VALUE -> unit property NAME. VALUE is GVariant-like text:
 * "uint64 5", "int64 -1", "uint32 5", "int32 5", "@t 5", "@x -1", "@u 5", "@i 5", "@s 'x'", "true", "false",
 * 'str' or "str", ['a', 'b'] (as), "double 1.5", a bare integer (t), a bare word (s). A NAME ending in
 * "Sec" (not "USec") is renamed to ...USec and its value, in seconds (integer or decimal), converted to
 * microseconds (t), as runc does for TimeoutStopSec=. Other annotations are ignored. Errors name the
 * annotation. */
int cgroup_props_from_annotations(const OciKeyValue *a, size_t n, UnitPropertyList *props, char **reterr);

/* Freeze (or thaw) the unit's cgroup directly through the cgroup v2 freezer (cgroup.freeze in the unified
 * hierarchy, which the hybrid layout has too, /sys/fs/cgroup/unified), waiting for cgroup.events to say
 * "frozen 1"/"frozen 0" at most timeout_usec. For hybrid hosts, where systemd 252 refuses FreezeUnit. */
/* Refuse (-EBUSY, "container's cgroup unexpectedly frozen", runc's words) where the cgroup a new scope of
 * SLICE named UNIT will get exists already and is frozen (cgroup.freeze on v2, freezer.state on v1):
 * whatever entered it, the runtime itself first, would stop there. */
int cgroup_check_unit_not_frozen(const char *slice, const char *unit, CgroupLayout layout, char **reterr);
/* The cgroup path systemd gives UNIT in SLICE (NULL: "-.slice"): "/a.slice/a-b.slice/UNIT". */
int cgroup_unit_path(const char *slice, const char *unit, char **ret);
int cgroup_freeze(const char *unit_cgroup_path, CgroupLayout layout, bool freeze, uint64_t timeout_usec,
                  char **reterr);

/* Conversions (as runc and crun document them). */
/* cpu.shares [2, 262144] -> cpu.weight [1, 10000]; 0 -> 0 (unset). */
uint64_t cgroup_cpu_shares_to_weight(uint64_t shares);
/* blkio.weight [10, 1000] -> io.weight [1, 10000]; 0 -> 0 (unset). */
uint64_t cgroup_blkio_weight_to_io_weight(uint64_t weight);
/* linux.resources.cpu quota and period (us, period in [1000, 1000000]) -> CPUQuotaPerSecUSec, rounded up to
 * whole 10 ms (1%), as runc does: systemd 252 keeps the value exactly while the unit is loaded, but stores it as
 * a whole percentage (CPUQuota=N%, truncated) in the unit's drop-in, and `daemon-reload` re-applies what it
 * reads back. Rounded up, the quota systemd applies (cgroup_cpu_quota_systemd()) is never below the one asked
 * for, equal to it whenever a whole percentage can give it, and the same before and after a reload. -ERANGE
 * when the result does not fit. */
int cgroup_cpu_quota_per_sec(uint64_t quota, uint64_t period, uint64_t *ret);
/* The cpu.cfs_quota_us (v1) or cpu.max quota (v2) systemd 252 writes for CPUQuotaPerSecUSec and a period:
 * per_sec * period / 1 s, at least 1 ms. */
uint64_t cgroup_cpu_quota_systemd(uint64_t per_sec, uint64_t period);
/* "0-3,5" -> CPU bitmask bytes (bit n = CPU n, byte 0 first), as AllowedCPUs= travels on the bus. -EINVAL
 * on syntax errors or a CPU >= 8192. */
int cgroup_parse_cpu_list(const char *s, uint8_t **ret, size_t *ret_n);
