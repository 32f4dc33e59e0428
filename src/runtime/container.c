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
#include "container.h"
#include "criu.h"
#include "fileio.h"
#include "host-console.h"
#include "host-hooks.h"
#include "keep-unit.h"
#include "log.h"
#include "error-util.h"
#include "host-credentials.h"
#include "macro.h"
#include "netdev.h"
#include "notify.h"
#include "oci-config.h"
#include "pipeline.h"
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
#include "userns-auto.h"

#define START_SOCKET START_SOCKET_NAME
#define SETUP_TIMEOUT_USEC (5 * 60 * USEC_PER_SEC)

/* How long start waits for an init that hung up without exec'ing to show its exit. */
#define INIT_EXIT_GRACE_USEC (2 * USEC_PER_SEC)

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

/* What container_create() holds while it runs. Everything from the state directory on is undone by
 * create_run_done() unless create got to its end: the init killed, the runtime out of the scope again, the
 * machine unregistered, the unit stopped, the --pid-file and the state directory removed, in that order. */
typedef struct CreateRun {
        const CreateOptions *o;
        bool rootless;
        bool succeeded;
        /* config.json and what is derived from it */
        Bundle b;
        const char *bundle, *rootfs; /* b.path, b.rootfs */
        OciConfig *c;                /* b.c */
        ScopePlan plan;
        NotifyReady notify_ready;
        UsernsAuto userns; /* the automatic user namespace: its range, locked until the state records it */
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
        KeepUnit keep;           /* --keep-unit: the service, and the payload cgroup made in it */
        SeccompProgram *seccomp; /* linux.seccomp compiled, for the init to load */
        Credentials credentials; /* CREDENTIALS_DIRECTORY read, for the init; wiped once it is cloned */
} CreateRun;

static void create_run_done(CreateRun *cr) {
        if (cr->ct && !cr->succeeded) {
                init_process_kill(&cr->ip);
                if (cr->in_scope)
                        (void) cgroup_leave_unit(getpid(), cr->orig, cr->n_orig, cr->cgroup);
                (void) keep_unit_leave(&cr->keep, NULL);
                if (cr->keep.made)
                        keep_unit_remove_payload(cr->keep.payload);
                if (cr->ct->machine)
                        (void) sdunit_unregister_machine(cr->ct->machine, NULL);
                if (cr->unit_started)
                        unit_teardown(cr->bus, cr->plan.unit, NULL, true, LOG_LEVEL_DEBUG);
                if (cr->unit_started && !cr->rootless && cr->cgroup)
                        cgroup_remove_v1_accounting(cr->cgroup, cr->plan.layout);
                if (cr->o->pid_file)
                        (void) unlink(cr->o->pid_file);
                (void) container_remove(cr->ct);
        }
        init_process_done(&cr->ip);
        cgroup_memberships_free(cr->orig, cr->n_orig);
        sdunit_machine_call_freep(&cr->machine_call);
        keep_unit_done(&cr->keep);
        seccomp_program_free(cr->seccomp);
        credentials_done(&cr->credentials);
        userns_auto_done(&cr->userns);
        free(cr->se.cgroup);
        free(cr->se.scope_dir);
        free(cr->cgroup);
        free(cr->scope_dir);
        cr->subgroup_fd = safe_close(cr->subgroup_fd);
        free(cr->description);
        sdunit_bus_closep(&cr->bus);
        cr->listen_fd = safe_close(cr->listen_fd);
        container_freep(&cr->ct);
        scope_plan_done(&cr->plan);
        bundle_done(&cr->b);
}

/* Does anything of the container get to see the init while it is still this process's image, before its
 * last exec (at start, through the sealed trampoline)? In a pid namespace of its own nothing of the
 * container exists before that exec but what the init forks for the createContainer and startContainer
 * hooks (which may execute the image's files), and the init is non-dumpable outside a user namespace.
 * Processes `exec` puts there meanwhile are checked by exec (exec_check_created_init()). A pid namespace
 * joined by path may hold another container's processes; the host's holds every --pid=host container. */
static bool create_needs_sealed_exe(const OciConfig *c) {
        const char *path = NULL;

        if (!oci_config_has_namespace(c, OCI_NS_PID, &path) || path)
                return true;
        return c->hooks.n_hooks[OCI_HOOK_CREATE_CONTAINER] > 0 ||
               c->hooks.n_hooks[OCI_HOOK_START_CONTAINER] > 0;
}

/* The bundle, the id and config.json, parsed, with its root.path resolved; with the automatic user
 * namespace, its range picked and config.json given it. Before the range is picked (nothing is made yet),
 * the re-exec from a sealed copy of the binary where the config needs it. */
static int create_load(CreateRun *cr, char **reterr) {
        int r;

        cr->b.warned = cr->o->config_warned;
        r = bundle_load(cr->o->bundle, cr->o->config_file, cr->o->id, &cr->b, reterr);
        if (r < 0)
                return r;
        if (cr->o->seal_exe && create_needs_sealed_exe(cr->b.c)) {
                r = cr->o->seal_exe();
                if (r < 0)
                        return errorf(reterr, r, "cannot run from a sealed copy of the runtime's binary: %s",
                                      strerror(-r));
        }
        r = userns_auto_setup(cr->o->root, cr->o->id, cr->rootless, &cr->b, &cr->userns, reterr);
        if (r < 0)
                return r;
        cr->bundle = cr->b.path;
        cr->rootfs = cr->b.rootfs;
        cr->c = cr->b.c;
        return 0;
}

