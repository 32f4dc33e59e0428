/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "devices.h"
#include "error-util.h"
#include "fileio.h"
#include "macro.h"
#include "mount-options.h"
#include "mount.h"
#include "rootfs.h"
#include "string-util.h"

#define CGROUP_ROOT "/sys/fs/cgroup"

static bool path_is_dev(const char *p) {
        /* "/dev", "//dev/", "dev" */
        p += strspn(p, "/");
        if (!strneq(p, "dev", 3))
                return false;
        p += 3;
        return p[strspn(p, "/")] == 0;
}

static bool selinux_enabled(void) {
        return access("/sys/fs/selinux/enforce", F_OK) >= 0;
}

/* Everything a single mounts[] entry needs while it is being applied. */
typedef struct MountCtx {
        const RootfsContext *rc;
        int root_fd;
        size_t index;
        const OciMount *m;
        MountSpec spec;
} MountCtx;

static int mount_fail(const MountCtx *c, char **reterr, int r, const char *step) {
        const char *type = c->m->type ?: "none";

        if (step)
                return errwrap_first(reterr, r, "mounts[%zu]: mount \"%s\" on \"%s\" (type %s): %s",
                                     c->index, strna(c->m->source), c->m->destination, type, step);
        return errwrap_first(reterr, r, "mounts[%zu]: mount \"%s\" on \"%s\" (type %s)", c->index,
                             strna(c->m->source), c->m->destination, type);
}

/* Attach a clone of the mount tree at src_fd onto target_fd with the mount's flags. Per-mount flags
 * (ro, nosuid, ...) apply to the top mount only, as mount(8) does for "rbind,ro"; the r-options
 * ("rro", ...) to the whole tree. Privileged, runs in the container's namespaces. */
