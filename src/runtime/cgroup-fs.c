/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The cgroupfs side of cgroup-props.h: writing the CgroupFileWrites that cgroup-props.c produced into the
 * unit's cgroup (creating the directories of the v1 controllers systemd does not manage), and the cgroup v2
 * freezer. */

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-props.h"
#include "cgroup-util.h"
#include "error-util.h"
#include "fileio.h"
#include "log.h"
#include "macro.h"
#include "process-util.h"
#include "string-util.h"

#define CGROUPFS "/sys/fs/cgroup"

/* ---------------------------------------------------------------------------------------------------- */
/* Applying file writes */

static int unified_base(const char *root, CgroupLayout layout, char **ret) {
        switch (layout) {
        case CGROUP_LAYOUT_UNIFIED:
                return (*ret = strdup(root)) ? 0 : -ENOMEM;
        case CGROUP_LAYOUT_HYBRID:
                return asprintf(ret, "%s/unified", root) < 0 ? -ENOMEM : 0;
        default:
                return -EOPNOTSUPP;
        }
}

/* The processes of the unit, from the hierarchy systemd tracks it in. */
static int read_unit_procs(const char *root, const char *cg, CgroupLayout layout, char **ret) {
        _cleanup_free_ char *p = NULL;
        if (asprintf(&p, "%s/%s%s/cgroup.procs", root,
                     layout == CGROUP_LAYOUT_HYBRID ? "unified" : "systemd", cg) < 0)
                return -ENOMEM;
        return read_full_file_at(AT_FDCWD, p, 4 << 20, ret, NULL);
}

static int copy_parent_cpuset(const char *dir) {
        static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };

        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                _cleanup_free_ char *mine = NULL, *parent = NULL, *pv = NULL, *cur = NULL;
                int r;

                if (asprintf(&mine, "%s/%s", dir, files[i]) < 0 ||
                    asprintf(&parent, "%s/../%s", dir, files[i]) < 0)
                        return -ENOMEM;
                r = read_full_file_at(AT_FDCWD, mine, 1 << 16, &cur, NULL);
                if (r < 0)
                        return r;
                if (!isempty(cur) && !streq(cur, "\n"))
                        continue;
                r = read_full_file_at(AT_FDCWD, parent, 1 << 16, &pv, NULL);
                if (r < 0)
                        return r;
                r = write_string_file(mine, pv);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Create the unit's directory in one v1 hierarchy, level by level (so that cpuset gets cpus/mems copied down). */
static int make_v1_dir(char *dir, size_t base, const char *controller, char **reterr) {
        int r;

        for (char *p = dir + base + 1;; p++) {
                if (*p != '/' && *p != 0)
                        continue;
                char saved = *p;
                *p = 0;
                if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
                        r = -errno;
                        *p = saved;
                        return errorf(reterr, r, "create cgroup %s: %s", dir, strerror(-r));
                }
                if (streq(controller, "cpuset")) {
                        r = copy_parent_cpuset(dir);
                        if (r < 0) {
                                errorf(reterr, r, "initialise cpuset.cpus/cpuset.mems of %s: %s", dir,
                                       strerror(-r));
                                *p = saved;
                                return r;
                        }
                }
                *p = saved;
                if (saved == 0)
                        return 0;
        }
}

/* v1 controllers systemd does not manage may have no directory for the unit: create it and move the unit's
 * processes in. */
static int ensure_v1_dir(const char *root, const char *controller, const char *cg, CgroupLayout layout,
                         char **reterr) {
        _cleanup_free_ char *dir = NULL, *procs = NULL, *target = NULL;
        int r;

        if (asprintf(&dir, "%s/%s%s", root, controller, cg) < 0 ||
            asprintf(&target, "%s/cgroup.procs", dir) < 0)
                return -ENOMEM;
        /* Even when the directory exists (systemd makes one in every hierarchy for a delegated unit, possibly
         * after the job that started it is reported done), the unit's processes are moved in: idempotent. */
        r = read_unit_procs(root, cg, layout, &procs);
        if (r == -ENOENT)
                procs = NULL; /* nothing to move (no such cgroup on the tracking hierarchy) */
        else if (r < 0)
                return errorf(reterr, r, "read the processes of cgroup %s: %s", cg, strerror(-r));

        /* systemd may remove the directory meanwhile (on v1 it realizes and trims blkio cgroups for every
         * sibling of a unit that starts): then it is made again, a few times. */
        for (unsigned attempt = 0;; attempt++) {
                bool vanished = false;

                r = make_v1_dir(dir, strlen(root) + 1 + strlen(controller), controller, reterr);
                if (r < 0)
                        return r;
                if (!procs)
                        return 0;
                _cleanup_free_ char *list = strdup(procs);
                if (!list)
                        return -ENOMEM;
                for (char *p = list, *line; (line = next_line(&p));) {
                        if (!*line)
                                continue;
                        r = write_string_file(target, line);
                        if (r == -ENOENT && attempt < 5) {
                                vanished = true;
                                break;
                        }
                        if (r < 0 && r != -ESRCH)
                                return errorf(reterr, r, "move process %s into %s: %s", line, target,
                                              strerror(-r));
                }
                if (!vanished)
                        return 0;
                log_debug("cgroup %s went away while the unit's processes moved in: again", dir);
        }
}

