/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "oci-config.h"

/* In the container's init: run the hooks of one kind (createContainer, startContainer) with the semantics of
 * oci_hooks_run() (oci-hooks.h), each executed through the sealed trampoline in tramp_fd (trampoline.h;
 * avoid_execveat where a seccomp filter in force refuses execveat), so that a hook path that resolves to
 * /proc/self/exe never runs the runtime's binary. */
int container_hooks_run(const OciConfig *c, OciHookKind kind, const char *state_json, const char *cwd,
                        int tramp_fd, bool avoid_execveat, char **reterr);
