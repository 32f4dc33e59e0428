/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config.json "linux.resources": device rules, memory, cpu, pids, blockIO, hugepage limits, network, rdma
 * and unified (mapped to unit properties by cgroup-props.c). The parsing rules are those described at the
 * top of oci-config.c. */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "log.h"
#include "macro.h"
#include "oci-config-internal.h"
#include "oci-config.h"
#include "oci-json.h"

static int field_cgroup_device_type(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return get_device_type(v, p, "acb", "a, c or b", dst, reterr);
}

/* major/minor of a device rule: a device number, or -1 for "all" (the '*' of the cgroup v1 syntax). */
static int field_cgroup_device_number(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return oci_json_get_signed(v, p, -1, UINT32_MAX, dst, reterr);
}

static int field_cgroup_device_access(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        const char *s;
        bool rd = false, wr = false, mk = false;
        char *a = dst;
        int r;

        r = oci_json_get_string(v, p, &s, reterr);
        if (r < 0)
                return r;
        if (isempty(s))
                return oci_json_error(reterr, p, "must be a non-empty combination of 'r', 'w' and 'm'");
        /* runc and crun accept other letters and repetitions ("rwx", "rrw"): they mean nothing to the device
         * controller. Warned about and dropped; an access with none of r, w, m left is refused. */
        for (const char *c = s; *c; c++) {
                bool *b = *c == 'r' ? &rd : *c == 'w' ? &wr : *c == 'm' ? &mk : NULL;
                if (b)
                        *b = true;
        }
        if (!rd && !wr && !mk)
                return oci_json_error(reterr, p, "invalid access \"%s\" (a combination of 'r', 'w' and 'm')",
                                      s);
        if (strspn(s, "rwm") != strlen(s)) {
                _cleanup_free_ char *path = oci_json_path_to_string(p);
                log_warning("%s: access \"%s\": ignoring the letters other than 'r', 'w' and 'm'.",
                            strna(path), s);
        }
        size_t n = 0;
        if (rd)
                a[n++] = 'r';
        if (wr)
                a[n++] = 'w';
        if (mk)
                a[n++] = 'm';
        a[n] = 0;
        return 0;
}

static int parse_cgroup_device(const cJSON *v, const OciJsonPath *p, void *elem, char **reterr) {
        static const OciJsonField table[] = {
                FIELD("allow", oci_json_field_bool, OciDeviceCgroup, allow, OCI_JSON_MANDATORY),
                FIELD("type", field_cgroup_device_type, OciDeviceCgroup, type, 0),
                FIELD("major", field_cgroup_device_number, OciDeviceCgroup, major, 0),
                FIELD("minor", field_cgroup_device_number, OciDeviceCgroup, minor, 0),
                FIELD("access", field_cgroup_device_access, OciDeviceCgroup, access, 0),
                {},
        };
        OciDeviceCgroup *d = elem;

        d->type = 'a';
        d->major = d->minor = -1;
        strcpy(d->access, "rwm");
        return oci_json_dispatch(v, p, table, elem, reterr);
}

/* Memory amounts: bytes, or -1 for unlimited. */
static int field_memory_amount(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return oci_json_get_signed(v, p, -1, INT64_MAX, dst, reterr);
}

static int field_swappiness(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return oci_json_get_unsigned(v, p, 100, dst, reterr);
}

typedef __typeof__(((OciResources *) NULL)->memory) OciMemory;
typedef __typeof__(((OciResources *) NULL)->cpu) OciCpu;
typedef __typeof__(((OciResources *) NULL)->pids) OciPids;
typedef __typeof__(((OciResources *) NULL)->block_io) OciBlockIo;
typedef __typeof__(((OciResources *) NULL)->network) OciNetwork;

static const OciJsonField memory_fields[] = {
        FIELD_HAS("limit", field_memory_amount, OciMemory, limit, has_limit, 0),
        FIELD_HAS("reservation", field_memory_amount, OciMemory, reservation, has_reservation, 0),
        FIELD_HAS("swap", field_memory_amount, OciMemory, swap, has_swap, 0),
        FIELD_HAS("kernel", field_memory_amount, OciMemory, kernel, has_kernel, 0),
        FIELD_HAS("kernelTCP", field_memory_amount, OciMemory, kernel_tcp, has_kernel_tcp, 0),
        FIELD_HAS("swappiness", field_swappiness, OciMemory, swappiness, has_swappiness, 0),
        FIELD_HAS("disableOOMKiller", oci_json_field_bool, OciMemory, disable_oom_killer,
                  has_disable_oom_killer, 0),
        FIELD_HAS("useHierarchy", oci_json_field_bool, OciMemory, use_hierarchy, has_use_hierarchy, 0),
        FIELD_HAS("checkBeforeUpdate", oci_json_field_bool, OciMemory, check_before_update,
                  has_check_before_update, 0),
        {},
};

