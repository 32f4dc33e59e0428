/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error-util.h"
#include "log.h"
#include "macro.h"
#include "oci-hooks.h"
#include "spawn-util.h"
#include "string-util.h"

/* A hook without a timeout may run as long as it likes, but nothing of ours waits forever: the default
 * bound is generous. */
#define HOOK_DEFAULT_TIMEOUT_SEC 600

static char *const empty_env[] = { NULL };

typedef struct HookChild {
        const OciHook *hook;
        const OciHookExec *how;
} HookChild;

/* In the hook's child (spawn_run()): its argv and envp, the side's exec, and the words of a failing one. */
static void hook_exec(void *userdata) {
        const HookChild *hc = userdata;
        const OciHook *h = hc->hook;
        char *default_argv[] = { h->path, NULL };
        char *err = NULL;

        int r = hc->how->exec(h->path, h->args && h->args[0] ? h->args : default_argv, h->env ?: empty_env,
                              hc->how->userdata, &err);
        dprintf(STDERR_FILENO, "exec \"%s\": %s\n", h->path, err ?: strerror(-r));
        _exit(127);
}

static void log_hook_output(OciHookKind kind, size_t idx, char *out) {
        for (char *p = out, *line; (line = next_line(&p));)
                log_info("hook %s[%zu]: %s", oci_hook_kind_to_string(kind), idx, line);
}

static int hook_run_one(const OciHook *h, OciHookKind kind, size_t idx, const char *state_json,
                        const char *cwd, const OciHookExec *how, char **reterr) {
        const char *k = oci_hook_kind_to_string(kind);
        int timeout = h->has_timeout ? h->timeout : HOOK_DEFAULT_TIMEOUT_SEC;
        HookChild hc = { .hook = h, .how = how };
        SpawnResult res;
        int r;

        r = spawn_run(&(const SpawnParams){ .input = state_json,
                                            .input_len = strlen(state_json),
                                            .cwd = cwd,
                                            .keep_fd = how->keep_fd,
                                            .timeout_usec = (uint64_t) timeout * USEC_PER_SEC,
                                            .exec = hook_exec,
                                            .userdata = &hc },
                      &res, reterr);
        if (r < 0)
                return errwrap(reterr, r, "error running %s hook #%zu: \"%s\"", k, idx, h->path);

        /* Trim one trailing newline for the error message. */
        char *msg = res.output;
        if (res.output_len > 0 && res.output[res.output_len - 1] == '\n')
                res.output[res.output_len - 1] = 0;
        log_hook_output(kind, idx, res.output);

        if (res.timed_out)
                return errorf(reterr, ETIMEDOUT,
                              "error running %s hook #%zu: \"%s\" timed out after %d s and was killed", k,
                              idx, h->path, timeout);
        if (res.code == CLD_EXITED && res.status == 0)
                return 0;
        if (res.code == CLD_EXITED)
                return errorf(reterr, EIO,
                              "error running %s hook #%zu: \"%s\" failed with exit status %d%s%s", k, idx,
                              h->path, res.status, *msg ? ": " : "", msg);
        /* runc's words after the path ("error running hook: signal: bad system call"): its seccomp.bats
         * looks for them. */
        char sig[64];
        snprintf(sig, sizeof sig, "%s", strsignal(res.status));
        for (char *q = sig; *q; q++)
                *q = (char) tolower((unsigned char) *q);
        return errorf(reterr, EIO,
                      "error running %s hook #%zu: \"%s\" was killed: error running hook: signal: %s", k,
                      idx, h->path, sig);
}

int oci_hooks_run(const OciConfig *c, OciHookKind kind, const char *state_json, const char *cwd,
                  const OciHookExec *how, char **reterr) {
        int r;

        for (size_t i = 0; i < c->hooks.n_hooks[kind]; i++) {
                log_debug("running %s hook #%zu: %s", oci_hook_kind_to_string(kind), i,
                          c->hooks.hooks[kind][i].path);
                r = hook_run_one(&c->hooks.hooks[kind][i], kind, i, state_json, cwd, how, reterr);
                if (r < 0)
                        return r;
        }
        return 0;
}

int oci_hooks_run_all_warn(const OciConfig *c, OciHookKind kind, const char *state_json, const char *cwd,
                           const OciHookExec *how) {
        for (size_t i = 0; i < c->hooks.n_hooks[kind]; i++) {
                _cleanup_free_ char *err = NULL;
                if (hook_run_one(&c->hooks.hooks[kind][i], kind, i, state_json, cwd, how, &err) < 0)
                        log_warning("%s", err ?: "hook failed");
        }
        return 0;
}
