/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The hooks (oci-hooks.c on spawn_run(), as host-hooks.c runs them) with host programs as hooks (/bin/sh -c
 * ...), no root: args and argv[0], env, the state on stdin, cwd, what the hook inherits (fds, signal mask),
 * output to the log and never to our stdout, a non-zero exit, a killed hook, a timeout, a missing or
 * non-executable binary, order and the first failure, the poststop semantics, a daemonised grandchild
 * holding the output pipe. */

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "host-hooks.h"
#include "log.h"
#include "macro.h"
#include "oci-config.h"
#include "process-util.h"
#include "tap.h"

static char tmp[] = "/tmp/test-hooks-XXXXXX";
static char logged[65536];

static void sink(int level, const char *container_id, const char *unit, const char *msg) {
        (void) level;
        (void) container_id;
        (void) unit;
        size_t n = strlen(logged);
        snprintf(logged + n, sizeof logged - n, "%s\n", msg);
}

static char *path_in_tmp(const char *name) {
        char *p;
        if (asprintf(&p, "%s/%s", tmp, name) < 0)
                abort();
        return p;
}

static char *slurp(const char *name) {
        _cleanup_free_ char *p = path_in_tmp(name);
        char *buf = NULL;
        if (read_full_file_at(AT_FDCWD, p, 1U << 24, &buf, NULL) < 0)
                return NULL;
        return buf;
}

static void put_file(const char *name, const char *content, mode_t mode) {
        _cleanup_free_ char *p = path_in_tmp(name);
        (void) unlink(p);
        _cleanup_close_ int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        if (fd < 0 || write(fd, content, strlen(content)) != (ssize_t) strlen(content))
                abort();
}

/* One hook: /bin/sh -c SCRIPT, with $T the temporary directory in its environment. */
static OciHook sh_hook(const char *script) {
        OciHook h = { .path = strdup("/bin/sh") };
        h.args = calloc(4, sizeof(char *));
        h.env = calloc(3, sizeof(char *));
        h.args[0] = strdup("sh");
        h.args[1] = strdup("-c");
        h.args[2] = strdup(script);
        if (asprintf(&h.env[0], "T=%s", tmp) < 0)
                abort();
        h.env[1] = strdup("PATH=/usr/bin:/bin");
        return h;
}

static void hook_done(OciHook *h) {
        free(h->path);
        for (size_t i = 0; h->args && h->args[i]; i++)
                free(h->args[i]);
        for (size_t i = 0; h->env && h->env[i]; i++)
                free(h->env[i]);
        free(h->args);
        free(h->env);
        *h = (OciHook) {};
}

/* Run hooks of kind prestart; returns host_hooks_run()'s result, *err its message. */
static int run_hooks(OciHook *hooks, size_t n, const char *state, const char *cwd, char **err) {
        OciConfig c = {};
        c.hooks.hooks[OCI_HOOK_PRESTART] = hooks;
        c.hooks.n_hooks[OCI_HOOK_PRESTART] = n;
        free(*err);
        *err = NULL;
        return host_hooks_run(&c, OCI_HOOK_PRESTART, state, cwd, err);
}

static int run_one(const char *script, const char *state, char **err) {
        OciHook h = sh_hook(script);
        int r = run_hooks(&h, 1, state, NULL, err);
        hook_done(&h);
        return r;
}

