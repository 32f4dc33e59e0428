/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* `exec`: run a new process inside a running container, without re-executing sdrun and without a new unit.
 *
 * The runtime joins the init's pid namespace for its children only (setns(pidfd, CLONE_NEWPID)), makes itself
 * non-dumpable, and clone3()s the process straight into the init's cgroup (CLONE_INTO_CGROUP on the unified
 * hierarchy; on the hybrid layout the v1 hierarchies are written before the child is released). The child
 * joins every other namespace of the init at once (setns with the init's pidfd), sets up the process
 * (cwd, rlimits, tty, user, capabilities, no_new_privs, seccomp right before execve) and execs. Every step
 * is acknowledged over the sync protocol (sync.h); the runtime learns that execve succeeded when the sync
 * socket (close-on-exec) closes while the child still carries its pre-exec name. */

#include <stdbool.h>
#include <sys/types.h>

typedef struct ExecOptions {
        const char *root;
        const char *id;
        const char *process_file; /* --process: a process object (same model as config.json's) */
        char **args;              /* COMMAND ARGS (NULL-terminated); used when process_file is NULL */
        bool tty;                 /* --tty */
        const char *console_socket;
        const char *pidfd_socket; /* --pidfd-socket: receives a pidfd of the process once it has exec'd */
        const char *pid_file;     /* --pid-file: the process's pid, written once it has exec'd */
        /* Foreground --tty without --console-socket: keep the pty master here for the caller to proxy. */
        int *ret_console_master;
        bool detach;
        const char *cwd;
        char **env; /* --env K=V, appended */
        bool has_user;
        uid_t uid;
        bool has_gid;
        gid_t gid;
        gid_t *additional_gids; /* appended */
        size_t n_additional_gids;
        char **caps; /* --cap names */
        bool no_new_privs;
        unsigned preserve_fds;
        const char *process_label; /* --process-label: refused when non-empty (no SELinux support) */
        const char *apparmor;      /* --apparmor: refused when non-empty (no AppArmor support) */
        bool ignore_paused;
        char **sub_cgroups; /* --cgroup [CONTROLLERS:]PATH, NULL-terminated; NULL for none */
        /* Where the exec child must be cloned into the container's pid namespace itself (the trampoline may
         * not clone there: a seccomp profile that refuses it, a seccomp listener; or the container has no
         * pid namespace of its own): re-executes this process from a sealed copy of its binary (does not
         * return then; exec starts over in the new image) and returns 0 when it runs from one already.
         * NULL: the caller sees to it. */
        int (*seal_exe)(void);
} ExecOptions;

typedef struct ExecProcess {
        pid_t pid; /* host pid of the exec'd process; our child */
        int pidfd;
} ExecProcess;

/* Start the process; returns once it has called execve successfully (it may have exited already: it is
 * not reaped) and its pidfd went to --pidfd-socket and its pid to --pid-file. On failure *reterr says why
 * (e.g. "exec: \"foo\": executable file not found in $PATH") and nothing is left running. */
int container_exec(const ExecOptions *o, ExecProcess *ret, char **reterr);
