/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "container.h"
#include "json-util.h"
#include "macro.h"

static void print_table(const ContainerList *l, bool quiet) {
        if (!quiet)
                printf("%-12s %-10s %-10s %-40s %-30s %s\n", "ID", "PID", "STATUS", "BUNDLE", "CREATED",
                       "OWNER");
        for (size_t i = 0; i < l->n; i++) {
                const ContainerListEntry *x = &l->entries[i];
                const Container *ct = x->ct;
                if (quiet)
                        printf("%s\n", ct->id);
                else if (ct->corrupt) /* listed with its problem: `delete --force` removes it */
                        printf("%-12s %-10d %-10s %-40s %-30s %s\n", ct->id, 0, "unknown",
                               "(state.json is corrupt)", "", "");
                else
                        printf("%-12s %-10d %-10s %-40s %-30s %s\n", ct->id, (int) x->pid,
                               container_status_to_string(x->status), strempty(ct->bundle),
                               strempty(ct->created), strempty(ct->owner));
        }
}

int verb_list(int argc, char *argv[]) {
        bool quiet = false, json = false;
        const CliOption options[] = {
                { "quiet", no_argument, 'q', .flag = &quiet },
                { "format", required_argument, 'f' },
                {},
        };
        _cleanup_(container_list_done) ContainerList l = {};
        _cleanup_free_ char *err = NULL;
        int c, r;

        while ((c = cli_next_option("list", argc, argv, "qf:h", options)) > 0)
                if (cli_parse_format("list", optarg, &json) < 0)
                        return EXIT_FAILURE;
        if (c < 0 || cli_expect_args("list", argc, argv, 0, 0, "") < 0)
                return EXIT_FAILURE;

        r = container_list(arg_root, &l, &err);
        if (r < 0) {
                log_error_errno(r, "list: %s", err ?: strerror(-r));
                return EXIT_FAILURE;
        }
        if (!json || quiet)
                print_table(&l, quiet);
        if (!json)
                return EXIT_SUCCESS;
        /* One line, as runc's encoder writes it (runc's list.bats matches the line); empty after --quiet's
         * ids. */
        const ContainerList none = {};
        _cleanup_json_ cJSON *arr = NULL;
        _cleanup_free_ char *s = NULL;
        if (container_list_json(quiet ? &none : &l, &arr) < 0 || !(s = cJSON_PrintUnformatted(arr))) {
                log_oom();
                return EXIT_FAILURE;
        }
        printf("%s\n", s);
        return EXIT_SUCCESS;
}
