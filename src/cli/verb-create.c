/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "container.h"
#include "macro.h"

/* Shared by create and run: the options runc's create takes. */
int cli_parse_create_options(const char *verb, int argc, char *argv[], CreateOptions *o, bool *detach, bool *keep) {
        enum { ARG_BUNDLE = 0x100, ARG_PID_FILE, ARG_CONSOLE_SOCKET, ARG_NO_PIVOT, ARG_NO_NEW_KEYRING,
               ARG_PRESERVE_FDS, ARG_DETACH, ARG_KEEP, ARG_NO_SUBREAPER };
        static const struct option create_options[] = {
                { "bundle", required_argument, NULL, 'b' },
                { "pid-file", required_argument, NULL, ARG_PID_FILE },
                { "console-socket", required_argument, NULL, ARG_CONSOLE_SOCKET },
                { "no-pivot", no_argument, NULL, ARG_NO_PIVOT },
                { "no-new-keyring", no_argument, NULL, ARG_NO_NEW_KEYRING },
                { "preserve-fds", required_argument, NULL, ARG_PRESERVE_FDS },
                { "detach", no_argument, NULL, 'd' },
                { "keep", no_argument, NULL, ARG_KEEP },
                { "no-subreaper", no_argument, NULL, ARG_NO_SUBREAPER },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        bool is_run = streq(verb, "run");
        int c;

        while ((c = getopt_long(argc, argv, is_run ? "+b:dh" : "+b:h", create_options, NULL)) >= 0) {
                switch (c) {
                case 'b':
                        o->bundle = optarg;
                        break;
                case ARG_PID_FILE:
                        o->pid_file = optarg;
                        break;
                case ARG_CONSOLE_SOCKET:
                        o->console_socket = optarg;
                        break;
                case ARG_NO_PIVOT:
                        o->no_pivot = true;
                        break;
                case ARG_NO_NEW_KEYRING:
                        o->no_new_keyring = true;
                        break;
                case ARG_PRESERVE_FDS: {
                        char *end;
                        errno = 0;
                        unsigned long n = strtoul(optarg, &end, 10);
                        if (errno || *end || end == optarg || n > 65536 || optarg[0] == '-')
                                return cli_usage_error(verb, "--preserve-fds: invalid number \"%s\"", optarg), -EINVAL;
                        o->preserve_fds = (unsigned) n;
                        break;
                }
                case 'd':
                case ARG_DETACH:
                        if (!is_run)
                                return cli_usage_error(verb, "unknown option --detach"), -EINVAL;
                        *detach = true;
                        break;
                case ARG_KEEP:
                        if (!is_run)
                                return cli_usage_error(verb, "unknown option --keep"), -EINVAL;
                        *keep = true;
                        break;
                case ARG_NO_SUBREAPER:
                        break;
                default:
                        return cli_bad_option(verb, c, argv), -EINVAL;
                }
        }
        if (cli_expect_id(verb, argc, argv, &o->id) < 0)
                return -EINVAL;
        o->root = arg_root;
        return 0;
}

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
