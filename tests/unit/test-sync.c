/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sync.c, the runtime <-> init protocol, over real socketpairs: typed messages, payloads, fd passing, errors
 * travelling as (errno, message), malformed and oversized messages, a peer that closes or dies, the bounded
 * wait, and the stream mode of the start socket. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "process-util.h"
#include "sync.h"
#include "tap.h"

/* The wire header of sync.c (type, error, payload length), to forge malformed messages. */
typedef struct RawHeader {
        uint32_t type;
        int32_t error;
        uint32_t len;
} RawHeader;

static int pair(int type, int sv[2]) {
        return socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, sv) < 0 ? -errno : 0;
}

static unsigned count_fds(void) {
        DIR *d = opendir("/proc/self/fd");
        unsigned n = 0;

        if (!d)
                return 0;
        while (readdir(d))
                n++;
        closedir(d);
        return n;
}

static bool same_file(int a, int b) {
        struct stat sa, sb;
        return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static void test_plain(void) {
        _cleanup_close_pair_ int sv[2] = { -EBADF, -EBADF };
        SyncMsg m;

        if (!tap_ok(pair(SOCK_SEQPACKET, sv) == 0, "socketpair(SOCK_SEQPACKET)"))
                return;

        tap_is_int(sync_send(sv[0], SYNC_GO, 0, NULL, 0, -EBADF), 0, "send GO without payload or fd");
        tap_is_int(sync_recv(sv[1], -EBADF, USEC_INFINITY, &m), 0, "receive it");
        tap_is_int(m.type, SYNC_GO, "type GO arrives");
        tap_ok(m.error == 0 && m.payload == NULL && m.len == 0 && m.fd < 0, "no error, no payload, no fd");
        sync_msg_done(&m);

        /* Both directions, and the order of several queued messages is kept. */
        tap_is_int(sync_send(sv[1], SYNC_PREPARED, 0, NULL, 0, -EBADF), 0, "send PREPARED the other way");
        tap_is_int(sync_send(sv[1], SYNC_READY, 7, NULL, 0, -EBADF), 0, "send READY after it");
        tap_ok(sync_recv(sv[0], -EBADF, USEC_INFINITY, &m) == 0 && m.type == SYNC_PREPARED, "PREPARED arrives first");
        sync_msg_done(&m);
        tap_ok(sync_recv(sv[0], -EBADF, USEC_INFINITY, &m) == 0 && m.type == SYNC_READY && m.error == 7,
               "READY arrives second, its error field intact");
        sync_msg_done(&m);
}

static void test_payload(void) {
        _cleanup_close_pair_ int sv[2] = { -EBADF, -EBADF };
        const char json[] = "{\"ociVersion\":\"1.3.0\",\"id\":\"x\",\"status\":\"creating\"}";
        const char binary[] = { 'a', 0, 'b', 0, 0, 'c' };
        _cleanup_free_ char *big = NULL;
        size_t big_len = 64U * 1024U;
        SyncMsg m;

        if (!tap_ok(pair(SOCK_SEQPACKET, sv) == 0, "socketpair for payloads"))
                return;

        tap_is_int(sync_send(sv[0], SYNC_CONTINUE, 0, json, strlen(json), -EBADF), 0, "send CONTINUE with state JSON");
        tap_is_int(sync_recv(sv[1], -EBADF, USEC_INFINITY, &m), 0, "receive it");
        tap_is_int(m.len, strlen(json), "payload length");
        tap_is_str(m.payload, json, "payload content, NUL-terminated");
        sync_msg_done(&m);
        tap_ok(m.payload == NULL && m.fd < 0, "sync_msg_done() frees the payload and forgets the fd");

        tap_is_int(sync_send(sv[0], SYNC_STAGE1_PID, 0, binary, sizeof binary, -EBADF), 0, "send a payload with NULs");
        tap_ok(sync_recv(sv[1], -EBADF, USEC_INFINITY, &m) == 0 && m.len == sizeof binary &&
               memcmp(m.payload, binary, sizeof binary) == 0 && m.payload[sizeof binary] == 0,
               "binary payload arrives byte for byte, with its length, plus a NUL");
        sync_msg_done(&m);

        big = malloc(big_len);
        if (!tap_ok(big, "allocate 64 KiB"))
                return;
        for (size_t i = 0; i < big_len; i++)
                big[i] = (char) ('a' + i % 26);
        tap_is_int(sync_send(sv[0], SYNC_CONTINUE, 0, big, big_len, -EBADF), 0, "send a 64 KiB payload");
        tap_ok(sync_recv(sv[1], -EBADF, USEC_INFINITY, &m) == 0 && m.len == big_len && memcmp(m.payload, big, big_len) == 0,
               "64 KiB payload arrives whole");
        sync_msg_done(&m);
}

static void test_oversize(void) {
        _cleanup_close_pair_ int sv[2] = { -EBADF, -EBADF };
        size_t n = (1U << 20) + 1;
        _cleanup_free_ char *huge = calloc(1, n);
        SyncMsg m;

        if (!tap_ok(huge && pair(SOCK_SEQPACKET, sv) == 0, "socketpair and a payload of 1 MiB + 1"))
                return;
        tap_is_int(sync_send(sv[0], SYNC_CONTINUE, 0, huge, n, -EBADF), -E2BIG, "a payload over 1 MiB is refused: -E2BIG");
        tap_is_int(sync_recv(sv[1], -EBADF, 20 * USEC_PER_MSEC, &m), -ETIMEDOUT, "... and nothing was sent");
}

/* A payload larger than a SOCK_SEQPACKET message can carry whole (the send buffer is 212992 bytes by
 * default): the hook state of a container with 256 KiB of annotations travels in a sealed memfd. */
static void test_large_payload(void) {
        _cleanup_close_pair_ int sv[2] = { -EBADF, -EBADF };
        size_t n = 300U * 1024U;
        _cleanup_free_ char *big = malloc(n);
        SyncMsg m;
        int p[2];

        if (!tap_ok(big && pair(SOCK_SEQPACKET, sv) == 0, "socketpair and a payload of 300 KiB"))
                return;
        for (size_t i = 0; i < n; i++)
                big[i] = (char) ('A' + i % 23);
        unsigned before = count_fds();
        tap_is_int(sync_send(sv[0], SYNC_CONTINUE, 0, big, n, -EBADF), 0, "send 300 KiB (more than the socket's buffer)");
        tap_ok(sync_recv(sv[1], -EBADF, USEC_INFINITY, &m) == 0 && m.type == SYNC_CONTINUE && m.len == n &&
               memcmp(m.payload, big, n) == 0 && m.payload[n] == 0 && m.fd < 0,
               "it arrives whole, as an ordinary CONTINUE without an fd");
        sync_msg_done(&m);
        tap_is_int(count_fds(), before, "no fd is left open on either side");
        _cleanup_free_ char *mib = calloc(1, 1U << 20);
        tap_ok(mib && sync_send(sv[0], SYNC_CONTINUE, 0, mib, 1U << 20, -EBADF) == 0, "send exactly 1 MiB");
        tap_ok(sync_recv(sv[1], -EBADF, USEC_INFINITY, &m) == 0 && m.len == (1U << 20), "1 MiB arrives");
        sync_msg_done(&m);

        if (!tap_ok(pipe2(p, O_CLOEXEC) == 0, "a pipe"))
                return;
        tap_is_int(sync_send(sv[0], SYNC_CONSOLE, 0, big, n, p[0]), -E2BIG, "a large payload with an fd of its own: -E2BIG");

        /* A peer that flags its payload as in an fd but passes something else must not block the reader. */
        RawHeader h = { .type = SYNC_CONTINUE | (1U << 31), .len = (uint32_t) n };
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(int))];
        } control = {};
        struct iovec iov = { .iov_base = &h, .iov_len = sizeof h };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf, .msg_controllen = sizeof control.buf };
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &p[0], sizeof(int));
        before = count_fds();
        tap_is_int(sendmsg(sv[0], &mh, 0), (ssize_t) sizeof h, "forge a payload-in-fd message carrying a pipe");
        tap_is_int(sync_recv(sv[1], -EBADF, 5 * USEC_PER_SEC, &m), -EBADMSG, "a pipe instead of a sealed memfd is -EBADMSG");
        tap_is_int(count_fds(), before, "... and the fd is closed");

        int mfd = memfd_create("unsealed", MFD_CLOEXEC);
        if (!tap_ok(mfd >= 0 && write(mfd, big, n) == (ssize_t) n, "an unsealed memfd with 300 KiB"))
                return;
        memcpy(CMSG_DATA(c), &mfd, sizeof(int));
        tap_is_int(sendmsg(sv[0], &mh, 0), (ssize_t) sizeof h, "forge a payload-in-fd message carrying it");
        tap_is_int(sync_recv(sv[1], -EBADF, 5 * USEC_PER_SEC, &m), -EBADMSG, "an unsealed memfd is -EBADMSG");

        h.len = 10;
        tap_is_int(sendmsg(sv[0], &mh, 0), (ssize_t) sizeof h, "forge one announcing 10 bytes in an fd");
        tap_is_int(sync_recv(sv[1], -EBADF, 5 * USEC_PER_SEC, &m), -EBADMSG, "a small payload flagged as in an fd is -EBADMSG");
        safe_close(mfd);
        safe_close(p[0]);
        safe_close(p[1]);
}

