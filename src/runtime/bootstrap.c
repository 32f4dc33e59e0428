/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bootstrap.h"
#include "cgroup-util.h"
#include "clone-util.h"
#include "criu.h"
#include "error-util.h"
#include "fileio.h"
#include "init.h"
#include "log.h"
#include "macro.h"
#include "netdev.h"
#include "process-util.h"
#include "rootfs.h"
#include "rootless.h"
#include "stage1.h"
#include "state.h"
#include "sync.h"

/* ---- the runtime side ---- */

static int open_ns_paths(const OciConfig *c, int fds[_OCI_NS_MAX], char **reterr) {
        for (size_t i = 0; i < c->linux_.n_namespaces; i++) {
                const OciNamespace *ns = &c->linux_.namespaces[i];
                if (!ns->path)
                        continue;
                fds[ns->type] = open(ns->path, O_RDONLY | O_CLOEXEC);
                if (fds[ns->type] < 0) {
                        int r = -errno;
                        return errorf(reterr, r, "linux.namespaces[%zu]: open \"%s\": %s", i, ns->path,
                                      strerror(-r));
                }
        }
        return 0;
}

/* What bootstrap_clone_init() holds until it returns: closed (and the init killed) on every path out. */
typedef struct Bootstrap {
        BootstrapParams params; /* our copy, with params.init filled in */
        int ns_fds[_OCI_NS_MAX];
        int *bind_fds;
        size_t n_bind_fds;
        int sv[2];
        unsigned long new_flags;
        bool need_stage1, new_userns;
        int own_cgroup_fd; /* the container's cgroup v2 directory, for the init's cgroup mount fallback */
        int root_tree_fd;  /* BootstrapParams.idmap_rootfs: the id-mapped clone of the rootfs */
        pid_t runtime_pid;
        InitProcess ip; /* the init until it is handed out */
} Bootstrap;

static void bootstrap_done(Bootstrap *b) {
        FOREACH_ARRAY(fd, b->ns_fds, _OCI_NS_MAX)
                *fd = safe_close(*fd);
        rootfs_close_bind_sources(b->bind_fds, b->n_bind_fds);
        b->bind_fds = NULL;
        b->own_cgroup_fd = safe_close(b->own_cgroup_fd);
        b->root_tree_fd = safe_close(b->root_tree_fd);
        close_pairp(&b->sv);
        init_process_kill(&b->ip);
}

/* stage1 exits right after it has reported (or failed to): reap it, bounded; one that hangs is killed. */
typedef struct Stage1 {
        pid_t pid;
        int pidfd;
} Stage1;

static void stage1_reap(Stage1 *s) {
        if (s->pid > 0) {
                if (pidfd_wait_exit(s->pidfd, 5 * USEC_PER_SEC) < 0)
                        (void) pidfd_send_sig(s->pidfd, SIGKILL);
                while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
                        ;
                s->pid = 0;
        }
        s->pidfd = safe_close(s->pidfd);
}

/* The user namespaces the id-mapped mounts map through, per mounts[] entry (-1 where none; *ret NULL when no
 * mount is id-mapped): one with the mount's own mappings, else the container's: the user namespace it joins
 * by path, or one with linux.uidMappings/gidMappings, the mapping its new one gets (create checked that a
 * mount without mappings has a user namespace to take them from). */
