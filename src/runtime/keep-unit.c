/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --keep-unit (keep-unit.h): the container in the service sdrun runs in, below SERVICE/payload, with sdrun
 * in SERVICE/supervisor. */

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-util.h"
#include "error-util.h"
#include "fileio.h"
#include "keep-unit.h"
#include "log.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

#define CGROUPFS "/sys/fs/cgroup"

void keep_unit_done(KeepUnit *k) {
        free(k->unit);
        free(k->cgroup);
        free(k->payload);
        strv_free(k->dirs);
        *k = (KeepUnit){};
}

static bool has_suffix(const char *s, const char *suffix) {
        size_t a = strlen(s), b = strlen(suffix);
        return a >= b && streq(s + a - b, suffix);
}

int keep_unit_find(SdUnitBus *bus, CgroupLayout layout, KeepUnit *ret, char **reterr) {
        _cleanup_free_ char *delegate = NULL, *err = NULL;
        CgroupMembership *m = NULL;
        size_t n = 0;
        const char *own = NULL, *want = layout == CGROUP_LAYOUT_LEGACY ? "name=systemd" : "";
        KeepUnit k = {};
        int r;

        r = cgroup_read_memberships(0, &m, &n);
        if (r < 0)
                return errorf(reterr, r, "--keep-unit: read /proc/self/cgroup: %s", strerror(-r));
        for (size_t i = 0; i < n; i++)
                if (streq(m[i].controllers, want))
                        own = m[i].path;
        /* The unit is the last component of our cgroup that names one, as systemd's own lookup does. */
        const char *slash = own ? strrchr(own, '/') : NULL;
        if (slash && slash[1])
                k.unit = strdup(slash + 1);
        if (!slash || !k.unit || !has_suffix(k.unit, ".service")) {
                r = errorf(
                        reterr, EINVAL,
                        "--keep-unit: sdrun runs in cgroup \"%s\", not at the root of a service's: --keep-unit "
                        "is for the ExecStart= of a service with Delegate=yes (sdrun@.service); without it, "
                        "the container gets a scope of its own",
                        strna(own));
                goto finish;
        }
        r = sdunit_get_control_group(bus, k.unit, &k.cgroup, &err);
        if (r < 0 || !streq(k.cgroup, own)) {
                r = errorf(
                        reterr, r < 0 ? r : EINVAL,
                        "--keep-unit: sdrun's cgroup \"%s\" is not the cgroup of unit %s (%s): --keep-unit is "
                        "for the ExecStart= of a service with Delegate=yes",
                        own, k.unit, r < 0 ? strna(err) : strna(k.cgroup));
                goto finish;
        }
        r = sdunit_get_property_string(bus, k.unit, "org.freedesktop.systemd1.Service", "Delegate",
                                       &delegate, NULL);
        if (r < 0 || !streq(delegate, "yes")) {
                r = errorf(reterr, EPERM,
                           "--keep-unit: unit %s does not have Delegate=yes: the container's cgroups below "
                           "the service's are not sdrun's to make (add Delegate=yes to its [Service])",
                           k.unit);
                goto finish;
        }
        k.payload = strdup_printf("%s/" KEEP_UNIT_PAYLOAD, k.cgroup);
        if (!k.payload) {
                r = -ENOMEM;
                goto finish;
        }
        /* Every hierarchy in which systemd put us at the service's path (name=systemd, the unified one, the
         * v1 controllers it realized for the service). */
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *mnt = NULL;
                if (!streq(m[i].path, k.cgroup) || cgroup_hierarchy_mount(m[i].controllers, &mnt) < 0 ||
                    !mnt)
                        continue;
                r = strv_extendf(&k.dirs, "%s%s", mnt, k.cgroup);
                if (r < 0)
                        goto finish;
        }
        *ret = k;
        k = (KeepUnit){};
        r = 0;
finish:
        cgroup_memberships_free(m, n);
        keep_unit_done(&k);
        return r;
}

/* This process into DIR/sub of every hierarchy. */
static int move_self(KeepUnit *k, const char *sub, char **reterr) {
        char pid[32];

        snprintf(pid, sizeof pid, "%d", (int) getpid());
        for (char **d = k->dirs; d && *d; d++) {
                _cleanup_free_ char *file = strdup_printf("%s/%s/cgroup.procs", *d, sub);
                if (!file)
                        return -ENOMEM;
                int r = write_string_file(file, pid);
                if (r < 0)
                        return errorf(reterr, r, "--keep-unit: move sdrun into %s: %s", file, strerror(-r));
        }
        return 0;
}

