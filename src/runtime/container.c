/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "become.h"
#include "bootstrap.h"
#include "cgroup-props.h"
#include "cgroup-util.h"
#include "console.h"
#include "container.h"
#include "criu.h"
#include "fileio.h"
#include "hooks.h"
#include "log.h"
#include "error-util.h"
#include "host-credentials.h"
#include "macro.h"
#include "netdev.h"
#include "notify.h"
#include "oci-config.h"
#include "process-util.h"
#include "rootless.h"
#include "sdunit.h"
#include "socket-util.h"
#include "seccomp-cache.h"
#include "seccomp-filter.h"
#include "state.h"
#include "string-util.h"
#include "sync-server.h"
#include "sync.h"

#define START_SOCKET START_SOCKET_NAME
#define MACHINE_ANNOTATION "io.github.sdrun.machine"
/* The smallest linux.resources.memory.limit a container can start with (the engines' own floors are 4-6 MiB). */
#define MEMORY_LIMIT_MIN (4 << 20)
/* crun's name: the init runs in this sub-cgroup of the scope, which then has no processes of its own. */
#define SUBGROUP_ANNOTATION "run.oci.systemd.subgroup"
#define SCOPE_JOB_TIMEOUT_USEC (30 * USEC_PER_SEC)
#define SETUP_TIMEOUT_USEC (5 * 60 * USEC_PER_SEC)
#define UNIT_STOP_TIMEOUT_USEC (30 * USEC_PER_SEC)

void test_stop_at(const char *step) {
#if ENABLE_TEST_INJECTION
        const char *e = getenv("SDRUN_TEST_STOP_AT");
        if (e && streq(e, step)) {
                log_debug("SDRUN_TEST_STOP_AT=%s: killing myself", step);
                raise(SIGKILL);
        }
#else
        (void) step;
#endif
}

/* Whether the container has a namespace of type t of its own: a new one, or one joined by path that is not
 * the runtime's own (runc compares the joined namespace with its own the same way). Podman, CNI/netavark
 * and Kubernetes pods join a network namespace they prepared by path; joining the host's is what the
 * checks below must catch. A path that cannot be opened is not judged here: joining it fails later with
 * its own message. */
static bool has_own_namespace(const OciConfig *c, OciNamespaceType t, const char *proc_name) {
        struct stat a, b;
        const char *path = NULL;
        char self[64];

        if (!oci_config_has_namespace(c, t, &path))
                return false;
        if (!path)
                return true;
        snprintf(self, sizeof self, "/proc/self/ns/%s", proc_name);
        if (stat(path, &a) < 0 || stat(self, &b) < 0)
                return true;
        return a.st_dev != b.st_dev || a.st_ino != b.st_ino;
}

static bool is_paths_ns_sysctl_ok(const OciConfig *c, const char *key, char **reterr) {
        if (strneq(key, "net.", 4)) {
                if (!has_own_namespace(c, OCI_NS_NETWORK, "net")) {
                        errorf(reterr, EINVAL,
                               "linux.sysctl: \"%s\" needs a network namespace of the container's own (the container shares the host's)",
                               key);
                        return false;
                }
                return true;
        }
        /* runc and crun refuse kernel.hostname whether "hostname" is set or not; crun also refuses
         * kernel.domainname next to "domainname". */
        if (streq(key, "kernel.hostname")) {
                errorf(reterr, EINVAL,
                       "linux.sysctl: \"%s\" conflicts with the \"hostname\" field: set the hostname there",
                       key);
                return false;
        }
        if (streq(key, "kernel.domainname") && !isempty(c->domainname)) {
                errorf(reterr, EINVAL, "linux.sysctl: \"%s\" conflicts with the \"domainname\" field", key);
                return false;
        }
        if (streq(key, "kernel.domainname")) {
                if (!has_own_namespace(c, OCI_NS_UTS, "uts")) {
                        errorf(reterr, EINVAL,
                               "linux.sysctl: \"%s\" needs a uts namespace of the container's own", key);
                        return false;
                }
                return true;
        }
        if (strneq(key, "kernel.msg", 10) || strneq(key, "kernel.sem", 10) ||
            strneq(key, "kernel.shm", 10) || strneq(key, "fs.mqueue.", 10)) {
                if (!has_own_namespace(c, OCI_NS_IPC, "ipc")) {
                        errorf(reterr, EINVAL,
                               "linux.sysctl: \"%s\" needs an ipc namespace of the container's own", key);
                        return false;
                }
                return true;
        }
        errorf(reterr, EINVAL, "linux.sysctl: \"%s\" is not namespaced: setting it would change the host",
               key);
        return false;
}

/* A container without a mount namespace of its own (none in linux.namespaces, or the runtime's own joined by
 * path) shares the runtime's mount tree, the host's: it runs only when it asks for nothing to be mounted or
 * created there, as host-level agents do (root.path the host's "/", no mounts); the init then skips every
 * rootfs step. runc 1.1 and crun 1.8 run any such config: both make mounts[] in the runtime's mount
 * namespace and leave them there, create the default devices, linux.devices and the /dev links in the root's
 * /dev and replace its /dev/ptmx with a symlink (with root "/", the host's), and chroot into root.path; runc
 * also makes the host's mount tree rslave (its shared mounts propagate no more) and binds root.path onto
 * itself (with root "/", a second copy of every host mount, left behind). What would change the host's
 * mounts or /dev is refused, naming the field. */
static int validate_without_mount_namespace(const OciConfig *c, const char *rootfs, char **reterr) {
        const OciLinux *l = &c->linux_;
        const char *why;

        if (has_own_namespace(c, OCI_NS_MOUNT, "mnt"))
                return 0;
        why = oci_config_has_namespace(c, OCI_NS_MOUNT, NULL)
                      ? "needs a mount namespace of the container's own (the one linux.namespaces joins by "
                        "path is the runtime's)"
                      : "needs a mount namespace (linux.namespaces has no \"mount\")";
        if (!streq(rootfs, "/"))
                return errorf(reterr, EINVAL,
                              "root.path: \"%s\" is not the host's \"/\": a root of the container's own %s",
                              rootfs, why);
        if (c->root_readonly)
                return errorf(reterr, EINVAL, "root.readonly: a read-only root %s", why);
        if (c->n_mounts > 0) {
                const OciMount *m = &c->mounts[0];
                return errorf(reterr, EINVAL, "mounts[0]: mount \"%s\" on \"%s\"%s%s%s %s",
                              strempty(m->source), strempty(m->destination),
                              isempty(m->type) ? "" : " (type ", strempty(m->type),
                              isempty(m->type) ? "" : ")", why);
        }
        if (l->masked_paths && l->masked_paths[0])
                return errorf(reterr, EINVAL, "linux.maskedPaths[0]: masking \"%s\" %s", l->masked_paths[0],
                              why);
        if (l->readonly_paths && l->readonly_paths[0])
                return errorf(reterr, EINVAL, "linux.readonlyPaths[0]: making \"%s\" read-only %s",
                              l->readonly_paths[0], why);
        if (!isempty(l->rootfs_propagation))
                return errorf(reterr, EINVAL, "linux.rootfsPropagation: \"%s\" %s", l->rootfs_propagation,
                              why);
        if (l->n_devices > 0)
                return errorf(reterr, EINVAL, "linux.devices[0]: creating \"%s\" %s", l->devices[0].path,
                              why);
        return 0;
}

/* Everything that can be refused from config.json alone is refused here, before any state, unit, process
 * or mount exists. */
/* How long start waits for an init that hung up without exec'ing to show its exit. */
#define INIT_EXIT_GRACE_USEC (2 * USEC_PER_SEC)

