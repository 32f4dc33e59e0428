/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup-props.h"
#include "cgroup-util.h"
#include "config.h"
#include "container-ops.h"
#include "error-util.h"
#include "fileio.h"
#include "json-util.h"
#include "keep-unit.h"
#include "log.h"
#include "macro.h"
#include "oci-config.h"
#include "rootless.h"
#include "sdunit.h"
#include "state.h"

/* Where each flag of runc's update lands in linux.resources. */
static const struct {
        const char *object;
        const char *key;
        bool string;
} update_fields[_UPDATE_FIELD_MAX] = {
        [UPDATE_MEMORY_LIMIT] = { "memory", "limit" },
        [UPDATE_MEMORY_SWAP] = { "memory", "swap" },
        [UPDATE_MEMORY_RESERVATION] = { "memory", "reservation" },
        [UPDATE_CPU_SHARES] = { "cpu", "shares" },
        [UPDATE_CPU_QUOTA] = { "cpu", "quota" },
        [UPDATE_CPU_PERIOD] = { "cpu", "period" },
        [UPDATE_CPU_CPUS] = { "cpu", "cpus", true },
        [UPDATE_CPU_MEMS] = { "cpu", "mems", true },
        [UPDATE_PIDS_LIMIT] = { "pids", "limit" },
        [UPDATE_BLOCKIO_WEIGHT] = { "blockIO", "weight" },
};

bool update_field_is_string(UpdateField f) {
        return f >= 0 && f < _UPDATE_FIELD_MAX && update_fields[f].string;
}

bool update_options_empty(const UpdateOptions *o) {
        FOREACH_ARRAY(v, o->values, _UPDATE_FIELD_MAX)
                if (v->set)
                        return false;
        return !o->resources || !o->resources->child;
}

/* Set res.OBJECT.KEY = item (taken), creating OBJECT and replacing what was there, as the flags override
 * the file in runc. */
static int resources_set(cJSON *res, const char *object, const char *key, cJSON *item) {
        _cleanup_json_ cJSON *owned = item;
        cJSON *o = cJSON_GetObjectItemCaseSensitive(res, object);

        if (!owned)
                return -ENOMEM;
        if (!cJSON_IsObject(o)) {
                cJSON_DeleteItemFromObjectCaseSensitive(res, object);
                o = cJSON_AddObjectToObject(res, object);
                if (!o)
                        return -ENOMEM;
        }
        cJSON_DeleteItemFromObjectCaseSensitive(o, key);
        return cJSON_AddItemToObject(o, key, TAKE_PTR(owned)) ? 0 : -ENOMEM;
}

/* The resources the options ask for, parsed by the same strict parser as config.json (inside a minimal
 * config), so that errors name linux.resources.<field>. */
static int update_parse_resources(const UpdateOptions *o, OciConfig **ret, char **reterr) {
        _cleanup_json_ cJSON *doc = cJSON_CreateObject();
        _cleanup_free_ char *text = NULL;
        cJSON *linux_, *root, *res;
        int r;

        linux_ = doc ? cJSON_AddObjectToObject(doc, "linux") : NULL;
        root = doc ? cJSON_AddObjectToObject(doc, "root") : NULL;
        if (!linux_ || !root || !cJSON_AddStringToObject(doc, "ociVersion", OCI_SPEC_VERSION) ||
            !cJSON_AddStringToObject(root, "path", "rootfs"))
                return -ENOMEM;
        res = o->resources ? cJSON_Duplicate(o->resources, true) : cJSON_CreateObject();
        if (!res || !cJSON_AddItemToObject(linux_, "resources", res))
                return cJSON_Delete(res), -ENOMEM;
        for (UpdateField f = 0; f < _UPDATE_FIELD_MAX; f++) {
                const UpdateValue *v = &o->values[f];
                if (!v->set)
                        continue;
                r = resources_set(res, update_fields[f].object, update_fields[f].key,
                                  update_fields[f].string ? cJSON_CreateString(v->string)
                                                          : cJSON_CreateNumber(v->number));
                if (r < 0)
                        return r;
        }
        text = json_print(doc);
        if (!text)
                return -ENOMEM;
        return oci_config_parse(text, strlen(text), ret, reterr);
}

#define UPDATE_FREEZE_TIMEOUT_USEC (5 * USEC_PER_SEC)

/* A new period alone keeps the quota the container has, in microseconds per period, as runc does (runc's
 * update.bats: quota 500000 of 1000000, period 900000 -> 500000 of 900000). systemd keeps the quota per
 * second instead, so the current quota is read from the kernel's file and sent again. A new quota alone is
 * one of the current period (systemd's CPUQuotaPerSecUSec is computed with it), as in runc. */
