/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linux.resources -> systemd unit properties and cgroup file writes, as plain data (no D-Bus, no cgroupfs
 * I/O): memory, cpu, pids, blockIO, devices (with the default devices), hugetlb, network, rdma, unified.
 * org.systemd.property.* annotations are in cgroup-props-annotations.c, the cgroupfs side (applying the
 * writes, the freezer) in cgroup-fs.c. */

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup-props.h"
#include "cgroup-util.h"
#include "error-util.h"
#include "fileio.h"
#include "macro.h"
#include "oci-config.h"
#include "string-util.h"
#include "unit-property.h"

#define CPU_LIST_MAX 8192

/* ---------------------------------------------------------------------------------------------------- */
/* File writes */

void cgroup_file_writes_done(CgroupFileWrites *w) {
        if (!w)
                return;
        for (size_t i = 0; i < w->n_items; i++) {
                free(w->items[i].controller);
                free(w->items[i].file);
                free(w->items[i].value);
                free(w->items[i].field);
        }
        free(w->items);
        w->items = NULL;
        w->n_items = 0;
}

int cgroup_file_writes_add_for(CgroupFileWrites *w, const char *field, const char *controller,
                               const char *file, const char *value, bool optional) {
        _cleanup_free_ char *c = strdup(strempty(controller)), *f = strdup(file), *v = strdup(value),
                            *j = field ? strdup(field) : NULL;
        CgroupFileWrite *items;

        if (!c || !f || !v || (field && !j))
                return -ENOMEM;
        items = reallocarray(w->items, w->n_items + 1, sizeof(CgroupFileWrite));
        if (!items)
                return -ENOMEM;
        w->items = items;
        w->items[w->n_items++] = (CgroupFileWrite){
                .controller = TAKE_PTR(c),
                .file = TAKE_PTR(f),
                .value = TAKE_PTR(v),
                .field = TAKE_PTR(j),
                .optional = optional,
        };
        return 0;
}

int cgroup_file_writes_add(CgroupFileWrites *w, const char *controller, const char *file,
                           const char *value) {
        return cgroup_file_writes_add_for(w, NULL, controller, file, value, false);
}

_printf_(4, 5) static int add_writef(CgroupFileWrites *w, const char *controller, const char *file,
                                     const char *fmt, ...) {
        _cleanup_free_ char *v = strdup_printf_args(fmt);
        if (!v)
                return -ENOMEM;
        return cgroup_file_writes_add(w, controller, file, v);
}

/* A write for one JSON field, named in the error when the kernel refuses it. */
_printf_(6, 7) static int add_field_writef(CgroupFileWrites *w, const char *field, const char *controller,
                                           const char *file, bool optional, const char *fmt, ...) {
        _cleanup_free_ char *v = strdup_printf_args(fmt);
        if (!v)
                return -ENOMEM;
        return cgroup_file_writes_add_for(w, field, controller, file, v, optional);
}

/* ---------------------------------------------------------------------------------------------------- */
/* Conversions */

uint64_t cgroup_cpu_shares_to_weight(uint64_t shares) {
        if (shares == 0)
                return 0;
        shares = MIN(MAX(shares, 2u), 262144u);
        return 1 + ((shares - 2) * 9999) / 262142;
}

uint64_t cgroup_blkio_weight_to_io_weight(uint64_t weight) {
        if (weight == 0)
                return 0;
        weight = MIN(MAX(weight, 10u), 1000u);
        return 1 + ((weight - 10) * 9999) / 990;
}

/* systemd 252 writes CPUQuotaPerSecUSec into the unit's drop-in as "CPUQuota=N%" with N = value / 10 ms,
 * truncated, and reads that back on `daemon-reload`. */
#define CPU_QUOTA_PER_SEC_STEP (10 * USEC_PER_MSEC)

int cgroup_cpu_quota_per_sec(uint64_t quota, uint64_t period, uint64_t *ret) {
        assert(period > 0);
        assert(ret);

        unsigned __int128 q = ((unsigned __int128) quota * USEC_PER_SEC + period - 1) / period;
        q = (q + CPU_QUOTA_PER_SEC_STEP - 1) / CPU_QUOTA_PER_SEC_STEP * CPU_QUOTA_PER_SEC_STEP;
        if (q >= UINT64_MAX) /* UINT64_MAX is systemd's "infinity" */
                return -ERANGE;
        *ret = (uint64_t) q;
        return 0;
}

uint64_t cgroup_cpu_quota_systemd(uint64_t per_sec, uint64_t period) {
        unsigned __int128 q = (unsigned __int128) per_sec * period / USEC_PER_SEC;
        return q >= UINT64_MAX ? UINT64_MAX : MAX((uint64_t) q, USEC_PER_MSEC);
}

static int parse_uint(const char **p, unsigned long *ret) {
        char *end;
        if (!isdigit((unsigned char) **p))
                return -EINVAL;
        errno = 0;
        unsigned long v = strtoul(*p, &end, 10);
        if (errno != 0)
                return -EINVAL;
        *p = end;
        *ret = v;
        return 0;
}