int cgroup_apply_file_writes_at(const char *root, const CgroupFileWrites *w, const char *cg,
                                CgroupLayout layout, char **reterr) {
        int r;

        assert(root);
        assert(cg);

        if (!w)
                return 0;
        /* Refuse a list that does not fit the layout before writing anything. */
        for (size_t i = 0; i < w->n_items; i++) {
                const CgroupFileWrite *e = &w->items[i];
                if (isempty(e->controller) && layout != CGROUP_LAYOUT_UNIFIED &&
                    layout != CGROUP_LAYOUT_HYBRID)
                        return errorf(reterr, -EOPNOTSUPP,
                                      "cgroup file %s: needs cgroup v2, this host has %s", e->file,
                                      cgroup_layout_to_string(layout));
                if (!isempty(e->controller) && layout == CGROUP_LAYOUT_UNIFIED)
                        return errorf(
                                reterr, -EOPNOTSUPP,
                                "cgroup file %s: the %s controller is cgroup v1, this host has cgroup v2",
                                e->file, e->controller);
        }
        for (size_t i = 0; i < w->n_items; i++) {
                const CgroupFileWrite *e = &w->items[i];
                _cleanup_free_ char *dir = NULL, *path = NULL;
                /* "?file": a step of an ordered sequence whose failure the next steps make good. */
                bool best_effort = e->file[0] == '?';

                if (isempty(e->controller)) {
                        _cleanup_free_ char *base = NULL;
                        r = unified_base(root, layout, &base);
                        if (r == -EOPNOTSUPP)
                                return errorf(reterr, r, "cgroup file %s: needs cgroup v2, this host has %s",
                                              e->file, cgroup_layout_to_string(layout));
                        if (r < 0)
                                return r;
                        if (asprintf(&dir, "%s%s", base, cg) < 0)
                                return -ENOMEM;
                } else {
                        if (layout == CGROUP_LAYOUT_UNIFIED)
                                return errorf(
                                        reterr, -EOPNOTSUPP,
                                        "cgroup file %s: the %s controller is cgroup v1, this host has cgroup v2",
                                        e->file, e->controller);
                        r = ensure_v1_dir(root, e->controller, cg, layout, reterr);
                        if (r < 0)
                                return r;
                        if (asprintf(&dir, "%s/%s%s", root, e->controller, cg) < 0)
                                return -ENOMEM;
                }
                /* "a|b": the first of the files that exists (blkio.bfq.weight_device where the kernel has BFQ,
                 * blkio.weight_device where it has CFQ); the last one is named when none does. */
                for (const char *f = e->file + best_effort;;) {
                        size_t n = strcspn(f, "|");
                        free(path);
                        if (asprintf(&path, "%s/%.*s", dir, (int) n, f) < 0)
                                return -ENOMEM;
                        if (f[n] == 0 || access(path, F_OK) >= 0)
                                break;
                        f += n + 1;
                }
                if (e->optional && access(path, F_OK) < 0 && errno == ENOENT) {
                        log_debug("%s: no %s (the cgroup has no such controller): not written",
                                  strna(e->field), path);
                        continue;
                }
                r = write_string_file(path, e->value);
                if (r < 0 && best_effort) {
                        log_debug("write \"%s\" to %s: %s (a later step follows)", e->value, path,
                                  strerror(-r));
                        continue;
                }
                if (r < 0)
                        return errorf(
                                reterr, r, "%s%swrite \"%s\" to %s: %s%s", strempty(e->field),
                                e->field ? ": " : "", e->value, path,
                                r == -ENOENT   ? "no such file (controller not enabled for this cgroup?)"
                                : r == -ENODEV ? "no such block device"
                                : r == -EOPNOTSUPP && strstr(path, "bfq")
                                        ? "the device does not use the bfq I/O scheduler"
                                        : strerror(-r),
                                r == -EINVAL && strneq(e->file, "cpu.cfs_", 8)
                                        ? " (the kernel refuses a share of CPU time, quota/period, above "
                                          "a parent cgroup's, and a quota below 1 ms)"
                                        : "");
        }
        return 0;
}