int keep_unit_enter(KeepUnit *k, CgroupLayout layout, const UnitPropertyList *props,
                    const CgroupFileWrites *writes, char **reterr) {
        _cleanup_(cgroup_file_writes_done) CgroupFileWrites files = {};
        int r;

        for (char **d = k->dirs; d && *d; d++)
                for (size_t i = 0; i < 2; i++) {
                        const char *sub = i == 0 ? KEEP_UNIT_SUPERVISOR : KEEP_UNIT_PAYLOAD;
                        _cleanup_free_ char *dir = strdup_printf("%s/%s", *d, sub);
                        if (!dir)
                                return -ENOMEM;
                        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                                return errorf(reterr, -errno, "--keep-unit: create the cgroup %s: %s", dir,
                                              strerror(errno));
                        k->made = true;
                }
        r = move_self(k, KEEP_UNIT_SUPERVISOR, reterr);
        if (r < 0)
                return r;
        /* The service's cgroup holds no process now: its controllers go down to supervisor and payload. */
        if (layout != CGROUP_LAYOUT_LEGACY) {
                _cleanup_free_ char *dir = NULL;
                r = cgroup_unified_dir(k->cgroup, &dir);
                if (r >= 0)
                        r = cgroup_enable_subtree_controllers(dir);
                if (r < 0)
                        return errorf(reterr, r,
                                      "--keep-unit: enable the controllers of %s for its sub-cgroups: %s",
                                      k->unit, strerror(-r));
        }
        r = keep_unit_props_to_writes(props, layout, k->unit, &files, reterr);
        if (r < 0)
                return r;
        for (size_t i = 0; i < writes->n_items; i++) {
                const CgroupFileWrite *w = writes->items + i;
                r = cgroup_file_writes_add_for(&files, w->field, w->controller, w->file, w->value,
                                               w->optional);
                if (r < 0)
                        return r;
        }
        if (files.n_items > 0) {
                r = cgroup_apply_file_writes(&files, k->payload, layout, reterr);
                if (r < 0)
                        return errwrap(reterr, r, "config.json: linux.resources");
        }
        r = move_self(k, KEEP_UNIT_PAYLOAD, reterr);
        k->in_payload = true;
        return r;
}

int keep_unit_leave(KeepUnit *k, char **reterr) {
        int r;

        if (!k->in_payload)
                return 0;
        r = move_self(k, KEEP_UNIT_SUPERVISOR, reterr);
        if (r >= 0)
                k->in_payload = false;
        return r;
}

/* Kill every process of the cgroup directory (and below: cgroup.kill where the kernel has it). */
static void kill_dir(const char *dir) {
        _cleanup_free_ char *file = strdup_printf("%s/cgroup.kill", dir);
        if (file && access(file, F_OK) == 0 && write_string_file(file, "1") >= 0)
                return;
        for (int round = 0; round < 10; round++) {
                _cleanup_free_ char *procs = NULL;
                bool any = false;
                if (read_full_file_in(dir, "cgroup.procs", 4 << 20, &procs) < 0)
                        return;
                for (char *p = procs, *line; (line = next_line(&p));)
                        if (*line) {
                                (void) kill((pid_t) strtol(line, NULL, 10), SIGKILL);
                                any = true;
                        }
                if (!any)
                        return;
                (void) nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
        }
}

void keep_unit_remove_payload(const char *payload_cgroup) {
        CgroupMembership *m = NULL;
        size_t n = 0;

        /* Only ever a payload cgroup (state.json is ours, but a path from it kills what is there). */
        if (isempty(payload_cgroup) || !has_suffix(payload_cgroup, "/" KEEP_UNIT_PAYLOAD) ||
            cgroup_read_memberships(0, &m, &n) < 0)
                return;
        /* The hierarchies we are in (ours are those the payload is in: the service's). */
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *mnt = NULL, *dir = NULL;
                if (cgroup_hierarchy_mount(m[i].controllers, &mnt) < 0 || !mnt ||
                    !(dir = strdup_printf("%s%s", mnt, payload_cgroup)))
                        continue;
                if (access(dir, F_OK) < 0)
                        continue;
                kill_dir(dir);
                for (int tries = 0; tries < 50 && rmdir(dir) < 0 && errno == EBUSY; tries++)
                        (void) nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000 * 1000 }, NULL);
        }
        cgroup_memberships_free(m, n);
}

/* ---------------------------------------------------------------------------------------------------- */
/* Unit properties as files */

/* Optional: a file that does not exist is a controller the host does not have, which create has warned of
 * (cgroup_check_host_controllers()) and which a scope's systemd would ignore too. */
static int add(CgroupFileWrites *w, const char *controller, const char *file, const char *value) {
        return cgroup_file_writes_add_for(w, NULL, controller, file, value, true);
}

