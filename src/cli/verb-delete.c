/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "container.h"
#include "macro.h"

int verb_delete(int argc, char *argv[]) {
        _cleanup_free_ char *err = NULL;
        const char *id;
        bool force = false;
        const CliOption options[] = {
                { "force", no_argument, 'f', .flag = &force },
                {},
        };
        int r;

        if (cli_next_option("delete", argc, argv, "+fh", options) < 0 ||
            cli_expect_id("delete", argc, argv, &id) < 0)
                return EXIT_FAILURE;
        log_set_context(id, NULL);
        r = container_delete(arg_root, id, force, &err);
        if (r < 0) {
                /* runc: deleting a container that does not exist with --force is not an error. */
                if (force && r == -ENOENT)
                        return EXIT_SUCCESS;
                return cli_runtime_error("delete", id, r, err);
        }
        return EXIT_SUCCESS;
}
