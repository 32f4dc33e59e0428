/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
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

#include <sys/capability.h>

#include "capabilities.h"
#include "cgroup-util.h"
#include "clone-util.h"
#include "exec-child.h"
#include "exec.h"
#include "fileio.h"
#include "host-console.h"
#include "host-features.h"
#include "log.h"
#include "error-util.h"
#include "macro.h"
#include "oci-config.h"
#include "process-util.h"
#include "process.h"
#include "rootless.h"
#include "sdunit.h"
#include "socket-util.h"
#include "string-util.h"
#include "seccomp-cache.h"
#include "seccomp-filter.h"
#include "state.h"
#include "strv.h"
#include "sync-server.h"
#include "sync.h"
#include "trampoline.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

#define EXEC_SETUP_TIMEOUT_USEC (5 * 60 * USEC_PER_SEC)

/* ---- building the process ---- */

static int caps_append(int **set, size_t *n, int cap) {
        for (size_t i = 0; i < *n; i++)
                if ((*set)[i] == cap)
                        return 0;
        int *c = realloc(*set, (*n + 1) * sizeof(int));
        if (!c)
                return -ENOMEM;
        c[(*n)++] = cap;
        *set = c;
        return 0;
}

static int parse_cap(const char *name, int *ret) {
        cap_value_t v;
        char buf[64];

        /* "CAP_SYS_ADMIN" as in config.json; "SYS_ADMIN" is accepted too. */
        if (strlen(name) + 5 > sizeof buf)
                return -EINVAL;
        snprintf(buf, sizeof buf, "%s%s", strncasecmp(name, "CAP_", 4) == 0 ? "" : "CAP_", name);
        if (cap_from_name(buf, &v) < 0)
                return -EINVAL;
        *ret = (int) v;
        return 0;
}

/* The process to run: --process FILE as it is (plus --tty), or config.json's process with the command line's
 * overrides, as runc does. *config_process is the container's config (owned by the caller, modified). */
static int build_process(const ExecOptions *o, OciProcess *config_process, bool config_has_process,
                         OciProcess **ret_file_process, const OciProcess **ret, char **reterr) {
        OciProcess *p;
        int r;

        /* Refused where the host cannot apply them (runc's behaviour), never silently dropped. */
        if (!isempty(o->process_label) && !host_selinux_enabled())
                return errorf(reterr, EINVAL,
                              "--process-label: \"%s\" requested, but SELinux is not enabled on this host",
                              o->process_label);
        if (!isempty(o->apparmor) && !host_apparmor_enabled())
                return errorf(reterr, EINVAL,
                              "--apparmor: \"%s\" requested, but AppArmor is not enabled on this host",
                              o->apparmor);

        if (o->process_file) {
                _cleanup_free_ char *raw = NULL, *perr = NULL;
                size_t len = 0;

                if (o->args && o->args[0])
                        return errorf(reterr, EINVAL,
                                      "--process and a command on the command line cannot be combined");
                r = read_full_file_at(AT_FDCWD, o->process_file, 4U << 20, &raw, &len);
                if (r < 0)
                        return errorf(reterr, r, "--process: cannot read \"%s\": %s", o->process_file,
                                      r == -EFBIG ? "file too large" : strerror(-r));
                r = oci_process_parse(raw, len, ret_file_process, &perr);
                if (r < 0)
                        return errorf(reterr, r, "--process: %s: %s", o->process_file, perr ?: strerror(-r));
                p = *ret_file_process;
                if (o->tty)
                        p->terminal = true;
        } else {
                if (!config_has_process)
                        return errorf(
                                reterr, EINVAL,
                                "the container's config.json has no process to take defaults from: use --process");
                p = config_process;
                p->args = strv_free(p->args);
                r = strv_dup(o->args, &p->args);
                if (r < 0)
                        return r;
                if (o->cwd) {
                        char *c = strdup(o->cwd);
                        if (!c)
                                return -ENOMEM;
                        free(p->cwd);
                        p->cwd = c;
                }
                for (char **e = o->env; e && *e; e++) {
                        if (!strchr(*e, '=') || **e == '=')
                                return errorf(reterr, EINVAL, "--env: \"%s\" is not of the form KEY=VALUE",
                                              *e);
                        /* runc appends and the last one wins in the lookup; replacing keeps one definition */
                        r = strv_env_set(&p->env, *e);
                        if (r < 0)
                                return r;
                }
                if (o->has_user) {
                        p->user.uid = o->uid;
                        p->user.gid = o->has_gid ? o->gid : 0;
                }
                if (o->n_additional_gids > 0) {
                        uint32_t *g = realloc(p->user.additional_gids,
                                              (p->user.n_additional_gids + o->n_additional_gids) *
                                                      sizeof(uint32_t));
                        if (!g)
                                return -ENOMEM;
                        for (size_t i = 0; i < o->n_additional_gids; i++)
                                g[p->user.n_additional_gids + i] = (uint32_t) o->additional_gids[i];
                        p->user.additional_gids = g;
                        p->user.n_additional_gids += o->n_additional_gids;
                }
                for (char **c = o->caps; c && *c; c++) {
                        int cap;
                        if (parse_cap(*c, &cap) < 0) {
                                /* As an unknown name in config.json, and as runc and crun take it. */
                                log_warning("--cap: unknown capability \"%s\", ignoring it.", *c);
                                continue;
                        }
                        OciCapabilities *k = &p->capabilities;
                        k->present = true;
                        /* As runc 1.1: bounding, effective and permitted; ambient only when the process has
                         * inheritable capabilities (ambient needs inheritable). */
                        if ((r = caps_append(&k->bounding, &k->n_bounding, cap)) < 0 ||
                            (r = caps_append(&k->effective, &k->n_effective, cap)) < 0 ||
                            (r = caps_append(&k->permitted, &k->n_permitted, cap)) < 0)
                                return r;
                        if (k->n_inheritable > 0 && (r = caps_append(&k->ambient, &k->n_ambient, cap)) < 0)
                                return r;
                }
                if (o->no_new_privs)
                        p->no_new_privileges = true;
                p->terminal = o->tty;
        }

        if (!isempty(o->apparmor) && (r = free_and_strdup(&p->apparmor_profile, o->apparmor)) < 0)
                return r;
        if (!isempty(o->process_label) && (r = free_and_strdup(&p->selinux_label, o->process_label)) < 0)
                return r;
        r = host_check_lsm(p, NULL, reterr);
        if (r < 0)
                return r;
        if (!p->args || !p->args[0] || !*p->args[0])
                return errorf(reterr, EINVAL, "exec args cannot be empty: give a command or --process");
        if (p->cwd && p->cwd[0] != '/')
                return errorf(reterr, EINVAL, "process.cwd: \"%s\" is not an absolute path", p->cwd);
        if (p->terminal && !o->console_socket && !o->ret_console_master)
                return errorf(reterr, EINVAL,
                              "cannot allocate tty if sdrun will detach without setting console socket");
        if (!p->terminal && o->console_socket)
                return errorf(reterr, EINVAL,
                              "cannot use --console-socket if no tty is allocated (give --tty)");
        *ret = p;
        return 0;
}

