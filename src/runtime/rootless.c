/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error-util.h"
#include "fileio.h"
#include "log.h"
#include "macro.h"
#include "rootless.h"
#include "sdunit.h"

extern char **environ;

bool running_in_userns(void) {
        _cleanup_free_ char *buf = NULL;
        unsigned long a, b, n;

        /* The initial user namespace maps everything: "0 0 4294967295" and nothing else. */
        if (read_full_file_at(AT_FDCWD, "/proc/self/uid_map", 4096, &buf, NULL) < 0)
                return false;
        if (sscanf(buf, "%lu %lu %lu", &a, &b, &n) != 3)
                return true;
        const char *nl = strchr(buf, '\n');
        bool one_line = !nl || nl[1] == 0;
        return !(one_line && a == 0 && b == 0 && n == UINT32_MAX);
}

static int override = -1;

void rootless_set_override(int v) {
        override = v < 0 ? -1 : !!v;
}

bool rootless_detect(void) {
        const char *e = getenv("SDRUN_ROOTLESS");

        if (override >= 0)
                return override;
        if (e && streq(e, "1"))
                return true;
        if (e && streq(e, "0"))
                return false;
        return geteuid() != 0 || running_in_userns();
}

static bool is_single_self_mapping(const OciIdMapping *m, size_t n, uint32_t self) {
        return n == 1 && m[0].host_id == self && m[0].size == 1;
}

static int format_map(const OciIdMapping *m, size_t n, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                fprintf(f, "%" PRIu32 " %" PRIu32 " %" PRIu32 "\n", m[i].container_id, m[i].host_id,
                        m[i].size);
        if (fclose(f) != 0)
                return -ENOMEM;
        *ret = TAKE_PTR(buf);
        return 0;
}

static int write_map_file(pid_t pid, const char *file, const OciIdMapping *m, size_t n) {
        _cleanup_free_ char *buf = NULL;
        char path[64];
        int r;

        if (n == 0)
                return 0; /* no mapping given: nothing written, as before (ids then show as the overflow id) */
        r = format_map(m, n, &buf);
        if (r < 0)
                return r;
        snprintf(path, sizeof path, "/proc/%d/%s", (int) pid, file);
        return write_string_file(path, buf);
}

/* newuidmap PID cid hid size ... (shadow's setuid helpers; they check /etc/subuid or /etc/subgid). Its
 * stderr goes to ours: it names the range it refused. */
