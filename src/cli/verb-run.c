/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>

#include "cli.h"
#include "container.h"
#include "macro.h"

int verb_run(int argc, char *argv[]) {
        RunOptions o = {};
        _cleanup_free_ char *err = NULL;
        int r, status = EXIT_FAILURE;

        if (cli_parse_create_options("run", argc, argv, &o.create, &o.detach, &o.keep) < 0)
                return EXIT_FAILURE;
        log_set_context(o.create.id, NULL);
        r = container_run(&o, &status, &err);
        if (r < 0)
                return cli_runtime_error("run", o.create.id, r, err);
        return status;
}