/* ---- namespaces and cgroups of the init ---- */

static const struct {
        const char *name;
        unsigned long flag;
} ns_table[] = {
        { "user", CLONE_NEWUSER }, { "mnt", CLONE_NEWNS },    { "net", CLONE_NEWNET },
        { "ipc", CLONE_NEWIPC },   { "uts", CLONE_NEWUTS },   { "cgroup", CLONE_NEWCGROUP },
        { "pid", CLONE_NEWPID },   { "time", CLONE_NEWTIME },
};

/* The namespaces of the init that differ from ours: joining one we are in is pointless, and for the user
 * namespace an error. */
static int init_namespaces(pid_t pid, unsigned long *ret) {
        unsigned long mask = 0;

        FOREACH_ARRAY(t, ns_table, ELEMENTSOF(ns_table)) {
                char a[64], b[64];
                struct stat sa, sb;

                snprintf(a, sizeof a, "/proc/%d/ns/%s", (int) pid, t->name);
                snprintf(b, sizeof b, "/proc/self/ns/%s", t->name);
                if (stat(a, &sa) < 0) {
                        if (errno == ENOENT && t->flag == CLONE_NEWTIME)
                                continue; /* kernel without time namespaces */
                        return -errno;
                }
                if (stat(b, &sb) < 0)
                        return -errno;
                if (sa.st_dev != sb.st_dev || sa.st_ino != sb.st_ino)
                        mask |= t->flag;
        }
        *ret = mask;
        return 0;
}

typedef struct CgroupPlan {
        int unified_fd;     /* the cgroup to join on the unified hierarchy, for CLONE_INTO_CGROUP */
        char *unified_path; /* and its path ("/machine.slice/x.scope/sub") */
        int fallback_fd;    /* the init's own cgroup there, where the container's cannot take the process */
        char *fallback_path;
        bool explicit_sub;    /* --cgroup chose unified_fd: no fallback, as with runc */
        CgroupMembership *v1; /* v1 hierarchies where the process goes elsewhere than we are */
        size_t n_v1;
} CgroupPlan;

static void cgroup_plan_done(CgroupPlan *c) {
        c->unified_fd = safe_close(c->unified_fd);
        free(c->unified_path);
        c->unified_path = NULL;
        c->fallback_fd = safe_close(c->fallback_fd);
        free(c->fallback_path);
        c->fallback_path = NULL;
        cgroup_memberships_free(c->v1, c->n_v1);
        c->v1 = NULL;
        c->n_v1 = 0;
}

typedef struct Memberships {
        CgroupMembership *m;
        size_t n;
} Memberships;

static void memberships_done(Memberships *x) {
        cgroup_memberships_free(x->m, x->n);
        *x = (Memberships){};
}

/* --cgroup [CONTROLLERS:]PATH (runc's, and crun's): a sub-cgroup of the container's cgroup to join, in every
 * hierarchy or in the v1 ones of the listed controllers. PATH is relative to the container's cgroup; "/" is
 * that cgroup itself. */
typedef struct SubCgroup {
        char *controllers; /* "memory", "cpu,cpuacct"; NULL for every hierarchy */
        char *path;        /* without leading "/"; "" for the container's cgroup itself */
} SubCgroup;

static void sub_cgroups_free(SubCgroup *s) {
        for (SubCgroup *i = s; i && i->path; i++) {
                free(i->controllers);
                free(i->path);
        }
        free(s);
}

static void sub_cgroups_freep(SubCgroup **s) {
        sub_cgroups_free(*s);
}

static int sub_cgroups_parse(char *const *specs, SubCgroup **ret, char **reterr) {
        size_t n = 0;
        SubCgroup *s;

        while (specs && specs[n])
                n++;
        s = calloc(n + 1, sizeof(SubCgroup));
        if (!s)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const char *spec = specs[i], *colon = strchr(spec, ':'), *path = colon ? colon + 1 : spec;

                if (colon && colon == spec) {
                        sub_cgroups_free(s);
                        return errorf(reterr, EINVAL, "--cgroup \"%s\": no controller before \":\"", spec);
                }
                while (*path == '/')
                        path++;
                /* Nothing outside the container's cgroup: no ".." component, as runc refuses it. */
                for (const char *c = path; *c;) {
                        size_t len = strcspn(c, "/");
                        if (len == 2 && c[0] == '.' && c[1] == '.') {
                                sub_cgroups_free(s);
                                /* runc's words ("PATH is not a sub cgroup path"): its tests grep for them */
                                return errorf(reterr, EINVAL, "--cgroup \"%s\": %s is not a sub cgroup path",
                                              spec, path);
                        }
                        c += len;
                        c += strspn(c, "/");
                }
                _cleanup_free_ char *ctl = colon ? strndup(spec, (size_t) (colon - spec)) : NULL;
                char *p = strdup(path);
                if ((colon && !ctl) || !p) {
                        free(p);
                        sub_cgroups_free(s);
                        return -ENOMEM;
                }
                s[i].controllers = TAKE_PTR(ctl);
                s[i].path = p;
        }
        *ret = s;
        return 0;
}

