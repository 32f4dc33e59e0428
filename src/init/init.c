/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "become.h"
#include "clone-util.h"
#include "credentials.h"
#include "error-util.h"
#include "fileio.h"
#include "hooks.h"
#include "init.h"
#include "log.h"
#include "macro.h"
#include "rootfs.h"
#include "seccomp-filter.h"
#include "sync.h"
#include "trampoline.h"

/* Everything in this file runs in the container's namespaces, as root there (privileged). */

#define KEYCTL_JOIN_SESSION_KEYRING 1

typedef struct InitContext {
        const InitParams *p;
        const OciConfig *c;
        pid_t runtime_pid;
        int sync_fd; /* where a failure is reported: the runtime's socket, after commit the starter's */
        bool lost;   /* the runtime is gone or broke the protocol: nobody to report to */
        bool new_userns;
        RootfsContext rc;
        Become b;
        int hook_tramp; /* the trampoline the in-container hooks execute through */
        SyncMsg start;  /* `start`'s message (its payload: the state for the startContainer hooks) */
        char *err;      /* the message of the step that failed */
} InitContext;

/* A step that cannot talk to the runtime any more: exit without a report. */
static int init_lost(InitContext *ic, int r) {
        ic->lost = true;
        return r < 0 ? r : -EPIPE;
}

/* A become_*() step failed: its message, or "STEP: strerror" (as become_fail() would say). */
static int init_become_failed(InitContext *ic, int r, const char *step) {
        free(ic->err);
        ic->err = TAKE_PTR(ic->b.err);
        if (!ic->err)
                return errorf(&ic->err, r, "%s: %s", step, strerror(r < 0 ? -r : r));
        return r < 0 ? r : -r;
}

/* The one report of a failed step: the message the step left, or "STEP: strerror". */
_noreturn_ static void init_fail(InitContext *ic, int r, const char *step) {
        if (ic->lost)
                _exit(EXIT_FAILURE);
        if (ic->err)
                sync_send_error(ic->sync_fd, r, "%s", ic->err);
        else
                sync_send_error(ic->sync_fd, r, "%s: %s", step, strerror(r < 0 ? -r : r));
        _exit(EXIT_FAILURE);
}

/* If the runtime dies before the container is committed, so do we: no orphan in the scope. Then wait for
 * the runtime's go (the id maps are written by then). */
static int init_attach(InitContext *ic) {
        int r;

        /* (In a new pid namespace getppid() is 0; a runtime that died before this point makes the first
         * receive below fail.) */
        pid_t ppid = getppid();
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || (ppid != ic->runtime_pid && ppid != 0))
                return init_lost(ic, -ESRCH);
        safe_close(ic->p->close_in_init_fd);
        log_set_sink(NULL);
        /* The console step hands our stdio to the container: debug lines go on to the runtime's stderr. */
        (void) log_pin_stderr((int) (3 + ic->p->preserve_fds));

        r = sync_expect(ic->sync_fd, -1, USEC_INFINITY, SYNC_GO, NULL, NULL);
        if (r < 0)
                return init_lost(ic, r);
        return 0;
}

static int init_become_root(InitContext *ic) {
        const OciConfig *c = ic->c;

        ic->new_userns = false;
        for (size_t i = 0; i < c->linux_.n_namespaces; i++)
                if (c->linux_.namespaces[i].type == OCI_NS_USER)
                        ic->new_userns = !c->linux_.namespaces[i].path;
        ic->b.in_userns = oci_config_has_namespace(c, OCI_NS_USER, NULL);
        if (!ic->b.in_userns)
                return 0;
        /* Become root of the user namespace (the id maps are written by now). */
        return become_userns_root(&ic->err);
}

/* A new time namespace is made here, not by the clone: its offsets can be written only while no process is
 * in it, and made inside the container's user namespace it belongs to that one, as with runc's. One owned by
 * the host's user namespace could not be entered by a second container that joins the user namespace first
 * (it would lack CAP_SYS_ADMIN over the owner), and rootless, could not be made at all. unshare() makes it
 * for our children only; setns() on time_for_children moves the init itself in, so that the hooks it runs,
 * the user's process and `exec` all see it. Before setresuid(): then /proc/self is still ours to write (a
 * changed uid makes the init non-dumpable, and its /proc files the host root's, unmapped in the namespace). */
