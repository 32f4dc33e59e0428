/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Drives src/sdunit against a booted systemd, printing "key value" lines that test-sdunit.sh checks on the
 * host side (systemctl show, cgroupfs). Root only.
 *
 *   sdunit-smoke scope         create sdrun-smoke-<pid>.scope around a sleeping child with MemoryMax= (or
 *                              MemoryLimit= on v1) and TasksMax=, print unit/cgroup, then wait for a line
 *                              on stdin ("freeze", "thaw", "kill", "stop", "quit")
 *   sdunit-smoke bench N       N scope round trips (create + stop), print the median in microseconds
 *   sdunit-smoke exists        a second start of an active scope must give -EEXIST
 *   sdunit-smoke start UNIT    start scope UNIT around a sleeping child, print its ActiveState, stop it
 *   sdunit-smoke names         print slice/unit for each argument (cgroupsPath)
 *   sdunit-smoke resources     map a fixed linux.resources (cgroup-props.c) for this host's layout, start a
 *                              scope with the properties, apply the file writes, print unit/cgroup and
 *                              wait for "quit"; "cgfreeze"/"cgthaw" use cgroup_freeze() (no systemd) */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-props.h"
#include "fileio.h"
#include "macro.h"
#include "oci-config.h"
#include "sdunit.h"
#include "unit-property.h"

static pid_t fork_sleeper(void) {
        pid_t pid = fork();
        if (pid == 0) {
                execl("/bin/sleep", "sleep", "600", (char *) NULL);
                _exit(127);
        }
        return pid;
}

static void reap(pid_t pid) {
        (void) kill(pid, SIGKILL);
        (void) waitpid(pid, NULL, 0);
}

static bool is_unified(void) {
        struct stat st;
        return stat("/sys/fs/cgroup/cgroup.controllers", &st) == 0;
}

static int fail(const char *step, int r, char *err) {
        fprintf(stderr, "sdunit-smoke: %s: %s (%s)\n", step, err ?: "(no message)", strerror(-r));
        free(err);
        return EXIT_FAILURE;
}

static uint64_t now_usec(void) {
        struct timespec ts;
        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
}

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
        return x < y ? -1 : x > y;
}

