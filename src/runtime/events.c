/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup-util.h"
#include "container-ops.h"
#include "error-util.h"
#include "fileio.h"
#include "json-util.h"
#include "macro.h"
#include "process-util.h"
#include "state.h"

typedef struct CgroupDirs {
        CgroupLayout layout;
        char *unified; /* v2 dir (unified or hybrid's unified) */
        char *cpu, *cpuacct, *memory, *pids;
} CgroupDirs;

static void cgroup_dirs_done(CgroupDirs *d) {
        free(d->unified);
        free(d->cpu);
        free(d->cpuacct);
        free(d->memory);
        free(d->pids);
}

static bool read_u64(const char *dir, const char *file, uint64_t *ret) {
        _cleanup_free_ char *path = NULL, *buf = NULL;
        if (!dir || asprintf(&path, "%s/%s", dir, file) < 0)
                return false;
        if (read_full_file_at(AT_FDCWD, path, 4096, &buf, NULL) < 0)
                return false;
        if (strneq(buf, "max", 3)) {
                *ret = UINT64_MAX;
                return true;
        }
        char *end;
        errno = 0;
        unsigned long long v = strtoull(buf, &end, 10);
        if (errno || end == buf)
                return false;
        *ret = v;
        return true;
}

/* "key value" files (cpu.stat, memory.stat, memory.events): add every key to obj, or look one up. */
static bool read_keyed(const char *dir, const char *file, cJSON *obj, const char *want, uint64_t *ret) {
        _cleanup_free_ char *path = NULL, *buf = NULL;
        bool found = false;
        if (!dir || asprintf(&path, "%s/%s", dir, file) < 0)
                return false;
        if (read_full_file_at(AT_FDCWD, path, 1 << 20, &buf, NULL) < 0)
                return false;
        for (char *line = buf, *next; line && *line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = 0;
                char *sp = strchr(line, ' ');
                if (!sp)
                        continue;
                *sp = 0;
                unsigned long long v = strtoull(sp + 1, NULL, 10);
                if (obj)
                        cJSON_AddNumberToObject(obj, line, (double) v);
                if (want && streq(line, want)) {
                        *ret = v;
                        found = true;
                }
        }
        return found || obj;
}

static void add_u64(cJSON *o, const char *k, uint64_t v) {
        /* "max" (no limit) is reported as the largest value, as runc does. */
        cJSON_AddNumberToObject(o, k, (double) v);
}

static int stats_json(const CgroupDirs *d, const char *id, cJSON **ret) {
        _cleanup_json_ cJSON *ev = cJSON_CreateObject();
        cJSON *data, *cpu, *usage, *thr, *mem, *mu, *sw, *raw, *pids;
        uint64_t v;

        if (!ev)
                return -ENOMEM;
        cJSON_AddStringToObject(ev, "type", "stats");
        cJSON_AddStringToObject(ev, "id", id);
        data = cJSON_AddObjectToObject(ev, "data");
        cpu = cJSON_AddObjectToObject(data, "cpu");
        usage = cJSON_AddObjectToObject(cpu, "usage");
        thr = cJSON_AddObjectToObject(cpu, "throttling");
        mem = cJSON_AddObjectToObject(data, "memory");
        mu = cJSON_AddObjectToObject(mem, "usage");
        sw = cJSON_AddObjectToObject(mem, "swap");
        raw = cJSON_AddObjectToObject(mem, "raw");
        pids = cJSON_AddObjectToObject(data, "pids");
        if (!pids)
                return -ENOMEM;

        if (d->layout == CGROUP_LAYOUT_UNIFIED) {
                if (read_keyed(d->unified, "cpu.stat", NULL, "usage_usec", &v))
                        add_u64(usage, "total", v * 1000);
                if (read_keyed(d->unified, "cpu.stat", NULL, "user_usec", &v))
                        add_u64(usage, "user", v * 1000);
                if (read_keyed(d->unified, "cpu.stat", NULL, "system_usec", &v))
                        add_u64(usage, "kernel", v * 1000);
                if (read_keyed(d->unified, "cpu.stat", NULL, "nr_periods", &v))
                        add_u64(thr, "periods", v);
                if (read_keyed(d->unified, "cpu.stat", NULL, "nr_throttled", &v))
                        add_u64(thr, "throttledPeriods", v);
                if (read_keyed(d->unified, "cpu.stat", NULL, "throttled_usec", &v))
                        add_u64(thr, "throttledTime", v * 1000);
                if (read_u64(d->unified, "memory.current", &v))
                        add_u64(mu, "usage", v);
                if (read_u64(d->unified, "memory.max", &v))
                        add_u64(mu, "limit", v);
                if (read_u64(d->unified, "memory.peak", &v))
                        add_u64(mu, "max", v);
                if (read_u64(d->unified, "memory.swap.current", &v))
                        add_u64(sw, "usage", v);
                if (read_u64(d->unified, "memory.swap.max", &v))
                        add_u64(sw, "limit", v);
                (void) read_keyed(d->unified, "memory.stat", raw, NULL, NULL);
                if (read_u64(d->unified, "pids.current", &v))
                        add_u64(pids, "current", v);
                if (read_u64(d->unified, "pids.max", &v))
                        add_u64(pids, "limit", v);
        } else {
                if (read_u64(d->cpuacct, "cpuacct.usage", &v))
                        add_u64(usage, "total", v);
                if (read_u64(d->cpuacct, "cpuacct.usage_user", &v))
                        add_u64(usage, "user", v);
                if (read_u64(d->cpuacct, "cpuacct.usage_sys", &v))
                        add_u64(usage, "kernel", v);
                if (read_keyed(d->cpu, "cpu.stat", NULL, "nr_periods", &v))
                        add_u64(thr, "periods", v);
                if (read_keyed(d->cpu, "cpu.stat", NULL, "nr_throttled", &v))
                        add_u64(thr, "throttledPeriods", v);
                if (read_keyed(d->cpu, "cpu.stat", NULL, "throttled_time", &v))
                        add_u64(thr, "throttledTime", v);
                if (read_u64(d->memory, "memory.usage_in_bytes", &v))
                        add_u64(mu, "usage", v);
                if (read_u64(d->memory, "memory.limit_in_bytes", &v))
                        add_u64(mu, "limit", v);
                if (read_u64(d->memory, "memory.max_usage_in_bytes", &v))
                        add_u64(mu, "max", v);
                if (read_u64(d->memory, "memory.failcnt", &v))
                        add_u64(mu, "failcnt", v);
                if (read_u64(d->memory, "memory.memsw.usage_in_bytes", &v))
                        add_u64(sw, "usage", v);
                (void) read_keyed(d->memory, "memory.stat", raw, NULL, NULL);
                if (read_u64(d->pids, "pids.current", &v))
                        add_u64(pids, "current", v);
                if (read_u64(d->pids, "pids.max", &v))
                        add_u64(pids, "limit", v);
        }
        *ret = TAKE_PTR(ev);
        return 0;
}