static int run_map_helper(const char *helper, pid_t pid, const OciIdMapping *m, size_t n, char **reterr) {
        _cleanup_free_ char **argv = NULL;
        _cleanup_free_ char *numbers = NULL;
        char pidbuf[32];
        size_t k = 0, off = 0;
        pid_t child;
        int status, r;

        argv = calloc(3 + 3 * n, sizeof(char *));
        numbers = malloc((3 * n + 1) * 12);
        if (!argv || !numbers)
                return -ENOMEM;
        snprintf(pidbuf, sizeof pidbuf, "%d", (int) pid);
        argv[k++] = (char *) helper;
        argv[k++] = pidbuf;
        for (size_t i = 0; i < n; i++) {
                uint32_t v[3] = { m[i].container_id, m[i].host_id, m[i].size };
                for (size_t j = 0; j < 3; j++) {
                        argv[k++] = numbers + off;
                        off += (size_t) snprintf(numbers + off, 12, "%" PRIu32, v[j]) + 1;
                }
        }
        r = posix_spawnp(&child, helper, NULL, NULL, argv, environ);
        if (r != 0)
                return errorf(reterr, r, "run %s: %s%s", helper, strerror(r),
                              r == ENOENT ? " (install the uidmap package, or map only your own id)" : "");
        while (waitpid(child, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return errorf(reterr, EPERM, "%s %s failed (%s %d): are the ranges in /etc/sub%cid?", helper,
                              pidbuf, WIFEXITED(status) ? "exit status" : "signal",
                              WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
                              helper[3] == 'u' ? 'u' : 'g');
        return 0;
}

/* what_uid, what_gid: the config fields the mappings come from; whose: the process whose namespace it is. For
 * the messages. */
static int write_id_maps(pid_t pid, const OciIdMapping *uid, size_t n_uid, const OciIdMapping *gid,
                         size_t n_gid, const char *what_uid, const char *what_gid, const char *whose,
                         char **reterr) {
        bool privileged = geteuid() == 0 && !getenv("SDRUN_TEST_FORCE_MAP_HELPERS");
        char path[64];
        int r;

        if (privileged || is_single_self_mapping(uid, n_uid, geteuid())) {
                r = write_map_file(pid, "uid_map", uid, n_uid);
                if (r < 0)
                        return errorf(reterr, r, "%s: write the uid map of %s: %s", what_uid, whose,
                                      strerror(-r));
        } else {
                r = run_map_helper("newuidmap", pid, uid, n_uid, reterr);
                if (r < 0)
                        return errwrap(reterr, r, "%s", what_uid);
        }

        if (privileged)
                r = write_map_file(pid, "gid_map", gid, n_gid);
        else if (is_single_self_mapping(gid, n_gid, getegid())) {
                /* An unprivileged gid_map needs setgroups(2) denied first: the container cannot drop
                 * supplementary groups it inherited (process.user.additionalGids is refused then). */
                snprintf(path, sizeof path, "/proc/%d/setgroups", (int) pid);
                r = write_string_file(path, "deny");
                if (r >= 0)
                        r = write_map_file(pid, "gid_map", gid, n_gid);
        } else {
                r = run_map_helper("newgidmap", pid, gid, n_gid, reterr);
                if (r < 0)
                        return errwrap(reterr, r, "%s", what_gid);
        }
        if (r < 0)
                return errorf(reterr, r, "%s: write the gid map of %s: %s", what_gid, whose, strerror(-r));
        return 0;
}

int userns_write_id_maps(pid_t pid, const OciConfig *c, char **reterr) {
        const OciLinux *l = &c->linux_;

        return write_id_maps(pid, l->uid_mappings, l->n_uid_mappings, l->gid_mappings, l->n_gid_mappings,
                             "linux.uidMappings", "linux.gidMappings", "the init", reterr);
}

int userns_open_mapped(const OciIdMapping *uid, size_t n_uid, const OciIdMapping *gid, size_t n_gid,
                       const char *what, int *ret, char **reterr) {
        _cleanup_free_ char *what_uid = NULL, *what_gid = NULL;
        _cleanup_close_pair_ int hold[2] = { -EBADF, -EBADF };
        int fd = -EBADF, r;
        char path[64];
        pid_t pid;

        if (asprintf(&what_uid, "%s.uidMappings", what) < 0 ||
            asprintf(&what_gid, "%s.gidMappings", what) < 0)
                return -ENOMEM;
        if (pipe2(hold, O_CLOEXEC) < 0)
                return -errno;
        /* The namespace's first process holds it until its fd is open: it only waits for the pipe to close
         * (also when we die), so it never outlives this function. */
        pid = (pid_t) syscall(SYS_clone, (unsigned long) (CLONE_NEWUSER | SIGCHLD), NULL, NULL, NULL, 0);
        if (pid < 0) {
                r = -errno;
                return errorf(reterr, r, "%s: create a user namespace for the id mapping: %s", what,
                              strerror(-r));
        }
        if (pid == 0) {
                char c;
                safe_close(hold[1]);
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                while (read(hold[0], &c, 1) < 0 && errno == EINTR)
                        ;
                _exit(EXIT_SUCCESS);
        }
        hold[0] = safe_close(hold[0]);
        r = write_id_maps(pid, uid, n_uid, gid, n_gid, what_uid, what_gid, "the id mapping's user namespace",
                          reterr);
        if (r >= 0) {
                snprintf(path, sizeof path, "/proc/%d/ns/user", (int) pid);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        r = errorf(reterr, -errno, "%s: open the id mapping's user namespace: %m", what);
        }
        hold[1] = safe_close(hold[1]);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
        if (r < 0)
                return r;
        *ret = fd;
        return 0;
}

/* Filesystems the kernel lets the root of a user namespace mount (FS_USERNS_MOUNT). cgroup: rootfs.c binds
 * the container's own cgroup where a fresh one cannot be mounted. */
static bool type_mountable_in_userns(const char *type) {
        static const char *const ok[] = { "proc",    "sysfs", "tmpfs",   "devpts", "mqueue", "cgroup",
                                          "cgroup2", "ramfs", "overlay", "fuse",   "binder" };

        FOREACH_ARRAY(t, ok, ELEMENTSOF(ok))
                if (streq(type, *t))
                        return true;
        return strneq(type, "fuse.", 5);
}

int rootless_validate_config(const OciConfig *c, char **reterr) {
        const char *path = NULL;

        for (size_t i = 0; i < c->n_mounts; i++) {
                const OciMount *m = &c->mounts[i];
                if (oci_mount_is_bind(m) || !m->type || type_mountable_in_userns(m->type))
                        continue;
                return errorf(
                        reterr, EPERM,
                        "mounts[%zu]: type \"%s\" on \"%s\" needs CAP_SYS_ADMIN on the host, which a rootless "
                        "container does not have (bind-mount it from the host instead)",
                        i, m->type, strna(m->destination));
        }

        /* Root of a user namespace already (Podman's): the container may share it. */
        if (geteuid() == 0)
                return 0;
        if (!oci_config_has_namespace(c, OCI_NS_USER, &path))
                return errorf(reterr, EPERM,
                              "linux.namespaces: running rootless (uid %u), a user namespace is required "
                              "(`sdrun spec --rootless` writes one)",
                              (unsigned) geteuid());
        if (!path) {
                if (c->linux_.n_uid_mappings == 0)
                        return errorf(reterr, EINVAL,
                                      "linux.uidMappings: required for a new user namespace when rootless");
                if (c->linux_.n_gid_mappings == 0)
                        return errorf(reterr, EINVAL,
                                      "linux.gidMappings: required for a new user namespace when rootless");
        }
        /* A new network namespace has only lo (Podman connects it with slirp4netns or pasta); one joined by
         * path is whatever its creator made. Devices are bound from the host (devices_create), never
         * mknod'ed; sysctls are checked against the container's namespaces (validate_config). */
        return 0;
}

int rootless_delegated_controllers(const char *manager_cgroup, CgroupLayout layout, char **ret) {
        _cleanup_free_ char *dir = NULL, *buf = NULL;
        int r;

        if (layout != CGROUP_LAYOUT_UNIFIED || isempty(manager_cgroup)) {
                *ret = strdup("");
                return *ret ? 0 : -ENOMEM;
        }
        r = cgroup_unified_dir(manager_cgroup, &dir);
        if (r < 0)
                return r;
        r = read_full_file_in(dir, "cgroup.controllers", 4096, &buf);
        if (r < 0)
                return r;
        buf[strcspn(buf, "\n")] = 0;
        *ret = TAKE_PTR(buf);
        return 0;
}

const char *unit_property_controller(const char *name) {
        static const struct {
                const char *prefix;
                const char *controller;
        } table[] = {
                { "MemoryAccounting", NULL },  { "Memory", "memory" },
                { "TasksAccounting", NULL },   { "TasksMax", "pids" },
                { "CPUAccounting", NULL },     { "CPU", "cpu" },
                { "IOAccounting", NULL },      { "IO", "io" },
                { "BlockIOAccounting", NULL }, { "BlockIO", "io" },
                { "AllowedCPUs", "cpuset" },   { "AllowedMemoryNodes", "cpuset" },
                { "DeviceAllow", "devices" },  { "DevicePolicy", "devices" },
        };

        FOREACH_ARRAY(t, table, ELEMENTSOF(table))
                if (strneq(name, t->prefix, strlen(t->prefix)))
                        return t->controller;
        return NULL;
}

static bool word_in_list(const char *list, const char *word) {
        size_t n = strlen(word);

        for (const char *p = list; p && *p;) {
                p += strspn(p, " ");
                if (strneq(p, word, n) && (p[n] == ' ' || p[n] == 0))
                        return true;
                p = strchr(p, ' ');
        }
        return false;
}

int rootless_filter_properties(UnitPropertyList *props, const char *delegated, CgroupLayout layout,
                               char **reterr) {
        for (size_t i = 0; i < props->n_items;) {
                const char *name = props->items[i].name;
                const char *ctl = unit_property_controller(name);

                if (!ctl || (!streq(ctl, "devices") && word_in_list(delegated, ctl))) {
                        i++;
                        continue;
                }
                if (streq(ctl, "devices"))
                        log_debug("rootless: %s= not applied: a user manager has no device cgroup", name);
                else if (layout == CGROUP_LAYOUT_UNIFIED)
                        /* Under Podman a warning would be lost in conmon's log: refuse, as runc does. */
                        return errorf(
                                reterr, EOPNOTSUPP,
                                "linux.resources: %s= needs the %s controller, which is not delegated to the "
                                "user manager (it has \"%s\"): not applied",
                                name, ctl, strempty(delegated));
                else
                        log_warning(
                                "linux.resources: %s= needs the %s controller: on cgroup v1 nothing is delegated "
                                "to a user manager: not applied",
                                name, ctl);
                _cleanup_free_ char *copy = strdup(name);
                if (!copy)
                        return -ENOMEM;
                unit_property_list_remove(props, copy);
        }
        return 0;
}

void rootless_filter_writes(CgroupFileWrites *w, CgroupLayout layout) {
        size_t n = 0;

        if (layout == CGROUP_LAYOUT_UNIFIED)
                return;
        for (size_t i = 0; i < w->n_items; i++) {
                CgroupFileWrite *e = &w->items[i];
                if (isempty(e->controller)) {
                        w->items[n++] = *e;
                        continue;
                }
                log_warning(
                        "%s: the %s file %s needs the %s controller: on cgroup v1 nothing is delegated to a "
                        "user manager: not applied",
                        e->field ?: "linux.resources", e->controller, e->file, e->controller);
                free(e->controller);
                free(e->file);
                free(e->value);
                free(e->field);
        }
        w->n_items = n;
}

void cgroup_check_host_controllers(const UnitPropertyList *props, const char *cgroupfs_root) {
        _cleanup_free_ char *have = NULL;
        int r;

        for (size_t i = 0; i < props->n_items; i++) {
                const char *name = props->items[i].name, *ctl = unit_property_controller(name);

                if (!ctl || streq(ctl, "devices"))
                        continue;
                if (!have) {
                        r = read_full_file_in(cgroupfs_root, "cgroup.controllers", 4096, &have);
                        if (r < 0) {
                                log_debug("cannot read %s/cgroup.controllers (%s): controllers not checked",
                                          cgroupfs_root, strerror(-r));
                                return;
                        }
                        have[strcspn(have, "\n")] = 0;
                }
                if (!word_in_list(have, ctl))
                        log_warning(
                                "linux.resources: %s= needs the %s controller, which this host's cgroup v2 "
                                "hierarchy does not offer (%s/cgroup.controllers has \"%s\"): not applied",
                                name, ctl, cgroupfs_root, have);
        }
}

int rootless_filter_resources(SdUnitBus *bus, CgroupLayout layout, UnitPropertyList *props, char **reterr) {
        _cleanup_free_ char *manager_cgroup = NULL, *delegated = NULL;
        int r;

        if (layout == CGROUP_LAYOUT_UNIFIED) {
                r = sdunit_get_manager_control_group(bus, &manager_cgroup, reterr);
                if (r < 0)
                        return errwrap(reterr, r, "find the user manager's cgroup");
        }
        r = rootless_delegated_controllers(manager_cgroup, layout, &delegated);
        if (r < 0)
                return errorf(reterr, r, "read the controllers delegated to the user manager (%s): %s",
                              strna(manager_cgroup), strerror(-r));
        log_debug("rootless: controllers delegated to the user manager: \"%s\"", delegated);
        return rootless_filter_properties(props, delegated, layout, reterr);
}
