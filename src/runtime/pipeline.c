/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The steps `create` and `restore` share (see pipeline.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "container.h"
#include "error-util.h"
#include "fileio.h"
#include "host-features.h"
#include "log.h"
#include "macro.h"
#include "netdev.h"
#include "pipeline.h"
#include "rootless.h"
#include "seccomp-cache.h"
#include "string-util.h"

/* Declared in container.h (SDRUN_TEST_STOP_AT, test builds only). */
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

/* The smallest linux.resources.memory.limit a container can start with (the engines' own floors are 4-6 MiB). */
#define MEMORY_LIMIT_MIN (4 << 20)

void bundle_done(Bundle *b) {
        oci_config_freep(&b->c);
        free(b->path);
        free(b->raw);
        free(b->rootfs);
        *b = (Bundle){};
}

int bundle_load(const char *path, const char *config_file, const char *id, Bundle *ret, char **reterr) {
        _cleanup_close_ int bundle_fd = -EBADF;
        _cleanup_free_ char *perr = NULL, *joined = NULL;
        struct stat st;
        int r;

        ret->path = realpath(path ?: ".", NULL);
        if (!ret->path)
                return errorf(reterr, -errno, "--bundle: \"%s\": %s", path ?: ".", strerror(errno));
        bundle_fd = open(ret->path, O_DIRECTORY | O_CLOEXEC | O_RDONLY);
        if (bundle_fd < 0)
                return errorf(reterr, -errno, "--bundle: \"%s\": %s", ret->path, strerror(errno));
        r = container_id_validate(id, reterr);
        if (r < 0)
                return r;

        const char *file = config_file ?: "config.json";
        r = read_full_file_at(bundle_fd, file, 16U << 20, &ret->raw, &ret->raw_len);
        if (r < 0)
                return errorf(reterr, r, "config.json: cannot read \"%s%s%s\": %s",
                              file[0] == '/' ? "" : ret->path, file[0] == '/' ? "" : "/", file,
                              r == -EFBIG ? "file too large" : strerror(-r));
        r = (ret->warned ? oci_config_reparse : oci_config_parse)(ret->raw, ret->raw_len, &ret->c, &perr);
        if (r < 0)
                return errorf(reterr, r, "config.json: %s", perr ?: strerror(-r));

        if (!ret->c->root_path)
                return errorf(reterr, EINVAL, "config.json: root.path: required");
        if (ret->c->root_path[0] == '/')
                joined = strdup(ret->c->root_path);
        else
                joined = strdup_printf("%s/%s", ret->path, ret->c->root_path);
        if (!joined)
                return -ENOMEM;
        ret->rootfs = realpath(joined, NULL);
        if (!ret->rootfs || stat(ret->rootfs, &st) < 0)
                return errorf(reterr, -errno, "config.json: root.path: \"%s\": %s", joined, strerror(errno));
        if (!S_ISDIR(st.st_mode))
                return errorf(reterr, ENOTDIR, "config.json: root.path: \"%s\" is not a directory", joined);
        return 0;
}

/* Whether the container has a namespace of type t of its own: a new one, or one joined by path that is not
 * the runtime's own (runc compares the joined namespace with its own the same way). Podman, CNI/netavark
 * and Kubernetes pods join a network namespace they prepared by path; joining the host's is what the
 * checks below must catch. A path that cannot be opened is not judged here: joining it fails later with
 * its own message. */
bool config_has_own_namespace(const OciConfig *c, OciNamespaceType t, const char *proc_name) {
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
                if (!config_has_own_namespace(c, OCI_NS_NETWORK, "net")) {
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
                if (!config_has_own_namespace(c, OCI_NS_UTS, "uts")) {
                        errorf(reterr, EINVAL,
                               "linux.sysctl: \"%s\" needs a uts namespace of the container's own", key);
                        return false;
                }
                return true;
        }
        if (strneq(key, "kernel.msg", 10) || strneq(key, "kernel.sem", 10) ||
            strneq(key, "kernel.shm", 10) || strneq(key, "fs.mqueue.", 10)) {
                if (!config_has_own_namespace(c, OCI_NS_IPC, "ipc")) {
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

        if (config_has_own_namespace(c, OCI_NS_MOUNT, "mnt"))
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

static int validate_config(const OciConfig *c, const BundleChecks *k, char **reterr) {
        if (c->has_process && c->process.terminal && !k->console_socket && !k->console_master)
                return errorf(reterr, EINVAL, "process.terminal is true: --console-socket is required");
        if (k->console_socket && !(c->has_process && c->process.terminal))
                return errorf(reterr, EINVAL, "--console-socket given but process.terminal is false");
        for (size_t i = 0; i < c->linux_.n_sysctl; i++)
                if (!is_paths_ns_sysctl_ok(c, c->linux_.sysctl[i].key, reterr))
                        return -EINVAL;
        /* hostname/domainname are set in the container's uts namespace, new or joined by path (a pod's);
         * never in the runtime's own, which would rename the host. */
        if ((!isempty(c->hostname) || !isempty(c->domainname)) &&
            !config_has_own_namespace(c, OCI_NS_UTS, "uts"))
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
        return host_check_lsm(c->has_process ? &c->process : NULL, &c->linux_, reterr);
}

int bundle_validate(const Bundle *b, const BundleChecks *k, SeccompProgram **ret_seccomp, char **reterr) {
        _cleanup_(seccomp_program_freep) SeccompProgram *seccomp = NULL;
        const OciConfig *c = b->c;
        int r;

        r = validate_config(c, k, reterr);
        if (r >= 0)
                r = validate_without_mount_namespace(c, b->rootfs, reterr);
        if (r >= 0 && k->rootless)
                r = rootless_validate_config(c, reterr);
        if (r >= 0)
                r = netdev_check(c, config_has_own_namespace(c, OCI_NS_NETWORK, "net"), k->rootless, reterr);
        /* linux.seccomp compiled here, not in the init: a bad filter fails before anything exists, and the
         * init (a copy-on-write clone of the runtime) only has to load the program. */
        if (r >= 0 && c->linux_.seccomp.present)
                r = seccomp_program_get(k->root, b->raw, b->raw_len, &c->linux_.seccomp, &seccomp, reterr);
        if (r < 0)
                return errwrap(reterr, r, "config.json");
        if (ret_seccomp)
                *ret_seccomp = TAKE_PTR(seccomp);
        return 0;
}

void scope_plan_done(ScopePlan *p) {
        cgroup_file_writes_done(&p->writes);
        unit_property_list_done(&p->props);
        free(p->slice);
        free(p->unit);
        *p = (ScopePlan){};
}

int scope_plan(const OciConfig *c, const char *id, ScopePlan *ret, char **reterr) {
        int r;

        r = sdunit_scope_name_from_cgroups_path(c->linux_.cgroups_path, id, &ret->slice, &ret->unit, reterr);
        if (r < 0)
                return errwrap(reterr, r, "config.json");
        log_set_context(id, ret->unit);
        r = cgroup_detect_layout(&ret->layout);
        if (r < 0)
                return errorf(reterr, r, "cannot determine the cgroup layout of /sys/fs/cgroup: %s",
                              strerror(-r));
        if (c->linux_.resources.present) {
                r = cgroup_props_from_resources(&c->linux_.resources, ret->layout, &ret->props, &ret->writes,
                                                reterr);
                if (r < 0)
                        return errwrap(reterr, r, "config.json");
                r = cgroup_check_block_devices(&c->linux_.resources, reterr);
                if (r < 0)
                        return errwrap(reterr, r, "config.json");
                r = cgroup_props_add_default_devices(&ret->props, &ret->writes);
                if (r < 0)
                        return r;
        }
        /* `systemctl stop` and `machinectl terminate` send SIGTERM, which a container's pid 1 ignores unless it
         * handles it: escalate to SIGKILL after 10 s, as `docker stop` does (an annotation may override). */
        r = unit_property_add_u64(&ret->props, "TimeoutStopUSec", 10 * USEC_PER_SEC);
        if (r < 0)
                return r;
        /* IOAccounting=yes (sdunit_start_scope) on a v1 layout means the blkio hierarchy, which no unit uses by
         * default: systemd then creates blkio cgroups for every sibling of the scope and of its slices when the
         * first such scope appears and removes them when the last goes, ~3 ms of PID 1 per container (see
         * bench/README.md). Turned off there unless linux.resources.blockIO asks for blkio anyway; an annotation
         * org.systemd.property.IOAccounting=true turns it back on. */
        if (ret->layout != CGROUP_LAYOUT_UNIFIED && !c->linux_.resources.block_io.present) {
                r = unit_property_add_bool(&ret->props, "IOAccounting", false);
                if (r < 0)
                        return r;
        }
        r = cgroup_props_from_annotations(c->annotations, c->n_annotations, &ret->props, reterr);
        if (r < 0)
                return errwrap(reterr, r, "config.json: annotations");
        return 0;
}

/* What `state` reports besides the lifecycle: runc's "owner" (the user who created the container) and the
 * config's annotations. Shared by create and restore; an allocation failure leaves the field unset. */
static void record_owner_and_annotations(Container *ct, const OciConfig *c) {
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

int container_state_new(const char *root, const char *id, const Bundle *b, const ScopePlan *p, bool user_bus,
                        Container **ret, char **reterr) {
        Container *ct;
        int r;

        r = container_new(root, id, ret, reterr);
        if (r < 0)
                return r;
        ct = *ret;
        ct->bundle = strdup(b->path);
        ct->rootfs = strdup(b->rootfs);
        ct->unit = p->service_owned ? NULL : strdup(p->unit);
        ct->slice = strdup(p->slice);
        ct->user_bus = user_bus;
        if (!ct->bundle || !ct->rootfs || (!ct->unit && !p->service_owned) || !ct->slice)
                return -ENOMEM;
        record_owner_and_annotations(ct, b->c);
        r = container_save_config(ct, b->raw, b->raw_len);
        if (r >= 0)
                r = container_save(ct);
        if (r < 0)
                return errorf(reterr, r, "write state of \"%s\": %s", id, strerror(-r));
        return 0;
}

/* Stop the unit and wait until it is gone. kill: SIGKILL whatever is left in it first (one more round trip,
 * worth it only when the cgroup may hold processes: StopUnit would SIGTERM them and wait TimeoutStopUSec). */
void unit_teardown(SdUnitBus *bus, const char *unit, const char *cgroup, bool kill, int log_level) {
        _cleanup_free_ char *err = NULL, *dir = NULL;
        bool loaded = false;
        int r;

        if (!bus || !unit)
                return;
        /* systemd creates a scope's cgroup when the scope starts and removes it when the scope stops; every
         * scope of ours has CollectMode=inactive-or-failed, so a unit whose cgroup is gone is dead and
         * collected (or about to be). Only a definite ENOENT counts: anything else asks systemd. */
        if (!isempty(cgroup) && cgroup_unified_dir(cgroup, &dir) >= 0) {
                if (access(dir, F_OK) >= 0)
                        loaded = true;
                else if (errno == ENOENT) {
                        log_debug("unit %s: its cgroup %s is gone, and the unit with it", unit, dir);
                        return;
                }
        }
        if (kill)
                (void) sdunit_kill_unit(bus, unit, SIGKILL, NULL);
        r = sdunit_stop_unit(bus, unit, loaded, UNIT_STOP_TIMEOUT_USEC, &err);
        if (r < 0 && r != -ENOENT)
                log_full_errno(log_level, 0, "stop unit %s: %s", unit, err ?: strerror(-r));
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
SdUnitMachineCall *machine_register_begin(const OciConfig *c, const char *id, pid_t leader,
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

int machine_register_end(SdUnitMachineCall *call, const char *id, char **ret_machine) {
        _cleanup_free_ char *err = NULL;
        int r;

        *ret_machine = NULL;
        if (!call)
                return 0;
        r = sdunit_register_machine_end(call, 25 * USEC_PER_SEC, &err);
        register_machine_report(r, err);
        if (r < 0)
                return 0;
        return sdunit_machine_name(id, ret_machine) < 0 ? -ENOMEM : 0;
}

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

int scope_enter(ScopeEntry *s, pid_t pid, int *ret_subgroup_fd, char **reterr) {
        int r;

        r = sdunit_start_scope(s->bus, s->unit, s->slice, s->description, pid, s->props,
                               SCOPE_JOB_TIMEOUT_USEC, reterr);
        if (r == -EEXIST)
                return scope_exists_error(s, reterr);
        if (r < 0)
                return errwrap(reterr, r, "%s", "");
        s->started = true;
        log_debug("scope %s started", s->unit);
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
int scope_place_stage1(pid_t stage1_pid, void *userdata, int *ret_cgroup_fd, char **reterr) {
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

int pid_file_write(const char *path, pid_t pid, char **reterr) {
        int r = write_pid_file(path, pid);
        if (r < 0)
                return errorf(reterr, r, "--pid-file: write \"%s\": %s", path, strerror(-r));
        return 0;
}
