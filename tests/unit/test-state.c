/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* state.c in a temporary --root: id validation, create/save/load round trips, the atomic write, missing and
 * corrupt state.json (load refuses, salvage gives a stopped container), the lock, what the status derives
 * from a live or dead pid and the start socket, the OCI state and the hook state strings, list and remove. */

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "fileio.h"
#include "json-util.h"
#include "macro.h"
#include "process-util.h"
#include "state.h"
#include "tap.h"

static char tmp[] = "/tmp/test-state-XXXXXX";
static char root[sizeof tmp + 32];

static char *state_path(const char *id, const char *name) {
        char *p;
        if (asprintf(&p, "%s/%s/%s", root, id, name) < 0)
                abort();
        return p;
}

static char *read_state_file(const char *id) {
        _cleanup_free_ char *p = state_path(id, "state.json");
        char *buf = NULL;
        return read_full_file_at(AT_FDCWD, p, 1U << 20, &buf, NULL) < 0 ? NULL : buf;
}

static void write_state_file(const char *id, const char *content) {
        _cleanup_free_ char *p = state_path(id, "state.json");
        FILE *f = fopen(p, "we");
        if (f) {
                fputs(content, f);
                fclose(f);
        }
}

/* Whether <root>/<sub> holds an entry matching the regex ^prefix. */
static bool has_temporaries(const char *sub, const char *prefix) {
        _cleanup_free_ char *cmd = NULL;
        if (asprintf(&cmd, "ls -A '%s/%s' | grep -q '^%s'", root, sub, prefix) < 0)
                abort();
        return system(cmd) == 0;
}

static void test_id(void) {
        _cleanup_free_ char *err = NULL, *long_id = NULL;

        tap_is_int(container_id_validate("abc", NULL), 0, "id \"abc\" is valid");
        tap_is_int(container_id_validate("A-z_0.9+x", NULL), 0, "letters, digits and _.+- are valid");
        tap_is_int(container_id_validate("a..b", NULL), 0, "dots inside are valid");
        long_id = malloc(1026);
        memset(long_id, 'a', 1025);
        long_id[1024] = 0;
        tap_is_int(container_id_validate(long_id, NULL), 0, "1024 characters are valid");
        long_id[1024] = 'a';
        long_id[1025] = 0;
        tap_is_int(container_id_validate(long_id, &err), -EINVAL, "1025 characters are not");
        tap_is_str(err, "container id is too long (1025 characters, at most 1024)", "... and the message says so");

        tap_is_int(container_id_validate("", &err), -EINVAL, "an empty id is invalid");
        tap_is_str(err, "container id must not be empty", "... with a message");
        tap_is_int(container_id_validate(NULL, NULL), -EINVAL, "a NULL id is invalid");
        tap_is_int(container_id_validate(".", NULL), -EINVAL, "\".\" is invalid");
        tap_is_int(container_id_validate("..", &err), -EINVAL, "\"..\" is invalid");
        tap_is_str(err, "invalid container id \"..\": must not start with \".\" or \"-\"", "... it starts with a dot");
        tap_is_int(container_id_validate(".hidden", NULL), -EINVAL, "a leading dot is invalid");
        tap_is_int(container_id_validate("-rf", NULL), -EINVAL, "a leading dash is invalid");
        tap_is_int(container_id_validate("a/b", &err), -EINVAL, "a slash is invalid");
        tap_is_str(err, "invalid container id \"a/b\": only letters, digits and _.+- are allowed", "... with a message");
        tap_is_int(container_id_validate("../x", NULL), -EINVAL, "a path is invalid");
        tap_is_int(container_id_validate("a b", NULL), -EINVAL, "a space is invalid");
        tap_is_int(container_id_validate("a\nb", NULL), -EINVAL, "a newline is invalid");
        tap_is_int(container_id_validate("caf\xc3\xa9", NULL), -EINVAL, "non-ASCII is invalid");
}

static void test_status_strings(void) {
        tap_is_str(container_status_to_string(CONTAINER_CREATING), "creating", "status creating");
        tap_is_str(container_status_to_string(CONTAINER_CREATED), "created", "status created");
        tap_is_str(container_status_to_string(CONTAINER_RUNNING), "running", "status running");
        tap_is_str(container_status_to_string(CONTAINER_PAUSED), "paused", "status paused");
        tap_is_str(container_status_to_string(CONTAINER_STOPPED), "stopped", "status stopped");
        tap_is_str(container_status_to_string(_CONTAINER_STATUS_INVALID), "unknown", "an invalid status is \"unknown\"");
        tap_is_str(container_status_to_string(_CONTAINER_STATUS_MAX), "unknown", "out of range is \"unknown\"");
}

