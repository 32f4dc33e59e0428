/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* sdrun's messages to the journal, in journald's native protocol (one datagram of fields to
 * /run/systemd/journal/socket; https://systemd.io/JOURNAL_NATIVE_PROTOCOL/), written here rather than with
 * sd_journal_send() so that a verb that logs but never talks to systemd does not load libsystemd (see
 * libsystemd-dl.c). */

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "macro.h"
#include "sdunit.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"
#define N_FIELDS_MAX 6

bool sdunit_journal_available(void) {
        return access(JOURNAL_SOCKET, W_OK) == 0;
}

/* One field. A value without a newline is "NAME=value\n"; one with a newline is "NAME\n", its length as a
 * little-endian 64-bit number, the value and "\n". Uses 4 iovecs at most and len[] for the length. */
typedef struct {
        struct iovec iov[N_FIELDS_MAX * 4];
        size_t n_iov;
        uint64_t len[N_FIELDS_MAX];
        size_t n_len;
} Entry;

static void entry_add(Entry *e, const char *name_eq, const char *value) {
        size_t vlen = strlen(value);

        if (!memchr(value, '\n', vlen)) {
                e->iov[e->n_iov++] = (struct iovec){ (void *) name_eq, strlen(name_eq) };
                e->iov[e->n_iov++] = (struct iovec){ (void *) value, vlen };
        } else {
                uint64_t le = htole64((uint64_t) vlen);
                e->len[e->n_len] = le;
                /* "NAME=" without its '=', then a newline */
                e->iov[e->n_iov++] = (struct iovec){ (void *) name_eq, strlen(name_eq) - 1 };
                e->iov[e->n_iov++] = (struct iovec){ (void *) "\n", 1 };
                e->iov[e->n_iov++] = (struct iovec){ &e->len[e->n_len++], sizeof(uint64_t) };
                e->iov[e->n_iov++] = (struct iovec){ (void *) value, vlen };
        }
        e->iov[e->n_iov++] = (struct iovec){ (void *) "\n", 1 };
}

/* An entry too big for one datagram goes as a sealed memfd (what journald accepts for those). */
static int send_as_memfd(int fd, const struct sockaddr_un *sa, socklen_t salen, const Entry *e) {
        _cleanup_close_ int mfd = memfd_create("sdrun-journal", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        union {
                struct cmsghdr cmsg;
                char buf[CMSG_SPACE(sizeof(int))];
        } control = {};
        struct msghdr mh = {
                .msg_name = (void *) sa,
                .msg_namelen = salen,
                .msg_control = &control,
                .msg_controllen = sizeof control,
        };
        struct cmsghdr *c;

        if (mfd < 0)
                return -errno;
        if (writev(mfd, e->iov, (int) e->n_iov) < 0)
                return -errno;
        if (fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
                return -errno;
        c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &mfd, sizeof(int));
        return sendmsg(fd, &mh, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

void sdunit_journal_sink(int level, const char *container_id, const char *unit, const char *msg) {
        static int fd = -EBADF;
        const struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = JOURNAL_SOCKET };
        const socklen_t salen = offsetof(struct sockaddr_un, sun_path) + sizeof JOURNAL_SOCKET;
        char priority[2] = { (char) ('0' + (level >= 0 && level <= 7 ? level : 6)), 0 };
        Entry e = {};

        if (fd < 0) {
                fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
                if (fd < 0)
                        return;
        }
        entry_add(&e, "MESSAGE=", msg);
        entry_add(&e, "PRIORITY=", priority);
        entry_add(&e, "SYSLOG_IDENTIFIER=", "sdrun");
        if (container_id)
                entry_add(&e, "CONTAINER_ID=", container_id);
        /* OBJECT_SYSTEMD_UNIT= from a root sender is what `journalctl -u UNIT` matches besides the unit's own
         * processes. */
        if (container_id && unit) {
                entry_add(&e, "OBJECT_SYSTEMD_UNIT=", unit);
                entry_add(&e, "UNIT=", unit);
        }

        struct msghdr mh = {
                .msg_name = (void *) &sa,
                .msg_namelen = salen,
                .msg_iov = e.iov,
                .msg_iovlen = e.n_iov,
        };
        if (sendmsg(fd, &mh, MSG_NOSIGNAL) < 0 && errno == EMSGSIZE)
                (void) send_as_memfd(fd, &sa, salen, &e);
}
