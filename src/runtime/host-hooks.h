/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "oci-config.h"

/* The runtime's own hooks (prestart, createRuntime, poststart, poststop), run on the host by execve() with the
 * semantics of oci_hooks_run() (oci-hooks.h): in order, the state on stdin, output to the log, bounded. */
int host_hooks_run(const OciConfig *c, OciHookKind kind, const char *state_json, const char *cwd,
                   char **reterr);
/* Poststop semantics: every hook runs; failures are logged as warnings; always returns 0. */
int host_hooks_run_all_warn(const OciConfig *c, OciHookKind kind, const char *state_json, const char *cwd);