static void test_fd(void) {
        _cleanup_close_pair_ int sv[2] = { -EBADF, -EBADF }, p[2] = { -EBADF, -EBADF };
        char buf[8] = {};
        SyncMsg m;

        if (!tap_ok(pair(SOCK_SEQPACKET, sv) == 0 && pipe2(p, O_CLOEXEC) == 0, "socketpair and a pipe"))
                return;

        tap_is_int(sync_send(sv[0], SYNC_CONSOLE, 0, "pty", 3, p[1]), 0, "send CONSOLE with an fd and a payload");
        tap_is_int(sync_recv(sv[1], -EBADF, USEC_INFINITY, &m), 0, "receive it");
        tap_ok(m.fd >= 0 && m.fd != p[1], "a new fd arrives");
        tap_ok(same_file(m.fd, p[1]), "it is the sender's file (same inode)");
        tap_ok(m.fd >= 0 && (fcntl(m.fd, F_GETFD) & FD_CLOEXEC), "it is close-on-exec");
        tap_is_str(m.payload, "pty", "the payload travels with the fd");
        tap_ok(m.fd >= 0 && write(m.fd, "hi", 2) == 2 && read(p[0], buf, sizeof buf) == 2 && streq(buf, "hi"),
               "writing to the received fd reaches the pipe");
        int fd = m.fd;
        sync_msg_done(&m);
        tap_ok(fcntl(fd, F_GETFD) < 0 && errno == EBADF, "sync_msg_done() closes the received fd");

        /* The sender keeps its own fd: passing duplicates it. */
        tap_ok(fcntl(p[1], F_GETFD) >= 0, "the sender's fd stays open");
}

