/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "macro.h"
#include "process-util.h"
#include "trampoline.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

extern const unsigned char trampoline_image[];
extern const size_t trampoline_image_size;

int trampoline_open(int *ret_fd) {
        _cleanup_close_ int fd = -EBADF;
        size_t off = 0;

        fd = memfd_create("sdrun-trampoline", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
        if (fd < 0 && errno == EINVAL) /* kernels before 6.3 know no MFD_EXEC: memfds are executable there */
                fd = memfd_create("sdrun-trampoline", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return -errno;
        while (off < trampoline_image_size) {
                ssize_t k = write(fd, trampoline_image + off, trampoline_image_size - off);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return k < 0 ? -errno : -EIO;
                off += (size_t) k;
        }
        if (fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) < 0)
                return -errno;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

bool trampoline_seccomp_blocks_execveat(const OciSeccomp *s) {
        bool named_allow = false;

        if (!s || !s->present)
                return false;
        for (size_t i = 0; i < s->n_syscalls; i++)
                for (char **n = s->syscalls[i].names; n && *n; n++) {
                        if (!streq(*n, "execveat"))
                                continue;
                        if ((s->syscalls[i].action != OCI_SECCOMP_ALLOW &&
                             s->syscalls[i].action != OCI_SECCOMP_LOG) ||
                            s->syscalls[i].n_args > 0)
                                return true;
                        named_allow = true;
                }
        return s->default_action != OCI_SECCOMP_ALLOW && s->default_action != OCI_SECCOMP_LOG &&
               !named_allow;
}

int trampoline_execve(int tramp_fd, bool avoid_execveat, const char *path, char *const argv[],
                      char *const envp[], int sync_fd) {
        _cleanup_free_ char **targv = NULL;
        char fdbuf[16], procpath[64];
        size_t n = 0;

        for (char *const *a = argv; a && *a; a++)
                n++;
        targv = calloc(n + 3, sizeof(char *));
        if (!targv)
                return -ENOMEM;
        targv[0] = (char *) path;
        targv[1] = fdbuf;
        for (size_t i = 0; i < n; i++)
                targv[2 + i] = argv[i];

        if (!avoid_execveat) {
                snprintf(fdbuf, sizeof fdbuf, "a%d", sync_fd >= 0 ? sync_fd : -1);
                (void) syscall(SYS_execveat, tramp_fd, "", targv, envp, AT_EMPTY_PATH);
                /* Refused (by a seccomp errno rule, say): try the path form. */
        }
        snprintf(fdbuf, sizeof fdbuf, "e%d", sync_fd >= 0 ? sync_fd : -1);
        snprintf(procpath, sizeof procpath, "/proc/self/fd/%d", tramp_fd);
        execve(procpath, targv, envp);
        return -errno;
}
