/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "container.h"
#include "macro.h"

int cli_parse_id_only(const char *verb, int argc, char *argv[], const char **ret_id) {
        static const CliOption options[] = { {} };

        if (cli_next_option(verb, argc, argv, "h", options) < 0)
                return -EINVAL;
        return cli_expect_id(verb, argc, argv, ret_id);
}

int verb_start(int argc, char *argv[]) {
        _cleanup_free_ char *err = NULL;
        const char *id;
        int r;

        if (cli_parse_id_only("start", argc, argv, &id) < 0)
                return EXIT_FAILURE;
        log_set_context(id, NULL);
        r = container_start(arg_root, id, &err);
        if (r < 0)
                return cli_runtime_error("start", id, r, err);
        return EXIT_SUCCESS;
}
