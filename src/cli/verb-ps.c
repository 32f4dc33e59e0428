/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "container-ops.h"
#include "macro.h"

int verb_ps(int argc, char *argv[]) {
        static const CliOption options[] = {
                { "format", required_argument, 'f' },
                {},
        };
        _cleanup_free_ char *err = NULL;
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;
        bool json = false;
        int c, r;

        while ((c = cli_next_option("ps", argc, argv, "+f:h", options)) > 0)
                if (cli_parse_format("ps", optarg, &json) < 0)
                        return EXIT_FAILURE;
        if (c < 0 || cli_expect_args("ps", argc, argv, 1, -1, "container id") < 0)
                return EXIT_FAILURE;
        const char *id = argv[optind];
        r = container_pids(arg_root, id, &pids, &n, &err);
        if (r < 0)
                return cli_runtime_error("ps", id, r, err);
        if (json) {
                printf("[");
                for (size_t i = 0; i < n; i++)
                        printf("%s%d", i ? "," : "", (int) pids[i]);
                printf("]\n");
                return EXIT_SUCCESS;
        }
        /* The table is ps(1)'s (default -ef), its rows filtered to the container's pids. */
        r = ps_table_write(argv + optind + 1, pids, n, stdout, &err);
        if (r < 0)
                return cli_runtime_error("ps", id, r, err);
        return r == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