static int init_time_namespace(InitContext *ic) {
        const OciLinux *l = &ic->c->linux_;
        const char *ns_path = NULL;
        char buf[128];
        int k = 0, r;

        if (!oci_config_has_namespace(ic->c, OCI_NS_TIME, &ns_path) || ns_path)
                return 0;
        if (unshare(CLONE_NEWTIME) < 0) {
                r = -errno;
                return errorf(&ic->err, r, "create time namespace: %s", strerror(-r));
        }
        if (l->time_monotonic.present)
                k += snprintf(buf + k, sizeof buf - (size_t) k, "monotonic %lld %u\n",
                              (long long) l->time_monotonic.secs, l->time_monotonic.nanosecs);
        if (l->time_boottime.present)
                k += snprintf(buf + k, sizeof buf - (size_t) k, "boottime %lld %u\n",
                              (long long) l->time_boottime.secs, l->time_boottime.nanosecs);
        if (k > 0) {
                r = write_string_file("/proc/self/timens_offsets", buf);
                if (r < 0)
                        return errorf(&ic->err, r, "linux.timeOffsets: write /proc/self/timens_offsets: %s",
                                      strerror(-r));
        }
        _cleanup_close_ int fd = open("/proc/self/ns/time_for_children", O_RDONLY | O_CLOEXEC);
        if (fd < 0 || setns(fd, CLONE_NEWTIME) < 0) {
                r = -errno;
                return errorf(&ic->err, r, "enter the new time namespace: %s", strerror(-r));
        }
        return 0;
}

/* Its uts namespace, new or joined by path (a pod's): create refused the runtime's own one. */
static int init_set_names(InitContext *ic) {
        const OciConfig *c = ic->c;
        int r;

        if (!oci_config_has_namespace(c, OCI_NS_UTS, NULL))
                return 0;
        if (c->hostname && sethostname(c->hostname, strlen(c->hostname)) < 0) {
                r = -errno;
                return errorf(&ic->err, r, "hostname: sethostname(\"%s\"): %s", c->hostname, strerror(-r));
        }
        if (c->domainname && setdomainname(c->domainname, strlen(c->domainname)) < 0) {
                r = -errno;
                return errorf(&ic->err, r, "domainname: setdomainname(\"%s\"): %s", c->domainname,
                              strerror(-r));
        }
        return 0;
}

static int init_apply_sysctl(InitContext *ic) {
        const OciLinux *l = &ic->c->linux_;

        for (size_t i = 0; i < l->n_sysctl; i++) {
                _cleanup_free_ char *path = NULL;
                if (strstr(l->sysctl[i].key, "..") || strchr(l->sysctl[i].key, '/'))
                        return errorf(&ic->err, EINVAL, "linux.sysctl: invalid key \"%s\"",
                                      l->sysctl[i].key);
                if (asprintf(&path, "/proc/sys/%s", l->sysctl[i].key) < 0)
                        return -ENOMEM;
                for (char *q = path + strlen("/proc/sys/"); *q; q++)
                        if (*q == '.')
                                *q = '/';
                int r = write_string_file(path, l->sysctl[i].value);
                if (r < 0)
                        return errorf(&ic->err, r, "linux.sysctl: set \"%s\" to \"%s\": %s",
                                      l->sysctl[i].key, l->sysctl[i].value, strerror(-r));
        }
        return 0;
}

static int init_prepare_rootfs(InitContext *ic) {
        const InitParams *p = ic->p;

        ic->rc = (RootfsContext){
                .config = ic->c,
                .rootfs = p->rootfs,
                .no_pivot = p->no_pivot,
                .new_userns = ic->new_userns,
                .own_cgroupns = p->own_cgroupns,
                .own_mountns = p->own_mountns,
                /* Its own network namespace, new or joined by path: a fresh sysfs shows it. */
                .new_netns = oci_config_has_namespace(ic->c, OCI_NS_NETWORK, NULL),
                .bundle = p->bundle,
                .bind_source_fds = p->bind_source_fds,
                .own_cgroup_fd = p->own_cgroup_fd,
                .root_tree_fd = p->root_tree_fd,
        };
        return rootfs_prepare(&ic->rc, &ic->err);
}

/* The credentials of the unit that runs the runtime, on a read-only ramfs of the container's own (see
 * credentials.h), before the createContainer hooks, which see them as the container will. Without a mount
 * namespace of its own the container gets none. */
