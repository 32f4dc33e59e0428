/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "error-util.h"
#include "macro.h"
#include "socket-util.h"

int unix_send_fd(const char *option, const char *path, const char *name, int fd, char **reterr) {
        _cleanup_close_ int s = -EBADF;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct timeval tv = { .tv_sec = 10 };
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(int))];
        } control = {};
        struct iovec iov = { .iov_base = (char *) name, .iov_len = strlen(name) };
        struct msghdr mh = { .msg_iov = &iov,
                             .msg_iovlen = 1,
                             .msg_control = control.buf,
                             .msg_controllen = sizeof control.buf };

        if (strlen(path) >= sizeof sa.sun_path)
                return errorf(reterr, ENAMETOOLONG, "%s: path \"%s\" is too long", option, path);
        strcpy(sa.sun_path, path);
        s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0)
                return errorf(reterr, errno, "%s: socket: %m", option);
        (void) setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        if (connect(s, (struct sockaddr *) &sa, sizeof sa) < 0)
                return errorf(reterr, errno, "%s: connect to \"%s\": %m", option, path);
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
        if (sendmsg(s, &mh, MSG_NOSIGNAL) < 0)
                return errorf(reterr, errno, "%s: send to \"%s\": %m", option, path);
        return 0;
}
