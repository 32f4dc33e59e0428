/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The state store: <root>/<id>/ holds state.json (written atomically), config.json (the config the
 * container was created with), lock (flock: held exclusively by `create` for as long as it runs, and by
 * every verb that changes the container), and start.sock (the start barrier the init listens on). */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "json-util.h"

/* The comm of the container init until it execs the user process (bootstrap.c sets it). */
#define INIT_COMM "sdrun:init"
/* The socket in the state directory on which the init waits for `start`. */
#define START_SOCKET_NAME "start.sock"
/* The format of state.json, written as sdrun.stateFormat next to the release that wrote it
 * (sdrun.version). A reader takes every format up to its own (a state without the field is format 1, as
 * the releases before it wrote), and refuses a newer one, naming both releases, rather than misread it.
 * Raise it when a change would make an older sdrun misread the state (a field whose meaning changes, one
 * an older sdrun must not ignore); a new field older readers may ignore needs no new format. */
#define STATE_FORMAT 1U

typedef enum ContainerStatus {
        CONTAINER_CREATING,
        CONTAINER_CREATED,
        CONTAINER_RUNNING,
        CONTAINER_PAUSED,
        CONTAINER_STOPPED,
        _CONTAINER_STATUS_MAX,
        _CONTAINER_STATUS_INVALID = -EINVAL,
} ContainerStatus;

typedef enum ContainerLock {
        CONTAINER_LOCK_NONE,      /* read-only look (state, list) */
        CONTAINER_LOCK_EXCLUSIVE, /* verbs that change the container; bounded wait */
} ContainerLock;

typedef struct Container {
        char *root;
        char *id;
        int root_fd; /* the state root, checked by state_root_open() */
        int dir_fd;
        int lock_fd; /* -EBADF unless we hold the lock */
        /* start: container_status() keeps the connection its look at the start socket made (the init has
         * it in its accept queue, waiting for SYNC_START) instead of closing it and connecting again. */
        bool keep_start_conn;
        int start_conn; /* that connection, or -EBADF */

        /* Recorded in state.json. */
        ContainerStatus recorded; /* creating, created, running or stopped */
        pid_t pid;                /* 0 until the init is the final container process */
        uint64_t pid_start_time;
        char *bundle;
        char *rootfs;
        char *created; /* RFC 3339 */
        char *owner;
        char *unit;
        char *slice;
        char *cgroup;  /* the unit's ControlGroup, e.g. /machine.slice/sdrun-x.scope */
        char *machine; /* the name systemd-machined accepted for it, NULL when not registered */
        bool user_bus;
        cJSON *annotations; /* object, owned */
        /* The host ids the automatic user namespace maps the container's 0..size-1 onto (userns-auto.h), in
         * sdrun.usernsBase and sdrun.usernsSize (older releases ignore them); size 0: none. */
        uint32_t userns_base, userns_size;

        bool corrupt; /* container_load_salvage(): state.json could not be parsed; only id and dir_fd hold */
} Container;

const char *container_status_to_string(ContainerStatus s);

/* Valid ids: 1..1024 chars of [A-Za-z0-9_.+-], not "." or "..", not starting with "-" or ".". */
int container_id_validate(const char *id, char **reterr);

/* Open (with create: make, mode 0711, parents too) the state root, refusing one that is not owned by the
 * caller's effective uid or that group or others can write (-EPERM, the path and the problem in *reterr).
 * The state directories in it are held to the same rule when a container is loaded. */
int state_root_open(const char *root, bool create, int *ret_fd, char **reterr);

/* create: make <root>/<id> (-EEXIST if it exists), take the lock, write state "creating". */
int container_new(const char *root, const char *id, Container **ret, char **reterr);
/* Load <root>/<id>; -ENOENT with "container ID does not exist" if absent. */
int container_load(const char *root, const char *id, ContainerLock lock, Container **ret, char **reterr);
/* The same, but a state.json that cannot be parsed still gives a Container (corrupt = true, recorded
 * stopped, nothing else known) for `list` and `delete --force`. */
int container_load_salvage(const char *root, const char *id, ContainerLock lock, Container **ret,
                           char **reterr);
/* container_load(), then container_status() of it: what a verb that acts on the container looks at first. */
int container_load_status(const char *root, const char *id, ContainerLock lock, Container **ret,
                          ContainerStatus *ret_status, char **reterr);
void container_free(Container *c);
static inline void container_freep(Container **c) {
        if (*c)
                container_free(*c);
}
#define _cleanup_container_ __attribute__((cleanup(container_freep)))

int container_save(Container *c);
/* Copy of the config the container was created with. */
int container_save_config(Container *c, const char *json, size_t len);
int container_read_config(Container *c, char **ret, size_t *ret_len);

/* What is true now: creating (creator alive), created/running (init alive, same start time), paused (the
 * cgroup is frozen), stopped (init gone or a zombie, or the creator died). */
ContainerStatus container_status(Container *c);
/* A pidfd for the live init, or -ESRCH. Never for pid <= 0. */
int container_open_pidfd(Container *c);
/* The OCI state document (state-schema.json) for status st. */
int container_oci_state(Container *c, ContainerStatus st, cJSON **ret);
int container_oci_state_string(Container *c, ContainerStatus st, char **ret);
/* The state a hook reads on its stdin: status st, and pid as the hook sees it (none when pid <= 0). */
int container_hook_state_string(Container *c, ContainerStatus st, pid_t pid, char **ret);
/* Take the lock file name in the state root (made, mode 0600, with the root when missing), exclusively, with
 * the bounded wait of a container's lock: for what must be decided across containers (userns-auto.c). */
int state_root_lock(const char *root, const char *name, int *ret_fd, char **reterr);
/* Remove the state directory (the caller holds the lock). */
int container_remove(Container *c);
/* Ids below root, sorted (none if root does not exist; a root state_root_open() refuses fails). */
int container_list_ids(const char *root, char ***ret, size_t *ret_n, char **reterr);
/* The ids below root that the POSIX extended regular expression matches anywhere (crun's --regex of delete
 * and kill), sorted; NULL-terminated, possibly empty. */
int container_match_ids(const char *root, const char *regex, char ***ret, char **reterr);
/* Path of a file in the state dir usable by another process: "/proc/self/fd/N/name" would not be; this gives
 * "<root>/<id>/<name>". */
int container_path(Container *c, const char *name, char **ret);
/* Whether the cgroup of the container is frozen (cgroupfs). */
bool container_is_frozen(Container *c);

/* CRIU's --pidfile of `restore`, in the state directory until restore records the restored init. A restore
 * killed after CRIU wrote it leaves a container that runs: container_status() takes the init from it (when
 * the process is in the container's unit) rather than say stopped. */
#define RESTORE_PID_FILE "restore.pid"

/* A file in the state directory that says: `checkpoint` of a running container has CRIU freeze its cgroup
 * (--freeze-cgroup). CRIU thaws it when it ends, not when it is killed (with the checkpoint that runs it:
 * criu dies with its parent). container_status() of a container whose lock nobody holds undoes such a
 * freeze: nobody paused the container, and a frozen one would hang exec, kill and the next checkpoint. */
#define CHECKPOINTING_MARKER "checkpointing"
/* The marker's end (the caller holds the lock, or knows the checkpoint gone): the cgroup thawed if it is
 * frozen, then the marker removed; a failed thaw keeps the marker, for the next verb to try again. */
int container_end_checkpoint_freeze(Container *c);
