/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "container-ops.h"
#include "fileio.h"
#include "json-util.h"
#include "macro.h"

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
                case 'k':
                        mul = 1024LL;
                        break;
                case 'm':
                        mul = 1024LL * 1024;
                        break;
                case 'g':
                        mul = 1024LL * 1024 * 1024;
                        break;
                case 't':
                        mul = 1024LL * 1024 * 1024 * 1024;
                        break;
                default:
                        goto bad;
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
        log_error("update: --%s: invalid value \"%s\"", opt, s);
        return -EINVAL;
}

/* --resources FILE|-: the linux.resources object in it. */
static int read_resources(const char *file, cJSON **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int r;

        r = read_full_file_at(AT_FDCWD, streq(file, "-") ? "/dev/stdin" : file, 4U << 20, &buf, &len);
        if (r < 0)
                return log_error_errno(r, "update: --resources: read \"%s\": %m", file);
        if (json_parse(buf, len, ret, NULL) < 0 || !cJSON_IsObject(*ret))
                return log_error("update: --resources: \"%s\" is not a JSON object", file), -EINVAL;
        return 0;
}

/* The flags that set one resource each: their getopt value is 0x100 + the UpdateField they set. */
#define ARG_FIELD(f) (0x100 + (f))

int verb_update(int argc, char *argv[]) {
        UpdateOptions o = { .root = arg_root };
        _cleanup_json_ cJSON *resources = NULL;
        _cleanup_free_ char *err = NULL;
        const char *resources_file = NULL;
        const CliOption options[] = {
                { "resources", required_argument, 'r', .string = &resources_file },
                { "memory", required_argument, ARG_FIELD(UPDATE_MEMORY_LIMIT) },
                { "memory-swap", required_argument, ARG_FIELD(UPDATE_MEMORY_SWAP) },
                { "memory-reservation", required_argument, ARG_FIELD(UPDATE_MEMORY_RESERVATION) },
                { "cpu-shares", required_argument, ARG_FIELD(UPDATE_CPU_SHARES) },
                { "cpu-quota", required_argument, ARG_FIELD(UPDATE_CPU_QUOTA) },
                { "cpu-period", required_argument, ARG_FIELD(UPDATE_CPU_PERIOD) },
                { "cpuset-cpus", required_argument, ARG_FIELD(UPDATE_CPU_CPUS) },
                { "cpuset-mems", required_argument, ARG_FIELD(UPDATE_CPU_MEMS) },
                { "pids-limit", required_argument, ARG_FIELD(UPDATE_PIDS_LIMIT) },
                { "blkio-weight", required_argument, ARG_FIELD(UPDATE_BLOCKIO_WEIGHT) },
                {},
        };
        int c, r;

        while ((c = cli_next_option("update", argc, argv, "r:h", options)) > 0) {
                UpdateField f = c - ARG_FIELD(0);
                UpdateValue *v = &o.values[f];
                if (update_field_is_string(f))
                        v->string = optarg;
                else if (parse_number(cli_option_name(options, c), optarg, f <= UPDATE_MEMORY_RESERVATION,
                                      &v->number) < 0)
                        return EXIT_FAILURE;
                v->set = true;
        }
        if (c < 0)
                return EXIT_FAILURE;
        if (cli_expect_id("update", argc, argv, &o.id) < 0)
                return EXIT_FAILURE;
        log_set_context(o.id, NULL);

        if (resources_file && read_resources(resources_file, &resources) < 0)
                return EXIT_FAILURE;
        o.resources = resources;
        if (update_options_empty(&o))
                return cli_usage_error("update", "nothing to update: give --resources or a resource option");

        r = container_update(&o, &err);
        if (r < 0)
                return cli_runtime_error("update", o.id, r, err);
        return EXIT_SUCCESS;
}
