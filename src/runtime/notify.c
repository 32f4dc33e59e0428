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
#include <sys/time.h>
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

static int host_address(const char *host, struct sockaddr_un *ret_sa, socklen_t *ret_len) {
        size_t hl = strlen(host);

        if (hl == 0 || hl >= sizeof ret_sa->sun_path)
                return -EINVAL;
        *ret_sa = (struct sockaddr_un){ .sun_family = AF_UNIX };
        memcpy(ret_sa->sun_path, host, hl);
        if (host[0] == '@') {
                ret_sa->sun_path[0] = 0; /* abstract namespace: no trailing NUL counted */
                *ret_len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + hl);
        } else
                *ret_len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + hl + 1);
        return 0;
}

int notify_send(const char *host, const char *msg) {
        _cleanup_close_ int s = -EBADF;
        struct sockaddr_un sa;
        socklen_t salen;
        int r;

        assert(host);
        assert(msg);

        r = host_address(host, &sa, &salen);
        if (r < 0)
                return r;
        s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s < 0)
                return -errno;
        if (sendto(s, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *) &sa, salen) < 0)
                return -errno;
        return 0;
}

/* What is kept of the fields the container sends: the latest value of each (one slot per field; READY=,
 * RELOADING= and STOPPING= are one state and share one), what was last forwarded, and whether a repeat of the
 * same value means something (EXTEND_TIMEOUT_USEC= extends from now; MONOTONIC_USEC= goes with RELOADING=1). */
typedef enum NotifySlot {
        SLOT_STATE,
        SLOT_STATUS,
        SLOT_ERRNO,
        SLOT_WATCHDOG, /* WATCHDOG=trigger; WATCHDOG=1 is a keep-alive of its own */
        SLOT_WATCHDOG_USEC,
        SLOT_EXTEND,
        SLOT_MONOTONIC,
        _SLOT_MAX,
} NotifySlot;

static const struct {
        const char *prefix;
        NotifySlot slot;
} forwarded[] = {
        { "READY=", SLOT_STATE },
        { "RELOADING=", SLOT_STATE },
        { "STOPPING=", SLOT_STATE },
        { "STATUS=", SLOT_STATUS },
        { "ERRNO=", SLOT_ERRNO },
        { "WATCHDOG=", SLOT_WATCHDOG },
        { "WATCHDOG_USEC=", SLOT_WATCHDOG_USEC },
        { "EXTEND_TIMEOUT_USEC=", SLOT_EXTEND },
        { "MONOTONIC_USEC=", SLOT_MONOTONIC },
};

static bool slot_repeats(NotifySlot s) {
        return s == SLOT_EXTEND || s == SLOT_MONOTONIC;
}

typedef struct NotifyField {
        size_t pending_len, sent_len; /* pending_len 0: nothing to forward */
        char pending[NOTIFY_MAX_MESSAGE];
        char sent[NOTIFY_MAX_MESSAGE];
} NotifyField;

struct NotifyProxy {
        int fd;  /* the container's socket */
        int out; /* ours, to the host's socket: one for all messages */
        struct sockaddr_un host;
        socklen_t host_len;
        pid_t mainpid;
        bool send_failed;

        NotifyField fields[_SLOT_MAX];
        bool ping_pending;
        uint64_t ping_sent, watchdog_usec;

        /* The token bucket, in time: one forward costs NOTIFY_FORWARD_USEC. */
        uint64_t credit_usec, refilled;
        /* After a full read budget the container's socket rests until then. */
        uint64_t resume_read;

        char bufs[NOTIFY_READ_BATCH][NOTIFY_MAX_MESSAGE];
        char out_buf[NOTIFY_MAX_MESSAGE + 32];
};