static void test_error(void) {
        _cleanup_close_pair_ int sv[2] = { -EBADF, -EBADF };
        _cleanup_free_ char *err = NULL;
        SyncMsg m;

        if (!tap_ok(pair(SOCK_SEQPACKET, sv) == 0, "socketpair for errors"))
                return;

        tap_is_int(sync_send_error(sv[1], -ENOENT, "mount \"%s\" on \"%s\": %s", "proc", "/proc", strerror(ENOENT)),
                   -ENOENT, "sync_send_error() returns the negative errno");
        tap_is_int(sync_expect(sv[0], -EBADF, USEC_INFINITY, SYNC_PREPARED, NULL, &err), -ENOENT,
                   "the expecting side gets the error as a negative errno");
        tap_is_str(err, "mount \"proc\" on \"/proc\": No such file or directory", "and the formatted message");

        /* A positive errno is the same; an error of 0 still fails (EIO); an older message is replaced. */
        tap_is_int(sync_send_error(sv[1], EPERM, "second"), -EPERM, "a positive errno is accepted");
        tap_is_int(sync_expect(sv[0], -EBADF, USEC_INFINITY, SYNC_PREPARED, NULL, &err), -EPERM, "EPERM travels");
        tap_is_str(err, "second", "the message replaces the earlier one");
        tap_is_int(sync_send_error(sv[1], 0, "zero"), -EIO, "an error of 0 becomes EIO");
        tap_is_int(sync_expect(sv[0], -EBADF, USEC_INFINITY, SYNC_PREPARED, NULL, &err), -EIO, "EIO travels");
        tap_is_str(err, "zero", "with its message");

        /* A raw SYNC_ERROR without a message or errno. */
        tap_is_int(sync_send(sv[1], SYNC_ERROR, 0, NULL, 0, -EBADF), 0, "send a bare SYNC_ERROR");
        tap_is_int(sync_expect(sv[0], -EBADF, USEC_INFINITY, SYNC_PREPARED, NULL, &err), -EIO,
                   "a bare error is EIO, never success");
        tap_ok(err == NULL, "... with no message");

        /* A message of 4 KiB is cut to what fits, still NUL-terminated. */
        char long_msg[4096];
        memset(long_msg, 'x', sizeof long_msg - 1);
        long_msg[sizeof long_msg - 1] = 0;
        tap_is_int(sync_send_error(sv[1], EINVAL, "%s", long_msg), -EINVAL, "send an overlong error message");
        tap_is_int(sync_recv(sv[0], -EBADF, USEC_INFINITY, &m), 0, "receive it");
        tap_ok(m.type == SYNC_ERROR && m.payload && strlen(m.payload) == 2047 && m.len == 2048,
               "the message is cut to 2047 characters and its NUL (len %zu)", m.len);
        sync_msg_done(&m);

        /* The wrong type: -EBADMSG, the message and its fd dropped. */
        int p[2];
        if (!tap_ok(pipe2(p, O_CLOEXEC) == 0, "a pipe"))
                return;
        unsigned before = count_fds();
        tap_is_int(sync_send(sv[1], SYNC_CONSOLE, 0, NULL, 0, p[0]), 0, "send CONSOLE with an fd");
        tap_is_int(sync_expect(sv[0], -EBADF, USEC_INFINITY, SYNC_READY, &m, NULL), -EBADMSG,
                   "expecting READY, CONSOLE is -EBADMSG");
        tap_is_int(count_fds(), before, "the unexpected message's fd is closed");

        /* sync_expect() with ret NULL drops the fd of the expected message too. */
        tap_is_int(sync_send(sv[1], SYNC_CONSOLE, 0, NULL, 0, p[0]), 0, "send CONSOLE with an fd again");
        tap_is_int(sync_expect(sv[0], -EBADF, USEC_INFINITY, SYNC_CONSOLE, NULL, NULL), 0, "expect it with ret NULL");
        tap_is_int(count_fds(), before, "its fd is closed");

        tap_is_int(sync_send(sv[1], SYNC_CONSOLE, 0, "m", 1, p[0]), 0, "and once more");
        tap_is_int(sync_expect(sv[0], -EBADF, USEC_INFINITY, SYNC_CONSOLE, &m, NULL), 0, "expect it with ret");
        tap_ok(m.type == SYNC_CONSOLE && m.fd >= 0 && streq_ptr(m.payload, "m"), "the caller gets type, fd and payload");
        sync_msg_done(&m);
        safe_close(p[0]);
        safe_close(p[1]);
}

