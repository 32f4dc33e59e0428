/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "error-util.h"
#include "macro.h"
#include "mount-options.h"
#include "mount.h"

#define PROC_FD_PATH_MAX (STRLEN("/proc/self/fd/") + 12)

static void proc_fd_path(int fd, char buf[static PROC_FD_PATH_MAX]) {
        snprintf(buf, PROC_FD_PATH_MAX, "/proc/self/fd/%i", fd);
}

static int strjoin_comma(char **s, const char *add) {
        size_t a = *s ? strlen(*s) : 0, b = strlen(add);
        char *n = realloc(*s, a + (a > 0) + b + 1);
        if (!n)
                return -ENOMEM;
        if (a > 0)
                n[a++] = ',';
        memcpy(n + a, add, b + 1);
        *s = n;
        return 0;
}

int mount_spec_parse(char *const *options, MountSpec *ret) {
        MountSpec m = {};

        assert(ret);

        for (char *const *o = options; o && *o; o++) {
                const MountOption *d = mount_option_lookup(*o);

                if (!d) {
                        if (strjoin_comma(&m.data, *o) < 0) {
                                free(m.data);
                                return -ENOMEM;
                        }
                        continue;
                }
                switch (d->kind) {
                case MOUNT_OPTION_FLAG:
                        if (d->clear) {
                                m.flags &= ~d->flags;
                                m.clear |= d->flags;
                        } else {
                                m.flags |= d->flags;
                                m.clear &= ~d->flags;
                        }
                        break;
                case MOUNT_OPTION_PROPAGATION:
                        m.propagation = d->flags;
                        break;
                case MOUNT_OPTION_RECURSIVE:
                        if (d->attr_clr == MOUNT_ATTR__ATIME) {
                                /* the atime mode is a field: the last mode wins */
                                m.rec_attr_set =
                                        (m.rec_attr_set & ~(uint64_t) MOUNT_ATTR__ATIME) | d->attr_set;
                                m.rec_attr_clr |= MOUNT_ATTR__ATIME;
                        } else {
                                m.rec_attr_set = (m.rec_attr_set & ~d->attr_clr) | d->attr_set;
                                m.rec_attr_clr = (m.rec_attr_clr & ~d->attr_set) | d->attr_clr;
                        }
                        break;
                case MOUNT_OPTION_IDMAP:
                        m.idmap = true;
                        m.idmap_recursive = d->recursive;
                        break;
                case MOUNT_OPTION_TMPCOPYUP:
                        m.tmpcopyup = true;
                        break;
                default:
                        assert(false);
                }
        }

        *ret = m;
        return 0;
}

void mount_spec_done(MountSpec *m) {
        if (!m)
                return;
        free(m->data);
        m->data = NULL;
}

void mount_flags_to_attr(unsigned long flags, unsigned long clear, uint64_t *ret_set, uint64_t *ret_clr) {
        static const struct {
                unsigned long ms;
                uint64_t attr;
        } map[] = {
                { MS_RDONLY, MOUNT_ATTR_RDONLY },         { MS_NOSUID, MOUNT_ATTR_NOSUID },
                { MS_NODEV, MOUNT_ATTR_NODEV },           { MS_NOEXEC, MOUNT_ATTR_NOEXEC },
                { MS_NODIRATIME, MOUNT_ATTR_NODIRATIME }, { MS_NOSYMFOLLOW, MOUNT_ATTR_NOSYMFOLLOW },
        };
        uint64_t set = 0, clr = 0;

        assert(ret_set);
        assert(ret_clr);

        FOREACH_ARRAY(e, map, ELEMENTSOF(map)) {
                if (flags & e->ms)
                        set |= e->attr;
                else if (clear & e->ms)
                        clr |= e->attr;
        }

        /* The atime mode is one field: setting any mode requires clearing the whole field. */
        if (flags & MS_NOATIME) {
                set |= MOUNT_ATTR_NOATIME;
                clr |= MOUNT_ATTR__ATIME;
        } else if (flags & MS_STRICTATIME) {
                set |= MOUNT_ATTR_STRICTATIME;
                clr |= MOUNT_ATTR__ATIME;
        } else if (flags & MS_RELATIME) {
                set |= MOUNT_ATTR_RELATIME;
                clr |= MOUNT_ATTR__ATIME;
        } else if (clear & (MS_NOATIME | MS_RELATIME | MS_STRICTATIME)) {
                /* "atime", "norelatime", "nostrictatime" without a mode: the kernel default, relatime,
                 * unless norelatime asked for strict updates. */
                set |= (clear & MS_RELATIME) ? MOUNT_ATTR_STRICTATIME : MOUNT_ATTR_RELATIME;
                clr |= MOUNT_ATTR__ATIME;
        }

        *ret_set = set;
        *ret_clr = clr;
}