static void test_new(void) {
        _cleanup_(container_freep) Container *c = NULL, *d = NULL;
        _cleanup_free_ char *err = NULL, *s = NULL, *lock = NULL;
        _cleanup_json_ cJSON *j = NULL;
        int r;

        r = container_new(root, "c1", &c, &err);
        if (!tap_is_int(r, 0, "container_new() in a root that does not exist yet: %s", strna(err)))
                return;
        tap_ok(access(root, F_OK) == 0, "the root is created, with its parents");
        s = read_state_file("c1");
        tap_ok(s && json_parse(s, strlen(s), &j, NULL) == 0, "state.json is written and parses");
        tap_is_str(cJSON_GetStringValue(cJSON_GetObjectItem(j, "status")), "creating", "status \"creating\"");
        tap_is_str(cJSON_GetStringValue(cJSON_GetObjectItem(j, "id")), "c1", "the id");
        tap_is_str(cJSON_GetStringValue(cJSON_GetObjectItem(j, "ociVersion")), "1.3.0", "ociVersion 1.3.0");
        tap_ok(!cJSON_GetObjectItem(j, "pid"), "no pid while creating");
        const char *created = cJSON_GetStringValue(cJSON_GetObjectItem(j, "created"));
        struct tm tm = {};
        const char *rest = created ? strptime(created, "%Y-%m-%dT%H:%M:%S.", &tm) : NULL;
        tap_ok(rest && strlen(rest) == 10 && rest[9] == 'Z' && strspn(rest, "0123456789") == 9,
               "created is RFC 3339 with nanoseconds in UTC: %s", strna(created));
        tap_ok(!has_temporaries(".", "\\.new-"), "no temporary directory is left in the root");
        tap_ok(!has_temporaries("c1", "state\\.json\\.tmp"), "no temporary state file is left");

        /* The creator holds the lock: another open file description cannot take it. */
        lock = state_path("c1", "lock");
        _cleanup_close_ int lfd = open(lock, O_RDONLY | O_CLOEXEC);
        tap_ok(lfd >= 0 && flock(lfd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK, "container_new() holds the lock");

        /* While it does, a reader sees "creating"; once it is gone, "stopped". */
        tap_is_int(container_load(root, "c1", CONTAINER_LOCK_NONE, &d, &err), 0, "load while the creator lives");
        tap_is_int(container_status(d), CONTAINER_CREATING, "the creator holds the lock: creating");
        c = (container_free(c), NULL);
        tap_is_int(container_status(d), CONTAINER_STOPPED, "the creator is gone without committing: stopped");
        tap_ok(flock(lfd, LOCK_SH | LOCK_NB) == 0, "the lock is free once the creator is gone");
        (void) flock(lfd, LOCK_UN);

        /* The same id again. */
        tap_is_int(container_new(root, "c1", &c, &err), -EEXIST, "container_new() of an existing id: -EEXIST");
        tap_is_str(err, "container \"c1\" already exists", "... with a message naming it");
        tap_ok(c == NULL, "... and no container");
        tap_ok(!has_temporaries(".", "\\.new-"), "... and no temporary directory is left");

        /* An invalid id: nothing is made. */
        tap_is_int(container_new(root, "../evil", &c, &err), -EINVAL, "container_new() of an invalid id: -EINVAL");
        _cleanup_free_ char *evil = NULL;
        if (asprintf(&evil, "%s/../evil", root) < 0)
                abort();
        tap_ok(access(evil, F_OK) < 0 && !has_temporaries(".", "\\.new-"), "... and nothing is created");
        tap_is_int(d ? container_remove(d) : -1, 0, "remove c1");
}

static void test_sweep(void) {
        _cleanup_(container_freep) Container *c = NULL;
        _cleanup_free_ char *stale = NULL, *fresh = NULL;
        struct timespec old[2] = { { .tv_sec = time(NULL) - 3600 }, { .tv_sec = time(NULL) - 3600 } };

        /* A create killed before its rename leaves .new-*: swept once it is old and unlocked. */
        if (asprintf(&stale, "%s/.new-1-dead", root) < 0 || asprintf(&fresh, "%s/.new-2-busy", root) < 0)
                abort();
        tap_ok(mkdir(stale, 0700) == 0 && mkdir(fresh, 0700) == 0, "make an old and a fresh temporary directory");
        _cleanup_free_ char *junk = NULL;
        if (asprintf(&junk, "%s/state.json", stale) < 0)
                abort();
        close(open(junk, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        tap_ok(utimensat(AT_FDCWD, stale, old, 0) == 0, "age the old one by an hour");
        tap_ok(has_temporaries(".", "\\.new-1-dead"), "the temporary directory is seen as one");
        tap_is_int(container_new(root, "c-sweep", &c, NULL), 0, "container_new()");
        tap_ok(access(stale, F_OK) < 0, "the abandoned temporary directory is swept");
        tap_ok(access(fresh, F_OK) == 0, "a fresh one (a create in progress) is left alone");
        (void) rmdir(fresh);
        tap_is_int(container_remove(c), 0, "remove it");
}

static void test_roundtrip(void) {
        _cleanup_(container_freep) Container *c = NULL, *l = NULL;
        _cleanup_free_ char *err = NULL, *cfg = NULL;
        size_t cfg_len = 0;
        uint64_t st = 0;

        if (!tap_is_int(container_new(root, "rt", &c, &err), 0, "container_new(rt)"))
                return;
        c->recorded = CONTAINER_RUNNING;
        c->pid = getpid();
        tap_ok(pid_get_start_time(c->pid, &st) == 0 && st > 0, "our own start time");
        c->pid_start_time = st;
        c->bundle = strdup("/srv/bundle with space");
        c->rootfs = strdup("/srv/bundle with space/rootfs");
        c->owner = strdup("root");
        c->unit = strdup("sdrun-rt.scope");
        c->slice = strdup("machine.slice");
        c->cgroup = strdup("/machine.slice/sdrun-rt.scope");
        c->machine = strdup("rt");
        c->user_bus = true;
        c->annotations = cJSON_Parse("{\"io.kubernetes.pod\":\"p\",\"quote\":\"a\\\"b\"}");
        _cleanup_free_ char *created = strdup(c->created);

        tap_is_int(container_save(c), 0, "container_save()");
        tap_is_int(container_save_config(c, "{\"x\":1}", 7), 0, "container_save_config()");
        tap_is_int(container_load(root, "rt", CONTAINER_LOCK_NONE, &l, &err), 0, "container_load(): %s", strna(err));
        if (!l)
                return;
        tap_is_int(l->recorded, CONTAINER_RUNNING, "round trip: status");
        tap_is_int(l->pid, getpid(), "round trip: pid");
        tap_is_int(l->pid_start_time, st, "round trip: pid start time");
        tap_is_str(l->bundle, "/srv/bundle with space", "round trip: bundle");
        tap_is_str(l->rootfs, "/srv/bundle with space/rootfs", "round trip: rootfs");
        tap_is_str(l->created, created, "round trip: created");
        tap_is_str(l->owner, "root", "round trip: owner");
        tap_is_str(l->unit, "sdrun-rt.scope", "round trip: unit");
        tap_is_str(l->slice, "machine.slice", "round trip: slice");
        tap_is_str(l->cgroup, "/machine.slice/sdrun-rt.scope", "round trip: cgroup");
        tap_is_str(l->machine, "rt", "round trip: machine");
        tap_ok(l->user_bus, "round trip: userBus");
        tap_ok(cJSON_Compare(l->annotations, c->annotations, true), "round trip: annotations");
        tap_ok(!l->corrupt && l->lock_fd < 0, "loaded without the lock, not corrupt");
        tap_is_int(container_read_config(l, &cfg, &cfg_len), 0, "container_read_config()");
        tap_ok(cfg && cfg_len == 7 && streq(cfg, "{\"x\":1}"), "the config round trips");

        /* Our own pid, with our start time: alive. A start time that does not match is a reused pid. */
        tap_is_int(container_status(l), CONTAINER_RUNNING, "recorded running, the pid lives: running");
        _cleanup_close_ int pidfd = container_open_pidfd(l);
        tap_ok(pidfd >= 0, "container_open_pidfd() of a live pid");
        l->pid_start_time = st + 1;
        tap_is_int(container_status(l), CONTAINER_STOPPED, "the pid with another start time (reused): stopped");
        tap_is_int(container_open_pidfd(l), -ESRCH, "... and no pidfd for it");
        l->pid_start_time = st;

        /* The write is atomic: a new file replaces the old one by rename, a reader keeps a whole old one. */
        _cleanup_free_ char *sp = state_path("rt", "state.json");
        struct stat before, after;
        _cleanup_close_ int old_fd = open(sp, O_RDONLY | O_CLOEXEC);
        tap_ok(old_fd >= 0 && fstat(old_fd, &before) == 0, "open state.json as a reader");
        c->recorded = CONTAINER_STOPPED;
        tap_is_int(container_save(c), 0, "container_save() again");
        tap_ok(stat(sp, &after) == 0 && after.st_ino != before.st_ino, "state.json is a new file (renamed into place)");
        char buf[8192];
        ssize_t k = pread(old_fd, buf, sizeof buf - 1, 0);
        buf[MAX(k, 0)] = 0;
        tap_ok(k > 0 && strstr(buf, "\"running\"") && buf[k - 1] != 0, "the reader's file is whole and unchanged");
        tap_ok(!has_temporaries("rt", "state\\.json\\.tmp"), "no temporary file is left");
        tap_ok((after.st_mode & 0777) == 0600, "state.json is 0600");

        /* A pid without its start time cannot be verified and is never used. */
        c->recorded = CONTAINER_RUNNING;
        c->pid = 1;
        c->pid_start_time = 0;
        tap_is_int(container_save(c), 0, "save a pid without a start time");
        l = (container_free(l), NULL);
        tap_is_int(container_load(root, "rt", CONTAINER_LOCK_NONE, &l, NULL), 0, "load it");
        tap_ok(l && l->pid == 0, "the unverifiable pid is dropped");
        tap_ok(l && container_status(l) == CONTAINER_STOPPED, "... and the container is stopped");
        tap_is_int(l ? container_open_pidfd(l) : 0, -ESRCH, "... with no pidfd (never pid 0 or 1)");
        tap_is_int(container_remove(c), 0, "remove rt");
}

static void test_dead_pid(void) {
        _cleanup_(container_freep) Container *c = NULL;
        uint64_t st = 0;
        pid_t pid;

        if (!tap_is_int(container_new(root, "dead", &c, NULL), 0, "container_new(dead)"))
                return;
        pid = fork();
        if (pid == 0) {
                pause();
                _exit(0);
        }
        tap_ok(pid > 0 && pid_get_start_time(pid, &st) == 0, "a child and its start time");
        c->recorded = CONTAINER_RUNNING;
        c->pid = pid;
        c->pid_start_time = st;
        tap_is_int(container_status(c), CONTAINER_RUNNING, "recorded running, the child lives: running");
        (void) kill(pid, SIGKILL);
        (void) waitid(P_PID, (id_t) pid, &(siginfo_t) {}, WEXITED | WNOWAIT);
        tap_is_int(container_status(c), CONTAINER_STOPPED, "the child is a zombie: stopped");
        (void) waitpid(pid, NULL, 0);
        tap_is_int(container_status(c), CONTAINER_STOPPED, "the child is reaped: stopped");
        c->recorded = CONTAINER_PAUSED;
        tap_is_int(container_status(c), CONTAINER_STOPPED, "recorded paused, the pid is gone: stopped");
        c->recorded = CONTAINER_STOPPED;
        tap_is_int(container_status(c), CONTAINER_STOPPED, "recorded stopped: stopped");
        tap_is_int(container_remove(c), 0, "remove it");
}

static void test_created_start_socket(void) {
        _cleanup_(container_freep) Container *c = NULL;
        _cleanup_free_ char *sock = NULL;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        uint64_t st = 0;

        if (!tap_is_int(container_new(root, "cr", &c, NULL), 0, "container_new(cr)"))
                return;
        c->recorded = CONTAINER_CREATED;
        c->pid = getpid();
        (void) pid_get_start_time(c->pid, &st);
        c->pid_start_time = st;

        /* The init listens on start.sock until `start` connects; then it execs and the socket is gone. */
        sock = state_path("cr", START_SOCKET_NAME);
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock);
        _cleanup_close_ int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        tap_ok(l >= 0 && bind(l, (struct sockaddr *) &sa, sizeof sa) == 0 && listen(l, 4) == 0, "listen on start.sock");
        tap_is_int(container_status(c), CONTAINER_CREATED, "recorded created, the init listens: created");
        l = safe_close(l);
        tap_is_int(container_status(c), CONTAINER_RUNNING, "nobody listens any more (the init exec'd): running");
        tap_is_int(container_remove(c), 0, "remove it");
}

static void test_missing_and_corrupt(void) {
        _cleanup_(container_freep) Container *c = NULL, *l = NULL;
        _cleanup_free_ char *err = NULL, *dir = NULL, *sp = NULL;

        tap_is_int(container_load(root, "nope", CONTAINER_LOCK_NONE, &l, &err), -ENOENT, "load of a missing id: -ENOENT");
        tap_is_str(err, "container \"nope\" does not exist", "... \"does not exist\"");
        tap_is_int(container_load(root, "nope", CONTAINER_LOCK_EXCLUSIVE, &l, &err), -ENOENT, "also with the lock");
        tap_is_int(container_load("/nonexistent/root", "x", CONTAINER_LOCK_NONE, &l, &err), -ENOENT,
                   "load in a missing root: -ENOENT");
        tap_is_int(container_load(root, "..", CONTAINER_LOCK_NONE, &l, &err), -EINVAL, "load of an invalid id: -EINVAL");
        tap_is_int(container_load(root, "a/../../etc", CONTAINER_LOCK_NONE, &l, &err), -EINVAL,
                   "load of a path as id: -EINVAL");

        if (!tap_is_int(container_new(root, "bad", &c, NULL), 0, "container_new(bad)"))
                return;
        c = (container_free(c), NULL);

        /* A directory without state.json (between mkdir and the first write): creating, the creator decides. */
        sp = state_path("bad", "state.json");
        tap_ok(unlink(sp) == 0, "remove state.json");
        tap_is_int(container_load(root, "bad", CONTAINER_LOCK_NONE, &l, &err), 0, "load without state.json");
        tap_ok(l && l->recorded == CONTAINER_CREATING, "recorded creating");
        tap_ok(l && container_status(l) == CONTAINER_STOPPED, "nobody holds the lock: stopped");
        l = (container_free(l), NULL);

        static const struct {
                const char *json, *what;
        } corrupt[] = {
                { "", "an empty file" },
                { "{\"status\":\"running\"", "truncated JSON" },
                { "[]", "an array" },
                { "{\"id\":\"bad\"}", "no status" },
                { "{\"status\":\"exploded\"}", "an unknown status" },
                { "{\"status\":3}", "a status that is not a string" },
                { "{\"status\":\"running\",\"pid\":-1}", "a negative pid" },
                { "{\"status\":\"running\",\"pid\":\"12\"}", "a pid that is a string" },
                { "{\"status\":\"running\",\"pid\":99999999}", "a pid beyond pid_max" },
                { "{\"status\":\"running\",\"bundle\":7}", "a bundle that is not a string" },
                { "{\"status\":\"running\",\"sdrun\":{\"unit\":[]}}", "a unit that is not a string" },
        };
        for (size_t i = 0; i < ELEMENTSOF(corrupt); i++) {
                write_state_file("bad", corrupt[i].json);
                int r = container_load(root, "bad", CONTAINER_LOCK_NONE, &l, &err);
                tap_ok(r == -EBADMSG && !l, "corrupt state.json (%s): load fails with -EBADMSG (%d)", corrupt[i].what, r);
                l = (container_free(l), NULL);
        }
        tap_ok(err && strstr(err, "state of container \"bad\" is corrupt") && strstr(err, "use delete --force"),
               "the message says corrupt and suggests delete --force: %s", strna(err));

        write_state_file("bad", "{\"status\":\"running\",\"pid\":1,\"bundle\":\"/b\",\"sdrun\":{\"pidStartTime\":\"5\"}");
        tap_is_int(container_load_salvage(root, "bad", CONTAINER_LOCK_EXCLUSIVE, &l, &err), 0,
                   "container_load_salvage() of a corrupt state.json succeeds");
        tap_ok(l && l->corrupt && l->recorded == CONTAINER_STOPPED && l->pid == 0 && !l->bundle && streq(l->id, "bad"),
               "salvaged: corrupt, stopped, only the id is known");
        tap_ok(l && l->dir_fd >= 0 && l->lock_fd >= 0, "salvaged: the directory and the lock are held");
        tap_ok(l && container_status(l) == CONTAINER_STOPPED, "salvaged: status stopped");
        tap_is_int(l ? container_remove(l) : -1, 0, "a salvaged container can be removed");
        if (asprintf(&dir, "%s/bad", root) < 0)
                abort();
        tap_ok(access(dir, F_OK) < 0, "its directory is gone");
}

/* The state format: written with the release; a newer format is refused naming both releases, never
 * misread, not even salvaged by delete --force; an older state (no format field) is read. */
static void test_state_format(void) {
        _cleanup_(container_freep) Container *c = NULL, *l = NULL;
        _cleanup_json_ cJSON *j = NULL;
        _cleanup_free_ char *err = NULL, *s = NULL, *want = NULL;
        const cJSON *sd;

        if (!tap_is_int(container_new(root, "fmt", &c, NULL), 0, "container_new(fmt)"))
                return;
        c->recorded = CONTAINER_STOPPED;
        tap_is_int(container_save(c), 0, "container_save()");
        s = read_state_file("fmt");
        tap_ok(s && json_parse(s, strlen(s), &j, NULL) == 0, "state.json parses");
        sd = cJSON_GetObjectItemCaseSensitive(j, "sdrun");
        tap_ok(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(sd, "stateFormat")) &&
                       cJSON_GetObjectItemCaseSensitive(sd, "stateFormat")->valuedouble == STATE_FORMAT,
               "sdrun.stateFormat is %u", STATE_FORMAT);
        tap_ok(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(sd, "version")) &&
                       streq(cJSON_GetObjectItemCaseSensitive(sd, "version")->valuestring, PACKAGE_VERSION),
               "sdrun.version is " PACKAGE_VERSION);
        c = (container_free(c), NULL);

        /* What releases before the field wrote: read as format 1. */
        write_state_file("fmt", "{\"ociVersion\":\"1.3.0\",\"id\":\"fmt\",\"status\":\"stopped\",\"bundle\":\"/b\","
                                "\"sdrun\":{\"unit\":\"sdrun-fmt.scope\",\"pidStartTime\":\"0\"}}");
        tap_is_int(container_load(root, "fmt", CONTAINER_LOCK_NONE, &l, &err), 0, "a state without stateFormat loads");
        tap_ok(l && streq_ptr(l->unit, "sdrun-fmt.scope") && streq_ptr(l->bundle, "/b"), "... and is read");
        l = (container_free(l), NULL);

        /* A newer release's. */
        write_state_file("fmt", "{\"ociVersion\":\"1.3.0\",\"id\":\"fmt\",\"status\":\"running\",\"pid\":1,"
                                "\"bundle\":\"/b\",\"sdrun\":{\"pidStartTime\":\"5\",\"stateFormat\":99,"
                                "\"version\":\"9.9.0\"}}");
        tap_is_int(container_load(root, "fmt", CONTAINER_LOCK_NONE, &l, &err), -EPROTONOSUPPORT,
                   "a state of a newer format: -EPROTONOSUPPORT");
        tap_ok(!l, "... and no container");
        if (asprintf(&want,
                     "state of container \"fmt\" was written by sdrun 9.9.0 in state format 99; this is sdrun %s, "
                     "which reads state formats up to %u: manage the container with sdrun 9.9.0 or newer",
                     PACKAGE_VERSION, STATE_FORMAT) < 0)
                abort();
        tap_is_str(err, want, "the message names both releases and both formats");
        tap_is_int(container_load_salvage(root, "fmt", CONTAINER_LOCK_EXCLUSIVE, &l, &err), -EPROTONOSUPPORT,
                   "not salvaged either (delete --force)");
        tap_ok(!l, "... and no container");
        l = (container_free(l), NULL);

        write_state_file("fmt", "{\"status\":\"stopped\",\"sdrun\":{\"stateFormat\":\"2\"}}");
        tap_is_int(container_load(root, "fmt", CONTAINER_LOCK_NONE, &l, &err), -EBADMSG,
                   "a stateFormat that is not a number: corrupt");
        l = (container_free(l), NULL);
        write_state_file("fmt", "{\"status\":\"stopped\"}");
        tap_is_int(container_load(root, "fmt", CONTAINER_LOCK_EXCLUSIVE, &l, NULL), 0, "load it again");
        tap_is_int(l ? container_remove(l) : -1, 0, "and remove it");
}

