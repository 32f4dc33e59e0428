/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What executing a sealed memfd copy of a static program costs (issue 31; bench/README.md, "Static
 * container side"). One process start per run, for `perf stat -r N`:
 *   exec-cost fork             fork, the child exits, wait: the baseline
 *   exec-cost file PROG        + a memfd filled from PROG with sendfile(), sealed, execveat() in the child
 *   exec-cost embedded PROG    the same, the bytes written from a read-only mapping of PROG (what a program
 *                              embedded in the runtime's image as bytes costs: the trampoline's way)
 *   exec-cost copy PROG        the memfd filled and sealed as for "file", but the child exits unexecuted:
 *                              the copy's share of the cost
 * PROG must exit at once (build/sdrun-init-static does). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

static int fail(const char *what) {
        fprintf(stderr, "exec-cost: %s: %s\n", what, strerror(errno));
        return 1;
}

int main(int argc, char *argv[]) {
        char *cargv[] = { (char *) "sdrun-init", NULL }, *cenv[] = { NULL };
        int mfd = -1, status;
        pid_t pid;

        if (argc >= 3) {
                struct stat st;
                int fd = open(argv[2], O_RDONLY | O_CLOEXEC);

                if (fd < 0 || fstat(fd, &st) < 0)
                        return fail(argv[2]);
                mfd = memfd_create("sdrun-init", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
                if (mfd < 0 && errno == EINVAL)
                        mfd = memfd_create("sdrun-init", MFD_CLOEXEC | MFD_ALLOW_SEALING);
                if (mfd < 0)
                        return fail("memfd_create");
                if (strcmp(argv[1], "embedded") != 0) {
                        for (off_t off = 0; off < st.st_size;)
                                if (sendfile(mfd, fd, &off, (size_t) (st.st_size - off)) <= 0)
                                        return fail("sendfile");
                } else {
                        const char *p = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);

                        if (p == MAP_FAILED)
                                return fail("mmap");
                        for (off_t off = 0; off < st.st_size;) {
                                ssize_t k = write(mfd, p + off, (size_t) (st.st_size - off));
                                if (k <= 0)
                                        return fail("write");
                                off += k;
                        }
                }
                if (fcntl(mfd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) < 0)
                        return fail("F_ADD_SEALS");
                close(fd);
        }
        pid = fork();
        if (pid < 0)
                return fail("fork");
        if (pid == 0) {
                if (mfd >= 0 && strcmp(argv[1], "copy") == 0)
                        _exit(0);
                if (mfd >= 0)
                        syscall(SYS_execveat, mfd, "", cargv, cenv, AT_EMPTY_PATH);
                _exit(mfd >= 0 ? 127 : 0);
        }
        if (waitpid(pid, &status, 0) < 0)
                return fail("waitpid");
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 2;
}
