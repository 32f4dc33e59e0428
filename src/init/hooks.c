/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "hooks.h"
#include "oci-hooks.h"
#include "trampoline.h"

typedef struct ContainerHookExec {
        int tramp_fd;
        bool avoid_execveat;
} ContainerHookExec;

static int container_hook_execve(const char *path, char *const argv[], char *const envp[], void *userdata,
                                 char **reterr) {
        const ContainerHookExec *t = userdata;
        return trampoline_execve(t->tramp_fd, t->avoid_execveat, -1, path, argv, envp, -1, 0, reterr);
}

int container_hooks_run(const OciConfig *c, OciHookKind kind, const char *state_json, const char *cwd,
                        int tramp_fd, bool avoid_execveat, char **reterr) {
        ContainerHookExec t = { .tramp_fd = tramp_fd, .avoid_execveat = avoid_execveat };

        return oci_hooks_run(
                c, kind, state_json, cwd,
                &(const OciHookExec){ .exec = container_hook_execve, .userdata = &t, .keep_fd = tramp_fd },
                reterr);
}
