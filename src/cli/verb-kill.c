/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <ctype.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "container.h"
#include "macro.h"
#include "strv.h"

int verb_kill(int argc, char *argv[]) {
        _cleanup_free_ char *err = NULL;
        bool all = false, regex = false;
        const CliOption options[] = {
                { "all", no_argument, 'a', .flag = &all },
                { "regex", no_argument, 'r', .flag = &regex }, /* crun's */
                {},
        };
        int sig = SIGTERM, r;

        if (cli_next_option("kill", argc, argv, "arh", options) < 0 ||
            cli_expect_args("kill", argc, argv, 1, 2, "container id") < 0)
                return EXIT_FAILURE;
        const char *id = argv[optind];
        if (optind + 1 < argc) {
                sig = cli_parse_signal(argv[optind + 1]);
                if (sig < 0)
                        return cli_usage_error("kill", "invalid signal \"%s\"", argv[optind + 1]);
        }
        if (!regex) {
                log_set_context(id, NULL);
                r = container_kill(arg_root, id, sig, all, &err);
                if (r < 0)
                        return cli_runtime_error("kill", id, r, err);
                return EXIT_SUCCESS;
        }

        /* --regex: ID is a regular expression; every container it matches gets the signal. */
        _cleanup_(strv_freep) char **ids = NULL;
        int ret = EXIT_SUCCESS;
        r = container_match_ids(arg_root, id, &ids, &err);
        if (r < 0)
                return cli_runtime_error("kill", id, r, err);
        for (char **i = ids; *i; i++) {
                _cleanup_free_ char *e = NULL;
                log_set_context(*i, NULL);
                r = container_kill(arg_root, *i, sig, all, &e);
                if (r < 0)
                        ret = cli_runtime_error("kill", *i, r, e);
        }
        return ret;
}