/* Whether the comma-separated lists a and b share a name. */
static bool controllers_overlap(const char *a, const char *b) {
        for (const char *x = a; *x;) {
                size_t lx = strcspn(x, ",");
                for (const char *y = b; *y;) {
                        size_t ly = strcspn(y, ",");
                        if (lx == ly && strneq(x, y, lx))
                                return true;
                        y += ly + (y[ly] == ',');
                }
                x += lx + (x[lx] == ',');
        }
        return false;
}

/* The sub-cgroup of the membership m that the --cgroup list asks for, in *ret_path ("BASE/SUB", BASE being
 * the container's cgroup there): 1, or 0 with NULL where no --cgroup applies to this hierarchy. */
static int sub_cgroup_for(const SubCgroup *subs, const char *base, const CgroupMembership *m,
                          char **ret_path, char **reterr) {
        const SubCgroup *pick = NULL;

        *ret_path = NULL;
        for (const SubCgroup *i = subs; i && i->path; i++)
                if (!i->controllers ||
                    (!isempty(m->controllers) && controllers_overlap(i->controllers, m->controllers)))
                        pick = i; /* the last one given wins, as a later flag does */
        if (!pick)
                return 0;
        /* A v1 hierarchy where the container has no cgroup of its own (one systemd does not manage, such as
         * cpuset here): only an explicit controller asks for it. */
        if (isempty(base) || !path_is_at_or_below(m->path, base)) {
                if (!pick->controllers)
                        return 0;
                return errorf(
                        reterr, EINVAL,
                        "--cgroup \"%s:%s\": the container has no cgroup of its own in the \"%s\" hierarchy",
                        pick->controllers, pick->path, m->controllers);
        }
        if (asprintf(ret_path, "%s%s%s", base, isempty(pick->path) ? "" : "/", pick->path) < 0)
                return -ENOMEM;
        return 1;
}

/* ct_cgroup: the container's cgroup (the scope's); ct_unified: its cgroup on the unified hierarchy, which is
 * a sub-cgroup of the scope with run.oci.systemd.subgroup. */
