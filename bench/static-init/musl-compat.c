/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* See musl-compat.h. Also the two fortified printf entry points that Debian's libcap.a (built against
 * glibc with _FORTIFY_SOURCE) calls. */
#include <stdarg.h>
#include <stdio.h>

#include "musl-compat.h"

int fsopen(const char *fs_name, unsigned flags) {
        return (int) syscall(SYS_fsopen, fs_name, flags);
}

int fsconfig(int fd, unsigned cmd, const char *key, const void *value, int aux) {
        return (int) syscall(SYS_fsconfig, fd, cmd, key, value, aux);
}

int fsmount(int fd, unsigned flags, unsigned attr_flags) {
        return (int) syscall(SYS_fsmount, fd, flags, attr_flags);
}

int open_tree(int dfd, const char *path, unsigned flags) {
        return (int) syscall(SYS_open_tree, dfd, path, flags);
}

int move_mount(int from_dfd, const char *from_path, int to_dfd, const char *to_path, unsigned flags) {
        return (int) syscall(SYS_move_mount, from_dfd, from_path, to_dfd, to_path, flags);
}

int mount_setattr(int dfd, const char *path, unsigned flags, struct mount_attr *attr, size_t size) {
        return (int) syscall(SYS_mount_setattr, dfd, path, flags, attr, size);
}

int statx(int dfd, const char *path, int flags, unsigned mask, struct statx *buf) {
        return (int) syscall(SYS_statx, dfd, path, flags, mask, buf);
}

int __sprintf_chk(char *s, int flag, size_t slen, const char *fmt, ...);
int __sprintf_chk(char *s, int flag, size_t slen, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vsnprintf(s, slen, fmt, ap);
        va_end(ap);
        return r;
}

int __asprintf_chk(char **ret, int flag, const char *fmt, ...);
int __asprintf_chk(char **ret, int flag, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(ret, fmt, ap);
        va_end(ap);
        return r;
}
