/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "become.h"
#include "bootstrap.h"
#include "criu.h"
#include "capabilities.h"
#include "console.h"
#include "fileio.h"
#include "hooks.h"
#include "log.h"
#include "macro.h"
#include "process-util.h"
#include "process.h"
#include "rootfs.h"
#include "rootless.h"
#include "seccomp-filter.h"
#include "state.h"
#include "sync.h"
#include "trampoline.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

#define KEYCTL_JOIN_SESSION_KEYRING 1

unsigned long namespace_clone_flag(OciNamespaceType t) {
        static const unsigned long table[_OCI_NS_MAX] = {
                [OCI_NS_PID] = CLONE_NEWPID,   [OCI_NS_NETWORK] = CLONE_NEWNET, [OCI_NS_MOUNT] = CLONE_NEWNS,
                [OCI_NS_IPC] = CLONE_NEWIPC,   [OCI_NS_UTS] = CLONE_NEWUTS,     [OCI_NS_USER] = CLONE_NEWUSER,
                [OCI_NS_CGROUP] = CLONE_NEWCGROUP, [OCI_NS_TIME] = CLONE_NEWTIME,
        };
        return t >= 0 && t < _OCI_NS_MAX ? table[t] : 0;
}

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

/* cgroup_fd >= 0: the child is born in that (cgroup v2) cgroup (CLONE_INTO_CGROUP). */
static pid_t raw_clone3(uint64_t flags, int *pidfd, int exit_signal, int cgroup_fd) {
        struct clone_args args = {
                .flags = flags | (cgroup_fd >= 0 ? CLONE_INTO_CGROUP : 0),
                .pidfd = (uint64_t) (uintptr_t) pidfd,
                .exit_signal = (uint64_t) exit_signal,
                .cgroup = cgroup_fd >= 0 ? (uint64_t) cgroup_fd : 0,
        };
        return (pid_t) syscall(SYS_clone3, &args, sizeof args);
}

/* ---- the init: everything below runs in the container's namespaces, as root there (privileged) ---- */

/* Rootless: the cgroup directory the init is born in, as stage1 received it (the init inherits it). */
static int init_own_cgroup_fd = -EBADF;

typedef struct InitContext {
        const BootstrapParams *bp;
        const OciConfig *c;
        int sync_fd;
        bool new_userns;
        char *err;
} InitContext;

_noreturn_ static void init_fail(InitContext *ic, int r, const char *step) {
        if (ic->err)
                sync_send_error(ic->sync_fd, r, "%s", ic->err);
        else
                sync_send_error(ic->sync_fd, r, "%s: %s", step, strerror(r < 0 ? -r : r));
        _exit(EXIT_FAILURE);
}

static int init_set_err(InitContext *ic, const char *fmt, ...) _printf_(2, 3);
static int init_set_err(InitContext *ic, const char *fmt, ...) {
        va_list ap;
        free(ic->err);
        va_start(ap, fmt);
        if (vasprintf(&ic->err, fmt, ap) < 0)
                ic->err = NULL;
        va_end(ap);
        return 0;
}

static int apply_sysctl(InitContext *ic) {
        const OciLinux *l = &ic->c->linux_;

        for (size_t i = 0; i < l->n_sysctl; i++) {
                _cleanup_free_ char *path = NULL;
                if (strstr(l->sysctl[i].key, "..") || strchr(l->sysctl[i].key, '/')) {
                        init_set_err(ic, "linux.sysctl: invalid key \"%s\"", l->sysctl[i].key);
                        return -EINVAL;
                }
                if (asprintf(&path, "/proc/sys/%s", l->sysctl[i].key) < 0)
                        return -ENOMEM;
                for (char *p = path + strlen("/proc/sys/"); *p; p++)
                        if (*p == '.')
                                *p = '/';
                int r = write_string_file(path, l->sysctl[i].value);
                if (r < 0) {
                        init_set_err(ic, "linux.sysctl: set \"%s\" to \"%s\": %s", l->sysctl[i].key,
                                     l->sysctl[i].value, strerror(-r));
                        return r;
                }
        }
        return 0;
}

