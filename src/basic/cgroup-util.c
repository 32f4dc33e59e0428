/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <unistd.h>

#include "cgroup-util.h"
#include "fileio.h"
#include "macro.h"
#include "string-util.h"

int cgroup_detect_layout(CgroupLayout *ret) {
        /* The host's layout does not change while we run; `list` asks for every container, and cgroup
         * path helpers ask again for every hierarchy: remember the answer (per process; a forked child
         * inherits it, which is right: it is asked about the same host). */
        static CgroupLayout cached;
        static bool have_cached = false;
        struct statfs fs;

        if (have_cached) {
                *ret = cached;
                return 0;
        }
        if (statfs("/sys/fs/cgroup", &fs) < 0)
                return -errno;
        if (fs.f_type == CGROUP2_SUPER_MAGIC)
                cached = CGROUP_LAYOUT_UNIFIED;
        else if (fs.f_type != TMPFS_MAGIC)
                return -ENOMEDIUM;
        else if (statfs("/sys/fs/cgroup/unified", &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC)
                cached = CGROUP_LAYOUT_HYBRID;
        else
                cached = CGROUP_LAYOUT_LEGACY;
        have_cached = true;
        *ret = cached;
        return 0;
}

const char *cgroup_layout_to_string(CgroupLayout l) {
        switch (l) {
        case CGROUP_LAYOUT_UNIFIED:
                return "unified";
        case CGROUP_LAYOUT_HYBRID:
                return "hybrid";
        case CGROUP_LAYOUT_LEGACY:
                return "legacy";
        }
        return "unknown";
}

void cgroup_memberships_free(CgroupMembership *m, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(m[i].controllers);
                free(m[i].path);
        }
        free(m);
}

int cgroup_read_memberships(pid_t pid, CgroupMembership **ret, size_t *ret_n) {
        _cleanup_free_ char *buf = NULL;
        char path[64];
        CgroupMembership *m = NULL;
        size_t n = 0;
        int r;

        if (pid == 0)
                snprintf(path, sizeof path, "/proc/self/cgroup");
        else
                snprintf(path, sizeof path, "/proc/%d/cgroup", (int) pid);
        r = read_full_file_at(AT_FDCWD, path, 1 << 20, &buf, NULL);
        if (r < 0)
                return r;

        for (char *p = buf, *line; (line = next_line(&p));) {
                char *c1 = strchr(line, ':');
                if (!c1)
                        continue;
                char *c2 = strchr(c1 + 1, ':');
                if (!c2)
                        continue;
                *c2 = 0;
                CgroupMembership *nm = realloc(m, (n + 1) * sizeof *m);
                if (!nm) {
                        cgroup_memberships_free(m, n);
                        return -ENOMEM;
                }
                m = nm;
                m[n].controllers = strdup(c1 + 1);
                m[n].path = strdup(c2 + 1);
                n++;
                if (!m[n - 1].controllers || !m[n - 1].path) {
                        cgroup_memberships_free(m, n);
                        return -ENOMEM;
                }
        }
        *ret = m;
        *ret_n = n;
        return 0;
}

/* Hierarchy mount points are fixed by convention under /sys/fs/cgroup; this covers systemd's layouts. */
int cgroup_hierarchy_mount(const char *controllers, char **ret) {
        CgroupLayout layout;
        char *p;
        int r;

        r = cgroup_detect_layout(&layout);
        if (r < 0)
                return r;
        if (isempty(controllers)) {
                if (layout == CGROUP_LAYOUT_UNIFIED)
                        p = strdup("/sys/fs/cgroup");
                else if (layout == CGROUP_LAYOUT_HYBRID)
                        p = strdup("/sys/fs/cgroup/unified");
                else
                        return -ENOENT;
        } else if (strneq(controllers, "name=", 5)) {
                if (asprintf(&p, "/sys/fs/cgroup/%s", controllers + 5) < 0)
                        p = NULL;
        } else if (asprintf(&p, "/sys/fs/cgroup/%s", controllers) < 0)
                p = NULL;
        if (!p)
                return -ENOMEM;
        if (access(p, F_OK) < 0) {
                r = -errno;
                free(p);
                return r;
        }
        *ret = p;
        return 0;
}