int open_in_root(int root_fd, const char *path, int flags) {
        struct open_how how = {
                .flags = (uint64_t) (flags | O_CLOEXEC),
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
        };
        long fd;

        assert(root_fd >= 0);
        assert(path);

        /* EAGAIN: a concurrent rename or mount raced the lookup; retry a few times. */
        for (int i = 0;; i++) {
                fd = syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
                if (fd >= 0)
                        return (int) fd;
                if (errno != EAGAIN || i >= 16)
                        return negative_errno();
        }
}

static int readlinkat_malloc(int dir_fd, const char *name, char **ret) {
        for (size_t sz = 256; sz <= 65536; sz *= 2) {
                _cleanup_free_ char *buf = malloc(sz);
                ssize_t n;

                if (!buf)
                        return -ENOMEM;
                n = readlinkat(dir_fd, name, buf, sz);
                if (n < 0)
                        return negative_errno();
                if ((size_t) n < sz) {
                        buf[n] = 0;
                        *ret = TAKE_PTR(buf);
                        return 0;
                }
        }
        return -ENAMETOOLONG;
}

/* How many dangling symlinks mkdir_p_in_root() follows to create their targets (as the kernel's 40 for
 * lookups): a loop ends with -ELOOP. */
#define DANGLING_SYMLINKS_MAX 40