static int check_memory(const cJSON *v, const OciJsonPath *p, void *obj, char **reterr) {
        const OciMemory *m = obj;

        /* NOT RECOMMENDED by the spec and gone from Linux 6.0: runc 1.1 and crun accept and ignore it. */
        if (m->has_kernel && m->kernel != -1) {
                _cleanup_free_ char *path = oci_json_path_to_string(p);
                log_warning(
                        "%s.kernel: kernel memory limits are not supported by Linux any more, ignoring it.",
                        strna(path));
        }
        return 0;
}

static int field_idle(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return oci_json_get_signed(v, p, 0, 1, dst, reterr);
}

static const OciJsonField cpu_fields[] = {
        FIELD_HAS("shares", oci_json_field_uint64, OciCpu, shares, has_shares, 0),
        FIELD_HAS("quota", field_memory_amount /* -1 or >= 0 */, OciCpu, quota, has_quota, 0),
        FIELD_HAS("burst", oci_json_field_uint64, OciCpu, burst, has_burst, 0),
        FIELD_HAS("period", oci_json_field_uint64, OciCpu, period, has_period, 0),
        FIELD_HAS("realtimeRuntime", field_memory_amount /* -1 or >= 0 */, OciCpu, realtime_runtime,
                  has_realtime_runtime, 0),
        FIELD_HAS("realtimePeriod", oci_json_field_uint64, OciCpu, realtime_period, has_realtime_period, 0),
        FIELD("cpus", field_cpu_list, OciCpu, cpus, 0),
        FIELD("mems", field_cpu_list, OciCpu, mems, 0),
        FIELD_HAS("idle", field_idle, OciCpu, idle, has_idle, 0),
        {},
};

static int check_cpu(const cJSON *v, const OciJsonPath *p, void *obj, char **reterr) {
        OciCpu *cpu = obj;

        /* shares 0 means "not set" (Docker sends it for every container), as runc and crun treat it. */
        cpu->has_shares = cpu->has_shares && cpu->shares != 0;
        /* The kernel refuses a burst larger than the quota; runc 1.1 and crun accept the config and do not
         * apply the burst: so does sdrun, with a warning. */
        if (cpu->has_burst && cpu->has_quota && cpu->quota > 0 && cpu->burst > (uint64_t) cpu->quota) {
                _cleanup_free_ char *path = oci_json_path_to_string(p);
                log_warning("%s.burst: larger than the quota, ignoring it.", strna(path));
                cpu->has_burst = false;
        }
        return 0;
}

static const OciJsonField pids_fields[] = {
        FIELD_HAS("limit", field_memory_amount /* -1 (max) or >= 0 */, OciPids, limit, has_limit,
                  OCI_JSON_MANDATORY),
        {},
};

/* 10..1000, or 0: "not set" (Docker sends weight 0 for every container, runc and crun ignore it). The
 * FIELD_HAS flag is cleared for 0 by the callers, so that nothing downstream sees a weight. */
static int field_blkio_weight(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        uint64_t u;
        int r;

        r = oci_json_get_unsigned(v, p, UINT16_MAX, &u, reterr);
        if (r < 0)
                return r;
        if (u != 0 && (u < 10 || u > 1000))
                return oci_json_error(reterr, p, "value %" PRIu64 " out of range (10..1000, or 0 for unset)",
                                      u);
        *(uint16_t *) dst = (uint16_t) u;
        return 0;
}

static const OciJsonField weight_device_fields[] = {
        FIELD("major", field_device_number, OciBlockIoDevice, major, OCI_JSON_MANDATORY),
        FIELD("minor", field_device_number, OciBlockIoDevice, minor, OCI_JSON_MANDATORY),
        FIELD_HAS("weight", field_blkio_weight, OciBlockIoDevice, weight, has_weight, 0),
        FIELD_HAS("leafWeight", field_blkio_weight, OciBlockIoDevice, leaf_weight, has_leaf_weight, 0),
        {},
};

static int check_weight_device(const cJSON *v, const OciJsonPath *p, void *obj, char **reterr) {
        OciBlockIoDevice *d = obj;

        if (!d->has_weight && !d->has_leaf_weight)
                return oci_json_error(reterr, p,
                                      "at least one of \"weight\" and \"leafWeight\" is required");
        /* 0: unset, as for blockIO.weight */
        d->has_weight = d->has_weight && d->weight != 0;
        d->has_leaf_weight = d->has_leaf_weight && d->leaf_weight != 0;
        return 0;
}

static const OciJsonField throttle_device_fields[] = {
        FIELD("major", field_device_number, OciBlockIoDevice, major, OCI_JSON_MANDATORY),
        FIELD("minor", field_device_number, OciBlockIoDevice, minor, OCI_JSON_MANDATORY),
        FIELD("rate", oci_json_field_uint64, OciBlockIoDevice, rate, OCI_JSON_MANDATORY),
        {},
};

