/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error-util.h"
#include "host-credentials.h"
#include "log.h"
#include "macro.h"
#include "string-util.h"

/* systemd's own bound for one credential is 1 MiB (v252); later ones allow more: a generous bound, and one
 * for all of them, so that a directory cannot make the runtime (and the container's ramfs) grow without end. */
#define CREDENTIAL_SIZE_MAX (16U * 1024U * 1024U)
#define CREDENTIALS_TOTAL_MAX (64U * 1024U * 1024U)

static int read_credential(int dir_fd, const char *name, size_t max, Credential *ret) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        struct stat st;

        fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADFD; /* skipped by the caller */
        if ((unsigned long long) st.st_size > max)
                return -EFBIG;
        buf = malloc((size_t) st.st_size + 1);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t k = read(fd, buf + size, (size_t) st.st_size + 1 - size);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        explicit_bzero(buf, size);
                        return -errno;
                }
                if (k == 0)
                        break;
                size += (size_t) k;
                if (size > (size_t) st.st_size) { /* it grew: systemd's credentials never do */
                        explicit_bzero(buf, size);
                        return -EFBIG;
                }
        }
        ret->name = strdup(name);
        if (!ret->name) {
                explicit_bzero(buf, size);
                return -ENOMEM;
        }
        ret->data = TAKE_PTR(buf);
        ret->size = size;
        return 0;
}

int credentials_load(Credentials *ret, char **reterr) {
        _cleanup_(credentials_done) Credentials c = {};
        const char *dir = getenv("CREDENTIALS_DIRECTORY");
        size_t total = 0;
        struct dirent *de;
        DIR *d;
        int r = 0;

        assert(ret);

        *ret = (Credentials){};
        if (isempty(dir))
                return 0;
        if (dir[0] != '/') {
                log_debug("CREDENTIALS_DIRECTORY=%s is not an absolute path: ignored", dir);
                return 0;
        }
        d = opendir(dir);
        if (!d) {
                r = -errno;
                if (r == -ENOENT || r == -ENOTDIR) {
                        log_debug("CREDENTIALS_DIRECTORY=%s: %s: ignored", dir, strerror(-r));
                        return 0;
                }
                return errorf(reterr, r, "CREDENTIALS_DIRECTORY: open \"%s\": %s", dir, strerror(-r));
        }
        c.present = true;
        while (r >= 0 && (errno = 0, de = readdir(d))) {
                Credential *items;

                if (de->d_name[0] == '.')
                        continue;
                items = reallocarray(c.items, c.n + 1, sizeof(Credential));
                if (!items) {
                        r = -ENOMEM;
                        break;
                }
                c.items = items;
                c.items[c.n] = (Credential){};
                r = read_credential(dirfd(d), de->d_name,
                                    MIN(CREDENTIAL_SIZE_MAX, CREDENTIALS_TOTAL_MAX - total), &c.items[c.n]);
                if (r == -EBADFD) {
                        r = 0;
                        continue;
                }
                if (r < 0) {
                        r = errorf(reterr, r, "CREDENTIALS_DIRECTORY: read \"%s/%s\": %s", dir, de->d_name,
                                   r == -EFBIG ? "too large" : strerror(-r));
                        break;
                }
                total += c.items[c.n++].size;
        }
        if (r >= 0 && errno != 0)
                r = errorf(reterr, errno, "CREDENTIALS_DIRECTORY: read \"%s\": %m", dir);
        closedir(d);
        if (r < 0)
                return r;
        *ret = c;
        c = (Credentials){};
        return 0;
}
