/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "criu.h"
#include "macro.h"

int cli_parse_criu_common_option(const char *verb, int c, char *argv[], CriuCommonOptions *o) {
        static const char *const modes[] = { "soft", "full", "strict", "ignore" };
        const char *arg = optarg;

        switch (c) {
        case ARG_CRIU_IMAGE_PATH:
                o->image_path = arg;
                return 1;
        case ARG_CRIU_WORK_PATH:
                o->work_path = arg;
                return 1;
        case ARG_CRIU_TCP_ESTABLISHED:
                o->tcp_established = true;
                return 1;
        case ARG_CRIU_EXT_UNIX_SK:
                o->ext_unix_sk = true;
                return 1;
        case ARG_CRIU_SHELL_JOB:
                o->shell_job = true;
                return 1;
        case ARG_CRIU_FILE_LOCKS:
                o->file_locks = true;
                return 1;
        case ARG_CRIU_LAZY_PAGES:
                o->lazy_pages = true;
                return 1;
        case ARG_CRIU_MANAGE_CGROUPS_MODE:
                FOREACH_ARRAY(m, modes, ELEMENTSOF(modes))
                        if (streq(*m, arg)) {
                                o->manage_cgroups_mode = *m;
                                return 1;
                        }
                cli_usage_error(verb, "--manage-cgroups-mode: unknown mode \"%s\" (soft, full, strict or ignore)", arg);
                return -EINVAL;
        default:
                return cli_bad_option(verb, c, argv), -EINVAL;
        }
}

int verb_checkpoint(int argc, char *argv[]) {
        enum {
                ARG_PARENT_PATH = 0x100,
                ARG_LEAVE_RUNNING,
                ARG_PAGE_SERVER,
                ARG_PRE_DUMP,
                ARG_EMPTY_NS,
                ARG_AUTO_DEDUP,
        };
        static const struct option options[] = {
                CLI_CRIU_COMMON_OPTIONS,
                { "parent-path", required_argument, NULL, ARG_PARENT_PATH },
                { "leave-running", no_argument, NULL, ARG_LEAVE_RUNNING },
                { "page-server", required_argument, NULL, ARG_PAGE_SERVER },
                { "pre-dump", no_argument, NULL, ARG_PRE_DUMP },
                { "empty-ns", required_argument, NULL, ARG_EMPTY_NS },
                { "auto-dedup", no_argument, NULL, ARG_AUTO_DEDUP },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        CheckpointOptions o = { .root = arg_root };
        _cleanup_free_ char *err = NULL;
        int c, r;

        o.common.criu = arg_criu;
        while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0) {
                switch (c) {
                case ARG_PARENT_PATH:
                        o.parent_path = optarg;
                        break;
                case ARG_LEAVE_RUNNING:
                        o.leave_running = true;
                        break;
                case ARG_PAGE_SERVER:
                        o.page_server = optarg;
                        break;
                case ARG_PRE_DUMP:
                        o.pre_dump = true;
                        break;
                case ARG_EMPTY_NS:
                        if (!streq(optarg, "network"))
                                return cli_usage_error("checkpoint", "--empty-ns: only \"network\" is supported, got \"%s\"",
                                                       optarg);
                        o.empty_ns_network = true;
                        break;
                case ARG_AUTO_DEDUP:
                        o.auto_dedup = true;
                        break;
                default:
                        if (cli_parse_criu_common_option("checkpoint", c, argv, &o.common) < 0)
                                return EXIT_FAILURE;
                        break;
                }
        }
        if (cli_expect_id("checkpoint", argc, argv, &o.id) < 0)
                return EXIT_FAILURE;
        log_set_context(o.id, NULL);
        r = container_checkpoint(&o, &err);
        if (r < 0)
                return cli_runtime_error("checkpoint", o.id, r, err);
        return EXIT_SUCCESS;
}
