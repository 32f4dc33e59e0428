/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "oci-config.h"

/* How a hook's program is executed: each side of the runtime gives its own (the host's hooks by execve(),
 * src/runtime/host-hooks.c; the container's through the sealed trampoline, src/init/hooks.c). */
typedef struct OciHookExec {
        /* Called in the hook's child, its stdio, fds, cwd and signal mask set up (spawn_run()), with the
         * hook's argv (its args, or [path]) and envp (its env, or none): returns only if the exec failed, a
         * negative errno, with a message in *reterr or not. */
        int (*exec)(const char *path, char *const argv[], char *const envp[], void *userdata, char **reterr);
        void *userdata;
        /* An fd the hook's child keeps open (the trampoline), or -EBADF. */
        int keep_fd;
} OciHookExec;

/* Run the hooks of one kind in order, in the caller's namespaces, each with state_json on stdin and cwd as
 * working directory. A hook's stdout and stderr go to the runtime's log (never to the container's stdio).
 * A hook that exits non-zero, is killed, or outlives its timeout (then killed) fails the call with a message
 * naming the hook kind, index and path in *reterr. */
int oci_hooks_run(const OciConfig *c, OciHookKind kind, const char *state_json, const char *cwd,
                  const OciHookExec *how, char **reterr);
/* Poststop semantics: every hook runs; failures are logged as warnings; always returns 0. */
int oci_hooks_run_all_warn(const OciConfig *c, OciHookKind kind, const char *state_json, const char *cwd,
                           const OciHookExec *how);