static int init_credentials(InitContext *ic) {
        const Credentials *c = ic->p->credentials;
        const char *target;
        int r;

        if (!c || !c->present)
                return 0;
        if (!ic->p->own_mountns) {
                log_debug("no mount namespace of its own: the container gets no credentials");
                return 0;
        }
        r = credentials_install(c, ic->c, ic->p->rootfs, &target, &ic->err);
        if (r < 0)
                return r;
        ic->b.credentials_dir = target;
        return 0;
}

/* prestart and createRuntime hooks run in the runtime now; then createContainer hooks here, in the
 * container's namespaces, before pivot_root, with paths resolved in the runtime's mount tree. */
static int init_create_container_hooks(InitContext *ic) {
        const OciConfig *c = ic->c;
        SyncMsg cont;
        int r;

        r = sync_send(ic->sync_fd, SYNC_PREPARED, 0, NULL, 0, -EBADF);
        if (r < 0)
                return init_lost(ic, r);
        r = sync_expect(ic->sync_fd, -1, USEC_INFINITY, SYNC_CONTINUE, &cont, NULL);
        if (r < 0)
                return init_lost(ic, r);
        /* Hooks run in here execute through the sealed trampoline too: a hook path that resolves to
         * /proc/self/exe must not run the runtime's binary with the init's privileges. */
        if (c->hooks.n_hooks[OCI_HOOK_CREATE_CONTAINER] > 0 ||
            c->hooks.n_hooks[OCI_HOOK_START_CONTAINER] > 0) {
                r = trampoline_open(&ic->hook_tramp);
                if (r < 0) {
                        sync_msg_done(&cont);
                        return errorf(&ic->err, r, "prepare the exec trampoline for hooks (memfd): %s",
                                      strerror(-r));
                }
        }
        r = container_hooks_run(c, OCI_HOOK_CREATE_CONTAINER, cont.payload ?: "{}", ic->p->bundle,
                                ic->hook_tramp, false, &ic->err);
        sync_msg_done(&cont);
        return r;
}

static int init_finish_rootfs(InitContext *ic) {
        int r;

        r = rootfs_finish(&ic->rc, &ic->err);
        if (r < 0)
                return r;
        if (ic->p->after_pivot)
                ic->p->after_pivot();
        return 0;
}

static int init_console(InitContext *ic) {
        const OciProcess *p = ic->b.p;
        int r;

        if (p && p->terminal && !ic->p->has_console_socket)
                return errorf(&ic->err, EINVAL,
                              "process.terminal is true but no --console-socket was given");
        if (p) {
                /* (Without a mount namespace of its own, /dev/console is the host's: left alone.) */
                r = become_terminal(&ic->b, ic->p->own_mountns ? rootfs_setup_console : NULL);
                if (r < 0)
                        return init_become_failed(ic, r, "console");
        } else if (setsid() < 0 && errno != EPERM) {
                r = -errno;
                return errorf(&ic->err, r, "setsid: %s", strerror(-r));
        }
        return 0;
}

static int init_join_keyring(InitContext *ic) {
        char name[256];

        if (ic->p->no_new_keyring)
                return 0;
        snprintf(name, sizeof name, "_ses.%s", ic->p->id);
        /* Not every kernel or seccomp profile of a parent runtime allows keyctl: best effort, as runc. */
        if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, name) < 0)
                log_debug("join session keyring %s: %m", name);
        return 0;
}

/* Everything that can fail because of the bundle fails here, during create. */
static int init_prepare_process(InitContext *ic) {
        int r;

        if (!ic->b.p)
                return 0;
        r = become_prepare(&ic->b);
        if (r < 0)
                return init_become_failed(ic, r, "process");
        /* linux.seccomp was compiled by the runtime before the clone (or taken from its cache): the init only
         * loads it. */
        if (ic->c->linux_.seccomp.present) {
                if (!ic->p->seccomp)
                        return errorf(&ic->err, EINVAL,
                                      "linux.seccomp: the runtime passed no compiled filter");
                ic->b.filter = ic->p->seccomp;
        }
        return 0;
}

/* Ready: the runtime records the container and commits; from then on the container outlives it. */
static int init_commit(InitContext *ic) {
        int r;

        (void) prctl(PR_SET_NAME, ic->p->comm);
        r = sync_send(ic->sync_fd, SYNC_READY, 0, NULL, 0, -EBADF);
        if (r < 0)
                return init_lost(ic, r);
        r = sync_expect(ic->sync_fd, -1, USEC_INFINITY, SYNC_COMMITTED, NULL, NULL);
        if (r < 0)
                return init_lost(ic, r);
        (void) prctl(PR_SET_PDEATHSIG, 0);
        /* (the create sync socket, runc's pipe: create returns once it is closed) */
        log_debug("init: closing the pipe to signal completion");
        log_unpin_stderr();
        ic->sync_fd = safe_close(ic->sync_fd);
        return 0;
}

