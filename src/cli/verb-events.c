/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-util.h"
#include "cli.h"
#include "fileio.h"
#include "json-util.h"
#include "macro.h"
#include "process-util.h"
#include "state.h"

/* Go-style durations as runc takes them: "5s", "250ms", "1m30s", "1h", "100us". */
static int parse_duration(const char *s, uint64_t *ret) {
        uint64_t total = 0;

        if (isempty(s))
                return -EINVAL;
        while (*s) {
                char *end;
                errno = 0;
                double v = strtod(s, &end);
                if (errno || end == s || v < 0)
                        return -EINVAL;
                uint64_t mul;
                if (strneq(end, "ms", 2))
                        mul = USEC_PER_MSEC, end += 2;
                else if (strneq(end, "us", 2) || strneq(end, "µs", 3))
                        mul = 1, end += end[0] == 'u' ? 2 : 3;
                else if (strneq(end, "ns", 2))
                        mul = 0, end += 2;
                else if (*end == 's')
                        mul = USEC_PER_SEC, end++;
                else if (*end == 'm')
                        mul = 60 * USEC_PER_SEC, end++;
                else if (*end == 'h')
                        mul = 3600 * USEC_PER_SEC, end++;
                else
                        return -EINVAL;
                total += (uint64_t) (v * (double) mul);
                s = end;
        }
        *ret = total;
        return 0;
}

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

static void emit(cJSON *j) {
        _cleanup_free_ char *s = json_print(j);
        if (s) {
                printf("%s\n", s);
                fflush(stdout);
        }
}

int verb_events(int argc, char *argv[]) {
        static const struct option options[] = {
                { "stats", no_argument, NULL, 's' },
                { "interval", required_argument, NULL, 'i' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        _cleanup_(container_freep) Container *ct = NULL;
        _cleanup_(cgroup_dirs_done) CgroupDirs d = {};
        _cleanup_free_ char *err = NULL;
        uint64_t interval = 5 * USEC_PER_SEC;
        bool stats_once = false;
        int c, r;

        while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0) {
                switch (c) {
                case 's':
                        stats_once = true;
                        break;
                case 'i':
                        if (parse_duration(optarg, &interval) < 0 || interval == 0)
                                return cli_usage_error("events", "--interval: invalid duration \"%s\" (e.g. 5s, 500ms)",
                                                       optarg);
                        break;
                case 'h':
                        cli_print_verb_help("events");
                        return EXIT_SUCCESS;
                default:
                        return cli_usage_error("events", "unknown or incomplete option \"%s\"", argv[optind - 1]);
                }
        }
        if (cli_expect_args("events", argc, argv, 1, 1, "container id") < 0)
                return EXIT_FAILURE;
        const char *id = argv[optind];
        r = container_load(arg_root, id, CONTAINER_LOCK_NONE, &ct, &err);
        if (r < 0)
                return log_error_errno(r, "events %s: %s", id, err ?: strerror(-r)), EXIT_FAILURE;
        if (container_status(ct) == CONTAINER_STOPPED || isempty(ct->cgroup))
                return log_error("events %s: container with id %s is not running", id, id), EXIT_FAILURE;

        r = cgroup_detect_layout(&d.layout);
        if (r < 0)
                return log_error_errno(r, "events %s: cgroup layout: %m", id), EXIT_FAILURE;
        if (d.layout == CGROUP_LAYOUT_UNIFIED)
                (void) cgroup_unified_dir(ct->cgroup, &d.unified);
        else if (asprintf(&d.cpu, "/sys/fs/cgroup/cpu%s", ct->cgroup) < 0 ||
                 asprintf(&d.cpuacct, "/sys/fs/cgroup/cpuacct%s", ct->cgroup) < 0 ||
                 asprintf(&d.memory, "/sys/fs/cgroup/memory%s", ct->cgroup) < 0 ||
                 asprintf(&d.pids, "/sys/fs/cgroup/pids%s", ct->cgroup) < 0)
                return log_oom(), EXIT_FAILURE;

        if (stats_once) {
                _cleanup_json_ cJSON *j = NULL;
                if (stats_json(&d, id, &j) < 0)
                        return log_oom(), EXIT_FAILURE;
                emit(j);
                return EXIT_SUCCESS;
        }

        _cleanup_close_ int pidfd = container_open_pidfd(ct);
        uint64_t ooms = oom_kills(&d);
        for (;;) {
                _cleanup_json_ cJSON *j = NULL;
                uint64_t now = oom_kills(&d);
                if (now > ooms) {
                        _cleanup_json_ cJSON *o = cJSON_CreateObject();
                        if (o && cJSON_AddStringToObject(o, "type", "oom") && cJSON_AddStringToObject(o, "id", id))
                                emit(o);
                        ooms = now;
                }
                if (stats_json(&d, id, &j) >= 0)
                        emit(j);
                /* Sleep for the interval, but wake up at once when the container's init exits. */
                if (pidfd < 0 || pidfd_wait_exit(pidfd, interval) == 0)
                        break;
        }
        return EXIT_SUCCESS;
}
