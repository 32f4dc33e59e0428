/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The helpers the verbs share: usage errors, positional arguments, and the parsers of option values more
 * than one verb takes. */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "container.h"
#include "criu.h"
#include "log.h"
#include "macro.h"
#include "string-util.h"

int cli_usage_error(const char *verb, const char *fmt, ...) {
        char buf[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        log_error("%s%s%s", strempty(verb), verb ? ": " : "", buf);
        return 1;
}

int cli_parse_format(const char *verb, const char *value, bool *ret_json) {
        if (streq(value, "json"))
                *ret_json = true;
        else if (streq(value, "table"))
                *ret_json = false;
        else {
                cli_usage_error(verb, "--format: unknown format \"%s\" (table or json)", value);
                return -EINVAL;
        }
        return 0;
}

int cli_expect_args(const char *verb, int argc, char *argv[], int min, int max, const char *what) {
        int n = argc - optind;

        if (n < min) {
                log_error("%s: missing argument: %s (usage: sdrun %s)", verb, what, cli_verb_usage(verb));
                return -EINVAL;
        }
        if (max >= 0 && n > max) {
                log_error("%s: unexpected argument \"%s\" (usage: sdrun %s)", verb, argv[optind + max],
                          cli_verb_usage(verb));
                return -EINVAL;
        }
        return 0;
}

int cli_bad_option(const char *verb, int c, char *argv[]) {
        if (c == 'h') {
                cli_print_verb_help(verb);
                exit(EXIT_SUCCESS);
        }
        return cli_usage_error(verb, "unknown or incomplete option \"%s\"", argv[optind - 1]);
}

int cli_bad_option_precise(const char *verb, int c, char *argv[]) {
        if (c == ':')
                return cli_usage_error(verb, "option \"%s\" needs an argument", argv[optind - 1]);
        if (c != '?')
                return cli_bad_option(verb, c, argv);
        if (optopt > 0 && optopt < 0x100)
                return cli_usage_error(verb, "unknown option \"-%c\"", optopt);
        return cli_usage_error(verb, "unknown option \"%s\"", argv[optind - 1]);
}

int cli_expect_id(const char *verb, int argc, char *argv[], const char **ret_id) {
        if (cli_expect_args(verb, argc, argv, 1, 1, "container id") < 0)
                return -EINVAL;
        *ret_id = argv[optind];
        return 0;
}

int cli_runtime_error(const char *verb, const char *id, int r, const char *err) {
        log_error_errno(r, "%s %s: %s", verb, id, err ?: strerror(-r));
        return EXIT_FAILURE;
}

int cli_parse_id_only(const char *verb, int argc, char *argv[], const char **ret_id) {
        static const CliOption options[] = { {} };

        if (cli_next_option(verb, argc, argv, "h", options) < 0)
                return -EINVAL;
        return cli_expect_id(verb, argc, argv, ret_id);
}

int cli_parse_signal(const char *s) {
        char *end;
        long n;

        if (isempty(s))
                return -EINVAL;
        errno = 0;
        n = strtol(s, &end, 10);
        /* 0 too: kill(2)'s "is it there" (runc's kill.bats sends it to a stopped container with --all). */
        if (!*end && end != s && errno == 0)
                return n >= 0 && n < NSIG ? (int) n : -EINVAL;
        if (strncasecmp(s, "SIG", 3) == 0)
                s += 3;
        for (int i = 1; i < NSIG; i++) {
                const char *name = sigabbrev_np(i);
                if (name && strcasecmp(name, s) == 0)
                        return i;
        }
        if (strncasecmp(s, "RTMIN+", 6) == 0 || strncasecmp(s, "RTMAX-", 6) == 0) {
                n = strtol(s + 6, &end, 10);
                if (*end || n < 0)
                        return -EINVAL;
                int sig = toupper(s[4]) == 'I' ? SIGRTMIN + (int) n : SIGRTMAX - (int) n;
                return sig >= SIGRTMIN && sig <= SIGRTMAX ? sig : -EINVAL;
        }
        return -EINVAL;
}

int cli_parse_manage_cgroups_mode(const char *verb, const char *arg, CriuCommonOptions *o) {
        static const char *const modes[] = { "soft", "full", "strict", "ignore" };

        FOREACH_ARRAY(m, modes, ELEMENTSOF(modes))
                if (streq(*m, arg)) {
                        o->manage_cgroups_mode = *m;
                        return 0;
                }
        cli_usage_error(verb, "--manage-cgroups-mode: unknown mode \"%s\" (soft, full, strict or ignore)",
                        arg);
        return -EINVAL;
}

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
                case ARG_PRESERVE_FDS:
                        if (cli_parse_preserve_fds(verb, optarg, &o->preserve_fds) < 0)
                                return -EINVAL;
                        break;
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
        o->seal_exe = cli_seal_exe;
        o->config_warned = cli_reexecuted;
        return 0;
}

int cli_parse_uint(const char *s, unsigned *ret) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(s, &end, 10);
        if (errno || end == s || *end || s[0] == '-' || v >= UINT32_MAX)
                return -EINVAL;
        *ret = (unsigned) v;
        return 0;
}

int cli_parse_preserve_fds(const char *verb, const char *arg, unsigned *ret) {
        unsigned v;
        if (cli_parse_uint(arg, &v) < 0 || v > 65536)
                return cli_usage_error(verb, "--preserve-fds: invalid number \"%s\"", arg), -EINVAL;
        *ret = v;
        return 0;
}

int cli_parse_user(const char *verb, const char *arg, uid_t *ret_uid, bool *ret_has_gid, gid_t *ret_gid) {
        _cleanup_free_ char *s = strdup(arg);
        unsigned v;

        if (!s)
                return log_oom();
        char *colon = strchr(s, ':');
        if (colon)
                *colon++ = 0;
        if (cli_parse_uint(s, &v) < 0)
                return cli_usage_error(verb, "--user: \"%s\" is not UID[:GID] (numeric)", arg), -EINVAL;
        *ret_uid = (uid_t) v;
        if (colon) {
                if (cli_parse_uint(colon, &v) < 0)
                        return cli_usage_error(verb, "--user: \"%s\" is not UID[:GID] (numeric)", arg),
                               -EINVAL;
                *ret_has_gid = true;
                *ret_gid = (gid_t) v;
        }
        return 0;
}

int cli_parse_gids(const char *verb, const char *arg, gid_t **gids, size_t *n) {
        /* One gid per flag; a comma-separated list is accepted too. */
        _cleanup_free_ char *s = strdup(arg);
        unsigned v;

        if (!s)
                return log_oom();
        for (char *t = strtok(s, ","); t; t = strtok(NULL, ",")) {
                if (cli_parse_uint(t, &v) < 0)
                        return cli_usage_error(verb, "--additional-gids: \"%s\" is not a gid", t), -EINVAL;
                gid_t *g = realloc(*gids, (*n + 1) * sizeof(gid_t));
                if (!g)
                        return log_oom();
                g[(*n)++] = (gid_t) v;
                *gids = g;
        }
        return 0;
}

/* --- the option tables' parser ------------------------------------------------------------------------------ */

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
