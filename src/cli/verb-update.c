/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup-props.h"
#include "cgroup-util.h"
#include "cli.h"
#include "fileio.h"
#include "json-util.h"
#include "macro.h"
#include "oci-config.h"
#include "rootless.h"
#include "sdunit.h"
#include "state.h"

/* Set obj.path[0].path[1]... = number, creating the objects on the way. */
static int json_set_number(cJSON *root, const char *a, const char *b, double v) {
        cJSON *o = cJSON_GetObjectItemCaseSensitive(root, a);
        if (!o && !(o = cJSON_AddObjectToObject(root, a)))
                return -ENOMEM;
        cJSON_DeleteItemFromObjectCaseSensitive(o, b);
        return cJSON_AddNumberToObject(o, b, v) ? 0 : -ENOMEM;
}

static int json_set_string(cJSON *root, const char *a, const char *b, const char *v) {
        cJSON *o = cJSON_GetObjectItemCaseSensitive(root, a);
        if (!o && !(o = cJSON_AddObjectToObject(root, a)))
                return -ENOMEM;
        cJSON_DeleteItemFromObjectCaseSensitive(o, b);
        return cJSON_AddStringToObject(o, b, v) ? 0 : -ENOMEM;
}

/* Numbers as runc's update takes them; memory sizes may carry k/m/g suffixes, -1 means unlimited. */
static int parse_number(const char *opt, const char *s, bool size, double *ret) {
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (errno || end == s)
                goto bad;
        if (size && *end) {
                long long mul = 1;
                switch (*end | 0x20) {
                case 'k': mul = 1024LL; break;
                case 'm': mul = 1024LL * 1024; break;
                case 'g': mul = 1024LL * 1024 * 1024; break;
                case 't': mul = 1024LL * 1024 * 1024 * 1024; break;
                default: goto bad;
                }
                end++;
                if ((*end | 0x20) == 'b')
                        end++;
                v *= mul;
        }
        if (*end)
                goto bad;
        *ret = (double) v;
        return 0;
bad:
        log_error("update: %s: invalid value \"%s\"", opt, s);
        return -EINVAL;
}

