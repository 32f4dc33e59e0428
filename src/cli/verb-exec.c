/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "exec.h"
#include "foreground.h"
#include "macro.h"

/* runc's exit status when exec itself fails (not the process): podman and conmon expect it. */
#define EXIT_EXEC_FAILED 255

static void options_done(ExecOptions *o) {
        free(o->env);
        free(o->caps);
        free(o->additional_gids);
        free(o->sub_cgroups);
}

static int parse_exec_options(int argc, char *argv[], ExecOptions *o) {
        enum { ARG_CWD = 0x100, ARG_PRESERVE_FDS };
        const CliOption options[] = {
                { "process", required_argument, 'p', .string = &o->process_file },
                { "tty", no_argument, 't', .flag = &o->tty },
                { "console-socket", required_argument, CLI_STORED, .string = &o->console_socket },
                { "pidfd-socket", required_argument, CLI_STORED, .string = &o->pidfd_socket },
                { "detach", no_argument, 'd', .flag = &o->detach },
                { "pid-file", required_argument, CLI_STORED, .string = &o->pid_file },
                { "cwd", required_argument, ARG_CWD },
                { "env", required_argument, 'e', .list = &o->env },
                { "user", required_argument, 'u' },
                { "additional-gids", required_argument, 'g' },
                { "cap", required_argument, 'c', .list = &o->caps },
                { "no-new-privs", no_argument, CLI_STORED, .flag = &o->no_new_privs },
                { "preserve-fds", required_argument, ARG_PRESERVE_FDS },
                { "process-label", required_argument, CLI_STORED, .string = &o->process_label },
                { "apparmor", required_argument, CLI_STORED, .string = &o->apparmor },
                { "ignore-paused", no_argument, CLI_STORED, .flag = &o->ignore_paused },
                { "cgroup", required_argument, CLI_STORED, .list = &o->sub_cgroups },
                {},
        };
        int c;

        while ((c = cli_next_option("exec", argc, argv, "+p:tde:u:g:c:h", options)) > 0) {
                switch (c) {
                case ARG_CWD:
                        if (optarg[0] != '/')
                                return cli_usage_error("exec", "--cwd: \"%s\" is not an absolute path",
                                                       optarg),
                                       -EINVAL;
                        o->cwd = optarg;
                        break;
                case 'u':
                        if (cli_parse_user("exec", optarg, &o->uid, &o->has_gid, &o->gid) < 0)
                                return -EINVAL;
                        o->has_user = true;
                        break;
                case 'g':
                        if (cli_parse_gids("exec", optarg, &o->additional_gids, &o->n_additional_gids) < 0)
                                return -EINVAL;
                        break;
                case ARG_PRESERVE_FDS:
                        if (cli_parse_preserve_fds("exec", optarg, &o->preserve_fds) < 0)
                                return -EINVAL;
                        break;
                }
        }
        if (c < 0)
                return -EINVAL;
        for (char **g = o->sub_cgroups; g && *g; g++)
                if (isempty(*g))
                        return cli_usage_error("exec", "--cgroup: empty argument"), -EINVAL;
        if (optind >= argc)
                return cli_usage_error("exec", "container id missing"), -EINVAL;
        o->id = argv[optind];
        o->args = argv + optind + 1;
        if (!o->process_file && !o->args[0])
                return cli_usage_error("exec",
                                       "exec args cannot be empty: give a command or --process FILE"),
                       -EINVAL;
        if (o->detach && o->tty && !o->console_socket)
                return cli_usage_error(
                               "exec",
                               "cannot allocate tty if sdrun will detach without setting console socket"),
                       -EINVAL;
        o->root = arg_root;
        o->seal_exe = cli_seal_exe;
        return 0;
}

int verb_exec(int argc, char *argv[]) {
        _cleanup_(options_done) ExecOptions o = {};
        _cleanup_free_ char *err = NULL;
        _cleanup_close_ int sfd = -EBADF, master = -EBADF;
        ExecProcess ep = { .pidfd = -EBADF };
        int r;

        if (parse_exec_options(argc, argv, &o) < 0)
                return EXIT_FAILURE;
        log_set_context(o.id, NULL);

        /* Blocked before the process exists, so that no signal meant for it is lost; the process itself starts
         * with an empty mask. In the foreground, --tty without --console-socket: the pty is ours to proxy (as
         * runc does). */
        if (!o.detach)
                sfd = foreground_block_signals();
        if (!o.detach && !o.console_socket)
                o.ret_console_master = &master;
        r = container_exec(&o, &ep, &err);
        if (r < 0) {
                log_error_errno(r, "exec failed: %s", err ?: strerror(-r));
                return EXIT_EXEC_FAILED;
        }
        _cleanup_close_ int pidfd = ep.pidfd;
        if (o.detach)
                return EXIT_SUCCESS; /* not reaped: it is reparented (conmon, as subreaper, reaps it) */
        int status = foreground_wait(ep.pid, pidfd, sfd, master, NULL);
        return status < 0 ? EXIT_EXEC_FAILED : status;
}
