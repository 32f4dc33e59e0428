/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The same costs as exec-cost.c, measured round robin inside one process so that a machine whose load
 * drifts (a shared VM) charges every variant alike: each round runs every variant once, and each variant's
 * CPU time (this process's and its waited-for children's user+sys, getrusage) is summed over the rounds.
 *   interleave ROUNDS SDRUN_RW SDRUN_RO STATIC_INIT NOP
 * SDRUN_RW/SDRUN_RO: the same sdrun binary on a writable and on a read-only mount (`sdrun exec` of a
 * missing container: with and without the sealed re-exec). STATIC_INIT and NOP are executed from sealed
 * memfds filled from those files; "copy" fills the memfd and forks a child that exits unexecuted. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

enum { FORK, COPY, INIT, NOP, REEXEC_RW, REEXEC_RO, N_VARIANTS };
static const char *const names[N_VARIANTS] = {
        "fork", "copy init", "init", "nop", "sdrun exec (re-exec)", "sdrun exec (ro, none)"
};

static double cpu_now(void) {
        struct rusage s, c;

        getrusage(RUSAGE_SELF, &s);
        getrusage(RUSAGE_CHILDREN, &c);
        return (double) (s.ru_utime.tv_sec + s.ru_stime.tv_sec + c.ru_utime.tv_sec + c.ru_stime.tv_sec) +
               (double) (s.ru_utime.tv_usec + s.ru_stime.tv_usec + c.ru_utime.tv_usec + c.ru_stime.tv_usec) /
                       1e6;
}

static int sealed_copy(const char *path) {
        struct stat st;
        int fd, mfd;

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0)
                abort();
        mfd = memfd_create("sdrun-init", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
        if (mfd < 0 && errno == EINVAL)
                mfd = memfd_create("sdrun-init", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (mfd < 0)
                abort();
        for (off_t off = 0; off < st.st_size;)
                if (sendfile(mfd, fd, &off, (size_t) (st.st_size - off)) <= 0)
                        abort();
        if (fcntl(mfd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) < 0)
                abort();
        close(fd);
        return mfd;
}

static void run(int v, char *argv[]) {
        char *cargv[] = { (char *) "sdrun-init", NULL }, *cenv[] = { NULL };
        char *sargv[] = { NULL,
                          (char *) "--root",
                          (char *) "/nonexistent",
                          (char *) "exec",
                          (char *) "x",
                          (char *) "true",
                          NULL };
        int mfd = -1, status;
        pid_t pid;

        if (v == COPY || v == INIT)
                mfd = sealed_copy(argv[4]);
        else if (v == NOP)
                mfd = sealed_copy(argv[5]);
        pid = fork();
        if (pid < 0)
                abort();
        if (pid == 0) {
                int null = open("/dev/null", O_WRONLY);
                dup2(null, 2);
                if (v == INIT || v == NOP)
                        syscall(SYS_execveat, mfd, "", cargv, cenv, AT_EMPTY_PATH);
                if (v == REEXEC_RW || v == REEXEC_RO) {
                        sargv[0] = argv[v == REEXEC_RW ? 2 : 3];
                        execv(sargv[0], sargv);
                }
                _exit(0);
        }
        if (waitpid(pid, &status, 0) < 0)
                abort();
        if (mfd >= 0)
                close(mfd);
}

int main(int argc, char *argv[]) {
        double sum[N_VARIANTS] = {};
        int rounds;

        if (argc != 6)
                return 2;
        rounds = atoi(argv[1]);
        for (int i = 0; i < rounds; i++)
                for (int k = 0; k < N_VARIANTS; k++) {
                        int v = (k + i) % N_VARIANTS; /* vary the order too */
                        double t = cpu_now();
                        run(v, argv);
                        sum[v] += cpu_now() - t;
                }
        for (int v = 0; v < N_VARIANTS; v++)
                printf("  %-22s %7.3f ms\n", names[v], sum[v] * 1e3 / rounds);
        printf("  re-exec (rw - ro)      %7.3f ms\n", (sum[REEXEC_RW] - sum[REEXEC_RO]) * 1e3 / rounds);
        printf("  static init (init - fork) %7.3f ms, of which the copy %.3f ms\n",
               (sum[INIT] - sum[FORK]) * 1e3 / rounds, (sum[COPY] - sum[FORK]) * 1e3 / rounds);
        printf("  static init instead of the trampoline hop (init - nop) %7.3f ms\n",
               (sum[INIT] - sum[NOP]) * 1e3 / rounds);
        return 0;
}