int cgroup_check_block_devices(const OciResources *r, char **reterr) {
        const struct {
                const OciBlockIoDevice *d;
                size_t n;
                const char *field;
        } lists[] = {
                { r->block_io.weight_device, r->block_io.n_weight_device, "weightDevice" },
                { r->block_io.throttle_read_bps, r->block_io.n_throttle_read_bps, "throttleReadBpsDevice" },
                { r->block_io.throttle_write_bps, r->block_io.n_throttle_write_bps,
                  "throttleWriteBpsDevice" },
                { r->block_io.throttle_read_iops, r->block_io.n_throttle_read_iops,
                  "throttleReadIOPSDevice" },
                { r->block_io.throttle_write_iops, r->block_io.n_throttle_write_iops,
                  "throttleWriteIOPSDevice" },
        };

        if (!r->block_io.present)
                return 0;
        FOREACH_ARRAY(l, lists, ELEMENTSOF(lists))
                for (size_t i = 0; i < l->n; i++) {
                        char path[96];
                        snprintf(path, sizeof path, "/sys/dev/block/%" PRIi64 ":%" PRIi64, l->d[i].major,
                                 l->d[i].minor);
                        int k = RET_NERRNO(access(path, F_OK));
                        if (k >= 0)
                                continue;
                        /* No strerror(ENOENT) in the message: Podman takes "no such file or directory"
                         * in a runtime's error as a command that was not found (exit 127). */
                        char detail[160];
                        if (k == -ENOENT)
                                snprintf(detail, sizeof detail, "no %s", path);
                        else
                                snprintf(detail, sizeof detail, "%s: %s", path, strerror(-k));
                        return errorf(reterr, k == -ENOENT ? -ENODEV : k,
                                      "linux.resources.blockIO.%s[%zu]: %" PRIi64 ":%" PRIi64
                                      " is not a block device on this host (%s)",
                                      l->field, i, l->d[i].major, l->d[i].minor, detail);
                }
        return 0;
}

int cgroup_apply_file_writes(const CgroupFileWrites *w, const char *unit_cgroup_path, CgroupLayout layout,
                             char **reterr) {
        return cgroup_apply_file_writes_at(CGROUPFS, w, unit_cgroup_path, layout, reterr);
}

/* Whether every controller of a v1 hierarchy ("cpu,cpuacct") is one that systemd trims from a unit's path
 * when the unit stops. systemd handles cpu and cpuacct as one (it trims and realizes them under the name
 * "cpu"): a cpuacct hierarchy mounted on its own is never trimmed, so it is not one of these. */
static bool v1_hierarchy_trimmed_by_systemd(const char *controllers) {
        static const char *const trimmed[] = { "cpu", "cpuacct", "blkio", "memory", "devices", "pids" };
        const char *p = controllers;

        if (isempty(controllers) || streq(controllers, "cpuacct"))
                return false;
        while (*p) {
                size_t n = strcspn(p, ",");
                bool found = false;
                for (size_t i = 0; i < ELEMENTSOF(trimmed) && !found; i++)
                        found = strlen(trimmed[i]) == n && strncmp(p, trimmed[i], n) == 0;
                if (!found)
                        return false;
                p += n;
                if (*p == ',')
                        p++;
        }
        return true;
}

/* Every v1 controller hierarchy that systemd never trims (and does not realize a unit in): a cpuacct mounted
 * on its own, freezer, cpuset, net_cls/net_prio, perf_event, hugetlb, rdma, misc. Not systemd's own named
 * hierarchy, nor the unified one. */
static bool v1_hierarchy_untrimmed(const char *controllers) {
        return !isempty(controllers) && !strneq(controllers, "name=", 5) &&
               !v1_hierarchy_trimmed_by_systemd(controllers);
}

