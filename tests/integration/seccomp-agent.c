/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A small seccomp agent for the integration tests (runtime-spec config-linux.md, "The Container Process
 * State"):
 *
 *   seccomp-agent SOCKETPATH [--errno N | --value V] [--once] [--state-out FILE]
 *
 * Listens on SOCKETPATH (the path appears only once the socket is listening, so a test can wait for
 * it), receives the seccomp fd with SCM_RIGHTS plus the container process state JSON, validates it and
 * writes it as one line to FILE (appended) or stdout, then answers every notification with -N (default
 * EPERM) or with the value V. Each notification is logged to stderr as "seccomp-agent: pid P syscall S".
 * With --once it serves one connection and exits 0 when that container's filter is gone (the listener
 * reports POLLHUP); otherwise it serves connections until killed. Exit 1: usage or I/O error, 2: invalid
 * container process state. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <seccomp.h>

#define MAX_LISTENERS 64
#define STATE_MAX (1024 * 1024)
#define RECV_TIMEOUT_MS 5000

static const char *arg_state_out;
static bool arg_once;
static bool arg_value_mode;
static long long arg_value;
static int arg_errno = EPERM;

static void usage(void) {
        fprintf(stderr, "usage: seccomp-agent SOCKETPATH [--errno N | --value V] [--once] [--state-out FILE]\n");
        exit(1);
}

static bool is_string(const cJSON *o, const char *k) {
        return cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, k));
}

static bool is_number(const cJSON *o, const char *k) {
        return cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(o, k));
}

/* The container process state: ociVersion, fds (names of the received fds, "seccompFd" among them), pid,
 * optional metadata string, and state (the runtime's state object). */
static const char *validate_state(const cJSON *j, int n_fds) {
        if (!cJSON_IsObject(j))
                return "not a JSON object";
        if (!is_string(j, "ociVersion"))
                return "ociVersion missing or not a string";
        const cJSON *fds = cJSON_GetObjectItemCaseSensitive(j, "fds");
        if (!cJSON_IsArray(fds) || cJSON_GetArraySize(fds) != n_fds)
                return "fds must name each file descriptor received";
        bool seccomp_fd = false;
        const cJSON *e;
        cJSON_ArrayForEach(e, fds) {
                if (!cJSON_IsString(e))
                        return "fds entries must be strings";
                if (strcmp(e->valuestring, "seccompFd") == 0)
                        seccomp_fd = true;
        }
        if (!seccomp_fd)
                return "fds lacks \"seccompFd\"";
        if (!is_number(j, "pid") || cJSON_GetObjectItemCaseSensitive(j, "pid")->valuedouble <= 0)
                return "pid missing or not positive";
        const cJSON *md = cJSON_GetObjectItemCaseSensitive(j, "metadata");
        if (md && !cJSON_IsString(md))
                return "metadata is not a string";
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "state");
        if (!cJSON_IsObject(st))
                return "state missing or not an object";
        if (!is_string(st, "ociVersion") || !is_string(st, "id") || !is_string(st, "status") ||
            !is_string(st, "bundle"))
                return "state lacks ociVersion, id, status or bundle";
        return NULL;
}

/* Read the whole state (until EOF) and the fds of the first message. Returns the fd count or -1. */
static int read_state(int conn, char **ret_doc, int *fds, int max_fds) {
        size_t len = 0, size = 4096;
        char *doc = malloc(size);
        int n_fds = 0;
        bool first = true;

        if (!doc)
                return -1;
        for (;;) {
                struct pollfd p = { .fd = conn, .events = POLLIN };
                if (poll(&p, 1, RECV_TIMEOUT_MS) <= 0) {
                        fprintf(stderr, "seccomp-agent: timed out reading the container process state\n");
                        goto fail;
                }
                union {
                        struct cmsghdr h;
                        char buf[CMSG_SPACE(sizeof(int) * 8)];
                } control;
                memset(&control, 0, sizeof control);
                if (size - len < 2) {
                        if (size >= STATE_MAX)
                                goto fail;
                        char *d = realloc(doc, size * 2);
                        if (!d)
                                goto fail;
                        doc = d;
                        size *= 2;
                }
                struct iovec iov = { .iov_base = doc + len, .iov_len = size - len - 1 };
                struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control,
                                     .msg_controllen = sizeof control };
                ssize_t n = recvmsg(conn, &mh, MSG_CMSG_CLOEXEC);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        perror("seccomp-agent: recvmsg");
                        goto fail;
                }
                for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
                        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                                continue;
                        int k = (int) ((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
                        for (int i = 0; i < k; i++) {
                                int fd;
                                memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                                if (!first || n_fds >= max_fds) {
                                        fprintf(stderr, "seccomp-agent: unexpected file descriptor %s\n",
                                                first ? "(too many)" : "after the first message");
                                        close(fd);
                                        continue;
                                }
                                fds[n_fds++] = fd;
                        }
                }
                if (n == 0)
                        break;
                first = false;
                len += (size_t) n;
        }
        doc[len] = 0;
        *ret_doc = doc;
        return n_fds;
fail:
        free(doc);
        for (int i = 0; i < n_fds; i++)
                close(fds[i]);
        return -1;
}

static void write_state(const char *doc) {
        FILE *f = arg_state_out ? fopen(arg_state_out, "ae") : stdout;
        if (!f) {
                perror("seccomp-agent: --state-out");
                exit(1);
        }
        fprintf(f, "%s\n", doc);
        fflush(f);
        if (f != stdout)
                fclose(f);
}

