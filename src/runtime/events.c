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
#include "string-util.h"

/* The cgroup directories the statistics come from: the unified one, or the v1 controllers'. */
typedef enum StatDir {
        DIR_UNIFIED, /* v2 dir (unified or hybrid's unified) */
        DIR_CPU,
        DIR_CPUACCT,
        DIR_MEMORY,
        DIR_PIDS,
        _DIR_MAX,
} StatDir;

typedef struct CgroupDirs {
        CgroupLayout layout;
        char *dir[_DIR_MAX];
} CgroupDirs;

static void cgroup_dirs_done(CgroupDirs *d) {
        for (size_t i = 0; i < _DIR_MAX; i++)
                free(d->dir[i]);
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
        for (char *p = buf, *line; (line = next_line(&p));) {
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

/* Where the "stats" event's numbers come from: a file of one number, or one key of a "key value" file, scaled
 * (microseconds to runc's nanoseconds). In the order the event lists them. */
enum { OBJ_CPU_USAGE, OBJ_CPU_THROTTLING, OBJ_MEMORY_USAGE, OBJ_MEMORY_SWAP, OBJ_PIDS, _OBJ_MAX };

typedef struct StatRead {
        StatDir dir;
        const char *file;
        const char *key; /* NULL: the file holds one number */
        int obj;
        const char *name;
        uint64_t scale;
} StatRead;

static const StatRead stats_unified[] = {
        { DIR_UNIFIED, "cpu.stat", "usage_usec", OBJ_CPU_USAGE, "total", 1000 },
        { DIR_UNIFIED, "cpu.stat", "user_usec", OBJ_CPU_USAGE, "user", 1000 },
        { DIR_UNIFIED, "cpu.stat", "system_usec", OBJ_CPU_USAGE, "kernel", 1000 },
        { DIR_UNIFIED, "cpu.stat", "nr_periods", OBJ_CPU_THROTTLING, "periods", 1 },
        { DIR_UNIFIED, "cpu.stat", "nr_throttled", OBJ_CPU_THROTTLING, "throttledPeriods", 1 },
        { DIR_UNIFIED, "cpu.stat", "throttled_usec", OBJ_CPU_THROTTLING, "throttledTime", 1000 },
        { DIR_UNIFIED, "memory.current", NULL, OBJ_MEMORY_USAGE, "usage", 1 },
        { DIR_UNIFIED, "memory.max", NULL, OBJ_MEMORY_USAGE, "limit", 1 },
        { DIR_UNIFIED, "memory.peak", NULL, OBJ_MEMORY_USAGE, "max", 1 },
        { DIR_UNIFIED, "memory.swap.current", NULL, OBJ_MEMORY_SWAP, "usage", 1 },
        { DIR_UNIFIED, "memory.swap.max", NULL, OBJ_MEMORY_SWAP, "limit", 1 },
        { DIR_UNIFIED, "pids.current", NULL, OBJ_PIDS, "current", 1 },
        { DIR_UNIFIED, "pids.max", NULL, OBJ_PIDS, "limit", 1 },
};

static const StatRead stats_v1[] = {
        { DIR_CPUACCT, "cpuacct.usage", NULL, OBJ_CPU_USAGE, "total", 1 },
        { DIR_CPUACCT, "cpuacct.usage_user", NULL, OBJ_CPU_USAGE, "user", 1 },
        { DIR_CPUACCT, "cpuacct.usage_sys", NULL, OBJ_CPU_USAGE, "kernel", 1 },
        { DIR_CPU, "cpu.stat", "nr_periods", OBJ_CPU_THROTTLING, "periods", 1 },
        { DIR_CPU, "cpu.stat", "nr_throttled", OBJ_CPU_THROTTLING, "throttledPeriods", 1 },
        { DIR_CPU, "cpu.stat", "throttled_time", OBJ_CPU_THROTTLING, "throttledTime", 1 },
        { DIR_MEMORY, "memory.usage_in_bytes", NULL, OBJ_MEMORY_USAGE, "usage", 1 },
        { DIR_MEMORY, "memory.limit_in_bytes", NULL, OBJ_MEMORY_USAGE, "limit", 1 },
        { DIR_MEMORY, "memory.max_usage_in_bytes", NULL, OBJ_MEMORY_USAGE, "max", 1 },
        { DIR_MEMORY, "memory.failcnt", NULL, OBJ_MEMORY_USAGE, "failcnt", 1 },
        { DIR_MEMORY, "memory.memsw.usage_in_bytes", NULL, OBJ_MEMORY_SWAP, "usage", 1 },
        { DIR_PIDS, "pids.current", NULL, OBJ_PIDS, "current", 1 },
        { DIR_PIDS, "pids.max", NULL, OBJ_PIDS, "limit", 1 },
};

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

        bool unified = d->layout == CGROUP_LAYOUT_UNIFIED;
        cJSON *const objs[_OBJ_MAX] = { usage, thr, mu, sw, pids };
        const StatRead *t = unified ? stats_unified : stats_v1;
        size_t n = unified ? ELEMENTSOF(stats_unified) : ELEMENTSOF(stats_v1);
        for (size_t i = 0; i < n; i++) {
                const char *dir = d->dir[t[i].dir];
                if (t[i].key ? read_keyed(dir, t[i].file, NULL, t[i].key, &v) : read_u64(dir, t[i].file, &v))
                        add_u64(objs[t[i].obj], t[i].name, v * t[i].scale);
        }
        (void) read_keyed(d->dir[unified ? DIR_UNIFIED : DIR_MEMORY], "memory.stat", raw, NULL, NULL);
        *ret = TAKE_PTR(ev);
        return 0;
}

static uint64_t oom_kills(const CgroupDirs *d) {
        uint64_t v = 0;
        if (d->layout == CGROUP_LAYOUT_UNIFIED)
                (void) read_keyed(d->dir[DIR_UNIFIED], "memory.events", NULL, "oom_kill", &v);
        else
                (void) read_keyed(d->dir[DIR_MEMORY], "memory.oom_control", NULL, "oom_kill", &v);
        return v;
}

static int cgroup_dirs_open(const char *cgroup, CgroupDirs *d, char **reterr) {
        int r;

        r = cgroup_detect_layout(&d->layout);
        if (r < 0)
                return errorf(reterr, r, "cgroup layout: %s", strerror(-r));
        if (d->layout == CGROUP_LAYOUT_UNIFIED)
                (void) cgroup_unified_dir(cgroup, &d->dir[DIR_UNIFIED]);
        else if (asprintf(&d->dir[DIR_CPU], "/sys/fs/cgroup/cpu%s", cgroup) < 0 ||
                 asprintf(&d->dir[DIR_CPUACCT], "/sys/fs/cgroup/cpuacct%s", cgroup) < 0 ||
                 asprintf(&d->dir[DIR_MEMORY], "/sys/fs/cgroup/memory%s", cgroup) < 0 ||
                 asprintf(&d->dir[DIR_PIDS], "/sys/fs/cgroup/pids%s", cgroup) < 0)
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