/* Put the unit's processes into its path in every v1 hierarchy (as this process sees them) that want() picks
 * and that is mounted below root. */
static int join_v1_hierarchies(const char *root, const char *cg, CgroupLayout layout,
                               bool (*want)(const char *controllers), char **reterr) {
        CgroupMembership *m = NULL;
        size_t n = 0;
        int r;

        assert(root);
        assert(cg);
        assert(want);

        if (layout != CGROUP_LAYOUT_HYBRID && layout != CGROUP_LAYOUT_LEGACY)
                return 0;
        r = cgroup_read_memberships(0, &m, &n);
        if (r < 0)
                return errorf(reterr, r, "read /proc/self/cgroup: %s", strerror(-r));
        for (size_t i = 0; i < n && r >= 0; i++) {
                _cleanup_free_ char *dir = NULL;
                struct stat st;

                if (streq(m[i].path, cg) || !want(m[i].controllers))
                        continue;
                if (asprintf(&dir, "%s/%s", root, m[i].controllers) < 0) {
                        r = -ENOMEM;
                        break;
                }
                if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
                        continue; /* not mounted where we look: nothing to join */
                r = ensure_v1_dir(root, m[i].controllers, cg, layout, reterr);
        }
        cgroup_memberships_free(m, n);
        return r < 0 ? r : 0;
}

int cgroup_join_v1_accounting_at(const char *root, const char *cg, CgroupLayout layout, char **reterr) {
        return join_v1_hierarchies(root, cg, layout, v1_hierarchy_trimmed_by_systemd, reterr);
}

/* The directories cgroup_join_v1_accounting() made that systemd does not remove when the unit stops (a
 * controller it did not realize for the unit, such as a cpuacct hierarchy mounted on its own): removed once
 * the container's processes are gone. A directory still busy after a short wait is left and logged. */
/* A process in a frozen (or freezing) v1 freezer cgroup goes to the root of the freezer hierarchy. */
static void thaw_pid_v1(pid_t pid) {
        CgroupMembership *m = NULL;
        size_t n = 0;

        if (cgroup_read_memberships(pid, &m, &n) < 0)
                return;
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *state = NULL, *file = NULL;
                char buf[32];

                if (!streq(m[i].controllers, "freezer") || streq(m[i].path, "/"))
                        continue;
                if (asprintf(&file, CGROUPFS "/freezer%s/freezer.state", m[i].path) < 0 ||
                    read_full_file_at(AT_FDCWD, file, 64, &state, NULL) < 0 || strneq(state, "THAWED", 6))
                        continue;
                snprintf(buf, sizeof buf, "%d", (int) pid);
                if (write_string_file(CGROUPFS "/freezer/cgroup.procs", buf) >= 0)
                        log_info(
                                "process %d was frozen in the v1 freezer cgroup %s: moved out of it, so that "
                                "it can be killed",
                                (int) pid, m[i].path);
        }
        cgroup_memberships_free(m, n);
}

static void thaw_dir_v1(int dir_fd, unsigned depth) {
        _cleanup_free_ char *procs = NULL;

        if (read_full_file_at(dir_fd, "cgroup.procs", 4 << 20, &procs, NULL) >= 0)
                for (char *p = procs, *line; (line = next_line(&p));)
                        if (*line)
                                thaw_pid_v1((pid_t) strtol(line, NULL, 10));
        if (depth >= 16)
                return;
        int fd = dup(dir_fd);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d) {
                safe_close(fd);
                return;
        }
        for (struct dirent *de; (de = readdir(d));) {
                if (de->d_type != DT_DIR || de->d_name[0] == '.')
                        continue;
                _cleanup_close_ int sub = openat(dirfd(d), de->d_name, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
                if (sub >= 0)
                        thaw_dir_v1(sub, depth + 1);
        }
        closedir(d);
}

