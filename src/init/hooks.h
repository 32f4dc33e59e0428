/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "oci-config.h"

/* Run the hooks of one kind in order, in the caller's namespaces, each with state_json on stdin and cwd as
 * working directory. A hook's stdout and stderr go to the runtime's log (never to the container's stdio).
 * A hook that exits non-zero, is killed, or outlives its timeout (then killed) fails the call with a message
 * naming the hook kind, index and path in *reterr. */
int hooks_run(const OciConfig *c, OciHookKind kind, const char *state_json, const char *cwd, char **reterr);
/* Poststop semantics: every hook runs; failures are logged as warnings; always returns 0. */
int hooks_run_all_warn(const OciConfig *c, OciHookKind kind, const char *state_json, const char *cwd);
/* In the container's init: hooks from now on execute through the sealed trampoline in fd (trampoline.h);
 * -EBADF: directly again. */
void hooks_exec_through(int trampoline_fd, bool avoid_execveat);