static int cgroup_plan_make(pid_t init_pid, const char *ct_cgroup, const char *ct_unified,
                            char *const *sub_specs, CgroupPlan *ret, char **reterr) {
        _cleanup_(memberships_done) Memberships theirs = {}, ours = {};
        _cleanup_(cgroup_plan_done) CgroupPlan plan = { .unified_fd = -EBADF, .fallback_fd = -EBADF };
        _cleanup_(sub_cgroups_freep) SubCgroup *subs = NULL;
        int r;

        r = sub_cgroups_parse(sub_specs, &subs, reterr);
        if (r < 0)
                return r;
        r = cgroup_read_memberships(init_pid, &theirs.m, &theirs.n);
        if (r < 0)
                return errorf(reterr, r, "read /proc/%d/cgroup of the container init: %s", (int) init_pid,
                              strerror(-r));
        r = cgroup_read_memberships(0, &ours.m, &ours.n);
        if (r < 0)
                return errorf(reterr, r, "read /proc/self/cgroup: %s", strerror(-r));
        /* A controller named in --cgroup must be one of the container's v1 hierarchies. */
        for (const SubCgroup *sc = subs; sc->path; sc++) {
                bool known = false;
                for (size_t i = 0; sc->controllers && i < theirs.n; i++)
                        if (!isempty(theirs.m[i].controllers) &&
                            controllers_overlap(sc->controllers, theirs.m[i].controllers))
                                known = true;
                if (sc->controllers && !known)
                        return errorf(reterr, EINVAL, "--cgroup \"%s:%s\": unknown controller \"%s\"%s",
                                      sc->controllers, sc->path, sc->controllers,
                                      theirs.n == 1 ? " (cgroup v2 has no per-controller hierarchies)" : "");
        }
        plan.v1 = calloc(theirs.n + 1, sizeof(CgroupMembership));
        if (!plan.v1)
                return -ENOMEM;
        for (size_t i = 0; i < theirs.n; i++) {
                const CgroupMembership *m = &theirs.m[i];
                _cleanup_free_ char *sub = NULL;

                const char *base = isempty(m->controllers) ? ct_unified : ct_cgroup;
                r = sub_cgroup_for(subs, base, m, &sub, reterr);
                if (r < 0)
                        return r;
                /* Without --cgroup: the container's own cgroup, as with runc, also where the init moved
                 * itself below it (a systemd inside moves to init.scope); on the unified hierarchy the init's
                 * cgroup stays the fallback, for when domain controllers keep the container's from taking
                 * processes. */
                bool top = !sub && !isempty(base) && path_is_at_or_below(m->path, base) &&
                           !streq(m->path, base);
                const char *path = sub ?: top ? base : m->path;
                if (isempty(m->controllers)) {
                        _cleanup_free_ char *dir = NULL, *mnt = NULL;
                        r = cgroup_hierarchy_mount("", &mnt);
                        if (r == -ENOENT)
                                continue;
                        if (r < 0)
                                return r;
                        plan.explicit_sub = sub != NULL;
                        if (top) {
                                _cleanup_free_ char *own = NULL;
                                if (asprintf(&own, "%s%s", mnt, m->path) < 0)
                                        return -ENOMEM;
                                plan.fallback_fd = open(own, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                                if (plan.fallback_fd < 0)
                                        return errorf(reterr, -errno, "open the init's cgroup \"%s\": %s",
                                                      own, strerror(errno));
                                plan.fallback_path = strdup(m->path);
                                if (!plan.fallback_path)
                                        return -ENOMEM;
                        }
                        if (asprintf(&dir, "%s%s", mnt, path) < 0)
                                return -ENOMEM;
                        plan.unified_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        if (plan.unified_fd < 0) {
                                int e = errno;
                                if (sub)
                                        return errorf(
                                                reterr, -e,
                                                /* runc's words: its tests look for "adding pid",
                                                 * then ".../cgroup.procs: no such file" */
                                                "--cgroup: adding pid to cgroups: open %s/cgroup.procs: %s",
                                                dir,
                                                e == ENOENT ? "no such file or directory" : strerror(e));
                                return errorf(reterr, -e, "open the container's cgroup \"%s\": %s", dir,
                                              strerror(e));
                        }
                        plan.unified_path = strdup(path);
                        if (!plan.unified_path)
                                return -ENOMEM;
                        continue;
                }
                bool same = false;
                for (size_t k = 0; k < ours.n; k++)
                        if (streq(ours.m[k].controllers, m->controllers) && streq(ours.m[k].path, path))
                                same = true;
                if (same)
                        continue;
                CgroupMembership *d = &plan.v1[plan.n_v1];
                d->controllers = strdup(m->controllers);
                d->path = strdup(path);
                plan.n_v1++;
                if (!d->controllers || !d->path)
                        return -ENOMEM;
        }
        *ret = plan;
        plan = (CgroupPlan){ .unified_fd = -EBADF, .fallback_fd = -EBADF };
        return 0;
}

/* Put pid into the v1 hierarchies of the plan (hybrid/legacy layouts), before the child is released. */
static int cgroup_plan_attach_v1(const CgroupPlan *c, pid_t pid, char **reterr) {
        char pidbuf[32];

        snprintf(pidbuf, sizeof pidbuf, "%d", (int) pid);
        for (size_t i = 0; i < c->n_v1; i++) {
                _cleanup_free_ char *mnt = NULL, *procs = NULL;
                int r = cgroup_hierarchy_mount(c->v1[i].controllers, &mnt);
                if (r == -ENOENT)
                        continue; /* not mounted here */
                if (r < 0)
                        return errorf(reterr, r, "cgroup hierarchy \"%s\": %s", c->v1[i].controllers,
                                      strerror(-r));
                if (asprintf(&procs, "%s%s/cgroup.procs", mnt, c->v1[i].path) < 0)
                        return -ENOMEM;
                r = write_string_file(procs, pidbuf);
                if (r < 0)
                        return errorf(reterr, r,
                                      "join the container's cgroup: adding pid %s to cgroups: open %s: %s",
                                      pidbuf, procs,
                                      r == -ENOENT ? "no such file or directory" : strerror(-r));
        }
        return 0;
}

/* ---- the runtime side ---- */

/* A helper that exits on its own right after its part (the intermediate's report, the trampoline's clone):
 * reaped, bounded; one that hangs is killed. */
static void helper_reap(pid_t pid, int pidfd) {
        if (pidfd_wait_exit(pidfd, 5 * USEC_PER_SEC) < 0)
                (void) pidfd_send_sig(pidfd, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
}

/* Rootless (rootless.h): we may not join a pid namespace that belongs to the container's own user namespace.
 * A short-lived intermediate (exec_intermediate_main(), src/init/exec-child.c) joins the user and pid
 * namespaces and clones the child as our own (CLONE_PARENT), into the container's cgroup where the kernel
 * lets it; the child's pid, its pidfd and whether it is in the cgroup come back over the sync socket. */
static pid_t clone_via_userns(ExecChild *x, int cgroup_fd, int sock, int *ret_pidfd, bool *ret_in_cgroup,
                              char **reterr) {
        _cleanup_close_ int mid_pidfd = -EBADF;
        ExecViaUserns v = {};
        SyncMsg m;
        pid_t mid;
        int r;

        mid = clone3_pidfd(0, SIGCHLD, -EBADF, &mid_pidfd);
        if (mid < 0)
                return errorf(reterr, -errno, "clone: %s", strerror(errno));
        if (mid == 0) {
                safe_close(sock);
                exec_intermediate_main(x, cgroup_fd);
        }

        r = sync_expect(sock, -1, EXEC_SETUP_TIMEOUT_USEC, SYNC_STAGE1_PID, &m, reterr);
        /* It exits right after its report. */
        helper_reap(mid, mid_pidfd);
        if (r < 0)
                return r == -EPIPE ? errorf(reterr, ECHILD, "the namespace setup child died") : r;
        if (m.len != sizeof v || m.fd < 0) {
                sync_msg_done(&m);
                return -EBADMSG;
        }
        memcpy(&v, m.payload, sizeof v);
        *ret_pidfd = TAKE_FD(m.fd);
        *ret_in_cgroup = v.in_cgroup;
        sync_msg_done(&m);
        return v.pid;
}

/* Rootless: systemd puts the child into the container's cgroup where we may not (the common ancestor of our
 * cgroup and the container's is not the user's). */
static int attach_via_systemd(const Container *ct, const char *init_cgroup, pid_t pid, char **reterr) {
        _cleanup_(sdunit_bus_closep) SdUnitBus *bus = NULL;
        const char *sub = "";
        int r;

        if (!ct->unit || !ct->cgroup)
                return errorf(reterr, EPERM,
                              "join the container's cgroup: not permitted, and the container has no unit");
        if (init_cgroup && strneq(init_cgroup, ct->cgroup, strlen(ct->cgroup)) &&
            init_cgroup[strlen(ct->cgroup)] == '/')
                sub = init_cgroup + strlen(ct->cgroup);
        r = sdunit_bus_open(ct->user_bus, &bus, reterr);
        if (r >= 0)
                r = sdunit_attach_processes(bus, ct->unit, sub, pid, reterr);
        if (r < 0) {
                return errwrap(reterr, r, "join the container's cgroup");
        }
        return 0;
}

/* Kill and reap the child; describe how it ended when it was dead already. */
static void child_kill_describe(pid_t pid, int pidfd, char **ret_how) {
        siginfo_t si = {};

        if (pidfd_wait_exit(pidfd, 0) < 0)
                (void) pidfd_send_sig(pidfd, SIGKILL);
        while (waitid(P_PID, (id_t) pid, &si, WEXITED) < 0 && errno == EINTR)
                ;
        if (!ret_how)
                return;
        if (si.si_pid <= 0)
                *ret_how = NULL;
        else if (si.si_code == CLD_EXITED) {
                if (asprintf(ret_how, "exited with status %d before it could exec", si.si_status) < 0)
                        *ret_how = NULL;
        } else if (asprintf(ret_how, "was killed by signal %d (%s) before it could exec%s", si.si_status,
                            strsignal(si.si_status),
                            si.si_status == SIGSYS ? ": a seccomp rule killed it" : "") < 0)
                *ret_how = NULL;
}

static int build_state_json(Container *ct, ContainerStatus st, char **ret) {
        return container_oci_state_string(ct, st, ret);
}

/* What container_exec() holds while it runs; exec_run_done() releases it, and kills and reaps a child that was
 * not handed out (so a failure at any step leaves nothing running). */
typedef struct ExecRun {
        const ExecOptions *o;
        Container *ct;
        OciConfig *c;
        char *raw; /* config.json as stored (the seccomp cache's key is made from it) */
        size_t raw_len;
        OciProcess *file_process; /* --process FILE's */
        const OciProcess *p;      /* the process to run */
        ContainerStatus st;
        int init_pidfd;
        unsigned long ns_mask; /* the init's namespaces that differ from ours */
        CgroupPlan cg;
        SeccompProgram *filter;
        int sv[2];
        bool via_userns; /* rootless: an intermediate joins the container's user and pid namespaces */
        /* The child stays outside the pid namespace and the trampoline clones the process into it: until
         * its SYNC_EXEC, child is that helper; then child is the process, and mid the helper. */
        bool fork_in_trampoline;
        pid_t mid;
        int mid_pidfd;
        ExecChild x;
        bool in_cgroup;
        pid_t child;
        int child_pidfd;
} ExecRun;

static void exec_run_done(ExecRun *e) {
        sigkill_waitp(&e->child);
        e->child_pidfd = safe_close(e->child_pidfd);
        sigkill_waitp(&e->mid);
        e->mid_pidfd = safe_close(e->mid_pidfd);
        seccomp_program_free(e->filter);
        e->filter = NULL;
        cgroup_plan_done(&e->cg);
        close_pairp(&e->sv);
        e->init_pidfd = safe_close(e->init_pidfd);
        oci_process_freep(&e->file_process);
        oci_config_freep(&e->c);
        free(e->raw);
        container_freep(&e->ct);
}

/* The container (created, running or paused) and the process to run in it. A created container's init has
 * its rootfs and namespaces ready and waits for `start`: runc and crun run an exec'd process in it too. */
static int exec_load(ExecRun *e, char **reterr) {
        const ExecOptions *o = e->o;
        int r;

        r = container_load_status(o->root, o->id, CONTAINER_LOCK_NONE, &e->ct, &e->st, reterr);
        if (r < 0)
                return r;
        if (e->st == CONTAINER_PAUSED && !o->ignore_paused)
                return errorf(reterr, EBUSY,
                              "cannot exec in a paused container (use --ignore-paused to override)");
        if (e->st != CONTAINER_RUNNING && e->st != CONTAINER_PAUSED && e->st != CONTAINER_CREATED)
                return errorf(reterr, EINVAL, "cannot exec in a %s container",
                              container_status_to_string(e->st));

        r = container_read_config(e->ct, &e->raw, &e->raw_len);
        if (r >= 0)
                r = oci_config_reparse(e->raw, e->raw_len, &e->c, NULL);
        if (r < 0)
                return errorf(reterr, r, "cannot read the config of container \"%s\": %s", o->id,
                              strerror(-r));

        return build_process(o, &e->c->process, e->c->has_process, &e->file_process, &e->p, reterr);
}

/* Could the process hold CAP_SYS_PTRACE (no capabilities object: it keeps ours, as with runc)? The bounding
 * set bounds what it and its children can ever get. */
static bool process_may_ptrace(const OciProcess *p) {
        if (!p->capabilities.present)
                return true;
        FOREACH_ARRAY(cap, p->capabilities.bounding, p->capabilities.n_bounding)
                if (*cap == CAP_SYS_PTRACE)
                        return true;
        return false;
}

/* Is the init's image out of reach for writing (a sealed copy, or a file on a read-only mount)? */
static bool init_exe_protected(pid_t pid) {
        char path[64];

        snprintf(path, sizeof path, "/proc/%d/exe", (int) pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        return fd >= 0 && fd_is_write_protected(fd);
}

/* A created container's init waits for start still as the runtime's binary where nothing of the container
 * could see it (create_needs_sealed_exe() in container.c): not dumpable outside a user namespace, yet a
 * process holding CAP_SYS_PTRACE opens /proc/1/exe all the same (in a user namespace the init is dumpable,
 * and CAP_SYS_PTRACE there is enough). Such a process is refused until start; any other runs beside the
 * waiting init, as with runc and crun. */
static int exec_check_created_init(ExecRun *e, char **reterr) {
        if (e->st != CONTAINER_CREATED || !process_may_ptrace(e->p) || init_exe_protected(e->ct->pid))
                return 0;
        return errorf(
                reterr, EPERM,
                "cannot exec a process that may hold CAP_SYS_PTRACE into created container \"%s\": its "
                "init runs the runtime's binary until start; start the container first",
                e->o->id);
}

/* How the process gets into the container's pid namespace. Where the trampoline can clone it there (the
 * container has a pid namespace of its own, and linux.seccomp lets the clone through and sends nothing to a
 * listener, which would be told the pid of a helper), nothing of ours enters that namespace but the sealed
 * trampoline. Otherwise our child is cloned into it and runs our code there until its last exec: then
 * this process must run from a sealed copy of the binary (re-executed now, before anything is made), so that
 * a container process that may ptrace it (CAP_SYS_PTRACE) can never reach the host's binary. */
static int exec_choose_path(ExecRun *e, char **reterr) {
        const OciSeccomp *sc = &e->c->linux_.seccomp;

        e->fork_in_trampoline = (e->ns_mask & CLONE_NEWPID) && !(sc->present && sc->listener_path) &&
                                trampoline_seccomp_allows_fork(sc, e->p->terminal);
        if (e->fork_in_trampoline || !e->o->seal_exe)
                return 0;
        log_debug("exec: the child is cloned into the container's pid namespace (%s)",
                  !(e->ns_mask & CLONE_NEWPID) ? "the container has none of its own"
                                               : "linux.seccomp refuses the trampoline's clone");
        int r = e->o->seal_exe();
        if (r < 0)
                return errorf(reterr, r, "run from a sealed copy of the binary: %s", strerror(-r));
        return 0;
}

/* The init's namespaces and cgroups, the seccomp filter, the sync socket; then we join the init's pid
 * namespace for our children. */
static int exec_prepare(ExecRun *e, char **reterr) {
        const ExecOptions *o = e->o;
        int r;

        e->init_pidfd = container_open_pidfd(e->ct);
        if (e->init_pidfd < 0)
                return errorf(reterr, ESRCH, "cannot exec in container \"%s\": its init is gone", o->id);
        r = init_namespaces(e->ct->pid, &e->ns_mask);
        if (r < 0)
                return errorf(reterr, r, "read the namespaces of the container init: %s", strerror(-r));
        r = exec_choose_path(e, reterr);
        if (r < 0)
                return r;
        const char *subgroup = oci_config_annotation(e->c, "run.oci.systemd.subgroup");
        _cleanup_free_ char *ct_unified = NULL;
        if (!isempty(subgroup) && !isempty(e->ct->cgroup) &&
            asprintf(&ct_unified, "%s/%s", e->ct->cgroup, subgroup) < 0)
                return -ENOMEM;
        r = cgroup_plan_make(e->ct->pid, e->ct->cgroup, ct_unified ?: e->ct->cgroup, o->sub_cgroups, &e->cg,
                             reterr);
        if (r < 0)
                return r;
        /* The init may have died (and its pid been reused) while we looked at /proc/PID. */
        if (pidfd_wait_exit(e->init_pidfd, 0) == 0)
                return errorf(reterr, ESRCH, "cannot exec in container \"%s\": its init is gone", o->id);
        r = exec_check_created_init(e, reterr);
        if (r < 0)
                return r;
        if (e->c->linux_.seccomp.present) {
                r = seccomp_program_get(o->root, e->raw, e->raw_len, &e->c->linux_.seccomp, &e->filter,
                                        reterr);
                if (r < 0)
                        return errwrap(reterr, r, "linux.seccomp");
        }
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, e->sv) < 0)
                return -errno;
        /* The process the trampoline clones is known by the credentials of its SYNC_EXEC. */
        if (e->fork_in_trampoline &&
            setsockopt(e->sv[0], SOL_SOCKET, SO_PASSCRED, &(int){ 1 }, sizeof(int)) < 0)
                return errorf(reterr, -errno, "SO_PASSCRED: %s", strerror(errno));

        /* Non-dumpable from here on, and so is the child (the flag is inherited by fork): no container process
         * can open /proc/PID/exe, /proc/PID/fd/... of the child while it runs our code in the container's
         * pid namespace. execve of the container's binary makes it dumpable again. */
        if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                return errorf(reterr, -errno, "prctl(PR_SET_DUMPABLE): %s", strerror(errno));
        /* Children only: our own pid namespace does not change. Rootless, the container's pid namespace may
         * belong to its user namespace, which only an intermediate child joins (clone_via_userns). With the
         * trampoline's clone, the child joins it for its own children. */
        if (!e->fork_in_trampoline && (e->ns_mask & CLONE_NEWPID) &&
            setns(e->init_pidfd, CLONE_NEWPID) < 0) {
                e->via_userns = errno == EPERM && (e->ns_mask & CLONE_NEWUSER) && rootless_detect();
                if (!e->via_userns)
                        return errorf(reterr, -errno, "join the pid namespace of the container init: %s",
                                      strerror(errno));
        }
        return 0;
}

/* Join the init's own cgroup on the unified hierarchy instead of the container's (see cgroup_plan_make()). */
static void cgroup_plan_use_fallback(CgroupPlan *c) {
        if (c->fallback_fd < 0)
                return;
        safe_close(c->unified_fd);
        c->unified_fd = TAKE_FD(c->fallback_fd);
        free(c->unified_path);
        c->unified_path = TAKE_PTR(c->fallback_path);
}

/* The child, born in the init's pid namespace and (where the kernel lets us) its cgroup. */
static int exec_clone(ExecRun *e, char **reterr) {
        e->x = (ExecChild) {
                .b = {
                        .role = "setns_init",
                        .p = e->p,
                        .c = e->c,
                        .filter = e->filter,
                        .in_userns = (e->ns_mask & CLONE_NEWUSER) != 0,
                        .preserve_fds = e->o->preserve_fds,
                        .sync_fd = e->sv[1],
                        .step_timeout_usec = EXEC_CHILD_STEP_TIMEOUT_USEC,
                },
                .init_pidfd = e->init_pidfd,
                .ns_mask = e->fork_in_trampoline ? e->ns_mask : e->ns_mask & ~(unsigned long) CLONE_NEWPID,
                .wait_go = e->cg.n_v1 > 0,
        };
        e->x.b.fork_into_pidns = e->fork_in_trampoline;
        e->in_cgroup = true;
        log_debug("nsexec container setup: exec joins the namespaces (0x%lx) of init pid %d%s", e->ns_mask,
                  (int) e->ct->pid, e->via_userns ? ", through its user namespace" : "");
        if (e->via_userns) {
                e->x.ns_mask &=
                        ~(unsigned long) CLONE_NEWUSER; /* the intermediate joined it for the child */
                e->x.wait_go = true;
                /* Rootless through the user namespace: where the init moved below the container's cgroup,
                 * its own cgroup, which takes processes whatever controllers are on. */
                cgroup_plan_use_fallback(&e->cg);
                pid_t child = clone_via_userns(&e->x, e->cg.unified_fd, e->sv[0], &e->child_pidfd,
                                               &e->in_cgroup, reterr);
                if (child < 0)
                        return child;
                e->child = child;
        } else {
                pid_t child = clone3_pidfd(0, SIGCHLD, e->cg.unified_fd, &e->child_pidfd);
                if (child < 0 && errno == EBUSY && e->cg.fallback_fd >= 0) {
                        /* The container's cgroup has domain controllers on for its children: the init's */
                        log_debug(
                                "exec: the container's cgroup takes no process (%m), joining the init's \"%s\"",
                                e->cg.fallback_path);
                        cgroup_plan_use_fallback(&e->cg);
                        child = clone3_pidfd(0, SIGCHLD, e->cg.unified_fd, &e->child_pidfd);
                }
                if (child < 0 && e->cg.unified_fd >= 0 && (errno == EACCES || errno == EPERM) &&
                    rootless_detect()) {
                        /* Rootless, outside the user's cgroup tree: systemd moves it in (below), into the
                         * init's own cgroup where it has one below the container's. */
                        cgroup_plan_use_fallback(&e->cg);
                        e->x.wait_go = true;
                        e->in_cgroup = false;
                        child = clone3_pidfd(0, SIGCHLD, -EBADF, &e->child_pidfd);
                }
                if (child < 0 && e->cg.explicit_sub)
                        return errorf(reterr, -errno,
                                      "--cgroup: adding pid of the new process to cgroups \"%s\": %s",
                                      e->cg.unified_path, strerror(errno));
                if (child < 0)
                        return errorf(reterr, -errno, "clone the process into the container's cgroup: %s",
                                      strerror(errno));
                if (child == 0) {
                        e->sv[0] = safe_close(e->sv[0]);
                        exec_child_main(&e->x);
                }
                e->child = child;
        }
        e->sv[1] = safe_close(e->sv[1]);
        return 0;
}

/* The child's cgroups where the clone could not place it; then it may go on. */
static int exec_attach(ExecRun *e, char **reterr) {
        int r;

        /* Rootless on v1 the user may write none of the hierarchies: systemd places the process in the ones
         * it manages, and the v1 controllers the user cannot write are left, as runc and crun do. */
        bool rootless = rootless_detect();
        if (!e->in_cgroup || (rootless && e->cg.n_v1 > 0)) {
                r = attach_via_systemd(e->ct, e->cg.unified_path, e->child, reterr);
                if (r < 0)
                        return r;
        }
        if (e->cg.n_v1 > 0) {
                r = cgroup_plan_attach_v1(&e->cg, e->child, reterr);
                if (r < 0 && rootless && (r == -EACCES || r == -EPERM)) {
                        log_debug("rootless: %s (left to systemd)",
                                  reterr && *reterr ? *reterr : strerror(-r));
                        if (reterr) {
                                free(*reterr);
                                *reterr = NULL;
                        }
                        r = 0;
                }
                if (r < 0)
                        return r;
        }
        if (e->x.wait_go)
                /* A failure means the child died: the receive below says how. */
                (void) sync_send(e->sv[0], SYNC_GO, 0, NULL, 0, -EBADF);
        return 0;
}

/* A pidfd of pid, our own child (the trampoline clones it with CLONE_PARENT): not reaped, so the pid is still
 * that process's. */
static int open_own_child(pid_t pid) {
        siginfo_t si = {};
        int fd;

        if (pid <= 0)
                return -EBADMSG;
        fd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (fd < 0)
                return -errno;
        if (waitid(P_PIDFD, (id_t) fd, &si, WEXITED | WNOHANG | WNOWAIT) < 0) {
                int r = -errno;
                safe_close(fd);
                return r == -ECHILD ? -EBADMSG : r;
        }
        return fd;
}

/* SYNC_EXEC: the process is the container's from here. Where the trampoline cloned it, this is its first
 * word: it becomes the child we hand out (and the one the server watches), the helper that cloned it mid. */
static int exec_on_exec(SyncServer *s, SyncMsg *m, char **reterr) {
        ExecRun *e = s->userdata;

        if (e->fork_in_trampoline && e->mid == 0) {
                int fd = m->sender == e->child ? -EBADMSG : open_own_child(m->sender);
                if (fd < 0)
                        return errorf(
                                reterr, fd,
                                "unable to start container process: the trampoline's process %d is not ours: %s",
                                (int) m->sender, strerror(-fd));
                e->mid = e->child;
                e->mid_pidfd = e->child_pidfd;
                e->child = m->sender;
                e->child_pidfd = fd;
                s->pidfd = fd;
        }
        return sync_handle_exec(s, m, reterr);
}

/* The exec failed after the trampoline may have cloned the process, before we took its SYNC_EXEC: that
 * process dies with us until it has said it (PR_SET_PDEATHSIG), so a SYNC_EXEC still queued is the one to
 * find and kill here. */
static void exec_kill_unclaimed(ExecRun *e) {
        SyncMsg m;

        if (!e->fork_in_trampoline || e->mid != 0)
                return;
        while (sync_recv(e->sv[0], -EBADF, 0, &m) >= 0) {
                if (m.type == SYNC_EXEC && m.sender > 0 && m.sender != e->child) {
                        _cleanup_close_ int fd = open_own_child(m.sender);
                        if (fd >= 0)
                                child_kill_describe(m.sender, fd, NULL);
                }
                sync_msg_done(&m);
        }
}

/* The helper that cloned the process exits once the process has executed (CLONE_VFORK). */
static void exec_reap_mid(ExecRun *e) {
        if (e->mid <= 0)
                return;
        helper_reap(e->mid, e->mid_pidfd);
        e->mid = 0;
        e->mid_pidfd = safe_close(e->mid_pidfd);
}

/* SYNC_EXEC_FAILED: execve(2) itself failed: worded as runc 1.2 and later do (Go's os.PathError). */
static int exec_on_exec_failed(SyncServer *s, SyncMsg *m, char **reterr) {
        ExecRun *e = s->userdata;
        int r = m->error > 0 ? -m->error : -EIO;
        return errorf(reterr, r, "unable to start container process: exec %s: %s", e->p->args[0],
                      r == -EACCES   ? "permission denied"
                      : r == -ENOENT ? "no such file or directory"
                                     : strerror(-r));
}

/* SYNC_CONSOLE: the pty master, to our caller or --console-socket. */
static int exec_on_console(SyncServer *s, SyncMsg *m, char **reterr) {
        ExecRun *e = s->userdata;
        return console_answer(s->sock, m, e->o->ret_console_master, e->o->console_socket, reterr);
}

/* SYNC_SECCOMP_FD: the listener to the seccomp agent. */
static int exec_on_seccomp_fd(SyncServer *s, SyncMsg *m, char **reterr) {
        ExecRun *e = s->userdata;
        _cleanup_free_ char *state_json = NULL;
        int r = build_state_json(e->ct, e->st, &state_json);
        if (r < 0)
                return errwrap(reterr, r, "linux.seccomp.listenerPath");
        return sync_answer_seccomp(s, m, &e->c->linux_.seccomp, e->child, state_json, reterr);
}

/* EOF or death: whether it executed the process comes from our own channel, never from anything the
 * process can change (its comm). */
static int exec_on_hangup(SyncServer *s, char **reterr) {
        ExecRun *e = s->userdata;
        if (s->exec_seen)
                return 0;
        _cleanup_free_ char *how = NULL;
        child_kill_describe(e->child, e->child_pidfd, &how);
        e->child = 0;
        return errorf(reterr, ECHILD, "unable to start container process: the process %s",
                      how ?: "died before it could exec");
}

/* Serve the child's setup (pty, seccomp listener) until it has exec'd. */
static int exec_wait(ExecRun *e, char **reterr) {
        char timed_out[160];
        snprintf(timed_out, sizeof timed_out,
                 "unable to start container process: it did not exec within %llu s%s",
                 (unsigned long long) (EXEC_SETUP_TIMEOUT_USEC / USEC_PER_SEC),
                 e->st == CONTAINER_PAUSED ? " (the container is paused)" : "");
        const SyncWording wording = {
                .peer = "the exec'd process",
                .prefix = "unable to start container process: ",
                .awaited = "the exec'd process to start",
                .killed = "it",
                .timed_out = timed_out,
                .error_prefix = "unable to start container process: ",
                .error_default = "setup failed",
        };
        SyncServer s = {
                .sock = e->sv[0],
                .pidfd = e->child_pidfd,
                .timeout_usec = EXEC_SETUP_TIMEOUT_USEC,
                .wording = &wording,
                .handlers = {
                        [SYNC_EXEC] = exec_on_exec,
                        [SYNC_EXEC_FAILED] = exec_on_exec_failed,
                        [SYNC_CONSOLE] = exec_on_console,
                        [SYNC_SECCOMP_FD] = exec_on_seccomp_fd,
                },
                .on_hangup = exec_on_hangup,
                .userdata = e,
        };
        int r = sync_serve(&s, reterr);
        if (r < 0 && e->child > 0) {
                /* Killed by the server: reaped where it died in time; a child in a frozen v1 cgroup dies only
                 * on thaw, and is never waited for unbounded. */
                if (s.peer_dead)
                        child_kill_describe(e->child, e->child_pidfd, NULL);
                e->child = 0;
        }
        if (r < 0)
                exec_kill_unclaimed(e);
        exec_reap_mid(e);
        return r < 0 ? r : 0;
}

typedef int (*ExecStep)(ExecRun *e, char **reterr);

int container_exec(const ExecOptions *o, ExecProcess *ret, char **reterr) {
        _cleanup_(exec_run_done) ExecRun e = {
                .o = o,
                .init_pidfd = -EBADF,
                .cg = { .unified_fd = -EBADF, .fallback_fd = -EBADF },
                .sv = { -EBADF, -EBADF },
                .child_pidfd = -EBADF,
                .mid_pidfd = -EBADF,
        };
        /* In order; the first failure ends the exec and exec_run_done() undoes what the others did. */
        static const ExecStep steps[] = { exec_load, exec_prepare, exec_clone, exec_attach, exec_wait };

        FOREACH_ARRAY(step, steps, ELEMENTSOF(steps)) {
                int r = (*step)(&e, reterr);
                if (r < 0)
                        return r;
        }
        /* (A failure kills the process: exec_run_done() still owns it.) */
        if (o->pidfd_socket) {
                int r = unix_send_fd("--pidfd-socket", o->pidfd_socket, "pidfd", e.child_pidfd, reterr);
                if (r < 0)
                        return r;
        }
        if (o->pid_file) {
                int r = write_pid_file(o->pid_file, e.child);
                if (r < 0)
                        return errorf(reterr, r, "--pid-file: write \"%s\": %s", o->pid_file, strerror(-r));
        }

        ret->pid = TAKE_PID(e.child);
        ret->pidfd = TAKE_FD(e.child_pidfd);
        return 0;
}