int notify_proxy_new(int fd, const char *host, pid_t mainpid, NotifyProxy **ret) {
        _cleanup_(notify_proxy_freep) NotifyProxy *p = NULL;
        const char *e;
        int r;

        assert(fd >= 0);
        assert(host);
        assert(ret);

        p = calloc(1, sizeof *p);
        if (!p)
                return -ENOMEM;
        p->fd = p->out = -EBADF;
        r = host_address(host, &p->host, &p->host_len);
        if (r < 0)
                return r;
        p->out = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (p->out < 0)
                return -errno;
        /* At most a few sends a second, each bounded: a host that stops reading does not hang us. */
        (void) setsockopt(p->out, SOL_SOCKET, SO_SNDTIMEO,
                          &(struct timeval){ .tv_sec = NOTIFY_SEND_TIMEOUT_SEC }, sizeof(struct timeval));
        p->mainpid = mainpid;
        p->credit_usec = NOTIFY_BURST * NOTIFY_FORWARD_USEC;
        p->refilled = now_usec(CLOCK_MONOTONIC);
        /* Our own watchdog, when systemd gave us one (we are the main process of a foreground run). */
        e = getenv("WATCHDOG_USEC");
        if (e)
                p->watchdog_usec = strtoull(e, NULL, 10);
        p->fd = fd;
        *ret = TAKE_PTR(p);
        return 0;
}

NotifyProxy *notify_proxy_free(NotifyProxy *p) {
        if (!p)
                return NULL;
        safe_close(p->fd);
        safe_close(p->out);
        free(p);
        return NULL;
}

/* WATCHDOG=1 goes on at most once per this; a quarter of the watchdog interval, when that is shorter. */
static uint64_t ping_interval(const NotifyProxy *p) {
        uint64_t i = NOTIFY_WATCHDOG_MAX_USEC;

        if (p->watchdog_usec > 0)
                i = MIN(i, MAX(p->watchdog_usec / 4, NOTIFY_WATCHDOG_MIN_USEC));
        return i;
}

static uint64_t parse_usec(const char *line, size_t k, size_t skip) {
        char buf[32], *end;
        unsigned long long v;

        if (k <= skip || k - skip >= sizeof buf)
                return 0;
        memcpy(buf, line + skip, k - skip);
        buf[k - skip] = 0;
        errno = 0;
        v = strtoull(buf, &end, 10);
        if (errno || *end || buf[0] == '-')
                return 0;
        return v;
}

static void slot_set(NotifyField *f, bool repeats, const char *line, size_t k) {
        /* A value that is what was last forwarded cancels one still waiting: the latest value wins. */
        if (!repeats && f->sent_len == k && memcmp(f->sent, line, k) == 0) {
                f->pending_len = 0;
                return;
        }
        memcpy(f->pending, line, k);
        f->pending_len = k;
}

void notify_proxy_feed(NotifyProxy *p, const char *msg, size_t len, bool *ready, uint64_t *extend) {
        assert(p);
        assert(msg || len == 0);

        for (size_t i = 0; i < len;) {
                const char *line = msg + i, *nl = memchr(line, '\n', len - i);
                size_t k = nl ? (size_t) (nl - line) : len - i, j;

                i += k + (nl ? 1 : 0);
                /* A NUL inside a line ends the message for systemd too. */
                if (k == 0 || memchr(line, 0, k))
                        continue;
                for (j = 0; j < ELEMENTSOF(forwarded); j++)
                        if (k >= strlen(forwarded[j].prefix) &&
                            strneq(line, forwarded[j].prefix, strlen(forwarded[j].prefix)))
                                break;
                if (j >= ELEMENTSOF(forwarded))
                        continue; /* MAINPID=, FDSTORE=, BARRIER=, ...: not the container's to send */
                if (k == STRLEN("READY=1") && strneq(line, "READY=1", k) && ready)
                        *ready = true;
                if (k == STRLEN("WATCHDOG=1") && strneq(line, "WATCHDOG=1", k)) {
                        p->ping_pending = true;
                        continue;
                }
                if (forwarded[j].slot == SLOT_EXTEND && extend) {
                        uint64_t v = parse_usec(line, k, STRLEN("EXTEND_TIMEOUT_USEC="));
                        if (v > 0)
                                *extend = v;
                }
                if (forwarded[j].slot == SLOT_WATCHDOG_USEC) {
                        uint64_t v = parse_usec(line, k, STRLEN("WATCHDOG_USEC="));
                        if (v > 0)
                                p->watchdog_usec = v;
                }
                slot_set(&p->fields[forwarded[j].slot], slot_repeats(forwarded[j].slot), line, k);
        }
}

static bool ready_pending(const NotifyProxy *p) {
        const NotifyField *f = &p->fields[SLOT_STATE];
        return f->pending_len == STRLEN("READY=1") && strneq(f->pending, "READY=1", f->pending_len);
}