/* Everything config.json alone can refuse, and the unit's name and properties. */
static int create_validate(CreateRun *cr, char **reterr) {
        const CreateOptions *o = cr->o;
        const OciConfig *c = cr->c;
        int r;

        BundleChecks k = {
                .root = o->root,
                .console_socket = o->console_socket,
                .console_master = o->ret_console_master,
                .rootless = cr->rootless,
        };
        r = bundle_validate(&cr->b, &k, &cr->seccomp, reterr);
        if (r < 0)
                return r;
        r = scope_plan(c, o->id, &cr->plan, reterr);
        if (r < 0)
                return r;
        cr->plan.service_owned = o->keep_unit;

        cr->notify_ready = NOTIFY_READY_CONTAINER;
        if (notify_host_socket() && (r = notify_ready_mode(c, &cr->notify_ready, reterr)) < 0)
                return r;
        if (notify_host_socket() && cr->notify_ready == NOTIFY_READY_CONTAINER) {
                uint64_t usec;
                r = notify_timeout_from_config(c, &usec, reterr);
                if (r < 0)
                        return r;
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

        r = container_state_new(o->root, o->id, &cr->b, &cr->plan, cr->rootless, &cr->ct, reterr);
        if (r < 0)
                return r;
        ct = cr->ct;
        if (cr->userns.on) {
                /* Recorded before the lock goes: the next create's pick sees the range taken. */
                ct->userns_base = cr->userns.base;
                ct->userns_size = USERNS_AUTO_SIZE;
                r = container_save(ct);
                if (r < 0)
                        return errorf(reterr, r, "write state of \"%s\": %s", o->id, strerror(-r));
                userns_auto_done(&cr->userns);
        }
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
                r = rootless_filter_resources(cr->bus, cr->plan.layout, &cr->plan.props, reterr);
                if (r < 0)
                        return r;
                rootless_filter_writes(&cr->plan.writes, cr->plan.layout);
        } else if (cr->plan.layout == CGROUP_LAYOUT_UNIFIED)
                cgroup_check_host_controllers(&cr->plan.props, "/sys/fs/cgroup");
        cr->subgroup = oci_config_annotation(cr->c, SUBGROUP_ANNOTATION);
        if (o->keep_unit && (cr->rootless || cr->subgroup))
                return errorf(reterr, EOPNOTSUPP, "--keep-unit: %s",
                              cr->rootless
                                      ? "not for a rootless container (the system manager's services only)"
                                      : "annotations[\"" SUBGROUP_ANNOTATION
                                        "\"]: the init's sub-cgroup is the service's \"payload\"");
        cr->se = (ScopeEntry){
                .bus = cr->bus,
                .unit = cr->plan.unit,
                .slice = cr->plan.slice,
                .description = cr->description,
                .subgroup = cr->subgroup,
                .cgroups_path = cr->c->linux_.cgroups_path,
                .props = &cr->plan.props,
                .writes = &cr->plan.writes,
                .layout = cr->plan.layout,
        };
        return 0;
}

/* The scope, with us in it, before the init exists: the init is born in the scope's cgroup. (Rootless, the
 * scope holds stage1 first, and the init is cloned from there: see create_clone_init().) */
