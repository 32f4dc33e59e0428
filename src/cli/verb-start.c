/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "container.h"
#include "macro.h"

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
