/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cli.h"
#include "fileio.h"
#include "log.h"
#include "macro.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

/* Set across the one re-exec, to the caller's comm (execveat of an fd names the process after the fd);
 * removed again at once, so the verb sees the caller's environment. Present without a sealed exe means the
 * re-exec did not give one: refused rather than looped. */
#define SEALED_EXEC_ENV "_SDRUN_SEALED_EXEC"

/* Copy size bytes of the file at fd into dst: sendfile() (the kernel copies page cache to shmem, no
 * round trip through user memory); read/write where sendfile cannot. */
static int copy_exe(int src, int dst, off_t size) {
        off_t off = 0;

        while (off < size) {
                ssize_t k = sendfile(dst, src, &off, (size_t) (size - off));
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0 && (errno == EINVAL || errno == ENOSYS) && off == 0)
                        break;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        return -EIO; /* the file shrank under us */
        }
        while (off < size) {
                char buf[64 * 1024];
                ssize_t k = pread(src, buf, MIN((off_t) sizeof buf, size - off), off);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return k < 0 ? -errno : -EIO;
                for (ssize_t w = 0; w < k;) {
                        ssize_t n = write(dst, buf + w, (size_t) (k - w));
                        if (n < 0 && errno == EINTR)
                                continue;
                        if (n < 0)
                                return -errno;
                        w += n;
                }
                off += k;
        }
        return 0;
}

/* How much of the ELF file at fd the kernel and the dynamic loader read: the end of the farthest segment
 * (every one the program headers name, loaded or not). What follows — the section headers, debug info, the
 * symbol table of an unstripped build — is not copied: a debug build's binary is four times its loaded
 * size. Anything that is not a well-formed ELF file of this machine is copied whole. */
static off_t exe_used_size(int fd, off_t size) {
        ElfW(Ehdr) eh;
        off_t end;

        if (pread(fd, &eh, sizeof eh, 0) != (ssize_t) sizeof eh ||
            memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
            eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
            eh.e_phentsize != sizeof(ElfW(Phdr)) || eh.e_phnum == 0 || eh.e_phnum > 64)
                return size;
        end = (off_t) (eh.e_phoff + (size_t) eh.e_phnum * sizeof(ElfW(Phdr)));
        for (unsigned i = 0; i < eh.e_phnum; i++) {
                ElfW(Phdr) ph;

                if (pread(fd, &ph, sizeof ph, (off_t) (eh.e_phoff + i * sizeof ph)) != (ssize_t) sizeof ph)
                        return size;
                end = MAX(end, (off_t) (ph.p_offset + ph.p_filesz));
        }
        return MIN(end, size);
}

int cli_sealed_adopt(void) {
        _cleanup_close_ int self = -EBADF;
        const char *marker = getenv(SEALED_EXEC_ENV);

        if (!marker)
                return 0;
        self = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        if (self < 0 || !fd_is_sealed(self))
                return log_error_errno(self < 0 ? errno : ELOOP,
                                       "re-executed from a sealed copy, yet /proc/self/exe is not sealed");
        if (*marker)
                (void) prctl(PR_SET_NAME, marker);
        (void) unsetenv(SEALED_EXEC_ENV);
        return 1;
}

char **cli_argv = NULL;
bool cli_reexecuted = false;

int cli_run_sealed(char *argv[]) {
        _cleanup_close_ int self = -EBADF, mfd = -EBADF;
        char comm[17] = {};
        struct stat st;
        int r;

        self = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        if (self < 0)
                return log_error_errno(
                        errno, "cannot open /proc/self/exe to run from a sealed copy of the binary: %m");
        /* Already a sealed memfd (re-executed before: cli_sealed_adopt() took the marker; or started from one
         * by the caller), or on a read-only mount (an image-based OS, a read-only /usr), where the file cannot
         * be opened for writing through /proc/PID/exe either. The re-exec costs a process start. */
        if (fd_is_write_protected(self))
                return 0;

        if (fstat(self, &st) < 0)
                return log_error_errno(errno, "cannot stat /proc/self/exe: %m");
        mfd = memfd_create("sdrun", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
        if (mfd < 0 &&
            errno == EINVAL) /* kernels before 6.3 know no MFD_EXEC: memfds are executable there */
                mfd = memfd_create("sdrun", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (mfd < 0)
                return log_error_errno(errno, "cannot create a memfd for a sealed copy of the binary: %m");
        r = copy_exe(self, mfd, exe_used_size(self, st.st_size));
        if (r < 0)
                return log_error_errno(r, "cannot copy /proc/self/exe into a memfd: %m");
        if (fcntl(mfd, F_ADD_SEALS, FD_SEALS_ALL) < 0)
                return log_error_errno(errno, "cannot seal the copy of the binary: %m");

        (void) prctl(PR_GET_NAME, comm);
        if (setenv(SEALED_EXEC_ENV, comm, 1) < 0)
                return log_oom();
        /* The fd is close-on-exec: fine for an ELF file (a script would need it open), and it is not left
         * to the new image. The pid, every other fd and the environment carry over. */
        (void) syscall(SYS_execveat, mfd, "", argv, environ, AT_EMPTY_PATH);
        r = -errno;
        (void) unsetenv(SEALED_EXEC_ENV);
        return log_error_errno(r, "cannot execute the sealed copy of the binary: %m");
}

int cli_seal_exe(void) {
        assert(cli_argv);
        return cli_run_sealed(cli_argv);
}
