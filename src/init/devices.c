/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "devices.h"
#include "error-util.h"
#include "macro.h"
#include "mount.h"

const DefaultDevice default_devices[] = {
        { "/dev/null", 1, 3 },   { "/dev/zero", 1, 5 },    { "/dev/full", 1, 7 },
        { "/dev/random", 1, 8 }, { "/dev/urandom", 1, 9 }, { "/dev/tty", 5, 0 },
};
const size_t n_default_devices = ELEMENTSOF(default_devices);

/* Splits "/dev/a/b" into an O_PATH fd of the parent (created if missing, inside the root) and the last
 * component. */
static int open_parent_in_root(int root_fd, const char *path, int *ret_parent_fd, const char **ret_name) {
        _cleanup_free_ char *dir = NULL;
        const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;

        if (isempty(name) || streq(name, ".") || streq(name, ".."))
                return -EINVAL;
        dir = strndup(path, slash ? (size_t) (slash - path) : 0);
        if (!dir)
                return -ENOMEM;
        *ret_name = name;
        return mkdir_p_in_root(root_fd, *dir ? dir : "/", 0755, false, ret_parent_fd);
}

/* Privileged, runs in the container's namespaces (before pivot_root). */
static int create_node(int root_fd, const char *path, mode_t type, mode_t perm, dev_t dev, uid_t uid,
                       gid_t gid, bool bind_from_host, const char **ret_step) {
        _cleanup_close_ int parent_fd = -EBADF;
        const char *name;
        int r;

        *ret_step = "create parent directory";
        r = open_parent_in_root(root_fd, path, &parent_fd, &name);
        if (r < 0)
                return r;

        /* Replace whatever the bundle had there (never follows a symlink: unlinkat removes the link). */
        *ret_step = "remove existing file";
        r = RET_NERRNO(unlinkat(parent_fd, name, 0));
        if (r < 0 && r != -ENOENT)
                return r;

        if (!bind_from_host || type == S_IFIFO) {
                *ret_step = "mknod";
                r = RET_NERRNO(mknodat(parent_fd, name, type | perm, dev));
                if (r >= 0) {
                        *ret_step = "chown";
                        if (uid != 0 || gid != 0)
                                return RET_NERRNO(fchownat(parent_fd, name, uid, gid, AT_SYMLINK_NOFOLLOW));
                        return 0;
                }
                /* Not allowed to create device nodes (e.g. inside another container whose device policy
                 * forbids mknod): bind-mount the host's node instead, as runc does. */
                if (r != -EPERM || type == S_IFIFO)
                        return r;
        }

        {
                _cleanup_close_ int target_fd = -EBADF, tree_fd = -EBADF;

                *ret_step = "create mount point";
                r = RET_NERRNO(mknodat(parent_fd, name, S_IFREG | 0644, 0));
                if (r < 0)
                        return r;
                target_fd = RET_NERRNO(openat(parent_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
                if (target_fd < 0)
                        return target_fd;
                *ret_step = "bind from host";
                tree_fd = RET_NERRNO(open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
                if (tree_fd < 0)
                        return tree_fd;
                return move_mount_to_fd(tree_fd, target_fd);
        }
}

static bool config_has_device(const OciConfig *config, const char *path) {
        FOREACH_ARRAY(d, config->linux_.devices, config->linux_.n_devices)
                if (streq_ptr(d->path, path))
                        return true;
        return false;
}

int devices_create(int root_fd, const OciConfig *config, bool bind_from_host, char **reterr) {
        /* Privileged, runs in the container's namespaces (before pivot_root). */
        const char *step = NULL;
        mode_t saved_umask;
        int r = 0;

        assert(root_fd >= 0);
        assert(config);

        /* Modes are exact, as the config gives them. The init is single-threaded here. */
        saved_umask = umask(0);

        for (size_t i = 0; i < n_default_devices; i++) {
                const DefaultDevice *d = &default_devices[i];

                if (config_has_device(config, d->path))
                        continue;
                r = create_node(root_fd, d->path, S_IFCHR, 0666, makedev(d->major, d->minor), 0, 0,
                                bind_from_host, &step);
                if (r < 0) {
                        r = errwrap_first(reterr, r, "default device \"%s\": %s", d->path, step);
                        goto finish;
                }
        }

        for (size_t i = 0; i < config->linux_.n_devices; i++) {
                const OciDevice *d = &config->linux_.devices[i];
                mode_t type;

                switch (d->type) {
                case 'c':
                case 'u':
                        type = S_IFCHR;
                        break;
                case 'b':
                        type = S_IFBLK;
                        break;
                case 'p':
                        type = S_IFIFO;
                        break;
                default:
                        r = errwrap_first(reterr, -EINVAL, "linux.devices[%zu] \"%s\": type '%c'", i,
                                          strna(d->path), d->type);
                        goto finish;
                }

                r = create_node(root_fd, d->path, type, d->has_file_mode ? (d->file_mode & 07777) : 0666,
                                type == S_IFIFO ? 0 : makedev((unsigned) d->major, (unsigned) d->minor),
                                d->has_uid ? d->uid : 0, d->has_gid ? d->gid : 0, bind_from_host, &step);
                if (r < 0) {
                        r = errwrap_first(reterr, r, "linux.devices[%zu] \"%s\": %s", i, d->path, step);
                        goto finish;
                }
        }
        r = 0;
finish:
        umask(saved_umask);
        return r;
}

int devices_create_links(int root_fd, char **reterr) {
        /* Privileged, runs in the container's namespaces (before pivot_root). */
        static const struct {
                const char *target, *name;
        } links[] = {
                { "/proc/self/fd", "fd" },
                { "/proc/self/fd/0", "stdin" },
                { "/proc/self/fd/1", "stdout" },
                { "/proc/self/fd/2", "stderr" },
        };
        _cleanup_close_ int dev_fd = -EBADF;
        int r;

        r = mkdir_p_in_root(root_fd, "/dev", 0755, false, &dev_fd);
        if (r < 0)
                return errwrap_first(reterr, r, "create \"/dev\"");

        FOREACH_ARRAY(l, links, ELEMENTSOF(links)) {
                r = RET_NERRNO(symlinkat(l->target, dev_fd, l->name));
                if (r < 0 && r != -EEXIST)
                        return errwrap_first(reterr, r, "symlink \"/dev/%s\" -> \"%s\"", l->name, l->target);
        }
        if (access("/proc/kcore", F_OK) >= 0) {
                r = RET_NERRNO(symlinkat("/proc/kcore", dev_fd, "core"));
                if (r < 0 && r != -EEXIST)
                        return errwrap_first(reterr, r, "symlink \"/dev/core\" -> \"/proc/kcore\"");
        }

        r = RET_NERRNO(unlinkat(dev_fd, "ptmx", 0));
        if (r < 0 && r != -ENOENT)
                return errwrap_first(reterr, r, "remove \"/dev/ptmx\"");
        r = RET_NERRNO(symlinkat("pts/ptmx", dev_fd, "ptmx"));
        if (r < 0)
                return errwrap_first(reterr, r, "symlink \"/dev/ptmx\" -> \"pts/ptmx\"");
        return 0;
}

int devices_create_console_placeholder(int root_fd, char **reterr) {
        /* Privileged, runs in the container's namespaces (before pivot_root). */
        _cleanup_close_ int dev_fd = -EBADF;
        int r;

        r = mkdir_p_in_root(root_fd, "/dev", 0755, false, &dev_fd);
        if (r < 0)
                return errwrap_first(reterr, r, "create \"/dev\"");
        r = RET_NERRNO(mknodat(dev_fd, "console", S_IFREG | 0600, 0));
        if (r < 0 && r != -EEXIST)
                return errwrap_first(reterr, r, "create \"/dev/console\"");
        return 0;
}