static uint64_t oom_kills(const CgroupDirs *d) {
        uint64_t v = 0;
        if (d->layout == CGROUP_LAYOUT_UNIFIED)
                (void) read_keyed(d->unified, "memory.events", NULL, "oom_kill", &v);
        else
                (void) read_keyed(d->memory, "memory.oom_control", NULL, "oom_kill", &v);
        return v;
}

/* The cgroup directories the statistics come from: the unified one, or the v1 controllers'. */
static int cgroup_dirs_open(const char *cgroup, CgroupDirs *d, char **reterr) {
        int r;

        r = cgroup_detect_layout(&d->layout);
        if (r < 0)
                return errorf(reterr, r, "cgroup layout: %s", strerror(-r));
        if (d->layout == CGROUP_LAYOUT_UNIFIED)
                (void) cgroup_unified_dir(cgroup, &d->unified);
        else if (asprintf(&d->cpu, "/sys/fs/cgroup/cpu%s", cgroup) < 0 ||
                 asprintf(&d->cpuacct, "/sys/fs/cgroup/cpuacct%s", cgroup) < 0 ||
                 asprintf(&d->memory, "/sys/fs/cgroup/memory%s", cgroup) < 0 ||
                 asprintf(&d->pids, "/sys/fs/cgroup/pids%s", cgroup) < 0)
                return -ENOMEM;
        return 0;
}

int container_events(const EventsOptions *o, char **reterr) {
        _cleanup_(container_freep) Container *ct = NULL;
        _cleanup_(cgroup_dirs_done) CgroupDirs d = {};
        int r;

        r = container_load(o->root, o->id, CONTAINER_LOCK_NONE, &ct, reterr);
        if (r < 0)
                return r;
        if (container_status(ct) == CONTAINER_STOPPED || isempty(ct->cgroup))
                return errorf(reterr, ESRCH, "container with id %s is not running", o->id);
        r = cgroup_dirs_open(ct->cgroup, &d, reterr);
        if (r < 0)
                return r;

        if (o->stats_once) {
                _cleanup_json_ cJSON *j = NULL;
                r = stats_json(&d, o->id, &j);
                if (r < 0)
                        return r;
                o->emit(j, o->userdata);
                return 0;
        }

        _cleanup_close_ int pidfd = container_open_pidfd(ct);
        uint64_t ooms = oom_kills(&d);
        for (;;) {
                _cleanup_json_ cJSON *j = NULL;
                uint64_t now = oom_kills(&d);
                if (now > ooms) {
                        _cleanup_json_ cJSON *oom = cJSON_CreateObject();
                        if (oom && cJSON_AddStringToObject(oom, "type", "oom") &&
                            cJSON_AddStringToObject(oom, "id", o->id))
                                o->emit(oom, o->userdata);
                        ooms = now;
                }
                if (stats_json(&d, o->id, &j) >= 0)
                        o->emit(j, o->userdata);
                /* Sleep for the interval, but wake up at once when the container's init exits. */
                if (pidfd < 0 || pidfd_wait_exit(pidfd, o->interval_usec) == 0)
                        break;
        }
        return 0;
}