void cgroup_thaw_v1_frozen(const char *unit_cgroup_path, CgroupLayout layout) {
        _cleanup_free_ char *dir = NULL;

        if (layout == CGROUP_LAYOUT_UNIFIED || isempty(unit_cgroup_path) ||
            access(CGROUPFS "/freezer", F_OK) < 0)
                return;
        if (asprintf(&dir, CGROUPFS "/%s%s", layout == CGROUP_LAYOUT_HYBRID ? "unified" : "systemd",
                     unit_cgroup_path) < 0)
                return;
        _cleanup_close_ int fd = open(dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
        if (fd >= 0)
                thaw_dir_v1(fd, 0);
}

/* Remove the cgroup NAME below dir_fd with every cgroup below it (a privileged container may have made its
 * own), deepest first. */
static int remove_cgroup_tree(int dir_fd, const char *name, unsigned depth) {
        _cleanup_close_ int fd = -EBADF;
        DIR *d;

        fd = openat(dir_fd, name, O_DIRECTORY | O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        if (depth < 32 && (d = fdopendir(fd))) {
                fd = -EBADF; /* the DIR has it */
                for (struct dirent *de; (de = readdir(d));)
                        if (de->d_type == DT_DIR && !streq(de->d_name, ".") && !streq(de->d_name, ".."))
                                (void) remove_cgroup_tree(dirfd(d), de->d_name, depth + 1);
                closedir(d);
        }
        return RET_NERRNO(unlinkat(dir_fd, name, AT_REMOVEDIR));
}

void cgroup_remove_v1_accounting(const char *unit_cgroup_path, CgroupLayout layout) {
        CgroupMembership *m = NULL;
        size_t n = 0;

        if (!unit_cgroup_path || isempty(unit_cgroup_path) || streq(unit_cgroup_path, "/") ||
            strstr(unit_cgroup_path, "/..") || unit_cgroup_path[0] != '/' ||
            (layout != CGROUP_LAYOUT_HYBRID && layout != CGROUP_LAYOUT_LEGACY))
                return;
        /* Every v1 controller hierarchy: those systemd trims too (it may not have realized the unit in all
         * of them, and it leaves cgroups a container made below its own in some). */
        if (cgroup_read_memberships(0, &m, &n) < 0)
                return;
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *parent = NULL, *base = NULL;
                _cleanup_close_ int parent_fd = -EBADF;
                int r;

                if (isempty(m[i].controllers) || strneq(m[i].controllers, "name=", 5))
                        continue;
                if (asprintf(&parent, CGROUPFS "/%s%s", m[i].controllers, unit_cgroup_path) < 0)
                        break;
                base = strdup(strrchr(parent, '/') + 1);
                if (!base)
                        break;
                *strrchr(parent, '/') = 0;
                parent_fd = open(parent, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
                if (parent_fd < 0)
                        continue;
                for (int tries = 0; (r = remove_cgroup_tree(parent_fd, base, 0)) == -EBUSY; tries++) {
                        if (tries >= 20) {
                                log_debug("cgroup %s/%s is still busy: left", parent, base);
                                break;
                        }
                        (void) usleep(50 * 1000);
                }
        }
        cgroup_memberships_free(m, n);
}

int cgroup_join_v1_accounting(const char *unit_cgroup_path, CgroupLayout layout, char **reterr) {
        return cgroup_join_v1_accounting_at(CGROUPFS, unit_cgroup_path, layout, reterr);
}

int cgroup_join_v1_untrimmed_at(const char *root, const char *cg, CgroupLayout layout, char **reterr) {
        return join_v1_hierarchies(root, cg, layout, v1_hierarchy_untrimmed, reterr);
}

int cgroup_join_v1_untrimmed(const char *unit_cgroup_path, CgroupLayout layout, char **reterr) {
        return cgroup_join_v1_untrimmed_at(CGROUPFS, unit_cgroup_path, layout, reterr);
}

/* ---------------------------------------------------------------------------------------------------- */
/* Freezer */

static int read_frozen(int fd) {
        char buf[256];
        ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
        if (n < 0)
                return -errno;
        buf[n] = 0;
        const char *f = strstr(buf, "frozen ");
        if (!f)
                return -ENOENT;
        return f[7] == '1';
}

int cgroup_freeze(const char *unit_cgroup_path, CgroupLayout layout, bool freeze, uint64_t timeout_usec,
                  char **reterr) {
        _cleanup_free_ char *base = NULL, *events = NULL, *ctl = NULL;
        _cleanup_close_ int fd = -EBADF;
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + timeout_usec;
        int r;

        assert(unit_cgroup_path);

        r = unified_base(CGROUPFS, layout, &base);
        if (r == -EOPNOTSUPP)
                return errorf(reterr, r, "%s cgroup %s: needs the cgroup v2 freezer, this host has %s only",
                              freeze ? "freeze" : "thaw", unit_cgroup_path, cgroup_layout_to_string(layout));
        if (r < 0)
                return r;
        if (asprintf(&events, "%s%s/cgroup.events", base, unit_cgroup_path) < 0 ||
            asprintf(&ctl, "%s%s/cgroup.freeze", base, unit_cgroup_path) < 0)
                return -ENOMEM;

        fd = open(events, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                r = -errno;
                return errorf(reterr, r, "%s cgroup %s: open %s: %s", freeze ? "freeze" : "thaw",
                              unit_cgroup_path, events, strerror(-r));
        }
        r = write_string_file(ctl, freeze ? "1" : "0");
        if (r < 0)
                return errorf(reterr, r, "%s cgroup %s: write %s: %s", freeze ? "freeze" : "thaw",
                              unit_cgroup_path, ctl, strerror(-r));

        /* cgroup.events signals every change with POLLPRI. */
        for (;;) {
                r = read_frozen(fd);
                if (r < 0)
                        return errorf(reterr, r, "%s cgroup %s: read %s: %s", freeze ? "freeze" : "thaw",
                                      unit_cgroup_path, events, strerror(-r));
                if (r == freeze)
                        return 0;
                if (now_usec(CLOCK_MONOTONIC) >= deadline)
                        return errorf(reterr, -ETIMEDOUT, "%s cgroup %s: still %s after %" PRIu64 " ms",
                                      freeze ? "freeze" : "thaw", unit_cgroup_path,
                                      freeze ? "not frozen" : "frozen", timeout_usec / USEC_PER_MSEC);
                struct pollfd p = { .fd = fd, .events = POLLPRI };
                r = poll_until(&p, 1, deadline);
                if (r < 0 && r != -ETIMEDOUT) /* at the deadline, the state is read once more */
                        return errorf(reterr, r, "%s cgroup %s: poll %s: %s", freeze ? "freeze" : "thaw",
                                      unit_cgroup_path, events, strerror(-r));
        }
}

/* "a-b.slice" -> "/a.slice/a-b.slice"; "-.slice" -> "". */
static int slice_cgroup_path(const char *slice, char **ret) {
        size_t n = strlen(slice), len = 0;
        char *path;

        if (n <= STRLEN(".slice") || !streq(slice + n - STRLEN(".slice"), ".slice"))
                return -EINVAL;
        n -= STRLEN(".slice");
        /* at most one "/X.slice" (n + 7 bytes) per dash, plus the whole name */
        path = malloc((n + 8) * (n + 1) + 1);
        if (!path)
                return -ENOMEM;
        path[0] = 0;
        if (!streq(slice, "-.slice"))
                for (size_t i = 0; i <= n; i++)
                        if (i == n || slice[i] == '-')
                                len += (size_t) sprintf(path + len, "/%.*s.slice", (int) i, slice);
        *ret = path;
        return 0;
}

int cgroup_unit_path(const char *slice, const char *unit, char **ret) {
        _cleanup_free_ char *sp = NULL;
        int r;

        r = slice_cgroup_path(slice ?: "-.slice", &sp);
        if (r < 0)
                return r;
        return asprintf(ret, "%s/%s", sp, unit) < 0 ? -ENOMEM : 0;
}

int cgroup_check_unit_not_frozen(const char *slice, const char *unit, CgroupLayout layout, char **reterr) {
        _cleanup_free_ char *sp = NULL, *cg = NULL, *dir = NULL, *v1 = NULL, *state = NULL, *v1state = NULL;

        if (slice_cgroup_path(slice ?: "-.slice", &sp) < 0 || asprintf(&cg, "%s/%s", sp, unit) < 0)
                return 0; /* an unusual slice name: systemd will say */
        if (layout != CGROUP_LAYOUT_LEGACY && cgroup_unified_dir(cg, &dir) >= 0 &&
            read_full_file_in(dir, "cgroup.freeze", 64, &state) >= 0 && state[0] == '1')
                return errorf(
                        reterr, -EBUSY,
                        "cgroup %s exists and is frozen (cgroup.freeze): container's cgroup unexpectedly frozen",
                        dir);
        if (layout != CGROUP_LAYOUT_UNIFIED && asprintf(&v1, CGROUPFS "/freezer%s", cg) >= 0 &&
            read_full_file_in(v1, "freezer.state", 64, &v1state) >= 0 && !strneq(v1state, "THAWED", 6))
                return errorf(
                        reterr, -EBUSY,
                        "cgroup %s exists and is frozen (freezer.state): container's cgroup unexpectedly frozen",
                        v1);
        return 0;
}
