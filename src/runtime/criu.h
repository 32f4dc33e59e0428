/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Checkpoint and restore through CRIU's command line (criu(8)): `criu dump|pre-dump|restore` with the
 * options runc passes over its RPC interface. Why the command line and not `criu swrk` + protobuf: sdrun
 * then needs neither libprotobuf-c nor CRIU's rpc.proto at build time and no CRIU library at run time (CRIU
 * stays an optional program, found in PATH or with --criu); every option runc uses has a command-line
 * equivalent but one; of the two RPC-only facilities runc relies on, the "setup-namespaces" notification for
 * the prestart/createRuntime hooks has its command-line twin in --action-script, and "orphan-pts-master"
 * (with its option: a restored terminal's new master, sent over the RPC socket) is replaced by an external
 * tty (CRIU_TERMINAL_FILE); and what sdrun runs can be rerun by hand (--debug logs the command line). See
 * sdrun-checkpoint(8). */

#include <stdbool.h>
#include <sys/types.h>

#include "oci-config.h"

typedef struct CriuCommonOptions {
        const char *criu;       /* the criu binary (--criu); NULL: "criu" in PATH, /usr/sbin, /sbin */
        const char *image_path; /* NULL: ./checkpoint (runc's default) */
        const char *work_path;  /* NULL: the image path */
        const char *manage_cgroups_mode; /* soft (NULL), full, strict, ignore */
        bool tcp_established;
        bool ext_unix_sk;
        bool shell_job;
        bool file_locks;
        bool lazy_pages;
} CriuCommonOptions;

typedef struct CheckpointOptions {
        CriuCommonOptions common;
        const char *root;
        const char *id;
        const char *parent_path;
        const char *page_server; /* ADDRESS:PORT */
        bool leave_running;
        bool pre_dump;
        bool auto_dedup;
        bool empty_ns_network;
} CheckpointOptions;

typedef struct RestoreOptions {
        CriuCommonOptions common;
        const char *root;
        const char *id;
        const char *bundle; /* NULL: the current directory */
        const char *pid_file;
        const char *console_socket;
        bool detach;
        bool no_subreaper;
} RestoreOptions;

/* Path of the criu binary: `name` when it contains a '/', else searched in PATH, /usr/sbin and /sbin.
 * -ENOENT when not found. */
int criu_find(const char *name, char **ret);
/* "3.17.1" from `criu --version` (bounded). -ENOENT: not installed. */
int criu_get_version(const char *name, char **ret_path, char **ret_version);
/* criu_get_version() for a verb that needs CRIU: a failure says what is missing or what failed. */
int criu_require(const char *name, char **ret_path, char **ret_version, char **reterr);

/* The outcome of one criu run. */
typedef struct CriuRun {
        int status;        /* exit status (128 + signal when killed) */
        char *stderr_text; /* what criu wrote to stderr (its errors before the log file is open) */
} CriuRun;
void criu_run_done(CriuRun *r);

/* The message for a criu run that failed: the cause when it is one we know (a kernel CRIU cannot work
 * on, a missing kernel module), else the last error lines of its log, and the log's path. */
char *criu_explain_failure(const char *criu_version, const CriuRun *run, const char *log_path);

/* Mounts of the container that come from the host, as CRIU's external mounts (--ext-mount-map
 * MOUNTPOINT:COOKIE on dump, COOKIE:SOURCE on restore): bind mounts, the host's /sys bound without a new
 * network namespace, the /dev/null binds masking linux.maskedPaths files, device nodes bound from the host in
 * a user namespace, /dev/console bound from the terminal's pty, and on a unified (v2) host the cgroup mount
 * of a container without a cgroup namespace (a bind of its own cgroup directory, which CRIU cannot dump: no
 * mount of that filesystem's root). Only mount points that exist in the container's mountinfo are listed at
 * dump time (pid > 0). */
typedef struct CriuExtMount {
        char *mountpoint; /* in the container */
        char *cookie;     /* the name in the images: the mount point, or "/dev/null" for all masks */
        char *source;     /* on the host, for restore; "" where only restore knows it (see below) */
        bool is_dir;
        /* The bind of the container's own cgroup directory (cgroup v2, no cgroup namespace): its source
         * is the restored container's new scope, known only once that exists. */
        bool own_cgroup;
        /* /dev/console bound from the terminal's pty (process.terminal): its source is the restored
         * container's new pty (see CRIU_TERMINAL_FILE). */
        bool terminal;
} CriuExtMount;
int criu_external_mounts(const OciConfig *c, const char *bundle, pid_t pid, CriuExtMount **ret,
                         size_t *ret_n);
void criu_external_mounts_free(CriuExtMount *m, size_t n);

/* Run criu with argv (argv[0] is the binary), its stdout and stderr captured in *ret_stderr_fd (a memfd).
 * Before the exec the child runs setup(userdata) (may be NULL) and, if go_fd >= 0, reads from go_fd "G",
 * NUL-terminated arguments to append to argv, and an empty argument (anything else, or EOF: exit 1); the
 * child closes go_write_fd (our end) first. die_with_us: the child dies with its parent (PR_SET_PDEATHSIG).
 * Returns the child's pid in *ret_pid and leaves it running; wait for it with criu_wait(). */
int criu_spawn(char *const *argv, int go_fd, int go_write_fd, bool die_with_us, int (*setup)(void *userdata),
               void *userdata, pid_t *ret_pid, int *ret_stderr_fd);
int criu_wait(pid_t pid, int stderr_fd, CriuRun *ret);

/* --image-path (runc's default ./checkpoint; created for checkpoint, required to exist for restore) and
 * --work-path (default: the image path), both made absolute. */
int criu_resolve_dirs(const CriuCommonOptions *o, bool create_image, char **ret_image, char **ret_work,
                      char **reterr);
/* The options both verbs pass: --manage-cgroups=, --tcp-established, --ext-unix-sk, --shell-job, --file-locks. */
int criu_add_common_args(char ***args, const CriuCommonOptions *o);

/* In the container init, after pivot_root: stdio on the host's /dev/null (a caller's </dev/null) is reopened
 * on the container's own /dev/null, as runc does: CRIU cannot dump a file on a mount outside the
 * container's mount namespace. Best effort (a container without /dev/null keeps the host's). */
void criu_reopen_dev_null_stdio(void);

/* The file in the image directory that names the container's terminal as CRIU's external tty
 * ("tty[RDEV:DEV]", hex), written by `checkpoint` of a container with process.terminal; `restore` hands CRIU a
 * new pty's slave under that name. */
#define CRIU_TERMINAL_FILE "sdrun-terminal"

/* Both verbs; each fills *reterr with the message the CLI prints. */
int container_checkpoint(const CheckpointOptions *o, char **reterr);
/* On success the container is running with the restored init, our child when ret_pid/ret_pidfd are asked
 * for (a foreground restore waits for it). */
int container_restore(const RestoreOptions *o, pid_t *ret_pid, int *ret_pidfd, char **reterr);

/* A file in the state directory that says: the container was stopped by `checkpoint`, which ran its
 * poststop hooks and stopped its scope already. `delete` then does not run the hooks again, and `restore`
 * may replace it under the same id (as with runc, which removes such a container at once). */
#define CHECKPOINTED_MARKER "checkpointed"
