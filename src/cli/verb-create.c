/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "container.h"
#include "macro.h"

/* Shared by create and run: the options runc's create takes. */
int cli_parse_create_options(const char *verb, int argc, char *argv[], CreateOptions *o, bool *detach,
                             bool *keep) {
        enum {
                ARG_PID_FILE = 0x100,
                ARG_CONSOLE_SOCKET,
                ARG_NO_PIVOT,
                ARG_NO_NEW_KEYRING,
                ARG_PRESERVE_FDS,
                ARG_KEEP,
                ARG_NO_SUBREAPER,
                ARG_PIDFD_SOCKET,
        };
        const CliOption options[] = {
                { "bundle", required_argument, 'b', .string = &o->bundle },
                { "config", required_argument, 'f', .string = &o->config_file }, /* crun's */
                { "pid-file", required_argument, ARG_PID_FILE, .string = &o->pid_file },
                { "console-socket", required_argument, ARG_CONSOLE_SOCKET, .string = &o->console_socket },
                { "pidfd-socket", required_argument, ARG_PIDFD_SOCKET, .string = &o->pidfd_socket },
                { "no-pivot", no_argument, ARG_NO_PIVOT, .flag = &o->no_pivot },
                { "no-new-keyring", no_argument, ARG_NO_NEW_KEYRING, .flag = &o->no_new_keyring },
                { "preserve-fds", required_argument, ARG_PRESERVE_FDS },
                { "detach", no_argument, 'd' },
                { "keep", no_argument, ARG_KEEP },
                { "no-subreaper", no_argument, ARG_NO_SUBREAPER }, /* accepted, no effect */
                {},
        };
        bool is_run = streq(verb, "run");
        int c;

        while ((c = cli_next_option(verb, argc, argv, is_run ? "b:f:dh" : "b:f:h", options)) > 0) {
                switch (c) {
                case ARG_PRESERVE_FDS: {
                        char *end;
                        errno = 0;
                        unsigned long n = strtoul(optarg, &end, 10);
                        if (errno || *end || end == optarg || n > 65536 || optarg[0] == '-')
                                return cli_usage_error(verb, "--preserve-fds: invalid number \"%s\"",
                                                       optarg),
                                       -EINVAL;
                        o->preserve_fds = (unsigned) n;
                        break;
                }
                case 'd':
                        if (!is_run)
                                return cli_usage_error(verb, "unknown option --detach"), -EINVAL;
                        *detach = true;
                        break;
                case ARG_KEEP:
                        if (!is_run)
                                return cli_usage_error(verb, "unknown option --keep"), -EINVAL;
                        *keep = true;
                        break;
                }
        }
        if (c < 0)
                return -EINVAL;
        if (cli_expect_id(verb, argc, argv, &o->id) < 0)
                return -EINVAL;
        o->root = arg_root;
        o->keep_unit = arg_keep_unit;
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
