/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The automatic user namespace: the request, the pick of a free range, the config rewritten (see
 * userns-auto.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "error-util.h"
#include "fileio.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "state.h"
#include "string-util.h"
#include "strv.h"
#include "userns-auto.h"

#define N_CANDIDATES ((USERNS_AUTO_LAST - USERNS_AUTO_FIRST) / USERNS_AUTO_SIZE + 1)

static void closedirp(DIR **d) {
        if (*d)
                closedir(*d);
}

void userns_auto_done(UsernsAuto *u) {
        u->lock_fd = safe_close(u->lock_fd);
}

static int parse_request(const char *v, bool *ret) {
        if (isempty(v) || streq(v, "host"))
                *ret = false;
        else if (streq(v, "auto"))
                *ret = true;
        else
                return -EINVAL;
        return 0;
}

int userns_auto_requested(const OciConfig *c, bool *ret, char **reterr) {
        const char *a = oci_config_annotation(c, USERNS_ANNOTATION), *e = getenv(USERNS_ENV);

        if (a && parse_request(a, ret) < 0)
                return errorf(reterr, EINVAL,
                              "config.json: annotations[\"" USERNS_ANNOTATION "\"]: \"%s\" is not \"auto\" "
                              "or \"host\"",
                              a);
        if (a)
                return 0;
        if (parse_request(e, ret) < 0)
                return errorf(reterr, EINVAL, USERNS_ENV "=%s: not \"auto\" or \"host\"", e);
        return 0;
}

uint32_t userns_auto_first_candidate(const char *id) {
        /* FNV-1a: stable across releases and hosts, which the id's range should be. */
        uint32_t h = 2166136261U;

        for (const char *p = id; *p; p++)
                h = (h ^ (uint8_t) *p) * 16777619U;
        return USERNS_AUTO_FIRST + (h % N_CANDIDATES) * USERNS_AUTO_SIZE;
}

static int add_range(IdRange **ranges, size_t *n, uint64_t start, uint64_t count) {
        IdRange *p = realloc(*ranges, (*n + 1) * sizeof(IdRange));
        if (!p)
                return -ENOMEM;
        *ranges = p;
        p[(*n)++] = (IdRange){ start, count };
        return 0;
}

int userns_auto_parse_subid(const char *text, IdRange **ranges, size_t *n) {
        _cleanup_free_ char *buf = strdup(text);
        int r;

        if (!buf)
                return -ENOMEM;
        for (char *p = buf, *line; (line = next_line(&p));) {
                unsigned long long start, count;
                char *c = strchr(line, ':');

                /* "name:start:count"; comments and what does not parse are not ranges */
                if (line[0] == '#' || !c || sscanf(c, ":%llu:%llu", &start, &count) != 2 || count == 0)
                        continue;
                r = add_range(ranges, n, start, count);
                if (r < 0)
                        return r;
        }
        return 0;
}

static bool overlaps(const IdRange *r, uint64_t base) {
        return r->start < base + USERNS_AUTO_SIZE && base < r->start + r->count;
}

int userns_auto_pick_free(const char *id, const IdRange *taken, size_t n_taken,
                          bool (*is_taken)(uint32_t base), uint32_t *ret) {
        uint32_t first = (userns_auto_first_candidate(id) - USERNS_AUTO_FIRST) / USERNS_AUTO_SIZE;

        for (uint32_t k = 0; k < N_CANDIDATES; k++) {
                uint32_t base = USERNS_AUTO_FIRST + ((first + k) % N_CANDIDATES) * USERNS_AUTO_SIZE;
                bool busy = false;

                for (size_t i = 0; i < n_taken && !busy; i++)
                        busy = overlaps(&taken[i], base);
                if (busy || (is_taken && is_taken(base)))
                        continue;
                *ret = base;
                return 0;
        }
        return -EBUSY;
}

/* A user or a group NSS knows at the first or last id of the range (nspawn looks at the first). */
static bool nss_knows(uint32_t base) {
        const uid_t ids[] = { base, base + USERNS_AUTO_SIZE - 1 };
        char buf[4096];

        FOREACH_ARRAY(u, ids, ELEMENTSOF(ids)) {
                struct passwd pw, *pwr = NULL;
                struct group gr, *grr = NULL;

                if ((getpwuid_r(*u, &pw, buf, sizeof buf, &pwr) == 0 && pwr) ||
                    (getgrgid_r((gid_t) *u, &gr, buf, sizeof buf, &grr) == 0 && grr))
                        return true;
        }
        return false;
}

static int add_subid_file(const char *path, IdRange **ranges, size_t *n, char **reterr) {
        _cleanup_free_ char *text = NULL;
        int r;

        r = read_full_file_at(AT_FDCWD, path, 16U << 20, &text, NULL);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return errorf(reterr, r, "read \"%s\": %s", path, strerror(-r));
        return userns_auto_parse_subid(text, ranges, n);
}

/* The ranges of the other containers of the state root. One that cannot be read is skipped: a broken
 * state has no live container behind it that could use its range (its processes show in /proc). */
static int add_containers(const char *root, const char *id, IdRange **ranges, size_t *n, char **reterr) {
        _cleanup_strv_free_ char **ids = NULL;
        size_t n_ids = 0;
        int r;

        r = container_list_ids(root, &ids, &n_ids, reterr);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n_ids; i++) {
                _cleanup_container_ Container *ct = NULL;

                if (streq(ids[i], id) || container_load(root, ids[i], CONTAINER_LOCK_NONE, &ct, NULL) < 0)
                        continue;
                if (ct->userns_size > 0) {
                        r = add_range(ranges, n, ct->userns_base, ct->userns_size);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* The ids of the host's processes in the area ranges are picked from (as ranges of one), whatever made
 * them: containers of other state roots and runtimes, other users of the area. The owner of /proc/PID is
 * the process's effective uid and gid (the root of its user namespace for one that is not dumpable): a
 * stat of each is some 20 times cheaper than reading its status, and what a process acts as is what
 * would collide. */
static int add_processes(IdRange **ranges, size_t *n) {
        _cleanup_(closedirp) DIR *d = opendir("/proc");
        struct dirent *de;
        int r;

        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                struct stat st;

                if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
                    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue; /* not a process, or gone meanwhile */
                if (st.st_uid >= USERNS_AUTO_FIRST && (r = add_range(ranges, n, st.st_uid, 1)) < 0)
                        return r;
                if (st.st_gid >= USERNS_AUTO_FIRST && (r = add_range(ranges, n, st.st_gid, 1)) < 0)
                        return r;
        }
        return 0;
}

static cJSON *id_mapping(uint32_t base) {
        cJSON *a = cJSON_CreateArray(), *m = cJSON_CreateObject();

        if (!a || !m || !cJSON_AddNumberToObject(m, "containerID", 0) ||
            !cJSON_AddNumberToObject(m, "hostID", base) ||
            !cJSON_AddNumberToObject(m, "size", USERNS_AUTO_SIZE) || !cJSON_AddItemToArray(a, m)) {
                cJSON_Delete(a);
                cJSON_Delete(m);
                return NULL;
        }
        return a;
}

/* config.json with a new user namespace (unless linux.namespaces has one) and the mappings onto base; b->c
 * parsed from it again. */
static int rewrite_config(Bundle *b, uint32_t base, char **reterr) {
        _cleanup_json_ cJSON *j = NULL;
        _cleanup_free_ char *perr = NULL, *s = NULL;
        OciConfig *c = NULL;
        cJSON *linux_, *nss, *ns;
        bool has = false;
        int r;

        r = json_parse(b->raw, b->raw_len, &j, NULL);
        if (r < 0)
                return r;
        linux_ = cJSON_GetObjectItemCaseSensitive(j, "linux");
        if (!linux_ && !(linux_ = cJSON_AddObjectToObject(j, "linux")))
                return -ENOMEM;
        nss = cJSON_GetObjectItemCaseSensitive(linux_, "namespaces");
        if (!nss && !(nss = cJSON_AddArrayToObject(linux_, "namespaces")))
                return -ENOMEM;
        cJSON_ArrayForEach(ns, nss) {
                const cJSON *t = cJSON_GetObjectItemCaseSensitive(ns, "type");
                has = has || (cJSON_IsString(t) && streq(t->valuestring, "user"));
        }
        if (!has) {
                ns = cJSON_CreateObject();
                if (!ns || !cJSON_AddStringToObject(ns, "type", "user") || !cJSON_AddItemToArray(nss, ns)) {
                        cJSON_Delete(ns);
                        return -ENOMEM;
                }
        }
        if (!json_add(linux_, "uidMappings", id_mapping(base)) ||
            !json_add(linux_, "gidMappings", id_mapping(base)))
                return -ENOMEM;
        s = json_print(j);
        if (!s)
                return -ENOMEM;
        r = oci_config_parse(s, strlen(s), &c, &perr);
        if (r < 0)
                return errorf(reterr, r, "config.json with the automatic user namespace: %s",
                              perr ?: strerror(-r));
        oci_config_freep(&b->c);
        b->c = c;
        free(b->raw);
        b->raw_len = strlen(s);
        b->raw = TAKE_PTR(s);
        return 0;
}

int userns_auto_setup(const char *root, const char *id, bool rootless, Bundle *b, UsernsAuto *ret,
                      char **reterr) {
        _cleanup_free_ IdRange *taken = NULL;
        _cleanup_close_ int lock_fd = -EBADF;
        const OciConfig *c = b->c;
        const char *path = NULL, *why;
        size_t n = 0;
        uint32_t base;
        int r;

        r = userns_auto_requested(c, &ret->on, reterr);
        if (r < 0 || !ret->on)
                return r;
        why = oci_config_annotation(c, USERNS_ANNOTATION) ? "annotations[\"" USERNS_ANNOTATION
                                                            "\"] is \"auto\""
                                                          : USERNS_ENV "=auto";

        /* What the request replaces may not be given as well. */
        if (rootless)
                return errorf(reterr, EPERM,
                              "%s: the automatic user namespace needs root (it maps the container onto ids "
                              "of the host's)",
                              why);
        if (c->linux_.n_uid_mappings > 0 || c->linux_.n_gid_mappings > 0)
                return errorf(reterr, EINVAL,
                              "config.json: linux.%s: given, but %s: sdrun picks the user namespace's "
                              "mappings itself",
                              c->linux_.n_uid_mappings > 0 ? "uidMappings" : "gidMappings", why);
        if (oci_config_has_namespace(c, OCI_NS_USER, &path) && path)
                for (size_t i = 0; i < c->linux_.n_namespaces; i++)
                        if (c->linux_.namespaces[i].type == OCI_NS_USER)
                                return errorf(reterr, EINVAL,
                                              "config.json: linux.namespaces[%zu].path: a user namespace to "
                                              "join, but %s: sdrun makes a new one",
                                              i, why);

        if (!config_has_own_namespace(c, OCI_NS_MOUNT, "mnt"))
                return errorf(
                        reterr, EINVAL,
                        "config.json: linux.namespaces: no mount namespace of the container's own, but %s: "
                        "its rootfs is id-mapped, which needs one",
                        why);

        r = state_root_lock(root, USERNS_LOCK_FILE, &lock_fd, reterr);
        if (r < 0)
                return r;
        if ((r = add_subid_file("/etc/subuid", &taken, &n, reterr)) < 0 ||
            (r = add_subid_file("/etc/subgid", &taken, &n, reterr)) < 0 ||
            (r = add_containers(root, id, &taken, &n, reterr)) < 0)
                return r;
        r = add_processes(&taken, &n);
        if (r < 0)
                return errorf(reterr, r, "read the ids of the host's processes: %s", strerror(-r));
        r = userns_auto_pick_free(id, taken, n, nss_knows, &base);
        if (r < 0)
                return errorf(reterr, r, "%s: no free range of %u ids between %#x and %#x", why,
                              USERNS_AUTO_SIZE, USERNS_AUTO_FIRST, USERNS_AUTO_LAST + USERNS_AUTO_SIZE - 1);
        log_debug("automatic user namespace: container ids 0..%u -> host ids %" PRIu32 "..%" PRIu32
                  " (first candidate %" PRIu32 ")",
                  USERNS_AUTO_SIZE - 1, base, base + USERNS_AUTO_SIZE - 1, userns_auto_first_candidate(id));
        r = rewrite_config(b, base, reterr);
        if (r < 0)
                return r;
        ret->base = base;
        ret->lock_fd = TAKE_FD(lock_fd);
        return 0;
}