static int open_idmap_userns(const OciConfig *c, const int ns_fds[_OCI_NS_MAX], int **ret, char **reterr) {
        _cleanup_close_ int own = -EBADF;
        int *fds = NULL, r = 0;

        *ret = NULL;
        for (size_t i = 0; i < c->n_mounts && r >= 0; i++) {
                const OciMount *m = &c->mounts[i];
                char what[48];

                if (!oci_mount_is_idmapped(m))
                        continue;
                if (!fds) {
                        fds = malloc(c->n_mounts * sizeof(int));
                        if (!fds)
                                return -ENOMEM;
                        for (size_t j = 0; j < c->n_mounts; j++)
                                fds[j] = -EBADF;
                }
                snprintf(what, sizeof what, "mounts[%zu]", i);
                if (m->n_uid_mappings > 0 || m->n_gid_mappings > 0) {
                        r = userns_open_mapped(m->uid_mappings, m->n_uid_mappings, m->gid_mappings,
                                               m->n_gid_mappings, what, &fds[i], reterr);
                        continue;
                }
                if (own < 0 && ns_fds[OCI_NS_USER] >= 0)
                        own = r = RET_NERRNO(fcntl(ns_fds[OCI_NS_USER], F_DUPFD_CLOEXEC, 3));
                else if (own < 0)
                        r = userns_open_mapped(c->linux_.uid_mappings, c->linux_.n_uid_mappings,
                                               c->linux_.gid_mappings, c->linux_.n_gid_mappings, "linux",
                                               &own, reterr);
                if (r >= 0)
                        fds[i] = r = RET_NERRNO(fcntl(own, F_DUPFD_CLOEXEC, 3));
        }
        if (r < 0) {
                rootfs_close_bind_sources(fds, c->n_mounts);
                return r;
        }
        *ret = fds;
        return 0;
}

static int bootstrap_plan(Bootstrap *b, char **reterr) {
        BootstrapParams *bp = &b->params;
        const OciConfig *c = bp->init.config;
        int r;

        for (size_t i = 0; i < c->linux_.n_namespaces; i++) {
                const OciNamespace *ns = &c->linux_.namespaces[i];
                if (ns->path)
                        b->need_stage1 = true;
                else if (ns->type == OCI_NS_TIME)
                        /* Not a clone flag: its offsets must be written before its first process is in it,
                         * and it must belong to the container's user namespace, so that a container joining
                         * both can enter it. The init makes it (init_time_namespace()). */
                        continue;
                else {
                        b->new_flags |= namespace_clone_flag(ns->type);
                        if (ns->type == OCI_NS_USER)
                                b->new_userns = true;
                }
        }
        if (bp->place_stage1)
                b->need_stage1 = true;

        r = open_ns_paths(c, b->ns_fds, reterr);
        if (r < 0)
                return r;

        /* In a user namespace the init may not reach a bind source that the host's root can (a 0700
         * directory on the way): clone those trees here, on the host side; the init inherits the fds. And
         * only this side may id-map a mount (CAP_SYS_ADMIN over the source's filesystem). */
        int *idmap_fds = NULL;
        r = open_idmap_userns(c, b->ns_fds, &idmap_fds, reterr);
        if (r < 0)
                return r;
        bool userns = oci_config_has_namespace(c, OCI_NS_USER, NULL);
        if (r >= 0 && bp->idmap_rootfs) {
                /* The rootfs id-mapped through the container's own mappings (a user namespace with the
                 * same ones: an id-mapped mount holds only the mapping). */
                _cleanup_close_ int mapped = -EBADF;
                r = userns_open_mapped(c->linux_.uid_mappings, c->linux_.n_uid_mappings,
                                       c->linux_.gid_mappings, c->linux_.n_gid_mappings, "linux", &mapped,
                                       reterr);
                if (r >= 0)
                        r = rootfs_open_idmapped_root(c, bp->init.rootfs, mapped, &b->root_tree_fd, reterr);
                if (r < 0) {
                        rootfs_close_bind_sources(idmap_fds, c->n_mounts);
                        return r;
                }
                bp->init.root_tree_fd = b->root_tree_fd;
        }
        if (userns || idmap_fds) {
                r = rootfs_open_bind_sources(c, bp->init.bundle, userns, idmap_fds, &b->bind_fds, reterr);
                /* The id-mapped trees hold their user namespaces. */
                rootfs_close_bind_sources(idmap_fds, c->n_mounts);
                if (r < 0)
                        return r;
                b->n_bind_fds = c->n_mounts;
                bp->init.bind_source_fds = b->bind_fds;
        }

        /* From a user namespace a fresh cgroup2 cannot always be mounted (EBUSY where /sys is bound from the
         * host, with the host's cgroup2 under it: Podman's --network=host): the init then binds the
         * container's own cgroup directory, as runc does. Root's runtime is in the scope now; the init is
         * born there, or in the sub-cgroup init_cgroup_fd. (Rootless, stage1 gets it from the runtime.) */
        CgroupLayout layout;
        if (userns && !bp->place_stage1 && cgroup_detect_layout(&layout) >= 0 &&
            layout == CGROUP_LAYOUT_UNIFIED) {
                if (bp->init_cgroup_fd >= 0)
                        b->own_cgroup_fd = fcntl(bp->init_cgroup_fd, F_DUPFD_CLOEXEC, 3);
                else {
                        CgroupMembership *m = NULL;
                        size_t n = 0;
                        _cleanup_free_ char *dir = NULL;
                        if (cgroup_read_memberships(0, &m, &n) >= 0)
                                for (size_t i = 0; i < n && !dir; i++)
                                        if (isempty(m[i].controllers) &&
                                            cgroup_unified_dir(m[i].path, &dir) < 0)
                                                dir = NULL;
                        cgroup_memberships_free(m, n);
                        if (dir)
                                b->own_cgroup_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
                }
                /* Without it the init reports the mount's own error, as before. */
                if (b->own_cgroup_fd >= 0)
                        bp->init.own_cgroup_fd = b->own_cgroup_fd;
        }

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, b->sv) < 0)
                return -errno;
        return 0;
}