static void init_join_keyring(InitContext *ic) {
        char name[256];

        if (ic->bp->no_new_keyring)
                return;
        snprintf(name, sizeof name, "_ses.%s", ic->bp->id);
        /* Not every kernel or seccomp profile of a parent runtime allows keyctl: best effort, as runc. */
        if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, name) < 0)
                log_debug("join session keyring %s: %m", name);
}

/* After SYNC_COMMITTED: wait for `start`. Returns the connection to the starter. */
static int init_wait_start(InitContext *ic, SyncMsg *ret_start) {
        for (;;) {
                _cleanup_close_ int conn = accept4(ic->bp->start_listen_fd, NULL, NULL, SOCK_CLOEXEC);
                if (conn < 0) {
                        if (errno == EINTR || errno == ECONNABORTED)
                                continue;
                        return -errno;
                }
                SyncMsg m;
                /* A connection that does not say SYNC_START within a bound is not a starter. */
                if (sync_expect(conn, -1, 10 * USEC_PER_SEC, SYNC_START, &m, NULL) < 0)
                        continue;
                *ret_start = m;
                return TAKE_FD(conn);
        }
}

_noreturn_ static void init_main(const BootstrapParams *bp, int sync_fd, pid_t runtime_pid) {
        InitContext ic = { .bp = bp, .c = bp->config, .sync_fd = sync_fd };
        const OciConfig *c = bp->config;
        const OciProcess *p = c->has_process ? &c->process : NULL;
        Become b = { .p = p, .c = c, .sync_fd = sync_fd, .step_timeout_usec = USEC_INFINITY,
                     .preserve_fds = bp->preserve_fds, .listen_fds = bp->listen_fds };
        _cleanup_close_ int hook_tramp = -EBADF;
        int r;

        /* If the runtime dies before the container is committed, so do we: no orphan in the scope. */
        /* (In a new pid namespace getppid() is 0; a runtime that died before this point makes the first
         * receive below fail.) */
        pid_t ppid = getppid();
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || (ppid != runtime_pid && ppid != 0))
                _exit(EXIT_FAILURE);
        safe_close(bp->close_in_init_fd);
        log_set_sink(NULL);

        r = sync_expect(sync_fd, -1, USEC_INFINITY, SYNC_GO, NULL, NULL);
        if (r < 0)
                _exit(EXIT_FAILURE);

        ic.new_userns = false;
        for (size_t i = 0; i < c->linux_.n_namespaces; i++)
                if (c->linux_.namespaces[i].type == OCI_NS_USER)
                        ic.new_userns = !c->linux_.namespaces[i].path;
        bool has_userns = oci_config_has_namespace(c, OCI_NS_USER, NULL);
        b.in_userns = has_userns;
        if (has_userns) {
                /* Become root of the user namespace (the id maps are written by now). */
                if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0) {
                        init_set_err(&ic, "become root in the user namespace: %m");
                        init_fail(&ic, -errno, "setresuid");
                }
        }

        const char *ns_path = NULL;
        /* Its uts namespace, new or joined by path (a pod's): create refused the runtime's own one. */
        if (oci_config_has_namespace(c, OCI_NS_UTS, NULL)) {
                if (c->hostname && sethostname(c->hostname, strlen(c->hostname)) < 0) {
                        init_set_err(&ic, "hostname: sethostname(\"%s\"): %m", c->hostname);
                        init_fail(&ic, -errno, "hostname");
                }
                if (c->domainname && setdomainname(c->domainname, strlen(c->domainname)) < 0) {
                        init_set_err(&ic, "domainname: setdomainname(\"%s\"): %m", c->domainname);
                        init_fail(&ic, -errno, "domainname");
                }
        }

        r = apply_sysctl(&ic);
        if (r < 0)
                init_fail(&ic, r, "sysctl");

        RootfsContext rc = {
                .config = c,
                .rootfs = bp->rootfs,
                .no_pivot = bp->no_pivot,
                .new_userns = ic.new_userns,
                .new_cgroupns = oci_config_has_namespace(c, OCI_NS_CGROUP, &ns_path) && !ns_path,
                /* Its own network namespace, new or joined by path: a fresh sysfs shows it. */
                .new_netns = oci_config_has_namespace(c, OCI_NS_NETWORK, NULL),
                .bundle = bp->bundle,
                .bind_source_fds = bp->bind_source_fds,
                .own_cgroup_fd = init_own_cgroup_fd,
        };
        r = rootfs_prepare(&rc, &ic.err);
        if (r < 0)
                init_fail(&ic, r, "prepare rootfs");

        /* prestart and createRuntime hooks run in the runtime now; then createContainer hooks here, in the
         * container's namespaces, before pivot_root, with paths resolved in the runtime's mount tree. */
        r = sync_send(sync_fd, SYNC_PREPARED, 0, NULL, 0, -EBADF);
        if (r < 0)
                _exit(EXIT_FAILURE);
        SyncMsg cont;
        r = sync_expect(sync_fd, -1, USEC_INFINITY, SYNC_CONTINUE, &cont, NULL);
        if (r < 0)
                _exit(EXIT_FAILURE);
        /* Hooks run in here execute through the sealed trampoline too: a hook path that resolves to
         * /proc/self/exe must not run the runtime's binary with the init's privileges. */
        if (c->hooks.n_hooks[OCI_HOOK_CREATE_CONTAINER] > 0 || c->hooks.n_hooks[OCI_HOOK_START_CONTAINER] > 0) {
                r = trampoline_open(&hook_tramp);
                if (r < 0) {
                        init_set_err(&ic, "prepare the exec trampoline for hooks (memfd): %s", strerror(-r));
                        init_fail(&ic, r, "hooks");
                }
                hooks_exec_through(hook_tramp);
        }
        r = hooks_run(c, OCI_HOOK_CREATE_CONTAINER, cont.payload ?: "{}", bp->bundle, &ic.err);
        sync_msg_done(&cont);
        if (r < 0)
                init_fail(&ic, r, "createContainer hooks");

        r = rootfs_finish(&rc, &ic.err);
        if (r < 0)
                init_fail(&ic, r, "finish rootfs");
        criu_reopen_dev_null_stdio();

        if (p && p->terminal && !bp->has_console_socket) {
                init_set_err(&ic, "process.terminal is true but no --console-socket was given");
                init_fail(&ic, -EINVAL, "console");
        }
        if (p) {
                r = become_terminal(&b, rootfs_setup_console);
                if (r < 0)
                        become_fail(&b, r, "console");
        } else if (setsid() < 0 && errno != EPERM) {
                init_set_err(&ic, "setsid: %m");
                init_fail(&ic, -errno, "setsid");
        }

        init_join_keyring(&ic);

        if (p) {
                /* Everything that can fail because of the bundle fails here, during create. */
                r = become_prepare(&b);
                if (r < 0)
                        become_fail(&b, r, "process");
                if (c->linux_.seccomp.present) {
                        r = oci_seccomp_prepare(&c->linux_.seccomp, &b.filter, &b.err);
                        if (r < 0)
                                become_fail(&b, r, "seccomp");
                }
        }

        (void) prctl(PR_SET_NAME, INIT_COMM);
        r = sync_send(sync_fd, SYNC_READY, 0, NULL, 0, -EBADF);
        if (r < 0)
                _exit(EXIT_FAILURE);
        r = sync_expect(sync_fd, -1, USEC_INFINITY, SYNC_COMMITTED, NULL, NULL);
        if (r < 0)
                _exit(EXIT_FAILURE);
        /* Committed: the container outlives the runtime from now on. */
        (void) prctl(PR_SET_PDEATHSIG, 0);
        safe_close(sync_fd);

        SyncMsg start;
        _cleanup_close_ int conn = init_wait_start(&ic, &start);
        if (conn < 0)
                _exit(EXIT_FAILURE);
        safe_close(bp->start_listen_fd);
        ic.sync_fd = conn;
        b.sync_fd = conn;

        if (!p) {
                init_set_err(&ic, "cannot start a container without a process in its config.json");
                init_fail(&ic, -EINVAL, "start");
        }

        r = hooks_run(c, OCI_HOOK_START_CONTAINER, start.payload ?: "{}", "/", &ic.err);
        sync_msg_done(&start);
        if (r < 0)
                init_fail(&ic, r, "startContainer hooks");

        hooks_exec_through(-EBADF);
        hook_tramp = safe_close(hook_tramp);
        become_exec(&b);
}

