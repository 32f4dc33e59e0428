/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"

bool fd_is_sealed(int fd) {
        int s = fcntl(fd, F_GET_SEALS);

        return s >= 0 && (s & FD_SEALS_ALL) == FD_SEALS_ALL;
}

bool fd_is_write_protected(int fd) {
        struct statvfs sv;

        return fd_is_sealed(fd) || (fstatvfs(fd, &sv) >= 0 && (sv.f_flag & ST_RDONLY));
}

int loop_write(int fd, const void *buf, size_t n) {
        const char *p = buf;

        while (n > 0) {
                ssize_t k = write(fd, p, n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        return -EIO;
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

int loop_read(int fd, void *buf, size_t n) {
        char *p = buf;
        size_t done = 0;

        while (done < n) {
                ssize_t k = read(fd, p + done, n - done);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                done += (size_t) k;
        }
        return (int) done;
}

int read_full_file_at(int dir_fd, const char *path, size_t max_size, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, alloc = 0;

        fd = openat(dir_fd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;

        for (;;) {
                if (alloc - size < 4096) {
                        size_t n = alloc ? alloc * 2 : 16384;
                        if (n > max_size + 1)
                                n = max_size + 1;
                        if (n <= size)
                                return -EFBIG;
                        char *nb = realloc(buf, n + 1);
                        if (!nb)
                                return -ENOMEM;
                        buf = nb;
                        alloc = n;
                }
                size_t want = alloc - size;
                int k = loop_read(fd, buf + size, want);
                if (k < 0)
                        return k;
                size += (size_t) k;
                if (size > max_size)
                        return -EFBIG;
                if ((size_t) k < want)
                        break; /* end of file */
        }

        if (!buf) {
                buf = malloc(1);
                if (!buf)
                        return -ENOMEM;
        }
        buf[size] = 0;
        *ret = TAKE_PTR(buf);
        if (ret_size)
                *ret_size = size;
        return 0;
}

int read_full_file_in(const char *dir, const char *name, size_t max_size, char **ret) {
        _cleanup_free_ char *path = NULL;

        if (asprintf(&path, "%s/%s", dir, name) < 0)
                return -ENOMEM;
        return read_full_file_at(AT_FDCWD, path, max_size, ret, NULL);
}

int write_file_atomic_at(int dir_fd, const char *path, const void *data, size_t size, mode_t mode) {
        char tmp[PATH_MAX];
        _cleanup_close_ int fd = -EBADF;
        int r;

        r = snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int) getpid());
        if (r < 0 || (size_t) r >= sizeof tmp)
                return -ENAMETOOLONG;

        fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
        if (fd < 0)
                return -errno;

        r = loop_write(fd, data, size);
        if (r >= 0 && fsync(fd) < 0)
                r = -errno;
        if (r >= 0 && renameat(dir_fd, tmp, dir_fd, path) < 0)
                r = -errno;
        if (r < 0)
                (void) unlinkat(dir_fd, tmp, 0);
        return r;
}

int write_string_file_at(int dir_fd, const char *path, const char *s) {
        _cleanup_close_ int fd = -EBADF;

        fd = openat(dir_fd, path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        return loop_write(fd, s, strlen(s));
}

int write_string_file(const char *path, const char *s) {
        return write_string_file_at(AT_FDCWD, path, s);
}

static int proc_root_fd = AT_FDCWD;

void proc_set_root(int fd) {
        proc_root_fd = fd;
}

int proc_dir_fd(void) {
        return proc_root_fd;
}

const char *proc_rel(const char *abs_path) {
        if (proc_root_fd == AT_FDCWD)
                return abs_path;
        FOREACH_ARRAY(own, ((const char *const[]){ "/proc/self", "/proc/thread-self" }), 2) {
                size_t n = strlen(*own);
                if (strncmp(abs_path, *own, n) == 0 && (abs_path[n] == '/' || abs_path[n] == 0))
                        return abs_path + 6;
        }
        return abs_path; /* another process's (/proc/1/...): the container's procfs, as the path says */
}

int write_pid_file(const char *path, pid_t pid) {
        _cleanup_free_ char *dir = NULL;
        char buf[32];

        snprintf(buf, sizeof buf, "%d", (int) pid);
        dir = strdup(path);
        if (!dir)
                return -ENOMEM;
        char *slash = strrchr(dir, '/');
        _cleanup_close_ int dfd = -EBADF;
        const char *name = path;
        if (slash) {
                *slash = 0;
                name = slash + 1;
                dfd = open(*dir ? dir : "/", O_DIRECTORY | O_CLOEXEC | O_RDONLY);
                if (dfd < 0)
                        return -errno;
        }
        return write_file_atomic_at(slash ? dfd : AT_FDCWD, name, buf, strlen(buf), 0644);
}
