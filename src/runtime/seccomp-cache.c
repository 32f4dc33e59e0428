/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Compiled seccomp programs, kept in the state root (ROOT/.seccomp-cache/, a directory no container id can
 * name) so that the containers of one engine, which nearly all carry the same profile, pay for libseccomp
 * once: compiling Podman's default profile takes ~17 ms, about as long as the rest of create.
 *
 * An entry is found by a hash of its key but used only if the whole key it stores is the same, byte for
 * byte: the key is linux.seccomp as compact JSON plus what else decides the program (libseccomp's version
 * and API level, the kernel release and machine). The hash is therefore not a security boundary. Entries
 * are written by this user only (0600 in a 0700 directory, checked on every read), atomically (a temporary
 * file renamed into place). Profiles with SCMP_ACT_NOTIFY are not cached (their listener path and metadata
 * differ per container). The directory holds at most SECCOMP_CACHE_MAX entries: a store into a full one
 * empties it first. Anything wrong with the cache (unreadable, foreign, corrupt) means a compile, never a
 * failure. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "error-util.h"
#include "fileio.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "seccomp-cache.h"
#include "seccomp-compile.h"
#include "state.h"
#include "string-util.h"

#define CACHE_DIR ".seccomp-cache"
#define CACHE_MAGIC "sdrun-seccomp-bpf 1\n"
#define CACHE_FILE_MAX (1U << 20)

static uint64_t fnv1a64(const char *s, size_t n) {
        uint64_t h = 0xcbf29ce484222325ULL;
        for (size_t i = 0; i < n; i++) {
                h ^= (unsigned char) s[i];
                h *= 0x100000001b3ULL;
        }
        return h;
}

/* linux.seccomp of the raw config as compact JSON, after a header naming what else decides the program. */
static char *cache_key(const char *raw, size_t raw_len) {
        _cleanup_(cJSON_Deletep) cJSON *root = cJSON_ParseWithLength(raw, raw_len);
        const cJSON *s =
                cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "linux"), "seccomp");
        const struct scmp_version *v = seccomp_version();
        struct utsname u;
        _cleanup_free_ char *json = NULL;

        if (!s || uname(&u) < 0)
                return NULL;
        json = cJSON_PrintUnformatted(s);
        if (!json)
                return NULL;
        /* "enosys 1": the ENOSYS stub in front of libseccomp's program (seccomp-filter.c) */
        return strdup_printf("libseccomp %u.%u.%u api %u enosys 1\nkernel %s %s\n%s", v->major, v->minor,
                             v->micro, seccomp_api_get(), u.release, u.machine, json);
}

/* Our own file (or directory): this user's, not writable by anyone else. */
static bool owned_by_us(int fd, mode_t type) {
        struct stat st;
        return fstat(fd, &st) >= 0 && (st.st_mode & S_IFMT) == type && st.st_uid == geteuid() &&
               !(st.st_mode & 0022);
}

static int read_u64(const char **p, const char *end, uint64_t *ret) {
        if ((size_t) (end - *p) < sizeof(uint64_t))
                return -EBADMSG;
        memcpy(ret, *p, sizeof(uint64_t));
        *p += sizeof(uint64_t);
        return 0;
}

/* The entry's program if it is whole and its key is key. */
static int cache_lookup(int dir_fd, const char *name, const char *key, SeccompProgram **ret) {
        _cleanup_close_ int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        _cleanup_free_ char *buf = NULL;
        _cleanup_(seccomp_program_freep) SeccompProgram *prog = NULL;
        size_t size = 0;
        uint64_t klen, n;
        int r;

        struct stat st;

        if (fd < 0)
                return -errno;
        if (!owned_by_us(fd, S_IFREG) || fstat(fd, &st) < 0)
                return -EPERM;
        if (st.st_size <= 0 || (uint64_t) st.st_size > CACHE_FILE_MAX)
                return -EBADMSG;
        size = (size_t) st.st_size;
        buf = malloc(size);
        if (!buf)
                return -ENOMEM;
        r = loop_read(fd, buf, size);
        if (r < 0)
                return r;
        if ((size_t) r != size)
                return -EBADMSG;
        const char *p = buf, *end = buf + size;
        if (size < STRLEN(CACHE_MAGIC) || memcmp(p, CACHE_MAGIC, STRLEN(CACHE_MAGIC)) != 0)
                return -EBADMSG;
        p += STRLEN(CACHE_MAGIC);
        if (read_u64(&p, end, &klen) < 0 || klen != strlen(key) || (size_t) (end - p) < klen ||
            memcmp(p, key, klen) != 0)
                return -ESTALE;
        p += klen;
        if (read_u64(&p, end, &n) < 0 || n == 0 || n > BPF_MAXINSNS ||
            (size_t) (end - p) != n * sizeof(struct sock_filter))
                return -EBADMSG;
        prog = calloc(1, sizeof *prog);
        if (!prog)
                return -ENOMEM;
        prog->insns = malloc(n * sizeof(struct sock_filter));
        if (!prog->insns)
                return -ENOMEM;
        memcpy(prog->insns, p, n * sizeof(struct sock_filter));
        prog->len = (size_t) n;
        *ret = TAKE_PTR(prog);
        return 0;
}