static int bind_tree(int src_fd, bool src_is_clone, int target_fd, bool recursive, unsigned long flags,
                     unsigned long clear, uint64_t rec_set, uint64_t rec_clr, unsigned long propagation,
                     const char **ret_step) {
        _cleanup_close_ int tree_fd = -EBADF;
        uint64_t set, clr;
        int r;

        *ret_step = "clone source";
        /* src_is_clone: src_fd already is a detached clone (made on the host side), attached as it is. */
        tree_fd = src_is_clone ? RET_NERRNO(fcntl(src_fd, F_DUPFD_CLOEXEC, 3))
                               : clone_tree_fd(src_fd, recursive);
        if (tree_fd < 0)
                return tree_fd;

        mount_flags_to_attr(flags, clear, &set, &clr);
        *ret_step = "set mount attributes";
        r = mount_setattr_fd(tree_fd, false, set, clr, 0);
        if (r < 0)
                return r;
        *ret_step = "set recursive mount attributes";
        r = mount_setattr_fd(tree_fd, true, rec_set, rec_clr, 0);
        if (r < 0)
                return r;
        *ret_step = "attach";
        r = move_mount_to_fd(tree_fd, target_fd);
        if (r < 0)
                return r;
        if (propagation != 0) {
                *ret_step = "set propagation";
                r = mount_setattr_fd(tree_fd, propagation & MS_REC, 0, 0,
                                     propagation & ~(unsigned long) MS_REC);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* linux.rootfsPropagation as MS_SHARED, MS_SLAVE, MS_PRIVATE or MS_UNBINDABLE (the r-forms alike); 0 when
 * absent or unknown. */
static unsigned long root_propagation(const RootfsContext *rc) {
        const MountOption *o;

        if (isempty(rc->config->linux_.rootfs_propagation))
                return 0;
        o = mount_option_lookup(rc->config->linux_.rootfs_propagation);
        if (!o || o->kind != MOUNT_OPTION_PROPAGATION)
                return 0;
        return o->flags & ~(unsigned long) MS_REC;
}

static int open_source(const RootfsContext *rc, const char *source) {
        _cleanup_close_ int bundle_fd = -EBADF;

        if (source[0] == '/' || !rc->bundle)
                return RET_NERRNO(open(source, O_PATH | O_CLOEXEC));
        bundle_fd = RET_NERRNO(open(rc->bundle, O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (bundle_fd < 0)
                return bundle_fd;
        return RET_NERRNO(openat(bundle_fd, source, O_PATH | O_CLOEXEC));
}

int rootfs_open_bind_sources(const OciConfig *config, const char *bundle, bool all,
                             const int *idmap_userns_fds, int **ret_fds, char **reterr) {
        /* Privileged, runs in the runtime, on the host side, before the init enters its user namespace. */
        const RootfsContext rc = { .config = config, .bundle = bundle };
        _cleanup_free_ int *fds = NULL;
        int r = 0;

        assert(config);
        assert(ret_fds);

        fds = malloc(MAX(config->n_mounts, (size_t) 1) * sizeof(int));
        if (!fds)
                return -ENOMEM;
        for (size_t i = 0; i < config->n_mounts; i++)
                fds[i] = -EBADF;

        for (size_t i = 0; i < config->n_mounts && r >= 0; i++) {
                MountCtx c = { .rc = &rc, .index = i, .m = &config->mounts[i] };
                _cleanup_close_ int src_fd = -EBADF;

                if (mount_spec_parse(c.m->options, &c.spec) < 0)
                        continue; /* refused with its message by the init */
                bool idmap = c.spec.idmap && idmap_userns_fds && idmap_userns_fds[i] >= 0;
                /* A source that does not exist is an error here, with the host's view of why. One we may not
                 * open or clone (an unprivileged runtime may not clone mount trees: EPERM) is left to the
                 * init, which opens it itself as before and reports its own error; not an id-mapped one,
                 * which only this side can make. */
                if ((streq_ptr(c.m->type, "bind") || (c.spec.flags & MS_BIND)) && c.m->source &&
                    (all || idmap)) {
                        src_fd = open_source(&rc, c.m->source);
                        if (src_fd < 0 && (idmap || (src_fd != -EACCES && src_fd != -EPERM)))
                                r = mount_fail(&c, reterr, src_fd, "source");
                        else if (src_fd >= 0 &&
                                 (fds[i] = clone_tree_fd(src_fd, c.spec.flags & MS_REC)) < 0) {
                                if (idmap)
                                        r = mount_fail(&c, reterr, fds[i], "clone source");
                                fds[i] = -EBADF;
                        }
                        /* A clone made here is a peer of the source's shared mounts on the host: a mount
                         * made in the container under it would reach the host. The container's own mounts
                         * never are such peers in a user namespace (the kernel copies shared mounts into its
                         * mount namespace as slaves), nor without one unless rootfsPropagation is shared:
                         * the clone gets the propagation the init gives the rest of the tree
                         * (rootfs_prepare()), rprivate for "[r]private", else rslave. */
                        if (r >= 0 && fds[i] >= 0 && (all || root_propagation(&rc) != MS_SHARED)) {
                                r = mount_setattr_fd(fds[i], true, 0, 0,
                                                     root_propagation(&rc) == MS_PRIVATE ? MS_PRIVATE
                                                                                         : MS_SLAVE);
                                if (r < 0)
                                        r = mount_fail(&c, reterr, r, "set propagation of the clone");
                        }
                        if (r >= 0 && idmap) {
                                r = mount_setattr_idmap(fds[i], c.spec.idmap_recursive, idmap_userns_fds[i]);
                                if (r < 0)
                                        r = mount_fail(
                                                &c, reterr, r,
                                                r == -EINVAL  ? "id-map it (its filesystem does not support "
                                                                "id-mapped mounts)"
                                                : r == -EPERM ? "id-map it (needs CAP_SYS_ADMIN on the host)"
                                                              : "id-map it");
                        }
                }
                mount_spec_done(&c.spec);
        }
        if (r < 0) {
                rootfs_close_bind_sources(fds, config->n_mounts);
                fds = NULL;
                return r;
        }
        *ret_fds = TAKE_PTR(fds);
        return 0;
}

void rootfs_close_bind_sources(int *fds, size_t n) {
        if (!fds)
                return;
        for (size_t i = 0; i < n; i++)
                safe_close(fds[i]);
        free(fds);
}

/* Privileged, runs in the container's namespaces (before pivot_root). */
static int mount_bind(MountCtx *c, const char *source, char **reterr) {
        _cleanup_close_ int src_fd = -EBADF, target_fd = -EBADF;
        const char *step;
        struct stat st;
        bool cloned = false;
        int r;

        if (!source)
                return mount_fail(c, reterr, -EINVAL, "bind mount without a source");
        if (c->spec.idmap) {
                /* Id-mapped by the runtime (rootfs_open_bind_sources()): that clone, never the source. */
                if (!c->rc->bind_source_fds || c->rc->bind_source_fds[c->index] < 0)
                        return mount_fail(c, reterr, -EOPNOTSUPP, "the runtime prepared no id-mapped tree");
                src_fd = RET_NERRNO(fcntl(c->rc->bind_source_fds[c->index], F_DUPFD_CLOEXEC, 3));
                cloned = true;
        } else
                src_fd = open_source(c->rc, source);
        if ((src_fd == -EACCES || src_fd == -EPERM) && !cloned && c->rc->bind_source_fds &&
            c->rc->bind_source_fds[c->index] >= 0) {
                /* Not reachable by the user namespace's root (a source only the host's root may
                 * traverse): the clone of its tree the runtime made on the host side, as runc and crun do. */
                src_fd = RET_NERRNO(fcntl(c->rc->bind_source_fds[c->index], F_DUPFD_CLOEXEC, 3));
                cloned = true;
        }
        if (src_fd < 0)
                return mount_fail(c, reterr, src_fd, "source");
        if (fstat(src_fd, &st) < 0)
                return mount_fail(c, reterr, negative_errno(), "source");

        r = mkdir_p_in_root(c->root_fd, c->m->destination, 0755, !S_ISDIR(st.st_mode), &target_fd);
        if (r < 0)
                return mount_fail(c, reterr, r, "create destination");

        r = bind_tree(src_fd, cloned, target_fd, c->spec.flags & MS_REC, c->spec.flags, c->spec.clear,
                      c->spec.rec_attr_set, c->spec.rec_attr_clr, c->spec.propagation, &step);
        if (r < 0)
                return mount_fail(c, reterr, r, step);
        return 0;
}

/* After a mount(2) on a path: the recursive attributes and the propagation, on the new mount. */
static int mount_apply_after(MountCtx *c, char **reterr) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (c->spec.rec_attr_set == 0 && c->spec.rec_attr_clr == 0 && c->spec.propagation == 0)
                return 0;
        fd = open_in_root(c->root_fd, c->m->destination, O_PATH);
        if (fd < 0)
                return mount_fail(c, reterr, fd, "reopen destination");
        r = mount_setattr_fd(fd, true, c->spec.rec_attr_set, c->spec.rec_attr_clr, 0);
        if (r < 0)
                return mount_fail(c, reterr, r, "set recursive mount attributes");
        r = mount_setattr_fd(fd, c->spec.propagation & MS_REC, 0, 0,
                             c->spec.propagation & ~(unsigned long) MS_REC);
        if (r < 0)
                return mount_fail(c, reterr, r, "set propagation");
        return 0;
}

static int build_data(const RootfsContext *rc, const char *data, char **ret) {
        const char *label = rc->config->linux_.mount_label;

        if (isempty(label) || !selinux_enabled()) {
                *ret = NULL;
                return 0;
        }
        if (asprintf(ret, "%s%scontext=\"%s\"", strempty(data), isempty(data) ? "" : ",", label) < 0)
                return -ENOMEM;
        return 0;
}

/* proc and sysfs must land on a real directory of the rootfs, never through a symlink (a bundle with
 * "proc -> /" would otherwise get procfs over its own root). */
static int check_not_symlink(MountCtx *c, char **reterr) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        fd = open_in_root(c->root_fd, c->m->destination, O_PATH | O_NOFOLLOW);
        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return mount_fail(c, reterr, fd, "open destination");
        if (fstat(fd, &st) < 0)
                return mount_fail(c, reterr, negative_errno(), "open destination");
        if (S_ISLNK(st.st_mode))
                return mount_fail(c, reterr, -ELOOP,
                                  "destination is a symlink, it must be mounted on ordinary directory");
        return 0;
}

/* A tmpfs over a directory the rootfs already has takes that directory's mode (an image's /tmp keeps its
 * 1777, a setgid directory its setgid bit), as with runc; a mode= in the options still wins, being later.
 * Where the destination is created for the mount, the tmpfs keeps its own default. */
static int tmpfs_data_with_mode(MountCtx *c, char **ret) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        *ret = NULL;
        fd = open_in_root(c->root_fd, c->m->destination, O_PATH | O_DIRECTORY);
        if (fd == -ENOENT || fd == -ENOTDIR)
                return 0;
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (asprintf(ret, "mode=%04o%s%s", (unsigned) (st.st_mode & 07777), isempty(c->spec.data) ? "" : ",",
                     strempty(c->spec.data)) < 0)
                return -ENOMEM;
        return 0;
}

/* mount(2) of a filesystem. Privileged, runs in the container's namespaces (before pivot_root). */
static int mount_fs(MountCtx *c, const char *fstype, const char *source, char **reterr) {
        _cleanup_close_ int target_fd = -EBADF;
        _cleanup_free_ char *labelled = NULL, *with_mode = NULL;
        int r;

        if (streq(fstype, "tmpfs")) {
                r = tmpfs_data_with_mode(c, &with_mode);
                if (r < 0)
                        return mount_fail(c, reterr, r, "read the destination's mode");
        }

        r = mkdir_p_in_root(c->root_fd, c->m->destination, 0755, false, &target_fd);
        if (r < 0)
                return mount_fail(c, reterr, r, "create destination");

        r = build_data(c->rc, with_mode ?: c->spec.data, &labelled);
        if (r < 0)
                return mount_fail(c, reterr, r, NULL);

        r = mount_on_fd(source ?: fstype, target_fd, fstype, c->spec.flags,
                        labelled ?: with_mode ?: c->spec.data);
        if (r < 0)
                return mount_fail(c, reterr, r, NULL);
        return mount_apply_after(c, reterr);
}

/* A mountinfo field with its \ooo escapes (space, tab, newline, backslash) decoded, in place. */
static void mountinfo_unescape(char *s) {
        char *w = s;

        for (char *r = s; *r;) {
                if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
                    r[3] >= '0' && r[3] <= '7') {
                        *w++ = (char) (((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
                        r += 4;
                } else
                        *w++ = *r++;
        }
        *w = 0;
}

typedef struct MountinfoEntry {
        char *mount_point; /* escapes decoded */
        char *fstype;
        char *super_options;
} MountinfoEntry;

/* One line of /proc/self/mountinfo ("id parent maj:min root mount-point options... - fstype source
 * super-options"), cut up in place; false for a line that is not one. */
static bool mountinfo_parse_line(char *line, MountinfoEntry *ret) {
        char *sep = strstr(line, " - "), *mp = line, *save = NULL;

        if (!sep)
                return false;
        *sep = 0;
        for (int k = 0; k < 4 && mp; k++) {
                mp = strchr(mp, ' ');
                if (mp)
                        mp++;
        }
        if (!mp)
                return false;
        mp[strcspn(mp, " ")] = 0;
        mountinfo_unescape(mp);
        ret->mount_point = mp;
        ret->fstype = strtok_r(sep + 3, " ", &save);
        (void) strtok_r(NULL, " ", &save); /* source */
        ret->super_options = strtok_r(NULL, " ", &save);
        return ret->fstype && ret->super_options;
}

/* The type of the filesystem of the mount at fd ("ext4", "overlay"), from mountinfo by its mount id, for a
 * message; NULL when unknown. */
static char *mount_fstype(int fd) {
        _cleanup_free_ char *mi = NULL;
        struct statx sx;
        char *save = NULL;

        if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &sx) < 0 ||
            !(sx.stx_mask & STATX_MNT_ID) ||
            read_full_file_at(AT_FDCWD, "/proc/self/mountinfo", 16U << 20, &mi, NULL) < 0)
                return NULL;
        for (char *line = strtok_r(mi, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                MountinfoEntry e;
                if (strtoull(line, NULL, 10) == sx.stx_mnt_id && mountinfo_parse_line(line, &e))
                        return strdup(e.fstype);
        }
        return NULL;
}

int rootfs_open_idmapped_root(const OciConfig *config, const char *rootfs, int userns_fd, int *ret_fd,
                              char **reterr) {
        /* Privileged, runs in the runtime, on the host side. */
        const RootfsContext rc = { .config = config };
        _cleanup_close_ int src_fd = -EBADF, tree_fd = -EBADF;
        int r;

        assert(config);
        assert(rootfs);
        assert(ret_fd);

        src_fd = RET_NERRNO(open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (src_fd < 0)
                return errorf(reterr, src_fd, "root.path \"%s\": %s", rootfs, strerror(-src_fd));
        tree_fd = clone_tree_fd(src_fd, true);
        if (tree_fd < 0)
                return errorf(reterr, tree_fd, "root.path \"%s\": clone its mount tree: %s", rootfs,
                              strerror(-tree_fd));
        /* As the bind sources of a container with a user namespace: never a peer of the host's mounts. */
        r = mount_setattr_fd(tree_fd, true, 0, 0,
                             root_propagation(&rc) == MS_PRIVATE ? MS_PRIVATE : MS_SLAVE);
        if (r < 0)
                return errorf(reterr, r, "root.path \"%s\": set the propagation of its clone: %s", rootfs,
                              strerror(-r));
        r = mount_setattr_idmap(tree_fd, true, userns_fd);
        if (r < 0) {
                _cleanup_free_ char *fstype = mount_fstype(src_fd);
                if (r == -EINVAL)
                        return errorf(
                                reterr, r,
                                "root.path \"%s\": cannot id-map it: its filesystem (%s), or that of a "
                                "mount below it, does not support id-mapped mounts",
                                rootfs, fstype ?: "of unknown type");
                return errorf(reterr, r, "root.path \"%s\" (filesystem %s): cannot id-map it: %s", rootfs,
                              fstype ?: "of unknown type", strerror(-r));
        }
        *ret_fd = TAKE_FD(tree_fd);
        return 0;
}

/* ---- cgroup ------------------------------------------------------------------------------------ */

typedef struct CgroupHierarchy {
        char *mount_point; /* host: /sys/fs/cgroup/cpu */
        char *controllers; /* "cpu", "cpu,cpuacct", "name=systemd" */
} CgroupHierarchy;

static void hierarchies_free(CgroupHierarchy *h, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(h[i].mount_point);
                free(h[i].controllers);
        }
        free(h);
}

/* The v1 hierarchies mounted directly under /sys/fs/cgroup, from one read of /proc/self/mountinfo. Not the
 * hybrid layout's cgroup2 one (/sys/fs/cgroup/unified), which a container does not get, as with runc and
 * crun: a systemd inside would take the layout for hybrid and look there for its own cgroup (the path in
 * /proc/self/cgroup, which without a cgroup namespace is the host's and not below the bound directory) and
 * fail to boot. It runs on name=systemd, as on a v1 host. */
static int read_cgroup_hierarchies(CgroupHierarchy **ret, size_t *ret_n) {
        _cleanup_free_ char *mi = NULL;
        CgroupHierarchy *h = NULL;
        size_t n = 0;
        char *save = NULL;
        int r;

        r = read_full_file_at(AT_FDCWD, "/proc/self/mountinfo", 16 * 1024 * 1024, &mi, NULL);
        if (r < 0)
                return r;

        for (char *line = strtok_r(mi, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                MountinfoEntry e;

                if (!mountinfo_parse_line(line, &e) || !streq(e.fstype, "cgroup"))
                        continue;
                const char *mp = e.mount_point;
                char *superopts = e.super_options;
                if (!strneq(mp, CGROUP_ROOT "/", STRLEN(CGROUP_ROOT "/")) ||
                    strchr(mp + STRLEN(CGROUP_ROOT "/"), '/'))
                        continue;

                /* controllers: the super options minus rw/ro and the generic ones */
                _cleanup_free_ char *ctl = strdup("");
                if (!ctl)
                        goto oom;
                for (char *s4 = NULL, *o = strtok_r(superopts, ",", &s4); o; o = strtok_r(NULL, ",", &s4)) {
                        if (streq(o, "rw") || streq(o, "ro") || strneq(o, "release_agent=", 14) ||
                            streq(o, "clone_children") || streq(o, "noprefix") || streq(o, "xattr") ||
                            streq(o, "cpuset_v2_mode") || streq(o, "favordynmods"))
                                continue;
                        size_t a = strlen(ctl);
                        char *nn = realloc(ctl, a + 1 + strlen(o) + 1);
                        if (!nn)
                                goto oom;
                        ctl = nn;
                        sprintf(ctl + a, "%s%s", a ? "," : "", o);
                }

                CgroupHierarchy *nh = reallocarray(h, n + 1, sizeof(*h));
                if (!nh)
                        goto oom;
                h = nh;
                h[n] = (CgroupHierarchy){ .mount_point = strdup(mp), .controllers = TAKE_PTR(ctl) };
                n++;
                if (!h[n - 1].mount_point)
                        goto oom;
        }

        *ret = h;
        *ret_n = n;
        return 0;
oom:
        hierarchies_free(h, n);
        return -ENOMEM;
}

/* This process's cgroup path in the hierarchy with the given controllers ("" = the unified one). */
static int own_cgroup_path(const char *proc_cgroup, const char *controllers, char **ret) {
        for (const char *l = proc_cgroup; l && *l;) {
                const char *eol = strchrnul(l, '\n'), *c1 = memchr(l, ':', (size_t) (eol - l)), *c2;

                if (c1 && (c2 = memchr(c1 + 1, ':', (size_t) (eol - c1 - 1)))) {
                        size_t cl = (size_t) (c2 - c1 - 1);
                        if (cl == strlen(controllers) && strneq(c1 + 1, controllers, cl)) {
                                *ret = strndup(c2 + 1, (size_t) (eol - c2 - 1));
                                return *ret ? 0 : -ENOMEM;
                        }
                }
                l = *eol ? eol + 1 : eol;
        }
        return -ENOENT;
}

/* An fd opened in the runtime's mount namespace cannot be the source of open_tree() in ours: open the same
 * path here (ours is a copy, before pivot_root) and check that it is the same directory. */
static int reopen_in_own_mount_ns(int fd) {
        char proc[64], path[PATH_MAX];
        struct stat a, b;
        ssize_t n;
        int nfd;

        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
        n = readlink(proc, path, sizeof path - 1);
        if (n < 0)
                return -errno;
        path[n] = 0;
        nfd = RET_NERRNO(open(path, O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (nfd < 0)
                return nfd;
        if (fstat(fd, &a) < 0 || fstat(nfd, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
                safe_close(nfd);
                return -ESTALE;
        }
        return nfd;
}

/* cgroup v2 (the unified layout): with a cgroup namespace a fresh cgroup2 filesystem (its root is the
 * namespace's root), else (or rootless, where the superblock cannot be mounted again) a bind of the init's own
 * cgroup directory. */
static int mount_cgroup_unified(MountCtx *c, const char *proc_cgroup, int target_fd, char **reterr) {
        _cleanup_free_ char *own = NULL, *src = NULL;
        _cleanup_close_ int src_fd = -EBADF;
        const char *step = NULL;
        int r;

        if (c->rc->own_cgroupns) {
                /* the source as config.json names it ("cgroup" from Podman), as runc mounts it */
                r = mount_on_fd(isempty(c->m->source) ? "cgroup2" : c->m->source, target_fd, "cgroup2",
                                c->spec.flags, c->spec.data);
                if (r >= 0)
                        return mount_apply_after(c, reterr);
                /* In a user namespace (rootless) the host's cgroup2 superblock cannot be mounted again
                 * (EBUSY): bind the init's own cgroup instead, the root of its namespace. */
                if ((r != -EBUSY && r != -EPERM) || c->rc->own_cgroup_fd <= 0)
                        return mount_fail(c, reterr, r, NULL);
                src_fd = reopen_in_own_mount_ns(c->rc->own_cgroup_fd);
                if (src_fd < 0)
                        return mount_fail(c, reterr, src_fd, "find the container's own cgroup");
                r = bind_tree(src_fd, false, target_fd, true, c->spec.flags, c->spec.clear,
                              c->spec.rec_attr_set, c->spec.rec_attr_clr, c->spec.propagation, &step);
                if (r < 0)
                        return mount_fail(c, reterr, r, step ?: "bind the container's own cgroup");
                return 0;
        }
        r = own_cgroup_path(proc_cgroup, "", &own);
        if (r < 0)
                return mount_fail(c, reterr, r, "find own cgroup");
        if (asprintf(&src, CGROUP_ROOT "%s", own) < 0)
                return mount_fail(c, reterr, -ENOMEM, NULL);
        src_fd = RET_NERRNO(open(src, O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (src_fd < 0)
                return mount_fail(c, reterr, src_fd, src);
        r = bind_tree(src_fd, false, target_fd, true, c->spec.flags, c->spec.clear, c->spec.rec_attr_set,
                      c->spec.rec_attr_clr, c->spec.propagation, &step);
        if (r < 0)
                return mount_fail(c, reterr, r, step);
        return 0;
}

/* One v1 hierarchy H below the tmpfs at the destination: a fresh mount of it with a cgroup namespace, else a
 * bind of the init's own cgroup in it; co-mounted controllers ("cpu,cpuacct") get a link per controller. */
static int mount_cgroup_v1_one(MountCtx *c, const CgroupHierarchy *h, const char *proc_cgroup,
                               char **reterr) {
        _cleanup_free_ char *sub = NULL, *own = NULL, *src = NULL, *copy = NULL;
        _cleanup_close_ int sub_fd = -EBADF, src_fd = -EBADF, dir_fd = -EBADF;
        const char *base = h->mount_point + STRLEN(CGROUP_ROOT "/"), *step = NULL;
        char *s = NULL;
        int r;

        if (asprintf(&sub, "%s/%s", c->m->destination, base) < 0)
                return mount_fail(c, reterr, -ENOMEM, NULL);
        r = mkdir_p_in_root(c->root_fd, sub, 0755, false, &sub_fd);
        if (r < 0)
                return mount_fail(c, reterr, r, base);

        if (c->rc->own_cgroupns) {
                r = mount_on_fd("cgroup", sub_fd, "cgroup", c->spec.flags,
                                isempty(h->controllers) ? NULL : h->controllers);
                if (r < 0)
                        return mount_fail(c, reterr, r, base);
        } else {
                r = own_cgroup_path(proc_cgroup, h->controllers, &own);
                if (r >= 0 && asprintf(&src, "%s%s", h->mount_point, own) < 0)
                        r = -ENOMEM;
                if (r >= 0)
                        r = src_fd = RET_NERRNO(open(src, O_PATH | O_DIRECTORY | O_CLOEXEC));
                if (r >= 0)
                        r = bind_tree(src_fd, false, sub_fd, false, c->spec.flags, c->spec.clear, 0, 0, 0,
                                      &step);
                if (r < 0)
                        return mount_fail(c, reterr, r, base);
        }

        if (!strchr(base, ','))
                return 0;
        dir_fd = open_in_root(c->root_fd, c->m->destination, O_PATH | O_DIRECTORY);
        copy = strdup(base);
        if (dir_fd < 0 || !copy)
                return mount_fail(c, reterr, dir_fd < 0 ? dir_fd : -ENOMEM, base);
        for (char *o = strtok_r(copy, ",", &s); o; o = strtok_r(NULL, ",", &s))
                if (symlinkat(base, dir_fd, o) < 0 && errno != EEXIST)
                        return mount_fail(c, reterr, negative_errno(), o);
        return 0;
}

/* hybrid or v1: a tmpfs at the destination with one directory per v1 hierarchy, read-only at the end if
 * config.json asks for it. */
static int mount_cgroup_v1(MountCtx *c, const char *proc_cgroup, int target_fd, char **reterr) {
        CgroupHierarchy *h = NULL;
        size_t n = 0;
        int r;

        r = mount_on_fd("tmpfs", target_fd, "tmpfs",
                        (c->spec.flags & ~(unsigned long) MS_RDONLY) | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                        "mode=755");
        if (r < 0)
                return mount_fail(c, reterr, r, "tmpfs");

        r = read_cgroup_hierarchies(&h, &n);
        if (r < 0)
                return mount_fail(c, reterr, r, "read /proc/self/mountinfo");
        for (size_t i = 0; i < n && r >= 0; i++)
                r = mount_cgroup_v1_one(c, &h[i], proc_cgroup, reterr);
        hierarchies_free(h, n);
        if (r < 0)
                return r;

        if (c->spec.flags & MS_RDONLY) {
                _cleanup_close_ int fd = open_in_root(c->root_fd, c->m->destination, O_PATH);
                if (fd < 0)
                        return mount_fail(c, reterr, fd, "reopen destination");
                r = mount_setattr_fd(fd, false, MOUNT_ATTR_RDONLY, 0, 0);
                if (r < 0)
                        return mount_fail(c, reterr, r, "remount read-only");
        }
        return mount_apply_after(c, reterr);
}

/* A cgroup mount: the container never sees the host's tree (a fresh cgroup filesystem with a cgroup
 * namespace, a bind of the init's own cgroup without one). Privileged, runs in the container's namespaces
 * (before pivot_root). */
static int mount_cgroup(MountCtx *c, char **reterr) {
        _cleanup_free_ char *proc_cgroup = NULL;
        _cleanup_close_ int target_fd = -EBADF;
        struct statfs sfs;
        int r;

        if (statfs(CGROUP_ROOT, &sfs) < 0)
                return mount_fail(c, reterr, negative_errno(), "statfs " CGROUP_ROOT);
        if (!c->rc->own_cgroupns) {
                r = read_full_file_at(AT_FDCWD, "/proc/self/cgroup", 1024 * 1024, &proc_cgroup, NULL);
                if (r < 0)
                        return mount_fail(c, reterr, r, "read /proc/self/cgroup");
        }
        r = mkdir_p_in_root(c->root_fd, c->m->destination, 0755, false, &target_fd);
        if (r < 0)
                return mount_fail(c, reterr, r, "create destination");
        if (sfs.f_type == CGROUP2_SUPER_MAGIC)
                return mount_cgroup_unified(c, proc_cgroup, target_fd, reterr);
        return mount_cgroup_v1(c, proc_cgroup, target_fd, reterr);
}

/* ---- the steps --------------------------------------------------------------------------------- */

static int mount_one(const RootfsContext *rc, int root_fd, size_t i, char **reterr) {
        /* Privileged, runs in the container's namespaces (before pivot_root). */
        MountCtx c = { .rc = rc, .root_fd = root_fd, .index = i, .m = &rc->config->mounts[i] };
        _cleanup_close_ int copy_from = -EBADF;
        const char *type = c.m->type;
        int r;

        if (isempty(c.m->destination))
                return errwrap_first(reterr, -EINVAL, "mounts[%zu]: no destination", i);

        r = mount_spec_parse(c.m->options, &c.spec);
        if (r < 0)
                return mount_fail(&c, reterr, r, NULL);
        /* A read-only /dev is mounted writable: the devices, the links, /dev/pts and the console go in
         * first, and rootfs_finish() makes it read-only (runc's issue 3248). */
        if (path_is_dev(c.m->destination) && !oci_mount_is_bind(c.m))
                c.spec.flags &= ~(unsigned long) MS_RDONLY;

        if ((c.spec.idmap || c.m->n_uid_mappings > 0 || c.m->n_gid_mappings > 0) &&
            !(streq_ptr(type, "bind") || (c.spec.flags & MS_BIND))) {
                r = mount_fail(&c, reterr, -EOPNOTSUPP,
                               "id-mapped mounts are supported for bind mounts only");
                goto finish;
        }

        /* tmpcopyup: remember what the rootfs has at the destination before the tmpfs covers it. */
        if (c.spec.tmpcopyup) {
                if (!streq_ptr(type, "tmpfs")) {
                        r = mount_fail(&c, reterr, -EINVAL, "tmpcopyup is only valid for tmpfs");
                        goto finish;
                }
                copy_from = open_in_root(root_fd, c.m->destination, O_RDONLY | O_DIRECTORY);
                if (copy_from < 0 && copy_from != -ENOENT) {
                        r = mount_fail(&c, reterr, copy_from, "tmpcopyup: open the destination");
                        goto finish;
                }
        }

        if (streq_ptr(type, "bind") || (c.spec.flags & MS_BIND))
                r = mount_bind(&c, c.m->source, reterr);
        else if (isempty(type))
                r = mount_fail(&c, reterr, -EINVAL, "no type and no bind option");
        else if (streq(type, "cgroup"))
                r = mount_cgroup(&c, reterr);
        else if (streq(type, "sysfs") || streq(type, "proc")) {
                r = check_not_symlink(&c, reterr);
                if (r >= 0) {
                        _cleanup_free_ char *fresh_err = NULL;
                        /* A fresh sysfs, as runc and crun mount, even in the host's network namespace
                         * (it shows that namespace's devices, as the host's /sys would). Where the
                         * container may not mount one there (a user namespace that does not own the
                         * network namespace: EPERM), the host's /sys is bound instead. */
                        r = mount_fs(&c, type, c.m->source, &fresh_err);
                        if (r < 0 && streq(type, "sysfs") && !rc->new_netns &&
                            (r == -EPERM || r == -EACCES)) {
                                /* ...read-only if asked: */
                                c.spec.flags |= MS_BIND | MS_REC;
                                /* ...and its submounts too (v1 cgroup hierarchies, debugfs, tracefs,
                                 * securityfs): ro, nosuid, nodev and noexec apply to the whole tree
                                 * (mount_setattr AT_RECURSIVE), not just its top. */
                                if (c.spec.flags & MS_RDONLY)
                                        c.spec.rec_attr_set |= MOUNT_ATTR_RDONLY;
                                if (c.spec.flags & MS_NOSUID)
                                        c.spec.rec_attr_set |= MOUNT_ATTR_NOSUID;
                                if (c.spec.flags & MS_NODEV)
                                        c.spec.rec_attr_set |= MOUNT_ATTR_NODEV;
                                if (c.spec.flags & MS_NOEXEC)
                                        c.spec.rec_attr_set |= MOUNT_ATTR_NOEXEC;
                                r = mount_bind(&c, "/sys", reterr);
                        } else if (r < 0 && reterr && !*reterr)
                                *reterr = TAKE_PTR(fresh_err);
                }
        } else
                r = mount_fs(&c, type, c.m->source, reterr);

        if (r >= 0 && copy_from >= 0) {
                _cleanup_close_ int target = open_in_root(root_fd, c.m->destination, O_RDONLY | O_DIRECTORY);
                r = target < 0 ? target : copy_tree(copy_from, target);
                if (r < 0)
                        r = mount_fail(&c, reterr, r, "tmpcopyup: copy the rootfs content into the tmpfs");
        }
finish:
        mount_spec_done(&c.spec);
        return r;
}

/* rootfsPropagation shared or rshared: the tree keeps the host's peer groups (as with runc and crun), so that
 * a mount bound from a shared host mount is a peer of it (Kubernetes' Bidirectional). */
static bool root_keeps_host_peers(const RootfsContext *ctx) {
        return root_propagation(ctx) == MS_SHARED;
}

/* Make the mount that holds the rootfs private, in the container's mount namespace only: the rootfs bound
 * onto itself there would otherwise appear on the host, its tree being shared with the host's (as runc).
 * The rootfs path is realpath'd: its nearest ancestor (itself included) that is a mount root is the mount
 * point of that mount. */
static int rootfs_parent_make_private(const char *rootfs, char **reterr) {
        _cleanup_free_ char *p = NULL;
        int r;

        p = strdup(rootfs);
        if (!p)
                return -ENOMEM;
        for (;;) {
                struct statx sx;
                char *slash;

                if (statx(AT_FDCWD, p, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, 0, &sx) < 0)
                        return errwrap_first(reterr, negative_errno(), "stat \"%s\"", p);
                if (!(sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
                        return errwrap_first(reterr, -EOPNOTSUPP,
                                             "find the mount of the rootfs: no STATX_ATTR_MOUNT_ROOT");
                if ((sx.stx_attributes & STATX_ATTR_MOUNT_ROOT) || streq(p, "/"))
                        break;
                slash = strrchr(p, '/');
                if (!slash)
                        return errwrap_first(reterr, -EINVAL, "rootfs \"%s\" is not absolute", rootfs);
                slash[slash == p] = 0; /* "/a" -> "/", "/a/b" -> "/a" */
        }
        r = RET_NERRNO(mount(NULL, p, NULL, MS_PRIVATE, NULL));
        if (r < 0)
                return errwrap_first(reterr, r, "make \"%s\", the mount that holds the rootfs, private", p);
        return 0;
}

/* In the runtime's mount namespace, the host's "/" as the root: nothing is mounted and /dev is left as it
 * is; only a missing process.cwd is created, as runc and crun do. */
static int prepare_in_host_root(const RootfsContext *ctx, char **reterr) {
        /* Privileged, runs in the container's namespaces but the runtime's mount namespace. */
        _cleanup_close_ int root_fd = -EBADF;
        const OciConfig *config = ctx->config;
        int r;

        /* create refused all else; a second look costs nothing where a mistake would mount on the host */
        if (!streq(ctx->rootfs, "/") || config->n_mounts > 0 || config->linux_.n_devices > 0)
                return errwrap_first(reterr, -EINVAL, "root.path \"%s\": mounts need a mount namespace",
                                     ctx->rootfs);
        if (!config->has_process || isempty(config->process.cwd))
                return 0;
        root_fd = RET_NERRNO(open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (root_fd < 0)
                return errwrap_first(reterr, root_fd, "open \"/\"");
        r = mkdir_p_in_root(root_fd, config->process.cwd, 0755, false, NULL);
        if (r < 0)
                return errwrap_first(reterr, r, "process.cwd: create \"%s\"", config->process.cwd);
        return 0;
}

int rootfs_prepare(const RootfsContext *ctx, char **reterr) {
        /* Privileged, runs in the container's namespaces: the init, in its new mount namespace. */
        _cleanup_close_ int root_fd = -EBADF;
        const OciConfig *config;
        unsigned long prop;
        bool setup_dev = true;
        int r;

        assert(ctx);
        assert(ctx->config);
        assert(ctx->rootfs);
        config = ctx->config;

        if (!ctx->own_mountns)
                return prepare_in_host_root(ctx, reterr);

        if (!isempty(config->linux_.rootfs_propagation) && root_propagation(ctx) == 0)
                return errwrap_first(reterr, -EINVAL, "linux.rootfsPropagation: unknown value \"%s\"",
                                     config->linux_.rootfs_propagation);

        /* Before anything is mounted, as runc: what the container mounts must not reach the host unless
         * shared propagation was asked for. rslave by default (host mounts still appear), rprivate when
         * asked; shared keeps the host's peer groups, and the mount that holds the rootfs is made private
         * so that only the container's own shared mounts are peers of the host's. shared and unbindable
         * are applied again to the new root after pivot_root, for its own mounts. */
        if (root_keeps_host_peers(ctx)) {
                r = RET_NERRNO(mount(NULL, "/", NULL, MS_SHARED | MS_REC, NULL));
                if (r < 0)
                        return errwrap_first(reterr, r, "make \"/\" rshared");
                r = rootfs_parent_make_private(ctx->rootfs, reterr);
                if (r < 0)
                        return r;
        } else {
                prop = root_propagation(ctx) == MS_PRIVATE ? MS_PRIVATE : MS_SLAVE;
                r = RET_NERRNO(mount(NULL, "/", NULL, prop | MS_REC, NULL));
                if (r < 0)
                        return errwrap_first(reterr, r, "make \"/\" %s",
                                             prop == MS_PRIVATE ? "rprivate" : "rslave");
        }

        if (ctx->root_tree_fd > 0) {
                /* The id-mapped clone the runtime made of it (and of its submounts), in its place. */
                _cleanup_close_ int target_fd =
                        RET_NERRNO(open(ctx->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC));
                r = target_fd < 0 ? target_fd : move_mount_to_fd(ctx->root_tree_fd, target_fd);
                if (r < 0)
                        return errwrap_first(reterr, r, "attach the id-mapped rootfs \"%s\"", ctx->rootfs);
        } else {
                r = RET_NERRNO(mount(ctx->rootfs, ctx->rootfs, NULL, MS_BIND | MS_REC, NULL));
                if (r < 0)
                        return errwrap_first(reterr, r, "bind-mount the rootfs \"%s\" onto itself",
                                             ctx->rootfs);
        }
        root_fd = RET_NERRNO(open(ctx->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (root_fd < 0)
                return errwrap_first(reterr, root_fd, "open rootfs \"%s\"", ctx->rootfs);

        for (size_t i = 0; i < config->n_mounts; i++) {
                r = mount_one(ctx, root_fd, i, reterr);
                if (r < 0)
                        return r;
                if (path_is_dev(config->mounts[i].destination) && oci_mount_is_bind(&config->mounts[i]))
                        setup_dev = false;
        }

        /* A process.cwd missing from the image is created (root-owned, 0755), as runc and crun do for
         * `docker run -w` and Kubernetes' workingDir; resolved inside the rootfs like the mount targets. */
        if (config->has_process && !isempty(config->process.cwd)) {
                r = mkdir_p_in_root(root_fd, config->process.cwd, 0755, false, NULL);
                if (r < 0)
                        return errwrap_first(reterr, r, "process.cwd: create \"%s\" in the rootfs",
                                             config->process.cwd);
        }

        /* As runc: the default devices, linux.devices and the /dev links, unless /dev is bind-mounted from
         * elsewhere (then it is what it is); without a /dev mount they go into the rootfs's own /dev. */
        if (setup_dev) {
                r = devices_create(root_fd, config, ctx->new_userns, reterr);
                if (r < 0)
                        return r;
                r = devices_create_links(root_fd, reterr);
                if (r < 0)
                        return r;
                /* No /dev/shm or /dev/pts unless a mount puts them there (runc and crun make neither):
                 * Podman's --ipc=none means a container without /dev/shm. */
                if (config->has_process && config->process.terminal) {
                        r = devices_create_console_placeholder(root_fd, reterr);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* --no-pivot leaves the host's mounts in the container's mount namespace, under its root: the kernel takes
 * a procfs or sysfs there, masked nowhere, as leave to mount a fresh unmasked one (in a new user namespace:
 * mount_too_revealing()), so "unshare -mrpf mount -t proc" inside would get the host's sysrq-trigger. Each
 * one outside the rootfs is detached, as runc does, or, where the kernel will not let go of it (locked in a
 * user namespace), covered with an empty read-only tmpfs. The deepest first: mountinfo lists parents
 * first. Privileged, in the container's mount namespace (rslave: nothing of this reaches the host). */
static int no_pivot_hide_proc_sys(const char *rootfs, char **reterr) {
        _cleanup_free_ char *mi = NULL, *root = NULL;
        _cleanup_free_ char **points = NULL;
        size_t n = 0;
        char *save = NULL;
        int r;

        root = realpath(rootfs, NULL);
        if (!root)
                return errwrap_first(reterr, negative_errno(), "--no-pivot: resolve rootfs \"%s\"", rootfs);
        r = read_full_file_at(AT_FDCWD, "/proc/self/mountinfo", 16 * 1024 * 1024, &mi, NULL);
        if (r < 0)
                return errwrap_first(reterr, r, "--no-pivot: read /proc/self/mountinfo");
        for (char *line = strtok_r(mi, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                MountinfoEntry e;

                if (!mountinfo_parse_line(line, &e) ||
                    (!streq(e.fstype, "proc") && !streq(e.fstype, "sysfs")) ||
                    path_is_at_or_below(e.mount_point, root))
                        continue;
                char **l = realloc(points, (n + 1) * sizeof(char *));
                if (!l)
                        return -ENOMEM;
                points = l;
                points[n++] = e.mount_point;
        }
        for (size_t i = n; i-- > 0;) {
                _cleanup_close_ int tree = -EBADF, target = -EBADF;
                struct statfs sf;

                if (umount2(points[i], MNT_DETACH) >= 0)
                        continue;
                /* Gone with a parent detached before it (the path now shows what was below), or locked. */
                if (statfs(points[i], &sf) < 0 ||
                    (sf.f_type != PROC_SUPER_MAGIC && sf.f_type != SYSFS_MAGIC))
                        continue;
                target = RET_NERRNO(open(points[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
                tree = target < 0 ? target : make_tmpfs_tree(true, NULL);
                r = tree < 0 ? tree : move_mount_to_fd(tree, target);
                if (r < 0)
                        return errwrap_first(reterr, r, "--no-pivot: hide the host's \"%s\"", points[i]);
        }
        return 0;
}

/* --no-pivot with rootfsPropagation shared: an unbindable mount at or below the rootfs would be left out of
 * the clone of its tree that enter_root() makes the root. */
static int no_pivot_refuse_unbindable(const char *rootfs, char **reterr) {
        _cleanup_free_ char *mi = NULL;
        char *save = NULL;
        int r;

        r = read_full_file_at(AT_FDCWD, "/proc/self/mountinfo", 16 * 1024 * 1024, &mi, NULL);
        if (r < 0)
                return errwrap_first(reterr, r, "--no-pivot: read /proc/self/mountinfo");
        for (char *line = strtok_r(mi, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *sep = strstr(line, " - "), *u = strstr(line, " unbindable");
                MountinfoEntry e;

                /* the optional fields are before " - " */
                if (!u || !sep || u > sep || (u[11] != ' ' && u + 11 != sep))
                        continue;
                if (mountinfo_parse_line(line, &e) && path_is_at_or_below(e.mount_point, rootfs))
                        return errwrap_first(reterr, -EINVAL,
                                             "--no-pivot: \"%s\" is unbindable, which rootfsPropagation "
                                             "shared cannot keep there",
                                             e.mount_point);
        }
        return 0;
}

static int enter_root(const RootfsContext *ctx, char **reterr) {
        /* Privileged, runs in the container's namespaces. */
        _cleanup_close_ int root_fd = -EBADF, old_root_fd = -EBADF;
        int r;

        root_fd = RET_NERRNO(open(ctx->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (root_fd < 0)
                return errwrap_first(reterr, root_fd, "open rootfs \"%s\"", ctx->rootfs);
        r = RET_NERRNO(fchdir(root_fd));
        if (r < 0)
                return errwrap_first(reterr, r, "chdir to rootfs \"%s\"", ctx->rootfs);

        if (ctx->no_pivot) {
                _cleanup_close_ int tree = -EBADF;

                if (root_keeps_host_peers(ctx)) {
                        /* The host's tree, here under the container's root, kept the host's peer groups:
                         * its procfs and sysfs detached and the rootfs moved onto "/" would reach the
                         * host. So it is made rslave first, and what becomes the root is a clone of the
                         * rootfs's tree taken before, which keeps the container's own peers of the host's
                         * mounts. (A clone leaves unbindable mounts out: refused.) */
                        r = no_pivot_refuse_unbindable(ctx->rootfs, reterr);
                        if (r < 0)
                                return r;
                        tree = clone_tree_fd(root_fd, true);
                        if (tree < 0)
                                return errwrap_first(reterr, tree, "--no-pivot: clone the rootfs's tree");
                        r = RET_NERRNO(mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL));
                        if (r < 0)
                                return errwrap_first(reterr, r, "--no-pivot: make \"/\" rslave");
                }
                r = no_pivot_hide_proc_sys(ctx->rootfs, reterr);
                if (r < 0)
                        return r;
                if (tree >= 0) {
                        _cleanup_close_ int slash = RET_NERRNO(open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));

                        r = slash < 0 ? slash : move_mount_to_fd(tree, slash);
                        if (r >= 0)
                                r = RET_NERRNO(fchdir(tree));
                } else
                        r = RET_NERRNO(mount(".", "/", NULL, MS_MOVE, NULL));
                if (r < 0)
                        return errwrap_first(reterr, r, "move rootfs \"%s\" to \"/\"", ctx->rootfs);
                r = RET_NERRNO(chroot("."));
                if (r < 0)
                        return errwrap_first(reterr, r, "chroot into \"%s\"", ctx->rootfs);
        } else {
                old_root_fd = RET_NERRNO(open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
                if (old_root_fd < 0)
                        return errwrap_first(reterr, old_root_fd, "open the old root");
                /* New root and put_old are the same directory: afterwards the old root is stacked on
                 * top of "." and detached at once. Its unmount must not propagate to the host, whose
                 * peer groups the tree keeps with rootfsPropagation shared: the old root's tree (and
                 * only it: not the new root's, where the container's shared mounts are) is made rslave
                 * first, through the fd (a propagation change on "." would hit the new root). */
                r = RET_NERRNO((int) syscall(SYS_pivot_root, ".", "."));
                if (r < 0)
                        return errwrap_first(reterr, r, "pivot_root into \"%s\"", ctx->rootfs);
                r = mount_setattr_fd(old_root_fd, true, 0, 0, MS_SLAVE);
                if (r < 0)
                        return errwrap_first(reterr, r, "make the old root rslave");
                r = RET_NERRNO(umount2(".", MNT_DETACH));
                if (r < 0)
                        return errwrap_first(reterr, r, "detach the old root");
        }
        /* The cwd must be inside the container's root, never a host directory. */
        r = RET_NERRNO(chdir("/"));
        if (r < 0)
                return errwrap_first(reterr, r, "chdir to \"/\"");
        return 0;
}

/* The last /dev mount that is not a bind, if its options say "ro" (mount_one() mounted it writable). */
static int finish_readonly_dev(const RootfsContext *ctx, int root_fd, char **reterr) {
        const OciConfig *config = ctx->config;
        _cleanup_close_ int fd = -EBADF;
        size_t i = config->n_mounts;
        MountSpec spec = {};
        bool ro;
        int r;

        while (i > 0 && !path_is_dev(config->mounts[i - 1].destination))
                i--;
        if (i == 0 || oci_mount_is_bind(&config->mounts[i - 1]))
                return 0;
        r = mount_spec_parse(config->mounts[i - 1].options, &spec);
        ro = r >= 0 && (spec.flags & MS_RDONLY);
        mount_spec_done(&spec);
        if (r < 0 || !ro)
                return 0;
        fd = open_in_root(root_fd, "/dev", O_PATH | O_DIRECTORY);
        r = fd < 0 ? fd : mount_setattr_fd(fd, false, MOUNT_ATTR_RDONLY, 0, 0);
        if (r < 0)
                return errwrap_first(reterr, r, "mounts[%zu]: remount \"/dev\" read-only", i - 1);
        return 0;
}

int rootfs_finish(const RootfsContext *ctx, char **reterr) {
        /* Privileged, runs in the container's namespaces: the init, after the createContainer hooks. */
        _cleanup_close_ int devnull_tree = -EBADF, last_devnull = -EBADF, last_dirmask = -EBADF,
                            root_fd = -EBADF;
        const OciLinux *l;
        unsigned long prop;
        int r;

        assert(ctx);
        assert(ctx->config);
        l = &ctx->config->linux_;

        /* The runtime's mount namespace: the root is already "/"; the cwd must be inside it, not the
         * runtime's. */
        if (!ctx->own_mountns) {
                r = RET_NERRNO(chdir("/"));
                return r < 0 ? errwrap_first(reterr, r, "chdir to \"/\"") : 0;
        }

        /* The host's /dev/null, for masking files: cloned while the host's tree is still reachable. */
        if (l->masked_paths && l->masked_paths[0]) {
                devnull_tree =
                        RET_NERRNO(open_tree(AT_FDCWD, "/dev/null", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
                if (devnull_tree < 0)
                        return errwrap_first(reterr, devnull_tree, "linux.maskedPaths: clone \"/dev/null\"");
        }

        r = enter_root(ctx, reterr);
        if (r < 0)
                return r;

        root_fd = RET_NERRNO(open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (root_fd < 0)
                return errwrap_first(reterr, root_fd, "open \"/\"");

        for (size_t i = 0; l->readonly_paths && l->readonly_paths[i]; i++) {
                _cleanup_close_ int fd = -EBADF, tree = -EBADF;
                const char *p = l->readonly_paths[i];

                fd = open_in_root(root_fd, p, O_PATH);
                if (fd == -ENOENT)
                        continue;
                if (fd < 0)
                        return errwrap_first(reterr, fd, "linux.readonlyPaths[%zu] \"%s\"", i, p);
                tree = clone_tree_fd(fd, true);
                if (tree < 0)
                        return errwrap_first(reterr, tree, "linux.readonlyPaths[%zu] \"%s\": bind", i, p);
                r = mount_setattr_fd(tree, true, MOUNT_ATTR_RDONLY, 0, 0);
                if (r < 0)
                        return errwrap_first(reterr, r, "linux.readonlyPaths[%zu] \"%s\": make read-only", i,
                                             p);
                r = move_mount_to_fd(tree, fd);
                if (r < 0)
                        return errwrap_first(reterr, r, "linux.readonlyPaths[%zu] \"%s\": attach", i, p);
        }

        for (size_t i = 0; l->masked_paths && l->masked_paths[i]; i++) {
                _cleanup_close_ int fd = -EBADF, tree = -EBADF;
                const char *p = l->masked_paths[i];
                struct stat st;

                fd = open_in_root(root_fd, p, O_PATH);
                if (fd == -ENOENT)
                        continue;
                if (fd < 0)
                        return errwrap_first(reterr, fd, "linux.maskedPaths[%zu] \"%s\"", i, p);
                if (fstat(fd, &st) < 0)
                        return errwrap_first(reterr, negative_errno(), "linux.maskedPaths[%zu] \"%s\"", i,
                                             p);

                /* Every masked directory gets the same read-only tmpfs (one superblock, as with runc): the
                 * first is made, the others are clones of it. */
                if (S_ISDIR(st.st_mode))
                        tree = last_dirmask >= 0 ? clone_tree_fd(last_dirmask, false)
                                                 : make_tmpfs_tree(true, NULL);
                else if (devnull_tree >= 0)
                        tree = TAKE_FD(devnull_tree);
                else
                        tree = clone_tree_fd(last_devnull, false);
                if (tree < 0)
                        return errwrap_first(reterr, tree, "linux.maskedPaths[%zu] \"%s\": create mask", i,
                                             p);
                r = move_mount_to_fd(tree, fd);
                if (r < 0)
                        return errwrap_first(reterr, r, "linux.maskedPaths[%zu] \"%s\": attach", i, p);
                /* attached now: the source of the next mask's clone */
                if (!S_ISDIR(st.st_mode)) {
                        safe_close(last_devnull);
                        last_devnull = TAKE_FD(tree);
                } else if (last_dirmask < 0)
                        last_dirmask = TAKE_FD(tree);
        }

        /* Last: unbindable mounts could not be cloned for the masks and read-only paths above. */
        prop = root_propagation(ctx);
        if (prop == MS_SHARED || prop == MS_UNBINDABLE) {
                r = RET_NERRNO(mount(NULL, "/", NULL, prop | MS_REC, NULL));
                if (r < 0)
                        return errwrap_first(reterr, r, "linux.rootfsPropagation: make \"/\" %s",
                                             l->rootfs_propagation);
        }

        r = finish_readonly_dev(ctx, root_fd, reterr);
        if (r < 0)
                return r;

        if (ctx->config->root_readonly) {
                r = mount_setattr_fd(root_fd, false, MOUNT_ATTR_RDONLY, 0, 0);
                if (r < 0)
                        return errwrap_first(reterr, r, "root.readonly: remount \"/\" read-only");
        }
        return 0;
}

int rootfs_setup_console(int pty_slave_fd, char **reterr) {
        /* Privileged, runs in the container's namespaces, after rootfs_finish(). */
        _cleanup_close_ int root_fd = -EBADF, target_fd = -EBADF, tree = -EBADF;
        int r;

        assert(pty_slave_fd >= 0);

        root_fd = RET_NERRNO(open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (root_fd < 0)
                return errwrap_first(reterr, root_fd, "open \"/\"");
        r = mkdir_p_in_root(root_fd, "/dev/console", 0600, true, &target_fd);
        if (r < 0)
                return errwrap_first(reterr, r, "create \"/dev/console\"");
        tree = clone_tree_fd(pty_slave_fd, false);
        if (tree < 0)
                return errwrap_first(reterr, tree, "bind the terminal onto \"/dev/console\": clone");
        r = move_mount_to_fd(tree, target_fd);
        if (r < 0)
                return errwrap_first(reterr, r, "bind the terminal onto \"/dev/console\"");
        return 0;
}