/* ---- the runtime side ---- */

static int open_ns_paths(const OciConfig *c, int fds[_OCI_NS_MAX], char **reterr) {
        for (size_t i = 0; i < c->linux_.n_namespaces; i++) {
                const OciNamespace *ns = &c->linux_.namespaces[i];
                if (!ns->path)
                        continue;
                fds[ns->type] = open(ns->path, O_RDONLY | O_CLOEXEC);
                if (fds[ns->type] < 0) {
                        int r = -errno;
                        if (reterr && asprintf(reterr, "linux.namespaces[%zu]: open \"%s\": %s", i, ns->path,
                                               strerror(errno)) < 0)
                                *reterr = NULL;
                        return r;
                }
        }
        return 0;
}

static int write_time_offsets(const OciConfig *c) {
        char buf[128];
        int k = 0;

        if (c->linux_.time_monotonic.present)
                k += snprintf(buf + k, sizeof buf - (size_t) k, "monotonic %lld %u\n",
                              (long long) c->linux_.time_monotonic.secs, c->linux_.time_monotonic.nanosecs);
        if (c->linux_.time_boottime.present)
                k += snprintf(buf + k, sizeof buf - (size_t) k, "boottime %lld %u\n",
                              (long long) c->linux_.time_boottime.secs, c->linux_.time_boottime.nanosecs);
        if (k == 0)
                return 0;
        return write_string_file("/proc/self/timens_offsets", buf);
}