int cgroup_attach_memberships(pid_t pid, const CgroupMembership *m, size_t n) {
        char pidbuf[32];
        int r, ret = 0;

        snprintf(pidbuf, sizeof pidbuf, "%d", (int) pid);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *mnt = NULL, *procs = NULL;

                r = cgroup_hierarchy_mount(m[i].controllers, &mnt);
                if (r == -ENOENT)
                        continue; /* hierarchy not mounted here (e.g. a v1 controller on a unified host) */
                if (r < 0)
                        return r;
                if (asprintf(&procs, "%s%s/cgroup.procs", mnt, m[i].path) < 0)
                        return -ENOMEM;
                r = write_string_file(procs, pidbuf);
                if (r < 0 && ret == 0)
                        ret = r;
        }
        return ret;
}

int cgroup_unified_dir(const char *path, char **ret) {
        _cleanup_free_ char *mnt = NULL;
        CgroupLayout layout;
        int r;

        r = cgroup_detect_layout(&layout);
        if (r < 0)
                return r;
        r = cgroup_hierarchy_mount(layout == CGROUP_LAYOUT_LEGACY ? "name=systemd" : "", &mnt);
        if (r < 0)
                return r;
        if (asprintf(ret, "%s%s", mnt, path) < 0)
                return -ENOMEM;
        return 0;
}

int cgroup_enable_subtree_controllers(const char *dir) {
        _cleanup_free_ char *path = NULL, *buf = NULL, *want = NULL;
        size_t n = 0;
        int r;

        r = read_full_file_in(dir, "cgroup.controllers", 4096, &buf);
        if (r < 0)
                return r;
        want = malloc(strlen(buf) * 2 + 2);
        if (!want)
                return -ENOMEM;
        for (char *tok = strtok(buf, " \n"); tok; tok = strtok(NULL, " \n"))
                n += (size_t) sprintf(want + n, "%s+%s", n ? " " : "", tok);
        if (n == 0)
                return 0; /* nothing to hand down (e.g. every controller bound to v1) */
        if (asprintf(&path, "%s/cgroup.subtree_control", dir) < 0) {
                path = NULL;
                return -ENOMEM;
        }
        return write_string_file(path, want);
}

int cgroup_leave_unit(pid_t pid, const CgroupMembership *orig, size_t n_orig, const char *unit_path) {
        CgroupMembership *now = NULL;
        size_t n_now = 0;
        char pidbuf[32];
        int r, ret = 0;

        if (isempty(unit_path))
                return cgroup_attach_memberships(pid, orig, n_orig);
        r = cgroup_read_memberships(pid, &now, &n_now);
        if (r < 0)
                return r;
        snprintf(pidbuf, sizeof pidbuf, "%d", (int) pid);

        /* Only the hierarchies where we are in the unit are left; for each, back to where we were, or the
         * nearest ancestor of it that still exists (systemd may have removed a cgroup it realized for us
         * meanwhile, e.g. a v1 blkio one when the last unit needing blkio went away). */
        for (size_t i = 0; i < n_now; i++) {
                _cleanup_free_ char *mnt = NULL, *target = NULL;
                const char *back = "/";

                if (!path_is_at_or_below(now[i].path, unit_path))
                        continue;
                for (size_t j = 0; j < n_orig; j++)
                        if (streq(orig[j].controllers, now[i].controllers))
                                back = orig[j].path;
                r = cgroup_hierarchy_mount(now[i].controllers, &mnt);
                if (r == -ENOENT)
                        continue;
                if (r < 0) {
                        ret = ret ?: r;
                        continue;
                }
                target = strdup(back);
                if (!target) {
                        ret = -ENOMEM;
                        break;
                }
                for (;;) {
                        _cleanup_free_ char *procs = NULL;
                        if (asprintf(&procs, "%s%s/cgroup.procs", mnt, streq(target, "/") ? "" : target) <
                            0) {
                                r = -ENOMEM;
                                break;
                        }
                        r = write_string_file(procs, pidbuf);
                        if (r != -ENOENT || streq(target, "/"))
                                break;
                        char *slash = strrchr(target, '/');
                        if (slash == target)
                                target[1] = 0;
                        else
                                *slash = 0;
                }
                if (r < 0 && ret == 0)
                        ret = r;
        }
        cgroup_memberships_free(now, n_now);
        return ret;
}