static int mkdir_p_in_root_internal(int root_fd, const char *path, mode_t mode, bool as_file,
                                    unsigned *n_links, int *ret_target_fd) {
        _cleanup_close_ int parent_fd = -EBADF;
        _cleanup_free_ char *parent = NULL, *name = NULL;
        size_t len, start;
        int fd, r;

        assert(root_fd >= 0);
        assert(path);

        /* Fast path: the target exists (the common case for /proc, /sys, /dev...): one syscall. */
        fd = open_in_root(root_fd, path, O_PATH);
        if (fd != -ENOENT)
                goto done;

        /* Make sure the parent exists (recursively: usually it does, and that costs one more lookup),
         * then create the last component relative to the resolved parent, which is inside the root. */
        len = strlen(path);
        while (len > 0 && path[len - 1] == '/')
                len--;
        start = len;
        while (start > 0 && path[start - 1] != '/')
                start--;
        name = strndup(path + start, len - start);
        parent = strndup(path, start);
        if (!name || !parent)
                return -ENOMEM;
        if (isempty(name) || streq(name, ".") || streq(name, ".."))
                return -ENOENT;

        r = mkdir_p_in_root_internal(root_fd, isempty(parent) ? "." : parent, 0755, false, n_links,
                                     &parent_fd);
        if (r < 0)
                return r;

        if (as_file) {
                r = RET_NERRNO(openat(parent_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                                      mode & 0666));
                if (r >= 0)
                        safe_close(r);
        } else
                r = RET_NERRNO(mkdirat(parent_fd, name, mode));
        if (r < 0 && r != -EEXIST)
                return r;

        /* Resolve again from the root: a symlink that was already there is followed inside the root. */
        fd = open_in_root(root_fd, path, O_PATH);
        if (fd == -ENOENT && r == -EEXIST) {
                /* A dangling symlink (an image's /etc/localtime -> ../usr/share/zoneinfo/X, /etc/resolv.conf
                 * -> ../run/...): create its target, resolved as the kernel would but inside the root, as
                 * runc and crun do. An absolute target is relative to the root; ".." stops at the root. */
                _cleanup_free_ char *target = NULL, *next = NULL;
                struct stat st;

                if (fstatat(parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        return negative_errno();
                if (!S_ISLNK(st.st_mode))
                        return -ENOENT;
                if (++*n_links > DANGLING_SYMLINKS_MAX)
                        return -ELOOP;
                r = readlinkat_malloc(parent_fd, name, &target);
                if (r < 0)
                        return r;
                if (isempty(target))
                        return -ENOENT;
                if (asprintf(&next, "%s%s", target[0] == '/' ? "" : (isempty(parent) ? "/" : parent),
                             target) < 0)
                        return -ENOMEM;
                return mkdir_p_in_root_internal(root_fd, next, mode, as_file, n_links, ret_target_fd);
        }
done:
        if (fd < 0)
                return fd;
        if (ret_target_fd)
                *ret_target_fd = fd;
        else
                safe_close(fd);
        return 0;
}

int mkdir_p_in_root(int root_fd, const char *path, mode_t mode, bool as_file, int *ret_target_fd) {
        unsigned n_links = 0;
        return mkdir_p_in_root_internal(root_fd, path, mode, as_file, &n_links, ret_target_fd);
}

int mount_on_fd(const char *source, int target_fd, const char *fstype, unsigned long flags,
                const char *data) {
        char p[PROC_FD_PATH_MAX];

        proc_fd_path(target_fd, p);
        return RET_NERRNO(mount(source, p, fstype, flags, data));
}

int move_mount_to_fd(int tree_fd, int target_fd) {
        return RET_NERRNO(
                move_mount(tree_fd, "", target_fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH));
}

int mount_setattr_fd(int fd, bool recursive, uint64_t attr_set, uint64_t attr_clr, uint64_t propagation) {
        struct mount_attr attr = {
                .attr_set = attr_set,
                .attr_clr = attr_clr,
                .propagation = propagation,
        };

        if (attr_set == 0 && attr_clr == 0 && propagation == 0)
                return 0;
        return RET_NERRNO(
                mount_setattr(fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &attr, sizeof(attr)));
}

int mount_setattr_idmap(int fd, bool recursive, int userns_fd) {
        struct mount_attr attr = {
                .attr_set = MOUNT_ATTR_IDMAP,
                .userns_fd = (uint64_t) userns_fd,
        };

        return RET_NERRNO(
                mount_setattr(fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &attr, sizeof(attr)));
}

int clone_tree_fd(int fd, bool recursive) {
        return RET_NERRNO(open_tree(fd, "",
                                    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH |
                                            (recursive ? AT_RECURSIVE : 0)));
}

int make_tmpfs_tree(bool ro, const char *mode) {
        _cleanup_close_ int fs_fd = -EBADF;

        fs_fd = RET_NERRNO(fsopen("tmpfs", FSOPEN_CLOEXEC));
        if (fs_fd < 0)
                return fs_fd;
        if (mode && fsconfig(fs_fd, FSCONFIG_SET_STRING, "mode", mode, 0) < 0)
                return negative_errno();
        if (fsconfig(fs_fd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                return negative_errno();
        return RET_NERRNO(fsmount(fs_fd, FSMOUNT_CLOEXEC,
                                  MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC |
                                          (ro ? MOUNT_ATTR_RDONLY : 0)));
}

static int copy_file_contents(int in, int out) {
        for (;;) {
                ssize_t k = copy_file_range(in, NULL, out, NULL, 1U << 30, 0);
                if (k == 0)
                        return 0;
                if (k > 0)
                        continue;
                if (errno == EINTR)
                        continue;
                if (errno != EXDEV && errno != EINVAL && errno != EOPNOTSUPP && errno != ENOSYS)
                        return -errno;
                break;
        }
        /* Fallback: plain read/write. */
        char buf[65536];
        for (;;) {
                ssize_t k = read(in, buf, sizeof buf);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        return 0;
                for (ssize_t off = 0; off < k;) {
                        ssize_t w = write(out, buf + off, (size_t) (k - off));
                        if (w < 0) {
                                if (errno == EINTR)
                                        continue;
                                return -errno;
                        }
                        off += w;
                }
        }
}

static int copy_tree_at(int src_fd, int dst_fd, unsigned depth) {
        /* Privileged, runs in the container's namespaces (before pivot_root). */
        _cleanup_close_ int dfd = -EBADF;
        DIR *d;
        struct dirent *de;
        int r = 0;

        if (depth > 256)
                return -ELOOP;
        dfd = openat(src_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        d = fdopendir(dfd);
        if (!d)
                return -errno;
        TAKE_FD(dfd);

        while (r >= 0 && (errno = 0, de = readdir(d))) {
                struct stat st;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (fstatat(src_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        r = -errno;
                        break;
                }
                if (S_ISDIR(st.st_mode)) {
                        _cleanup_close_ int s2 = -EBADF, d2 = -EBADF;
                        if (mkdirat(dst_fd, de->d_name, st.st_mode & 07777) < 0 && errno != EEXIST) {
                                r = -errno;
                                break;
                        }
                        s2 = openat(src_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        d2 = openat(dst_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (s2 < 0 || d2 < 0) {
                                r = -errno;
                                break;
                        }
                        r = copy_tree_at(s2, d2, depth + 1);
                        if (r >= 0 &&
                            (fchown(d2, st.st_uid, st.st_gid) < 0 || fchmod(d2, st.st_mode & 07777) < 0))
                                r = -errno;
                } else if (S_ISREG(st.st_mode)) {
                        _cleanup_close_ int in = -EBADF, out = -EBADF;
                        in = openat(src_fd, de->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
                        out = openat(dst_fd, de->d_name,
                                     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                                     st.st_mode & 07777);
                        if (in < 0 || out < 0) {
                                r = -errno;
                                break;
                        }
                        r = copy_file_contents(in, out);
                        if (r >= 0 &&
                            (fchown(out, st.st_uid, st.st_gid) < 0 || fchmod(out, st.st_mode & 07777) < 0))
                                r = -errno;
                } else if (S_ISLNK(st.st_mode)) {
                        char target[PATH_MAX];
                        ssize_t n = readlinkat(src_fd, de->d_name, target, sizeof target - 1);
                        if (n < 0) {
                                r = -errno;
                                break;
                        }
                        target[n] = 0;
                        if (symlinkat(target, dst_fd, de->d_name) < 0 ||
                            fchownat(dst_fd, de->d_name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) < 0)
                                r = -errno;
                } else if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
                        if (mknodat(dst_fd, de->d_name, st.st_mode, st.st_rdev) < 0 ||
                            fchownat(dst_fd, de->d_name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) < 0)
                                r = -errno;
                }
                /* Sockets are not copied: they mean nothing without their listener. */
        }
        if (r >= 0 && errno != 0 && !de)
                r = -errno;
        closedir(d);
        return r;
}

int copy_tree(int src_fd, int dst_fd) {
        struct stat st;
        int r;

        r = copy_tree_at(src_fd, dst_fd, 0);
        if (r < 0)
                return r;
        if (fstat(src_fd, &st) < 0)
                return -errno;
        if (fchown(dst_fd, st.st_uid, st.st_gid) < 0 || fchmod(dst_fd, st.st_mode & 07777) < 0)
                return -errno;
        return 0;
}
