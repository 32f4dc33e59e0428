/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "error-util.h"
#include "fileio.h"
#include "macro.h"
#include "process-util.h"
#include "strv.h"
#include "trampoline.h"

#define PROC_FD_PATH_LEN (sizeof("/proc/self/fd/") + 12)

/* The inode number of every procfs instance's root directory (fs/proc/root.c). */
#define PROC_ROOT_INO 1

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

static bool seccomp_arg_holds(const OciSeccompArg *a, const uint64_t args[6]) {
        if (a->index >= 6)
                return false;
        uint64_t v = args[a->index];
        switch (a->op) {
        case OCI_SECCOMP_OP_NE:
                return v != a->value;
        case OCI_SECCOMP_OP_LT:
                return v < a->value;
        case OCI_SECCOMP_OP_LE:
                return v <= a->value;
        case OCI_SECCOMP_OP_EQ:
                return v == a->value;
        case OCI_SECCOMP_OP_GE:
                return v >= a->value;
        case OCI_SECCOMP_OP_GT:
                return v > a->value;
        case OCI_SECCOMP_OP_MASKED_EQ:
                return (v & a->value) == a->value_two;
        default:
                return false;
        }
}

static bool seccomp_action_allows(OciSeccompAction a) {
        return a == OCI_SECCOMP_ALLOW || a == OCI_SECCOMP_LOG;
}

/* Would the profile let this call through? Every rule that names it and whose conditions hold for args must
 * allow it (an overlap of rules is not second-guessed: one that refuses says no); with none, the default. */
static bool seccomp_allows_call(const OciSeccomp *s, const char *name, const uint64_t args[6]) {
        bool named = false;

        for (size_t i = 0; i < s->n_syscalls; i++) {
                const OciSyscall *rule = &s->syscalls[i];
                if (!strv_contains(rule->names, name))
                        continue;
                bool holds = true;
                for (size_t k = 0; k < rule->n_args && holds; k++)
                        holds = seccomp_arg_holds(&rule->args[k], args);
                if (!holds)
                        continue;
                if (!seccomp_action_allows(rule->action))
                        return false;
                named = true;
        }
        return named || seccomp_action_allows(s->default_action);
}

bool trampoline_seccomp_allows_fork(const OciSeccomp *s, bool terminal) {
        static const struct {
                const char *name;
                uint64_t args[6];
                bool terminal_only;
        } calls[] = {
                { "clone", { CLONE_PARENT | CLONE_VFORK | SIGCHLD } },
                { "prctl", { PR_SET_PDEATHSIG, SIGKILL } },
                { "prctl", { PR_SET_PDEATHSIG, 0 } },
                { "setsid", {} },
                { "ioctl", { 0, TIOCSCTTY, 0 }, true },
        };

        if (!s || !s->present)
                return true;
        FOREACH_ARRAY(c, calls, ELEMENTSOF(calls))
                if ((!c->terminal_only || terminal) && !seccomp_allows_call(s, c->name, c->args))
                        return false;
        return true;
}

/* The fd directory of this process, verified: /proc in the container's mount namespace may be anything the
 * image has there when the config mounts no procfs (a directory with a file or a symlink at self/fd/N), and
 * that file would run instead of the trampoline, holding the runtime's sync socket. So /proc must be the root
 * of a procfs (its "self" is then the kernel's), and self/fd is checked to be on procfs too. */
