/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "container.h"
#include "macro.h"

int verb_delete(int argc, char *argv[]) {
        static const struct option options[] = {
                { "force", no_argument, NULL, 'f' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        _cleanup_free_ char *err = NULL;
        bool force = false;
        int c, r;

        while ((c = getopt_long(argc, argv, "+fh", options, NULL)) >= 0) {
                switch (c) {
                case 'f':
                        force = true;
                        break;
                case 'h':
                        cli_print_verb_help("delete");
                        return EXIT_SUCCESS;
                default:
                        return cli_usage_error("delete", "unknown or incomplete option \"%s\"", argv[optind - 1]);
                }
        }
        if (cli_expect_args("delete", argc, argv, 1, 1, "container id") < 0)
                return EXIT_FAILURE;
        const char *id = argv[optind];
        log_set_context(id, NULL);
        r = container_delete(arg_root, id, force, &err);
        if (r < 0) {
                /* runc: deleting a container that does not exist with --force is not an error. */
                if (force && r == -ENOENT)
                        return EXIT_SUCCESS;
                log_error_errno(r, "delete %s: %s", id, err ?: strerror(-r));
                return EXIT_FAILURE;
        }
        return EXIT_SUCCESS;
}