/* Accept one connection: returns the seccomp fd, -1 on a bad connection, exits on an invalid state. */
static int serve_connection(int lsock) {
        int fds[8], conn = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
        char *doc = NULL;

        if (conn < 0)
                return -1;
        int n = read_state(conn, &doc, fds, 8);
        close(conn);
        if (n < 0)
                return -1;

        cJSON *j = cJSON_Parse(doc);
        const char *bad = validate_state(j, n);
        if (bad) {
                fprintf(stderr, "seccomp-agent: invalid container process state: %s: %s\n", bad, doc);
                exit(2);
        }
        write_state(doc);

        /* The seccompFd is at the index of its name in fds. */
        int seccomp_fd = -1, i = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "fds")) {
                if (strcmp(e->valuestring, "seccompFd") == 0 && seccomp_fd < 0)
                        seccomp_fd = fds[i];
                else
                        close(fds[i]);
                i++;
        }
        cJSON_Delete(j);
        free(doc);
        return seccomp_fd;
}

static void answer(int fd, struct seccomp_notif *req, struct seccomp_notif_resp *resp) {
        /* The kernel refuses a request buffer that is not zeroed. */
        memset(req, 0, sizeof *req);
        if (seccomp_notify_receive(fd, req) < 0)
                return; /* the target died meanwhile */

        char *name = seccomp_syscall_resolve_num_arch(req->data.arch, req->data.nr);
        fprintf(stderr, "seccomp-agent: pid %u syscall %s\n", req->pid, name ? name : "?");
        free(name);

        memset(resp, 0, sizeof *resp);
        resp->id = req->id;
        if (arg_value_mode)
                resp->val = arg_value;
        else
                resp->error = -arg_errno;
        (void) seccomp_notify_respond(fd, resp); /* ENOENT: the target is gone */
}

int main(int argc, char *argv[]) {
        const char *path = NULL;

        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--errno") == 0 && i + 1 < argc)
                        arg_errno = atoi(argv[++i]);
                else if (strcmp(argv[i], "--value") == 0 && i + 1 < argc) {
                        arg_value_mode = true;
                        arg_value = strtoll(argv[++i], NULL, 0);
                } else if (strcmp(argv[i], "--once") == 0)
                        arg_once = true;
                else if (strcmp(argv[i], "--state-out") == 0 && i + 1 < argc)
                        arg_state_out = argv[++i];
                else if (argv[i][0] != '-' && !path)
                        path = argv[i];
                else
                        usage();
        }
        if (!path || arg_errno <= 0 || arg_errno > 4095)
                usage();

        /* libseccomp's notify calls answer EOPNOTSUPP until it has probed the kernel. */
        if (seccomp_api_get() < 5) {
                fprintf(stderr, "seccomp-agent: the kernel or libseccomp lacks seccomp user notification\n");
                return 1;
        }

        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char tmp[sizeof sa.sun_path];
        if (snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int) getpid()) >= (int) sizeof tmp) {
                fprintf(stderr, "seccomp-agent: socket path too long\n");
                return 1;
        }
        strcpy(sa.sun_path, tmp);
        int lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        (void) unlink(tmp);
        if (lsock < 0 || bind(lsock, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(lsock, 16) < 0 ||
            rename(tmp, path) < 0) {
                perror("seccomp-agent: listening socket");
                return 1;
        }

        struct seccomp_notif *req;
        struct seccomp_notif_resp *resp;
        if (seccomp_notify_alloc(&req, &resp) < 0) {
                fprintf(stderr, "seccomp-agent: seccomp_notify_alloc failed\n");
                return 1;
        }

        int listeners[MAX_LISTENERS], n_listeners = 0;
        bool accepting = true;
        for (;;) {
                struct pollfd p[MAX_LISTENERS + 1];
                int n = 0;
                if (accepting)
                        p[n++] = (struct pollfd) { .fd = lsock, .events = POLLIN };
                for (int i = 0; i < n_listeners; i++)
                        p[n++] = (struct pollfd) { .fd = listeners[i], .events = POLLIN };

                if (poll(p, (nfds_t) n, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        perror("seccomp-agent: poll");
                        return 1;
                }

                int k = 0;
                if (accepting) {
                        if (p[0].revents & POLLIN) {
                                int fd = serve_connection(lsock);
                                if (fd >= 0 && n_listeners < MAX_LISTENERS) {
                                        listeners[n_listeners++] = fd;
                                        if (arg_once) {
                                                accepting = false;
                                                close(lsock);
                                                (void) unlink(path);
                                        }
                                } else if (fd >= 0)
                                        close(fd);
                        }
                        k = 1;
                }
                for (int i = 0; k + i < n; i++) {
                        if (p[k + i].revents & POLLIN)
                                answer(p[k + i].fd, req, resp);
                        else if (p[k + i].revents & (POLLHUP | POLLERR | POLLNVAL)) {
                                /* Every task using this filter is gone. */
                                close(p[k + i].fd);
                                for (int j = 0; j < n_listeners; j++)
                                        if (listeners[j] == p[k + i].fd) {
                                                listeners[j] = listeners[--n_listeners];
                                                break;
                                        }
                        }
                }
                if (arg_once && !accepting && n_listeners == 0)
                        break;
        }

        seccomp_notify_free(req, resp);
        return 0;
}
