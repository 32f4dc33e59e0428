/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "exec.h"
#include "fileio.h"
#include "macro.h"
#include "process-util.h"

/* runc's exit status when exec itself fails (not the process): podman and conmon expect it. */
#define EXIT_EXEC_FAILED 255

static void options_done(ExecOptions *o) {
        free(o->env);
        free(o->caps);
        free(o->additional_gids);
        free(o->sub_cgroups);
}

static int push(char ***l, size_t *n, char *s) {
        char **c = realloc(*l, (*n + 2) * sizeof(char *));
        if (!c)
                return -ENOMEM;
        c[(*n)++] = s;
        c[*n] = NULL;
        *l = c;
        return 0;
}

static int parse_id(const char *s, unsigned *ret) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(s, &end, 10);
        if (errno || end == s || *end || s[0] == '-' || v >= UINT32_MAX)
                return -EINVAL;
        *ret = (unsigned) v;
        return 0;
}

static int parse_exec_options(int argc, char *argv[], ExecOptions *o, const char **ret_pid_file) {
        enum {
                ARG_CONSOLE_SOCKET = 0x100,
                ARG_PIDFD_SOCKET,
                ARG_PID_FILE,
                ARG_CWD,
                ARG_NO_NEW_PRIVS,
                ARG_PRESERVE_FDS,
                ARG_PROCESS_LABEL,
                ARG_APPARMOR,
                ARG_IGNORE_PAUSED,
                ARG_CGROUP
        };
        const CliOption options[] = {
                { "process", required_argument, 'p', .string = &o->process_file },
                { "tty", no_argument, 't', .flag = &o->tty },
                { "console-socket", required_argument, ARG_CONSOLE_SOCKET, .string = &o->console_socket },
                { "pidfd-socket", required_argument, ARG_PIDFD_SOCKET, .string = &o->pidfd_socket },
                { "detach", no_argument, 'd', .flag = &o->detach },
                { "pid-file", required_argument, ARG_PID_FILE, .string = ret_pid_file },
                { "cwd", required_argument, ARG_CWD },
                { "env", required_argument, 'e' },
                { "user", required_argument, 'u' },
                { "additional-gids", required_argument, 'g' },
                { "cap", required_argument, 'c' },
                { "no-new-privs", no_argument, ARG_NO_NEW_PRIVS, .flag = &o->no_new_privs },
                { "preserve-fds", required_argument, ARG_PRESERVE_FDS },
                { "process-label", required_argument, ARG_PROCESS_LABEL, .string = &o->process_label },
                { "apparmor", required_argument, ARG_APPARMOR, .string = &o->apparmor },
                { "ignore-paused", no_argument, ARG_IGNORE_PAUSED, .flag = &o->ignore_paused },
                { "cgroup", required_argument, ARG_CGROUP },
                {},
        };
        size_t n_env = 0, n_caps = 0, n_sub_cgroups = 0;
        unsigned v;
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
                case 'e':
                        if (push(&o->env, &n_env, optarg) < 0)
                                return log_oom();
                        break;
                case ARG_CGROUP:
                        if (isempty(optarg))
                                return cli_usage_error("exec", "--cgroup: empty argument"), -EINVAL;
                        if (push(&o->sub_cgroups, &n_sub_cgroups, optarg) < 0)
                                return log_oom();
                        break;
                case 'u': {
                        _cleanup_free_ char *s = strdup(optarg);
                        if (!s)
                                return log_oom();
                        char *colon = strchr(s, ':');
                        if (colon)
                                *colon++ = 0;
                        if (parse_id(s, &v) < 0)
                                return cli_usage_error("exec", "--user: \"%s\" is not UID[:GID] (numeric)",
                                                       optarg),
                                       -EINVAL;
                        o->has_user = true;
                        o->uid = (uid_t) v;
                        if (colon) {
                                if (parse_id(colon, &v) < 0)
                                        return cli_usage_error("exec",
                                                               "--user: \"%s\" is not UID[:GID] (numeric)",
                                                               optarg),
                                               -EINVAL;
                                o->has_gid = true;
                                o->gid = (gid_t) v;
                        }
                        break;
                }
                case 'g': {
                        /* One gid per flag; a comma-separated list is accepted too. */
                        _cleanup_free_ char *s = strdup(optarg);
                        if (!s)
                                return log_oom();
                        for (char *t = strtok(s, ","); t; t = strtok(NULL, ",")) {
                                if (parse_id(t, &v) < 0)
                                        return cli_usage_error("exec",
                                                               "--additional-gids: \"%s\" is not a gid", t),
                                               -EINVAL;
                                gid_t *g = realloc(o->additional_gids,
                                                   (o->n_additional_gids + 1) * sizeof(gid_t));
                                if (!g)
                                        return log_oom();
                                g[o->n_additional_gids++] = (gid_t) v;
                                o->additional_gids = g;
                        }
                        break;
                }
                case 'c':
                        if (push(&o->caps, &n_caps, optarg) < 0)
                                return log_oom();
                        break;
                case ARG_PRESERVE_FDS:
                        if (parse_id(optarg, &v) < 0 || v > 65536)
                                return cli_usage_error("exec", "--preserve-fds: invalid number \"%s\"",
                                                       optarg),
                                       -EINVAL;
                        o->preserve_fds = v;
                        break;
                }
        }
        if (c < 0)
                return -EINVAL;
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
        return 0;
}

int verb_exec(int argc, char *argv[]) {
        _cleanup_(options_done) ExecOptions o = {};
        _cleanup_free_ char *err = NULL;
        _cleanup_close_ int sfd = -EBADF;
        const char *pid_file = NULL;
        ExecProcess ep = { .pidfd = -EBADF };
        int r, status;

        if (parse_exec_options(argc, argv, &o, &pid_file) < 0)
                return EXIT_FAILURE;
        log_set_context(o.id, NULL);

        if (!o.detach) {
                /* Blocked before the process exists, so that no signal meant for it is lost; the process
                 * itself starts with an empty mask. */
                sfd = cli_block_forwarded_signals();
        }

        /* In the foreground, --tty without --console-socket: the pty is ours to proxy (as runc does). */
        _cleanup_close_ int master = -EBADF;
        if (!o.detach && !o.console_socket)
                o.ret_console_master = &master;
        r = container_exec(&o, &ep, &err);
        if (r < 0) {
                log_error_errno(r, "exec failed: %s", err ?: strerror(-r));
                return EXIT_EXEC_FAILED;
        }
        if (pid_file) {
                r = write_pid_file(pid_file, ep.pid);
                if (r < 0) {
                        log_error_errno(r, "exec failed: --pid-file: write \"%s\": %m", pid_file);
                        (void) pidfd_send_sig(ep.pidfd, SIGKILL);
                        (void) waitpid(ep.pid, NULL, 0);
                        safe_close(ep.pidfd);
                        return EXIT_EXEC_FAILED;
                }
        }
        if (o.detach) {
                /* Not reaped: it is reparented (conmon, as subreaper, reaps it). */
                safe_close(ep.pidfd);
                return EXIT_SUCCESS;
        }
        status = cli_wait_forwarding_signals(ep.pid, ep.pidfd, sfd, master);
        if (status < 0)
                status = EXIT_EXEC_FAILED;
        safe_close(ep.pidfd);
        return status;
}
