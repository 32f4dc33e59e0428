/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>

#include "cli.h"
#include "container-ops.h"
#include "macro.h"

static int do_freeze(const char *verb, int (*op)(const char *root, const char *id, char **reterr), int argc,
                     char *argv[]) {
        _cleanup_free_ char *err = NULL;
        const char *id;
        int r;

        if (cli_parse_id_only(verb, argc, argv, &id) < 0)
                return EXIT_FAILURE;
        log_set_context(id, NULL);
        r = op(arg_root, id, &err);
        if (r < 0)
                return cli_runtime_error(verb, id, r, err);
        return EXIT_SUCCESS;
}

int verb_pause(int argc, char *argv[]) {
        return do_freeze("pause", container_pause, argc, argv);
}

int verb_resume(int argc, char *argv[]) {
        return do_freeze("resume", container_resume, argc, argv);
}
