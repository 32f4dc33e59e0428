/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "process-util.h"
#include "sync.h"

#define SYNC_MAX_PAYLOAD (1U << 20)
/* The largest payload sent inside the message. A SOCK_SEQPACKET message must fit the socket's send buffer
 * whole (212992 bytes by default, and an unprivileged runtime cannot raise it past that): a larger payload
 * (the hook state of a container with Kubernetes' 256 KiB of annotations) travels in a sealed memfd
 * passed with the message, flagged in its type. */
#define SYNC_INLINE_MAX (64U * 1024U)
#define SYNC_PAYLOAD_IN_FD (1U << 31)

typedef struct SyncHeader {
        uint32_t type;
        int32_t error;
        uint32_t len;
} SyncHeader;

void sync_msg_done(SyncMsg *m) {
        free(m->payload);
        m->payload = NULL;
        m->fd = safe_close(m->fd);
}

/* A sealed memfd holding payload: its reader can trust that the content and size do not change. */
static int payload_memfd(const void *payload, size_t len) {
        _cleanup_close_ int fd = -EBADF;
        size_t done = 0;

        fd = memfd_create("sdrun-sync", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return -errno;
        while (done < len) {
                ssize_t k = write(fd, (const char *) payload + done, len - done);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                done += (size_t) k;
        }
        if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
                return -errno;
        return TAKE_FD(fd);
}

/* The payload of a message flagged SYNC_PAYLOAD_IN_FD: only a memfd sealed against writes and shrinking
 * is read (a peer's other fd could be a FIFO or a FUSE file that blocks the reader), and only exactly len
 * bytes of it. */
static int payload_from_memfd(int fd, size_t len, char **ret) {
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        size_t done = 0;
        int seals;

        seals = fcntl(fd, F_GET_SEALS);
        if (seals < 0 || (seals & (F_SEAL_WRITE | F_SEAL_SHRINK)) != (F_SEAL_WRITE | F_SEAL_SHRINK))
                return -EBADMSG;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < 0 || (uint64_t) st.st_size != len)
                return -EBADMSG;
        buf = malloc(len + 1);
        if (!buf)
                return -ENOMEM;
        while (done < len) {
                ssize_t k = pread(fd, buf + done, len - done, (off_t) done);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return -EBADMSG;
                done += (size_t) k;
        }
        buf[len] = 0;
        *ret = TAKE_PTR(buf);
        return 0;
}

int sync_send(int sock, SyncType type, int error, const void *payload, size_t len, int fd) {
        _cleanup_close_ int payload_fd = -EBADF;

        if (len > SYNC_MAX_PAYLOAD)
                return -E2BIG;
        if (len > SYNC_INLINE_MAX) {
                /* One fd per message: a large payload cannot come with an fd of its own. */
                if (fd >= 0)
                        return -E2BIG;
                payload_fd = payload_memfd(payload, len);
                if (payload_fd < 0)
                        return payload_fd;
                type = (SyncType) ((uint32_t) type | SYNC_PAYLOAD_IN_FD);
                fd = payload_fd;
        }

        SyncHeader h = { .type = type, .error = error, .len = (uint32_t) len };
        struct iovec iov[2] = {
                { .iov_base = &h, .iov_len = sizeof h },
                { .iov_base = (void *) payload, .iov_len = len },
        };
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(int))];
        } control = {};
        struct msghdr mh = {
                .msg_iov = iov,
                .msg_iovlen = len > 0 && payload_fd < 0 ? 2 : 1,
        };

        if (fd >= 0) {
                mh.msg_control = control.buf;
                mh.msg_controllen = sizeof control.buf;
                struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(c), &fd, sizeof(int));
        }
        for (;;) {
                ssize_t k = sendmsg(sock, &mh, MSG_NOSIGNAL);
                if (k >= 0)
                        return 0;
                if (errno != EINTR)
                        return -errno;
        }
}

int sync_send_error(int sock, int error, const char *fmt, ...) {
        char buf[2048];
        va_list ap;

        if (error < 0)
                error = -error;
        if (error == 0)
                error = EIO;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        (void) sync_send(sock, SYNC_ERROR, error, buf, strlen(buf) + 1, -EBADF);
        return -error;
}

