/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "container-ops.h"
#include "json-util.h"
#include "macro.h"

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

static void emit(const cJSON *j, void *userdata) {
        _cleanup_free_ char *s = json_print(j);
        if (s) {
                printf("%s\n", s);
                fflush(stdout);
        }
}

int verb_events(int argc, char *argv[]) {
        EventsOptions o = { .root = arg_root, .interval_usec = 5 * USEC_PER_SEC, .emit = emit };
        const CliOption options[] = {
                { "stats", no_argument, 's', .flag = &o.stats_once },
                { "interval", required_argument, 'i' },
                {},
        };
        _cleanup_free_ char *err = NULL;
        int c, r;

        while ((c = cli_next_option("events", argc, argv, "h", options)) > 0)
                if (parse_duration(optarg, &o.interval_usec) < 0 || o.interval_usec == 0)
                        return cli_usage_error(
                                "events", "--interval: invalid duration \"%s\" (e.g. 5s, 500ms)", optarg);
        if (c < 0 || cli_expect_id("events", argc, argv, &o.id) < 0)
                return EXIT_FAILURE;
        r = container_events(&o, &err);
        if (r < 0)
                return cli_runtime_error("events", o.id, r, err);
        return EXIT_SUCCESS;
}
