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
                ARG_IMAGE_PATH = 0x100,
                ARG_WORK_PATH,
                ARG_TCP_ESTABLISHED,
                ARG_EXT_UNIX_SK,
                ARG_SHELL_JOB,
                ARG_FILE_LOCKS,
                ARG_MANAGE_CGROUPS_MODE,
                ARG_PID_FILE,
                ARG_CONSOLE_SOCKET,
                ARG_NO_SUBREAPER,
                ARG_NO_PIVOT,
                ARG_LAZY_PAGES,
        };
        static const struct option options[] = {
                { "image-path", required_argument, NULL, ARG_IMAGE_PATH },
                { "work-path", required_argument, NULL, ARG_WORK_PATH },
                { "tcp-established", no_argument, NULL, ARG_TCP_ESTABLISHED },
                { "ext-unix-sk", no_argument, NULL, ARG_EXT_UNIX_SK },
                { "shell-job", no_argument, NULL, ARG_SHELL_JOB },
                { "file-locks", no_argument, NULL, ARG_FILE_LOCKS },
                { "manage-cgroups-mode", required_argument, NULL, ARG_MANAGE_CGROUPS_MODE },
                { "bundle", required_argument, NULL, 'b' },
                { "detach", no_argument, NULL, 'd' },
                { "pid-file", required_argument, NULL, ARG_PID_FILE },
                { "console-socket", required_argument, NULL, ARG_CONSOLE_SOCKET },
                { "no-subreaper", no_argument, NULL, ARG_NO_SUBREAPER },
                { "no-pivot", no_argument, NULL, ARG_NO_PIVOT },
                { "lazy-pages", no_argument, NULL, ARG_LAZY_PAGES },
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
                case ARG_IMAGE_PATH:
                        o.common.image_path = optarg;
                        break;
                case ARG_WORK_PATH:
                        o.common.work_path = optarg;
                        break;
                case ARG_TCP_ESTABLISHED:
                        o.common.tcp_established = true;
                        break;
                case ARG_EXT_UNIX_SK:
                        o.common.ext_unix_sk = true;
                        break;
                case ARG_SHELL_JOB:
                        o.common.shell_job = true;
                        break;
                case ARG_FILE_LOCKS:
                        o.common.file_locks = true;
                        break;
                case ARG_MANAGE_CGROUPS_MODE:
                        if (cli_parse_manage_cgroups_mode("restore", optarg, &o.common.manage_cgroups_mode) < 0)
                                return EXIT_FAILURE;
                        break;
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
                case ARG_LAZY_PAGES:
                        o.common.lazy_pages = true;
                        break;
                case 'h':
                        cli_print_verb_help("restore");
                        return EXIT_SUCCESS;
                default:
                        return cli_usage_error("restore", "unknown or incomplete option \"%s\"", argv[optind - 1]);
                }
        }
        if (cli_expect_args("restore", argc, argv, 1, 1, "container id") < 0)
                return EXIT_FAILURE;
        o.id = argv[optind];
        log_set_context(o.id, NULL);
        r = container_restore(&o, o.detach ? NULL : &pid, o.detach ? NULL : &pidfd, &err);
        if (r < 0) {
                log_error_errno(r, "restore %s: %s", o.id, err ?: strerror(-r));
                return EXIT_FAILURE;
        }
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
