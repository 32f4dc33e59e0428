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

/* The "stats" event's numbers, one row each in the order the event lists them, and where they come from on
 * each layout: a file of one number, or one key of a "key value" file; NULL: not on that layout. */
enum { ST_CPU, ST_THROTTLING, ST_MEMORY, ST_SWAP, ST_PIDS, _ST_MAX };

static const struct {
        int obj;
        const char *name;
        const char *file, *key; /* cgroup v2 */
        bool usec;              /* ... counts microseconds, reported in nanoseconds as runc does */
        StatDir v1_dir;
        const char *v1_file, *v1_key;
} stats[] = {
        { ST_CPU, "total", "cpu.stat", "usage_usec", true, DIR_CPUACCT, "cpuacct.usage", NULL },
        { ST_CPU, "user", "cpu.stat", "user_usec", true, DIR_CPUACCT, "cpuacct.usage_user", NULL },
        { ST_CPU, "kernel", "cpu.stat", "system_usec", true, DIR_CPUACCT, "cpuacct.usage_sys", NULL },
        { ST_THROTTLING, "periods", "cpu.stat", "nr_periods", false, DIR_CPU, "cpu.stat", "nr_periods" },
        { ST_THROTTLING, "throttledPeriods", "cpu.stat", "nr_throttled", false, DIR_CPU, "cpu.stat",
          "nr_throttled" },
        { ST_THROTTLING, "throttledTime", "cpu.stat", "throttled_usec", true, DIR_CPU, "cpu.stat",
          "throttled_time" },
        { ST_MEMORY, "usage", "memory.current", NULL, false, DIR_MEMORY, "memory.usage_in_bytes", NULL },
        { ST_MEMORY, "limit", "memory.max", NULL, false, DIR_MEMORY, "memory.limit_in_bytes", NULL },
        { ST_MEMORY, "max", "memory.peak", NULL, false, DIR_MEMORY, "memory.max_usage_in_bytes", NULL },
        { ST_MEMORY, "failcnt", NULL, NULL, false, DIR_MEMORY, "memory.failcnt", NULL },
        { ST_SWAP, "usage", "memory.swap.current", NULL, false, DIR_MEMORY, "memory.memsw.usage_in_bytes",
          NULL },
        { ST_SWAP, "limit", "memory.swap.max", NULL, false, DIR_MEMORY, NULL, NULL },
        { ST_PIDS, "current", "pids.current", NULL, false, DIR_PIDS, "pids.current", NULL },
        { ST_PIDS, "limit", "pids.max", NULL, false, DIR_PIDS, "pids.max", NULL },
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
        cJSON *const objs[_ST_MAX] = { usage, thr, mu, sw, pids };
        FOREACH_ARRAY(s, stats, ELEMENTSOF(stats)) {
                const char *dir = d->dir[unified ? DIR_UNIFIED : s->v1_dir];
                const char *file = unified ? s->file : s->v1_file, *key = unified ? s->key : s->v1_key;
                if (!file)
                        continue;
                if (key ? read_keyed(dir, file, NULL, key, &v) : read_u64(dir, file, &v))
                        add_u64(objs[s->obj], s->name, unified && s->usec ? v * 1000 : v);
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
