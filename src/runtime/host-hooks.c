/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <unistd.h>

#include "host-hooks.h"
#include "macro.h"
#include "oci-hooks.h"

static int host_hook_execve(const char *path, char *const argv[], char *const envp[], void *userdata,
                            char **reterr) {
        (void) userdata;
        (void) reterr;
        execve(path, argv, envp);
        return -errno;
}

static const OciHookExec host_hook_exec = { .exec = host_hook_execve, .keep_fd = -EBADF };

int host_hooks_run(const OciConfig *c, OciHookKind kind, const char *state_json, const char *cwd,
                   char **reterr) {
        return oci_hooks_run(c, kind, state_json, cwd, &host_hook_exec, reterr);
}

int host_hooks_run_all_warn(const OciConfig *c, OciHookKind kind, const char *state_json, const char *cwd) {
        return oci_hooks_run_all_warn(c, kind, state_json, cwd, &host_hook_exec);
}
