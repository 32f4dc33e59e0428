/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <seccomp.h>

#include "config.h"
#include "version.h"
#include "cli.h"
#include "log.h"
#include "macro.h"
#include "criu.h"
#include "rootless.h"
#include "sdunit.h"
#include "string-util.h"

char *arg_root = NULL;
char *arg_log = NULL;
LogFormat arg_log_format = LOG_FORMAT_TEXT;
bool arg_debug = false;
bool arg_systemd_cgroup = false;
bool arg_rootless = false;
bool arg_keep_unit = false;
char *arg_criu = NULL;

typedef struct Verb {
        const char *name;
        int (*func)(int argc, char *argv[]);
        const char *usage;
        const char *summary;
} Verb;

static const Verb verbs[] = {
        { "create", verb_create,
          "create [--bundle DIR] [--config FILE] [--pid-file FILE] [--console-socket PATH] [--pidfd-socket PATH] [--no-pivot] "
          "[--no-new-keyring] [--preserve-fds N] ID",
          "create a container (its init waits for start)" },
        { "start", verb_start, "start ID", "run the user process of a created container" },
        { "run", verb_run,
          "run [--bundle DIR] [--config FILE] [--pid-file FILE] [--console-socket PATH] [--pidfd-socket PATH] [--detach] [--keep] "
          "[--no-pivot] [--no-new-keyring] [--preserve-fds N] ID",
          "create and start a container" },
        { "exec", verb_exec,
          "exec [--process FILE] [--tty] [--console-socket PATH] [--pidfd-socket PATH] [--detach] [--pid-file FILE] "
          "[--cwd DIR] "
          "[--env K=V]... [--user UID[:GID]] [--additional-gids GID]... [--cap CAP]... [--no-new-privs] "
          "[--preserve-fds N] [--process-label L] [--apparmor P] ID [COMMAND [ARGS...]]",
          "run a new process inside a container" },
        { "kill", verb_kill, "kill [--all] [--regex] ID [SIGNAL]", "send a signal to the container's init" },
        { "delete", verb_delete, "delete [--force] [--regex] ID", "delete a container" },
        { "state", verb_state, "state ID", "print the OCI state of a container" },
        { "list", verb_list, "list [--quiet] [--format table|json]", "list containers" },
        { "ps", verb_ps, "ps [--format table|json] ID [PS_ARGS...]", "list the processes of a container" },
        { "pause", verb_pause, "pause ID", "freeze all processes of a container" },
        { "resume", verb_resume, "resume ID", "thaw a paused container" },
        { "events", verb_events, "events [--stats] [--interval DURATION] ID",
          "print container events and statistics" },
        { "update", verb_update,
          "update [--resources FILE|-] [--memory N] [--memory-swap N] [--memory-reservation N] "
          "[--cpu-shares N] [--cpu-quota N] [--cpu-period N] [--cpuset-cpus LIST] [--cpuset-mems LIST] "
          "[--pids-limit N] [--blkio-weight N] ID",
          "update the resource limits of a container" },
        { "spec", verb_spec, "spec [--bundle DIR] [--rootless]", "write a default config.json" },
        { "features", verb_features, "features", "print the features document of the runtime" },
        { "checkpoint", verb_checkpoint,
          "checkpoint [--image-path DIR] [--work-path DIR] [--parent-path DIR] [--leave-running] [--pre-dump] "
          "[--tcp-established] [--ext-unix-sk] [--shell-job] [--file-locks] [--manage-cgroups-mode MODE] "
          "[--empty-ns network] [--auto-dedup] [--page-server ADDRESS:PORT] [--lazy-pages] ID",
          "checkpoint a running container with CRIU" },
        { "restore", verb_restore,
          "restore [--image-path DIR] [--work-path DIR] [--bundle DIR] [--detach] [--pid-file FILE] "
          "[--console-socket PATH] [--no-subreaper] [--no-pivot] [--tcp-established] [--ext-unix-sk] [--shell-job] "
          "[--file-locks] [--manage-cgroups-mode MODE] [--lazy-pages] ID",
          "restore a container from a CRIU checkpoint" },
};

/* restore puts CRIU's restored tree into the container: it always runs from a sealed copy of the binary.
 * create, run and exec decide once config.json is read (cli_seal_exe). */
static bool verb_needs_sealed_exe(const Verb *v) {
        static const char *const names[] = { "restore" };

        FOREACH_ARRAY(n, names, ELEMENTSOF(names))
                if (streq(v->name, *n))
                        return true;
        return false;
}

static const Verb *find_verb(const char *name) {
        FOREACH_ARRAY(v, verbs, ELEMENTSOF(verbs))
                if (streq(v->name, name))
                        return v;
        return NULL;
}

const char *cli_verb_usage(const char *name) {
        const Verb *v = find_verb(name);
        return v ? v->usage : "";
}

void cli_print_verb_help(const char *name) {
        const Verb *v = find_verb(name);
        if (!v)
                return;
        printf("Usage: sdrun [GLOBAL OPTIONS] %s\n\n%s.\nSee sdrun-%s(8).\n", v->usage, v->summary, v->name);
}