/* stage1: join namespaces by path (user first), create a time namespace, clone the init as our sibling. */
_noreturn_ static void stage1_main(const BootstrapParams *bp, int sync_fd, const int ns_fds[_OCI_NS_MAX],
                                   unsigned long new_flags, pid_t runtime_pid) {
        static const OciNamespaceType order[] = { OCI_NS_USER,  OCI_NS_MOUNT, OCI_NS_NETWORK, OCI_NS_IPC,
                                                  OCI_NS_UTS,   OCI_NS_CGROUP, OCI_NS_PID,     OCI_NS_TIME };
        int pidfd = -EBADF;
        pid_t pid;
        int r;

        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != runtime_pid)
                _exit(EXIT_FAILURE);

        int cgroup_fd = bp->init_cgroup_fd;
        if (bp->place_stage1) {
                /* Rootless: wait until we are in the scope (the runtime passes a sub-cgroup's fd along). */
                SyncMsg m;
                if (sync_expect(sync_fd, -1, 60 * USEC_PER_SEC, SYNC_GO, &m, NULL) < 0)
                        _exit(EXIT_FAILURE);
                if (m.fd >= 0)
                        cgroup_fd = init_own_cgroup_fd = TAKE_FD(m.fd);
                sync_msg_done(&m);
        }

        FOREACH_ARRAY(t, order, ELEMENTSOF(order)) {
                if (ns_fds[*t] < 0)
                        continue;
                if (setns(ns_fds[*t], (int) namespace_clone_flag(*t)) < 0) {
                        r = -errno;
                        sync_send_error(sync_fd, r, "join %s namespace: %m", oci_namespace_type_to_string(*t));
                        _exit(EXIT_FAILURE);
                }
        }
        if (new_flags & CLONE_NEWTIME) {
                if (unshare(CLONE_NEWTIME) < 0 || (r = write_time_offsets(bp->config)) < 0) {
                        sync_send_error(sync_fd, errno, "create time namespace: %m");
                        _exit(EXIT_FAILURE);
                }
                new_flags &= ~(unsigned long) CLONE_NEWTIME;
        }

        pid = raw_clone3(new_flags | CLONE_PIDFD | CLONE_PARENT, &pidfd, 0, cgroup_fd);
        if (pid < 0) {
                sync_send_error(sync_fd, errno, "clone the container init: %m");
                _exit(EXIT_FAILURE);
        }
        if (pid == 0)
                init_main(bp, sync_fd, runtime_pid);

        r = sync_send(sync_fd, SYNC_STAGE1_PID, 0, &pid, sizeof pid, pidfd);
        _exit(r < 0 ? EXIT_FAILURE : EXIT_SUCCESS);
}

