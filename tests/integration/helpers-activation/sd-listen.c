/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sd-listen [once]: a static socket-activated server for the test rootfs. It accepts on every listening fd
 * it was passed (3 .. 3+LISTEN_FDS-1) and answers each connection with one line: its pid, LISTEN_FDS,
 * LISTEN_PID, LISTEN_FDNAMES and the fd the connection came in on. With "once" it exits after the first
 * answer. Without LISTEN_FDS it serves fd 3 alone (and says fds=(unset)); on SIGTERM it exits 0 (as pid 1 it
 * would ignore it otherwise). */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *env_or(const char *name) {
        const char *v = getenv(name);
        return v ? v : "(unset)";
}

static void on_term(int sig) {
        (void) sig;
        _exit(0);
}

int main(int argc, char **argv) {
        const char *e = getenv("LISTEN_FDS");
        int once = argc > 1 && strcmp(argv[1], "once") == 0;
        struct pollfd p[16];
        int n;

        signal(SIGTERM, on_term);
        n = e ? atoi(e) : 1;
        if (n <= 0)
                return 2;
        if (n > 16)
                n = 16;
        for (int i = 0; i < n; i++)
                p[i] = (struct pollfd){ .fd = 3 + i, .events = POLLIN };
        for (;;) {
                if (poll(p, (nfds_t) n, -1) < 0)
                        return 1;
                for (int i = 0; i < n; i++) {
                        char line[1024];
                        int c, k;

                        if (!(p[i].revents & POLLIN))
                                continue;
                        c = accept(p[i].fd, NULL, NULL);
                        if (c < 0)
                                continue;
                        k = snprintf(line, sizeof line, "pid=%d fds=%s lpid=%s names=%s fd=%d\n", (int) getpid(),
                                     env_or("LISTEN_FDS"), env_or("LISTEN_PID"), env_or("LISTEN_FDNAMES"), p[i].fd);
                        (void) !write(c, line, (size_t) k);
                        close(c);
                        if (once)
                                return 0;
                }
        }
}