static void test_malformed(void) {
        _cleanup_close_pair_ int sv[2] = { -EBADF, -EBADF };
        RawHeader h = { .type = SYNC_CONTINUE, .len = 10 };
        char buf[sizeof h + 32];
        SyncMsg m;

        if (!tap_ok(pair(SOCK_SEQPACKET, sv) == 0, "socketpair for malformed messages"))
                return;

        tap_is_int(send(sv[0], "abcd", 4, 0), 4, "send 4 bytes, shorter than a header");
        tap_is_int(sync_recv(sv[1], -EBADF, USEC_INFINITY, &m), -EBADMSG, "a truncated header is -EBADMSG");

        memcpy(buf, &h, sizeof h);
        memcpy(buf + sizeof h, "12345", 5);
        tap_is_int(send(sv[0], buf, sizeof h + 5, 0), (ssize_t) (sizeof h + 5), "send a header announcing 10 bytes, and 5");
        tap_is_int(sync_recv(sv[1], -EBADF, USEC_INFINITY, &m), -EBADMSG, "a truncated payload is -EBADMSG");

        h.len = 2;
        memcpy(buf, &h, sizeof h);
        tap_is_int(send(sv[0], buf, sizeof h + 5, 0), (ssize_t) (sizeof h + 5), "send a header announcing 2 bytes, and 5");
        tap_is_int(sync_recv(sv[1], -EBADF, USEC_INFINITY, &m), -EBADMSG, "trailing bytes are -EBADMSG");

        h.len = UINT32_MAX;
        memcpy(buf, &h, sizeof h);
        tap_is_int(send(sv[0], buf, sizeof h, 0), (ssize_t) sizeof h, "send a header announcing 4 GiB");
        tap_is_int(sync_recv(sv[1], -EBADF, USEC_INFINITY, &m), -EBADMSG, "a lying length is -EBADMSG");

        /* A malformed message that carries an fd: the fd must not leak. */
        int p[2];
        if (!tap_ok(pipe2(p, O_CLOEXEC) == 0, "a pipe"))
                return;
        unsigned before = count_fds();
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(int))];
        } control = {};
        struct iovec iov = { .iov_base = (char *) "ab", .iov_len = 2 };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf, .msg_controllen = sizeof control.buf };
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &p[0], sizeof(int));
        tap_is_int(sendmsg(sv[0], &mh, 0), 2, "send 2 bytes with an fd");
        m.fd = 12345;
        tap_is_int(sync_recv(sv[1], -EBADF, USEC_INFINITY, &m), -EBADMSG, "a short message with an fd is -EBADMSG");
        tap_is_int(count_fds(), before, "... and the fd it carried is closed");
        tap_ok(m.fd < 0 && m.payload == NULL, "... and the message is left empty (fd %d)", m.fd);
        safe_close(p[0]);
        safe_close(p[1]);

        /* After all of this, the channel still works. */
        tap_ok(sync_send(sv[0], SYNC_GO, 0, NULL, 0, -EBADF) == 0 && sync_recv(sv[1], -EBADF, USEC_INFINITY, &m) == 0 &&
               m.type == SYNC_GO, "a good message after the bad ones still arrives");
        sync_msg_done(&m);
}