static void test_ok(void) {
        _cleanup_free_ char *err = NULL, *out = NULL;
        OciConfig none = {};

        tap_is_int(host_hooks_run(&none, OCI_HOOK_PRESTART, "{}", NULL, &err), 0, "no hooks: 0");
        tap_is_int(run_one("exit 0", "{}", &err), 0, "a hook that exits 0: 0");
        tap_ok(err == NULL, "... and no message");

        /* argv exactly as given, argv[0] included; env exactly as given. */
        setenv("SDRUN_TEST_LEAK", "1", 1);
        tap_is_int(run_one("tr '\\0' '|' </proc/$$/cmdline >$T/argv; env | sort >$T/env", "{}", &err), 0,
                   "a hook writing its argv and env");
        out = slurp("argv");
        tap_is_str(out, "sh|-c|tr '\\0' '|' </proc/$$/cmdline >$T/argv; env | sort >$T/env|", "args reach the hook as given");
        out = mfree(out);
        out = slurp("env");
        tap_ok(out && strstr(out, "PATH=/usr/bin:/bin\n") && strstr(out, "T=/tmp/test-hooks-"),
               "the hook's env holds what it was given");
        tap_ok(out && !strstr(out, "SDRUN_TEST_LEAK") && !strstr(out, "HOME="), "and nothing of the runtime's environment");
        out = mfree(out);

        /* No args: argv is [path]. No env: an empty environment. */
        put_file("noargs.sh", "#!/bin/sh\nprintf '%s %s %s' \"$0\" \"$#\" \"$(env | grep -c SDRUN_TEST_LEAK)\" >\"${0%/*}/noargs.out\"\n",
                 0755);
        OciHook h = { .path = path_in_tmp("noargs.sh") };
        tap_is_int(run_hooks(&h, 1, "{}", NULL, &err), 0, "a hook without args and env: %s", strna(err));
        _cleanup_free_ char *want = NULL;
        if (asprintf(&want, "%s/noargs.sh 0 0", tmp) < 0)
                abort();
        out = slurp("noargs.out");
        tap_is_str(out, want, "argv is [path], no arguments, the runtime's environment is not passed");
        out = mfree(out);
        hook_done(&h);
        unsetenv("SDRUN_TEST_LEAK");
}

static void test_stdin(void) {
        _cleanup_free_ char *err = NULL, *out = NULL, *big = NULL;
        const char *state = "{\"ociVersion\":\"1.3.0\",\"id\":\"h\",\"status\":\"creating\",\"pid\":7,\"bundle\":\"/b\"}";

        tap_is_int(run_one("cat >$T/stdin", state, &err), 0, "a hook reading its stdin");
        out = slurp("stdin");
        tap_is_str(out, state, "the state arrives on stdin, whole, nothing more");
        out = mfree(out);

        /* More than a pipe's buffer: fed while the hook reads. */
        size_t n = 1U << 20;
        big = malloc(n + 1);
        for (size_t i = 0; i < n; i++)
                big[i] = (char) ('a' + i % 26);
        big[n] = 0;
        tap_is_int(run_one("cat >$T/stdin", big, &err), 0, "a hook reading 1 MiB of state");
        out = slurp("stdin");
        tap_ok(out && strlen(out) == n && streq(out, big), "1 MiB arrives whole (%zu bytes)", out ? strlen(out) : 0);
        out = mfree(out);

        /* A hook that never reads a large state: no SIGPIPE kills us, and its status counts. */
        tap_is_int(run_one("exit 0", big, &err), 0, "a hook that ignores 1 MiB of stdin and exits 0: 0");
        tap_is_int(run_one("exec 0<&-; sleep 0.1; exit 0", big, &err), 0, "a hook that closes its stdin at once: 0");
        sigset_t pending;
        sigpending(&pending);
        tap_ok(!sigismember(&pending, SIGPIPE), "no SIGPIPE is left pending for us");

        /* An empty state: stdin is at EOF at once. */
        tap_is_int(run_one("cat >$T/stdin", "", &err), 0, "an empty state");
        out = slurp("stdin");
        tap_is_str(out, "", "stdin is empty, at EOF");
}