static void test_lock(void) {
        _cleanup_(container_freep) Container *c = NULL, *a = NULL;
        _cleanup_free_ char *lock = NULL;

        if (!tap_is_int(container_new(root, "lk", &c, NULL), 0, "container_new(lk)"))
                return;
        c = (container_free(c), NULL);
        tap_is_int(container_load(root, "lk", CONTAINER_LOCK_EXCLUSIVE, &a, NULL), 0, "load with the exclusive lock");
        lock = state_path("lk", "lock");
        _cleanup_close_ int fd = open(lock, O_RDONLY | O_CLOEXEC);
        tap_ok(fd >= 0 && flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK, "the lock is held");
        tap_ok(a && a->lock_fd >= 0 && (fcntl(a->lock_fd, F_GETFD) & FD_CLOEXEC), "the lock fd is close-on-exec");
        tap_ok(a && (fcntl(a->dir_fd, F_GETFD) & FD_CLOEXEC), "the directory fd is close-on-exec");
        a = (container_free(a), NULL);
        tap_ok(flock(fd, LOCK_SH | LOCK_NB) == 0, "container_free() releases it");
        (void) flock(fd, LOCK_UN);

        /* A state directory whose lock file is missing is not a container. */
        tap_ok(unlink(lock) == 0, "remove the lock file");
        tap_is_int(container_load(root, "lk", CONTAINER_LOCK_EXCLUSIVE, &a, NULL), -ENOENT, "exclusive load without lock: -ENOENT");
        _cleanup_free_ char *dir = NULL;
        if (asprintf(&dir, "%s/lk", root) < 0)
                abort();
        _cleanup_free_ char *sp = state_path("lk", "state.json");
        (void) unlink(sp);
        (void) rmdir(dir);
}