static int do_scope(SdUnitBus *b, bool resources) {
        _cleanup_(unit_property_list_done) UnitPropertyList props = {};
        _cleanup_free_ char *unit = NULL, *cg = NULL, *state = NULL;
        char *err = NULL, line[64];
        pid_t child;
        int r;

        if (asprintf(&unit, "sdrun-smoke-%d.scope", (int) getpid()) < 0)
                return EXIT_FAILURE;
        _cleanup_(cgroup_file_writes_done) CgroupFileWrites writes = {};
        CgroupLayout layout = is_unified() ? CGROUP_LAYOUT_UNIFIED : CGROUP_LAYOUT_HYBRID;
        if (resources) {
                /* deny all, allow /dev/null; 32M; 50 tasks; CPU 0; swappiness 10 (v1); shares 512. */
                OciDeviceCgroup devs[] = {
                        { .allow = false, .type = 'a', .major = -1, .minor = -1, .access = "rwm" },
                        { .allow = true, .type = 'c', .major = 1, .minor = 3, .access = "rw" },
                };
                OciResources res = {
                        .present = true,
                        .devices = devs,
                        .n_devices = ELEMENTSOF(devs),
                        .memory = { .present = true, .has_limit = true, .limit = 32 << 20,
                                    .has_swappiness = true, .swappiness = 10 },
                        .cpu = { .present = true, .has_shares = true, .shares = 512, .cpus = (char *) "0" },
                        .pids = { .present = true, .has_limit = true, .limit = 50 },
                };
                r = cgroup_props_from_resources(&res, layout, &props, &writes, &err);
                if (r < 0)
                        return fail("map resources", r, err);
        } else {
                if (layout == CGROUP_LAYOUT_UNIFIED)
                        r = unit_property_add_u64(&props, "MemoryMax", 64ULL << 20);
                else
                        r = unit_property_add_u64(&props, "MemoryLimit", 64ULL << 20);
                if (r >= 0)
                        r = unit_property_add_u64(&props, "TasksMax", 42);
                if (r < 0)
                        return EXIT_FAILURE;
        }

        child = fork_sleeper();
        if (child < 0)
                return EXIT_FAILURE;

        uint64_t t0 = now_usec();
        r = sdunit_start_scope(b, unit, "machine.slice", "sdunit smoke test", child, &props, 10 * USEC_PER_SEC, &err);
        if (r < 0) {
                reap(child);
                return fail("start scope", r, err);
        }
        printf("start_usec %" PRIu64 "\n", now_usec() - t0);
        printf("unit %s\nchild %d\n", unit, (int) child);

        r = sdunit_get_control_group(b, unit, &cg, &err);
        if (r < 0)
                return fail("get ControlGroup", r, err);
        if (resources) {
                r = cgroup_apply_file_writes(&writes, cg, layout, &err);
                if (r < 0)
                        return fail("apply cgroup file writes", r, err);
                printf("writes %zu\n", writes.n_items);
        }
        printf("cgroup %s\n", cg);
        r = sdunit_get_active_state(b, unit, &state, &err);
        if (r < 0)
                return fail("get ActiveState", r, err);
        printf("state %s\n", state);
        fflush(stdout);

        while (fgets(line, sizeof(line), stdin)) {
                line[strcspn(line, "\n")] = 0;
                _cleanup_free_ char *s = NULL;

                if (streq(line, "freeze") || streq(line, "thaw")) {
                        r = streq(line, "freeze") ? sdunit_freeze_unit(b, unit, &err) : sdunit_thaw_unit(b, unit, &err);
                        if (r < 0) {
                                printf("%s error %d %s\n", line, -r, err ?: "");
                                free(err);
                                err = NULL;
                        } else {
                                r = sdunit_get_freezer_state(b, unit, &s, &err);
                                if (r < 0)
                                        return fail("get FreezerState", r, err);
                                printf("%s ok %s\n", line, s);
                        }
                } else if (streq(line, "kill")) {
                        /* SIGSTOP: the test sees the effect in /proc and the scope stays for "stop". */
                        r = sdunit_kill_unit(b, unit, SIGSTOP, &err);
                        if (r < 0)
                                return fail("kill", r, err);
                        printf("kill ok\n");
                } else if (streq(line, "stop")) {
                        int status;
                        r = sdunit_stop_unit(b, unit, false, 10 * USEC_PER_SEC, &err);
                        if (r < 0 && r != -ENOENT)
                                return fail("stop", r, err);
                        free(err);
                        err = NULL;
                        /* The stop job is over only once the cgroup is empty: the child has exited. */
                        pid_t w = waitpid(child, &status, WNOHANG);
                        r = sdunit_get_active_state(b, unit, &s, &err);
                        printf("stop ok %s %s\n", r == -ENOENT ? "gone" : r < 0 ? "error" : s,
                               w == child ? "child-exited" : "child-running");
                        free(err);
                        err = NULL;
                } else if (streq(line, "cgfreeze") || streq(line, "cgthaw")) {
                        bool f = streq(line, "cgfreeze");
                        r = cgroup_freeze(cg, is_unified() ? CGROUP_LAYOUT_UNIFIED : CGROUP_LAYOUT_HYBRID, f,
                                          5 * USEC_PER_SEC, &err);
                        if (r < 0) {
                                printf("%s error %d %s\n", line, -r, err ?: "");
                                free(err);
                                err = NULL;
                        } else
                                printf("%s ok\n", line);
                } else if (streq(line, "setprop")) {
                        _cleanup_(unit_property_list_done) UnitPropertyList more = {};
                        if (unit_property_add_u64(&more, "TasksMax", 43) < 0)
                                return EXIT_FAILURE;
                        r = sdunit_set_properties(b, unit, &more, &err);
                        if (r < 0)
                                return fail("set properties", r, err);
                        printf("setprop ok\n");
                } else if (streq(line, "prop")) {
                        r = sdunit_get_property_string(b, unit, "org.freedesktop.systemd1.Scope", "TasksMax", &s, &err);
                        if (r < 0)
                                return fail("get TasksMax", r, err);
                        printf("TasksMax %s\n", s);
                } else if (streq(line, "quit"))
                        break;
                else
                        printf("unknown command %s\n", line);
                fflush(stdout);
        }
        reap(child);
        return EXIT_SUCCESS;
}

static int do_bench(SdUnitBus *b, int n) {
        uint64_t *t = calloc((size_t) n, sizeof(uint64_t));
        char *err = NULL;
        int r;

        if (!t)
                return EXIT_FAILURE;
        for (int i = 0; i < n; i++) {
                _cleanup_free_ char *unit = NULL;
                pid_t child = fork_sleeper();
                if (child < 0 || asprintf(&unit, "sdrun-bench-%d-%d.scope", (int) getpid(), i) < 0)
                        return EXIT_FAILURE;
                uint64_t t0 = now_usec();
                r = sdunit_start_scope(b, unit, "machine.slice", NULL, child, NULL, 10 * USEC_PER_SEC, &err);
                t[i] = now_usec() - t0;
                if (r < 0) {
                        reap(child);
                        return fail("bench: start scope", r, err);
                }
                reap(child);
                r = sdunit_stop_unit(b, unit, true, 10 * USEC_PER_SEC, &err);
                if (r < 0 && r != -ENOENT)
                        return fail("bench: stop", r, err);
                free(err);
                err = NULL;
        }
        qsort(t, (size_t) n, sizeof(uint64_t), cmp_u64);
        printf("bench n %d median_usec %" PRIu64 " min_usec %" PRIu64 " max_usec %" PRIu64 "\n", n, t[n / 2], t[0],
               t[n - 1]);
        free(t);
        return EXIT_SUCCESS;
}

