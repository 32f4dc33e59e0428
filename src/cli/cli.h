/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "log.h"
#include "macro.h"

/* Global options, set by main.c (runc's names and meanings). */
extern char *arg_root;
extern char *arg_log;
extern LogFormat arg_log_format;
extern bool arg_debug;
extern bool arg_systemd_cgroup;
extern bool arg_rootless;
extern bool arg_keep_unit; /* --keep-unit: create/run in the caller's service (keep-unit.h) */
extern char *arg_criu;     /* --criu PATH: the criu binary for checkpoint/restore (NULL: "criu" in PATH) */

/* A verb's option: getopt_long()'s name (NULL: a short option only), has_arg and val (the short option's
 * letter, or 0x100 and up), and where a plain one is stored: optarg in *string or appended to *list, or true
 * in *flag. */
typedef struct CliOption {
        const char *name;
        int has_arg;
        int val;
        const char **string;
        bool *flag;
        char ***list; /* optarg appended: a NULL-terminated array (malloc'd; the strings are argv's) */
} CliOption;
/* The val of a long-only option that is stored (string, list or flag): the parser gives it one of its own. */
#define CLI_STORED (-1)
#define CLI_OPTIONS_MAX 32
/* The next option of a verb that its own code must look at (its val), 0 at the end, or -EINVAL after an
 * unknown or incomplete option was logged (as cli_bad_option(), or cli_bad_option_precise() for a shortopts
 * that starts with "+:"). opts ends with an entry whose val is 0; --help is added: 'h' prints the verb's
 * help and exits 0. The options with a target are stored, not returned. Without a leading '+' options may
 * follow the id too (`update ID --cpu-period N`: runc's command line library moves them first); exec and ps
 * keep '+', as what follows their id is a command line of its own. */
int cli_next_option(const char *verb, int argc, char *argv[], const char *shortopts, const CliOption *opts);

/* Run from a sealed memfd copy of the binary: re-executes itself once from one (argv, the environment, the
 * fds and the pid carry over) unless /proc/self/exe is one already or lies on a read-only mount. Returns 0
 * then, or -errno after logging why it cannot be. */
int cli_run_sealed(char *argv[]);
/* main()'s argv, for cli_seal_exe(): cli_run_sealed(cli_argv), the seal_exe of create, run and exec. */
extern char **cli_argv;
extern bool cli_reexecuted; /* this process is a sealed re-exec (cli_sealed_adopt() returned 1) */
int cli_seal_exe(void);
/* First thing in main(), every verb: in the process a re-exec started, check that it runs from the sealed
 * copy (else -ELOOP, logged), give it back the caller's comm and return 1; 0 in any other process. */
int cli_sealed_adopt(void);

/* The long name of the option val in opts, or NULL. */
const char *cli_option_name(const CliOption *opts, int val);

/* Each verb gets argv with argv[0] the verb name, parses its own options with getopt_long, and returns the
 * process exit status (0 success, 1 failure; run/exec return the container process's status). */
int verb_create(int argc, char *argv[]);
int verb_start(int argc, char *argv[]);
int verb_run(int argc, char *argv[]);
int verb_exec(int argc, char *argv[]);
int verb_kill(int argc, char *argv[]);
int verb_delete(int argc, char *argv[]);
int verb_state(int argc, char *argv[]);
int verb_list(int argc, char *argv[]);
int verb_ps(int argc, char *argv[]);
int verb_pause(int argc, char *argv[]);
int verb_resume(int argc, char *argv[]);
int verb_events(int argc, char *argv[]);
int verb_update(int argc, char *argv[]);
int verb_spec(int argc, char *argv[]);
int verb_features(int argc, char *argv[]);
int verb_checkpoint(int argc, char *argv[]);
int verb_restore(int argc, char *argv[]);
/* The options checkpoint and restore share (runc's names), for their CliOption tables: stored into the
 * CriuCommonOptions *c, except --manage-cgroups-mode, which the verb passes to
 * cli_parse_manage_cgroups_mode(). */