static void test_peer(void) {
        _cleanup_close_pair_ int sv[2] = { -EBADF, -EBADF };
        SyncMsg m;
        int r;

        if (!tap_ok(pair(SOCK_SEQPACKET, sv) == 0, "socketpair for peer tests"))
                return;

        uint64_t t0 = now_usec(CLOCK_MONOTONIC);
        tap_is_int(sync_recv(sv[1], -EBADF, 50 * USEC_PER_MSEC, &m), -ETIMEDOUT, "nothing sent: -ETIMEDOUT");
        uint64_t dt = now_usec(CLOCK_MONOTONIC) - t0;
        tap_ok(dt >= 45 * USEC_PER_MSEC && dt < 5 * USEC_PER_SEC, "after the timeout (%llu ms)", (unsigned long long) (dt / 1000));
        tap_is_int(sync_recv(sv[1], -EBADF, 0, &m), -ETIMEDOUT, "a timeout of 0 polls once");

        /* A message already queued is received before the close is seen. */
        tap_is_int(sync_send(sv[0], SYNC_READY, 0, NULL, 0, -EBADF), 0, "send READY, then close");
        sv[0] = safe_close(sv[0]);
        tap_ok(sync_recv(sv[1], -EBADF, USEC_INFINITY, &m) == 0 && m.type == SYNC_READY, "the queued message arrives");
        sync_msg_done(&m);
        tap_is_int(sync_recv(sv[1], -EBADF, USEC_INFINITY, &m), -EPIPE, "then the closed peer is -EPIPE");
        tap_is_int(sync_expect(sv[1], -EBADF, USEC_INFINITY, SYNC_GO, NULL, NULL), -EPIPE, "sync_expect() too");
        tap_is_int(sync_send(sv[1], SYNC_GO, 0, NULL, 0, -EBADF), -EPIPE, "sending to a closed peer is -EPIPE, no SIGPIPE");

        /* A peer that dies without a word is noticed through its pidfd, without a timeout. */
        _cleanup_close_pair_ int sv2[2] = { -EBADF, -EBADF };
        if (!tap_ok(pair(SOCK_SEQPACKET, sv2) == 0, "socketpair shared with a child"))
                return;
        pid_t pid = fork();
        if (pid == 0) {
                /* The child keeps its end open until it dies: only the pidfd can tell. */
                usleep(20000);
                _exit(0);
        }
        _cleanup_close_ int pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (!tap_ok(pid > 0 && pidfd >= 0, "fork a child and open its pidfd"))
                return;
        /* Our own copy of the child's end is still open, so the socket never reports a hang-up. */
        t0 = now_usec(CLOCK_MONOTONIC);
        r = sync_recv(sv2[1], pidfd, 5 * USEC_PER_SEC, &m);
        tap_is_int(r, -ECHILD, "the watched child died before sending: -ECHILD");
        tap_ok(now_usec(CLOCK_MONOTONIC) - t0 < 4 * USEC_PER_SEC, "at once, not after the timeout");
        (void) waitpid(pid, NULL, 0);

        /* A child that sends and then dies: the message wins over its death. */
        pidfd = safe_close(pidfd);
        pid = fork();
        if (pid == 0) {
                (void) sync_send(sv2[0], SYNC_STAGE1_PID, 0, "42", 2, -EBADF);
                _exit(0);
        }
        if (!tap_ok(pid > 0, "fork a child that sends, then exits"))
                return;
        pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        (void) waitid(P_PID, (id_t) pid, &(siginfo_t) {}, WEXITED | WNOWAIT);
        tap_ok(sync_recv(sv2[1], pidfd, 5 * USEC_PER_SEC, &m) == 0 && m.type == SYNC_STAGE1_PID &&
               streq_ptr(m.payload, "42"), "a message queued by a dead child is received, not -ECHILD");
        sync_msg_done(&m);
        (void) waitpid(pid, NULL, 0);
}