static void print_help(void) {
        printf("Usage: sdrun [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGS...]\n\n"
               "An OCI container runtime in which every container is a transient systemd scope.\n\n"
               "Commands:\n");
        FOREACH_ARRAY(v, verbs, ELEMENTSOF(verbs))
                printf("  %-10s %s\n", v->name, v->summary);
        printf("\nGlobal options:\n"
               "  --root DIR             state directory (default /run/sdrun, or $XDG_RUNTIME_DIR/sdrun)\n"
               "  --log FILE             log file (default: stderr, or the journal)\n"
               "  --log-format FORMAT    text or json\n"
               "  --debug                debug output\n"
               "  --systemd-cgroup       accepted for compatibility; sdrun always uses systemd\n"
               "  --cgroup-manager NAME  crun's: systemd, cgroupfs or disabled; sdrun always uses systemd\n"
               "  --rootless VALUE       true|false|auto: run as an unprivileged user (user manager, user\n"
               "                         namespace; auto: when not root or in a user namespace)\n"
               "  --keep-unit            create/run: the container in the service sdrun runs in (its\n"
               "                         ExecStart=, Delegate=yes), not in a scope of its own\n"
               "  -h, --help             this help\n"
               "  -v, --version          version information\n");
}

static void print_version(void) {
        _cleanup_free_ char *criu = NULL, *criu_version = NULL, *err = NULL;
        _cleanup_(sdunit_libsystemd_info_done) SdUnitLibInfo lib = {};
        int r = criu_get_version(arg_criu, &criu, &criu_version);

        printf("sdrun version %s\n"
               "commit: %s\n"
               "spec: %s\n"
               "go: none (C)\n"
               "libseccomp: %u.%u.%u\n"
               "features: +SYSTEMD +SECCOMP +CAP +CGROUPV1 +CGROUPV2 %cCRIU\n",
               PACKAGE_VERSION, GIT_COMMIT, OCI_SPEC_VERSION, seccomp_version()->major,
               seccomp_version()->minor, seccomp_version()->micro, r >= 0 ? '+' : '-');
        /* CRIU is optional: checkpoint and restore need it, nothing else does. */
        if (r >= 0)
                printf("criu: %s (%s)\n", criu_version, criu);
        else
                printf("criu: not available (%s)\n", r == -ENOENT ? "not installed" : strerror(-r));
        /* libsystemd is dlopen()ed when a verb first talks to systemd: the one it will load, which ldd does
         * not show. */
        if (sdunit_libsystemd_info(&lib, &err) >= 0)
                printf("libsystemd: %s (LIBSYSTEMD_%u, %s)\n", lib.version, lib.interface, lib.path);
        else
                printf("libsystemd: not available (%s)\n", strna(err));
        printf("build options: %s\n", BUILD_OPTIONS);
}

static int default_root(char **ret) {
        const char *xdg;

        /* Rootless (also root of a user namespace, as under rootless Podman): the user's runtime dir. */
        if (!rootless_detect())
                *ret = strdup("/run/sdrun");
        else if ((xdg = getenv("XDG_RUNTIME_DIR")) && *xdg) {
                if (asprintf(ret, "%s/sdrun", xdg) < 0)
                        *ret = NULL;
        } else
                *ret = strdup("/run/sdrun");
        return *ret ? 0 : -ENOMEM;
}

