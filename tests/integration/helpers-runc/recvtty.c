/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* recvtty [--no-stdin] [--pid-file FILE] [--mode null|single] SOCKET: the part of runc's contrib/cmd/recvtty
 * (Go) that runc's own integration tests use, for tests/integration/test-runc-suite.sh: listen on SOCKET and
 * take the console fd of a connection (SCM_RIGHTS). --mode null: of every connection, read until it ends
 * and throw the output away. --mode single (the default): one connection, its output copied to stdout (and
 * our stdin to it, unless --no-stdin) until it ends, then exit. Written anew: the Go tool is not in
 * Debian's packages. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void *drain(void *p) {
        int fd = (int) (long) p;
        char b[4096];

        while (read(fd, b, sizeof b) > 0)
                ;
        close(fd);
        return NULL;
}

static void *feed(void *p) {
        int fd = (int) (long) p;
        char b[4096];
        ssize_t n;

        while ((n = read(STDIN_FILENO, b, sizeof b)) > 0)
                if (write(fd, b, (size_t) n) != n)
                        break;
        return NULL;
}

/* --mode single: the console's output to stdout until it ends */
static int copy_out(int fd, bool with_stdin) {
        char b[4096];
        ssize_t n;
        pthread_t t;

        if (with_stdin && pthread_create(&t, NULL, feed, (void *) (long) fd) == 0)
                pthread_detach(t);
        while ((n = read(fd, b, sizeof b)) > 0)
                if (write(STDOUT_FILENO, b, (size_t) n) != n)
                        return 1;
        return 0;
}

int main(int argc, char *argv[]) {
        const char *pid_file = NULL, *path = NULL;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        bool single = true, with_stdin = true;
        int s;

        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--pid-file") == 0 && i + 1 < argc)
                        pid_file = argv[++i];
                else if (strcmp(argv[i], "--no-stdin") == 0)
                        with_stdin = false;
                else if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc) {
                        i++;
                        if (strcmp(argv[i], "null") == 0)
                                single = false;
                        else if (strcmp(argv[i], "single") != 0) {
                                fprintf(stderr, "recvtty: --mode is null or single\n");
                                return 2;
                        }
                } else
                        path = argv[i];
        }
        if (!path || strlen(path) >= sizeof sa.sun_path) {
                fprintf(stderr, "recvtty: usage: recvtty [--no-stdin] [--pid-file FILE] [--mode null|single] SOCKET\n");
                return 2;
        }
        strcpy(sa.sun_path, path);
        s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0 || bind(s, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(s, 16) < 0) {
                perror("recvtty");
                return 1;
        }
        if (pid_file) {
                FILE *f = fopen(pid_file, "we");
                if (!f || fprintf(f, "%d", (int) getpid()) < 0 || fclose(f) != 0) {
                        perror("recvtty: pid file");
                        return 1;
                }
        }
        for (;;) {
                char buf[256], cbuf[CMSG_SPACE(16 * sizeof(int))];
                struct iovec iov = { .iov_base = buf, .iov_len = sizeof buf };
                struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
                                    .msg_controllen = sizeof cbuf };
                int c = accept4(s, NULL, NULL, SOCK_CLOEXEC);

                if (c < 0)
                        continue;
                if (recvmsg(c, &m, MSG_CMSG_CLOEXEC) >= 0)
                        for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h)) {
                                if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
                                        continue;
                                size_t n = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                                for (size_t k = 0; k < n; k++) {
                                        int fd;
                                        pthread_t t;
                                        memcpy(&fd, CMSG_DATA(h) + k * sizeof(int), sizeof fd);
                                        if (single)
                                                return copy_out(fd, with_stdin);
                                        if (pthread_create(&t, NULL, drain, (void *) (long) fd) == 0)
                                                pthread_detach(t);
                                        else
                                                close(fd);
                                }
                        }
                close(c);
        }
}
