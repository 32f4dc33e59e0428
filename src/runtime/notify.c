/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "error-util.h"
#include "log.h"
#include "macro.h"
#include "notify.h"
#include "process-util.h"
#include "strv.h"

/* sd_notify's messages are small; systemd itself reads at most a page and a bit. */
#define NOTIFY_MAX_MESSAGE 4096

const char *notify_host_socket(void) {
        const char *e = getenv("NOTIFY_SOCKET");

        /* systemd takes absolute paths and abstract names ("@..."); anything else is not a socket for us. */
        if (isempty(e) || (e[0] != '/' && e[0] != '@') ||
            strlen(e) >= sizeof(((struct sockaddr_un){}).sun_path))
                return NULL;
        return e;
}

int notify_ready_mode(const OciConfig *c, NotifyReady *ret, char **reterr) {
        const char *a = oci_config_annotation(c, NOTIFY_READY_ANNOTATION), *e = getenv(NOTIFY_READY_ENV);
        const char *v = a ?: (isempty(e) ? NULL : e);

        if (!v || streq(v, "container"))
                *ret = NOTIFY_READY_CONTAINER;
        else if (streq(v, "started"))
                *ret = NOTIFY_READY_STARTED;
        else if (a)
                return errorf(reterr, EINVAL,
                              "config.json: annotations[\"" NOTIFY_READY_ANNOTATION "\"]: \"%s\" is not "
                              "\"container\" or \"started\"",
                              a);
        else
                return errorf(reterr, EINVAL, NOTIFY_READY_ENV "=%s: not \"container\" or \"started\"", e);
        return 0;
}

int notify_timeout_from_config(const OciConfig *c, uint64_t *ret, char **reterr) {
        const char *a = oci_config_annotation(c, NOTIFY_TIMEOUT_ANNOTATION);
        unsigned long v;
        char *end;

        if (!a)
                return 0;
        errno = 0;
        v = strtoul(a, &end, 10);
        if (errno || !*a || *end || a[0] == '-' || v == 0 || v > 24UL * 3600)
                return errorf(reterr, EINVAL,
                              "config.json: annotations[\"" NOTIFY_TIMEOUT_ANNOTATION "\"]: \"%s\" "
                              "is not a number of seconds (1..86400)",
                              a);
        *ret = v * USEC_PER_SEC;
        return 0;
}

int notify_setup_config(OciConfig *c, const char *host_dir) {
        static const char *const options[] = { "bind", "nosuid", "noexec", "nodev", "ro" };
        OciMount *m;
        int r;

        assert(c);
        assert(host_dir);

        m = realloc(c->mounts, (c->n_mounts + 1) * sizeof *m);
        if (!m)
                return -ENOMEM;
        c->mounts = m;
        m = &c->mounts[c->n_mounts];
        *m = (OciMount){};
        m->destination = strdup(NOTIFY_CONTAINER_DIR);
        m->type = strdup("bind");
        m->source = strdup(host_dir);
        m->options = calloc(ELEMENTSOF(options) + 1, sizeof(char *));
        c->n_mounts++; /* from here on oci_config_free frees what is there */
        if (!m->destination || !m->type || !m->source || !m->options)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(options); i++)
                if (!(m->options[i] = strdup(options[i])))
                        return -ENOMEM;

        if (c->has_process) {
                r = strv_env_set(&c->process.env, "NOTIFY_SOCKET=" NOTIFY_CONTAINER_SOCKET);
                if (r < 0)
                        return r;
        }
        return 0;
}

int notify_bind(int dir_fd, int *ret_fd, char **reterr) {
        _cleanup_close_ int s = -EBADF;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        const char *name = NOTIFY_DIR "/" NOTIFY_SOCKET_NAME;

        /* Through the directory fd: the state root may be a long path. */
        snprintf(sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/%s", dir_fd, name);
        s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (s < 0)
                return -errno;
        /* A start that failed or was killed may have left one: whoever starts the container now listens. */
        (void) unlinkat(dir_fd, name, 0);
        if (bind(s, (struct sockaddr *) &sa, sizeof sa) < 0)
                return errorf(reterr, -errno, "bind the notify socket %s: %s", name, strerror(errno));
        /* The container's process may run as any user. */
        if (fchmodat(dir_fd, name, 0777, 0) < 0)
                return errorf(reterr, -errno, "chmod the notify socket %s: %s", name, strerror(errno));
        *ret_fd = TAKE_FD(s);
        return 0;
}

static const char *const forwarded[] = {
        "READY=",          "STATUS=",        "RELOADING=",           "STOPPING=",
        "WATCHDOG=",       "WATCHDOG_USEC=", "EXTEND_TIMEOUT_USEC=", "ERRNO=",
        "MONOTONIC_USEC=",
};

static bool line_forwarded(const char *line, size_t n) {
        for (size_t i = 0; i < ELEMENTSOF(forwarded); i++) {
                size_t k = strlen(forwarded[i]);
                if (n >= k && strneq(line, forwarded[i], k))
                        return true;
        }
        return false;
}

int notify_filter(const char *msg, size_t len, pid_t mainpid, char **ret_out, bool *ret_ready,
                  uint64_t *ret_extend_usec) {
        _cleanup_free_ char *out = NULL;
        size_t n = 0;
        bool ready = false;
        uint64_t extend = 0;

        assert(msg || len == 0);
        assert(ret_out);

        out = malloc(len + 32);
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < len;) {
                const char *line = msg + i, *nl = memchr(line, '\n', len - i);
                size_t k = nl ? (size_t) (nl - line) : len - i;

                i += k + (nl ? 1 : 0);
                /* A NUL inside a line ends the message for systemd too. */
                if (k == 0 || memchr(line, 0, k) || !line_forwarded(line, k))
                        continue;
                if (k == STRLEN("READY=1") && strneq(line, "READY=1", k))
                        ready = true;
                if (strneq(line, "EXTEND_TIMEOUT_USEC=", STRLEN("EXTEND_TIMEOUT_USEC="))) {
                        char buf[32];
                        size_t vl = k - STRLEN("EXTEND_TIMEOUT_USEC=");
                        if (vl > 0 && vl < sizeof buf) {
                                memcpy(buf, line + STRLEN("EXTEND_TIMEOUT_USEC="), vl);
                                buf[vl] = 0;
                                char *end;
                                errno = 0;
                                unsigned long long v = strtoull(buf, &end, 10);
                                if (!errno && !*end && buf[0] != '-')
                                        extend = v;
                        }
                }
                memcpy(out + n, line, k);
                n += k;
                out[n++] = '\n';
        }
        if (ready && mainpid > 0)
                n += (size_t) snprintf(out + n, 32, "MAINPID=%d\n", (int) mainpid);
        if (n == 0) {
                free(out);
                out = NULL;
        } else
                out[n] = 0;
        *ret_out = TAKE_PTR(out);
        if (ret_ready)
                *ret_ready = ready;
        if (ret_extend_usec)
                *ret_extend_usec = extend;
        return 0;
}

