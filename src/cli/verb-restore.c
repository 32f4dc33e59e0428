/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "container.h"
#include "criu.h"
#include "macro.h"
#include "process-util.h"

int verb_restore(int argc, char *argv[]) {
        enum {
                ARG_PID_FILE = 0x100,
                ARG_CONSOLE_SOCKET,
                ARG_NO_SUBREAPER,
                ARG_NO_PIVOT,
        };
        static const struct option options[] = {
                CLI_CRIU_COMMON_OPTIONS,
                { "bundle", required_argument, NULL, 'b' },
                { "detach", no_argument, NULL, 'd' },
                { "pid-file", required_argument, NULL, ARG_PID_FILE },
                { "console-socket", required_argument, NULL, ARG_CONSOLE_SOCKET },
                { "no-subreaper", no_argument, NULL, ARG_NO_SUBREAPER },
                { "no-pivot", no_argument, NULL, ARG_NO_PIVOT },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        RestoreOptions o = { .root = arg_root };
        _cleanup_free_ char *err = NULL;
        _cleanup_close_ int pidfd = -EBADF;
        pid_t pid = 0;
        int c, r;

        o.common.criu = arg_criu;
        while ((c = getopt_long(argc, argv, "+b:dh", options, NULL)) >= 0) {
                switch (c) {
                case 'b':
                        o.bundle = optarg;
                        break;
                case 'd':
                        o.detach = true;
                        break;
                case ARG_PID_FILE:
                        o.pid_file = optarg;
                        break;
                case ARG_CONSOLE_SOCKET:
                        o.console_socket = optarg;
                        break;
                case ARG_NO_SUBREAPER:
                        o.no_subreaper = true;
                        break;
                case ARG_NO_PIVOT:
                        /* CRIU sets up the root itself; accepted as runc does, no effect. */
                        break;
                default:
                        if (cli_parse_criu_common_option("restore", c, argv, &o.common) < 0)
                                return EXIT_FAILURE;
                        break;
                }
        }
        if (cli_expect_id("restore", argc, argv, &o.id) < 0)
                return EXIT_FAILURE;
        log_set_context(o.id, NULL);
        r = container_restore(&o, o.detach ? NULL : &pid, o.detach ? NULL : &pidfd, &err);
        if (r < 0)
                return cli_runtime_error("restore", o.id, r, err);
        if (o.detach)
                return EXIT_SUCCESS;

        /* In the foreground, as `run` (and runc): wait for the restored init, then delete the container. */
        _cleanup_close_ int sfd = cli_block_forwarded_signals();
        int status = pidfd >= 0 ? cli_wait_forwarding_signals(pid, pidfd, sfd, -1) : 0;
        if (status < 0)
                status = 255;
        free(err);
        err = NULL;
        r = container_delete(o.root, o.id, true, &err);
        if (r < 0)
                log_warning_errno(r, "restore %s: delete: %s", o.id, err ?: strerror(-r));
        return status;
}