static int create_enter_scope(CreateRun *cr, char **reterr) {
        int r;

        if (cr->rootless)
                return 0;
        if (cr->o->keep_unit) {
                /* The service's cgroup instead of a scope: the init is born in SERVICE/payload. */
                r = keep_unit_find(cr->bus, cr->plan.layout, &cr->keep, reterr);
                if (r < 0)
                        return r;
                log_set_context(cr->o->id, cr->keep.unit);
                r = keep_unit_enter(&cr->keep, cr->plan.layout, &cr->plan.props, &cr->plan.writes, reterr);
                if (r >= 0 && (free_and_strdup(&cr->plan.unit, cr->keep.unit) < 0 ||
                               !(cr->cgroup = strdup(cr->keep.payload))))
                        r = -ENOMEM;
                return r;
        }
        r = cgroup_read_memberships(0, &cr->orig, &cr->n_orig);
        if (r < 0)
                return errorf(reterr, r, "read /proc/self/cgroup: %s", strerror(-r));
        r = cgroup_check_unit_not_frozen(cr->plan.slice, cr->plan.unit, cr->plan.layout, reterr);
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
                        .own_cgroupns = config_has_own_namespace(cr->c, OCI_NS_CGROUP, "cgroup"),
                        .own_mountns = config_has_own_namespace(cr->c, OCI_NS_MOUNT, "mnt"),
                        .seccomp = cr->seccomp,
                        .credentials = &cr->credentials,
                },
                .init_cgroup_fd = cr->subgroup_fd,
                .idmap_rootfs = cr->userns.on,
                /* Rootless: the scope holds stage1 first, and the init is cloned from there. */
                .place_stage1 = cr->rootless ? scope_place_stage1 : NULL,
                .place_userdata = &cr->se,
        };
        r = bootstrap_clone_init(&bp, &cr->ip, reterr);
        credentials_done(&cr->credentials); /* the init has its copy */
        if (cr->keep.in_payload) {
                int k = keep_unit_leave(&cr->keep, r < 0 ? NULL : reterr);
                if (k < 0 && r >= 0)
                        return k;
        }
        if (cr->rootless) {
                cr->unit_started = cr->se.started;
                cr->cgroup = TAKE_PTR(cr->se.cgroup);
                cr->scope_dir = TAKE_PTR(cr->se.scope_dir);
                if (r >= 0 && !cr->cgroup)
                        r = errorf(reterr, EIO, "cannot find the cgroup of unit %s", cr->plan.unit);
        }
        if (cr->cgroup && !ct->cgroup && !(ct->cgroup = strdup(cr->cgroup)) && r >= 0)
                r = -ENOMEM;
        if (!cr->in_scope || cgroup_leave_unit(getpid(), cr->orig, cr->n_orig, cr->cgroup) >= 0)
                cr->in_scope = false;
        if (r < 0)
                return errwrap(reterr, r, "start the container init");
        if (cr->in_scope)
                return errorf(reterr, EIO, "cannot leave the cgroup of unit %s", cr->plan.unit);
        cr->listen_fd = safe_close(cr->listen_fd);
        if (cr->subgroup && cr->plan.layout == CGROUP_LAYOUT_UNIFIED) {
                /* The scope holds no process now: hand its controllers down to the container's subtree. */
                r = cgroup_enable_subtree_controllers(cr->scope_dir);
                if (r < 0)
                        return errorf(reterr, r, "enable the controllers of %s for its sub-cgroups: %s",
                                      cr->plan.unit, strerror(-r));
        }
        log_debug("create %s: init %d cloned, runtime back in its own cgroup", o->id, (int) cr->ip.pid);
        cr->machine_call = machine_register_begin(cr->c, o->id, cr->ip.pid, cr->rootfs);
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
        r = host_hooks_run(cr->c, OCI_HOOK_PRESTART, st_runtime, cr->bundle, reterr);
        if (r >= 0)
                r = host_hooks_run(cr->c, OCI_HOOK_CREATE_RUNTIME, st_runtime, cr->bundle, reterr);
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
        r = machine_register_end(cr->machine_call, o->id, &ct->machine);
        if (r < 0)
                return r;
        r = container_save(ct);
        if (r < 0)
                return errorf(reterr, r, "write state of \"%s\": %s", o->id, strerror(-r));
        if (o->pid_file) {
                r = pid_file_write(o->pid_file, cr->ip.pid, reterr);
                if (r < 0)
                        return r;
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
                .userns = USERNS_AUTO_NULL,
                .ip = { .pidfd = -EBADF, .sync_fd = -EBADF },
        };
        int r;

        FOREACH_ARRAY(step, create_steps, ELEMENTSOF(create_steps)) {
                r = (*step)(&cr, reterr);
                if (r < 0)
                        return r;
        }

        cr.ip.sync_fd = safe_close(cr.ip.sync_fd);
        log_info("created container %s in %s (init pid %d, bundle %s)", o->id, cr.plan.unit,
                 (int) cr.ct->pid, cr.bundle);
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

        r = container_load(sr->root, sr->id, CONTAINER_LOCK_EXCLUSIVE, &sr->ct, reterr);
        if (r < 0)
                return r;
        /* The look at the start socket that tells created from running is the connection start uses. */
        sr->ct->keep_start_conn = true;
        st = container_status(sr->ct);
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
        if (ct->start_conn >= 0)
                sr->conn = TAKE_FD(ct->start_conn);
        else {
                r = start_socket(ct, false, &sr->conn, reterr);
                if (r < 0)
                        return r;
        }
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
        r = host_hooks_run(sr->c, OCI_HOOK_POSTSTART, st_running, sr->ct->bundle, reterr);
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
                unit_teardown(bus, unit, NULL, true, LOG_LEVEL_DEBUG);
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
                        unit_teardown(bus, ct->unit, ct->cgroup, cgroup_may_be_populated(ct->cgroup),
                                      LOG_LEVEL_DEBUG);
        } else if (!isempty(ct->cgroup) && !ct->user_bus) {
                /* --keep-unit: the payload cgroup in the service, which stays (it is the service's to stop). */
                if (ct->machine)
                        (void) sdunit_unregister_machine(ct->machine, NULL);
                keep_unit_remove_payload(ct->cgroup);
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
                        (void) host_hooks_run_all_warn(c, OCI_HOOK_POSTSTOP, state_json, ct->bundle ?: "/");
        }

        r = container_remove(ct);
        if (r < 0)
                return errorf(reterr, r, "remove state of \"%s\": %s", id, strerror(-r));
        return 0;
}