int verb_update(int argc, char *argv[]) {
        enum { ARG_RESOURCES = 0x100, ARG_MEMORY, ARG_MEMORY_SWAP, ARG_MEMORY_RESERVATION, ARG_CPU_SHARES,
               ARG_CPU_QUOTA, ARG_CPU_PERIOD, ARG_CPUSET_CPUS, ARG_CPUSET_MEMS, ARG_PIDS_LIMIT, ARG_BLKIO_WEIGHT };
        static const struct option options[] = {
                { "resources", required_argument, NULL, 'r' },
                { "memory", required_argument, NULL, ARG_MEMORY },
                { "memory-swap", required_argument, NULL, ARG_MEMORY_SWAP },
                { "memory-reservation", required_argument, NULL, ARG_MEMORY_RESERVATION },
                { "cpu-shares", required_argument, NULL, ARG_CPU_SHARES },
                { "cpu-quota", required_argument, NULL, ARG_CPU_QUOTA },
                { "cpu-period", required_argument, NULL, ARG_CPU_PERIOD },
                { "cpuset-cpus", required_argument, NULL, ARG_CPUSET_CPUS },
                { "cpuset-mems", required_argument, NULL, ARG_CPUSET_MEMS },
                { "pids-limit", required_argument, NULL, ARG_PIDS_LIMIT },
                { "blkio-weight", required_argument, NULL, ARG_BLKIO_WEIGHT },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        _cleanup_json_ cJSON *res = cJSON_CreateObject();
        _cleanup_json_ cJSON *doc = NULL;
        const char *resources_file = NULL;
        double v;
        int c, r = 0;

        if (!res)
                return log_oom(), EXIT_FAILURE;
        while ((c = getopt_long(argc, argv, "+r:h", options, NULL)) >= 0) {
                switch (c) {
                case 'r':
                        resources_file = optarg;
                        break;
                case ARG_MEMORY:
                        r = parse_number("--memory", optarg, true, &v) ?: json_set_number(res, "memory", "limit", v);
                        break;
                case ARG_MEMORY_SWAP:
                        r = parse_number("--memory-swap", optarg, true, &v) ?: json_set_number(res, "memory", "swap", v);
                        break;
                case ARG_MEMORY_RESERVATION:
                        r = parse_number("--memory-reservation", optarg, true, &v)
                                ?: json_set_number(res, "memory", "reservation", v);
                        break;
                case ARG_CPU_SHARES:
                        r = parse_number("--cpu-shares", optarg, false, &v) ?: json_set_number(res, "cpu", "shares", v);
                        break;
                case ARG_CPU_QUOTA:
                        r = parse_number("--cpu-quota", optarg, false, &v) ?: json_set_number(res, "cpu", "quota", v);
                        break;
                case ARG_CPU_PERIOD:
                        r = parse_number("--cpu-period", optarg, false, &v) ?: json_set_number(res, "cpu", "period", v);
                        break;
                case ARG_CPUSET_CPUS:
                        r = json_set_string(res, "cpu", "cpus", optarg);
                        break;
                case ARG_CPUSET_MEMS:
                        r = json_set_string(res, "cpu", "mems", optarg);
                        break;
                case ARG_PIDS_LIMIT:
                        r = parse_number("--pids-limit", optarg, false, &v) ?: json_set_number(res, "pids", "limit", v);
                        break;
                case ARG_BLKIO_WEIGHT:
                        r = parse_number("--blkio-weight", optarg, false, &v) ?: json_set_number(res, "blockIO", "weight", v);
                        break;
                case 'h':
                        cli_print_verb_help("update");
                        return EXIT_SUCCESS;
                default:
                        return cli_usage_error("update", "unknown or incomplete option \"%s\"", argv[optind - 1]);
                }
                if (r < 0)
                        return EXIT_FAILURE;
        }
        if (cli_expect_args("update", argc, argv, 1, 1, "container id") < 0)
                return EXIT_FAILURE;
        const char *id = argv[optind];
        log_set_context(id, NULL);

        if (resources_file) {
                _cleanup_free_ char *buf = NULL;
                _cleanup_json_ cJSON *from_file = NULL;
                size_t len = 0;
                r = read_full_file_at(AT_FDCWD, streq(resources_file, "-") ? "/dev/stdin" : resources_file, 4U << 20,
                                      &buf, &len);
                if (r < 0)
                        return log_error_errno(r, "update: --resources: read \"%s\": %m", resources_file), EXIT_FAILURE;
                if (json_parse(buf, len, &from_file, NULL) < 0 || !cJSON_IsObject(from_file))
                        return log_error("update: --resources: \"%s\" is not a JSON object", resources_file),
                               EXIT_FAILURE;
                /* The flags override the file, as in runc. */
                cJSON *item;
                cJSON_ArrayForEach(item, res) {
                        cJSON *dst = cJSON_GetObjectItemCaseSensitive(from_file, item->string);
                        if (!cJSON_IsObject(dst)) {
                                cJSON_DeleteItemFromObjectCaseSensitive(from_file, item->string);
                                cJSON_AddItemToObject(from_file, item->string, cJSON_Duplicate(item, true));
                                continue;
                        }
                        cJSON *leaf;
                        cJSON_ArrayForEach(leaf, item) {
                                cJSON_DeleteItemFromObjectCaseSensitive(dst, leaf->string);
                                cJSON_AddItemToObject(dst, leaf->string, cJSON_Duplicate(leaf, true));
                        }
                }
                cJSON_Delete(res);
                res = TAKE_PTR(from_file);
        }
        if (!res->child)
                return cli_usage_error("update", "nothing to update: give --resources or a resource option");

        /* Parsed by the same strict parser as config.json: errors name linux.resources.<field>. */
        doc = cJSON_CreateObject();
        cJSON *linux_ = doc ? cJSON_AddObjectToObject(doc, "linux") : NULL;
        cJSON *root = doc ? cJSON_AddObjectToObject(doc, "root") : NULL;
        if (!linux_ || !root || !cJSON_AddStringToObject(doc, "ociVersion", "1.3.0") ||
            !cJSON_AddStringToObject(root, "path", "rootfs"))
                return log_oom(), EXIT_FAILURE;
        cJSON_AddItemToObject(linux_, "resources", TAKE_PTR(res));
        _cleanup_free_ char *text = json_print(doc);
        _cleanup_(oci_config_freep) OciConfig *cfg = NULL;
        _cleanup_free_ char *err = NULL;
        if (!text)
                return log_oom(), EXIT_FAILURE;
        r = oci_config_parse(text, strlen(text), &cfg, &err);
        if (r < 0)
                return log_error_errno(r, "update %s: %s", id, err ?: strerror(-r)), EXIT_FAILURE;

        _cleanup_(container_freep) Container *ct = NULL;
        r = container_load(arg_root, id, CONTAINER_LOCK_EXCLUSIVE, &ct, &err);
        if (r < 0)
                return log_error_errno(r, "update %s: %s", id, err ?: strerror(-r)), EXIT_FAILURE;
        ContainerStatus st = container_status(ct);
        if (st == CONTAINER_STOPPED || !ct->unit || !ct->cgroup)
                return log_error("update %s: container not running (%s)", id, container_status_to_string(st)), EXIT_FAILURE;

        CgroupLayout layout;
        _cleanup_(unit_property_list_done) UnitPropertyList props = {};
        _cleanup_(cgroup_file_writes_done) CgroupFileWrites writes = {};
        r = cgroup_detect_layout(&layout);
        if (r >= 0)
                r = cgroup_props_from_resources(&cfg->linux_.resources, layout, &props, &writes, &err);
        if (r >= 0)
                r = cgroup_props_add_default_devices(&props, &writes);
        if (r < 0)
                return log_error_errno(r, "update %s: %s", id, err ?: strerror(-r)), EXIT_FAILURE;

        _cleanup_(sdunit_bus_closep) SdUnitBus *bus = NULL;
        r = sdunit_bus_open(ct->user_bus, &bus, &err);
        /* A user manager applies only the controllers it has delegated: warn about the rest. */
        if (r >= 0 && ct->user_bus)
                r = rootless_filter_resources(bus, layout, &props, &err);
        if (r >= 0 && props.n_items > 0)
                r = sdunit_set_properties(bus, ct->unit, &props, &err);
        if (r >= 0 && writes.n_items > 0)
                r = cgroup_apply_file_writes(&writes, ct->cgroup, layout, &err);
        if (r < 0)
                return log_error_errno(r, "update %s: %s", id, err ?: strerror(-r)), EXIT_FAILURE;
        return EXIT_SUCCESS;
}
