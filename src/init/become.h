/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Becoming the container's process: the one container-side path shared by the init (create/start), `exec`
 * and hooks run inside the container, so that every defence exists once. Everything here runs in the
 * container's namespaces, as root there, before execve (privileged region). The last execve goes through
 * the sealed trampoline (trampoline.h). */

#include <stdbool.h>
#include <stdint.h>

#include "macro.h"
#include "oci-config.h"
#include "seccomp-filter.h"

typedef struct Become {
        const char *role; /* in debug lines: "standard_init" (the init) or "setns_init" (exec's child) */
        const OciProcess *p;
        const OciConfig *c;
        const SeccompProgram *filter; /* linux.seccomp compiled, or NULL */
        bool in_userns;               /* root of a user namespace of ours (or joined) */
        /* exec: we joined the container's pid namespace for our children only; the trampoline clones the
         * process into it (TRAMPOLINE_FORK), which then becomes the session leader and takes the terminal */
        bool fork_into_pidns;
        /* process.oomScoreAdj is in force already: written while this process (or, for the init, the
         * runtime) was still the host's root, outside any user namespace (become_prepare() leaves it) */
        bool oom_score_adj_done;
        unsigned preserve_fds;
        unsigned listen_fds;         /* socket activation: LISTEN_FDS/LISTEN_PID=1 (the init only) */
        const char *listen_fdnames;  /* and LISTEN_FDNAMES, or NULL */
        const char *credentials_dir; /* CREDENTIALS_DIRECTORY in the container, or NULL (the init only) */
        int sync_fd; /* to the runtime: errors, the pty master, the seccomp listener, SYNC_EXEC */
        uint64_t step_timeout_usec;
        char *exe; /* process.args[0] resolved by become_prepare() */
        char *err; /* the failure, filled by errorf(&b->err, ...) */
        /* The last step before the execve, with the process's credentials, capabilities and seccomp
         * filter in force (the init's startContainer hooks, as runc and crun run them); fills b->err. */
        int (*before_exec)(struct Become *b, void *userdata);
        void *before_exec_userdata;
} Become;

/* Report (*b->err, or "step: strerror") on the sync socket and _exit(1). */
_noreturn_ void become_fail(Become *b, int r, const char *step);

/* Become root (uid and gid 0) of the user namespace we are in, or, where its mappings have no 0, the lowest
 * ids they map, with the capabilities kept effective. Fills *reterr. */
int become_userns_root(char **reterr);

/* Read a small regular file of the container, never blocking on a FIFO or a device. */
int become_read_file(const char *path, size_t max, char **ret);

/* In the container's root: resolve process.args[0], apply oomScoreAdj (unless b->oom_score_adj_done), rlimits, personality, memory policy,
 * scheduler, ioPriority, execCPUAffinity.initial, and chdir to process.cwd. Fills b->exe and b->err. */
int become_prepare(Become *b);

/* process.terminal: a pty from the container's devpts, the master to the runtime (SYNC_CONSOLE, waits for
 * SYNC_CONSOLE_DONE), the slave as controlling terminal and stdio; setup_slave (may be NULL) runs on the
 * slave before it is sent (the init binds it to /dev/console). Without a terminal: setsid(). With
 * fork_into_pidns the session and the controlling terminal are the trampoline's to make: stdio only. */
int become_terminal(Become *b, int (*setup_slave)(int slave, char **reterr));

/* The rest, in one order for every caller: environment (HOME from /etc/passwd), execCPUAffinity.final, the
 * LSM exec labels, fds above 2 + preserve_fds close-on-exec, every signal
 * disposition back to default and an empty signal mask, user/capabilities/no_new_privs/seccomp, and the
 * execve of b->exe through the trampoline (which says SYNC_EXEC). Never returns: a failure is reported with become_fail(). */
_noreturn_ void become_exec(Become *b);