static void test_cwd_inherit(void) {
        _cleanup_free_ char *err = NULL, *out = NULL;
        OciHook h;

        h = sh_hook("pwd >$T/cwd");
        tap_is_int(run_hooks(&h, 1, "{}", tmp, &err), 0, "a hook with a cwd");
        out = slurp("cwd");
        _cleanup_free_ char *want = NULL;
        if (asprintf(&want, "%s\n", tmp) < 0)
                abort();
        tap_is_str(out, want, "it runs in that cwd");
        out = mfree(out);
        tap_is_int(run_hooks(&h, 1, "{}", "/nonexistent/dir", &err), 0, "a hook with a missing cwd still runs");
        out = slurp("cwd");
        tap_is_str(out, "/\n", "in / then");
        out = mfree(out);
        hook_done(&h);

        /* An fd of ours without O_CLOEXEC and a blocked signal: neither reaches the hook. ls prints its fds
         * (0, 1, 2 and its own directory fd 3) and grep the mask, both to the log. */
        int leak = open("/dev/null", O_RDONLY);
        sigset_t set, saved;
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigprocmask(SIG_BLOCK, &set, &saved);
        char *ls_args[] = { (char *) "ls", (char *) "-1", (char *) "/proc/self/fd", NULL };
        char *grep_args[] = { (char *) "grep", (char *) "SigBlk", (char *) "/proc/self/status", NULL };
        h = (OciHook) { .path = (char *) "/bin/ls", .args = ls_args };
        logged[0] = 0;
        tap_is_int(run_hooks(&h, 1, "{}", NULL, &err), 0, "a hook listing its fds");
        tap_is_str(logged, "hook prestart[0]: 0\nhook prestart[0]: 1\nhook prestart[0]: 2\nhook prestart[0]: 3\n",
                   "only stdin, stdout and stderr reach the hook, not our fd %d without O_CLOEXEC", leak);
        h = (OciHook) { .path = (char *) "/bin/grep", .args = grep_args };
        logged[0] = 0;
        tap_is_int(run_hooks(&h, 1, "{}", NULL, &err), 0, "a hook reading its signal mask");
        sigprocmask(SIG_SETMASK, &saved, NULL);
        tap_is_str(logged, "hook prestart[0]: SigBlk:\t0000000000000000\n",
                   "the hook starts with no blocked signal though we block SIGTERM");
        safe_close(leak);
}