static int validate_config(const OciConfig *c, const CreateOptions *o, char **reterr) {
        if (c->has_process && c->process.terminal && !o->console_socket && !o->ret_console_master)
                return errorf(reterr, EINVAL, "process.terminal is true: --console-socket is required");
        if (o->console_socket && !(c->has_process && c->process.terminal))
                return errorf(reterr, EINVAL, "--console-socket given but process.terminal is false");
        for (size_t i = 0; i < c->linux_.n_sysctl; i++)
                if (!is_paths_ns_sysctl_ok(c, c->linux_.sysctl[i].key, reterr))
                        return -EINVAL;
        /* hostname/domainname are set in the container's uts namespace, new or joined by path (a pod's);
         * never in the runtime's own, which would rename the host. */
        if ((!isempty(c->hostname) || !isempty(c->domainname)) && !has_own_namespace(c, OCI_NS_UTS, "uts"))
                return errorf(reterr, EINVAL,
                              "%s: the uts namespace joined by path is the host's: setting it would "
                              "rename the host",
                              !isempty(c->hostname) ? "hostname" : "domainname");
        /* (uid_t) -1 means "leave unchanged" to setresuid()/setresgid(): the process would keep running as
         * root. Never a valid id for the container's process. */
        if (c->has_process) {
                if (c->process.user.uid == UINT32_MAX)
                        return errorf(reterr, EINVAL, "process.user.uid: %" PRIu32 " is not a valid user id",
                                      UINT32_MAX);
                if (c->process.user.gid == UINT32_MAX)
                        return errorf(reterr, EINVAL,
                                      "process.user.gid: %" PRIu32 " is not a valid group id", UINT32_MAX);
                for (size_t i = 0; i < c->process.user.n_additional_gids; i++)
                        if (c->process.user.additional_gids[i] == UINT32_MAX)
                                return errorf(reterr, EINVAL,
                                              "process.user.additionalGids[%zu]: %" PRIu32
                                              " is not a valid group id",
                                              i, UINT32_MAX);
        }
        const char *subgroup = oci_config_annotation(c, SUBGROUP_ANNOTATION);
        if (subgroup && (isempty(subgroup) || strchr(subgroup, '/') || streq(subgroup, ".") ||
                         streq(subgroup, "..") || strneq(subgroup, "cgroup.", 7) || strlen(subgroup) > 255))
                return errorf(reterr, EINVAL,
                              "annotations[\"" SUBGROUP_ANNOTATION "\"]: invalid sub-cgroup name \"%s\"",
                              subgroup);
        /* The init is a clone of the runtime that is born in the container's cgroup and charged there: below
         * this, the kernel OOM-kills it (and sdrun create with it) without a word. 0 means "not set" (runc). */
        if (c->linux_.resources.memory.has_limit && c->linux_.resources.memory.limit > 0 &&
            c->linux_.resources.memory.limit < MEMORY_LIMIT_MIN)
                return errorf(reterr, EINVAL,
                              "linux.resources.memory.limit: %" PRIi64
                              " bytes is too low: a container needs at least %d "
                              "(%d MiB) to start",
                              c->linux_.resources.memory.limit, MEMORY_LIMIT_MIN, MEMORY_LIMIT_MIN >> 20);
        return become_check_lsm(c->has_process ? &c->process : NULL, &c->linux_, reterr);
}

/* The start socket in the container's state dir: bound and listening (create), or connected to (start). */
static int start_socket(Container *ct, bool server, int *ret, char **reterr) {
        _cleanup_close_ int s = -EBADF;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };

        /* Through the directory fd: the state root may be a long path. */
        snprintf(sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/" START_SOCKET, ct->dir_fd);
        s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0)
                return -errno;
        if (server && (bind(s, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(s, 4) < 0))
                return errorf(reterr, -errno, "create the start socket of \"%s\": %s", ct->id,
                              strerror(errno));
        if (!server && connect(s, (struct sockaddr *) &sa, sizeof sa) < 0)
                return errorf(reterr, -errno, "container \"%s\" is not waiting to be started: %s", ct->id,
                              strerror(errno));
        *ret = TAKE_FD(s);
        return 0;
}

/* Socket activation (as runc): when our caller passed LISTEN_FDS for us (LISTEN_PID is our pid), those fds
 * (3 ..) pass into the container before the --preserve-fds ones. */
static unsigned listen_fds_from_env(void) {
        const char *e = getenv("LISTEN_FDS"), *p = getenv("LISTEN_PID");
        char *end;
        unsigned long n, pid;

        if (isempty(e) || isempty(p))
                return 0;
        errno = 0;
        pid = strtoul(p, &end, 10);
        if (errno || *end || pid != (unsigned long) getpid())
                return 0;
        n = strtoul(e, &end, 10);
        if (errno || *end || n > 65536)
                return 0;
        return (unsigned) n;
}

/* LISTEN_FDNAMES (a unit's FileDescriptorName=, one name a fd, ':'-separated) goes with them, as systemd hands
 * it to us; a list whose count does not match LISTEN_FDS is dropped (sd_listen_fds_with_names() would refuse
 * it). */
static const char *listen_fdnames_from_env(unsigned listen_fds) {
        const char *e = getenv("LISTEN_FDNAMES");
        unsigned n = 1;

        if (listen_fds == 0 || !e || strchr(e, '\n'))
                return NULL;
        for (const char *q = e; *q; q++)
                if (*q == ':')
                        n++;
        if (n != listen_fds) {
                log_debug("LISTEN_FDNAMES names %u fds, LISTEN_FDS says %u: not passed on", n, listen_fds);
                return NULL;
        }
        return e;
}

static pid_t container_ns_pid(const OciConfig *c, pid_t host_pid) {
        const char *path = NULL;
        /* In a new pid namespace the init is pid 1 there. */
        if (oci_config_has_namespace(c, OCI_NS_PID, &path) && !path)
                return 1;
        return host_pid;
}

/* Whether the cgroup `path` (with its subtree) may still hold a process. Only "populated 0" in its
 * cgroup.events (cgroup v2, or the unified hierarchy of a hybrid layout), or a cgroup that no longer exists,
 * says it holds none; anything else (legacy layout, no cgroup recorded, an unreadable file) counts as may. */
static bool cgroup_may_be_populated(const char *path) {
        _cleanup_free_ char *dir = NULL, *file = NULL, *buf = NULL;
        CgroupLayout layout;
        const char *p;
        int r;

        if (isempty(path) || cgroup_detect_layout(&layout) < 0 || layout == CGROUP_LAYOUT_LEGACY)
                return true;
        if (cgroup_unified_dir(path, &dir) < 0 || asprintf(&file, "%s/cgroup.events", dir) < 0)
                return true;
        r = read_full_file_at(AT_FDCWD, file, 4096, &buf, NULL);
        if (r == -ENOENT)
                return access(dir, F_OK) >= 0 || errno != ENOENT;
        if (r < 0)
                return true;
        for (p = buf; p && *p;) {
                if (strneq(p, "populated ", STRLEN("populated ")))
                        return p[STRLEN("populated ")] != '0';
                p = strchr(p, '\n');
                if (p)
                        p++;
        }
        return true;
}

/* Stop the unit and wait until it is gone. kill: SIGKILL whatever is left in it first (one more round trip,
 * worth it only when the cgroup may hold processes: StopUnit would SIGTERM them and wait TimeoutStopUSec). */
static void teardown_unit(SdUnitBus *bus, const char *unit, bool kill) {
        _cleanup_free_ char *err = NULL;
        int r;

        if (!bus || !unit)
                return;
        if (kill)
                (void) sdunit_kill_unit(bus, unit, SIGKILL, NULL);
        r = sdunit_stop_unit(bus, unit, UNIT_STOP_TIMEOUT_USEC, &err);
        if (r < 0 && r != -ENOENT)
                log_debug("stop unit %s: %s", unit, err ?: strerror(-r));
}

/* Register the container with systemd-machined (machinectl list/status/terminate), unless the annotation
 * MACHINE_ANNOTATION is "false". Skipped quietly where machined is not available; other failures are
 * warnings: the container works without it. */
static void register_machine_report(int r, const char *err) {
        if (r == -ENOTCONN)
                log_debug("%s", err ?: "systemd-machined is not available");
        else if (r < 0)
                log_warning("%s", err ?: "cannot register with systemd-machined");
}

/* Sent as soon as the init exists (in the scope), answered by the time the init is set up: machined's work
 * (it asks systemd for the leader's unit) overlaps with the container's setup. NULL: nothing to wait for. */
static SdUnitMachineCall *register_machine_begin(const OciConfig *c, const char *id, pid_t leader,
                                                 const char *rootfs) {
        _cleanup_free_ char *name = NULL, *err = NULL;
        const char *a = oci_config_annotation(c, MACHINE_ANNOTATION);
        SdUnitMachineCall *call = NULL;
        int r;

        if (a && streq(a, "false")) {
                log_debug("not registering %s with systemd-machined: %s=false", id, MACHINE_ANNOTATION);
                return NULL;
        }
        /* machined is system-wide and refuses unprivileged registrations: rootless containers have none. */
        if (rootless_detect() || sdunit_machine_name(id, &name) < 0)
                return NULL;
        r = sdunit_register_machine_begin(false, name, leader, rootfs, &call, &err);
        if (r < 0)
                register_machine_report(r, err);
        return call;
}

/* Whether the container is now registered. */
static bool register_machine_end(SdUnitMachineCall *call) {
        _cleanup_free_ char *err = NULL;
        int r;

        if (!call)
                return false;
        r = sdunit_register_machine_end(call, 25 * USEC_PER_SEC, &err);
        register_machine_report(r, err);
        return r >= 0;
}

/* The container's scope, holding pid, before the init exists; its resources files written and the
 * sub-cgroup for the init made when asked. The init is then born in the scope's cgroup (or in the sub-cgroup
 * *ret_subgroup_fd). pid is the runtime itself (root), or stage1 (rootless: we could not move back out). */
typedef struct ScopeEntry {
        SdUnitBus *bus;
        const char *unit, *slice, *description, *subgroup;
        const char *cgroups_path; /* linux.cgroupsPath, for the message when the unit exists already */
        const UnitPropertyList *props;
        const CgroupFileWrites *writes;
        CgroupLayout layout;
        bool started;    /* the unit exists: tear it down on failure */
        char *cgroup;    /* its ControlGroup */
        char *scope_dir; /* its cgroupfs directory, when there is a sub-cgroup */
} ScopeEntry;

