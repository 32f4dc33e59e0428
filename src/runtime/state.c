/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-props.h"
#include "cgroup-util.h"
#include "config.h"
#include "error-util.h"
#include "fileio.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "process-util.h"
#include "state.h"
#include "string-util.h"
#include "strv.h"

#define STATE_FILE "state.json"
#define CONFIG_FILE "config.json"
#define LOCK_FILE "lock"
#define STATE_MAX_SIZE (16U * 1024U * 1024U)
#define LOCK_TIMEOUT_USEC (30 * USEC_PER_SEC)

static const char *const status_table[_CONTAINER_STATUS_MAX] = {
        [CONTAINER_CREATING] = "creating", [CONTAINER_CREATED] = "created", [CONTAINER_RUNNING] = "running",
        [CONTAINER_PAUSED] = "paused",     [CONTAINER_STOPPED] = "stopped",
};

const char *container_status_to_string(ContainerStatus s) {
        if (s < 0 || s >= _CONTAINER_STATUS_MAX)
                return "unknown";
        return status_table[s];
}

static ContainerStatus container_status_from_string(const char *s) {
        for (int i = 0; i < _CONTAINER_STATUS_MAX; i++)
                if (streq_ptr(status_table[i], s))
                        return i;
        return _CONTAINER_STATUS_INVALID;
}

int container_id_validate(const char *id, char **reterr) {
        size_t n;

        if (isempty(id))
                return errorf(reterr, EINVAL, "container id must not be empty");
        n = strlen(id);
        if (n > 1024)
                return errorf(reterr, EINVAL, "container id is too long (%zu characters, at most 1024)", n);
        if (id[0] == '.' || id[0] == '-')
                return errorf(reterr, EINVAL,
                              "invalid container id \"%s\": must not start with \".\" or \"-\"", id);
        for (const char *p = id; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                      strchr("_.+-", *p)))
                        return errorf(
                                reterr, EINVAL,
                                "invalid container id \"%s\": only letters, digits and _.+- are allowed",
                                id);
        return 0;
}

void container_free(Container *c) {
        if (!c)
                return;
        safe_close(c->root_fd);
        safe_close(c->dir_fd);
        safe_close(c->lock_fd);
        safe_close(c->start_conn);
        free(c->root);
        free(c->id);
        free(c->bundle);
        free(c->rootfs);
        free(c->created);
        free(c->owner);
        free(c->unit);
        free(c->slice);
        free(c->cgroup);
        free(c->machine);
        cJSON_Delete(c->annotations);
        free(c);
}

static Container *container_alloc(const char *root, const char *id) {
        Container *c = calloc(1, sizeof *c);
        if (!c)
                return NULL;
        c->root_fd = c->dir_fd = c->lock_fd = c->start_conn = -EBADF;
        c->root = strdup(root);
        c->id = strdup(id);
        if (!c->root || !c->id) {
                container_free(c);
                return NULL;
        }
        return c;
}