static void test_output(void) {
        _cleanup_free_ char *err = NULL, *out = NULL;
        int saved = dup(STDOUT_FILENO);
        _cleanup_free_ char *capture = path_in_tmp("our-stdout");
        int fd = open(capture, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        /* Our stdout is the TAP stream: the hook's output must never appear there. */
        fflush(stdout);
        if (fd < 0 || saved < 0 || dup2(fd, STDOUT_FILENO) < 0)
                abort();
        logged[0] = 0;
        int r = run_one("echo to-stdout; echo to-stderr >&2", "{}", &err);
        fflush(stdout);
        dup2(saved, STDOUT_FILENO);
        safe_close(saved);
        safe_close(fd);
        tap_is_int(r, 0, "a hook writing to stdout and stderr");
        out = slurp("our-stdout");
        tap_is_str(out, "", "nothing reaches the runtime's stdout");
        tap_ok(strstr(logged, "hook prestart[0]: to-stdout\n") && strstr(logged, "hook prestart[0]: to-stderr\n"),
               "both lines go to the log, named by kind and index");
}

static void test_failures(void) {
        _cleanup_free_ char *err = NULL;
        int r;

        tap_is_int(run_one("echo something went wrong >&2; exit 3", "{}", &err), -EIO, "a hook that exits 3: -EIO");
        tap_is_str(err, "error running prestart hook #0: \"/bin/sh\" failed with exit status 3: something went wrong",
                   "the message names kind, index, path, status and the hook's last words");
        tap_is_int(run_one("exit 1", "{}", &err), -EIO, "a silent hook that exits 1: -EIO");
        tap_is_str(err, "error running prestart hook #0: \"/bin/sh\" failed with exit status 1", "... without a trailing colon");

        tap_is_int(run_one("kill -KILL $$", "{}", &err), -EIO, "a hook killed by SIGKILL: -EIO");
        tap_is_str(err, "error running prestart hook #0: \"/bin/sh\" was killed: error running hook: signal: killed", "the message names the signal");
        tap_is_int(run_one("kill -SEGV $$", "{}", &err), -EIO, "a hook killed by SIGSEGV: -EIO");
        tap_ok(err && strstr(err, "was killed: error running hook: signal: segmentation fault"), "%s", strna(err));

        OciHook h = { .path = strdup("/nonexistent/hook") };
        tap_is_int(run_hooks(&h, 1, "{}", NULL, &err), -EIO, "a missing binary: -EIO");
        tap_is_str(err, "error running prestart hook #0: \"/nonexistent/hook\" failed with exit status 127: exec \"/nonexistent/hook\": No such file or directory",
                   "the message says exit status 127 and why");
        hook_done(&h);

        put_file("noexec.sh", "#!/bin/sh\nexit 0\n", 0644);
        h = (OciHook) { .path = path_in_tmp("noexec.sh") };
        tap_is_int(run_hooks(&h, 1, "{}", NULL, &err), -EIO, "a binary without the x bit: -EIO");
        tap_ok(err && strstr(err, "failed with exit status 127: exec \"") && strstr(err, "Permission denied"),
               "the message says permission denied: %s", strna(err));
        hook_done(&h);

        /* The timeout: the hook is killed, and nothing of it is left. */
        h = sh_hook("echo $$ >$T/pid; exec sleep 30");
        h.has_timeout = true;
        h.timeout = 1;
        uint64_t t0 = now_usec(CLOCK_MONOTONIC);
        r = run_hooks(&h, 1, "{}", NULL, &err);
        uint64_t dt = now_usec(CLOCK_MONOTONIC) - t0;
        tap_is_int(r, -ETIMEDOUT, "a hook that outlives its timeout of 1 s: -ETIMEDOUT");
        tap_ok(dt >= USEC_PER_SEC && dt < 5 * USEC_PER_SEC, "after the timeout (%llu ms)", (unsigned long long) (dt / 1000));
        tap_is_str(err, "error running prestart hook #0: \"/bin/sh\" timed out after 1 s and was killed", "the message says so");
        _cleanup_free_ char *pid = slurp("pid");
        tap_ok(pid && atoi(pid) > 0 && kill(atoi(pid), 0) < 0 && errno == ESRCH, "the hook is killed and reaped (pid %d)",
               pid ? atoi(pid) : 0);
        hook_done(&h);
}

static void test_order(void) {
        _cleanup_free_ char *err = NULL, *out = NULL;
        OciHook hs[4] = {
                sh_hook("printf 0 >>$T/order"),
                sh_hook("printf 1 >>$T/order"),
                sh_hook("printf 2 >>$T/order; exit 9"),
                sh_hook("printf 3 >>$T/order"),
        };
        OciConfig c = {};

        put_file("order", "", 0644);
        tap_is_int(run_hooks(hs, 4, "{}", NULL, &err), -EIO, "four hooks, the third fails: -EIO");
        out = slurp("order");
        tap_is_str(out, "012", "they run in order, and none after the failing one");
        out = mfree(out);
        tap_ok(err && strstr(err, "error running prestart hook #2: ") && strstr(err, "exit status 9"), "the message names index 2: %s",
               strna(err));

        /* Poststop: every hook runs, failures are warnings, the result is 0. */
        put_file("order", "", 0644);
        c.hooks.hooks[OCI_HOOK_POSTSTOP] = hs;
        c.hooks.n_hooks[OCI_HOOK_POSTSTOP] = 4;
        logged[0] = 0;
        tap_is_int(host_hooks_run_all_warn(&c, OCI_HOOK_POSTSTOP, "{}", NULL), 0, "host_hooks_run_all_warn(): 0 despite a failure");
        out = slurp("order");
        tap_is_str(out, "0123", "every poststop hook runs");
        tap_ok(strstr(logged, "error running poststop hook #2: \"/bin/sh\" failed with exit status 9"), "the failure is logged");
        for (size_t i = 0; i < ELEMENTSOF(hs); i++)
                hook_done(&hs[i]);
}

static void test_grandchild(void) {
        _cleanup_free_ char *err = NULL, *pid = NULL;

        /* A hook that leaves a daemon behind holding its stdout: we return when the hook exits. */
        uint64_t t0 = now_usec(CLOCK_MONOTONIC);
        tap_is_int(run_one("sleep 20 & echo $! >$T/daemon; echo started", "{}", &err), 0,
                   "a hook that leaves a grandchild with its output pipe");
        uint64_t dt = now_usec(CLOCK_MONOTONIC) - t0;
        tap_ok(dt < 5 * USEC_PER_SEC, "returns when the hook exits, not when the pipe closes (%llu ms)",
               (unsigned long long) (dt / 1000));
        pid = slurp("daemon");
        if (pid && atoi(pid) > 0)
                (void) kill(atoi(pid), SIGKILL);
}

int main(void) {
        alarm(60); /* a hang is a failure, not a wait for the suite's timeout */
        if (!mkdtemp(tmp)) {
                perror("mkdtemp");
                return EXIT_FAILURE;
        }
        log_set_sink(sink);

        test_ok();
        test_stdin();
        test_cwd_inherit();
        test_output();
        test_failures();
        test_order();
        test_grandchild();

        rm_rf(tmp);
        return tap_done();
}