static void test_oci_state(void) {
        _cleanup_(container_freep) Container *c = NULL;
        _cleanup_free_ char *s = NULL;
        _cleanup_json_ cJSON *j = NULL;

        if (!tap_is_int(container_new(root, "oci", &c, NULL), 0, "container_new(oci)"))
                return;
        c->pid = 4242;
        c->bundle = strdup("/b");
        c->unit = strdup("sdrun-oci.scope");
        c->annotations = cJSON_Parse("{\"k\":\"v\"}");

        tap_is_int(container_oci_state_string(c, CONTAINER_RUNNING, &s), 0, "OCI state string (running)");
        tap_is_str(s, "{\"ociVersion\":\"1.3.0\",\"id\":\"oci\",\"status\":\"running\",\"pid\":4242,\"bundle\":\"/b\",\"annotations\":{\"k\":\"v\"}}",
                   "running: ociVersion, id, status, pid, bundle, annotations, nothing of ours");
        s = mfree(s);
        for (ContainerStatus st = CONTAINER_CREATED; st <= CONTAINER_PAUSED; st++) {
                tap_is_int(container_oci_state(c, st, &j), 0, "OCI state (%s)", container_status_to_string(st));
                tap_ok(j && cJSON_GetNumberValue(cJSON_GetObjectItem(j, "pid")) == 4242, "%s: with the pid",
                       container_status_to_string(st));
                cJSON_Delete(TAKE_PTR(j));
        }
        tap_is_int(container_oci_state_string(c, CONTAINER_STOPPED, &s), 0, "OCI state string (stopped)");
        tap_is_str(s, "{\"ociVersion\":\"1.3.0\",\"id\":\"oci\",\"status\":\"stopped\",\"bundle\":\"/b\",\"annotations\":{\"k\":\"v\"}}",
                   "stopped: no pid");
        s = mfree(s);
        tap_is_int(container_oci_state_string(c, CONTAINER_CREATING, &s), 0, "OCI state string (creating)");
        tap_ok(s && !strstr(s, "\"pid\""), "creating: no pid");
        s = mfree(s);

        /* The state a hook reads: the pid it is given (as the hook sees it), never the recorded one. */
        tap_is_int(container_hook_state_string(c, CONTAINER_CREATED, 17, &s), 0, "hook state string (created, pid 17)");
        tap_is_str(s, "{\"ociVersion\":\"1.3.0\",\"id\":\"oci\",\"status\":\"created\",\"bundle\":\"/b\",\"annotations\":{\"k\":\"v\"},\"pid\":17}",
                   "hook state: status created and the hook's pid");
        s = mfree(s);
        tap_is_int(container_hook_state_string(c, CONTAINER_CREATING, 1, &s), 0, "hook state string (creating, pid 1)");
        tap_ok(s && strstr(s, "\"status\":\"creating\"") && strstr(s, "\"pid\":1}"),
               "hook state while creating: the pid is given even though state would hide it");
        s = mfree(s);
        tap_is_int(container_hook_state_string(c, CONTAINER_STOPPED, 0, &s), 0, "hook state string (stopped, no pid)");
        tap_ok(s && !strstr(s, "\"pid\"") && strstr(s, "\"status\":\"stopped\""), "poststop: stopped, no pid");
        s = mfree(s);
        c->annotations = (cJSON_Delete(c->annotations), NULL);
        c->bundle = mfree(c->bundle);
        tap_is_int(container_hook_state_string(c, CONTAINER_RUNNING, 5, &s), 0, "hook state without bundle and annotations");
        tap_is_str(s, "{\"ociVersion\":\"1.3.0\",\"id\":\"oci\",\"status\":\"running\",\"bundle\":\"\",\"pid\":5}",
                   "bundle is an empty string, no annotations key");
        tap_is_int(container_remove(c), 0, "remove it");
}