static bool other_pending(const NotifyProxy *p) {
        for (size_t s = 0; s < _SLOT_MAX; s++)
                if (p->fields[s].pending_len > 0)
                        return true;
        return false;
}

static void refill(NotifyProxy *p, uint64_t now) {
        if (now > p->refilled)
                p->credit_usec =
                        MIN(p->credit_usec + (now - p->refilled), NOTIFY_BURST * NOTIFY_FORWARD_USEC);
        p->refilled = MAX(p->refilled, now);
}

static void out_send(NotifyProxy *p, size_t n) {
        if (n == 0)
                return;
        if (sendto(p->out, p->out_buf, n, MSG_NOSIGNAL, (struct sockaddr *) &p->host, p->host_len) >= 0) {
                log_debug("notify: forwarded \"%.*s\"", (int) n, p->out_buf);
                return;
        }
        /* Once loudly: a host that went away would have us say it a few times a second. */
        if (!p->send_failed)
                log_warning("forward sd_notify message to %s%s: %s", p->host.sun_path[0] ? "" : "@",
                            p->host.sun_path[0] ? p->host.sun_path : p->host.sun_path + 1, strerror(errno));
        else
                log_debug("notify: forward: %s", strerror(errno));
        p->send_failed = true;
}

/* Append one line to the datagram being built; what would not fit in one that systemd reads goes first. */
static size_t out_append(NotifyProxy *p, size_t n, const char *line, size_t k) {
        if (n + k + 1 > NOTIFY_MAX_MESSAGE) {
                out_send(p, n);
                n = 0;
        }
        memcpy(p->out_buf + n, line, k);
        p->out_buf[n + k] = '\n';
        return n + k + 1;
}

int notify_proxy_flush_at(NotifyProxy *p, uint64_t now) {
        bool other, ping;
        size_t n = 0;

        assert(p);

        refill(p, now);
        other = other_pending(p) && (ready_pending(p) || p->credit_usec >= NOTIFY_FORWARD_USEC);
        ping = p->ping_pending && (p->ping_sent == 0 || now >= p->ping_sent + ping_interval(p));
        if (!other && !ping)
                return 0;
        if (other) {
                /* READY=1 does not wait for the bucket (start waits for it), but is paid for. */
                p->credit_usec =
                        p->credit_usec >= NOTIFY_FORWARD_USEC ? p->credit_usec - NOTIFY_FORWARD_USEC : 0;
                for (size_t s = 0; s < _SLOT_MAX; s++) {
                        NotifyField *f = &p->fields[s];
                        bool ready = s == SLOT_STATE && ready_pending(p);

                        if (f->pending_len == 0)
                                continue;
                        n = out_append(p, n, f->pending, f->pending_len);
                        if (ready && p->mainpid > 0) {
                                char m[32];
                                int k = snprintf(m, sizeof m, "MAINPID=%d", (int) p->mainpid);
                                memcpy(p->out_buf + n, m, (size_t) k);
                                p->out_buf[n + (size_t) k] = '\n';
                                n += (size_t) k + 1;
                        }
                        memcpy(f->sent, f->pending, f->pending_len);
                        f->sent_len = f->pending_len;
                        f->pending_len = 0;
                }
        }
        if (ping) {
                n = out_append(p, n, "WATCHDOG=1", STRLEN("WATCHDOG=1"));
                p->ping_pending = false;
                p->ping_sent = now;
        }
        out_send(p, n);
        return 1;
}

uint64_t notify_proxy_next(const NotifyProxy *p, uint64_t now) {
        uint64_t next = USEC_INFINITY;

        assert(p);

        if (other_pending(p))
                next = ready_pending(p) || p->credit_usec >= NOTIFY_FORWARD_USEC
                               ? now
                               : p->refilled + (NOTIFY_FORWARD_USEC - p->credit_usec);
        if (p->ping_pending)
                next = MIN(next, p->ping_sent == 0 ? now : p->ping_sent + ping_interval(p));
        if (p->resume_read > now)
                next = MIN(next, p->resume_read);
        return next;
}