static int parse_global(int argc, char *argv[]) {
        enum {
                ARG_ROOT = 0x100,
                ARG_LOG,
                ARG_LOG_FORMAT,
                ARG_DEBUG,
                ARG_SYSTEMD_CGROUP,
                ARG_ROOTLESS,
                ARG_CRIU,
                ARG_CGROUP_MANAGER,
                ARG_KEEP_UNIT,
        };
        static const struct option options[] = {
                { "root", required_argument, NULL, ARG_ROOT },
                { "log", required_argument, NULL, ARG_LOG },
                { "log-format", required_argument, NULL, ARG_LOG_FORMAT },
                { "debug", no_argument, NULL, ARG_DEBUG },
                { "systemd-cgroup", no_argument, NULL, ARG_SYSTEMD_CGROUP },
                { "rootless", required_argument, NULL, ARG_ROOTLESS },
                { "criu", required_argument, NULL, ARG_CRIU },
                { "cgroup-manager", required_argument, NULL, ARG_CGROUP_MANAGER },
                { "keep-unit", no_argument, NULL, ARG_KEEP_UNIT },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'v' },
                {},
        };
        int c;

        /* '+': stop at the verb; what follows belongs to it. */
        opterr = 0;
        while ((c = getopt_long(argc, argv, "+hv", options, NULL)) >= 0) {
                switch (c) {
                case ARG_ROOT:
                        if (free_and_strdup(&arg_root, optarg) < 0)
                                return log_oom();
                        break;
                case ARG_LOG:
                        if (free_and_strdup(&arg_log, optarg) < 0)
                                return log_oom();
                        break;
                case ARG_LOG_FORMAT:
                        if (streq(optarg, "text"))
                                arg_log_format = LOG_FORMAT_TEXT;
                        else if (streq(optarg, "json"))
                                arg_log_format = LOG_FORMAT_JSON;
                        else
                                return log_error_errno(EINVAL,
                                                       "--log-format: unknown format \"%s\" (text or json)",
                                                       optarg);
                        break;
                case ARG_DEBUG:
                        arg_debug = true;
                        break;
                case ARG_SYSTEMD_CGROUP:
                        arg_systemd_cgroup = true;
                        break;
                case ARG_KEEP_UNIT:
                        arg_keep_unit = true;
                        break;
                case ARG_ROOTLESS:
                        if (!streq(optarg, "true") && !streq(optarg, "false") && !streq(optarg, "auto"))
                                return log_error_errno(
                                        EINVAL, "--rootless: expected true, false or auto, got \"%s\"",
                                        optarg);
                        arg_rootless = streq(optarg, "true");
                        rootless_set_override(streq(optarg, "auto") ? -1 : arg_rootless);
                        break;
                case ARG_CGROUP_MANAGER:
                        /* crun's option (its own test suite passes it). Every sdrun container is a systemd
                         * scope; a cgroupfs cgroupsPath is mapped to one either way. "disabled" (no cgroup
                         * at all) cannot be had: said, not pretended. */
                        if (streq(optarg, "disabled"))
                                log_warning("--cgroup-manager=disabled: ignored, sdrun always places a "
                                            "container in a systemd scope");
                        else if (!streq(optarg, "systemd") && !streq(optarg, "cgroupfs"))
                                return log_error_errno(EINVAL,
                                                       "--cgroup-manager: unknown manager \"%s\" (systemd, "
                                                       "cgroupfs or disabled)",
                                                       optarg);
                        break;
                case ARG_CRIU:
                        if (free_and_strdup(&arg_criu, optarg) < 0)
                                return log_oom();
                        break;
                case 'h':
                        print_help();
                        exit(EXIT_SUCCESS);
                case 'v':
                        print_version();
                        exit(EXIT_SUCCESS);
                case '?':
                        if (optopt)
                                return log_error_errno(EINVAL, "unknown or incomplete option \"-%c\"",
                                                       optopt);
                        return log_error_errno(EINVAL, "unknown or incomplete global option \"%s\"",
                                               argv[optind - 1]);
                default:
                        return log_error_errno(EINVAL, "unknown or incomplete global option \"%s\"",
                                               argv[optind - 1]);
                }
        }
        return 0;
}

int main(int argc, char *argv[]) {
        const Verb *v;
        int r;

        r = parse_global(argc, argv);
        if (r < 0)
                return EXIT_FAILURE;

        if (arg_debug)
                log_set_max_level(LOG_LEVEL_DEBUG);
        if (arg_log || arg_log_format != LOG_FORMAT_TEXT) {
                r = log_open_file(arg_log, arg_log_format);
                if (r < 0) {
                        log_error_errno(r, "--log: cannot open \"%s\": %m", arg_log);
                        return EXIT_FAILURE;
                }
        }
        /* Without --log, messages about a container also go to the journal, tagged with its unit. */
        if (!arg_log && sdunit_journal_available())
                log_set_sink(sdunit_journal_sink);
        if (!arg_root && default_root(&arg_root) < 0) {
                log_oom();
                return EXIT_FAILURE;
        }

        if (optind >= argc) {
                print_help();
                return EXIT_FAILURE;
        }

        v = find_verb(argv[optind]);
        if (!v) {
                if (streq(argv[optind], "help")) {
                        print_help();
                        return EXIT_SUCCESS;
                }
                log_error("unknown command \"%s\" (see sdrun --help)", argv[optind]);
                return EXIT_FAILURE;
        }

        /* Whatever the verb clones into a container (init, exec child, the init's hooks) is this process's
         * mm, whose exe only an execve changes: it must never be the host's binary where a process of the
         * container could open it through /proc/PID/exe and write it later (CVE-2019-5736). restore re-executes
         * from a sealed copy here; create and run once config.json says whether anything of the container can
         * see the init before its last exec (CreateOptions.seal_exe), exec once it knows whether its child
         * must enter the container's pid namespace itself (ExecOptions.seal_exe). */
        cli_argv = argv;
        r = cli_sealed_adopt();
        if (r < 0)
                return EXIT_FAILURE;
        cli_reexecuted = r > 0;
        if (verb_needs_sealed_exe(v) && cli_run_sealed(argv) < 0)
                return EXIT_FAILURE;

        /* The verb parses its own options; reset getopt for it. */
        int vargc = argc - optind;
        char **vargv = argv + optind;
        optind = 0;
        opterr = 0;
        r = v->func(vargc, vargv);
        free(arg_root);
        free(arg_log);
        free(arg_criu);
        return r;
}