static int sync_recv_full(int sock, int watch_pidfd, int interrupt_fd, uint64_t timeout_usec, SyncMsg *ret,
                          int *ret_signal) {
        uint64_t deadline = deadline_after(timeout_usec);
        _cleanup_free_ char *buf = NULL;
        SyncHeader h;
        int r;

        *ret = (SyncMsg){ .fd = -EBADF };

        for (;;) {
                struct pollfd p[3] = {
                        { .fd = sock, .events = POLLIN },
                        { .fd = watch_pidfd, .events = POLLIN },
                        { .fd = interrupt_fd, .events = POLLIN },
                };
                r = poll_until(p, 3, deadline);
                if (r < 0)
                        return r;
                /* The caller asked us to give up: that wins over anything the peer says. */
                if (p[2].revents & POLLIN) {
                        struct signalfd_siginfo ssi;
                        if (read(interrupt_fd, &ssi, sizeof ssi) == sizeof ssi) {
                                if (ret_signal)
                                        *ret_signal = (int) ssi.ssi_signo;
                                return -EINTR;
                        }
                }
                /* A message that is already queued wins over the death of its sender. */
                if (p[0].revents & (POLLIN | POLLHUP | POLLERR))
                        break;
                if (p[1].revents)
                        return -ECHILD;
        }

        buf = malloc(sizeof h + SYNC_INLINE_MAX + 1);
        if (!buf)
                return -ENOMEM;

        /* Room for the credentials too, where the receiving socket asked for them (SO_PASSCRED): without it
         * the kernel would cut the control data short and drop the fd. */
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(struct ucred))];
        } control = {};
        /* The start connection is a stream (the init listens on a socket file): there, messages that follow
         * each other closely (SYNC_EXEC, then SYNC_EXEC_FAILED from the trampoline) arrive as one read, so
         * the header is read first and then exactly its payload. */
        int type = 0;
        socklen_t type_len = sizeof type;
        bool stream = getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &type_len) >= 0 && type == SOCK_STREAM;
        struct iovec iov = { .iov_base = buf, .iov_len = sizeof h + (stream ? 0 : SYNC_INLINE_MAX) };
        struct msghdr mh = {
                .msg_iov = &iov,
                .msg_iovlen = 1,
                .msg_control = control.buf,
                .msg_controllen = sizeof control.buf,
        };
        ssize_t k;
        do
                k = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
        while (k < 0 && errno == EINTR);
        if (k < 0)
                return errno == ECONNRESET ? -EPIPE : -errno;

        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
                    c->cmsg_len == CMSG_LEN(sizeof(int)))
                        memcpy(&ret->fd, CMSG_DATA(c), sizeof(int));
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
                    c->cmsg_len == CMSG_LEN(sizeof(struct ucred))) {
                        struct ucred u;
                        memcpy(&u, CMSG_DATA(c), sizeof u);
                        ret->sender = u.pid;
                }
        }

        if (k == 0) {
                ret->fd = safe_close(ret->fd);
                return -EPIPE;
        }
        if (stream) {
                ssize_t more = 0;
                if ((size_t) k < sizeof h) {
                        more = recv(sock, buf + k, sizeof h - (size_t) k, MSG_WAITALL);
                        if (more > 0)
                                k += more;
                }
                if ((size_t) k == sizeof h) {
                        memcpy(&h, buf, sizeof h);
                        if (h.len > SYNC_INLINE_MAX || (h.type & SYNC_PAYLOAD_IN_FD)) {
                                ret->fd = safe_close(ret->fd);
                                return -EBADMSG;
                        }
                        if (h.len > 0 && (more = recv(sock, buf + sizeof h, h.len, MSG_WAITALL)) > 0)
                                k += more;
                }
        }
        if ((size_t) k < sizeof h) {
                ret->fd = safe_close(ret->fd);
                return -EBADMSG;
        }
        memcpy(&h, buf, sizeof h);
        if (h.type & SYNC_PAYLOAD_IN_FD) {
                if ((size_t) k != sizeof h || h.len <= SYNC_INLINE_MAX || h.len > SYNC_MAX_PAYLOAD ||
                    ret->fd < 0) {
                        ret->fd = safe_close(ret->fd);
                        return -EBADMSG;
                }
                r = payload_from_memfd(ret->fd, h.len, &ret->payload);
                ret->fd = safe_close(ret->fd);
                if (r < 0)
                        return r;
                ret->type = h.type & ~SYNC_PAYLOAD_IN_FD;
                ret->error = h.error;
                ret->len = h.len;
                return 0;
        }
        if (h.len != (size_t) k - sizeof h) {
                ret->fd = safe_close(ret->fd);
                return -EBADMSG;
        }
        ret->type = h.type;
        ret->error = h.error;
        ret->len = h.len;
        if (h.len > 0) {
                ret->payload = malloc(h.len + 1);
                if (!ret->payload) {
                        ret->fd = safe_close(ret->fd);
                        return -ENOMEM;
                }
                memcpy(ret->payload, buf + sizeof h, h.len);
                ret->payload[h.len] = 0;
        }
        return 0;
}

int sync_recv(int sock, int watch_pidfd, uint64_t timeout_usec, SyncMsg *ret) {
        return sync_recv_full(sock, watch_pidfd, -EBADF, timeout_usec, ret, NULL);
}

int sync_recv_interruptible(int sock, int watch_pidfd, uint64_t timeout_usec, SyncMsg *ret,
                            int *ret_signal) {
        sigset_t set, saved;
        int r;

        /* Blocked only while we wait, so that one arriving here is read from the signalfd rather than ending
         * us with the peer half set up; elsewhere it acts as it did before. One that was blocked already
         * (a foreground exec forwards them all) is taken here too: the process it was for does not run
         * yet. */
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &set, &saved) < 0)
                return -errno;
        _cleanup_close_ int fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
        if (fd < 0) {
                r = -errno;
                (void) sigprocmask(SIG_SETMASK, &saved, NULL);
                return r;
        }
        r = sync_recv_full(sock, watch_pidfd, fd, timeout_usec, ret, ret_signal);
        (void) sigprocmask(SIG_SETMASK, &saved, NULL);
        return r;
}

int sync_expect(int sock, int watch_pidfd, uint64_t timeout_usec, SyncType type, SyncMsg *ret,
                char **reterr) {
        SyncMsg m;
        int r;

        r = sync_recv(sock, watch_pidfd, timeout_usec, &m);
        if (r < 0)
                return r;
        if (m.type == SYNC_ERROR) {
                r = m.error > 0 ? -m.error : -EIO;
                if (reterr) {
                        free(*reterr);
                        *reterr = m.payload ? strdup(m.payload) : NULL;
                }
                sync_msg_done(&m);
                return r;
        }
        if (m.type != type) {
                sync_msg_done(&m);
                return -EBADMSG;
        }
        if (ret)
                *ret = m;
        else
                sync_msg_done(&m);
        return 0;
}
