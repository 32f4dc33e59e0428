/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "macro.h"

/* getopt_long() keeps a pointer to the table between calls: it lives here, rebuilt alike on every call. */
static struct option long_options[CLI_OPTIONS_MAX + 2];

/* The getopt val of an option: its own, or for a stored long-only one (CLI_STORED) one made from its index. */
#define STORED_VAL_BASE 0x1000
static int option_val(const CliOption *opts, const CliOption *o) {
        return o->val == CLI_STORED ? STORED_VAL_BASE + (int) (o - opts) : o->val;
}

static const CliOption *find_option(const CliOption *opts, int val) {
        for (const CliOption *o = opts; o->val != 0; o++)
                if (option_val(opts, o) == val)
                        return o;
        return NULL;
}

const char *cli_option_name(const CliOption *opts, int val) {
        const CliOption *o = find_option(opts, val);
        return o ? o->name : NULL;
}

int cli_next_option(const char *verb, int argc, char *argv[], const char *shortopts, const CliOption *opts) {
        const CliOption *o;
        size_t n = 0;
        int c;

        for (o = opts; o->val != 0; o++) {
                assert(n < CLI_OPTIONS_MAX);
                if (o->name)
                        long_options[n++] =
                                (struct option){ o->name, o->has_arg, NULL, option_val(opts, o) };
        }
        long_options[n++] = (struct option){ "help", no_argument, NULL, 'h' };
        long_options[n] = (struct option){};

        while ((c = getopt_long(argc, argv, shortopts, long_options, NULL)) >= 0) {
                o = c == 'h' ? NULL : find_option(opts, c);
                if (!o) {
                        if (strncmp(shortopts, "+:", 2) == 0)
                                cli_bad_option_precise(verb, c, argv);
                        else
                                cli_bad_option(verb, c, argv);
                        return -EINVAL;
                }
                if (o->list) {
                        size_t k = 0;
                        while (*o->list && (*o->list)[k])
                                k++;
                        char **l = realloc(*o->list, (k + 2) * sizeof(char *));
                        if (!l)
                                return log_oom();
                        l[k] = optarg;
                        l[k + 1] = NULL;
                        *o->list = l;
                } else if (o->string)
                        *o->string = optarg;
                else if (o->flag)
                        *o->flag = true;
                else
                        return c;
        }
        return 0;
}