int bootstrap_clone_init(const BootstrapParams *bp_in, InitProcess *ret, char **reterr) {
        BootstrapParams params = *bp_in, *bp = &params;
        const OciConfig *c = bp->config;
        int *bind_fds = NULL;
        _cleanup_close_pair_ int sv[2] = { -EBADF, -EBADF };
        int ns_fds[_OCI_NS_MAX];
        unsigned long new_flags = 0;
        bool need_stage1 = false, new_userns = false;
        pid_t runtime_pid = getpid();
        InitProcess ip = { .pidfd = -EBADF, .sync_fd = -EBADF };
        int r;

        for (int i = 0; i < _OCI_NS_MAX; i++)
                ns_fds[i] = -EBADF;

        for (size_t i = 0; i < c->linux_.n_namespaces; i++) {
                const OciNamespace *ns = &c->linux_.namespaces[i];
                if (ns->path)
                        need_stage1 = true;
                else {
                        new_flags |= namespace_clone_flag(ns->type);
                        if (ns->type == OCI_NS_USER)
                                new_userns = true;
                        if (ns->type == OCI_NS_TIME)
                                need_stage1 = true;
                }
        }

        if (bp->place_stage1)
                need_stage1 = true;

        r = open_ns_paths(c, ns_fds, reterr);
        if (r < 0)
                goto finish;

        /* In a user namespace the init may not reach a bind source that the host's root can (a 0700
         * directory on the way): clone those trees here, on the host side; the init inherits the fds. */
        if (oci_config_has_namespace(c, OCI_NS_USER, NULL)) {
                r = rootfs_open_bind_sources(c, bp->bundle, &bind_fds, reterr);
                if (r < 0)
                        goto finish;
                bp->bind_source_fds = bind_fds;
        }

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
                r = -errno;
                goto finish;
        }

        if (need_stage1) {
                _cleanup_close_ int stage1_pidfd = -EBADF;
                pid_t s1 = raw_clone3(CLONE_PIDFD, &stage1_pidfd, SIGCHLD, -EBADF);
                if (s1 < 0) {
                        r = -errno;
                        goto finish;
                }
                if (s1 == 0) {
                        sv[0] = safe_close(sv[0]);
                        stage1_main(bp, sv[1], ns_fds, new_flags, runtime_pid);
                }
                if (bp->place_stage1) {
                        _cleanup_close_ int cgroup_fd = -EBADF;
                        r = bp->place_stage1(s1, bp->place_userdata, &cgroup_fd, reterr);
                        if (r >= 0)
                                r = sync_send(sv[0], SYNC_GO, 0, NULL, 0, cgroup_fd);
                        if (r < 0) {
                                (void) pidfd_send_sig(stage1_pidfd, SIGKILL);
                                (void) waitpid(s1, NULL, 0);
                                goto finish;
                        }
                }
                SyncMsg m;
                r = sync_expect(sv[0], -1, 30 * USEC_PER_SEC, SYNC_STAGE1_PID, &m, reterr);
                (void) waitpid(s1, NULL, 0);
                if (r < 0) {
                        if (r == -EPIPE && reterr && !*reterr && asprintf(reterr, "the namespace setup child died") < 0)
                                *reterr = NULL;
                        goto finish;
                }
                if (m.len != sizeof(pid_t) || m.fd < 0) {
                        sync_msg_done(&m);
                        r = -EBADMSG;
                        goto finish;
                }
                memcpy(&ip.pid, m.payload, sizeof(pid_t));
                ip.pidfd = TAKE_FD(m.fd);
                sync_msg_done(&m);
        } else {
                ip.pid = raw_clone3(new_flags | CLONE_PIDFD, &ip.pidfd, SIGCHLD, bp->init_cgroup_fd);
                if (ip.pid < 0) {
                        r = -errno;
                        if (reterr && asprintf(reterr, "clone the container init: %s", strerror(errno)) < 0)
                                *reterr = NULL;
                        ip.pid = 0;
                        goto finish;
                }
                if (ip.pid == 0) {
                        sv[0] = safe_close(sv[0]);
                        init_main(bp, sv[1], runtime_pid);
                }
        }
        sv[1] = safe_close(sv[1]);
        ip.sync_fd = TAKE_FD(sv[0]);

        if (new_userns) {
                r = userns_write_id_maps(ip.pid, c, reterr);
                if (r < 0)
                        goto finish;
        }

        r = sync_send(ip.sync_fd, SYNC_GO, 0, NULL, 0, -EBADF);
        if (r < 0)
                goto finish;

        *ret = ip;
        ip = (InitProcess) { .pidfd = -EBADF, .sync_fd = -EBADF };
        r = 0;
