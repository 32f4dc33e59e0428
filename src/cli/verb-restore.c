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
#include "foreground.h"
#include "macro.h"
#include "process-util.h"

int verb_restore(int argc, char *argv[]) {
        enum {
                ARG_PID_FILE = 0x100,
                ARG_CONSOLE_SOCKET,
                ARG_NO_SUBREAPER,
                ARG_NO_PIVOT,
        };
        RestoreOptions o = { .root = arg_root, .common.criu = arg_criu };
        const CliOption options[] = {
                CLI_CRIU_COMMON_OPTIONS(&o.common),
                { "bundle", required_argument, 'b', .string = &o.bundle },
                { "detach", no_argument, 'd', .flag = &o.detach },
                { "pid-file", required_argument, ARG_PID_FILE, .string = &o.pid_file },
                { "console-socket", required_argument, ARG_CONSOLE_SOCKET, .string = &o.console_socket },
                { "no-subreaper", no_argument, ARG_NO_SUBREAPER, .flag = &o.no_subreaper },
                { "no-pivot", no_argument,
                  ARG_NO_PIVOT }, /* CRIU sets up the root itself: accepted as runc does */
                {},
        };
        _cleanup_free_ char *err = NULL;
        _cleanup_close_ int pidfd = -EBADF;
        pid_t pid = 0;
        int c, r;

        while ((c = cli_next_option("restore", argc, argv, "b:dh", options)) > 0)
                if (c == ARG_CRIU_MANAGE_CGROUPS_MODE &&
                    cli_parse_manage_cgroups_mode("restore", optarg, &o.common) < 0)
                        return EXIT_FAILURE;
        if (c < 0)
                return EXIT_FAILURE;
        if (cli_expect_id("restore", argc, argv, &o.id) < 0)
                return EXIT_FAILURE;
        log_set_context(o.id, NULL);
        r = container_restore(&o, o.detach ? NULL : &pid, o.detach ? NULL : &pidfd, &err);
        if (r < 0)
                return cli_runtime_error("restore", o.id, r, err);
        if (o.detach)
                return EXIT_SUCCESS;

        /* In the foreground, as `run` (and runc): wait for the restored init, then delete the container. */
        _cleanup_close_ int sfd = foreground_block_signals();
        int status = pidfd >= 0 ? foreground_wait(pid, pidfd, sfd, -1, NULL) : 0;
        if (status < 0)
                status = 255;
        free(err);
        err = NULL;
        r = container_delete(o.root, o.id, true, &err);
        if (r < 0)
                log_warning_errno(r, "restore %s: delete: %s", o.id, err ?: strerror(-r));
        return status;
}
