/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "credentials.h"
#include "error-util.h"
#include "macro.h"
#include "mount.h"
#include "string-util.h"

#define CREDENTIALS_SYSTEM_DIR "/run/credentials/@system"
#define CREDENTIALS_DIR "/run/credentials"

void credentials_done(Credentials *c) {
        if (!c)
                return;
        for (size_t i = 0; i < c->n; i++) {
                if (c->items[i].data)
                        explicit_bzero(c->items[i].data, c->items[i].size);
                free(c->items[i].data);
                free(c->items[i].name);
        }
        free(c->items);
        *c = (Credentials){};
}

static bool name_is_systemd(const char *path) {
        const char *b = strrchr(path, '/');
        return streq(b ? b + 1 : path, "systemd");
}

const char *credentials_target(const OciConfig *config, int root_fd) {
        const char *arg0 = config->has_process && config->process.args ? config->process.args[0] : NULL;
        _cleanup_close_ int fd = -EBADF;
        char p[64], target[PATH_MAX];
        ssize_t n;

        if (!arg0)
                return CREDENTIALS_DIR;
        if (name_is_systemd(arg0))
                return CREDENTIALS_SYSTEM_DIR;
        if (arg0[0] != '/' || root_fd < 0)
                return CREDENTIALS_DIR;
        /* /sbin/init -> /lib/systemd/systemd: what the link resolves to inside the rootfs. */
        fd = open_in_root(root_fd, arg0, O_PATH);
        if (fd < 0)
                return CREDENTIALS_DIR;
        snprintf(p, sizeof p, "/proc/self/fd/%i", fd);
        n = readlink(p, target, sizeof target - 1);
        if (n <= 0)
                return CREDENTIALS_DIR;
        target[n] = 0;
        return name_is_systemd(target) ? CREDENTIALS_SYSTEM_DIR : CREDENTIALS_DIR;
}

static int make_credentials_fs(void) {
        static const char *const types[] = { "ramfs", "tmpfs" };
        int r = -ENODEV;

        /* ramfs first, as systemd: its pages are never swapped out. */
        FOREACH_ARRAY(t, types, ELEMENTSOF(types)) {
                _cleanup_close_ int fs_fd = RET_NERRNO(fsopen(*t, FSOPEN_CLOEXEC));
                if (fs_fd < 0) {
                        r = fs_fd;
                        continue;
                }
                if (fsconfig(fs_fd, FSCONFIG_SET_STRING, "mode", "0500", 0) < 0 ||
                    fsconfig(fs_fd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
                        r = negative_errno();
                        continue;
                }
                r = RET_NERRNO(fsmount(fs_fd, FSMOUNT_CLOEXEC,
                                       MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC));
                if (r >= 0)
                        return r;
        }
        return r;
}

static int write_all(int fd, const char *data, size_t size) {
        while (size > 0) {
                ssize_t k = write(fd, data, size);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                data += k;
                size -= (size_t) k;
        }
        return 0;
}

int credentials_install(const Credentials *c, const OciConfig *config, const char *rootfs,
                        const char **ret_target, char **reterr) {
        /* Privileged, runs in the container's namespaces (the init, before pivot_root). */
        _cleanup_close_ int root_fd = -EBADF, mnt = -EBADF, target_fd = -EBADF;
        uid_t uid = config->has_process ? config->process.user.uid : 0;
        gid_t gid = config->has_process ? config->process.user.gid : 0;
        const char *target;
        int r;

        assert(c);
        assert(rootfs);

        root_fd = RET_NERRNO(open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (root_fd < 0)
                return errorf(reterr, root_fd, "CREDENTIALS_DIRECTORY: open the rootfs \"%s\": %s", rootfs,
                              strerror(-root_fd));
        target = credentials_target(config, root_fd);

        mnt = make_credentials_fs();
        if (mnt < 0)
                return errorf(reterr, mnt, "CREDENTIALS_DIRECTORY: mount a ramfs for the credentials: %s",
                              strerror(-mnt));
        for (size_t i = 0; i < c->n; i++) {
                _cleanup_close_ int fd = -EBADF;
                const Credential *cr = &c->items[i];

                fd = RET_NERRNO(
                        openat(mnt, cr->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400));
                if (fd >= 0)
                        r = write_all(fd, cr->data, cr->size);
                else
                        r = fd;
                if (r >= 0)
                        r = RET_NERRNO(fchown(fd, uid, gid));
                if (r < 0)
                        return errorf(reterr, r, "CREDENTIALS_DIRECTORY: credential \"%s\": write: %s",
                                      cr->name, strerror(-r));
        }
        r = RET_NERRNO(fchownat(mnt, "", uid, gid, AT_EMPTY_PATH)); /* an O_PATH fd */
        if (r < 0)
                return errorf(reterr, r, "CREDENTIALS_DIRECTORY: chown the credentials to %u:%u: %s",
                              (unsigned) uid, (unsigned) gid, strerror(-r));
        r = mount_setattr_fd(mnt, false, MOUNT_ATTR_RDONLY, 0, 0);
        if (r < 0)
                return errorf(reterr, r, "CREDENTIALS_DIRECTORY: make the credentials read-only: %s",
                              strerror(-r));
        r = mkdir_p_in_root(root_fd, target, 0755, false, &target_fd);
        if (r < 0)
                return errorf(reterr, r, "CREDENTIALS_DIRECTORY: create \"%s\" in the rootfs: %s", target,
                              strerror(-r));
        r = move_mount_to_fd(mnt, target_fd);
        if (r < 0)
                return errorf(reterr, r, "CREDENTIALS_DIRECTORY: mount the credentials on \"%s\": %s",
                              target, strerror(-r));
        *ret_target = target;
        return 0;
}