int notify_proxy_prepare(NotifyProxy *p, struct pollfd *ret_pfd, int timeout_ms) {
        uint64_t now = now_usec(CLOCK_MONOTONIC), next;

        assert(p);
        assert(ret_pfd);

        *ret_pfd = (struct pollfd){ .fd = p->resume_read > now ? -1 : p->fd, .events = POLLIN };
        next = notify_proxy_next(p, now);
        if (next == USEC_INFINITY)
                return timeout_ms;
        uint64_t ms = next > now ? (next - now + USEC_PER_MSEC - 1) / USEC_PER_MSEC : 0;
        return timeout_ms < 0 ? (int) MIN(ms, (uint64_t) INT32_MAX) : (int) MIN(ms, (uint64_t) timeout_ms);
}

int notify_proxy_dispatch(NotifyProxy *p, short revents, bool *ret_ready, uint64_t *ret_extend_usec) {
        struct mmsghdr mm[NOTIFY_READ_BATCH];
        struct iovec iov[NOTIFY_READ_BATCH];
        uint64_t extend = 0, now;
        bool ready = false;
        size_t n_read = 0;

        assert(p);

        /* A bounded read per wakeup, a batch per syscall: a flood is read at a pace that costs us little, and
         * what is queued beyond it waits in the socket (its senders block) until the next round. */
        while (revents & POLLIN) {
                for (size_t i = 0; i < NOTIFY_READ_BATCH; i++) {
                        iov[i] = (struct iovec){ .iov_base = p->bufs[i], .iov_len = sizeof p->bufs[i] };
                        mm[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i], .msg_iovlen = 1 } };
                }
                int k = recvmmsg(p->fd, mm, NOTIFY_READ_BATCH, MSG_DONTWAIT, NULL);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                break;
                        return -errno;
                }
                for (int i = 0; i < k; i++) {
                        if (mm[i].msg_hdr.msg_flags & MSG_TRUNC)
                                log_debug("notify: dropping a message of more than %d bytes",
                                          NOTIFY_MAX_MESSAGE);
                        else
                                notify_proxy_feed(p, p->bufs[i], mm[i].msg_len, &ready, &extend);
                }
                n_read += (size_t) k;
                if (k < NOTIFY_READ_BATCH)
                        break;
                if (n_read >= NOTIFY_READ_BUDGET) {
                        p->resume_read = now_usec(CLOCK_MONOTONIC) + NOTIFY_READ_PAUSE_USEC;
                        break;
                }
        }
        now = now_usec(CLOCK_MONOTONIC);
        (void) notify_proxy_flush_at(p, now);
        if (ret_ready)
                *ret_ready = ready;
        if (ret_extend_usec)
                *ret_extend_usec = extend;
        return 0;
}

int notify_wait_ready(NotifyProxy *p, int pidfd, const char *id, uint64_t timeout_usec, char **reterr) {
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + timeout_usec;
        int r;

        assert(p);
        assert(pidfd >= 0);

        for (;;) {
                struct pollfd pfd[2] = { [1] = { .fd = pidfd, .events = POLLIN } };
                uint64_t now = now_usec(CLOCK_MONOTONIC), extend = 0;
                bool ready = false;

                if (now >= deadline)
                        return errorf(reterr, ETIMEDOUT,
                                      "container \"%s\" did not send READY=1 to its NOTIFY_SOCKET in time",
                                      id);
                uint64_t left_ms = (deadline - now + 999) / 1000;
                int timeout = notify_proxy_prepare(p, &pfd[0], (int) MIN(left_ms, (uint64_t) INT32_MAX));
                if (poll(pfd, 2, timeout) < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                /* What it sent before it died is still forwarded (STATUS= says why, ERRNO=). */
                r = notify_proxy_dispatch(p, pfd[0].revents, &ready, &extend);
                if (r < 0)
                        return errorf(reterr, r, "read the notify socket of \"%s\": %s", id, strerror(-r));
                if (ready)
                        return 0;
                if (extend > 0)
                        deadline = MAX(deadline, now_usec(CLOCK_MONOTONIC) + extend);
                if (pfd[1].revents) {
                        /* Its last words go out now, not at the bucket's pace. */
                        p->credit_usec = MAX(p->credit_usec, NOTIFY_FORWARD_USEC);
                        (void) notify_proxy_flush_at(p, now_usec(CLOCK_MONOTONIC));
                        return errorf(reterr, ECHILD,
                                      "container \"%s\" exited before it sent READY=1 to its NOTIFY_SOCKET",
                                      id);
                }
        }
}