static int mkdir_p(const char *path, mode_t mode) {
        _cleanup_free_ char *p = strdup(path);
        if (!p)
                return -ENOMEM;
        for (char *s = p + 1; *s; s++) {
                if (*s != '/')
                        continue;
                *s = 0;
                if (mkdir(p, mode) < 0 && errno != EEXIST)
                        return -errno;
                *s = '/';
        }
        if (mkdir(p, mode) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

/* Take the lock with a bounded wait. flock() has no timeout, so poll with a short back-off. */
static int lock_exclusive(int fd, uint64_t timeout_usec) {
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + timeout_usec;
        useconds_t delay = 200;

        for (;;) {
                if (flock(fd, LOCK_EX | LOCK_NB) == 0)
                        return 0;
                if (errno != EWOULDBLOCK && errno != EINTR)
                        return -errno;
                if (now_usec(CLOCK_MONOTONIC) >= deadline)
                        return -ETIMEDOUT;
                usleep(delay);
                delay = MIN(delay * 2, (useconds_t) 20000);
        }
}

#define TEMP_PREFIX ".new-"
#define STALE_TEMPORARY_SEC 60

/* A DIR of its own over the directory dir_fd refers to (dir_fd stays usable); NULL on failure. */
static DIR *opendir_fd(int dir_fd) {
        _cleanup_close_ int fd = openat(dir_fd, ".", O_DIRECTORY | O_CLOEXEC | O_RDONLY);
        DIR *d;

        if (fd < 0 || !(d = fdopendir(fd)))
                return NULL;
        TAKE_FD(fd);
        return d;
}

static void remove_dir_contents(int dir_fd) {
        DIR *d = opendir_fd(dir_fd);
        struct dirent *de;

        if (!d)
                return;
        while ((de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        (void) unlinkat(dir_fd, de->d_name, 0);
        closedir(d);
}

/* A create killed before its rename leaves a hidden temporary directory whose lock nobody holds. */
static void sweep_stale_temporaries(int root_fd) {
        DIR *d = opendir_fd(root_fd);
        struct dirent *de;

        if (!d)
                return;
        while ((de = readdir(d))) {
                if (!strneq(de->d_name, TEMP_PREFIX, STRLEN(TEMP_PREFIX)))
                        continue;
                _cleanup_close_ int dfd =
                        openat(root_fd, de->d_name, O_DIRECTORY | O_CLOEXEC | O_RDONLY | O_NOFOLLOW);
                struct stat st;
                if (dfd < 0 || fstat(dfd, &st) < 0)
                        continue;
                /* A create in progress is in this phase for microseconds, but between its mkdir and its flock
                 * the lock proves nothing: only what is old enough to be abandoned is looked at. */
                if ((uint64_t) st.st_mtime + STALE_TEMPORARY_SEC > now_usec(CLOCK_REALTIME) / USEC_PER_SEC)
                        continue;
                _cleanup_close_ int lfd = openat(dfd, LOCK_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
                if (lfd >= 0 && flock(lfd, LOCK_EX | LOCK_NB) < 0)
                        continue; /* a create in progress */
                remove_dir_contents(dfd);
                (void) unlinkat(root_fd, de->d_name, AT_REMOVEDIR);
        }
        closedir(d);
}

/* The state root and every state directory in it must be the caller's alone. Whoever else can write into
 * either can plant a state, and with it a config.json whose poststop hooks the caller's `delete --force`
 * then runs with the caller's privileges (runc and crun trust any --root). So the owner must be the
 * caller's effective uid (root's for root, the user's for a rootless caller; inside a user namespace the
 * uid as seen in there) and neither group nor others may write, sticky or not: a sticky world-writable
 * root would still let other users squat ids and fill `list`. Checked on the opened fd, so what is checked
 * is what is used afterwards: every later step works relative to that fd. */
static int check_dir_trusted(int fd, const char *what, const char *path, char **reterr) {
        struct stat st;

        if (fstat(fd, &st) < 0)
                return errorf(reterr, errno, "%s \"%s\": cannot stat it: %s", what, path, strerror(errno));
        if (!S_ISDIR(st.st_mode))
                return errorf(reterr, ENOTDIR, "%s \"%s\" is not a directory", what, path);
        if (st.st_uid != geteuid())
                return errorf(reterr, EPERM,
                              "%s \"%s\" is owned by uid %u, not by uid %u that runs sdrun: refusing to use "
                              "it (its owner could plant a container state there)",
                              what, path, (unsigned) st.st_uid, (unsigned) geteuid());
        if (st.st_mode & (S_IWGRP | S_IWOTH))
                return errorf(reterr, EPERM,
                              "%s \"%s\" is writable by %s (mode %04o): refusing to use it (they could "
                              "plant a container state there)",
                              what, path,
                              (st.st_mode & S_IWGRP) && (st.st_mode & S_IWOTH) ? "group and others"
                              : (st.st_mode & S_IWGRP)                         ? "its group"
                                                                               : "others",
                              (unsigned) (st.st_mode & 07777));
        return 0;
}

int state_root_open(const char *root, bool create, int *ret_fd, char **reterr) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        assert(root);
        assert(ret_fd);

        if (create) {
                r = mkdir_p(root, 0711);
                if (r < 0)
                        return errorf(reterr, r, "cannot create state directory \"%s\": %s", root,
                                      strerror(-r));
        }
        /* The last component may be a symlink (the fd's own owner and mode are what count). */
        fd = open(root, O_DIRECTORY | O_CLOEXEC | O_RDONLY);
        if (fd < 0)
                return errorf(reterr, errno, "cannot open state directory \"%s\": %s", root,
                              strerror(errno));
        r = check_dir_trusted(fd, "state root", root, reterr);
        if (r < 0)
                return r;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int state_root_lock(const char *root, const char *name, int *ret_fd, char **reterr) {
        _cleanup_close_ int root_fd = -EBADF, fd = -EBADF;
        int r;

        assert(name);
        assert(ret_fd);

        r = state_root_open(root, true, &root_fd, reterr);
        if (r < 0)
                return r;
        fd = openat(root_fd, name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return errorf(reterr, errno, "cannot open \"%s/%s\": %s", root, name, strerror(errno));
        r = lock_exclusive(fd, LOCK_TIMEOUT_USEC);
        if (r < 0)
                return errorf(reterr, r, "cannot lock \"%s/%s\": %s", root, name,
                              r == -ETIMEDOUT ? "another sdrun holds it" : strerror(-r));
        *ret_fd = TAKE_FD(fd);
        return 0;
}

static int open_state_dir(int root_fd, const char *root, const char *name, int *ret_fd, char **reterr) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *path = NULL;
        int r;

        fd = openat(root_fd, name, O_DIRECTORY | O_CLOEXEC | O_RDONLY | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        if (asprintf(&path, "%s/%s", root, name) < 0)
                return -ENOMEM;
        r = check_dir_trusted(fd, "state directory", path, reterr);
        if (r < 0)
                return r;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int container_new(const char *root, const char *id, Container **ret, char **reterr) {
        _cleanup_(container_freep) Container *c = NULL;
        _cleanup_close_ int root_fd = -EBADF;
        char created[64];
        int r;

        r = container_id_validate(id, reterr);
        if (r < 0)
                return r;

        r = state_root_open(root, true, &root_fd, reterr);
        if (r < 0)
                return r;
        /* The directory appears under its id only once it is locked and holds a state: it is made under a
         * hidden temporary name and renamed into place (RENAME_NOREPLACE), so a reader never sees a
         * half-made one, even if we are killed in between. */
        sweep_stale_temporaries(root_fd);
        char tmp[64];
        snprintf(tmp, sizeof tmp, TEMP_PREFIX "%d-%llx", (int) getpid(),
                 (unsigned long long) now_usec(CLOCK_MONOTONIC));
        if (mkdirat(root_fd, tmp, 0700) < 0) {
                r = -errno;
                return errorf(reterr, r, "cannot create a directory in \"%s\": %s", root, strerror(errno));
        }

        c = container_alloc(root, id);
        if (!c) {
                (void) unlinkat(root_fd, tmp, AT_REMOVEDIR);
                return -ENOMEM;
        }
        c->dir_fd = openat(root_fd, tmp, O_DIRECTORY | O_CLOEXEC | O_RDONLY | O_NOFOLLOW);
        if (c->dir_fd < 0) {
                r = -errno;
                (void) unlinkat(root_fd, tmp, AT_REMOVEDIR);
                return r;
        }
        c->lock_fd = openat(c->dir_fd, LOCK_FILE, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (c->lock_fd < 0 || flock(c->lock_fd, LOCK_EX | LOCK_NB) < 0) {
                r = -errno;
                (void) errorf(reterr, r, "cannot lock state of container \"%s\": %s", id, strerror(errno));
                remove_dir_contents(c->dir_fd);
                (void) unlinkat(root_fd, tmp, AT_REMOVEDIR);
                return r;
        }

        c->recorded = CONTAINER_CREATING;
        format_now_rfc3339(created, sizeof created);
        c->created = strdup(created);
        if (!c->created) {
                remove_dir_contents(c->dir_fd);
                (void) unlinkat(root_fd, tmp, AT_REMOVEDIR);
                return -ENOMEM;
        }
        r = container_save(c);
        if (r >= 0 && renameat2(root_fd, tmp, root_fd, id, RENAME_NOREPLACE) < 0)
                r = -errno;
        if (r < 0) {
                if (r == -EEXIST)
                        (void) errorf(reterr, r, "container \"%s\" already exists", id);
                else
                        (void) errorf(reterr, r, "cannot write state of container \"%s\": %s", id,
                                      strerror(-r));
                remove_dir_contents(c->dir_fd);
                (void) unlinkat(root_fd, tmp, AT_REMOVEDIR);
                return r;
        }
        c->root_fd = TAKE_FD(root_fd);
        *ret = TAKE_PTR(c);
        return 0;
}

static int json_dup_string(const cJSON *o, const char *key, char **ret) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
        if (!v || cJSON_IsNull(v)) {
                *ret = NULL;
                return 0;
        }
        if (!cJSON_IsString(v))
                return -EBADMSG;
        *ret = strdup(v->valuestring);
        return *ret ? 0 : -ENOMEM;
}

/* -EPROTONOSUPPORT with a message naming both releases when a newer sdrun wrote the state in a format this
 * one does not know: refused before any other field is read, since any of them may mean something else. */
static int check_state_format(const cJSON *j, const char *id, char **reterr) {
        const cJSON *sd = cJSON_GetObjectItemCaseSensitive(j, "sdrun"), *v, *w;

        v = cJSON_GetObjectItemCaseSensitive(sd, "stateFormat");
        if (!v)
                return 0; /* format 1, from before the field */
        /* (bounded before the cast: a double beyond UINT_MAX does not convert) */
        if (!cJSON_IsNumber(v) || !(v->valuedouble >= 1 && v->valuedouble <= 1e6) ||
            v->valuedouble != (double) (unsigned) v->valuedouble)
                return -EBADMSG;
        if ((unsigned) v->valuedouble <= STATE_FORMAT)
                return 0;
        w = cJSON_GetObjectItemCaseSensitive(sd, "version");
        return errorf(
                reterr, EPROTONOSUPPORT,
                "state of container \"%s\" was written by sdrun %s in state format %u; this is sdrun %s, which "
                "reads state formats up to %u: manage the container with sdrun %s or newer",
                id, cJSON_IsString(w) ? w->valuestring : "(unknown version)", (unsigned) v->valuedouble,
                PACKAGE_VERSION, STATE_FORMAT, cJSON_IsString(w) ? w->valuestring : "(that version)");
}

static int container_parse_state(Container *c, const char *buf, size_t size, char **reterr) {
        _cleanup_json_ cJSON *j = NULL;
        const cJSON *v, *w, *sd;
        int r;

        r = json_parse(buf, size, &j, NULL);
        if (r < 0)
                return -EBADMSG;
        if (!cJSON_IsObject(j))
                return -EBADMSG;
        r = check_state_format(j, c->id, reterr);
        if (r < 0)
                return r;
        v = cJSON_GetObjectItemCaseSensitive(j, "status");
        if (!cJSON_IsString(v))
                return -EBADMSG;
        c->recorded = container_status_from_string(v->valuestring);
        if (c->recorded < 0)
                return -EBADMSG;
        v = cJSON_GetObjectItemCaseSensitive(j, "pid");
        if (v) {
                if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 4194304)
                        return -EBADMSG;
                c->pid = (pid_t) v->valuedouble;
        }
        if ((r = json_dup_string(j, "bundle", &c->bundle)) < 0 ||
            (r = json_dup_string(j, "rootfs", &c->rootfs)) < 0 ||
            (r = json_dup_string(j, "created", &c->created)) < 0 ||
            (r = json_dup_string(j, "owner", &c->owner)) < 0)
                return r;
        v = cJSON_GetObjectItemCaseSensitive(j, "annotations");
        if (cJSON_IsObject(v)) {
                c->annotations = cJSON_Duplicate(v, true);
                if (!c->annotations)
                        return -ENOMEM;
        }
        sd = cJSON_GetObjectItemCaseSensitive(j, "sdrun");
        if (cJSON_IsObject(sd)) {
                if ((r = json_dup_string(sd, "unit", &c->unit)) < 0 ||
                    (r = json_dup_string(sd, "slice", &c->slice)) < 0 ||
                    (r = json_dup_string(sd, "cgroup", &c->cgroup)) < 0 ||
                    (r = json_dup_string(sd, "machine", &c->machine)) < 0)
                        return r;
                v = cJSON_GetObjectItemCaseSensitive(sd, "pidStartTime");
                if (cJSON_IsString(v))
                        c->pid_start_time = strtoull(v->valuestring, NULL, 10);
                c->user_bus = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sd, "userBus"));
                v = cJSON_GetObjectItemCaseSensitive(sd, "usernsBase");
                w = cJSON_GetObjectItemCaseSensitive(sd, "usernsSize");
                if (cJSON_IsNumber(v) && cJSON_IsNumber(w) && v->valuedouble >= 0 && w->valuedouble > 0 &&
                    v->valuedouble + w->valuedouble <= (double) UINT32_MAX) {
                        c->userns_base = (uint32_t) v->valuedouble;
                        c->userns_size = (uint32_t) w->valuedouble;
                }
        }
        /* A pid without its start time cannot be verified: never use it. */
        if (c->pid > 0 && c->pid_start_time == 0)
                c->pid = 0;
        return 0;
}

static int load(const char *root, const char *id, ContainerLock lock, bool salvage, Container **ret,
                char **reterr) {
        _cleanup_(container_freep) Container *c = NULL;
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        int r;

        r = container_id_validate(id, reterr);
        if (r < 0)
                return r;
        c = container_alloc(root, id);
        if (!c)
                return -ENOMEM;
        r = state_root_open(root, false, &c->root_fd, reterr);
        if (r == -ENOENT)
                return errorf(reterr, r, "container \"%s\" does not exist", id);
        if (r < 0)
                return r;
        r = open_state_dir(c->root_fd, root, id, &c->dir_fd, reterr);
        if (r == -ENOENT)
                return errorf(reterr, r, "container \"%s\" does not exist", id);
        if (r == -EPERM || r == -ENOTDIR)
                return r;
        if (r < 0)
                return errorf(reterr, r, "cannot open state of container \"%s\": %s", id, strerror(-r));

        if (lock == CONTAINER_LOCK_EXCLUSIVE) {
                c->lock_fd = openat(c->dir_fd, LOCK_FILE, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
                if (c->lock_fd < 0) {
                        r = -errno;
                        if (r == -ENOENT)
                                return errorf(reterr, r, "container \"%s\" does not exist", id);
                        return errorf(reterr, r, "cannot open lock of container \"%s\": %s", id,
                                      strerror(errno));
                }
                r = lock_exclusive(c->lock_fd, LOCK_TIMEOUT_USEC);
                if (r < 0)
                        return errorf(reterr, r, "cannot lock container \"%s\": %s", id,
                                      r == -ETIMEDOUT ? "another sdrun holds it" : strerror(-r));
        }

        r = read_full_file_at(c->dir_fd, STATE_FILE, STATE_MAX_SIZE, &buf, &size);
        if (r == -ENOENT) {
                /* Between mkdir and the first write by create: the creator decides. */
                c->recorded = CONTAINER_CREATING;
        } else if (r < 0) {
                return errorf(reterr, r, "cannot read state of container \"%s\": %s", id, strerror(-r));
        } else {
                r = container_parse_state(c, buf, size, reterr);
                /* A newer release's state is never salvaged either: delete --force would misread it too. */
                if (r == -ENOMEM || r == -EPROTONOSUPPORT)
                        return r;
                if (r < 0 && salvage) {
                        /* What is left: the id (hence the state directory) and, in there, config.json. */
                        _cleanup_(container_freep) Container *n = container_alloc(root, id);
                        if (!n)
                                return -ENOMEM;
                        n->root_fd = TAKE_FD(c->root_fd);
                        n->dir_fd = TAKE_FD(c->dir_fd);
                        n->lock_fd = TAKE_FD(c->lock_fd);
                        n->recorded = CONTAINER_STOPPED;
                        n->corrupt = true;
                        container_free(c);
                        c = TAKE_PTR(n);
                } else if (r < 0)
                        return errorf(reterr, r,
                                      "state of container \"%s\" is corrupt (%s/%s/" STATE_FILE
                                      "): use delete --force",
                                      id, root, id);
        }
        *ret = TAKE_PTR(c);
        return 0;
}

int container_load(const char *root, const char *id, ContainerLock lock, Container **ret, char **reterr) {
        return load(root, id, lock, false, ret, reterr);
}

int container_load_status(const char *root, const char *id, ContainerLock lock, Container **ret,
                          ContainerStatus *ret_status, char **reterr) {
        int r = container_load(root, id, lock, ret, reterr);
        if (r < 0)
                return r;
        *ret_status = container_status(*ret);
        return 0;
}

int container_load_salvage(const char *root, const char *id, ContainerLock lock, Container **ret,
                           char **reterr) {
        return load(root, id, lock, true, ret, reterr);
}

int container_save(Container *c) {
        _cleanup_json_ cJSON *j = NULL;
        _cleanup_free_ char *s = NULL;
        cJSON *sd;
        char buf[32];

        j = cJSON_CreateObject();
        if (!j)
                return -ENOMEM;
        if (!cJSON_AddStringToObject(j, "ociVersion", OCI_SPEC_VERSION) ||
            !cJSON_AddStringToObject(j, "id", c->id) ||
            !cJSON_AddStringToObject(j, "status", container_status_to_string(c->recorded)))
                return -ENOMEM;
        if (c->pid > 0 && !cJSON_AddNumberToObject(j, "pid", c->pid))
                return -ENOMEM;
        if (!cJSON_AddStringToObject(j, "bundle", strempty(c->bundle)))
                return -ENOMEM;
        if (c->rootfs && !cJSON_AddStringToObject(j, "rootfs", c->rootfs))
                return -ENOMEM;
        if (c->created && !cJSON_AddStringToObject(j, "created", c->created))
                return -ENOMEM;
        if (c->owner && !cJSON_AddStringToObject(j, "owner", c->owner))
                return -ENOMEM;
        if (c->annotations && !json_add(j, "annotations", cJSON_Duplicate(c->annotations, true)))
                return -ENOMEM;
        sd = cJSON_AddObjectToObject(j, "sdrun");
        if (!sd)
                return -ENOMEM;
        snprintf(buf, sizeof buf, "%llu", (unsigned long long) c->pid_start_time);
        if ((c->unit && !cJSON_AddStringToObject(sd, "unit", c->unit)) ||
            (c->slice && !cJSON_AddStringToObject(sd, "slice", c->slice)) ||
            (c->cgroup && !cJSON_AddStringToObject(sd, "cgroup", c->cgroup)) ||
            (c->machine && !cJSON_AddStringToObject(sd, "machine", c->machine)) ||
            !cJSON_AddStringToObject(sd, "pidStartTime", buf) ||
            !cJSON_AddBoolToObject(sd, "userBus", c->user_bus) ||
            (c->userns_size > 0 && (!cJSON_AddNumberToObject(sd, "usernsBase", c->userns_base) ||
                                    !cJSON_AddNumberToObject(sd, "usernsSize", c->userns_size))) ||
            !cJSON_AddNumberToObject(sd, "stateFormat", STATE_FORMAT) ||
            !cJSON_AddStringToObject(sd, "version", PACKAGE_VERSION))
                return -ENOMEM;

        s = json_print(j);
        if (!s)
                return -ENOMEM;
        return write_file_atomic_at(c->dir_fd, STATE_FILE, s, strlen(s), 0600);
}

int container_save_config(Container *c, const char *json, size_t len) {
        return write_file_atomic_at(c->dir_fd, CONFIG_FILE, json, len, 0600);
}

int container_read_config(Container *c, char **ret, size_t *ret_len) {
        return read_full_file_at(c->dir_fd, CONFIG_FILE, 64U * 1024U * 1024U, ret, ret_len);
}

static bool creator_alive(Container *c) {
        _cleanup_close_ int fd = -EBADF;

        /* We hold the lock ourselves: whoever created it is gone. */
        if (c->lock_fd >= 0)
                return false;
        fd = openat(c->dir_fd, LOCK_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return false; /* a state directory appears only with its lock (container_new) */
        if (flock(fd, LOCK_SH | LOCK_NB) >= 0 || errno != EWOULDBLOCK)
                return false;
        /* Held. The init, cloned before it closes its copy of the lock fd, holds it too until it has died
         * with its killed creator (PR_SET_PDEATHSIG): the lock is the creator's only while the process that
         * took it is alive and not dying. /proc/locks names that process; outside the initial pid namespace
         * (a container, an nspawn box) the kernel leaves out a lock whose taker is gone, so a lock held with
         * no line for it has a dead taker, unless it runs in a pid namespace we cannot see (a --root shared
         * with a parent namespace), which cannot be told apart here and is taken as gone too. */
        pid_t holder = 0;
        ProcStat st;
        int r = flock_holder_pid(fd, &holder);
        if (r == 0) {
                log_debug("container %s: its lock is held, and /proc/locks names no taker we can see: gone",
                          c->id);
                return false;
        }
        if (r < 0 || holder <= 0) {
                log_debug("container %s: its lock is held; its taker unknown (%s): creating", c->id,
                          r < 0 ? strerror(-r) : "no pid");
                return true;
        }
        r = pid_read_stat(holder, &st);
        bool alive = r != -ESRCH && (r < 0 || (st.state != 'Z' && !proc_stat_is_dying(&st)));
        log_debug("container %s: its lock is held by pid %d, %s", c->id, (int) holder,
                  alive ? "alive: creating" : "gone or dying");
        return alive;
}

static bool init_alive(Container *c) {
        ProcStat st;

        if (c->pid <= 0 || c->pid_start_time == 0)
                return false;
        /* One read of /proc/PID/stat: the same process, not a reaped one, and not dying. */
        if (pid_read_stat(c->pid, &st) < 0 || st.start_time != c->pid_start_time || st.state == 'X')
                return false;
        if (st.state == 'Z') {
                /* A zombie leader whose other threads live on (a seccomp KILL_THREAD of the main thread) is a
                 * live process, as wait(2) and the pidfd see it: dead only when the thread group is empty. */
                _cleanup_close_ int pidfd = pidfd_open_verified(c->pid, c->pid_start_time);
                return pidfd >= 0 && pidfd_wait_exit(pidfd, 0) == -ETIMEDOUT;
        }
        /* A dying init is no live one, though its /proc entries stay until it is a reaped zombie:
         *  - "created" is saved before the init is told it is committed, and until then it dies with its
         *    creator (PR_SET_PDEATHSIG, SIGKILL): a creator killed in that window leaves an init with the
         *    SIGKILL pending, which is no created container, and whose pid is never reported (seed 2);
         *  - the kernel empties its cgroup before it is a zombie: `systemctl stop` of the scope returns
         *    while it is still in do_exit(), and state must say stopped by then. */
        return !proc_stat_is_dying(&st);
}

/* The init listens on the start socket in the state directory until `start` connects, and the listening
 * socket is close-on-exec: while a connection is accepted it waits for start. (Our own channel, never
 * /proc/PID/comm, which the container's process can set to anything.) The init takes a connection that
 * says nothing as "not a starter" and goes on listening. */
static bool init_waiting_for_start(Container *c) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int s = -EBADF;

        snprintf(sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/" START_SOCKET_NAME, c->dir_fd);
        s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0)
                return true;
        if (connect(s, (struct sockaddr *) &sa, sizeof sa) >= 0) {
                if (c->keep_start_conn) {
                        safe_close(c->start_conn);
                        c->start_conn = TAKE_FD(s);
                }
                return true;
        }
        return errno != ECONNREFUSED;
}

bool container_is_frozen(Container *c) {
        _cleanup_free_ char *dir = NULL, *path = NULL, *buf = NULL, *v1 = NULL, *v1buf = NULL;
        CgroupLayout layout;

        if (isempty(c->cgroup) || cgroup_detect_layout(&layout) < 0)
                return false;
        /* The cgroup v2 freezer (unified layout, or the unified hierarchy of a hybrid one: systemd's
         * FreezeUnit and our fallback both use it). */
        if (layout != CGROUP_LAYOUT_LEGACY && cgroup_unified_dir(c->cgroup, &dir) >= 0 &&
            asprintf(&path, "%s/cgroup.events", dir) >= 0 &&
            read_full_file_at(AT_FDCWD, path, 4096, &buf, NULL) >= 0 && strstr(buf, "frozen 1"))
                return true;
        if (layout == CGROUP_LAYOUT_UNIFIED)
                return false;
        if (asprintf(&v1, "/sys/fs/cgroup/freezer%s/freezer.state", c->cgroup) < 0)
                return false;
        if (read_full_file_at(AT_FDCWD, v1, 4096, &v1buf, NULL) < 0)
                return false;
        return strneq(v1buf, "FROZEN", 6) || strneq(v1buf, "FREEZING", 8);
}

#define CHECKPOINT_THAW_TIMEOUT_USEC (5 * USEC_PER_SEC)

int container_end_checkpoint_freeze(Container *c) {
        _cleanup_free_ char *err = NULL;
        CgroupLayout layout;
        int r;

        if (container_is_frozen(c)) {
                r = cgroup_detect_layout(&layout);
                if (r >= 0)
                        r = cgroup_freeze(c->cgroup, layout, false, CHECKPOINT_THAW_TIMEOUT_USEC, &err);
                if (r < 0) {
                        log_warning("container %s: cannot thaw the cgroup its checkpoint froze: %s", c->id,
                                    err ?: strerror(-r));
                        return r;
                }
                log_info("container %s: thawed the cgroup its interrupted checkpoint left frozen", c->id);
        }
        if (unlinkat(c->dir_fd, CHECKPOINTING_MARKER, 0) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}

/* A checkpoint's freeze that outlived the checkpoint (CHECKPOINTING_MARKER with the lock free) undone. */
static void checkpoint_freeze_recover(Container *c) {
        _cleanup_close_ int fd = -EBADF;

        if (faccessat(c->dir_fd, CHECKPOINTING_MARKER, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
                return;
        /* Held for the thaw, so that no new checkpoint starts in between; not taken while another verb (a
         * checkpoint at work, maybe) holds it. */
        if (c->lock_fd < 0) {
                fd = openat(c->dir_fd, LOCK_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
                if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0)
                        return;
        }
        (void) container_end_checkpoint_freeze(c);
}

/* Re-read the recorded status, pid and start time: the creator may have committed and exited between our
 * read of state.json and our look at its lock. */
static int container_reload(Container *c) {
        _cleanup_(container_freep) Container *n = NULL;
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        int r;

        r = read_full_file_at(c->dir_fd, STATE_FILE, STATE_MAX_SIZE, &buf, &size);
        if (r < 0)
                return r;
        n = container_alloc(c->root, c->id);
        if (!n)
                return -ENOMEM;
        r = container_parse_state(n, buf, size, NULL);
        if (r < 0)
                return r;
        c->recorded = n->recorded;
        c->pid = n->pid;
        c->pid_start_time = n->pid_start_time;
        if (n->unit) {
                free(c->unit);
                c->unit = TAKE_PTR(n->unit);
        }
        if (n->cgroup) {
                free(c->cgroup);
                c->cgroup = TAKE_PTR(n->cgroup);
        }
        if (n->machine) {
                free(c->machine);
                c->machine = TAKE_PTR(n->machine);
        }
        return 0;
}

/* A restore that died after CRIU restored the container (and wrote RESTORE_PID_FILE) but before it recorded
 * the init: that process, if it lives in the container's unit, is the container's init. */
static bool restored_init_adopt(Container *c) {
        _cleanup_free_ char *text = NULL, *cg = NULL, *needle = NULL;
        char path[64];
        pid_t pid;

        if (!c->unit || read_full_file_at(c->dir_fd, RESTORE_PID_FILE, 64, &text, NULL) < 0)
                return false;
        pid = (pid_t) strtol(text, NULL, 10);
        if (pid <= 0)
                return false;
        /* In the unit's cgroup or below it: ".../UNIT\n" or ".../UNIT/...". */
        snprintf(path, sizeof path, "/proc/%d/cgroup", (int) pid);
        needle = strdup_printf("/%s", c->unit);
        if (!needle || read_full_file_at(AT_FDCWD, path, 64 * 1024, &cg, NULL) < 0)
                return false;
        const char *m = strstr(cg, needle);
        if (!m || (m[strlen(needle)] != '\n' && m[strlen(needle)] != '/'))
                return false;
        c->pid = pid;
        if (pid_get_start_time(pid, &c->pid_start_time) < 0 || !init_alive(c)) {
                c->pid = 0;
                c->pid_start_time = 0;
                return false;
        }
        return true;
}

ContainerStatus container_status(Container *c) {
        switch (c->recorded) {
        case CONTAINER_CREATING:
                if (creator_alive(c))
                        return CONTAINER_CREATING;
                if (container_reload(c) >= 0 && c->recorded != CONTAINER_CREATING)
                        return container_status(c);
                if (restored_init_adopt(c))
                        return container_is_frozen(c) ? CONTAINER_PAUSED : CONTAINER_RUNNING;
                return CONTAINER_STOPPED;
        case CONTAINER_CREATED:
                if (!init_alive(c))
                        return CONTAINER_STOPPED;
                /* A start that was killed after releasing the init never recorded "running": the init
                 * has exec'd the user process once its comm is no longer ours. */
                if (!init_waiting_for_start(c))
                        return container_is_frozen(c) ? CONTAINER_PAUSED : CONTAINER_RUNNING;
                return CONTAINER_CREATED;
        case CONTAINER_RUNNING:
        case CONTAINER_PAUSED:
                if (!init_alive(c))
                        return CONTAINER_STOPPED;
                checkpoint_freeze_recover(c);
                return container_is_frozen(c) ? CONTAINER_PAUSED : CONTAINER_RUNNING;
        default:
                return CONTAINER_STOPPED;
        }
}

int container_open_pidfd(Container *c) {
        if (c->pid <= 0 || c->pid_start_time == 0)
                return -ESRCH;
        return pidfd_open_verified(c->pid, c->pid_start_time);
}

int container_oci_state(Container *c, ContainerStatus st, cJSON **ret) {
        _cleanup_json_ cJSON *j = cJSON_CreateObject();

        if (!j)
                return -ENOMEM;
        if (!cJSON_AddStringToObject(j, "ociVersion", OCI_SPEC_VERSION) ||
            !cJSON_AddStringToObject(j, "id", c->id) ||
            !cJSON_AddStringToObject(j, "status", container_status_to_string(st)))
                return -ENOMEM;
        /* The pid is reported only while it is the container's init: never a stale or provisional one. */
        if (c->pid > 0 && (st == CONTAINER_CREATED || st == CONTAINER_RUNNING || st == CONTAINER_PAUSED) &&
            !cJSON_AddNumberToObject(j, "pid", c->pid))
                return -ENOMEM;
        if (!cJSON_AddStringToObject(j, "bundle", strempty(c->bundle)))
                return -ENOMEM;
        if (c->annotations && !json_add(j, "annotations", cJSON_Duplicate(c->annotations, true)))
                return -ENOMEM;
        *ret = TAKE_PTR(j);
        return 0;
}

int container_oci_state_string(Container *c, ContainerStatus st, char **ret) {
        _cleanup_json_ cJSON *j = NULL;
        int r;

        r = container_oci_state(c, st, &j);
        if (r < 0)
                return r;
        *ret = json_print(j);
        return *ret ? 0 : -ENOMEM;
}

int container_hook_state_string(Container *c, ContainerStatus st, pid_t pid, char **ret) {
        _cleanup_json_ cJSON *j = NULL;
        int r;

        r = container_oci_state(c, st, &j);
        if (r < 0)
                return r;
        cJSON_DeleteItemFromObjectCaseSensitive(j, "pid");
        if (pid > 0 && !cJSON_AddNumberToObject(j, "pid", pid))
                return -ENOMEM;
        *ret = json_print(j);
        return *ret ? 0 : -ENOMEM;
}

int container_remove(Container *c) {
        _cleanup_close_ int fd = -EBADF;
        DIR *d;
        struct dirent *de;

        if (c->dir_fd < 0)
                return 0;
        fd = openat(c->dir_fd, ".", O_DIRECTORY | O_CLOEXEC | O_RDONLY);
        if (fd < 0)
                return -errno;
        d = fdopendir(TAKE_FD(fd));
        if (!d)
                return -errno;
        while ((de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, "..") &&
                    unlinkat(c->dir_fd, de->d_name, 0) < 0 && errno == EISDIR) {
                        /* notify/ (NOTIFY_SOCKET): one level of files. */
                        _cleanup_close_ int sub = openat(c->dir_fd, de->d_name,
                                                         O_DIRECTORY | O_CLOEXEC | O_RDONLY | O_NOFOLLOW);
                        if (sub >= 0)
                                remove_dir_contents(sub);
                        (void) unlinkat(c->dir_fd, de->d_name, AT_REMOVEDIR);
                }
        closedir(d);

        if (c->root_fd < 0)
                return -EBADF;
        if (unlinkat(c->root_fd, c->id, AT_REMOVEDIR) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

int container_match_ids(const char *root, const char *regex, char ***ret, char **reterr) {
        _cleanup_(strv_freep) char **all = NULL, **matching = NULL;
        regex_t re;
        size_t n;
        int r;

        r = regcomp(&re, regex, REG_EXTENDED | REG_NOSUB);
        if (r != 0) {
                char buf[256];
                regerror(r, &re, buf, sizeof buf);
                return errorf(reterr, EINVAL, "--regex: invalid regular expression \"%s\": %s", regex, buf);
        }
        r = container_list_ids(root, &all, &n, reterr);
        if (r < 0) {
                regfree(&re);
                return r;
        }
        for (char **id = all; id && *id; id++)
                if (regexec(&re, *id, 0, NULL, 0) == 0 && strv_extend(&matching, *id) < 0) {
                        regfree(&re);
                        return -ENOMEM;
                }
        regfree(&re);
        if (!matching && !(matching = calloc(1, sizeof(char *))))
                return -ENOMEM;
        *ret = TAKE_PTR(matching);
        return 0;
}

int container_list_ids(const char *root, char ***ret, size_t *ret_n, char **reterr) {
        _cleanup_close_ int root_fd = -EBADF;
        char **ids = NULL;
        size_t n = 0;
        DIR *d;
        struct dirent *de;
        int r;

        r = state_root_open(root, false, &root_fd, reterr);
        if (r == -ENOENT) {
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        if (r < 0)
                return r;
        d = fdopendir(root_fd);
        if (!d)
                return errorf(reterr, errno, "cannot read state directory \"%s\": %s", root,
                              strerror(errno));
        TAKE_FD(root_fd);
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.' || container_id_validate(de->d_name, NULL) < 0)
                        continue;
                if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
                        continue;
                char **ni = realloc(ids, (n + 2) * sizeof *ids);
                if (!ni)
                        goto oom;
                ids = ni;
                ids[n] = strdup(de->d_name);
                if (!ids[n])
                        goto oom;
                ids[++n] = NULL;
        }
        closedir(d);
        if (n > 0)
                qsort(ids, n, sizeof *ids, cmp_str);
        *ret = ids;
        *ret_n = n;
        return 0;
oom:
        closedir(d);
        for (size_t i = 0; i < n; i++)
                free(ids[i]);
        free(ids);
        return -ENOMEM;
}

int container_path(Container *c, const char *name, char **ret) {
        if (asprintf(ret, "%s/%s/%s", c->root, c->id, name) < 0)
                return -ENOMEM;
        return 0;
}
