/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "criu.h"
#include "macro.h"

int cli_parse_manage_cgroups_mode(const char *verb, const char *value, const char **ret) {
        static const char *const modes[] = { "soft", "full", "strict", "ignore" };

        FOREACH_ARRAY(m, modes, ELEMENTSOF(modes))
                if (streq(*m, value)) {
                        *ret = *m;
                        return 0;
                }
        cli_usage_error(verb, "--manage-cgroups-mode: unknown mode \"%s\" (soft, full, strict or ignore)", value);
        return -EINVAL;
}

int verb_checkpoint(int argc, char *argv[]) {
        enum {
                ARG_IMAGE_PATH = 0x100,
                ARG_WORK_PATH,
                ARG_PARENT_PATH,
                ARG_LEAVE_RUNNING,
                ARG_TCP_ESTABLISHED,
                ARG_EXT_UNIX_SK,
                ARG_SHELL_JOB,
                ARG_LAZY_PAGES,
                ARG_PAGE_SERVER,
                ARG_FILE_LOCKS,
                ARG_PRE_DUMP,
                ARG_MANAGE_CGROUPS_MODE,
                ARG_EMPTY_NS,
                ARG_AUTO_DEDUP,
        };
        static const struct option options[] = {
                { "image-path", required_argument, NULL, ARG_IMAGE_PATH },
                { "work-path", required_argument, NULL, ARG_WORK_PATH },
                { "parent-path", required_argument, NULL, ARG_PARENT_PATH },
                { "leave-running", no_argument, NULL, ARG_LEAVE_RUNNING },
                { "tcp-established", no_argument, NULL, ARG_TCP_ESTABLISHED },
                { "ext-unix-sk", no_argument, NULL, ARG_EXT_UNIX_SK },
                { "shell-job", no_argument, NULL, ARG_SHELL_JOB },
                { "lazy-pages", no_argument, NULL, ARG_LAZY_PAGES },
                { "page-server", required_argument, NULL, ARG_PAGE_SERVER },
                { "file-locks", no_argument, NULL, ARG_FILE_LOCKS },
                { "pre-dump", no_argument, NULL, ARG_PRE_DUMP },
                { "manage-cgroups-mode", required_argument, NULL, ARG_MANAGE_CGROUPS_MODE },
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
                case ARG_IMAGE_PATH:
                        o.common.image_path = optarg;
                        break;
                case ARG_WORK_PATH:
                        o.common.work_path = optarg;
                        break;
                case ARG_PARENT_PATH:
                        o.parent_path = optarg;
                        break;
                case ARG_LEAVE_RUNNING:
                        o.leave_running = true;
                        break;
                case ARG_TCP_ESTABLISHED:
                        o.common.tcp_established = true;
                        break;
                case ARG_EXT_UNIX_SK:
                        o.common.ext_unix_sk = true;
                        break;
                case ARG_SHELL_JOB:
                        o.common.shell_job = true;
                        break;
                case ARG_LAZY_PAGES:
                        o.common.lazy_pages = true;
                        break;
                case ARG_PAGE_SERVER:
                        o.page_server = optarg;
                        break;
                case ARG_FILE_LOCKS:
                        o.common.file_locks = true;
                        break;
                case ARG_PRE_DUMP:
                        o.pre_dump = true;
                        break;
                case ARG_MANAGE_CGROUPS_MODE:
                        if (cli_parse_manage_cgroups_mode("checkpoint", optarg, &o.common.manage_cgroups_mode) < 0)
                                return EXIT_FAILURE;
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
                case 'h':
                        cli_print_verb_help("checkpoint");
                        return EXIT_SUCCESS;
                default:
                        return cli_usage_error("checkpoint", "unknown or incomplete option \"%s\"", argv[optind - 1]);
                }
        }
        if (cli_expect_args("checkpoint", argc, argv, 1, 1, "container id") < 0)
                return EXIT_FAILURE;
        o.id = argv[optind];
        log_set_context(o.id, NULL);
        r = container_checkpoint(&o, &err);
        if (r < 0) {
                log_error_errno(r, "checkpoint %s: %s", o.id, err ?: strerror(-r));
                return EXIT_FAILURE;
        }
        return EXIT_SUCCESS;
}