/* Wait for `start` on the start socket; its connection is where everything from now on is reported. */
static int init_wait_start(InitContext *ic) {
        for (;;) {
                _cleanup_close_ int conn = accept4(ic->p->start_listen_fd, NULL, NULL, SOCK_CLOEXEC);
                if (conn < 0) {
                        if (errno == EINTR || errno == ECONNABORTED)
                                continue;
                        return init_lost(ic, -errno);
                }
                /* A connection that does not say SYNC_START within a bound is not a starter. */
                if (sync_expect(conn, -1, 10 * USEC_PER_SEC, SYNC_START, &ic->start, NULL) < 0)
                        continue;
                safe_close(ic->p->start_listen_fd);
                ic->sync_fd = ic->b.sync_fd = TAKE_FD(conn);
                return 0;
        }
}

/* The startContainer hooks run last, from become_exec(): as the process's user, with its capabilities and
 * its seccomp filter (a hook that runs in the container is as confined as the container; runc's and crun's
 * order), through the sealed trampoline. */
static int init_run_start_container_hooks(Become *b, void *userdata) {
        InitContext *ic = userdata;
        const OciSeccomp *s = b->filter ? &b->c->linux_.seccomp : NULL;
        int r;

        r = container_hooks_run(ic->c, OCI_HOOK_START_CONTAINER, ic->start.payload ?: "{}", "/",
                                ic->hook_tramp, trampoline_seccomp_blocks_execveat(s), &b->err);
        sync_msg_done(&ic->start);
        ic->hook_tramp = safe_close(ic->hook_tramp);
        return r;
}

static int init_start_container_hooks(InitContext *ic) {
        if (!ic->b.p) {
                sync_msg_done(&ic->start);
                return errorf(&ic->err, EINVAL,
                              "cannot start a container without a process in its config.json");
        }
        if (ic->c->hooks.n_hooks[OCI_HOOK_START_CONTAINER] == 0) {
                sync_msg_done(&ic->start);
                ic->hook_tramp = safe_close(ic->hook_tramp);
                return 0;
        }
        ic->b.before_exec = init_run_start_container_hooks;
        ic->b.before_exec_userdata = ic;
        return 0;
}

/* The steps, in order; a step's name is what its failure says when the step left no message of its own. */
static const struct {
        const char *name;
        int (*run)(InitContext *ic);
} init_steps[] = {
        { "attach", init_attach },
        { "time namespace", init_time_namespace },
        { "setresuid", init_become_root },
        { "hostname", init_set_names },
        { "sysctl", init_apply_sysctl },
        { "prepare rootfs", init_prepare_rootfs },
        { "credentials", init_credentials },
        { "createContainer hooks", init_create_container_hooks },
        { "finish rootfs", init_finish_rootfs },
        { "console", init_console },
        { "keyring", init_join_keyring },
        { "process", init_prepare_process },
        { "commit", init_commit },
        { "wait for start", init_wait_start },
        { "startContainer hooks", init_start_container_hooks },
};

_noreturn_ void init_main(const InitParams *p, int sync_fd, pid_t runtime_pid) {
        const OciConfig *c = p->config;
        InitContext ic = {
                .p = p,
                .c = c,
                .runtime_pid = runtime_pid,
                .sync_fd = sync_fd,
                .hook_tramp = -EBADF,
                .b = { .role = "standard_init",
                       .p = c->has_process ? &c->process : NULL,
                       .c = c,
                       /* bootstrap_clone_init() wrote it, from the host */
                       .oom_score_adj_done = true,
                       .sync_fd = sync_fd,
                       .step_timeout_usec = USEC_INFINITY,
                       .preserve_fds = p->preserve_fds,
                       .listen_fds = p->listen_fds,
                       .listen_fdnames = p->listen_fdnames },
        };

        FOREACH_ARRAY(s, init_steps, ELEMENTSOF(init_steps)) {
                if (s > init_steps)
                        log_debug("child process in init(): %s", s->name);
                int r = s->run(&ic);
                if (r < 0)
                        init_fail(&ic, r, s->name);
        }
        become_exec(&ic.b);
}
