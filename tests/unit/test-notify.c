/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "macro.h"
#include "notify.h"
#include "oci-config.h"
#include "tap.h"

static char *filter(const char *msg, pid_t mainpid, bool *ready, uint64_t *extend) {
        char *out = NULL;
        tap_ok(notify_filter(msg, strlen(msg), mainpid, &out, ready, extend) == 0, "notify_filter runs");
        return out;
}

static void test_filter(void) {
        bool ready;
        uint64_t extend;
        char *out;

        out = filter("READY=1", 42, &ready, &extend);
        tap_is_str(out, "READY=1\nMAINPID=42\n", "READY=1 gets MAINPID= of the init");
        tap_ok(ready && extend == 0, "READY=1 is ready");
        free(out);

        out = filter("READY=1\nMAINPID=1\nSTATUS=up\nFDSTORE=1\nBARRIER=1", 7, &ready, NULL);
        tap_is_str(out, "READY=1\nSTATUS=up\nMAINPID=7\n", "the container's MAINPID= and FDSTORE= are dropped");
        free(out);

        out = filter("STATUS=loading\nEXTEND_TIMEOUT_USEC=5000000\n", 7, &ready, &extend);
        tap_is_str(out, "STATUS=loading\nEXTEND_TIMEOUT_USEC=5000000\n", "STATUS= and EXTEND_TIMEOUT_USEC= pass");
        tap_ok(!ready && extend == 5000000, "EXTEND_TIMEOUT_USEC= is read, not ready");
        free(out);

        out = filter("RELOADING=1\nMONOTONIC_USEC=123\nSTOPPING=1\nWATCHDOG=1\nWATCHDOG_USEC=100\nERRNO=2", 0, &ready, NULL);
        tap_is_str(out, "RELOADING=1\nMONOTONIC_USEC=123\nSTOPPING=1\nWATCHDOG=1\nWATCHDOG_USEC=100\nERRNO=2\n",
                   "RELOADING=, STOPPING=, WATCHDOG=, ERRNO= pass; no MAINPID= without READY=1");
        free(out);

        out = filter("MAINPID=1\nFDSTORE=1", 7, &ready, NULL);
        tap_ok(out == NULL, "nothing to forward: NULL");

        out = filter("READY=10\nEXTEND_TIMEOUT_USEC=-1", 7, &ready, &extend);
        tap_ok(!ready && extend == 0, "READY=10 is not READY=1, a negative extension is ignored");
        free(out);

        const char with_nul[] = "STATUS=a\0b\nREADY=1";
        out = NULL;
        tap_ok(notify_filter(with_nul, sizeof with_nul - 1, 0, &out, &ready, NULL) == 0 && out &&
               streq(out, "READY=1\n") && ready, "a line with a NUL is dropped");
        free(out);
}

static void test_config(void) {
        OciConfig *c = NULL;
        const char *json = "{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"rootfs\"},"
                           "\"process\":{\"args\":[\"true\"],\"cwd\":\"/\",\"env\":[\"A=1\",\"NOTIFY_SOCKET=/x\"]},"
                           "\"mounts\":[{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\"}],"
                           "\"linux\":{\"namespaces\":[{\"type\":\"mount\"}]}}";
        NotifyReady mode;
        char *err = NULL;

        tap_ok(oci_config_parse(json, strlen(json), &c, NULL) == 0, "config parses");
        tap_ok(notify_setup_config(c, "/run/sdrun/x/notify") == 0, "notify_setup_config");
        tap_is_int((int) c->n_mounts, 2, "one mount more");
        tap_is_str(c->mounts[1].destination, "/run/notify", "on /run/notify");
        tap_is_str(c->mounts[1].source, "/run/sdrun/x/notify", "from the state dir");
        tap_is_str(c->process.env[1], "NOTIFY_SOCKET=/run/notify/notify.sock", "NOTIFY_SOCKET replaced");
        tap_ok(c->process.env[2] == NULL, "not appended twice");

        unsetenv(NOTIFY_READY_ENV);
        tap_ok(notify_ready_mode(c, &mode, NULL) == 0 && mode == NOTIFY_READY_CONTAINER, "default: container");
        setenv(NOTIFY_READY_ENV, "started", 1);
        tap_ok(notify_ready_mode(c, &mode, NULL) == 0 && mode == NOTIFY_READY_STARTED, "env: started");
        setenv(NOTIFY_READY_ENV, "bogus", 1);
        tap_ok(notify_ready_mode(c, &mode, &err) == -EINVAL && err && strstr(err, NOTIFY_READY_ENV),
               "a bad env value is an error naming it: %s", strna(err));
        free(err);
        unsetenv(NOTIFY_READY_ENV);
        oci_config_free(c);
}

static void test_send(void) {
        char path[] = "/tmp/sdrun-notify-test-XXXXXX", sock[64], buf[64] = "";
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int s;

        if (!mkdtemp(path)) {
                tap_ok(false, "mkdtemp");
                return;
        }
        snprintf(sock, sizeof sock, "%s/s", path);
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock);
        s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        tap_ok(s >= 0 && bind(s, (struct sockaddr *) &sa, sizeof sa) == 0, "bind a listener");
        tap_ok(notify_send(sock, "READY=1\n") == 0, "notify_send to a path");
        tap_ok(recv(s, buf, sizeof buf - 1, MSG_DONTWAIT) == 8 && streq(buf, "READY=1\n"), "received");
        close(s);
        unlink(sock);
        rmdir(path);

        /* Abstract: "@name". */
        char name[64];
        snprintf(name, sizeof name, "@sdrun-notify-test-%d", (int) getpid());
        sa = (struct sockaddr_un) { .sun_family = AF_UNIX };
        memcpy(sa.sun_path + 1, name + 1, strlen(name) - 1);
        s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        tap_ok(s >= 0 && bind(s, (struct sockaddr *) &sa, (socklen_t) (offsetof(struct sockaddr_un, sun_path) + strlen(name))) == 0,
               "bind an abstract listener");
        memset(buf, 0, sizeof buf);
        tap_ok(notify_send(name, "STATUS=x") == 0, "notify_send to @name");
        tap_ok(recv(s, buf, sizeof buf - 1, MSG_DONTWAIT) == 8 && streq(buf, "STATUS=x"), "received on the abstract socket");
        close(s);
        tap_ok(notify_send("@sdrun-nobody-listens-here", "READY=1") == -ECONNREFUSED, "nobody listening: -ECONNREFUSED");
}

int main(void) {
        test_filter();
        test_config();
        test_send();
        return tap_done();
}