/* One systemd scope is one container: a unit that exists already (a second container given the first one's
 * cgroupsPath) is not shared, where runc warns and runs the second in the first one's non-empty cgroup. The
 * message says whose the unit is and what to do instead. */
static int scope_exists_error(const ScopeEntry *s, char **reterr) {
        static const char prefix[] = "sdrun container ";
        _cleanup_free_ char *desc = NULL, *state = NULL, *path = NULL, *owner = NULL, *e1 = NULL, *e2 = NULL;

        (void) sdunit_get_property_string(s->bus, s->unit, "org.freedesktop.systemd1.Unit", "Description",
                                          &desc, &e1);
        (void) sdunit_get_active_state(s->bus, s->unit, &state, &e2);
        if (desc && strneq(desc, prefix, strlen(prefix))) {
                const char *id = desc + strlen(prefix);
                owner = strdup_printf(": the scope of container \"%.*s\"", (int) strcspn(id, " "), id);
        } else
                owner = strdup_printf(" (\"%s\")", strna(desc));
        if (isempty(s->cgroups_path))
                path = strdup(" (absent: named for the container id)");
        else
                path = strdup_printf(" \"%s\"", s->cgroups_path);
        if (!owner || !path)
                return -ENOMEM;
        return errorf(
                reterr, EEXIST,
                "config.json: linux.cgroupsPath%s: unit %s already exists, %s%s. One systemd scope holds "
                "one container: give this container a cgroupsPath of its own; containers that belong "
                "together share a parent slice instead (systemd form \"SLICE:PREFIX:NAME\" with the same "
                "SLICE, a pod's, and a NAME of their own: \"machine-pod1.slice:sdrun:NAME\")",
                path, s->unit, state ?: "loaded", owner);
}