enum {
        ARG_CRIU_IMAGE_PATH = 0x200,
        ARG_CRIU_WORK_PATH,
        ARG_CRIU_TCP_ESTABLISHED,
        ARG_CRIU_EXT_UNIX_SK,
        ARG_CRIU_SHELL_JOB,
        ARG_CRIU_FILE_LOCKS,
        ARG_CRIU_MANAGE_CGROUPS_MODE,
        ARG_CRIU_LAZY_PAGES,
};
/* A list of initializers, one per line (clang-format would wrap it as one expression). */
/* clang-format off */
#define CLI_CRIU_COMMON_OPTIONS(c)                                                                   \
        { "image-path", required_argument, ARG_CRIU_IMAGE_PATH, .string = &(c)->image_path },        \
        { "work-path", required_argument, ARG_CRIU_WORK_PATH, .string = &(c)->work_path },           \
        { "tcp-established", no_argument, ARG_CRIU_TCP_ESTABLISHED, .flag = &(c)->tcp_established }, \
        { "ext-unix-sk", no_argument, ARG_CRIU_EXT_UNIX_SK, .flag = &(c)->ext_unix_sk },             \
        { "shell-job", no_argument, ARG_CRIU_SHELL_JOB, .flag = &(c)->shell_job },                   \
        { "file-locks", no_argument, ARG_CRIU_FILE_LOCKS, .flag = &(c)->file_locks },                \
        { "manage-cgroups-mode", required_argument, ARG_CRIU_MANAGE_CGROUPS_MODE },                  \
        { "lazy-pages", no_argument, ARG_CRIU_LAZY_PAGES, .flag = &(c)->lazy_pages }
/* clang-format on */
struct CriuCommonOptions;
/* --manage-cgroups-mode soft|full|strict|ignore into *o: 0, or -EINVAL after logging a usage error. */
int cli_parse_manage_cgroups_mode(const char *verb, const char *arg, struct CriuCommonOptions *o);

/* Prints "Usage: sdrun VERB ..." help for a verb from the table in main.c. */
void cli_print_verb_help(const char *verb);
/* The usage line of a verb in the table of main.c ("" for none). */
const char *cli_verb_usage(const char *verb);

/* The helpers below are in cli-util.c. */
/* Common error for a bad invocation: logs "VERB: MESSAGE" and returns exit status 1. */
int cli_usage_error(const char *verb, const char *fmt, ...) _printf_(2, 3);
/* --format table|json (list, ps): sets *ret_json, or logs and returns -EINVAL. */
int cli_parse_format(const char *verb, const char *value, bool *ret_json);
/* Require exactly n positional arguments after options; returns 0 or logs and returns -EINVAL. */
int cli_expect_args(const char *verb, int argc, char *argv[], int min, int max, const char *what);

/* The end of every verb's getopt switch: 'h' prints the verb's help and exits 0; anything else logs "VERB:
 * unknown or incomplete option" and returns exit status 1. */
int cli_bad_option(const char *verb, int c, char *argv[]);
/* The same for a getopt string that starts with "+:": a missing argument (':') and an unknown option ('?')
 * get messages of their own. */
int cli_bad_option_precise(const char *verb, int c, char *argv[]);
/* Exactly one positional argument, the container id: *ret_id, or logs and returns -EINVAL. */
int cli_expect_id(const char *verb, int argc, char *argv[], const char **ret_id);
/* Logs a failure of the runtime as "VERB ID: MESSAGE" (err, else r's text) and returns exit status 1. */
int cli_runtime_error(const char *verb, const char *id, int r, const char *err);

typedef struct CreateOptions CreateOptions;
int cli_parse_create_options(const char *verb, int argc, char *argv[], CreateOptions *o, bool *detach,
                             bool *keep);
/* "TERM", "SIGTERM", "15" -> 15; -EINVAL otherwise. */
int cli_parse_signal(const char *s);
/* Parse a lone "ID" argument verb with only --help. */
int cli_parse_id_only(const char *verb, int argc, char *argv[], const char **ret_id);

/* Option values: a decimal below 2^32 (-EINVAL); exec's --user UID[:GID] and --additional-gids GID[,GID...]
 * (appended), which log a usage error of verb (or log_oom()) and return -EINVAL/-ENOMEM. */
int cli_parse_uint(const char *s, unsigned *ret);
/* --preserve-fds N (create, run, exec): at most 65536; else a usage error of verb and -EINVAL. */
int cli_parse_preserve_fds(const char *verb, const char *arg, unsigned *ret);
int cli_parse_user(const char *verb, const char *arg, uid_t *ret_uid, bool *ret_has_gid, gid_t *ret_gid);
int cli_parse_gids(const char *verb, const char *arg, gid_t **gids, size_t *n);