int notify_send(const char *host, const char *msg) {
        _cleanup_close_ int s = -EBADF;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        socklen_t salen;
        size_t hl;

        assert(host);
        assert(msg);

        hl = strlen(host);
        if (hl == 0 || hl >= sizeof sa.sun_path)
                return -EINVAL;
        memcpy(sa.sun_path, host, hl);
        if (host[0] == '@') {
                sa.sun_path[0] = 0; /* abstract namespace: no trailing NUL counted */
                salen = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + hl);
        } else
                salen = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + hl + 1);
        s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s < 0)
                return -errno;
        if (sendto(s, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *) &sa, salen) < 0)
                return -errno;
        return 0;
}

int notify_forward(int fd, const char *host, pid_t mainpid, bool *ret_ready, uint64_t *ret_extend_usec) {
        char buf[NOTIFY_MAX_MESSAGE];
        bool ready = false;
        uint64_t extend = 0;

        for (;;) {
                _cleanup_free_ char *out = NULL;
                bool r1 = false;
                uint64_t e1 = 0;
                ssize_t k = recv(fd, buf, sizeof buf, MSG_DONTWAIT | MSG_TRUNC);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                break;
                        return -errno;
                }
                if ((size_t) k > sizeof buf) {
                        log_debug("notify: dropping a message of %zd bytes", k);
                        continue;
                }
                if (notify_filter(buf, (size_t) k, mainpid, &out, &r1, &e1) < 0)
                        return -ENOMEM;
                ready = ready || r1;
                if (e1 > 0)
                        extend = e1;
                if (out) {
                        int r = notify_send(host, out);
                        if (r < 0)
                                log_warning("forward sd_notify message to %s: %s", host, strerror(-r));
                        else
                                log_debug("notify: forwarded \"%s\" to %s", out, host);
                }
        }
        if (ret_ready)
                *ret_ready = ready;
        if (ret_extend_usec)
                *ret_extend_usec = extend;
        return 0;
}

int notify_wait_ready(int fd, int pidfd, const char *id, const char *host, pid_t mainpid,
                      uint64_t timeout_usec, char **reterr) {
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + timeout_usec;
        int r;

        assert(fd >= 0);
        assert(pidfd >= 0);

        for (;;) {
                struct pollfd p[2] = {
                        { .fd = fd, .events = POLLIN },
                        { .fd = pidfd, .events = POLLIN },
                };
                uint64_t now = now_usec(CLOCK_MONOTONIC), extend = 0;
                bool ready = false;

                if (now >= deadline)
                        return errorf(reterr, ETIMEDOUT,
                                      "container \"%s\" did not send READY=1 to its NOTIFY_SOCKET in time",
                                      id);
                uint64_t left_ms = (deadline - now + 999) / 1000;
                if (poll(p, 2, (int) MIN(left_ms, (uint64_t) INT32_MAX)) < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                /* What it sent before it died is still forwarded (STATUS= says why, ERRNO=). */
                if (p[0].revents & POLLIN) {
                        r = notify_forward(fd, host, mainpid, &ready, &extend);
                        if (r < 0)
                                return errorf(reterr, r, "read the notify socket of \"%s\": %s", id,
                                              strerror(-r));
                        if (ready)
                                return 0;
                        if (extend > 0)
                                deadline = MAX(deadline, now_usec(CLOCK_MONOTONIC) + extend);
                }
                if (p[1].revents)
                        return errorf(reterr, ECHILD,
                                      "container \"%s\" exited before it sent READY=1 to its NOTIFY_SOCKET",
                                      id);
        }
}
