/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trampoline_seccomp_allows_fork(): whether exec's process may be cloned into the container's pid namespace
 * by the trampoline (clone with CLONE_PARENT|CLONE_VFORK, prctl PR_SET_PDEATHSIG, setsid, ioctl TIOCSCTTY)
 * under linux.seccomp, judged on the profiles the clients really send and on profiles that refuse one of
 * those calls for exactly the trampoline's arguments. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "macro.h"
#include "oci-config.h"
#include "tap.h"
#include "trampoline.h"

static OciConfig *parse(const char *json) {
        OciConfig *c = NULL;
        char *err = NULL;

        if (oci_config_parse(json, strlen(json), &c, &err) < 0) {
                printf("# parse failed: %s\n", err ?: "?");
                free(err);
                return NULL;
        }
        return c;
}

static OciConfig *load(const char *name) {
        char path[512], *json = NULL;
        OciConfig *c;

        snprintf(path, sizeof path, "%s/tests/client-configs/%s", TEST_SRCDIR, name);
        if (read_full_file_at(AT_FDCWD, path, 16U << 20, &json, NULL) < 0) {
                printf("# cannot read %s\n", path);
                return NULL;
        }
        c = parse(json);
        free(json);
        return c;
}

static void check(OciConfig *c, bool terminal, bool expected, const char *what) {
        if (!c) {
                tap_ok(false, "%s: the config parses", what);
                return;
        }
        tap_is_int(trampoline_seccomp_allows_fork(&c->linux_.seccomp, terminal), expected, "%s", what);
}

/* A minimal config whose linux.seccomp is SECCOMP (a JSON object). */
static OciConfig *with_seccomp(const char *seccomp) {
        char json[4096];

        snprintf(
                json, sizeof json,
                "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"rootfs\"}, \"process\": {\"args\": [\"sh\"], "
                "\"cwd\": \"/\", \"user\": {\"uid\": 0, \"gid\": 0}}, \"linux\": {\"seccomp\": %s}}",
                seccomp);
        return parse(json);
}

int main(void) {
        static const struct {
                const char *file;
                bool terminal;
        } clients[] = {
                { "docker/default.json", false },    { "docker/tty.json", true },
                { "podman/default.json", false },    { "podman/tty.json", true },
                { "ctr/default.json", false },       { "ctr/seccomp-env-cwd.json", false },
                { "docker/privileged.json", false },
        };

        /* What the clients send: every profile lets the trampoline clone. */
        FOREACH_ARRAY(cl, clients, ELEMENTSOF(clients)) {
                OciConfig *c = load(cl->file);
                char what[256];
                snprintf(what, sizeof what, "%s (terminal %s): the trampoline may clone", cl->file,
                         cl->terminal ? "yes" : "no");
                check(c, cl->terminal, true, what);
                oci_config_freep(&c);
        }

        static const struct {
                const char *seccomp;
                bool terminal, expected;
                const char *what;
        } cases[] = {
                { "{\"defaultAction\": \"SCMP_ACT_ALLOW\"}", true, true, "allow by default" },
                { "{\"defaultAction\": \"SCMP_ACT_LOG\"}", true, true, "log by default" },
                { "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"syscalls\": [{\"names\": [\"prctl\", \"setsid\"], "
                  "\"action\": \"SCMP_ACT_ALLOW\"}]}",
                  false, false, "deny by default, clone not named" },
                { "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"syscalls\": [{\"names\": [\"clone\", \"prctl\", "
                  "\"setsid\"], \"action\": \"SCMP_ACT_ALLOW\"}]}",
                  false, true, "deny by default, the calls named" },
                { "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"syscalls\": [{\"names\": [\"clone\", \"prctl\", "
                  "\"setsid\"], \"action\": \"SCMP_ACT_ALLOW\"}]}",
                  true, false, "deny by default, the calls named, ioctl not: no terminal" },
                { "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"clone\"], \"action\": "
                  "\"SCMP_ACT_ERRNO\", \"args\": [{\"index\": 0, \"value\": 32768, \"valueTwo\": 32768, \"op\": "
                  "\"SCMP_CMP_MASKED_EQ\"}]}]}",
                  false, false, "clone with CLONE_PARENT refused" },
                { "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"clone\"], \"action\": "
                  "\"SCMP_ACT_ERRNO\", \"args\": [{\"index\": 0, \"value\": 1073741824, \"valueTwo\": "
                  "1073741824, \"op\": \"SCMP_CMP_MASKED_EQ\"}]}]}",
                  false, true, "clone with CLONE_NEWNET refused: not ours" },
                { "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"clone\"], \"action\": "
                  "\"SCMP_ACT_KILL\"}]}",
                  false, false, "clone killed" },
                { "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"setsid\"], \"action\": "
                  "\"SCMP_ACT_ERRNO\"}]}",
                  false, false, "setsid refused" },
                { "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"prctl\"], \"action\": "
                  "\"SCMP_ACT_ERRNO\", \"args\": [{\"index\": 0, \"value\": 1, \"op\": \"SCMP_CMP_EQ\"}]}]}",
                  false, false, "prctl(PR_SET_PDEATHSIG) refused" },
                { "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"prctl\"], \"action\": "
                  "\"SCMP_ACT_ERRNO\", \"args\": [{\"index\": 0, \"value\": 22, \"op\": \"SCMP_CMP_EQ\"}]}]}",
                  false, true, "prctl(PR_SET_SECCOMP) refused: not ours" },
                { "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"ioctl\"], \"action\": "
                  "\"SCMP_ACT_ERRNO\", \"args\": [{\"index\": 1, \"value\": 21518, \"op\": \"SCMP_CMP_EQ\"}]}]}",
                  true, false, "ioctl(TIOCSCTTY) refused, with a terminal" },
                { "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"ioctl\"], \"action\": "
                  "\"SCMP_ACT_ERRNO\", \"args\": [{\"index\": 1, \"value\": 21518, \"op\": \"SCMP_CMP_EQ\"}]}]}",
                  false, true, "ioctl(TIOCSCTTY) refused, without a terminal" },
                { "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"clone\"], \"action\": "
                  "\"SCMP_ACT_NOTIFY\"}], \"listenerPath\": \"/run/agent.sock\"}",
                  false, false, "clone sent to a listener" },
        };
        FOREACH_ARRAY(t, cases, ELEMENTSOF(cases)) {
                OciConfig *c = with_seccomp(t->seccomp);
                check(c, t->terminal, t->expected, t->what);
                oci_config_freep(&c);
        }
        tap_is_int(trampoline_seccomp_allows_fork(NULL, true), true, "no profile");
        return tap_done();
}