/* Through stage1: it joins the namespaces by path (rootless: once it is in the scope) and clones the init. */
static int bootstrap_clone_via_stage1(Bootstrap *b, char **reterr) {
        BootstrapParams *bp = &b->params;
        _cleanup_(stage1_reap) Stage1 s1 = { .pidfd = -EBADF };
        SyncMsg m;
        int r;

        s1.pid = clone3_pidfd(0, SIGCHLD, -EBADF, &s1.pidfd);
        if (s1.pid < 0) {
                s1.pid = 0;
                return -errno;
        }
        if (s1.pid == 0) {
                b->sv[0] = safe_close(b->sv[0]);
                stage1_main(&(const Stage1Params){
                        .init = &bp->init,
                        .sync_fd = b->sv[1],
                        .ns_fds = b->ns_fds,
                        .new_flags = b->new_flags,
                        .init_cgroup_fd = bp->init_cgroup_fd,
                        .wait_placed = bp->place_stage1 != NULL,
                        .runtime_pid = b->runtime_pid,
                });
        }
        if (bp->place_stage1) {
                _cleanup_close_ int cgroup_fd = -EBADF;
                r = bp->place_stage1(s1.pid, bp->place_userdata, &cgroup_fd, reterr);
                if (r >= 0)
                        r = sync_send(b->sv[0], SYNC_GO, 0, NULL, 0, cgroup_fd);
                if (r < 0) {
                        (void) pidfd_send_sig(s1.pidfd, SIGKILL);
                        return r;
                }
        }
        r = sync_expect(b->sv[0], -1, 30 * USEC_PER_SEC, SYNC_STAGE1_PID, &m, reterr);
        stage1_reap(&s1);
        if (r < 0) {
                if (r == -EPIPE && reterr && !*reterr)
                        return errorf(reterr, r, "the namespace setup child died");
                return r;
        }
        if (m.len != sizeof(pid_t) || m.fd < 0) {
                sync_msg_done(&m);
                return -EBADMSG;
        }
        memcpy(&b->ip.pid, m.payload, sizeof(pid_t));
        b->ip.pidfd = TAKE_FD(m.fd);
        sync_msg_done(&m);
        return 0;
}