static void test_list_remove(void) {
        _cleanup_(container_freep) Container *a = NULL, *b = NULL;
        _cleanup_free_ char *p = NULL, *notify = NULL, *path = NULL;
        char **ids = NULL;
        size_t n = 0;

        tap_ok(container_new(root, "zeta", &a, NULL) == 0 && container_new(root, "alpha", &b, NULL) == 0,
               "two containers");
        if (asprintf(&p, "%s/plainfile", root) < 0 || asprintf(&notify, "%s/alpha/notify", root) < 0)
                abort();
        close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        _cleanup_free_ char *hidden = NULL;
        if (asprintf(&hidden, "%s/.hidden", root) < 0)
                abort();
        (void) mkdir(hidden, 0700);
        tap_is_int(container_list_ids(root, &ids, &n, NULL), 0, "container_list_ids()");
        tap_ok(n == 2 && ids && streq(ids[0], "alpha") && streq(ids[1], "zeta") && !ids[2],
               "sorted, without files and hidden directories (%zu)", n);
        for (size_t i = 0; i < n; i++)
                free(ids[i]);
        free(ids);
        (void) rmdir(hidden);
        (void) unlink(p);
        tap_ok(container_list_ids("/nonexistent/root", &ids, &n, NULL) == 0 && n == 0 && !ids, "a missing root lists nothing");

        tap_is_int(container_path(b, "start.sock", &path), 0, "container_path()");
        _cleanup_free_ char *want = NULL;
        if (asprintf(&want, "%s/alpha/start.sock", root) < 0)
                abort();
        tap_is_str(path, want, "container_path() is <root>/<id>/<name>");

        /* notify/ holds one level of files (NOTIFY_SOCKET). */
        _cleanup_free_ char *nf = NULL;
        if (asprintf(&nf, "%s/notify.sock", notify) < 0)
                abort();
        tap_ok(mkdir(notify, 0700) == 0 && close(open(nf, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) == 0,
               "a notify/ directory with a file");
        tap_is_int(container_remove(b), 0, "container_remove()");
        _cleanup_free_ char *dir = NULL;
        if (asprintf(&dir, "%s/alpha", root) < 0)
                abort();
        tap_ok(access(dir, F_OK) < 0, "the state directory is gone, with notify/");
        tap_is_int(container_remove(a), 0, "container_remove() of the other");
        tap_ok(container_list_ids(root, &ids, &n, NULL) == 0 && n == 0, "nothing is listed any more");
        free(ids);
}

/* A root or state directory that someone else owns or can write is refused, naming it: its owner could plant
 * a state whose poststop hook the caller's delete --force would run. */
static void test_untrusted(void) {
        _cleanup_(container_freep) Container *a = NULL, *b = NULL;
        _cleanup_free_ char *e = NULL, *dir = NULL;
        char r2[sizeof tmp + 32];
        char **ids = NULL;
        size_t n = 0;
        int fd = -EBADF;

        snprintf(r2, sizeof r2, "%s/untrusted", tmp);
        tap_is_int(state_root_open(r2, true, &fd, NULL), 0, "state_root_open() makes the root");
        struct stat st;
        tap_ok(fd >= 0 && fstat(fd, &st) == 0 && (st.st_mode & 07777) == 0711, "mode 0711 (%04o)",
               (unsigned) (st.st_mode & 07777));
        safe_close(fd);

        for (unsigned i = 0; i < 3; i++) {
                static const mode_t modes[] = { 0777, 01777, 0731 };
                _cleanup_(container_freep) Container *c = NULL;
                _cleanup_free_ char *err = NULL;
                tap_ok(chmod(r2, modes[i]) == 0, "chmod %04o", (unsigned) modes[i]);
                tap_is_int(container_new(r2, "x", &c, &err), -EPERM, "create refuses a root of mode %04o",
                           (unsigned) modes[i]);
                tap_ok(err && strstr(err, r2) && strstr(err, "writable by"), "naming it: %s", err ?: "(none)");
                free(err);
                err = NULL;
                tap_ok(container_list_ids(r2, &ids, &n, &err) == -EPERM && err && strstr(err, r2),
                       "list refuses it too");
        }
        tap_ok(chmod(r2, 0711) == 0 && container_new(r2, "x", &a, NULL) == 0, "0711 is fine");
        container_free(TAKE_PTR(a));
        if (asprintf(&dir, "%s/x", r2) < 0)
                abort();
        tap_ok(chmod(dir, 0770) == 0, "the state directory made group-writable");
        tap_is_int(container_load(r2, "x", CONTAINER_LOCK_NONE, &b, &e), -EPERM, "load refuses it");
        tap_ok(e && strstr(e, dir) && strstr(e, "its group"), "naming it: %s", e ?: "(none)");
        free(e);
        e = NULL;
        tap_is_int(container_load_salvage(r2, "x", CONTAINER_LOCK_EXCLUSIVE, &b, &e), -EPERM,
                   "so does salvage (delete --force)");
        if (geteuid() == 0) {
                tap_ok(chmod(dir, 0700) == 0 && chown(dir, 65534, 65534) == 0, "the state directory given away");
                free(e);
                e = NULL;
                tap_is_int(container_load(r2, "x", CONTAINER_LOCK_NONE, &b, &e), -EPERM,
                           "load refuses another user's state directory");
                tap_ok(e && strstr(e, dir) && strstr(e, "owned by uid 65534"), "naming it: %s", e ?: "(none)");
                tap_ok(chown(dir, 0, 0) == 0 && chown(r2, 65534, 65534) == 0, "the root given away");
                free(e);
                e = NULL;
                tap_is_int(container_load(r2, "x", CONTAINER_LOCK_NONE, &b, &e), -EPERM,
                           "load refuses another user's root");
                tap_ok(e && strstr(e, r2) && strstr(e, "owned by uid 65534"), "naming it: %s", e ?: "(none)");
        } else
                printf("# not root: the ownership checks need chown\n");
}

int main(void) {
        alarm(60); /* a hang is a failure, not a wait for the suite's timeout */
        if (!mkdtemp(tmp)) {
                perror("mkdtemp");
                return EXIT_FAILURE;
        }
        snprintf(root, sizeof root, "%s/run/sdrun", tmp);

        test_id();
        test_status_strings();
        test_new();
        test_sweep();
        test_roundtrip();
        test_dead_pid();
        test_created_start_socket();
        test_missing_and_corrupt();
        test_state_format();
        test_lock();
        test_oci_state();
        test_list_remove();
        test_untrusted();

        rm_rf(tmp);
        return tap_done();
}