int trampoline_open_proc_fd(char **reterr) {
        _cleanup_close_ int proc_fd = -EBADF, fd_fd = -EBADF;
        struct statfs sf;
        struct stat st;

        /* Ours, opened before we joined the container's mount namespace (exec's child): the host's. */
        if (proc_dir_fd() != AT_FDCWD) {
                fd_fd = openat(proc_dir_fd(), "self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd_fd < 0)
                        return errorf(reterr, errno, "cannot open our own /proc/self/fd: %s",
                                      strerror(errno));
                return TAKE_FD(fd_fd);
        }
        proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (proc_fd < 0)
                return errorf(reterr, errno, "/proc/self/fd is not on procfs: cannot open /proc: %s",
                              strerror(errno));
        if (fstatfs(proc_fd, &sf) < 0 || fstat(proc_fd, &st) < 0)
                return errorf(reterr, errno, "/proc/self/fd is not on procfs: cannot stat /proc: %s",
                              strerror(errno));
        if (sf.f_type != PROC_SUPER_MAGIC || st.st_ino != PROC_ROOT_INO)
                return errorf(reterr, EXDEV, "/proc/self/fd is not on procfs: /proc is not a procfs mount");
        fd_fd = openat(proc_fd, "self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd_fd < 0)
                return errorf(reterr, errno, "/proc/self/fd is not on procfs: cannot open it: %s",
                              strerror(errno));
        if (fstatfs(fd_fd, &sf) < 0)
                return errorf(reterr, errno, "/proc/self/fd is not on procfs: cannot stat it: %s",
                              strerror(errno));
        if (sf.f_type != PROC_SUPER_MAGIC)
                return errorf(reterr, EXDEV, "/proc/self/fd is not on procfs");
        return TAKE_FD(fd_fd);
}

int trampoline_execve(int tramp_fd, bool avoid_execveat, int proc_fd_dir, const char *path,
                      char *const argv[], char *const envp[], int sync_fd, TrampolineFlags flags,
                      char **reterr) {
        _cleanup_close_ int fd_dir = -EBADF, cwd_fd = -EBADF;
        _cleanup_free_ char **targv = NULL;
        char fdbuf[32], name[PROC_FD_PATH_LEN];
        const char *mode = (flags & TRAMPOLINE_FORK) ? ((flags & TRAMPOLINE_CTTY) ? "ft" : "f") : "";
        size_t n = 0;
        int r;

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
                snprintf(fdbuf, sizeof fdbuf, "a%s%d", mode, sync_fd >= 0 ? sync_fd : -1);
                (void) syscall(SYS_execveat, tramp_fd, "", targv, envp, AT_EMPTY_PATH);
                /* Refused (by a seccomp errno rule, say): try the path form. */
        }

        /* The path form. The fd directory is verified (by the caller before the seccomp filter, or here);
         * N is then looked up relative to it where the filter lets us: execve() takes no directory fd, so
         * that directory becomes the cwd for the call, and the trampoline returns to the real one (cwd_fd,
         * not close-on-exec, closed by it at once). A filter that refuses openat or fchdir leaves the path
         * through /proc, which was verified to be a procfs before the filter was loaded. */
        if (proc_fd_dir < 0) {
                fd_dir = trampoline_open_proc_fd(reterr);
                if (fd_dir < 0)
                        return fd_dir;
                proc_fd_dir = fd_dir;
        }
        cwd_fd = open(".", O_PATH | O_DIRECTORY);
        if (cwd_fd >= 0 && fchdir(proc_fd_dir) >= 0) {
                snprintf(fdbuf, sizeof fdbuf, "e%s%d:%d", mode, sync_fd >= 0 ? sync_fd : -1, cwd_fd);
                snprintf(name, sizeof name, "%d", tramp_fd);
                execve(name, targv, envp);
                r = -errno;
                if (fchdir(cwd_fd) < 0)
                        return errorf(reterr, r,
                                      "execve /proc/self/fd/%d: %s (and the working directory is lost)",
                                      tramp_fd, strerror(-r));
                return errorf(reterr, r, "execve /proc/self/fd/%d: %s", tramp_fd, strerror(-r));
        }
        cwd_fd = safe_close(cwd_fd);
        snprintf(fdbuf, sizeof fdbuf, "e%s%d", mode, sync_fd >= 0 ? sync_fd : -1);
        snprintf(name, sizeof name, "/proc/self/fd/%d", tramp_fd);
        execve(name, targv, envp);
        r = -errno;
        return errorf(reterr, r, "execve %s: %s", name, strerror(-r));
}
