/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "criu.h"
#include "macro.h"

int verb_checkpoint(int argc, char *argv[]) {
        enum {
                ARG_PARENT_PATH = 0x100,
                ARG_LEAVE_RUNNING,
                ARG_PAGE_SERVER,
                ARG_PRE_DUMP,
                ARG_EMPTY_NS,
                ARG_AUTO_DEDUP,
        };
        CheckpointOptions o = { .root = arg_root, .common.criu = arg_criu };
        const CliOption options[] = {
                CLI_CRIU_COMMON_OPTIONS(&o.common),
                { "parent-path", required_argument, ARG_PARENT_PATH, .string = &o.parent_path },
                { "leave-running", no_argument, ARG_LEAVE_RUNNING, .flag = &o.leave_running },
                { "page-server", required_argument, ARG_PAGE_SERVER, .string = &o.page_server },
                { "pre-dump", no_argument, ARG_PRE_DUMP, .flag = &o.pre_dump },
                { "empty-ns", required_argument, ARG_EMPTY_NS },
                { "auto-dedup", no_argument, ARG_AUTO_DEDUP, .flag = &o.auto_dedup },
                {},
        };
        _cleanup_free_ char *err = NULL;
        int c, r;

        while ((c = cli_next_option("checkpoint", argc, argv, "h", options)) > 0) {
                if (c == ARG_CRIU_MANAGE_CGROUPS_MODE &&
                    cli_parse_manage_cgroups_mode("checkpoint", optarg, &o.common) < 0)
                        return EXIT_FAILURE;
                if (c == ARG_EMPTY_NS && !streq(optarg, "network"))
                        return cli_usage_error("checkpoint",
                                               "--empty-ns: only \"network\" is supported, got \"%s\"",
                                               optarg);
                if (c == ARG_EMPTY_NS)
                        o.empty_ns_network = true;
        }
        if (c < 0)
                return EXIT_FAILURE;
        if (cli_expect_id("checkpoint", argc, argv, &o.id) < 0)
                return EXIT_FAILURE;
        log_set_context(o.id, NULL);
        r = container_checkpoint(&o, &err);
        if (r < 0)
                return cli_runtime_error("checkpoint", o.id, r, err);
        return EXIT_SUCCESS;
}
