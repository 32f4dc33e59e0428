/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sd-notify MSG...: send one datagram, the MSGs as lines, to $NOTIFY_SOCKET ("/path" or "@abstract"), as
 * sd_notify() does. A static test helper copied into the test rootfs (the busybox there has no such tool). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char *argv[]) {
        const char *e = getenv("NOTIFY_SOCKET");
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char msg[4096] = "";
        size_t n = 0, hl;
        socklen_t salen;
        int s;

        if (!e || !*e || (hl = strlen(e)) >= sizeof sa.sun_path) {
                fprintf(stderr, "sd-notify: NOTIFY_SOCKET is not set\n");
                return 2;
        }
        for (int i = 1; i < argc; i++) {
                int k = snprintf(msg + n, sizeof msg - n, "%s%s", argv[i], i + 1 < argc ? "\n" : "");
                if (k < 0 || (size_t) k >= sizeof msg - n)
                        return 2;
                n += (size_t) k;
        }
        memcpy(sa.sun_path, e, hl);
        salen = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + hl + 1);
        if (e[0] == '@') {
                sa.sun_path[0] = 0;
                salen--;
        }
        s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s < 0 || sendto(s, msg, n, 0, (struct sockaddr *) &sa, salen) < 0) {
                perror("sd-notify: send");
                return 1;
        }
        return 0;
}
