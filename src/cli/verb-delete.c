/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "container.h"
#include "macro.h"
#include "strv.h"

static int delete_one(const char *id, bool force) {
        _cleanup_free_ char *err = NULL;

        log_set_context(id, NULL);
        int r = container_delete(arg_root, id, force, &err);
        /* runc: deleting a container that does not exist with --force is not an error. */
        if (r < 0 && !(force && r == -ENOENT))
                return cli_runtime_error("delete", id, r, err);
        return EXIT_SUCCESS;
}

int verb_delete(int argc, char *argv[]) {
        const char *id;
        bool force = false, regex = false;
        const CliOption options[] = {
                { "force", no_argument, 'f', .flag = &force },
                { "regex", no_argument, 'r', .flag = &regex }, /* crun's */
                {},
        };

        if (cli_next_option("delete", argc, argv, "frh", options) < 0 ||
            cli_expect_id("delete", argc, argv, &id) < 0)
                return EXIT_FAILURE;
        if (!regex)
                return delete_one(id, force);

        /* --regex: ID is a regular expression; every container it matches is deleted, each on its own. */
        _cleanup_(strv_freep) char **ids = NULL;
        _cleanup_free_ char *err = NULL;
        int r = container_match_ids(arg_root, id, &ids, &err), ret = EXIT_SUCCESS;
        if (r < 0)
                return cli_runtime_error("delete", id, r, err);
        for (char **i = ids; *i; i++)
                if (delete_one(*i, force) != EXIT_SUCCESS)
                        ret = EXIT_FAILURE;
        return ret;
}
