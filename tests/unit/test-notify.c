/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "notify.h"
#include "oci-config.h"
#include "process-util.h"
#include "tap.h"

/* A listener at a fresh path; the proxy forwards to it. */
static int listener(char *dir, size_t dirlen, char *sock, size_t socklen) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int s;

        snprintf(dir, dirlen, "/tmp/sdrun-notify-test-XXXXXX");
        if (!mkdtemp(dir))
                return -errno;
        snprintf(sock, socklen, "%s/s", dir);
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock);
        s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s < 0 || bind(s, (struct sockaddr *) &sa, sizeof sa) < 0)
                return -errno;
        return s;
}

/* The next datagram the listener got, "" when none. */
static const char *got(int s) {
        static char buf[8192];
        ssize_t k = recv(s, buf, sizeof buf - 1, MSG_DONTWAIT);
        buf[k > 0 ? k : 0] = 0;
        return buf;
}

static void feed(NotifyProxy *p, const char *msg, bool *ready, uint64_t *extend) {
        notify_proxy_feed(p, msg, strlen(msg), ready, extend);
}

static void test_proxy(void) {
        char dir[64], sock[80];
        int s = listener(dir, sizeof dir, sock, sizeof sock), pair[2];
        NotifyProxy *p = NULL;
        bool ready = false;
        uint64_t extend = 0, t;
        char m[32];

        tap_ok(s >= 0, "bind a listener");
        tap_ok(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair) == 0, "socketpair");
        tap_ok(notify_proxy_new(pair[0], sock, 42, &p) == 0, "notify_proxy_new");
        t = now_usec(CLOCK_MONOTONIC);

        feed(p, "READY=1\nMAINPID=1\nSTATUS=up\nFDSTORE=1\nBARRIER=1", &ready, &extend);
        tap_ok(ready && extend == 0, "READY=1 is ready");
        tap_is_int(notify_proxy_flush_at(p, t), 1, "forwarded at once");
        tap_is_str(
                got(s), "READY=1\nMAINPID=42\nSTATUS=up\n",
                "READY=1 gets MAINPID= of the init; the container's MAINPID=, FDSTORE=, BARRIER= are dropped");

        feed(p, "STATUS=up\nREADY=1", &ready, NULL);
        tap_is_int(notify_proxy_flush_at(p, t), 0, "what was forwarded already is not forwarded again");
        tap_ok(notify_proxy_next(p, t) == USEC_INFINITY, "  nothing is left waiting");

        ready = false;
        const char with_nul[] = "READY=10\nEXTEND_TIMEOUT_USEC=-1\nSTATUS=a\0b";
        notify_proxy_feed(p, with_nul, sizeof with_nul - 1, &ready, &extend);
        tap_ok(!ready && extend == 0, "READY=10 is not READY=1, a negative extension is ignored");
        tap_is_int(notify_proxy_flush_at(p, t), 1, "READY=10 goes on");
        tap_is_str(got(s), "READY=10\nEXTEND_TIMEOUT_USEC=-1\n", "  a line with a NUL is dropped");

        /* The bucket: NOTIFY_BURST forwards at once (two spent above), then one per NOTIFY_FORWARD_USEC. */
        int n = 0;
        for (int i = 0; i < 100; i++) {
                snprintf(m, sizeof m, "STATUS=x%d", i);
                feed(p, m, NULL, NULL);
                n += notify_proxy_flush_at(p, t);
        }
        tap_is_int(n, NOTIFY_BURST - 2, "a flood of 100 changes: the rest of the burst goes on");
        for (int i = 0; i < n; i++)
                (void) got(s);
        tap_ok(notify_proxy_next(p, t) > t + NOTIFY_FORWARD_USEC - 5 * USEC_PER_MSEC &&
                       notify_proxy_next(p, t) <= t + NOTIFY_FORWARD_USEC,
               "  the next forward is NOTIFY_FORWARD_USEC later");
        tap_is_int(notify_proxy_flush_at(p, t + NOTIFY_FORWARD_USEC / 2), 0, "  not before");
        tap_is_int(notify_proxy_flush_at(p, t + NOTIFY_FORWARD_USEC), 1, "  then");
        tap_is_str(got(s), "STATUS=x99\n", "  with the latest value only");
        t += NOTIFY_FORWARD_USEC;

        feed(p, "STATUS=y\nERRNO=5", NULL, NULL);
        feed(p, "STATUS=x99", NULL, NULL);
        t += NOTIFY_FORWARD_USEC;
        tap_is_int(notify_proxy_flush_at(p, t), 1, "a value back to what was forwarded cancels the change");
        tap_is_str(got(s), "ERRNO=5\n", "  only ERRNO= goes");

        /* WATCHDOG=1 apart from the bucket, at most one per second (no WATCHDOG_USEC here). */
        for (int i = 0; i < 100; i++) {
                snprintf(m, sizeof m, "STATUS=z%d", i);
                feed(p, m, NULL, NULL);
                (void) notify_proxy_flush_at(p, t);
        }
        while (*got(s))
                ;
        feed(p, "WATCHDOG=1", NULL, NULL);
        tap_is_int(notify_proxy_flush_at(p, t), 1, "WATCHDOG=1 goes while the bucket is empty");
        tap_is_str(got(s), "WATCHDOG=1\n", "  alone");
        feed(p, "WATCHDOG=1", NULL, NULL);
        (void) notify_proxy_flush_at(p, t + USEC_PER_SEC / 2);
        tap_is_str(got(s), "STATUS=z99\n",
                   "  the next one not within a second (what waited for the bucket goes)");
        tap_is_int(notify_proxy_flush_at(p, t + USEC_PER_SEC), 1, "  but after it");
        tap_is_str(got(s), "WATCHDOG=1\n", "  (WATCHDOG=1)");
        t += USEC_PER_SEC;
        feed(p, "WATCHDOG_USEC=400000\nWATCHDOG=1", NULL, NULL);
        tap_is_int(notify_proxy_flush_at(p, t + 100 * USEC_PER_MSEC), 1,
                   "WATCHDOG_USEC=400000: WATCHDOG=1 after a quarter of it");
        tap_is_str(got(s), "WATCHDOG_USEC=400000\nWATCHDOG=1\n", "  with WATCHDOG_USEC=");
        t += 2 * USEC_PER_SEC;

        feed(p, "EXTEND_TIMEOUT_USEC=5000000", NULL, &extend);
        tap_ok(extend == 5000000, "EXTEND_TIMEOUT_USEC= is read");
        (void) notify_proxy_flush_at(p, t);
        feed(p, "EXTEND_TIMEOUT_USEC=5000000", NULL, NULL);
        tap_is_int(notify_proxy_flush_at(p, t + NOTIFY_FORWARD_USEC), 1, "  and a repeat goes on too");
        tap_is_str(got(s), "EXTEND_TIMEOUT_USEC=5000000\n", "  (first)");
        tap_is_str(got(s), "EXTEND_TIMEOUT_USEC=5000000\n", "  (again)");

        feed(p, "STOPPING=1", NULL, NULL);
        feed(p, "READY=1\nSTATUS=again", &ready, NULL);
        tap_is_int(notify_proxy_flush_at(p, t + NOTIFY_FORWARD_USEC), 1,
                   "READY=1 after READY=10 goes at once");
        tap_is_str(got(s), "READY=1\nMAINPID=42\nSTATUS=again\n", "  latest state wins over STOPPING=1");

        notify_proxy_free(p);

        /* From the container's socket: one batch read, only the latest value forwarded. */
        tap_ok(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair) == 0, "socketpair");
        tap_ok(notify_proxy_new(pair[0], sock, 42, &p) == 0, "notify_proxy_new");
        n = 0;
        for (int i = 0; i < 20; i++) {
                snprintf(m, sizeof m, "STATUS=s%d", i);
                n += send(pair[1], m, strlen(m), 0) == (ssize_t) strlen(m);
        }
        tap_is_int(n, 20, "twenty datagrams from the container");
        ready = true;
        tap_ok(notify_proxy_dispatch(p, POLLIN, &ready, NULL) == 0 && !ready, "dispatch reads them");
        tap_is_str(got(s), "STATUS=s19\n", "  and forwards the latest");
        tap_is_str(got(s), "", "  only");
        struct pollfd pfd;
        tap_ok(notify_proxy_prepare(p, &pfd, -1) == -1 && pfd.fd == pair[0] && pfd.events == POLLIN,
               "  nothing waits: no timeout");
        close(pair[1]);
        notify_proxy_free(p);
        close(s);
        unlink(sock);
        rmdir(dir);
}

static void test_config(void) {
        OciConfig *c = NULL;
        const char *json =
                "{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"rootfs\"},"
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
        tap_ok(notify_ready_mode(c, &mode, NULL) == 0 && mode == NOTIFY_READY_CONTAINER,
               "default: container");
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
        sa = (struct sockaddr_un){ .sun_family = AF_UNIX };
        memcpy(sa.sun_path + 1, name + 1, strlen(name) - 1);
        s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        tap_ok(s >= 0 && bind(s, (struct sockaddr *) &sa,
                              (socklen_t) (offsetof(struct sockaddr_un, sun_path) + strlen(name))) == 0,
               "bind an abstract listener");
        memset(buf, 0, sizeof buf);
        tap_ok(notify_send(name, "STATUS=x") == 0, "notify_send to @name");
        tap_ok(recv(s, buf, sizeof buf - 1, MSG_DONTWAIT) == 8 && streq(buf, "STATUS=x"),
               "received on the abstract socket");
        close(s);
        tap_ok(notify_send("@sdrun-nobody-listens-here", "READY=1") == -ECONNREFUSED,
               "nobody listening: -ECONNREFUSED");
}

int main(void) {
        test_proxy();
        test_config();
        test_send();
        return tap_done();
}
