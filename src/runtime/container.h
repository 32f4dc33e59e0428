/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The lifecycle operations: create, start, kill, delete. Each fills *reterr with the message the CLI prints
 * once; the return value is a negative errno. */

#include <stdbool.h>
#include <sys/types.h>

#include "notify.h"
#include "oci-config.h"
#include "state.h"

typedef struct CreateOptions {
        const char *root;
        const char *id;
        const char *bundle;      /* NULL: the current directory */
        const char *config_file; /* crun's --config: relative to the bundle; NULL: "config.json" */
        const char *pid_file;
        const char *console_socket;
        const char *pidfd_socket; /* --pidfd-socket: receives a pidfd of the init once it is created */
        /* Foreground `run` with process.terminal and no --console-socket: keep the pty master here instead
         * (the caller proxies it to its own terminal, as runc does). */
        int *ret_console_master;
        bool no_pivot;
        bool no_new_keyring;
        /* --keep-unit: in the service this process runs in, below its cgroup (keep-unit.h), not a scope */
        bool keep_unit;
        unsigned preserve_fds;
        /* Called once config.json is parsed, before anything is made, when something of the container could
         * see the init before its last exec (create_needs_sealed_exe() in container.c): re-executes this process
         * from a sealed copy of its binary (does not return then; create starts over in the new image) and
         * returns 0 when it runs from one already, or -errno. NULL: the caller runs from one already. */
        int (*seal_exe)(void);
        bool config_warned; /* this process is that re-exec: config.json's warnings were logged already */
} CreateOptions;

/* On success the init is blocked before exec and the state says created. ret_pid/ret_pidfd (optional) give
 * the init to a caller that waits for it (`run`); else the init is left to be reparented. */
int container_create(const CreateOptions *o, pid_t *ret_pid, int *ret_pidfd, char **reterr);
int container_start(const char *root, const char *id, char **reterr);
typedef struct StartOptions {
        /* NOTIFY_SOCKET: the MAINPID= sent with READY=1 (0: the container's init, as runc). */
        pid_t notify_mainpid;
        /* NOTIFY_SOCKET: the proxy of the container's notify socket (its limits and what it forwarded so
         * far), for a caller that keeps forwarding (`run`); stays NULL without NOTIFY_SOCKET. */
        NotifyProxy **ret_notify_proxy;
} StartOptions;
int container_start_full(const char *root, const char *id, const StartOptions *so, char **reterr);
/* `run`: create and start; detached, that is all (*ret_status 0); in the foreground, wait for the init
 * forwarding signals, the pty and the notify socket, then delete (unless keep): *ret_status is the process's
 * exit status as a shell reports it. A start that fails kills the init and (unless keep) deletes the
 * container before it returns. */
typedef struct RunOptions {
        CreateOptions create;
        bool detach; /* --detach */
        bool keep;   /* --keep: never delete */
} RunOptions;
int container_run(const RunOptions *o, int *ret_status, char **reterr);
int container_kill(const char *root, const char *id, int sig, bool all, char **reterr);
int container_delete(const char *root, const char *id, bool force, char **reterr);

/* `state`: runc's state output (the OCI state plus rootfs, created, owner, and sdrun's systemdUnit). */
int container_state(const char *root, const char *id, cJSON **ret, char **reterr);
int container_state_json(Container *ct, ContainerStatus st, cJSON **ret);

/* `list`: every container below root, sorted by id; one whose state.json is corrupt is listed too (ct->corrupt;
 * only its id holds). A state directory refused (not the caller's alone, a newer format) is left out with a
 * warning. */
typedef struct ContainerListEntry {
        Container *ct;
        ContainerStatus status;
        pid_t pid; /* 0 without a live process */
} ContainerListEntry;
typedef struct ContainerList {
        ContainerListEntry *entries;
        size_t n;
} ContainerList;
int container_list(const char *root, ContainerList *ret, char **reterr);
void container_list_done(ContainerList *l);
/* runc's `list --format json`: an array of the containers' states in runc's field order. */
int container_list_json(const ContainerList *l, cJSON **ret);

/* Crash-safety tests: SDRUN_TEST_STOP_AT=<step> makes the runtime SIGKILL itself at that step (builds with
 * -Dtest_injection=true only). */
void test_stop_at(const char *step);