#define THROTTLE_FIELD(name, member) \
        FIELD_ARRAY_OF(name, throttle_device_fields, NULL, OciBlockIo, member, n_##member, 0)

static const OciJsonField block_io_fields[] = {
        FIELD_HAS("weight", field_blkio_weight, OciBlockIo, weight, has_weight, 0),
        FIELD_HAS("leafWeight", field_blkio_weight, OciBlockIo, leaf_weight, has_leaf_weight, 0),
        FIELD_ARRAY_OF("weightDevice", weight_device_fields, check_weight_device, OciBlockIo, weight_device,
                       n_weight_device, 0),
        THROTTLE_FIELD("throttleReadBpsDevice", throttle_read_bps),
        THROTTLE_FIELD("throttleWriteBpsDevice", throttle_write_bps),
        THROTTLE_FIELD("throttleReadIOPSDevice", throttle_read_iops),
        THROTTLE_FIELD("throttleWriteIOPSDevice", throttle_write_iops),
        {},
};

static int check_block_io(const cJSON *v, const OciJsonPath *p, void *obj, char **reterr) {
        OciBlockIo *b = obj;

        /* 0 means "not set" (Docker always sends weight 0), as runc and crun treat it. */
        b->has_weight = b->has_weight && b->weight != 0;
        b->has_leaf_weight = b->has_leaf_weight && b->leaf_weight != 0;
        return 0;
}

static int check_page_size(const char *s, const OciJsonPath *p, char **reterr) {
        size_t n = strspn(s, "0123456789");

        /* ^[1-9][0-9]*[KMG]B$ */
        if (n == 0 || s[0] == '0' || !s[n] || !strchr("KMG", s[n]) || s[n + 1] != 'B' || s[n + 2] != 0)
                return oci_json_error(reterr, p, "invalid page size \"%s\" (expected e.g. 2MB, 1GB, 64KB)",
                                      s);
        return 0;
}

static int field_page_size(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return oci_json_field_string_checked(v, p, dst, check_page_size, reterr);
}

static const OciJsonField hugepage_limit_fields[] = {
        FIELD("pageSize", field_page_size, OciHugepageLimit, page_size, OCI_JSON_MANDATORY),
        FIELD("limit", oci_json_field_uint64, OciHugepageLimit, limit, OCI_JSON_MANDATORY),
        {},
};

static const OciJsonField net_priority_fields[] = {
        FIELD("name", oci_json_field_nonempty_string, OciNetPriority, name, OCI_JSON_MANDATORY),
        FIELD("priority", oci_json_field_uint32, OciNetPriority, priority, OCI_JSON_MANDATORY),
        {},
};

static const OciJsonField network_fields[] = {
        FIELD_HAS("classID", oci_json_field_uint32, OciNetwork, class_id, has_class_id, 0),
        FIELD_ARRAY_OF("priorities", net_priority_fields, NULL, OciNetwork, priorities, n_priorities, 0),
        {},
};

static const OciJsonField rdma_fields[] = {
        FIELD_HAS("hcaHandles", oci_json_field_uint32, OciRdma, hca_handles, has_hca_handles, 0),
        FIELD_HAS("hcaObjects", oci_json_field_uint32, OciRdma, hca_objects, has_hca_objects, 0),
        {},
};

static int check_rdma(const cJSON *v, const OciJsonPath *p, void *obj, char **reterr) {
        const OciRdma *e = obj;

        if (!e->has_hca_handles && !e->has_hca_objects)
                return oci_json_error(reterr, p,
                                      "at least one of \"hcaHandles\" and \"hcaObjects\" is required");
        return 0;
}

static int parse_rdma(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        static const OciJsonField value = { .fields = rdma_fields, .check = check_rdma };
        OciResources *res = dst;
        return oci_json_parse_map(v, p, sizeof(OciRdma), (void **) &res->rdma, &res->n_rdma, NULL,
                                  offsetof(OciRdma, device), &value, reterr);
}

/* unified: keys name files in the container's cgroup directory; refuse anything that could leave it. */
static int check_unified_key(const char *key, const OciJsonPath *p, char **reterr) {
        if (strchr(key, '/') || key[0] == '.')
                return oci_json_error(reterr, p, "not a cgroup file name");
        return 0;
}

static int parse_unified(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        OciResources *res = dst;
        return parse_string_map(v, p, &res->unified, &res->n_unified, check_unified_key, reterr);
}

const OciJsonField resources_fields[] = {
        FIELD_ARRAY("devices", parse_cgroup_device, OciResources, devices, n_devices, 0),
        FIELD_OBJECT_HAS("memory", memory_fields, check_memory, OciResources, memory, memory.present, 0),
        FIELD_OBJECT_HAS("cpu", cpu_fields, check_cpu, OciResources, cpu, cpu.present, 0),
        FIELD_OBJECT_HAS("pids", pids_fields, NULL, OciResources, pids, pids.present, 0),
        FIELD_OBJECT_HAS("blockIO", block_io_fields, check_block_io, OciResources, block_io,
                         block_io.present, 0),
        FIELD_ARRAY_OF("hugepageLimits", hugepage_limit_fields, NULL, OciResources, hugepage_limits,
                       n_hugepage_limits, 0),
        FIELD_OBJECT_HAS("network", network_fields, NULL, OciResources, network, network.present, 0),
        FIELD_SELF("rdma", parse_rdma, 0),
        FIELD_SELF("unified", parse_unified, 0),
        {},
};