static int add_u64(CgroupFileWrites *w, const char *controller, const char *file, uint64_t v,
                   const char *max) {
        char buf[32];
        if (v == UINT64_MAX)
                return add(w, controller, file, max);
        snprintf(buf, sizeof buf, "%" PRIu64, v);
        return add(w, controller, file, buf);
}

int keep_unit_props_to_writes(const UnitPropertyList *props, CgroupLayout layout, const char *unit,
                              CgroupFileWrites *w, char **reterr) {
        static const char *const skip[] = {
                "TimeoutStopUSec",    "IOAccounting",      "MemoryAccounting", "CPUAccounting",
                "TasksAccounting",    "BlockIOAccounting", "DevicePolicy",     "DeviceAllow",
                "CPUQuotaPeriodUSec", "Delegate",
        };
        bool v2 = layout == CGROUP_LAYOUT_UNIFIED;
        int r = 0;

        for (size_t i = 0; i < props->n_items && r >= 0; i++) {
                const UnitProperty *p = props->items + i;
                const char *n = p->name;
                bool skipped = false;

                for (size_t j = 0; j < ELEMENTSOF(skip); j++)
                        skipped = skipped || streq(n, skip[j]);
                /* v1: cgroup_props_from_resources() gives MemoryLimit= and the same MemoryMax=. */
                if (skipped ||
                    (!v2 && streq(n, "MemoryMax") && unit_property_list_find(props, "MemoryLimit")))
                        continue;
                if (p->kind == UNIT_PROP_UINT64 && (streq(n, "MemoryMax") || streq(n, "MemoryLimit")))
                        r = v2 ? add_u64(w, "", "memory.max", p->u64, "max")
                               : add_u64(w, "memory", "memory.limit_in_bytes", p->u64, "-1");
                else if (p->kind == UNIT_PROP_UINT64 && v2 &&
                         (streq(n, "MemoryHigh") || streq(n, "MemoryLow") || streq(n, "MemoryMin"))) {
                        char file[32];
                        snprintf(file, sizeof file, "memory.%s", n + strlen("Memory"));
                        file[7] = (char) (file[7] - 'A' + 'a');
                        r = add_u64(w, "", file, p->u64, "max");
                } else if (p->kind == UNIT_PROP_UINT64 && v2 && streq(n, "MemorySwapMax"))
                        r = add_u64(w, "", "memory.swap.max", p->u64, "max");
                else if (p->kind == UNIT_PROP_UINT64 && streq(n, "TasksMax"))
                        r = add_u64(w, v2 ? "" : "pids", "pids.max", p->u64, "max");
                else if (p->kind == UNIT_PROP_UINT64 && v2 && streq(n, "CPUWeight"))
                        r = add_u64(w, "", "cpu.weight", p->u64, "100");
                else if (p->kind == UNIT_PROP_UINT64 && !v2 && streq(n, "CPUShares"))
                        r = add_u64(w, "cpu", "cpu.shares", p->u64, "1024");
                else if (p->kind == UNIT_PROP_UINT64 && v2 && streq(n, "IOWeight")) {
                        char buf[48];
                        snprintf(buf, sizeof buf, "default %" PRIu64, p->u64);
                        r = add(w, "", "io.weight", buf);
                } else if (p->kind == UNIT_PROP_UINT64 && !v2 && streq(n, "BlockIOWeight"))
                        r = add_u64(w, "blkio", "blkio.weight", p->u64, "500");
                else if (p->kind == UNIT_PROP_UINT64 && streq(n, "CPUQuotaPerSecUSec")) {
                        const UnitProperty *per = unit_property_list_find(props, "CPUQuotaPeriodUSec");
                        uint64_t period = per && per->u64 > 0 && per->u64 != UINT64_MAX ? per->u64 : 100000;
                        char buf[64];
                        uint64_t quota = p->u64 == UINT64_MAX ? UINT64_MAX : p->u64 * period / 1000000;
                        if (quota == UINT64_MAX)
                                snprintf(buf, sizeof buf, "%s", v2 ? "max" : "-1");
                        else
                                snprintf(buf, sizeof buf, "%" PRIu64, quota);
                        if (v2) {
                                size_t l = strlen(buf);
                                snprintf(buf + l, sizeof buf - l, " %" PRIu64, period);
                        }
                        if (v2)
                                r = add(w, "", "cpu.max", buf);
                        else {
                                r = add_u64(w, "cpu", "cpu.cfs_period_us", period, "100000");
                                if (r >= 0)
                                        r = add(w, "cpu", "cpu.cfs_quota_us", buf);
                        }
                } else
                        return errorf(
                                reterr, EOPNOTSUPP,
                                "config.json: linux.resources: --keep-unit: %s has no cgroup file sdrun "
                                "writes for the container in its service: set it on the service instead "
                                "(a drop-in, or systemctl set-property %s)",
                                n, unit);
        }
        return r;
}