finish:
        for (int i = 0; i < _OCI_NS_MAX; i++)
                safe_close(ns_fds[i]);
        rootfs_close_bind_sources(bind_fds, c->n_mounts);
        init_process_kill(&ip);
        return r;
}

void init_process_kill(InitProcess *ip) {
        if (ip->pidfd >= 0)
                (void) pidfd_send_sig(ip->pidfd, SIGKILL);
        else if (ip->pid > 0)
                (void) kill(ip->pid, SIGKILL);
        if (ip->pid > 0)
                while (waitpid(ip->pid, NULL, 0) < 0 && errno == EINTR)
                        ;
        init_process_done(ip);
}

void init_process_done(InitProcess *ip) {
        ip->pidfd = safe_close(ip->pidfd);
        ip->sync_fd = safe_close(ip->sync_fd);
        ip->pid = 0;
}

int init_process_describe_death(InitProcess *ip, char **ret) {
        siginfo_t si = {};
        int r;

        if (ip->pid <= 0)
                return -ESRCH;
        /* Bounded: the pidfd said it exited, or we are about to kill it. */
        if (pidfd_wait_exit(ip->pidfd, 5 * USEC_PER_SEC) < 0)
                (void) pidfd_send_sig(ip->pidfd, SIGKILL);
        do
                r = waitid(P_PID, (id_t) ip->pid, &si, WEXITED);
        while (r < 0 && errno == EINTR);
        if (r < 0)
                return -errno;
        ip->pid = 0;
        if (si.si_code == CLD_EXITED)
                r = asprintf(ret, "exited with status %d", si.si_status);
        else
                r = asprintf(ret, "was killed by signal %d (%s)%s", si.si_status, strsignal(si.si_status),
                             si.si_status == SIGSYS ? ": a seccomp rule killed it" : "");
        return r < 0 ? -ENOMEM : 0;
}