static void update_keep_cpu_bandwidth(OciResources *r, const char *cgroup, CgroupLayout layout,
                                      SdUnitBus *bus, const char *unit) {
        _cleanup_free_ char *dir = NULL, *mnt = NULL, *buf = NULL, *pbuf = NULL, *prop = NULL;
        bool want_quota = r->cpu.has_period && r->cpu.period != 0 && !r->cpu.has_quota,
             want_period =
                     r->cpu.has_quota && r->cpu.quota != 0 && !(r->cpu.has_period && r->cpu.period != 0);
        long long q = -1, p = 0;

        if (!want_quota && !want_period)
                return;
        if (layout == CGROUP_LAYOUT_UNIFIED) {
                if (cgroup_unified_dir(cgroup, &dir) >= 0 &&
                    read_full_file_in(dir, "cpu.max", 256, &buf) >= 0) {
                        char *period = strchr(buf, ' ');
                        if (period)
                                p = strtoll(period + 1, NULL, 10);
                        if (!streq_ptr(strtok(buf, " \n"), "max"))
                                q = strtoll(buf, NULL, 10);
                }
        } else if (cgroup_hierarchy_mount("cpu", &mnt) >= 0 && mnt) {
                if (asprintf(&dir, "%s%s", mnt, cgroup) < 0)
                        dir = NULL;
                if (dir && read_full_file_in(dir, "cpu.cfs_quota_us", 256, &buf) >= 0)
                        q = strtoll(buf, NULL, 10);
                if (dir && read_full_file_in(dir, "cpu.cfs_period_us", 256, &pbuf) >= 0)
                        p = strtoll(pbuf, NULL, 10);
        }
        /* No cpu controller to read the period from (a v2 host that does not offer it): the unit's, which
         * systemd computes its quota with. */
        if (want_period && p <= 0 &&
            sdunit_get_property_string(bus, unit, "org.freedesktop.systemd1.Scope", "CPUQuotaPeriodUSec",
                                       &prop, NULL) >= 0) {
                char *end;
                errno = 0;
                unsigned long long v = strtoull(prop, &end, 10);
                if (errno == 0 && *end == 0 && v >= 1000 && v <= 1000000)
                        p = (long long) v;
        }
        if (want_quota && q > 0) {
                r->cpu.has_quota = true;
                r->cpu.quota = q;
        }
        if (want_period && p > 0) {
                r->cpu.has_period = true;
                r->cpu.period = (uint64_t) p;
        }
}

int container_update(const UpdateOptions *o, char **reterr) {
        _cleanup_(oci_config_freep) OciConfig *cfg = NULL;
        _cleanup_(container_freep) Container *ct = NULL;
        _cleanup_(unit_property_list_done) UnitPropertyList props = {};
        _cleanup_(cgroup_file_writes_done) CgroupFileWrites writes = {};
        _cleanup_(sdunit_bus_closep) SdUnitBus *bus = NULL;
        CgroupLayout layout;
        ContainerStatus st;
        int r;

        r = update_parse_resources(o, &cfg, reterr);
        if (r < 0)
                return r;

        r = container_load_status(o->root, o->id, CONTAINER_LOCK_EXCLUSIVE, &ct, &st, reterr);
        if (r < 0)
                return r;
        if (st == CONTAINER_STOPPED || !ct->cgroup)
                return errorf(reterr, EINVAL, "container not running (%s)", container_status_to_string(st));
        /* --keep-unit: no unit of its own; the limits go to the files of its cgroup below the service, as
         * create wrote them. */
        bool service_owned = !ct->unit;

        if (!service_owned) {
                r = sdunit_bus_open(ct->user_bus, &bus, reterr);
                if (r < 0)
                        return r;
        }
        r = cgroup_detect_layout(&layout);
        if (r >= 0 && !service_owned)
                update_keep_cpu_bandwidth(&cfg->linux_.resources, ct->cgroup, layout, bus, ct->unit);
        if (r >= 0)
                r = cgroup_props_from_resources(&cfg->linux_.resources, layout, &props, &writes, reterr);
        if (r >= 0)
                r = cgroup_check_block_devices(&cfg->linux_.resources, reterr);
        if (r >= 0)
                r = cgroup_props_add_default_devices(&props, &writes);
        if (r < 0)
                return r;

        /* A user manager applies only the controllers it has delegated: warn about the rest. */
        if (r >= 0 && ct->user_bus) {
                r = rootless_filter_resources(bus, layout, &props, reterr);
                rootless_filter_writes(&writes, layout);
        } else if (r >= 0 && layout == CGROUP_LAYOUT_UNIFIED)
                cgroup_check_host_controllers(&props, "/sys/fs/cgroup");
        /* On v1 hierarchies systemd rewrites the device cgroup when it applies properties: deny all, then
         * the allows one by one, and a process of the container may meet the gap (runc's update.bats saw
         * /dev/null refused). Frozen meanwhile, as runc does, it cannot; a paused container stays so. */
        bool thaw = false;
        if (r >= 0 && layout != CGROUP_LAYOUT_UNIFIED && !ct->user_bus && st != CONTAINER_PAUSED &&
            (props.n_items > 0 || writes.n_items > 0)) {
                _cleanup_free_ char *ferr = NULL;
                thaw = cgroup_freeze(ct->cgroup, layout, true, UPDATE_FREEZE_TIMEOUT_USEC, &ferr) >= 0;
                if (!thaw)
                        log_debug("update %s: not frozen during the update: %s", ct->id, strna(ferr));
        }
        if (r >= 0 && props.n_items > 0)
                r = service_owned ? keep_unit_props_to_writes(&props, layout, ct->cgroup, &writes, reterr)
                                  : sdunit_set_properties(bus, ct->unit, &props, reterr);
        if (r >= 0 && writes.n_items > 0)
                r = cgroup_apply_file_writes(&writes, ct->cgroup, layout, reterr);
        if (thaw) {
                _cleanup_free_ char *ferr = NULL;
                int k = cgroup_freeze(ct->cgroup, layout, false, UPDATE_FREEZE_TIMEOUT_USEC, &ferr);
                if (k < 0 && r >= 0)
                        r = errorf(reterr, k, "thaw after the update: %s", strna(ferr));
        }
        return r;
}