static int do_exists(SdUnitBus *b) {
        _cleanup_free_ char *unit = NULL;
        char *err = NULL;
        pid_t c1 = fork_sleeper(), c2 = fork_sleeper();
        int r, ret = EXIT_FAILURE;

        if (c1 < 0 || c2 < 0 || asprintf(&unit, "sdrun-smoke-exists-%d.scope", (int) getpid()) < 0)
                return EXIT_FAILURE;
        r = sdunit_start_scope(b, unit, "machine.slice", NULL, c1, NULL, 10 * USEC_PER_SEC, &err);
        if (r < 0) {
                reap(c1);
                reap(c2);
                return fail("exists: first start", r, err);
        }
        r = sdunit_start_scope(b, unit, "machine.slice", NULL, c2, NULL, 10 * USEC_PER_SEC, &err);
        printf("second_start %d %s\n", r, err ?: "");
        free(err);
        err = NULL;
        if (r == -EEXIST)
                ret = EXIT_SUCCESS;
        reap(c1);
        reap(c2);
        (void) sdunit_stop_unit(b, unit, false, 10 * USEC_PER_SEC, &err);
        free(err);
        return ret;
}

int main(int argc, char *argv[]) {
        _cleanup_sdunit_bus_ SdUnitBus *b = NULL;
        char *err = NULL;
        int r;

        if (argc < 2) {
                fprintf(stderr, "usage: %s scope|bench N|exists|names PATH...|journal ID UNIT MESSAGE\n", argv[0]);
                return EXIT_FAILURE;
        }

        if (streq(argv[1], "names")) {
                for (int i = 2; i < argc; i++) {
                        _cleanup_free_ char *slice = NULL, *unit = NULL;
                        r = sdunit_scope_name_from_cgroups_path(argv[i], "ID", &slice, &unit, &err);
                        if (r < 0)
                                printf("%s -> error %s\n", argv[i], err);
                        else
                                printf("%s -> %s %s\n", argv[i], slice, unit);
                        free(err);
                        err = NULL;
                }
                return EXIT_SUCCESS;
        }

        /* journal ID UNIT MESSAGE|@FILE: one message through the journal sink (no bus; libsystemd stays
         * unloaded). @FILE: the file's contents, for a message longer than one argument may be. */
        if (streq(argv[1], "journal") && argc == 5) {
                _cleanup_free_ char *text = NULL;
                if (argv[4][0] == '@') {
                        r = read_full_file_at(AT_FDCWD, argv[4] + 1, 1 << 20, &text, NULL);
                        if (r < 0)
                                return fail("read message file", r, NULL);
                }
                sdunit_journal_sink(6, argv[2], argv[3], text ?: argv[4]);
                printf("libsystemd %s\n", sdunit_libsystemd_loaded() ? "loaded" : "not loaded");
                return EXIT_SUCCESS;
        }

        r = sdunit_bus_open(false, &b, &err);
        if (r < 0)
                return fail("open bus", r, err);

        if (streq(argv[1], "scope"))
                return do_scope(b, false);
        if (streq(argv[1], "resources"))
                return do_scope(b, true);
        if (streq(argv[1], "bench"))
                return do_bench(b, argc > 2 ? atoi(argv[2]) : 50);
        if (streq(argv[1], "start") && argc > 2) {
                _cleanup_free_ char *state = NULL;
                pid_t child = fork_sleeper();
                if (child < 0)
                        return EXIT_FAILURE;
                r = sdunit_start_scope(b, argv[2], "machine.slice", NULL, child, NULL, 10 * USEC_PER_SEC, &err);
                if (r < 0) {
                        reap(child);
                        return fail("start", r, err);
                }
                r = sdunit_get_active_state(b, argv[2], &state, &err);
                if (r < 0)
                        return fail("get ActiveState", r, err);
                printf("start %s %s\n", argv[2], state);
                reap(child);
                r = sdunit_stop_unit(b, argv[2], false, 10 * USEC_PER_SEC, &err);
                if (r < 0 && r != -ENOENT)
                        return fail("stop", r, err);
                return EXIT_SUCCESS;
        }
        if (streq(argv[1], "exists"))
                return do_exists(b);
        fprintf(stderr, "unknown verb %s\n", argv[1]);
        return EXIT_FAILURE;
}