static int bootstrap_clone_direct(Bootstrap *b, char **reterr) {
        b->ip.pid = clone3_pidfd(b->new_flags, SIGCHLD, b->params.init_cgroup_fd, &b->ip.pidfd);
        if (b->ip.pid < 0) {
                int r = -errno;
                b->ip.pid = 0;
                return errorf(reterr, r, "clone the container init: %s", strerror(-r));
        }
        if (b->ip.pid == 0) {
                b->sv[0] = safe_close(b->sv[0]);
                /* (never rootless here: a rootless create goes through stage1) */
                init_make_undumpable();
                init_main(&b->params.init, b->sv[1], b->runtime_pid);
        }
        return 0;
}

int bootstrap_clone_init(const BootstrapParams *bp, InitProcess *ret, char **reterr) {
        _cleanup_(bootstrap_done) Bootstrap b = {
                .params = *bp,
                .sv = { -EBADF, -EBADF },
                .runtime_pid = getpid(),
                .own_cgroup_fd = -EBADF,
                .root_tree_fd = -EBADF,
                .ip = { .pidfd = -EBADF, .sync_fd = -EBADF },
        };
        int r;

        FOREACH_ARRAY(fd, b.ns_fds, _OCI_NS_MAX)
                *fd = -EBADF;
        b.params.init.bind_source_fds = NULL;
        b.params.init.own_cgroup_fd = -EBADF;
        b.params.init.root_tree_fd = -EBADF;
        b.params.init.comm = INIT_COMM;
        b.params.init.after_pivot = criu_reopen_dev_null_stdio;

        r = bootstrap_plan(&b, reterr);
        if (r < 0)
                return r;
        log_debug("nsexec started: cloning the init of the container");
        log_debug("nsexec container setup: new namespaces 0x%lx%s", b.new_flags,
                  b.need_stage1 ? ", from a stage1 that joins the given ones first" : "");
        r = b.need_stage1 ? bootstrap_clone_via_stage1(&b, reterr) : bootstrap_clone_direct(&b, reterr);
        if (r < 0)
                return r;
        b.sv[1] = safe_close(b.sv[1]);
        b.ip.sync_fd = TAKE_FD(b.sv[0]);

        if (b.new_userns) {
                r = userns_write_id_maps(b.ip.pid, bp->init.config, reterr);
                if (r < 0)
                        return r;
        }
        /* process.oomScoreAdj, written by the host's root before the init goes on (its hooks and its process
         * inherit it), as runc writes it before it enters a user namespace. In one, the init could neither
         * write its own /proc file once setresuid() made it the namespace's root (the file is the host
         * root's) nor lower the value (CAP_SYS_RESOURCE of the host's user namespace). */
        const OciConfig *cfg = bp->init.config;
        if (cfg->has_process && cfg->process.has_oom_score_adj) {
                char path[64], val[16];
                snprintf(path, sizeof path, "/proc/%d/oom_score_adj", (int) b.ip.pid);
                snprintf(val, sizeof val, "%d", cfg->process.oom_score_adj);
                r = write_string_file(path, val);
                if (r < 0)
                        return errorf(reterr, r, "process.oomScoreAdj: write %s to %s: %s%s", val, path,
                                      strerror(-r),
                                      r == -EACCES && cfg->process.oom_score_adj < 0
                                              ? " (lowering it needs CAP_SYS_RESOURCE)"
                                              : "");
        }
        /* Before the init goes on: its sysctls may name the devices. */
        if (bp->init.config->linux_.n_net_devices > 0) {
                char path[64];
                snprintf(path, sizeof path, "/proc/%d/ns/net", (int) b.ip.pid);
                _cleanup_close_ int netns_fd = open(path, O_RDONLY | O_CLOEXEC);
                if (netns_fd < 0)
                        return errorf(reterr, -errno,
                                      "linux.netDevices: open the init's network namespace: %m");
                r = netdev_move_all(bp->init.config, netns_fd, reterr);
                if (r < 0)
                        return r;
        }
        r = sync_send(b.ip.sync_fd, SYNC_GO, 0, NULL, 0, -EBADF);
        if (r < 0)
                return r;

        *ret = b.ip;
        b.ip = (InitProcess){ .pidfd = -EBADF, .sync_fd = -EBADF };
        return 0;
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
