/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "container.h"
#include "macro.h"

int cli_parse_id_only(const char *verb, int argc, char *argv[], const char **ret_id) {
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                {}
        };
        int c;

        while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0) {
                if (c == 'h') {
                        cli_print_verb_help(verb);
                        exit(EXIT_SUCCESS);
                }
                return cli_usage_error(verb, "unknown or incomplete option \"%s\"", argv[optind - 1]), -EINVAL;
        }
        if (cli_expect_args(verb, argc, argv, 1, 1, "container id") < 0)
                return -EINVAL;
        *ret_id = argv[optind];
        return 0;
}

int verb_start(int argc, char *argv[]) {
        _cleanup_free_ char *err = NULL;
        const char *id;
        int r;

        if (cli_parse_id_only("start", argc, argv, &id) < 0)
                return EXIT_FAILURE;
        log_set_context(id, NULL);
        r = container_start(arg_root, id, &err);
        if (r < 0) {
                log_error_errno(r, "start %s: %s", id, err ?: strerror(-r));
                return EXIT_FAILURE;
        }
        return EXIT_SUCCESS;
}
