/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "container.h"
#include "macro.h"

int verb_create(int argc, char *argv[]) {
        CreateOptions o = {};
        _cleanup_free_ char *err = NULL;
        bool detach = false, keep = false;
        int r;

        if (cli_parse_create_options("create", argc, argv, &o, &detach, &keep) < 0)
                return EXIT_FAILURE;
        log_set_context(o.id, NULL);
        r = container_create(&o, NULL, NULL, &err);
        if (r < 0)
                return cli_runtime_error("create", o.id, r, err);
        return EXIT_SUCCESS;
}