int cgroup_parse_cpu_list(const char *s, uint8_t **ret, size_t *ret_n) {
        _cleanup_free_ uint8_t *mask = NULL;
        size_t n = 0;
        const char *p = s;

        assert(ret);
        assert(ret_n);

        if (!s)
                return -EINVAL;
        while (isspace((unsigned char) *p))
                p++;
        if (*p == 0) { /* empty: no restriction */
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        for (;;) {
                unsigned long a, b;

                while (*p == ' ')
                        p++;
                if (parse_uint(&p, &a) < 0)
                        return -EINVAL;
                b = a;
                if (*p == '-') {
                        p++;
                        if (parse_uint(&p, &b) < 0 || b < a)
                                return -EINVAL;
                }
                if (b >= CPU_LIST_MAX)
                        return -ERANGE;
                if (b / 8 + 1 > n) {
                        uint8_t *m = realloc(mask, b / 8 + 1);
                        if (!m)
                                return -ENOMEM;
                        memset(m + n, 0, b / 8 + 1 - n);
                        mask = m;
                        n = b / 8 + 1;
                }
                for (unsigned long i = a; i <= b; i++)
                        mask[i / 8] |= (uint8_t) (1u << (i % 8));
                while (*p == ' ')
                        p++;
                if (*p == 0 || *p == '\n')
                        break;
                if (*p != ',')
                        return -EINVAL;
                p++;
        }
        *ret = TAKE_PTR(mask);
        *ret_n = n;
        return 0;
}

/* memory values: -1 = unlimited (UINT64_MAX for systemd); other negatives are invalid. */
static int mem_value(int64_t v, const char *path, uint64_t *ret, char **reterr) {
        if (v == -1) {
                *ret = UINT64_MAX;
                return 0;
        }
        if (v < 0)
                return errorf(reterr, -EINVAL, "%s: %" PRIi64 " is negative (use -1 for unlimited)", path,
                              v);
        *ret = (uint64_t) v;
        return 0;
}

/* ---------------------------------------------------------------------------------------------------- */
/* Memory */

static int map_memory(const OciResources *r, bool v2, UnitPropertyList *props, CgroupFileWrites *w,
                      char **reterr) {
        uint64_t v = 0;
        int k;

        if (!r->memory.present)
                return 0;

        /* limit 0 means "not set", as runc and crun treat it. */
        if (r->memory.has_limit && r->memory.limit != 0) {
                k = mem_value(r->memory.limit, "linux.resources.memory.limit", &v, reterr);
                if (k < 0)
                        return k;
                k = unit_property_add_u64(props, v2 ? "MemoryMax" : "MemoryLimit", v);
                /* On v1 systemd applies MemoryMax= instead of MemoryLimit= once MemoryMax= is set (`systemctl
                 * set-property ... MemoryMax=` by an admin): set both, so that `sdrun update` still counts. */
                if (k >= 0 && !v2)
                        k = unit_property_add_u64(props, "MemoryMax", v);
                if (k < 0)
                        return k;
        }

        if (r->memory.has_reservation) {
                k = mem_value(r->memory.reservation, "linux.resources.memory.reservation", &v, reterr);
                if (k < 0)
                        return k;
                if (v2)
                        k = unit_property_add_u64(props, "MemoryLow", v);
                else /* systemd has no v1 soft limit */
                        k = add_writef(w, "memory", "memory.soft_limit_in_bytes", "%" PRIi64,
                                       r->memory.reservation);
                if (k < 0)
                        return k;
        }

        /* An unlimited memory limit with no swap limit given lifts the swap limit too, as runc does
         * (`runc update --memory -1`): on v1 a memory+swap limit below it would keep the memory limit. */
        bool implied_swap =
                r->memory.has_limit && r->memory.limit == -1 && (!r->memory.has_swap || r->memory.swap == 0);
        if (implied_swap && v2) {
                k = unit_property_add_u64(props, "MemorySwapMax", UINT64_MAX);
                if (k < 0)
                        return k;
        } else if (implied_swap) {
                /* Where swap is not accounted there is no memsw file: best effort ("?"). */
                k = add_writef(w, "memory", "?memory.memsw.limit_in_bytes", "-1");
                if (k >= 0)
                        k = add_writef(w, "memory", "memory.limit_in_bytes", "-1");
                if (k < 0)
                        return k;
        }

        if (r->memory.has_swap && r->memory.swap != 0) {
                int64_t swap = r->memory.swap, limit = r->memory.has_limit ? r->memory.limit : 0;

                if (swap < -1)
                        return errorf(reterr, -EINVAL,
                                      "linux.resources.memory.swap: %" PRIi64
                                      " is negative (use -1 for unlimited)",
                                      swap);
                if (v2) {
                        /* OCI swap is memory+swap; v2's memory.swap.max is swap alone. */
                        if (swap == -1)
                                v = UINT64_MAX;
                        else if (limit == 0 || limit == -1)
                                return errorf(reterr, -EINVAL,
                                              "linux.resources.memory.swap: a memory+swap limit (%" PRIi64
                                              ") needs linux.resources.memory.limit on cgroup v2",
                                              swap);
                        else if (limit > swap)
                                return errorf(reterr, -EINVAL,
                                              "linux.resources.memory.swap: memory+swap limit %" PRIi64
                                              " is lower than linux.resources.memory.limit %" PRIi64,
                                              swap, limit);
                        else
                                v = (uint64_t) (swap - limit);
                        k = unit_property_add_u64(props, "MemorySwapMax", v);
                } else {
                        if (swap != -1 && limit > 0 && limit > swap)
                                return errorf(reterr, -EINVAL,
                                              "linux.resources.memory.swap: memory+swap limit %" PRIi64
                                              " is lower than linux.resources.memory.limit %" PRIi64,
                                              swap, limit);
                        /* The kernel keeps memory <= memory+swap at every step, and systemd applies
                         * MemoryLimit= on its own schedule: the limit first where it fits (lowering), then
                         * memory+swap, then the limit where it did not fit before (raising). */
                        if (limit != 0)
                                k = add_writef(w, "memory", "?memory.limit_in_bytes", "%" PRIi64, limit);
                        if (k >= 0)
                                k = add_writef(w, "memory", "memory.memsw.limit_in_bytes", "%" PRIi64, swap);
                        if (k >= 0 && limit != 0)
                                k = add_writef(w, "memory", "memory.limit_in_bytes", "%" PRIi64, limit);
                }
                if (k < 0)
                        return k;
        }

        /* memory.kernel: NOT RECOMMENDED, and gone from the kernel since 6.0: ignored. */

        if (r->memory.has_kernel_tcp && !v2) {
                k = add_writef(w, "memory", "memory.kmem.tcp.limit_in_bytes", "%" PRIi64,
                               r->memory.kernel_tcp);
                if (k < 0)
                        return k;
        }

        if (r->memory.has_swappiness) {
                if (r->memory.swappiness > 100)
                        return errorf(reterr, -EINVAL,
                                      "linux.resources.memory.swappiness: %" PRIu64
                                      " is out of range [0, 100]",
                                      r->memory.swappiness);
                if (!v2) {
                        k = add_writef(w, "memory", "memory.swappiness", "%" PRIu64, r->memory.swappiness);
                        if (k < 0)
                                return k;
                }
        }

        if (r->memory.has_disable_oom_killer && r->memory.disable_oom_killer && !v2) {
                k = cgroup_file_writes_add(w, "memory", "memory.oom_control", "1");
                if (k < 0)
                        return k;
        }

        /* useHierarchy: always on since Linux 5.x (writing 1 is a no-op, 0 fails); ask for 0 only. */
        if (r->memory.has_use_hierarchy && !r->memory.use_hierarchy && !v2) {
                k = cgroup_file_writes_add(w, "memory", "memory.use_hierarchy", "0");
                if (k < 0)
                        return k;
        }
        return 0;
}

/* ---------------------------------------------------------------------------------------------------- */
/* CPU */

static int add_cpu_mask(UnitPropertyList *props, const char *name, const char *list, const char *path,
                        char **reterr) {
        _cleanup_free_ uint8_t *mask = NULL;
        size_t n;
        int k;

        k = cgroup_parse_cpu_list(list, &mask, &n);
        if (k == -ENOMEM)
                return k;
        if (k < 0)
                return errorf(reterr, -EINVAL, "%s: \"%s\" is not a valid list (e.g. \"0-3,6\"; at most %d)",
                              path, list, CPU_LIST_MAX - 1);
        if (n == 0)
                return 0;
        return unit_property_add_bytes(props, name, mask, n);
}

static int map_cpu(const OciResources *r, bool v2, UnitPropertyList *props, CgroupFileWrites *w,
                   char **reterr) {
        int k;

        if (!r->cpu.present)
                return 0;

        if (r->cpu.has_shares && r->cpu.shares != 0) {
                if (v2)
                        k = unit_property_add_u64(props, "CPUWeight",
                                                  cgroup_cpu_shares_to_weight(r->cpu.shares));
                else
                        k = unit_property_add_u64(props, "CPUShares", MIN(MAX(r->cpu.shares, 2u), 262144u));
                if (k < 0)
                        return k;
        }

        if (r->cpu.has_period && r->cpu.period != 0) {
                if (r->cpu.period < 1000 || r->cpu.period > 1000000)
                        return errorf(reterr, -EINVAL,
                                      "linux.resources.cpu.period: %" PRIu64
                                      " us is out of range [1000, 1000000]",
                                      r->cpu.period);
                k = unit_property_add_u64(props, "CPUQuotaPeriodUSec", r->cpu.period);
                if (k < 0)
                        return k;
                /* systemd writes cpu.cfs_period_us on v1 only together with a quota: a period alone (runc's
                 * update.bats "set cpu period with no quota") is written to the file. */
                if (!v2 && !(r->cpu.has_quota && r->cpu.quota != 0)) {
                        k = add_field_writef(w, "linux.resources.cpu.period", "cpu", "cpu.cfs_period_us",
                                             false, "%" PRIu64, r->cpu.period);
                        if (k < 0)
                                return k;
                }
        }

        if (r->cpu.has_quota && r->cpu.quota != 0) {
                uint64_t period = r->cpu.has_period && r->cpu.period != 0 ? r->cpu.period : 100000;
                uint64_t per_sec;

                if (r->cpu.quota == -1)
                        per_sec = UINT64_MAX;
                else if (r->cpu.quota < 0)
                        return errorf(reterr, -EINVAL,
                                      "linux.resources.cpu.quota: %" PRIi64
                                      " is negative (use -1 for unlimited)",
                                      r->cpu.quota);
                else if (cgroup_cpu_quota_per_sec((uint64_t) r->cpu.quota, period, &per_sec) < 0)
                        return errorf(reterr, -ERANGE, "linux.resources.cpu.quota: %" PRIi64 " is too large",
                                      r->cpu.quota);
                k = unit_property_add_u64(props, "CPUQuotaPerSecUSec", per_sec);
                if (k < 0)
                        return k;
                /* systemd's quota is rounded up to whole percents, and on v1 it logs the kernel's refusal
                 * (a quota above a parent cgroup's) and goes on: the files are written again after it, with
                 * the exact values, and a refusal fails (as runc does). On v2 the kernel refuses nothing, the
                 * exact quota is written where it differs (while the cgroup has the cpu controller). */
                if (!v2) {
                        if (r->cpu.has_period && r->cpu.period != 0) {
                                k = add_field_writef(w, "linux.resources.cpu.period", "cpu",
                                                     "cpu.cfs_period_us", false, "%" PRIu64, r->cpu.period);
                                if (k < 0)
                                        return k;
                        }
                        k = add_field_writef(w, "linux.resources.cpu.quota", "cpu", "cpu.cfs_quota_us",
                                             false, "%" PRIi64, r->cpu.quota);
                        if (k < 0)
                                return k;
                } else if (r->cpu.quota > 0 &&
                           cgroup_cpu_quota_systemd(per_sec, period) != (uint64_t) r->cpu.quota) {
                        k = add_field_writef(w, "linux.resources.cpu.quota", "", "cpu.max", true,
                                             "%" PRIi64 " %" PRIu64, r->cpu.quota, period);
                        if (k < 0)
                                return k;
                }
        }
        /* cgroup v2 with no quota (none, or -1): systemd 252 writes "max" with its default period (100 ms)
         * and keeps CPUQuotaPeriodUSec= to itself; runc writes the period it was given, "max PERIOD" (runc's
         * update.bats: "set cpu period with no quota", an update to quota -1 that keeps the period). */
        if (v2 && r->cpu.has_period && r->cpu.period != 0 && !(r->cpu.has_quota && r->cpu.quota > 0)) {
                k = add_field_writef(w, "linux.resources.cpu.period", "", "cpu.max", true, "max %" PRIu64,
                                     r->cpu.period);
                if (k < 0)
                        return k;
        }

        if (r->cpu.has_burst) {
                k = v2 ? add_writef(w, "", "cpu.max.burst", "%" PRIu64, r->cpu.burst)
                       : add_writef(w, "cpu", "cpu.cfs_burst_us", "%" PRIu64, r->cpu.burst);
                if (k < 0)
                        return k;
        }

        if ((r->cpu.has_realtime_runtime && r->cpu.realtime_runtime != 0) ||
            (r->cpu.has_realtime_period && r->cpu.realtime_period != 0)) {
                if (v2)
                        return errorf(
                                reterr, -EOPNOTSUPP,
                                "linux.resources.cpu.realtimeRuntime/realtimePeriod: real-time CPU bandwidth "
                                "is a cgroup v1 feature; cgroup v2 has no cpu.rt_* files");
                /* period first: the kernel checks runtime <= period. */
                if (r->cpu.has_realtime_period && r->cpu.realtime_period != 0) {
                        k = add_writef(w, "cpu", "cpu.rt_period_us", "%" PRIu64, r->cpu.realtime_period);
                        if (k < 0)
                                return k;
                }
                if (r->cpu.has_realtime_runtime && r->cpu.realtime_runtime != 0) {
                        k = add_writef(w, "cpu", "cpu.rt_runtime_us", "%" PRIi64, r->cpu.realtime_runtime);
                        if (k < 0)
                                return k;
                }
        }

        if (r->cpu.has_idle) {
                if (r->cpu.idle != 0 && r->cpu.idle != 1)
                        return errorf(reterr, -EINVAL, "linux.resources.cpu.idle: %" PRIi64 " is not 0 or 1",
                                      r->cpu.idle);
                k = add_writef(w, v2 ? "" : "cpu", "cpu.idle", "%" PRIi64, r->cpu.idle);
                if (k < 0)
                        return k;
        }

        /* The cpuset masks: AllowedCPUs=/AllowedMemoryNodes= on both layouts, so that `systemctl show` tells the
         * truth, but systemd 252 drives cpuset only on cgroup v2 (on v1 it stores them, applies nothing and
         * never touches the cpuset hierarchy, daemon-reload included): on v1 the cpuset files are written too.
         * Both are needed before a task can join a v1 cpuset; cgroup_apply_file_writes() fills a missing one
         * from the parent. */
        const struct {
                const char *mask, *property, *field, *v1_file;
        } cpusets[] = {
                { r->cpu.cpus, "AllowedCPUs", "linux.resources.cpu.cpus", "cpuset.cpus" },
                { r->cpu.mems, "AllowedMemoryNodes", "linux.resources.cpu.mems", "cpuset.mems" },
        };
        FOREACH_ARRAY(c, cpusets, ELEMENTSOF(cpusets)) {
                if (!c->mask)
                        continue;
                k = add_cpu_mask(props, c->property, c->mask, c->field, reterr);
                if (k < 0)
                        return k;
                if (!v2 && !isempty(c->mask)) {
                        k = cgroup_file_writes_add_for(w, c->field, "cpuset", c->v1_file, c->mask, false);
                        if (k < 0)
                                return k;
                }
        }
        return 0;
}

/* ---------------------------------------------------------------------------------------------------- */
/* Block IO */

static int dev_path(char **ret, int64_t major, int64_t minor) {
        return asprintf(ret, "/dev/block/%" PRIi64 ":%" PRIi64, major, minor) < 0 ? -ENOMEM : 0;
}

static int map_throttle(const OciBlockIoDevice *d, size_t n, bool v2, const char *json, const char *v2_name,
                        const char *v1_name, const char *v1_file, UnitPropertyList *props,
                        CgroupFileWrites *w, char **reterr) {
        int k;

        for (size_t i = 0; i < n; i++) {
                if (d[i].major < 0 || d[i].minor < 0)
                        return errorf(reterr, -EINVAL,
                                      "linux.resources.blockIO.%s[%zu]: major and minor are required", json,
                                      i);
                if (v2_name && (v2 || v1_name)) {
                        _cleanup_free_ char *p = NULL;
                        k = dev_path(&p, d[i].major, d[i].minor);
                        if (k < 0)
                                return k;
                        /* 0 means "no limit" for the kernel's throttle files; systemd's is infinity. */
                        k = unit_property_add_pair_st(props, v2 ? v2_name : v1_name, p,
                                                      d[i].rate == 0 ? UINT64_MAX : d[i].rate);
                } else
                        k = add_writef(w, "blkio", v1_file, "%" PRIi64 ":%" PRIi64 " %" PRIu64, d[i].major,
                                       d[i].minor, d[i].rate);
                if (k < 0)
                        return k;
        }
        return 0;
}

static int map_block_io(const OciResources *r, bool v2, UnitPropertyList *props, CgroupFileWrites *w,
                        char **reterr) {
        int k;

        if (!r->block_io.present)
                return 0;

        if (r->block_io.has_weight && r->block_io.weight != 0) {
                if (r->block_io.weight < 10 || r->block_io.weight > 1000)
                        return errorf(reterr, -EINVAL,
                                      "linux.resources.blockIO.weight: %u is out of range [10, 1000]",
                                      r->block_io.weight);
                k = v2 ? unit_property_add_u64(props, "IOWeight",
                                               cgroup_blkio_weight_to_io_weight(r->block_io.weight))
                       : unit_property_add_u64(props, "BlockIOWeight", r->block_io.weight);
                if (k < 0)
                        return k;
        }
        if (r->block_io.has_leaf_weight && r->block_io.leaf_weight != 0) {
                if (v2)
                        return errorf(reterr, -EOPNOTSUPP,
                                      "linux.resources.blockIO.leafWeight: cgroup v2 has no leaf weight");
                k = add_writef(w, "blkio", "blkio.leaf_weight", "%u", r->block_io.leaf_weight);
                if (k < 0)
                        return k;
        }

        for (size_t i = 0; i < r->block_io.n_weight_device; i++) {
                const OciBlockIoDevice *d = &r->block_io.weight_device[i];
                _cleanup_free_ char *p = NULL;

                if (d->major < 0 || d->minor < 0)
                        return errorf(
                                reterr, -EINVAL,
                                "linux.resources.blockIO.weightDevice[%zu]: major and minor are required",
                                i);
                if (d->has_weight) {
                        if (d->weight < 10 || d->weight > 1000)
                                return errorf(
                                        reterr, -EINVAL,
                                        "linux.resources.blockIO.weightDevice[%zu].weight: %u is out of range "
                                        "[10, 1000]",
                                        i, d->weight);
                        k = dev_path(&p, d->major, d->minor);
                        if (k < 0)
                                return k;
                        k = v2 ? unit_property_add_pair_st(props, "IODeviceWeight", p,
                                                           cgroup_blkio_weight_to_io_weight(d->weight))
                               : unit_property_add_pair_st(props, "BlockIODeviceWeight", p, d->weight);
                        if (k < 0)
                                return k;
                        /* systemd writes only blkio.weight_device, which a kernel with BFQ and no CFQ does not
                         * have, and ignores the failure: written here too, so that a weight that cannot be set
                         * fails as with runc instead of being dropped. */
                        if (!v2) {
                                k = add_writef(w, "blkio", "blkio.bfq.weight_device|blkio.weight_device",
                                               "%" PRIi64 ":%" PRIi64 " %u", d->major, d->minor, d->weight);
                                if (k < 0)
                                        return k;
                        }
                }
                if (d->has_leaf_weight) {
                        if (v2)
                                return errorf(
                                        reterr, -EOPNOTSUPP,
                                        "linux.resources.blockIO.weightDevice[%zu].leafWeight: cgroup v2 has no "
                                        "leaf weight",
                                        i);
                        k = add_writef(w, "blkio", "blkio.leaf_weight_device", "%" PRIi64 ":%" PRIi64 " %u",
                                       d->major, d->minor, d->leaf_weight);
                        if (k < 0)
                                return k;
                }
        }

        k = map_throttle(r->block_io.throttle_read_bps, r->block_io.n_throttle_read_bps, v2,
                         "throttleReadBpsDevice", "IOReadBandwidthMax", "BlockIOReadBandwidth", NULL, props,
                         w, reterr);
        if (k < 0)
                return k;
        k = map_throttle(r->block_io.throttle_write_bps, r->block_io.n_throttle_write_bps, v2,
                         "throttleWriteBpsDevice", "IOWriteBandwidthMax", "BlockIOWriteBandwidth", NULL,
                         props, w, reterr);
        if (k < 0)
                return k;
        /* systemd has no v1 IOPS property: write the blkio files. */
        k = map_throttle(r->block_io.throttle_read_iops, r->block_io.n_throttle_read_iops, v2,
                         "throttleReadIOPSDevice", "IOReadIOPSMax", NULL, "blkio.throttle.read_iops_device",
                         props, w, reterr);
        if (k < 0)
                return k;
        return map_throttle(r->block_io.throttle_write_iops, r->block_io.n_throttle_write_iops, v2,
                            "throttleWriteIOPSDevice", "IOWriteIOPSMax", NULL,
                            "blkio.throttle.write_iops_device", props, w, reterr);
}

/* ---------------------------------------------------------------------------------------------------- */
/* Devices */

enum { ACC_R = 1, ACC_W = 2, ACC_M = 4, ACC_ALL = 7 };

typedef struct DevRule {
        char type;            /* 'c' or 'b' */
        int64_t major, minor; /* -1 = any */
        unsigned access;
        size_t src; /* index in linux.resources.devices */
} DevRule;

static unsigned parse_access(const char *s) {
        unsigned a = 0;
        for (; s && *s; s++)
                a |= *s == 'r' ? ACC_R : *s == 'w' ? ACC_W : *s == 'm' ? ACC_M : 0;
        return a;
}

static void access_to_string(unsigned a, char buf[static 4]) {
        char *p = buf;
        if (a & ACC_R)
                *p++ = 'r';
        if (a & ACC_W)
                *p++ = 'w';
        if (a & ACC_M)
                *p++ = 'm';
        *p = 0;
}

static bool num_covers(int64_t wide, int64_t narrow) {
        return wide < 0 || wide == narrow;
}

/* Does rule a match every device rule b matches? */
static bool rule_covers(const DevRule *a, const DevRule *b) {
        return a->type == b->type && num_covers(a->major, b->major) && num_covers(a->minor, b->minor);
}

static bool rules_overlap(const DevRule *a, const DevRule *b) {
        return a->type == b->type && (a->major < 0 || b->major < 0 || a->major == b->major) &&
               (a->minor < 0 || b->minor < 0 || a->minor == b->minor);
}

/* The /proc/devices group name of a char/block major, if the major has exactly one name and that name no
 * other major (systemd's DeviceAllow=char-NAME allows every major listed under NAME). */
static int device_group_name(char type, int64_t major, char **ret) {
        _cleanup_free_ char *text = NULL, *found = NULL;
        unsigned n_names = 0, n_majors = 0;
        bool in_section = false;
        int r;

        r = read_full_file_at(AT_FDCWD, "/proc/devices", 1 << 20, &text, NULL);
        if (r < 0)
                return r;

        /* Pass 1: the names of this major; pass 2: the majors of that name. */
        for (int pass = 0; pass < 2; pass++) {
                in_section = false;
                for (char *line = text, *next; line && *line; line = next) {
                        long m;
                        char name[128];

                        next = strchr(line, '\n');
                        size_t len = next ? (size_t) (next - line) : strlen(line);
                        if (next)
                                next++;
                        if (len >= STRLEN("Character devices:") && strneq(line, "Character devices:", len)) {
                                in_section = type == 'c';
                                continue;
                        }
                        if (len >= STRLEN("Block devices:") && strneq(line, "Block devices:", len)) {
                                in_section = type == 'b';
                                continue;
                        }
                        if (!in_section || sscanf(line, " %ld %127s", &m, name) != 2)
                                continue;
                        if (pass == 0 && m == major) {
                                n_names++;
                                if (!found) {
                                        found = strdup(name);
                                        if (!found)
                                                return -ENOMEM;
                                }
                        } else if (pass == 1 && streq(name, found))
                                n_majors++;
                }
                if (pass == 0 && !found)
                        return -ENOENT;
        }
        if (n_names != 1 || n_majors != 1 || strpbrk(found, "/*?["))
                return -ENOTUNIQ;
        *ret = TAKE_PTR(found);
        return 0;
}

static int dev_rule_to_allow(const DevRule *d, size_t idx, UnitPropertyList *props, char **reterr) {
        _cleanup_free_ char *spec = NULL;
        const char *kind = d->type == 'c' ? "char" : "block";
        char acc[4];
        int r;

        access_to_string(d->access, acc);
        if (d->major < 0) {
                if (d->minor >= 0)
                        return errorf(reterr, -EOPNOTSUPP,
                                      "linux.resources.devices[%zu]: a rule for minor %" PRIi64
                                      " of every major cannot be expressed with systemd's DeviceAllow=",
                                      idx, d->minor);
                if (asprintf(&spec, "%s-*", kind) < 0)
                        return -ENOMEM;
        } else if (d->minor < 0) {
                _cleanup_free_ char *name = NULL;
                r = device_group_name(d->type, d->major, &name);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return errorf(
                                reterr, -EOPNOTSUPP,
                                "linux.resources.devices[%zu]: %c %" PRIi64
                                ":*: systemd's DeviceAllow= names a major by its /proc/devices group, and "
                                "major %" PRIi64 " has %s",
                                idx, d->type, d->major, d->major,
                                r == -ENOTUNIQ ? "no name of its own there" : "no entry there");
                if (asprintf(&spec, "%s-%s", kind, name) < 0)
                        return -ENOMEM;
        } else if (asprintf(&spec, "/dev/%s/%" PRIi64 ":%" PRIi64, kind, d->major, d->minor) < 0)
                return -ENOMEM;

        return unit_property_add_pair_ss(props, "DeviceAllow", spec, acc);
}

static int dev_rules_to_writes(const OciResources *r, CgroupFileWrites *w) {
        for (size_t i = 0; i < r->n_devices; i++) {
                const OciDeviceCgroup *d = &r->devices[i];
                char maj[32], min[32];
                int k;

                if (d->major < 0)
                        strcpy(maj, "*");
                else
                        snprintf(maj, sizeof(maj), "%" PRIi64, d->major);
                if (d->minor < 0)
                        strcpy(min, "*");
                else
                        snprintf(min, sizeof(min), "%" PRIi64, d->minor);
                if (d->type == 'a' && d->major < 0 && d->minor < 0)
                        k = cgroup_file_writes_add(w, "devices", d->allow ? "devices.allow" : "devices.deny",
                                                   "a");
                else
                        k = add_writef(w, "devices", d->allow ? "devices.allow" : "devices.deny",
                                       "%c %s:%s %s", d->type, maj, min, d->access[0] ? d->access : "rwm");
                if (k < 0)
                        return k;
        }
        return 0;
}

/* Evaluate the rule list (later rules win) into "deny by default + a list of allows", which is what
 * DevicePolicy=strict + DeviceAllow= express. Returns -EOPNOTSUPP with *ret_bad set to the first rule that
 * does not fit (a deny inside something allowed before). */
static int dev_rules_evaluate(const OciResources *r, bool *ret_default_allow, DevRule **ret, size_t *ret_n,
                              size_t *ret_bad) {
        _cleanup_free_ DevRule *list = NULL;
        size_t n = 0;
        bool default_allow = true; /* no rule: no restriction */

        for (size_t i = 0; i < r->n_devices; i++) {
                const OciDeviceCgroup *d = &r->devices[i];
                unsigned acc = parse_access(d->access[0] ? d->access : "rwm");
                char types[2] = { d->type, 0 };
                size_t n_types = 1;

                if (acc == 0)
                        continue;
                if (d->type == 'a') {
                        types[0] = 'c';
                        types[1] = 'b';
                        n_types = 2;
                }

                if (d->type == 'a' && d->major < 0 && d->minor < 0 && acc == ACC_ALL) {
                        /* Everything: resets the state. */
                        default_allow = d->allow;
                        n = 0;
                        continue;
                }

                for (size_t t = 0; t < n_types; t++) {
                        DevRule rule = { .type = types[t],
                                         .major = d->major,
                                         .minor = d->minor,
                                         .access = acc,
                                         .src = i };

                        if (d->allow) {
                                if (default_allow)
                                        continue; /* already allowed */
                                DevRule *l = reallocarray(list, n + 1, sizeof(DevRule));
                                if (!l)
                                        return -ENOMEM;
                                list = l;
                                list[n++] = rule;
                                continue;
                        }

                        if (default_allow) {
                                *ret_bad = i;
                                return -EOPNOTSUPP;
                        }
                        /* A deny under deny-by-default: take the access away from the allows it covers; a
                         * partial overlap with a wider allow cannot be expressed. */
                        for (size_t j = 0; j < n; j++) {
                                if (!rules_overlap(&rule, &list[j]) || !(list[j].access & rule.access))
                                        continue;
                                if (!rule_covers(&rule, &list[j])) {
                                        *ret_bad = i;
                                        return -EOPNOTSUPP;
                                }
                                list[j].access &= ~rule.access;
                        }
                        size_t m = 0;
                        for (size_t j = 0; j < n; j++)
                                if (list[j].access != 0)
                                        list[m++] = list[j];
                        n = m;
                }
        }

        *ret_default_allow = default_allow;
        *ret = TAKE_PTR(list);
        *ret_n = n;
        return 0;
}

static int map_devices(const OciResources *r, bool v2, UnitPropertyList *props, CgroupFileWrites *w,
                       char **reterr) {
        _cleanup_free_ DevRule *list = NULL;
        size_t n = 0, bad = 0;
        bool default_allow;
        int k;

        if (r->n_devices == 0)
                return 0;

        for (size_t i = 0; i < r->n_devices; i++) {
                const OciDeviceCgroup *d = &r->devices[i];
                if (d->type != 'a' && d->type != 'c' && d->type != 'b')
                        return errorf(reterr, -EINVAL,
                                      "linux.resources.devices[%zu].type: \"%c\" is not a, c or b", i,
                                      d->type);
        }

        k = dev_rules_evaluate(r, &default_allow, &list, &n, &bad);
        if (k == -ENOMEM)
                return k;
        if (k == -EOPNOTSUPP) {
                if (v2)
                        return errorf(
                                reterr, -EOPNOTSUPP,
                                "linux.resources.devices[%zu]: this deny rule narrows an earlier allow, which "
                                "systemd's DevicePolicy=/DeviceAllow= (an allow list) cannot express, and on "
                                "cgroup v2 device access is a BPF program owned by systemd",
                                bad);
                /* v1: leave the devices controller to us (no DevicePolicy=) and replay the rules in order. */
                return dev_rules_to_writes(r, w);
        }
        if (default_allow)
                return 0; /* the rules end up allowing everything: nothing to restrict */

        k = unit_property_add_string(props, "DevicePolicy", "strict");
        if (k < 0)
                return k;
        for (size_t i = 0; i < n; i++) {
                k = dev_rule_to_allow(&list[i], list[i].src, props, reterr);
                if (k == -EOPNOTSUPP && !v2) {
                        /* Not nameable for systemd: drop the properties again and write the rules ourselves. */
                        free(reterr ? TAKE_PTR(*reterr) : NULL);
                        unit_property_list_remove(props, "DevicePolicy");
                        unit_property_list_remove(props, "DeviceAllow");
                        return dev_rules_to_writes(r, w);
                }
                if (k < 0)
                        return k;
        }
        return 0;
}

/* The devices every container may use whatever linux.resources.devices says (runtime-spec "Default Devices"
 * plus /dev/console, the pty devices and /dev/net/tun), allowed after the configured rules as runc and crun
 * do: a config that denies everything (what `runc spec` writes) still gets a working /dev/null. */
static const struct {
        const char *property; /* DeviceAllow= device part */
        const char *v1;       /* devices.allow line */
        const char *access;
} default_devices[] = {
        { "char-*", "c *:* m", "m" },
        { "block-*", "b *:* m", "m" },
        { "/dev/char/1:3", "c 1:3 rwm", "rwm" },       /* null */
        { "/dev/char/1:5", "c 1:5 rwm", "rwm" },       /* zero */
        { "/dev/char/1:7", "c 1:7 rwm", "rwm" },       /* full */
        { "/dev/char/1:8", "c 1:8 rwm", "rwm" },       /* random */
        { "/dev/char/1:9", "c 1:9 rwm", "rwm" },       /* urandom */
        { "/dev/char/5:0", "c 5:0 rwm", "rwm" },       /* tty */
        { "/dev/char/5:1", "c 5:1 rwm", "rwm" },       /* console */
        { "/dev/char/5:2", "c 5:2 rwm", "rwm" },       /* ptmx */
        { "char-pts", "c 136:* rwm", "rwm" },          /* /dev/pts/N */
        { "/dev/char/10:200", "c 10:200 rwm", "rwm" }, /* net/tun */
};

int cgroup_props_add_default_devices(UnitPropertyList *props, CgroupFileWrites *w) {
        bool v1_rules = false;
        int k;

        assert(props);
        assert(w);

        if (unit_property_list_find(props, "DevicePolicy")) {
                for (size_t i = 0; i < ELEMENTSOF(default_devices); i++) {
                        k = unit_property_add_pair_ss(props, "DeviceAllow", default_devices[i].property,
                                                      default_devices[i].access);
                        if (k < 0)
                                return k;
                }
                return 0;
        }
        for (size_t i = 0; i < w->n_items; i++)
                if (streq(w->items[i].controller, "devices"))
                        v1_rules = true;
        for (size_t i = 0; v1_rules && i < ELEMENTSOF(default_devices); i++) {
                k = cgroup_file_writes_add(w, "devices", "devices.allow", default_devices[i].v1);
                if (k < 0)
                        return k;
        }
        return 0;
}

/* ---------------------------------------------------------------------------------------------------- */
/* Hugetlb, network, rdma, unified */

static bool page_size_valid(const char *s) {
        size_t i = 0;
        if (!s)
                return false;
        while (isdigit((unsigned char) s[i]))
                i++;
        return i > 0 && (s[i] == 'K' || s[i] == 'M' || s[i] == 'G') && s[i + 1] == 'B' && s[i + 2] == 0;
}

static int map_hugetlb(const OciResources *r, bool v2, CgroupFileWrites *w, char **reterr) {
        for (size_t i = 0; i < r->n_hugepage_limits; i++) {
                const OciHugepageLimit *h = &r->hugepage_limits[i];
                _cleanup_free_ char *file = NULL;
                int k;

                if (!page_size_valid(h->page_size))
                        return errorf(
                                reterr, -EINVAL,
                                "linux.resources.hugepageLimits[%zu].pageSize: \"%s\" is not of the form "
                                "<number><K|M|G>B",
                                i, strna(h->page_size));
                if (asprintf(&file, "hugetlb.%s.%s", h->page_size, v2 ? "max" : "limit_in_bytes") < 0)
                        return -ENOMEM;
                k = add_writef(w, v2 ? "" : "hugetlb", file, "%" PRIu64, h->limit);
                if (k < 0)
                        return k;
        }
        return 0;
}

static int map_network(const OciResources *r, bool v2, CgroupFileWrites *w, char **reterr) {
        int k;

        if (!r->network.present || (!r->network.has_class_id && r->network.n_priorities == 0))
                return 0;
        if (v2)
                return errorf(
                        reterr, -EOPNOTSUPP,
                        "linux.resources.network: net_cls and net_prio are cgroup v1 controllers; cgroup v2 "
                        "has neither (use a BPF or nftables cgroup match instead)");
        if (r->network.has_class_id) {
                k = add_writef(w, "net_cls", "net_cls.classid", "%" PRIu32, r->network.class_id);
                if (k < 0)
                        return k;
        }
        for (size_t i = 0; i < r->network.n_priorities; i++) {
                const OciNetPriority *p = &r->network.priorities[i];
                if (isempty(p->name) || strpbrk(p->name, " \n/"))
                        return errorf(reterr, -EINVAL,
                                      "linux.resources.network.priorities[%zu].name: \"%s\" is not "
                                      "an interface name",
                                      i, strempty(p->name));
                k = add_writef(w, "net_prio", "net_prio.ifpriomap", "%s %" PRIu32, p->name, p->priority);
                if (k < 0)
                        return k;
        }
        return 0;
}

static int map_rdma(const OciResources *r, bool v2, CgroupFileWrites *w, char **reterr) {
        for (size_t i = 0; i < r->n_rdma; i++) {
                const OciRdma *d = &r->rdma[i];
                char handles[32] = "max", objects[32] = "max";
                int k;

                if (isempty(d->device) || strpbrk(d->device, " \n"))
                        return errorf(reterr, -EINVAL, "linux.resources.rdma: \"%s\" is not a device name",
                                      strempty(d->device));
                if (!d->has_hca_handles && !d->has_hca_objects)
                        continue;
                if (d->has_hca_handles)
                        snprintf(handles, sizeof(handles), "%" PRIu32, d->hca_handles);
                if (d->has_hca_objects)
                        snprintf(objects, sizeof(objects), "%" PRIu32, d->hca_objects);
                k = add_writef(w, v2 ? "" : "rdma", "rdma.max", "%s hca_handle=%s hca_object=%s", d->device,
                               handles, objects);
                if (k < 0)
                        return k;
        }
        return 0;
}

/* "max" or a number. */
static int parse_max(const char *v, uint64_t *ret) {
        char *end;
        while (*v == ' ')
                v++;
        if (strneq(v, "max", 3) && (v[3] == 0 || v[3] == '\n')) {
                *ret = UINT64_MAX;
                return 0;
        }
        if (!isdigit((unsigned char) *v))
                return -EINVAL;
        errno = 0;
        unsigned long long x = strtoull(v, &end, 10);
        if (errno != 0 || (*end != 0 && *end != '\n'))
                return -EINVAL;
        *ret = x;
        return 0;
}

static int map_unified(const OciResources *r, bool v2, UnitPropertyList *props, CgroupFileWrites *w,
                       char **reterr) {
        static const struct {
                const char *key, *property;
        } simple[] = {
                { "memory.max", "MemoryMax" },          { "memory.high", "MemoryHigh" },
                { "memory.low", "MemoryLow" },          { "memory.min", "MemoryMin" },
                { "memory.swap.max", "MemorySwapMax" }, { "pids.max", "TasksMax" },
        };
        int k;

        if (r->n_unified == 0)
                return 0;
        if (!v2)
                return errorf(
                        reterr, -EOPNOTSUPP,
                        "linux.resources.unified: \"%s\": invalid configuration: unified keys need the cgroup v2 "
                        "(unified) layout, this host uses cgroup v1 controllers",
                        r->unified[0].key);

        for (size_t i = 0; i < r->n_unified; i++) {
                const char *key = r->unified[i].key, *val = strempty(r->unified[i].value);
                bool done = false;
                uint64_t v;

                if (isempty(key) || strchr(key, '/') || !strchr(key, '.') || key[0] == '.' ||
                    streq(key, "cgroup.procs") || streq(key, "cgroup.threads") ||
                    streq(key, "cgroup.subtree_control"))
                        return errorf(reterr, -EINVAL,
                                      "linux.resources.unified: \"%s\" is not a cgroup file sdrun "
                                      "may write",
                                      strempty(key));

                for (size_t j = 0; j < ELEMENTSOF(simple); j++)
                        if (streq(key, simple[j].key)) {
                                if (parse_max(val, &v) < 0)
                                        return errorf(reterr, -EINVAL,
                                                      "linux.resources.unified.%s: \"%s\" is not a "
                                                      "number or \"max\"",
                                                      key, val);
                                k = unit_property_add_u64(props, simple[j].property, v);
                                if (k < 0)
                                        return k;
                                done = true;
                        }
                if (!done && streq(key, "cpu.weight")) {
                        if (parse_max(val, &v) < 0 || v < 1 || v > 10000)
                                return errorf(reterr, -EINVAL,
                                              "linux.resources.unified.cpu.weight: \"%s\" is not in "
                                              "[1, 10000]",
                                              val);
                        k = unit_property_add_u64(props, "CPUWeight", v);
                        if (k < 0)
                                return k;
                        done = true;
                }
                if (!done && streq(key, "cpu.max")) {
                        char quota[32];
                        unsigned long long period = 100000;
                        int nf = sscanf(val, "%31s %llu", quota, &period);
                        if (nf < 1 || period < 1000 || period > 1000000 || parse_max(quota, &v) < 0)
                                return errorf(reterr, -EINVAL,
                                              "linux.resources.unified.cpu.max: \"%s\" is not "
                                              "\"<quota|max> [period]\"",
                                              val);
                        uint64_t per_sec = UINT64_MAX;
                        if (v != UINT64_MAX && cgroup_cpu_quota_per_sec(v, period, &per_sec) < 0)
                                return errorf(
                                        reterr, -ERANGE,
                                        "linux.resources.unified.cpu.max: \"%s\": the quota is too large",
                                        val);
                        k = unit_property_add_u64(props, "CPUQuotaPerSecUSec", per_sec);
                        if (k >= 0)
                                k = unit_property_add_u64(props, "CPUQuotaPeriodUSec", period);
                        /* systemd's quota is rounded up to whole percents: the exact one where it differs, as
                         * for linux.resources.cpu.quota. */
                        if (k >= 0 && v != UINT64_MAX && cgroup_cpu_quota_systemd(per_sec, period) != v)
                                k = cgroup_file_writes_add_for(w, "linux.resources.unified.cpu.max", "", key,
                                                               val, true);
                        if (k < 0)
                                return k;
                        done = true;
                }
                if (!done && (streq(key, "cpuset.cpus") || streq(key, "cpuset.mems"))) {
                        k = add_cpu_mask(props, key[7] == 'c' ? "AllowedCPUs" : "AllowedMemoryNodes", val,
                                         key[7] == 'c' ? "linux.resources.unified.cpuset.cpus"
                                                       : "linux.resources.unified.cpuset.mems",
                                         reterr);
                        if (k < 0)
                                return k;
                        done = true;
                }
                if (!done) {
                        k = cgroup_file_writes_add(w, "", key, val);
                        if (k < 0)
                                return k;
                }
        }
        return 0;
}

int cgroup_props_from_resources(const OciResources *r, CgroupLayout layout, UnitPropertyList *props,
                                CgroupFileWrites *ret_writes, char **reterr) {
        bool v2 = layout == CGROUP_LAYOUT_UNIFIED;
        int k;

        assert(props);
        assert(ret_writes);

        if (!r || !r->present)
                return 0;

        k = map_memory(r, v2, props, ret_writes, reterr);
        if (k >= 0)
                k = map_cpu(r, v2, props, ret_writes, reterr);
        if (k >= 0 && r->pids.present && r->pids.has_limit)
                k = unit_property_add_u64(props, "TasksMax",
                                          r->pids.limit <= 0 ? UINT64_MAX : (uint64_t) r->pids.limit);
        if (k >= 0)
                k = map_block_io(r, v2, props, ret_writes, reterr);
        if (k >= 0)
                k = map_devices(r, v2, props, ret_writes, reterr);
        if (k >= 0)
                k = map_hugetlb(r, v2, ret_writes, reterr);
        if (k >= 0)
                k = map_network(r, v2, ret_writes, reterr);
        if (k >= 0)
                k = map_rdma(r, v2, ret_writes, reterr);
        if (k >= 0)
                k = map_unified(r, v2, props, ret_writes, reterr); /* last: unified keys win */
        if (k == -ENOMEM)
                return errorf(reterr, k, "linux.resources: out of memory");
        return k;
}