static void test_stream(void) {
        _cleanup_close_pair_ int sv[2] = { -EBADF, -EBADF };
        SyncMsg m;

        if (!tap_ok(pair(SOCK_STREAM, sv) == 0, "socketpair(SOCK_STREAM), as the start socket"))
                return;

        /* The trampoline's SYNC_EXEC and then SYNC_EXEC_FAILED follow each other closely: one read could see both. */
        tap_ok(sync_send(sv[0], SYNC_EXEC, 0, NULL, 0, -EBADF) == 0 &&
               sync_send(sv[0], SYNC_EXEC_FAILED, ENOENT, "/bin/nope", 9, -EBADF) == 0 &&
               sync_send(sv[0], SYNC_GO, 0, "tail", 4, -EBADF) == 0, "send three messages back to back on a stream");
        tap_ok(sync_recv(sv[1], -EBADF, USEC_INFINITY, &m) == 0 && m.type == SYNC_EXEC && m.len == 0,
               "stream: the first message alone");
        sync_msg_done(&m);
        tap_ok(sync_recv(sv[1], -EBADF, USEC_INFINITY, &m) == 0 && m.type == SYNC_EXEC_FAILED && m.error == ENOENT &&
               streq_ptr(m.payload, "/bin/nope"), "stream: the second one with its errno and payload");
        sync_msg_done(&m);
        tap_ok(sync_recv(sv[1], -EBADF, USEC_INFINITY, &m) == 0 && m.type == SYNC_GO && streq_ptr(m.payload, "tail"),
               "stream: the third one");
        sync_msg_done(&m);

        /* A header that arrives in two pieces is put together. */
        RawHeader h = { .type = SYNC_EXEC_FAILED, .error = EACCES, .len = 3 };
        char buf[sizeof h + 3];
        memcpy(buf, &h, sizeof h);
        memcpy(buf + sizeof h, "abc", 3);
        pid_t pid = fork();
        if (pid == 0) {
                if (write(sv[0], buf, 5) != 5)
                        _exit(1);
                usleep(50000);
                _exit(write(sv[0], buf + 5, sizeof buf - 5) == (ssize_t) sizeof buf - 5 ? 0 : 1);
        }
        tap_ok(pid > 0 && sync_recv(sv[1], -EBADF, 5 * USEC_PER_SEC, &m) == 0 && m.type == SYNC_EXEC_FAILED &&
               m.error == EACCES && streq_ptr(m.payload, "abc"), "stream: a header split over two writes is reassembled");
        sync_msg_done(&m);
        (void) waitpid(pid, NULL, 0);

        h = (RawHeader) { .type = SYNC_GO, .len = (1U << 20) + 1 };
        tap_is_int(write(sv[0], &h, sizeof h), (ssize_t) sizeof h, "stream: send a header announcing 1 MiB + 1");
        tap_is_int(sync_recv(sv[1], -EBADF, USEC_INFINITY, &m), -EBADMSG, "stream: an oversized length is -EBADMSG");

        sv[0] = safe_close(sv[0]);
        tap_is_int(sync_recv(sv[1], -EBADF, USEC_INFINITY, &m), -EPIPE, "stream: a closed peer is -EPIPE");
}

int main(void) {
        alarm(60); /* a hang is a failure, not a wait for the suite's timeout */
        test_plain();
        test_payload();
        test_oversize();
        test_large_payload();
        test_fd();
        test_error();
        test_malformed();
        test_peer();
        test_stream();
        return tap_done();
}