static int scope_enter(ScopeEntry *s, pid_t pid, int *ret_subgroup_fd, char **reterr) {
        int r;

        r = sdunit_start_scope(s->bus, s->unit, s->slice, s->description, pid, s->props,
                               SCOPE_JOB_TIMEOUT_USEC, reterr);
        if (r == -EEXIST)
                return scope_exists_error(s, reterr);
        if (r < 0)
                return errwrap(reterr, r, "%s", "");
        s->started = true;
        log_debug("create: scope %s started", s->unit);
        test_stop_at("scope");

        {
                CgroupMembership *now = NULL;
                size_t n_now = 0;
                r = cgroup_read_memberships(pid == getpid() ? 0 : pid, &now, &n_now);
                if (r >= 0) {
                        const char *want = s->layout == CGROUP_LAYOUT_LEGACY ? "name=systemd" : "";
                        for (size_t i = 0; i < n_now; i++)
                                if (streq(now[i].controllers, want)) {
                                        free(s->cgroup);
                                        s->cgroup = strdup(now[i].path);
                                }
                        cgroup_memberships_free(now, n_now);
                }
                if (!s->cgroup)
                        return errorf(reterr, EIO, "cannot find the cgroup of unit %s", s->unit);
        }
        if (pid == getpid()) {
                /* The v1 hierarchies systemd trims (cpu, memory, pids, ...): the unit's path there too. */
                r = cgroup_join_v1_accounting(s->cgroup, s->layout, reterr);
                if (r < 0)
                        return errwrap(reterr, r, "join the v1 cgroup hierarchies");
                /* And those it does not manage (freezer, cpuset, a cpuacct of its own): before the init and
                 * its cgroup namespace exist, whose root there is then the unit's path, not the host's. */
                _cleanup_free_ char *err = NULL;
                if (cgroup_join_v1_untrimmed(s->cgroup, s->layout, &err) < 0)
                        log_warning("%s: the container stays in the root cgroup of that v1 hierarchy",
                                    err ?: "cannot join the v1 hierarchies systemd does not manage");
        }
        if (s->writes->n_items > 0) {
                r = cgroup_apply_file_writes(s->writes, s->cgroup, s->layout, reterr);
                if (r < 0)
                        return errwrap(reterr, r, "config.json: linux.resources");
        }

        /* A sub-cgroup for the init where nested cgroup management needs it (cgroup v2 does not allow
         * controllers below a cgroup that has processes): the init is born in it (CLONE_INTO_CGROUP). */
        if (s->subgroup) {
                if (s->layout == CGROUP_LAYOUT_LEGACY)
                        return errorf(reterr, EOPNOTSUPP,
                                      "annotations[\"" SUBGROUP_ANNOTATION
                                      "\"]: needs a unified (cgroup v2) hierarchy");
                r = cgroup_unified_dir(s->cgroup, &s->scope_dir);
                if (r >= 0) {
                        _cleanup_close_ int dfd = open(s->scope_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
                        if (dfd < 0 || (mkdirat(dfd, s->subgroup, 0755) < 0 && errno != EEXIST))
                                r = -errno;
                        else if ((*ret_subgroup_fd =
                                          openat(dfd, s->subgroup, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
                                r = -errno;
                }
                if (r < 0)
                        return errorf(reterr, r, "create the sub-cgroup \"%s\" of %s: %s", s->subgroup,
                                      s->unit, strerror(-r));
        }
        return 0;
}

/* Rootless: stage1 is the scope's first process; the init is born in the cgroup whose fd we pass back (the
 * scope's own, or the sub-cgroup), which it also binds where it cannot mount a fresh cgroup2. */
static int scope_place_stage1(pid_t stage1_pid, void *userdata, int *ret_cgroup_fd, char **reterr) {
        ScopeEntry *s = userdata;
        _cleanup_free_ char *dir = NULL;
        int r;

        r = scope_enter(s, stage1_pid, ret_cgroup_fd, reterr);
        if (r < 0 || *ret_cgroup_fd >= 0 || s->layout != CGROUP_LAYOUT_UNIFIED)
                return r;
        r = cgroup_unified_dir(s->cgroup, &dir);
        if (r < 0)
                return r;
        *ret_cgroup_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (*ret_cgroup_fd < 0)
                return errorf(reterr, -errno, "open the cgroup of %s (\"%s\"): %s", s->unit, dir,
                              strerror(errno));
        return 0;
}

/* What `state` reports besides the lifecycle: runc's "owner" (the user who created the container) and the
 * config's annotations. Shared by create and restore; an allocation failure leaves the field unset. */
void container_record_owner_and_annotations(Container *ct, const OciConfig *c) {
        struct passwd pw, *res = NULL;
        char pwbuf[4096];

        if (getpwuid_r(geteuid(), &pw, pwbuf, sizeof pwbuf, &res) == 0 && res)
                ct->owner = strdup(res->pw_name);
        else if (asprintf(&ct->owner, "%u", (unsigned) geteuid()) < 0)
                ct->owner = NULL;
        if (c->n_annotations > 0) {
                ct->annotations = cJSON_CreateObject();
                for (size_t i = 0; ct->annotations && i < c->n_annotations; i++)
                        cJSON_AddStringToObject(ct->annotations, c->annotations[i].key,
                                                c->annotations[i].value);
        }
}

/* What container_create() holds while it runs. Everything from the state directory on is undone by
 * create_run_done() unless create got to its end: the init killed, the runtime out of the scope again, the
 * machine unregistered, the unit stopped, the --pid-file and the state directory removed, in that order. */
typedef struct CreateRun {
        const CreateOptions *o;
        bool rootless;
        bool succeeded;
        /* config.json and what is derived from it */
        char *bundle, *rootfs, *raw;
        size_t raw_len;
        OciConfig *c;
        char *slice, *unit;
        CgroupLayout layout;
        UnitPropertyList props;
        CgroupFileWrites writes;
        NotifyReady notify_ready;
        /* what exists, undone on failure */
        Container *ct;
        int listen_fd; /* the start socket, until the init has it */
        SdUnitBus *bus;
        char *description;
        const char *subgroup;
        ScopeEntry se;
        int subgroup_fd;
        CgroupMembership *orig; /* the runtime's cgroups before it entered the scope */
        size_t n_orig;
        bool in_scope, unit_started;
        char *cgroup, *scope_dir;
        InitProcess ip;
        SdUnitMachineCall *machine_call;
        SeccompProgram *seccomp; /* linux.seccomp compiled, for the init to load */
        Credentials credentials; /* CREDENTIALS_DIRECTORY read, for the init; wiped once it is cloned */
} CreateRun;

static void create_run_done(CreateRun *cr) {
        if (cr->ct && !cr->succeeded) {
                init_process_kill(&cr->ip);
                if (cr->in_scope)
                        (void) cgroup_leave_unit(getpid(), cr->orig, cr->n_orig, cr->cgroup);
                if (cr->ct->machine)
                        (void) sdunit_unregister_machine(cr->ct->machine, NULL);
                if (cr->unit_started)
                        teardown_unit(cr->bus, cr->unit, true);
                if (cr->unit_started && !cr->rootless && cr->cgroup)
                        cgroup_remove_v1_accounting(cr->cgroup, cr->layout);
                if (cr->o->pid_file)
                        (void) unlink(cr->o->pid_file);
                (void) container_remove(cr->ct);
        }
        init_process_done(&cr->ip);
        cgroup_memberships_free(cr->orig, cr->n_orig);
        sdunit_machine_call_freep(&cr->machine_call);
        seccomp_program_free(cr->seccomp);
        credentials_done(&cr->credentials);
        free(cr->se.cgroup);
        free(cr->se.scope_dir);
        free(cr->cgroup);
        free(cr->scope_dir);
        cr->subgroup_fd = safe_close(cr->subgroup_fd);
        free(cr->description);
        sdunit_bus_closep(&cr->bus);
        cr->listen_fd = safe_close(cr->listen_fd);
        container_freep(&cr->ct);
        cgroup_file_writes_done(&cr->writes);
        unit_property_list_done(&cr->props);
        free(cr->slice);
        free(cr->unit);
        oci_config_freep(&cr->c);
        free(cr->raw);
        free(cr->rootfs);
        free(cr->bundle);
}

/* The bundle, the id and config.json, parsed, with its root.path resolved. */
static int create_load(CreateRun *cr, char **reterr) {
        const CreateOptions *o = cr->o;
        _cleanup_close_ int bundle_fd = -EBADF;
        int r;

        cr->bundle = realpath(o->bundle ?: ".", NULL);
        if (!cr->bundle)
                return errorf(reterr, -errno, "--bundle: \"%s\": %s", o->bundle ?: ".", strerror(errno));
        bundle_fd = open(cr->bundle, O_DIRECTORY | O_CLOEXEC | O_RDONLY);
        if (bundle_fd < 0)
                return errorf(reterr, -errno, "--bundle: \"%s\": %s", cr->bundle, strerror(errno));
        r = container_id_validate(o->id, reterr);
        if (r < 0)
                return r;

        const char *file = o->config_file ?: "config.json";
        r = read_full_file_at(bundle_fd, file, 16U << 20, &cr->raw, &cr->raw_len);
        if (r < 0)
                return errorf(reterr, r, "config.json: cannot read \"%s%s%s\": %s",
                              file[0] == '/' ? "" : cr->bundle, file[0] == '/' ? "" : "/", file,
                              r == -EFBIG ? "file too large" : strerror(-r));
        {
                _cleanup_free_ char *perr = NULL;
                r = oci_config_parse(cr->raw, cr->raw_len, &cr->c, &perr);
                if (r < 0)
                        return errorf(reterr, r, "config.json: %s", perr ?: strerror(-r));
        }

        if (!cr->c->root_path)
                return errorf(reterr, EINVAL, "config.json: root.path: required");
        _cleanup_free_ char *joined = NULL;
        if (cr->c->root_path[0] == '/')
                joined = strdup(cr->c->root_path);
        else if (asprintf(&joined, "%s/%s", cr->bundle, cr->c->root_path) < 0)
                joined = NULL;
        if (!joined)
                return -ENOMEM;
        cr->rootfs = realpath(joined, NULL);
        struct stat st;
        if (!cr->rootfs || stat(cr->rootfs, &st) < 0)
                return errorf(reterr, -errno, "config.json: root.path: \"%s\": %s", joined, strerror(errno));
        if (!S_ISDIR(st.st_mode))
                return errorf(reterr, ENOTDIR, "config.json: root.path: \"%s\" is not a directory", joined);
        return 0;
}

/* Everything config.json alone can refuse, and the unit's name and properties. */
static int create_validate(CreateRun *cr, char **reterr) {
        const CreateOptions *o = cr->o;
        const OciConfig *c = cr->c;
        int r;

        r = validate_config(c, o, reterr);
        if (r >= 0)
                r = validate_without_mount_namespace(c, cr->rootfs, reterr);
        if (r >= 0 && cr->rootless)
                r = rootless_validate_config(c, reterr);
        if (r >= 0)
                r = netdev_check(c, has_own_namespace(c, OCI_NS_NETWORK, "net"), cr->rootless, reterr);
        if (r < 0)
                return errwrap(reterr, r, "config.json");

        r = sdunit_scope_name_from_cgroups_path(c->linux_.cgroups_path, o->id, &cr->slice, &cr->unit,
                                                reterr);
        if (r < 0)
                return errwrap(reterr, r, "config.json");

        log_set_context(o->id, cr->unit);
        r = cgroup_detect_layout(&cr->layout);
        if (r < 0)
                return errorf(reterr, r, "cannot determine the cgroup layout of /sys/fs/cgroup: %s",
                              strerror(-r));
        if (c->linux_.resources.present) {
                r = cgroup_props_from_resources(&c->linux_.resources, cr->layout, &cr->props, &cr->writes,
                                                reterr);
                if (r < 0)
                        return errwrap(reterr, r, "config.json");
                r = cgroup_check_block_devices(&c->linux_.resources, reterr);
                if (r < 0)
                        return errwrap(reterr, r, "config.json");
                r = cgroup_props_add_default_devices(&cr->props, &cr->writes);
                if (r < 0)
                        return r;
        }
        /* `systemctl stop` and `machinectl terminate` send SIGTERM, which a container's pid 1 ignores unless it
         * handles it: escalate to SIGKILL after 10 s, as `docker stop` does (an annotation may override). */
        r = unit_property_add_u64(&cr->props, "TimeoutStopUSec", 10 * USEC_PER_SEC);
        if (r < 0)
                return r;
        /* IOAccounting=yes (sdunit_start_scope) on a v1 layout means the blkio hierarchy, which no unit uses by
         * default: systemd then creates blkio cgroups for every sibling of the scope and of its slices when the
         * first such scope appears and removes them when the last goes, ~3 ms of PID 1 per container (see
         * bench/README.md). Turned off there unless linux.resources.blockIO asks for blkio anyway; an annotation
         * org.systemd.property.IOAccounting=true turns it back on. */
        if (cr->layout != CGROUP_LAYOUT_UNIFIED && !c->linux_.resources.block_io.present) {
                r = unit_property_add_bool(&cr->props, "IOAccounting", false);
                if (r < 0)
                        return r;
        }
        r = cgroup_props_from_annotations(c->annotations, c->n_annotations, &cr->props, reterr);
        if (r < 0)
                return errwrap(reterr, r, "config.json: annotations");

        cr->notify_ready = NOTIFY_READY_CONTAINER;
        if (notify_host_socket() && (r = notify_ready_mode(c, &cr->notify_ready, reterr)) < 0)
                return r;
        if (notify_host_socket() && cr->notify_ready == NOTIFY_READY_CONTAINER) {
                uint64_t usec;
                r = notify_timeout_from_config(c, &usec, reterr);
                if (r < 0)
                        return r;
        }

        /* linux.seccomp compiled here, not in the init: a bad filter fails before anything exists, and the
         * init (a copy-on-write clone of this process) only has to load the program. */
        if (c->linux_.seccomp.present) {
                r = seccomp_program_get(o->root, cr->raw, cr->raw_len, &c->linux_.seccomp, &cr->seccomp,
                                        reterr);
                if (r < 0)
                        return errwrap(reterr, r, "config.json");
        }

        log_debug("create %s: config parsed and validated", o->id);
        return 0;
}

/* The state directory (from here on, everything created is undone on failure), its notify directory and
 * the start socket. */
static int create_state(CreateRun *cr, char **reterr) {
        const CreateOptions *o = cr->o;
        Container *ct;
        int r;

        r = container_new(o->root, o->id, &cr->ct, reterr);
        if (r < 0)
                return r;
        ct = cr->ct;
        ct->bundle = strdup(cr->bundle);
        ct->rootfs = strdup(cr->rootfs);
        ct->unit = strdup(cr->unit);
        ct->slice = strdup(cr->slice);
        ct->user_bus = cr->rootless;
        if (!ct->bundle || !ct->rootfs || !ct->unit || !ct->slice)
                return -ENOMEM;
        container_record_owner_and_annotations(ct, cr->c);
        r = container_save_config(ct, cr->raw, cr->raw_len);
        if (r >= 0)
                r = container_save(ct);
        if (r < 0)
                return errorf(reterr, r, "write state of \"%s\": %s", o->id, strerror(-r));
        test_stop_at("state");

        /* NOTIFY_SOCKET (as runc): the container gets a directory of its state dir on /run/notify; whoever
         * starts it binds the socket there. */
        if (notify_host_socket() && cr->notify_ready == NOTIFY_READY_CONTAINER) {
                _cleanup_free_ char *notify_dir = NULL;
                if (mkdirat(ct->dir_fd, NOTIFY_DIR, 0755) < 0 && errno != EEXIST)
                        return errorf(reterr, -errno, "create the notify directory of \"%s\": %s", o->id,
                                      strerror(errno));
                r = container_path(ct, NOTIFY_DIR, &notify_dir);
                if (r >= 0)
                        r = notify_setup_config(cr->c, notify_dir);
                if (r < 0)
                        return r;
        }

        return start_socket(ct, true, &cr->listen_fd, reterr);
}

/* The bus, and what the scope will be made of. */
static int create_connect(CreateRun *cr, char **reterr) {
        const CreateOptions *o = cr->o;
        int r;

        r = sdunit_bus_open(cr->rootless, &cr->bus, reterr);
        if (r < 0)
                return errwrap(reterr, r, "connect to systemd");
        log_debug("create %s: state written, connected to systemd", o->id);
        if (asprintf(&cr->description, "sdrun container %s (bundle %s)", o->id, cr->bundle) < 0) {
                cr->description = NULL;
                return -ENOMEM;
        }
        if (cr->rootless) {
                r = rootless_filter_resources(cr->bus, cr->layout, &cr->props, reterr);
                if (r < 0)
                        return r;
                rootless_filter_writes(&cr->writes, cr->layout);
        } else if (cr->layout == CGROUP_LAYOUT_UNIFIED)
                cgroup_check_host_controllers(&cr->props, "/sys/fs/cgroup");
        cr->subgroup = oci_config_annotation(cr->c, SUBGROUP_ANNOTATION);
        cr->se = (ScopeEntry){
                .bus = cr->bus,
                .unit = cr->unit,
                .slice = cr->slice,
                .description = cr->description,
                .subgroup = cr->subgroup,
                .cgroups_path = cr->c->linux_.cgroups_path,
                .props = &cr->props,
                .writes = &cr->writes,
                .layout = cr->layout,
        };
        return 0;
}

/* The scope, with us in it, before the init exists: the init is born in the scope's cgroup. (Rootless, the
 * scope holds stage1 first, and the init is cloned from there: see create_clone_init().) */
static int create_enter_scope(CreateRun *cr, char **reterr) {
        int r;

        if (cr->rootless)
                return 0;
        r = cgroup_read_memberships(0, &cr->orig, &cr->n_orig);
        if (r < 0)
                return errorf(reterr, r, "read /proc/self/cgroup: %s", strerror(-r));
        r = cgroup_check_unit_not_frozen(cr->slice, cr->unit, cr->layout, reterr);
        if (r < 0)
                return r;
        r = scope_enter(&cr->se, getpid(), &cr->subgroup_fd, reterr);
        cr->unit_started = cr->in_scope = cr->se.started;
        cr->cgroup = TAKE_PTR(cr->se.cgroup);
        cr->scope_dir = TAKE_PTR(cr->se.scope_dir);
        return r;
}

/* The init, born in the scope; then back to where we came from: only the init (and what it forks) belongs
 * to the container. */
static int create_clone_init(CreateRun *cr, char **reterr) {
        const CreateOptions *o = cr->o;
        Container *ct = cr->ct;
        int r;

        unsigned listen_fds = listen_fds_from_env();
        r = credentials_load(&cr->credentials, reterr);
        if (r < 0)
                return r;
        BootstrapParams bp = {
                .init = {
                        .config = cr->c,
                        .id = o->id,
                        .bundle = cr->bundle,
                        .rootfs = cr->rootfs,
                        .no_pivot = o->no_pivot,
                        .no_new_keyring = o->no_new_keyring,
                        .preserve_fds = o->preserve_fds + listen_fds,
                        .listen_fds = listen_fds,
                        .listen_fdnames = listen_fdnames_from_env(listen_fds),
                        .start_listen_fd = cr->listen_fd,
                        .close_in_init_fd = ct->lock_fd,
                        .has_console_socket = o->console_socket || o->ret_console_master,
                        .own_cgroupns = has_own_namespace(cr->c, OCI_NS_CGROUP, "cgroup"),
                        .own_mountns = has_own_namespace(cr->c, OCI_NS_MOUNT, "mnt"),
                        .seccomp = cr->seccomp,
                        .credentials = &cr->credentials,
                },
                .init_cgroup_fd = cr->subgroup_fd,
                /* Rootless: the scope holds stage1 first, and the init is cloned from there. */
                .place_stage1 = cr->rootless ? scope_place_stage1 : NULL,
                .place_userdata = &cr->se,
        };
        r = bootstrap_clone_init(&bp, &cr->ip, reterr);
        credentials_done(&cr->credentials); /* the init has its copy */
        if (cr->rootless) {
                cr->unit_started = cr->se.started;
                cr->cgroup = TAKE_PTR(cr->se.cgroup);
                cr->scope_dir = TAKE_PTR(cr->se.scope_dir);
                if (r >= 0 && !cr->cgroup)
                        r = errorf(reterr, EIO, "cannot find the cgroup of unit %s", cr->unit);
        }
        if (cr->cgroup && !ct->cgroup && !(ct->cgroup = strdup(cr->cgroup)) && r >= 0)
                r = -ENOMEM;
        if (!cr->in_scope || cgroup_leave_unit(getpid(), cr->orig, cr->n_orig, cr->cgroup) >= 0)
                cr->in_scope = false;
        if (r < 0)
                return errwrap(reterr, r, "start the container init");
        if (cr->in_scope)
                return errorf(reterr, EIO, "cannot leave the cgroup of unit %s", cr->unit);
        cr->listen_fd = safe_close(cr->listen_fd);
        if (cr->subgroup && cr->layout == CGROUP_LAYOUT_UNIFIED) {
                /* The scope holds no process now: hand its controllers down to the container's subtree. */
                r = cgroup_enable_subtree_controllers(cr->scope_dir);
                if (r < 0)
                        return errorf(reterr, r, "enable the controllers of %s for its sub-cgroups: %s",
                                      cr->unit, strerror(-r));
        }
        log_debug("create %s: init %d cloned, runtime back in its own cgroup", o->id, (int) cr->ip.pid);
        cr->machine_call = register_machine_begin(cr->c, o->id, cr->ip.pid, cr->rootfs);
        test_stop_at("clone");
        return 0;
}

/* SYNC_PREPARED: the init has prepared the rootfs: the prestart and createRuntime hooks, then the state for
 * its createContainer hooks. */
static int create_on_prepared(SyncServer *s, SyncMsg *m, char **reterr) {
        CreateRun *cr = s->userdata;
        InitProcess *ip = &cr->ip;
        _cleanup_free_ char *st_runtime = NULL, *st_container = NULL;
        int r;

        bool container_hooks = cr->c->hooks.n_hooks[OCI_HOOK_CREATE_CONTAINER] > 0;
        /* The init needs the state only for createContainer hooks: without them, none is built or sent. */
        if ((r = container_hook_state_string(cr->ct, CONTAINER_CREATING, ip->pid, &st_runtime)) < 0 ||
            (container_hooks &&
             (r = container_hook_state_string(cr->ct, CONTAINER_CREATING, container_ns_pid(cr->c, ip->pid),
                                              &st_container)) < 0))
                return r;
        test_stop_at("prepared");
        r = hooks_run(cr->c, OCI_HOOK_PRESTART, st_runtime, cr->bundle, reterr);
        if (r >= 0)
                r = hooks_run(cr->c, OCI_HOOK_CREATE_RUNTIME, st_runtime, cr->bundle, reterr);
        if (r < 0)
                return r;
        r = sync_send(ip->sync_fd, SYNC_CONTINUE, 0, st_container,
                      st_container ? strlen(st_container) + 1 : 0, -EBADF);
        if (r == -EPIPE || r == -ECONNRESET)
                return 0; /* the init died: the next receive says how */
        if (r == -E2BIG)
                return errorf(reterr, r,
                              "the container's state for its createContainer hooks is %zu bytes, "
                              "more than the 1 MiB the runtime passes to its init (annotations?)",
                              strlen(st_container) + 1);
        if (r < 0)
                return errorf(reterr, r, "send the state to the container init: %s", strerror(-r));
        return 0;
}

/* SYNC_CONSOLE: the pty master, to our caller or --console-socket. */
static int create_on_console(SyncServer *s, SyncMsg *m, char **reterr) {
        CreateRun *cr = s->userdata;
        return console_answer(s->sock, m, cr->o->ret_console_master, cr->o->console_socket, reterr);
}

/* SYNC_READY: the init is the container's process, blocked before exec. */
static int create_on_ready(SyncServer *s, SyncMsg *m, char **reterr) {
        CreateRun *cr = s->userdata;
        log_debug("create %s: init ready", cr->o->id);
        return 1;
}

/* The init dies or closes its end during its setup: how it ended. */
static int create_on_hangup(SyncServer *s, char **reterr) {
        CreateRun *cr = s->userdata;
        _cleanup_free_ char *how = NULL;
        (void) init_process_describe_death(&cr->ip, &how);
        return errorf(reterr, ECHILD, "container init %s during setup", how ?: "died");
}

/* The init sets itself up: the prestart and createRuntime hooks when it has prepared the rootfs, the pty
 * when it has one, until it is ready. */
static int create_setup_init(CreateRun *cr, char **reterr) {
        char timed_out[128];
        snprintf(timed_out, sizeof timed_out, "container init did not finish its setup in %llu s",
                 (unsigned long long) (SETUP_TIMEOUT_USEC / USEC_PER_SEC));
        const SyncWording wording = {
                .peer = "the container init",
                .prefix = "",
                .awaited = "the container init to finish its setup",
                .timed_out = timed_out,
                .error_prefix = "",
                .error_default = "container init failed",
        };
        SyncServer s = {
                .sock = cr->ip.sync_fd,
                .pidfd = cr->ip.pidfd,
                .timeout_usec = SETUP_TIMEOUT_USEC,
                .wording = &wording,
                .handlers = {
                        [SYNC_PREPARED] = create_on_prepared,
                        [SYNC_CONSOLE] = create_on_console,
                        [SYNC_READY] = create_on_ready,
                },
                .on_hangup = create_on_hangup,
                .userdata = cr,
        };
        int r = sync_serve(&s, reterr);
        return r < 0 ? r : 0;
}

/* The init is the final container process, blocked before exec: record it, then commit (it stops watching
 * us and the container outlives create from then on). */
static int create_commit(CreateRun *cr, char **reterr) {
        const CreateOptions *o = cr->o;
        Container *ct = cr->ct;
        int r;

        r = pid_get_start_time(cr->ip.pid, &ct->pid_start_time);
        if (r < 0)
                return errorf(reterr, r, "container init vanished: %s", strerror(-r));
        ct->pid = cr->ip.pid;
        ct->recorded = CONTAINER_CREATED;
        /* Recorded so that delete unregisters exactly what was registered (see sdunit_unregister_machine). */
        if (register_machine_end(cr->machine_call) && sdunit_machine_name(o->id, &ct->machine) < 0)
                return -ENOMEM;
        r = container_save(ct);
        if (r < 0)
                return errorf(reterr, r, "write state of \"%s\": %s", o->id, strerror(-r));
        if (o->pid_file) {
                r = write_pid_file(o->pid_file, cr->ip.pid);
                if (r < 0)
                        return errorf(reterr, r, "--pid-file: write \"%s\": %s", o->pid_file, strerror(-r));
        }
        if (o->pidfd_socket) {
                r = unix_send_fd("--pidfd-socket", o->pidfd_socket, "pidfd", cr->ip.pidfd, reterr);
                if (r < 0)
                        return r;
        }
        test_stop_at("ready");
        r = sync_send(cr->ip.sync_fd, SYNC_COMMITTED, 0, NULL, 0, -EBADF);
        if (r >= 0) {
                /* The init stops watching us (PR_SET_PDEATHSIG) and then closes its end: only after that may
                 * we exit. */
                SyncMsg m;
                r = sync_recv(cr->ip.sync_fd, -1, 10 * USEC_PER_SEC, &m);
                if (r >= 0) {
                        sync_msg_done(&m);
                        r = -EBADMSG;
                } else if (r == -EPIPE)
                        r = 0;
        }
        if (r >= 0 && pidfd_wait_exit(cr->ip.pidfd, 0) == 0)
                r = -ESRCH; /* it closed its end by dying */
        if (r < 0)
                return errorf(reterr, r, "container init died before it was committed");
        return 0;
}

/* The steps of create, in order. */
static int (*const create_steps[])(CreateRun *cr, char **reterr) = {
        create_load,        create_validate,   create_state,      create_connect,
        create_enter_scope, create_clone_init, create_setup_init, create_commit,
};

int container_create(const CreateOptions *o, pid_t *ret_pid, int *ret_pidfd, char **reterr) {
        _cleanup_(create_run_done) CreateRun cr = {
                .o = o,
                .rootless = rootless_detect(),
                .listen_fd = -EBADF,
                .subgroup_fd = -EBADF,
                .ip = { .pidfd = -EBADF, .sync_fd = -EBADF },
        };
        int r;

        FOREACH_ARRAY(step, create_steps, ELEMENTSOF(create_steps)) {
                r = (*step)(&cr, reterr);
                if (r < 0)
                        return r;
        }

        cr.ip.sync_fd = safe_close(cr.ip.sync_fd);
        log_info("created container %s in %s (init pid %d, bundle %s)", o->id, cr.unit, (int) cr.ct->pid,
                 cr.bundle);
        if (ret_pid)
                *ret_pid = cr.ip.pid;
        if (ret_pidfd)
                *ret_pidfd = TAKE_FD(cr.ip.pidfd);
        /* Not reaped here: the init outlives us and is reparented (conmon, as subreaper, reaps it). */
        cr.succeeded = true;
        return 0;
}

/* A start that fails stops the container before it returns: once `start` has reported the failure, `state`
 * must already say stopped (never created/running with an init that is about to die). Bounded. */
static void kill_init_and_wait(int pidfd) {
        if (pidfd < 0)
                return;
        if (pidfd_send_sig(pidfd, SIGKILL) >= 0)
                (void) pidfd_wait_exit(pidfd, 10 * USEC_PER_SEC);
}

/* PIDFD_GET_INFO (Linux 6.13; PIDFD_INFO_EXIT since 6.15): the wait status of a process another process
 * reaped, through a pidfd opened before it died. The first version of the struct (64 bytes). */
struct sdrun_pidfd_info {
        uint64_t mask, cgroupid;
        uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
        int32_t exit_code;
        uint32_t coredump_mask, spare1;
};
#define SDRUN_PIDFD_GET_INFO _IOWR(0xFF, 11, struct sdrun_pidfd_info)
#define SDRUN_PIDFD_INFO_EXIT (UINT64_C(1) << 3)

/* The wait status of a zombie its parent has not reaped yet: field 52 of /proc/PID/stat. */
static int zombie_wait_status(pid_t pid, int pidfd, int *ret) {
        _cleanup_free_ char *buf = NULL;
        char path[64], *f;

        snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        if (read_full_file_at(AT_FDCWD, path, 4096, &buf, NULL) < 0 || pidfd_send_sig(pidfd, 0) == -ESRCH ||
            !(f = strrchr(buf, ')')) || !strneq(f, ") Z ", 4))
                return -ENODATA;
        f += 2; /* field 3, the state */
        for (int n = 3; n < 52 && f; n++)
                if ((f = strchr(f, ' ')))
                        f++;
        if (!f)
                return -ENODATA;
        *ret = (int) strtol(f, NULL, 10);
        return 0;
}

/* How the (dead) init ended: waitid when it is our child (`run`), PIDFD_GET_INFO when someone else reaped
 * it (`start` after `create`). Bounded: the start connection reports EOF before the exit is notified. */
static int init_exit_status(pid_t pid, int pidfd, siginfo_t *ret) {
        siginfo_t si = {};
        int status = 0;

        (void) pidfd_wait_exit(pidfd, 5 * USEC_PER_SEC);
        if (waitid(P_PIDFD, (id_t) pidfd, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid > 0) {
                *ret = si;
                return 0;
        }
        /* Someone else's child: the pidfd tells its status once it is reaped, /proc while it is a zombie.
         * The parent (conmon, systemd) may reap it between the two looks, so look again, briefly. */
        for (int attempt = 0;; attempt++) {
                struct sdrun_pidfd_info info = { .mask = SDRUN_PIDFD_INFO_EXIT };
                if (ioctl(pidfd, SDRUN_PIDFD_GET_INFO, &info) >= 0 && (info.mask & SDRUN_PIDFD_INFO_EXIT)) {
                        status = info.exit_code;
                        break;
                }
                if (zombie_wait_status(pid, pidfd, &status) >= 0)
                        break;
                if (attempt >= 50)
                        return -ENODATA;
                (void) usleep(2000);
        }
        *ret = (siginfo_t){};
        ret->si_code = WIFEXITED(status) ? CLD_EXITED : CLD_KILLED;
        ret->si_status = WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status);
        return 0;
}

/* The seconds start waits for READY=1: the annotation NOTIFY_TIMEOUT_ANNOTATION (checked by create) or the
 * default. */
static uint64_t notify_timeout_usec(const OciConfig *c) {
        uint64_t usec = NOTIFY_DEFAULT_TIMEOUT_SEC * USEC_PER_SEC;
        (void) notify_timeout_from_config(c, &usec, NULL);
        return usec;
}

int container_start(const char *root, const char *id, char **reterr) {
        return container_start_full(root, id, NULL, reterr);
}

/* What container_start_full() holds while it runs. From the go to the init on (released), a start that fails
 * leaves nothing running: start_run_done() kills the init (some steps say so in their message). */
typedef struct StartRun {
        const char *root, *id;
        const StartOptions *so;
        Container *ct;
        OciConfig *c;
        char *raw;
        size_t raw_len;
        char *state_json; /* the state the init's startContainer hooks read */
        int pidfd, conn, notify_fd;
        const char *notify_host;
        bool released, succeeded;
} StartRun;

static void start_run_done(StartRun *sr) {
        if (sr->released && !sr->succeeded)
                kill_init_and_wait(sr->pidfd);
        sr->notify_fd = safe_close(sr->notify_fd);
        sr->conn = safe_close(sr->conn);
        sr->pidfd = safe_close(sr->pidfd);
        free(sr->state_json);
        free(sr->raw);
        oci_config_freep(&sr->c);
        container_freep(&sr->ct);
}

/* A created container, its config, and its init's pidfd. */
static int start_load(StartRun *sr, char **reterr) {
        ContainerStatus st;
        int r;

        r = container_load_status(sr->root, sr->id, CONTAINER_LOCK_EXCLUSIVE, &sr->ct, &st, reterr);
        if (r < 0)
                return r;
        /* runc's wording: clients (containerd, Podman) show it, and tests grep for it. */
        if (st == CONTAINER_RUNNING)
                return errorf(reterr, EINVAL, "cannot start an already running container");
        if (st == CONTAINER_STOPPED)
                return errorf(reterr, EINVAL, "cannot start a container that has stopped");
        if (st != CONTAINER_CREATED)
                return errorf(reterr, EINVAL, "cannot start a container in the %s state",
                              container_status_to_string(st));
        r = container_read_config(sr->ct, &sr->raw, &sr->raw_len);
        if (r >= 0)
                r = oci_config_reparse(sr->raw, sr->raw_len, &sr->c, NULL);
        if (r < 0)
                return errorf(reterr, r, "cannot read the config of container \"%s\"", sr->id);
        if (!sr->c->has_process)
                return errorf(reterr, EINVAL, "cannot start container \"%s\": config.json has no process",
                              sr->id);
        log_debug("start %s: state and config loaded", sr->id);

        sr->pidfd = container_open_pidfd(sr->ct);
        if (sr->pidfd < 0)
                return errorf(reterr, ESRCH, "cannot start container \"%s\": its init is gone", sr->id);
        return 0;
}

/* The notify socket bound, the start socket connected, and the state recorded as running, all before the
 * init is released: a state that cannot be written (a full --root) fails the start with nothing executed,
 * and a start that fails later kills the init, so that "running" with a dead init reads as stopped. */
static int start_prepare(StartRun *sr, char **reterr) {
        Container *ct = sr->ct;
        int r;

        r = container_hook_state_string(ct, CONTAINER_CREATED, container_ns_pid(sr->c, ct->pid),
                                        &sr->state_json);
        if (r < 0)
                return r;
        /* Bound before the process runs, so that its first sd_notify() finds it. */
        sr->notify_host = notify_host_socket();
        if (sr->notify_host && faccessat(ct->dir_fd, NOTIFY_DIR, F_OK, 0) >= 0) {
                r = notify_bind(ct->dir_fd, &sr->notify_fd, reterr);
                if (r < 0)
                        return errwrap(reterr, r, "NOTIFY_SOCKET");
        }
        r = start_socket(ct, false, &sr->conn, reterr);
        if (r < 0)
                return r;
        ct->recorded = CONTAINER_RUNNING;
        r = container_save(ct);
        if (r < 0)
                return errorf(reterr, r, "cannot start container \"%s\": write its state: %s", sr->id,
                              strerror(-r));
        return 0;
}

/* The init closed the start connection without saying it would exec the process: dead (how, and why if we
 * can tell), or alive and not to be trusted. */
static int start_init_lost(StartRun *sr, char **reterr) {
        const OciConfig *c = sr->c;
        _cleanup_free_ char *how = NULL;
        siginfo_t si = {};

        /* A dying init closes its files before it becomes a zombie: give its exit a moment to show (a seccomp
         * kill at execve must be reported as such, not as a hang-up). */
        if (pidfd_wait_exit(sr->pidfd, INIT_EXIT_GRACE_USEC) < 0)
                /* Alive, yet it closed the connection without saying it would exec: not ours to trust. A
                 * failing start leaves nothing running (start_run_done() kills it). */
                return errorf(
                        reterr, ECHILD,
                        "container \"%s\": the init closed the start connection without executing the process; killed",
                        sr->id);
        sr->released = false; /* dead already */
        if (init_exit_status(sr->ct->pid, sr->pidfd, &si) >= 0)
                how = strdup_printf("%s %d",
                                    si.si_code == CLD_EXITED ? "exited with status" : "was killed by signal",
                                    si.si_status);
        return errorf(
                reterr, ECHILD, "container \"%s\": the init %s before it could exec the process%s", sr->id,
                how ?: "died",
                si.si_code != CLD_EXITED && si.si_status == SIGSYS ? " (seccomp)"
                : c->linux_.seccomp.present && !c->process.no_new_privileges
                        ? " without reporting why: with noNewPrivileges false, linux.seccomp is loaded before the user and capabilities are set and must allow their syscalls"
                        : "");
}

/* SYNC_EXEC_FAILED: execve of the process failed (the init or the trampoline says with which errno). */
static int start_on_exec_failed(SyncServer *s, SyncMsg *m, char **reterr) {
        StartRun *sr = s->userdata;
        int r = m->error > 0 ? -m->error : -EIO;
        return errorf(reterr, r, "exec \"%s\": %s", sr->c->process.args[0], strerror(-r));
}

/* SYNC_SECCOMP_FD: the listener to the seccomp agent. */
static int start_on_seccomp_fd(SyncServer *s, SyncMsg *m, char **reterr) {
        StartRun *sr = s->userdata;
        _cleanup_free_ char *host_state = NULL;
        if (container_hook_state_string(sr->ct, CONTAINER_CREATED, sr->ct->pid, &host_state) < 0)
                return errwrap(reterr, -ENOMEM, "linux.seccomp.listenerPath");
        return sync_answer_seccomp(s, m, &sr->c->linux_.seccomp, sr->ct->pid, host_state, reterr);
}

/* EOF: the connection closed on execve (CLOEXEC) or with the init's death; start_check_exec() tells which. */
static int start_on_hangup(SyncServer *s, char **reterr) {
        return 0;
}

/* The go to the init; then it is served until it has exec'd the process (or died). */
static int start_release(StartRun *sr, char **reterr) {
        int r;

        sr->released = true;
        r = sync_send(sr->conn, SYNC_START, 0, sr->state_json, strlen(sr->state_json) + 1, -EBADF);
        if (r < 0)
                return errorf(reterr, r, "cannot start container \"%s\": %s", sr->id, strerror(-r));

        _cleanup_free_ char *prefix = strdup_printf("start container \"%s\": ", sr->id);
        _cleanup_free_ char *timed_out = strdup_printf(
                "start container \"%s\": the init did not exec in time and was killed", sr->id);
        if (!prefix || !timed_out)
                return -ENOMEM;
        const SyncWording wording = {
                .peer = "the init",
                .prefix = prefix,
                .awaited = "the init to exec the process",
                .killed = "the init",
                .timed_out = timed_out,
                .error_prefix = "",
                .error_default = "container init failed to start",
        };
        SyncServer s = {
                .sock = sr->conn,
                .pidfd = sr->pidfd,
                .timeout_usec = SETUP_TIMEOUT_USEC,
                .wording = &wording,
                .handlers = {
                        [SYNC_EXEC] = sync_handle_exec,
                        [SYNC_EXEC_FAILED] = start_on_exec_failed,
                        [SYNC_SECCOMP_FD] = start_on_seccomp_fd,
                },
                .on_hangup = start_on_hangup,
                .userdata = sr,
        };
        r = sync_serve(&s, reterr);
        if (r < 0)
                return r;
        log_debug("start %s: the init closed the start connection", sr->id);
        return s.exec_seen ? 0 : start_init_lost(sr, reterr);
}

/* poststart: the user process has been executed; start has not returned yet. A failing hook stops the
 * container, its unit too. */
static int start_poststart(StartRun *sr, char **reterr) {
        _cleanup_free_ char *st_running = NULL;
        int r;

        if (sr->c->hooks.n_hooks[OCI_HOOK_POSTSTART] == 0)
                return 0;
        r = container_hook_state_string(sr->ct, CONTAINER_RUNNING, sr->ct->pid, &st_running);
        if (r < 0)
                return r;
        r = hooks_run(sr->c, OCI_HOOK_POSTSTART, st_running, sr->ct->bundle, reterr);
        if (r < 0) {
                kill_init_and_wait(sr->pidfd);
                if (sr->ct->unit) {
                        _cleanup_(sdunit_bus_closep) SdUnitBus *bus = NULL;
                        if (sdunit_bus_open(sr->ct->user_bus, &bus, NULL) >= 0)
                                (void) sdunit_kill_unit(bus, sr->ct->unit, SIGKILL, NULL);
                }
                return errwrap(reterr, r, "container stopped");
        }
        return 0;
}

/* NOTIFY_SOCKET: started means ready, as the container says; then it is the caller's (`run`) to keep
 * forwarding, or nobody's. */
static int start_notify(StartRun *sr, char **reterr) {
        const StartOptions *so = sr->so;
        pid_t mainpid = so && so->notify_mainpid > 0 ? so->notify_mainpid : sr->ct->pid;
        int r;

        if (sr->notify_fd >= 0) {
                _cleanup_(notify_proxy_freep) NotifyProxy *proxy = NULL;
                log_debug("start %s: waiting for READY=1 on its notify socket", sr->id);
                r = notify_proxy_new(sr->notify_fd, sr->notify_host, mainpid, &proxy);
                if (r < 0)
                        return errorf(reterr, r, "forward the notify socket of \"%s\" to %s: %s", sr->id,
                                      sr->notify_host, strerror(-r));
                TAKE_FD(sr->notify_fd);
                r = notify_wait_ready(proxy, sr->pidfd, sr->id, notify_timeout_usec(sr->c), reterr);
                if (r == -ECHILD)
                        sr->released = false; /* dead already */
                if (r < 0)
                        return r;
                if (so && so->ret_notify_proxy)
                        *so->ret_notify_proxy = TAKE_PTR(proxy);
        } else if (sr->notify_host) {
                /* A container that does not speak sd_notify ("started"): started is ready. */
                NotifyReady mode;
                if (notify_ready_mode(sr->c, &mode, NULL) >= 0 && mode == NOTIFY_READY_STARTED) {
                        char msg[64];
                        snprintf(msg, sizeof msg, "READY=1\nMAINPID=%d\n", (int) mainpid);
                        r = notify_send(sr->notify_host, msg);
                        if (r < 0)
                                log_warning("send READY=1 to NOTIFY_SOCKET %s: %s", sr->notify_host,
                                            strerror(-r));
                }
        }
        return 0;
}

/* The steps of start, in order. */
static int (*const start_steps[])(StartRun *sr, char **reterr) = {
        start_load, start_prepare, start_release, start_poststart, start_notify,
};

int container_start_full(const char *root, const char *id, const StartOptions *so, char **reterr) {
        _cleanup_(start_run_done) StartRun sr = {
                .root = root,
                .id = id,
                .so = so,
                .pidfd = -EBADF,
                .conn = -EBADF,
                .notify_fd = -EBADF,
        };

        FOREACH_ARRAY(step, start_steps, ELEMENTSOF(start_steps)) {
                int r = (*step)(&sr, reterr);
                if (r < 0)
                        return r;
        }
        sr.succeeded = true;
        return 0;
}

int container_kill(const char *root, const char *id, int sig, bool all, char **reterr) {
        _cleanup_(container_freep) Container *ct = NULL;
        _cleanup_close_ int pidfd = -EBADF;
        ContainerStatus st;
        int r;

        r = container_load_status(root, id, CONTAINER_LOCK_NONE, &ct, &st, reterr);
        if (r < 0)
                return r;

        /* Signal 0 asks whether there is something to signal; systemd's KillUnit takes no 0: --all then asks
         * the init, and a stopped container succeeds as it does for --all. */
        if (all && sig == 0 && st == CONTAINER_STOPPED)
                return 0;
        if (all && ct->unit && sig != 0) {
                _cleanup_(sdunit_bus_closep) SdUnitBus *bus = NULL;
                r = sdunit_bus_open(ct->user_bus, &bus, reterr);
                if (r < 0)
                        return errwrap(reterr, r, "connect to systemd");
                r = sdunit_kill_unit(bus, ct->unit, sig, reterr);
                /* runc: "kill --all" of a stopped container whose cgroup is gone succeeds (containerd's shim
                 * runs it on every stop, after the init has exited, and retries with backoff on failure). */
                if (r < 0 && st == CONTAINER_STOPPED)
                        return 0;
                if (r == -ENOENT)
                        return errorf(reterr, ESRCH, "container not running");
                if (r < 0)
                        return errwrap(reterr, r, "kill");
                return 0;
        }

        /* "container not running" is runc's text, which containerd's runc shim matches to mean "already gone". */
        if (st != CONTAINER_CREATED && st != CONTAINER_RUNNING && st != CONTAINER_PAUSED)
                return errorf(reterr, ESRCH, "container not running");
        pidfd = container_open_pidfd(ct);
        if (pidfd < 0)
                return errorf(reterr, ESRCH, "container not running");
        r = pidfd_send_sig(pidfd, sig);
        if (r < 0)
                return errorf(reterr, r, "kill container \"%s\": %s", id, strerror(-r));
        return 0;
}

/* A container whose state.json cannot be parsed: nothing recorded is trusted. Its scope is stopped by the
 * unit name that its config.json (kept in the state directory) gives, else by the default one, which
 * kills whatever runs in it; then the state goes. */
static int delete_corrupt(Container *ct, bool force, char **reterr) {
        _cleanup_(oci_config_freep) OciConfig *c = NULL;
        _cleanup_(sdunit_bus_closep) SdUnitBus *bus = NULL;
        _cleanup_free_ char *raw = NULL, *slice = NULL, *unit = NULL, *cg = NULL;
        CgroupLayout layout;
        size_t raw_len = 0;
        int r;

        if (!force)
                return errorf(reterr, EUCLEAN, "state of container \"%s\" is corrupt: use delete --force",
                              ct->id);
        if (container_read_config(ct, &raw, &raw_len) >= 0 &&
            oci_config_reparse(raw, raw_len, &c, NULL) >= 0)
                (void) sdunit_scope_name_from_cgroups_path(c->linux_.cgroups_path, ct->id, &slice, &unit,
                                                           NULL);
        if (!unit && sdunit_scope_name_from_cgroups_path(NULL, ct->id, &slice, &unit, NULL) < 0)
                return -ENOMEM;
        r = sdunit_bus_open(geteuid() != 0, &bus, NULL);
        if (r >= 0)
                teardown_unit(bus, unit, true);
        else
                log_warning("delete %s: cannot connect to systemd to stop %s: %s", ct->id, unit,
                            strerror(-r));
        /* The v1 cgroups systemd does not remove (cgroup_join_v1_untrimmed()), at the path systemd gives
         * the unit: the recorded one is not trusted. */
        if (geteuid() == 0 && cgroup_unit_path(slice, unit, &cg) >= 0 && cgroup_detect_layout(&layout) >= 0)
                cgroup_remove_v1_accounting(cg, layout);
        r = container_remove(ct);
        if (r < 0)
                return errorf(reterr, r, "remove state of \"%s\": %s", ct->id, strerror(-r));
        return 0;
}

int container_delete(const char *root, const char *id, bool force, char **reterr) {
        _cleanup_(container_freep) Container *ct = NULL;
        _cleanup_(oci_config_freep) OciConfig *c = NULL;
        _cleanup_(sdunit_bus_closep) SdUnitBus *bus = NULL;
        _cleanup_free_ char *raw = NULL;
        size_t raw_len = 0;
        ContainerStatus st;
        int r;

        r = container_load_salvage(root, id, CONTAINER_LOCK_EXCLUSIVE, &ct, reterr);
        if (r < 0)
                return r;
        if (ct->corrupt)
                return delete_corrupt(ct, force, reterr);
        st = container_status(ct);
        /* runc deletes a created container (killing its init) without --force: containerd's shim deletes a
         * task that was created but never started that way. Running and paused ones need --force. */
        if (st != CONTAINER_STOPPED && st != CONTAINER_CREATED && !force)
                return errorf(reterr, EBUSY, "cannot delete container \"%s\" that is not stopped: %s", id,
                              container_status_to_string(st));

        CgroupLayout layout;
        bool have_layout = cgroup_detect_layout(&layout) >= 0;
        if (st != CONTAINER_STOPPED && have_layout && !ct->user_bus)
                cgroup_thaw_v1_frozen(ct->cgroup, layout);
        if (st != CONTAINER_STOPPED) {
                _cleanup_close_ int pidfd = container_open_pidfd(ct);
                if (pidfd >= 0) {
                        (void) pidfd_send_sig(pidfd, SIGKILL);
                        (void) pidfd_wait_exit(pidfd, 10 * USEC_PER_SEC);
                }
        }

        if (ct->unit) {
                r = sdunit_bus_open(ct->user_bus, &bus, NULL);
                /* machined stops a dead machine's unit by name when it collects it, possibly after a new
                 * container of the same id has its scope: it forgets the machine before the scope goes. */
                if (r >= 0 && ct->machine && !ct->user_bus) {
                        _cleanup_free_ char *err = NULL;
                        if (sdunit_unregister_machine(ct->machine, &err) < 0)
                                log_debug("%s", err);
                }
                /* A container that stopped on its own has left an empty cgroup: no KillUnit for it. */
                if (r >= 0)
                        teardown_unit(bus, ct->unit, cgroup_may_be_populated(ct->cgroup));
        }
        /* A create killed before it recorded the cgroup: the path systemd gives the unit. */
        _cleanup_free_ char *unit_cg = NULL;
        if (isempty(ct->cgroup) && ct->unit && cgroup_unit_path(ct->slice, ct->unit, &unit_cg) < 0)
                return -ENOMEM;
        if (!ct->user_bus && have_layout)
                cgroup_remove_v1_accounting(unit_cg ?: ct->cgroup, layout);

        /* A container stopped by `checkpoint` had its poststop hooks run then. */
        if (faccessat(ct->dir_fd, CHECKPOINTED_MARKER, F_OK, 0) < 0 &&
            container_read_config(ct, &raw, &raw_len) >= 0 &&
            oci_config_reparse(raw, raw_len, &c, NULL) >= 0 && c->hooks.n_hooks[OCI_HOOK_POSTSTOP] > 0) {
                _cleanup_free_ char *state_json = NULL;
                if (container_hook_state_string(ct, CONTAINER_STOPPED, 0, &state_json) >= 0)
                        (void) hooks_run_all_warn(c, OCI_HOOK_POSTSTOP, state_json, ct->bundle ?: "/");
        }

        r = container_remove(ct);
        if (r < 0)
                return errorf(reterr, r, "remove state of \"%s\": %s", id, strerror(-r));
        return 0;
}
