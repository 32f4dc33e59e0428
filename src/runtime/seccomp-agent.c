/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "error-util.h"
#include "json-util.h"
#include "macro.h"
#include "process-util.h"
#include "seccomp-agent.h"

int oci_seccomp_container_process_state(const OciSeccomp *s, pid_t pid, const char *state_json, char **ret) {
        _cleanup_json_ cJSON *root = NULL, *state = NULL;
        int r;

        assert(s);
        assert(state_json);
        assert(ret);

        r = json_parse(state_json, strlen(state_json), &state, NULL);
        if (r < 0)
                return r;
        if (!cJSON_IsObject(state))
                return -EINVAL;

        root = cJSON_CreateObject();
        if (!root)
                return -ENOMEM;
        if (!cJSON_AddStringToObject(root, "ociVersion", OCI_SPEC_VERSION))
                return -ENOMEM;
        cJSON *fds = cJSON_AddArrayToObject(root, "fds");
        if (!fds)
                return -ENOMEM;
        cJSON *fd_name = cJSON_CreateString("seccompFd");
        if (!fd_name)
                return -ENOMEM;
        cJSON_AddItemToArray(fds, fd_name);
        if (!cJSON_AddNumberToObject(root, "pid", (double) pid))
                return -ENOMEM;
        if (s->listener_metadata && !cJSON_AddStringToObject(root, "metadata", s->listener_metadata))
                return -ENOMEM;
        cJSON_AddItemToObject(root, "state", TAKE_PTR(state));

        char *p = json_print(root);
        if (!p)
                return -ENOMEM;
        *ret = p;
        return 0;
}

/* A spent deadline fails at once (poll_until() would still look once): an agent that takes the state
 * slowly cannot stretch it. */
static int wait_fd(int fd, short events, uint64_t deadline) {
        struct pollfd p = { .fd = fd, .events = events };
        int r;

        if (now_usec(CLOCK_MONOTONIC) >= deadline)
                return -ETIMEDOUT;
        r = poll_until(&p, 1, deadline);
        if (r < 0)
                return r;
        return p.revents & (POLLERR | POLLNVAL) ? -EPIPE : 0;
}

int oci_seccomp_send_to_agent_timeout(const OciSeccomp *s, int notify_fd, pid_t pid, const char *state_json,
                                      uint64_t timeout_usec, char **reterr) {
        _cleanup_free_ char *doc = NULL;
        _cleanup_close_ int sock = -EBADF;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int r;

        assert(s);
        assert(notify_fd >= 0);
        assert(state_json);

        if (isempty(s->listener_path))
                return errorf(reterr, -EINVAL,
                              "linux.seccomp.listenerPath: required when an action is SCMP_ACT_NOTIFY");
        if (strlen(s->listener_path) >= sizeof sa.sun_path)
                return errorf(reterr, -ENAMETOOLONG,
                              "linux.seccomp.listenerPath: \"%s\" is longer than %zu bytes",
                              s->listener_path, sizeof sa.sun_path - 1);
        strcpy(sa.sun_path, s->listener_path);

        r = oci_seccomp_container_process_state(s, pid, state_json, &doc);
        if (r < 0)
                return errorf(reterr, r, "seccomp agent: building the container process state: %s",
                              strerror(-r));

        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + timeout_usec;

        sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (sock < 0)
                return errorf(reterr, -errno, "seccomp agent: socket: %m");

        /* A non-blocking connect on a unix stream socket fails with EAGAIN while the listener's backlog is
         * full: retry until the deadline. */
        for (;;) {
                if (connect(sock, (const struct sockaddr *) &sa, sizeof sa) >= 0)
                        break;
                if (errno == EINPROGRESS) {
                        r = wait_fd(sock, POLLOUT, deadline);
                        if (r < 0)
                                return errorf(reterr, r, "failed to connect with seccomp agent \"%s\": %s",
                                              s->listener_path, strerror(-r));
                        int err = 0;
                        socklen_t l = sizeof err;
                        if (getsockopt(sock, SOL_SOCKET, SO_ERROR, &err, &l) < 0)
                                err = errno;
                        if (err != 0)
                                return errorf(reterr, -err,
                                              "failed to connect with seccomp agent \"%s\": %s",
                                              s->listener_path, strerror(err));
                        break;
                }
                if (errno != EAGAIN && errno != EINTR)
                        return errorf(reterr, -errno, "failed to connect with seccomp agent \"%s\": %m",
                                      s->listener_path);
                if (now_usec(CLOCK_MONOTONIC) >= deadline)
                        return errorf(reterr, -ETIMEDOUT, "failed to connect with seccomp agent \"%s\": %s",
                                      s->listener_path, strerror(ETIMEDOUT));
                (void) usleep(10 * USEC_PER_MSEC);
        }

        size_t len = strlen(doc), done = 0;
        bool fd_sent = false;
        while (done < len) {
                union {
                        struct cmsghdr cmsghdr;
                        uint8_t buf[CMSG_SPACE(sizeof(int))];
                } control = {};
                struct iovec iov = { .iov_base = doc + done, .iov_len = len - done };
                struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

                /* The fd goes with the first sendmsg() only, as the spec requires. */
                if (!fd_sent) {
                        mh.msg_control = &control;
                        mh.msg_controllen = sizeof control;
                        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
                        c->cmsg_level = SOL_SOCKET;
                        c->cmsg_type = SCM_RIGHTS;
                        c->cmsg_len = CMSG_LEN(sizeof(int));
                        memcpy(CMSG_DATA(c), &notify_fd, sizeof(int));
                }

                ssize_t n = sendmsg(sock, &mh, MSG_NOSIGNAL);
                if (n < 0) {
                        if (errno != EAGAIN && errno != EINTR)
                                return errorf(reterr, -errno,
                                              "seccomp agent: sending the seccomp state to \"%s\": %m",
                                              s->listener_path);
                        r = wait_fd(sock, POLLOUT, deadline);
                        if (r < 0)
                                return errorf(reterr, r,
                                              "seccomp agent: sending the seccomp state to \"%s\": %s",
                                              s->listener_path, strerror(-r));
                        continue;
                }
                fd_sent = true;
                done += (size_t) n;
        }

        /* One state per connection; the connection is closed right after it (cleanup). */
        return 0;
}

int oci_seccomp_send_to_agent(const OciSeccomp *s, int notify_fd, pid_t pid, const char *state_json,
                              char **reterr) {
        return oci_seccomp_send_to_agent_timeout(s, notify_fd, pid, state_json, SECCOMP_AGENT_TIMEOUT_USEC,
                                                 reterr);
}