static void cache_make_room(int dir_fd) {
        _cleanup_close_ int fd = dup(dir_fd);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        struct dirent *de;
        unsigned n = 0;

        if (!d)
                return;
        TAKE_FD(fd);
        while ((de = readdir(d)))
                if (de->d_name[0] != '.')
                        n++;
        if (n >= SECCOMP_CACHE_MAX) {
                rewinddir(d);
                while ((de = readdir(d)))
                        if (de->d_name[0] != '.')
                                (void) unlinkat(dir_fd, de->d_name, 0);
        }
        closedir(d);
}

static int cache_store(int dir_fd, const char *name, const char *key, const SeccompProgram *prog) {
        uint64_t klen = strlen(key), n = prog->len;
        size_t size = STRLEN(CACHE_MAGIC) + sizeof klen + klen + sizeof n + n * sizeof(struct sock_filter);
        _cleanup_free_ char *buf = malloc(size);
        char *p = buf;

        if (!buf)
                return -ENOMEM;
        p = mempcpy(p, CACHE_MAGIC, STRLEN(CACHE_MAGIC));
        p = mempcpy(p, &klen, sizeof klen);
        p = mempcpy(p, key, klen);
        p = mempcpy(p, &n, sizeof n);
        memcpy(p, prog->insns, n * sizeof(struct sock_filter));

        cache_make_room(dir_fd);
        return write_file_atomic_at(dir_fd, name, buf, size, 0600);
}

int seccomp_program_get(const char *root, const char *raw, size_t raw_len, const OciSeccomp *s,
                        SeccompProgram **ret, char **reterr) {
        _cleanup_free_ char *key = NULL;
        _cleanup_close_ int root_fd = -EBADF, dir_fd = -EBADF;
        char name[32];
        int r;

        if (oci_seccomp_uses_notify(s) || !root || !(key = cache_key(raw, raw_len)))
                return oci_seccomp_prepare(s, ret, reterr);
        snprintf(name, sizeof name, "%016" PRIx64, fnv1a64(key, strlen(key)));

        /* A state root that is not ours alone is refused (the verb that follows says why): no cache there. */
        if (state_root_open(root, false, &root_fd, NULL) >= 0) {
                dir_fd = openat(root_fd, CACHE_DIR, O_DIRECTORY | O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
                if (dir_fd < 0 && errno == ENOENT && mkdirat(root_fd, CACHE_DIR, 0700) >= 0)
                        dir_fd = openat(root_fd, CACHE_DIR, O_DIRECTORY | O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
                if (dir_fd >= 0 && !owned_by_us(dir_fd, S_IFDIR)) {
                        log_debug("seccomp cache %s/" CACHE_DIR " is not ours alone: not used", root);
                        dir_fd = safe_close(dir_fd);
                }
        }
        if (dir_fd >= 0) {
                r = cache_lookup(dir_fd, name, key, ret);
                if (r >= 0) {
                        log_debug("linux.seccomp: compiled program from %s/" CACHE_DIR "/%s", root, name);
                        return 0;
                }
                if (r != -ENOENT)
                        log_debug("seccomp cache entry %s/" CACHE_DIR "/%s not used: %s", root, name,
                                  strerror(-r));
        }

        r = oci_seccomp_prepare(s, ret, reterr);
        if (r < 0 || dir_fd < 0)
                return r;
        r = cache_store(dir_fd, name, key, *ret);
        if (r < 0)
                log_debug("cannot store the seccomp program in %s/" CACHE_DIR ": %s", root, strerror(-r));
        else
                log_debug("linux.seccomp: compiled, stored as %s/" CACHE_DIR "/%s", root, name);
        return 0;
}
