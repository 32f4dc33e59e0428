/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sd-notify-flood SECONDS PROCS: PROCS processes each send "STATUS=x<pid>-<n>" (a new value each time) to
 * $NOTIFY_SOCKET as fast as they can for SECONDS, as sd_notify() would (a blocking send; errors are counted
 * and ignored), then each prints "flood: <pid> sent N, failed M". A static test helper copied into the test
 * rootfs, for the NOTIFY_SOCKET flood tests. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static int flood(const char *e, double seconds) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        size_t hl = strlen(e);
        socklen_t salen = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + hl + 1);
        unsigned long sent = 0, failed = 0;
        double end = now() + seconds;
        char msg[64];
        int s;

        memcpy(sa.sun_path, e, hl);
        if (e[0] == '@') {
                sa.sun_path[0] = 0;
                salen--;
        }
        s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s < 0) {
                perror("sd-notify-flood: socket");
                return 1;
        }
        for (unsigned long n = 0;; n++) {
                if ((n & 255) == 0 && now() >= end)
                        break;
                int k = snprintf(msg, sizeof msg, "STATUS=x%d-%lu", (int) getpid(), n);
                if (sendto(s, msg, (size_t) k, MSG_NOSIGNAL, (struct sockaddr *) &sa, salen) < 0)
                        failed++;
                else
                        sent++;
        }
        fprintf(stderr, "flood: %d sent %lu, failed %lu\n", (int) getpid(), sent, failed);
        return 0;
}

int main(int argc, char *argv[]) {
        const char *e = getenv("NOTIFY_SOCKET");
        double seconds;
        int procs;

        if (argc != 3 || (seconds = atof(argv[1])) <= 0 || (procs = atoi(argv[2])) <= 0) {
                fprintf(stderr, "usage: sd-notify-flood SECONDS PROCS\n");
                return 2;
        }
        if (!e || !*e || strlen(e) >= sizeof(((struct sockaddr_un){}).sun_path)) {
                fprintf(stderr, "sd-notify-flood: NOTIFY_SOCKET is not set\n");
                return 2;
        }
        for (int i = 0; i < procs; i++) {
                pid_t pid = fork();
                if (pid < 0) {
                        perror("sd-notify-flood: fork");
                        return 1;
                }
                if (pid == 0)
                        _exit(flood(e, seconds));
        }
        while (wait(NULL) > 0)
                ;
        return 0;
}
