/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <linux/magic.h>
#include <sys/capability.h>

#include "capabilities.h"
#include "error-util.h"
#include "fileio.h"
#include "log.h"
#include "macro.h"

#define CAP_BIT(c) (UINT64_C(1) << (c))

int capability_last_cap(unsigned *ret) {
        _cleanup_free_ char *s = NULL;
        int r;

        assert(ret);

        r = read_full_file_at(AT_FDCWD, "/proc/sys/kernel/cap_last_cap", 64, &s, NULL);
        if (r >= 0) {
                char *end;
                errno = 0;
                unsigned long v = strtoul(s, &end, 10);
                if (errno == 0 && end != s && (*end == '\n' || *end == 0) && v < 64) {
                        *ret = (unsigned) v;
                        return 0;
                }
        }

        /* No (usable) /proc: the highest capability PR_CAPBSET_READ accepts. */
        for (int c = 63; c >= 0; c--)
                if (prctl(PR_CAPBSET_READ, (unsigned long) c, 0, 0, 0) >= 0) {
                        *ret = (unsigned) c;
                        return 0;
                }
        return -EOPNOTSUPP;
}

static int capability_name(unsigned c, char *buf, size_t size) {
        char *name = cap_to_name((cap_value_t) c);
        if (!name)
                return snprintf(buf, size, "%u", c);
        for (char *p = name; *p; p++)
                *p = (char) (*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
        int r = snprintf(buf, size, "%s", name);
        cap_free(name);
        return r;
}

/* set NULL: unknown capabilities are dropped without a word (they are reported where the sets are applied). */
static uint64_t to_mask(const int *caps, size_t n, unsigned last_cap, const char *set) {
        uint64_t m = 0;

        for (size_t i = 0; i < n; i++) {
                if (caps[i] < 0 || (unsigned) caps[i] > last_cap) {
                        char name[64];
                        if (!set)
                                continue;
                        if (caps[i] >= 0)
                                capability_name((unsigned) caps[i], name, sizeof name);
                        else
                                snprintf(name, sizeof name, "%d", caps[i]);
                        log_warning(
                                "process.capabilities.%s: capability %s is not known to the running kernel (last capability %u), dropping it.",
                                set, name, last_cap);
                        continue;
                }
                m |= CAP_BIT(caps[i]);
        }
        return m;
}

void capabilities_to_masks(const OciCapabilities *c, unsigned last_cap, CapabilityMasks *ret) {
        assert(c);
        assert(ret);

        *ret = (CapabilityMasks){};
        if (!c->present)
                return;

        ret->bounding = to_mask(c->bounding, c->n_bounding, last_cap, "bounding");
        ret->effective = to_mask(c->effective, c->n_effective, last_cap, "effective");
        ret->permitted = to_mask(c->permitted, c->n_permitted, last_cap, "permitted");
        ret->inheritable = to_mask(c->inheritable, c->n_inheritable, last_cap, "inheritable");
        ret->ambient = to_mask(c->ambient, c->n_ambient, last_cap, "ambient");
}

int capability_mask_to_string(uint64_t mask, char **ret) {
        _cleanup_free_ char *s = strdup("");
        if (!s)
                return -ENOMEM;

        for (unsigned c = 0; c < 64; c++) {
                if (!(mask & CAP_BIT(c)))
                        continue;

                char *name = cap_to_name((cap_value_t) c); /* "cap_chown", or the number when unknown */
                if (!name)
                        return -ENOMEM;
                char *n = NULL;
                int k;
                if (name[0] >= '0' && name[0] <= '9')
                        k = asprintf(&n, "%s%s%s", s, *s ? " " : "", name);
                else {
                        for (char *p = name; *p; p++)
                                *p = (char) (*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
                        k = asprintf(&n, "%s%s%s", s, *s ? " " : "", name);
                }
                cap_free(name);
                if (k < 0)
                        return -ENOMEM;
                free(s);
                s = n;
        }
        *ret = TAKE_PTR(s);
        return 0;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(cap_t, cap_free);

int capabilities_raise_effective(void) {
        _cleanup_(cap_freep) cap_t c = cap_get_proc();
        unsigned last_cap;
        int r;

        if (!c)
                return -errno;
        r = capability_last_cap(&last_cap);
        if (r < 0)
                return r;
        for (unsigned i = 0; i <= last_cap; i++) {
                cap_value_t v = (cap_value_t) i;
                cap_flag_value_t permitted = CAP_CLEAR;
                if (cap_get_flag(c, v, CAP_PERMITTED, &permitted) < 0 ||
                    cap_set_flag(c, CAP_EFFECTIVE, 1, &v, permitted) < 0)
                        return -errno;
        }
        return RET_NERRNO(cap_set_proc(c));
}

int capabilities_check_held(const OciProcess *p, char **reterr) {
        const OciCapabilities *c = &p->capabilities;
        uint64_t permitted, want, held = 0;
        unsigned last_cap;
        int r;

        if (!c->present)
                return 0;
        r = capability_last_cap(&last_cap);
        if (r < 0)
                return errorf(reterr, r,
                              "process.capabilities: cannot determine the kernel's last capability: %s",
                              strerror(-r));
        permitted = to_mask(c->permitted, c->n_permitted, last_cap, NULL);
        want = permitted | to_mask(c->effective, c->n_effective, last_cap, NULL);
        if (want == 0)
                return 0;

        _cleanup_(cap_freep) cap_t cur = cap_get_proc();
        if (!cur)
                return errorf(reterr, -errno, "process.capabilities: reading our own capabilities: %m");
        for (unsigned i = 0; i <= last_cap; i++) {
                cap_flag_value_t v = CAP_CLEAR;
                if (cap_get_flag(cur, (cap_value_t) i, CAP_PERMITTED, &v) >= 0 && v == CAP_SET)
                        held |= CAP_BIT(i);
        }
        if ((want & ~held) == 0)
                return 0;

        _cleanup_free_ char *missing = NULL;
        (void) capability_mask_to_string(want & ~held, &missing);
        return errorf(reterr, -EPERM,
                      "process.capabilities.%s: %s not held by the runtime here (its own permitted set), "
                      "so the container cannot have them",
                      (permitted & ~held) ? "permitted" : "effective", strna(missing));
}

static int set_cap_flag(cap_t c, cap_flag_t flag, uint64_t mask) {
        cap_value_t v[64];
        int n = 0;

        for (unsigned i = 0; i < 64; i++)
                if (mask & CAP_BIT(i))
                        v[n++] = (cap_value_t) i;
        if (n == 0)
                return 0;
        return cap_set_flag(c, flag, n, v, CAP_SET) < 0 ? -errno : 0;
}

/* "deny" in /proc/self/setgroups: this user namespace was set up without setgroups(2). */
static bool setgroups_denied(void) {
        _cleanup_free_ char *s = NULL;

        if (read_full_file_at(proc_dir_fd(), proc_rel("/proc/self/setgroups"), 64, &s, NULL) < 0)
                return false;
        return strneq(s, "deny", 4);
}

/* The uid owner only, as runc does: the group of a tty is the one devpts gave it (tty). Only what was made
 * for the container: its own pty (process.terminal), anonymous pipes and sockets (conmon's, the shim's). Not a
 * terminal, a named FIFO or a file of the host's that the caller's stdio happens to be: runc chowns those
 * too, which hands the host's tty to the container's uid. An fd whose owner the namespace cannot map
 * (overflowuid) or that is already the user's is left; so is a failure (a rootless runtime may not own it). */
static void chown_stdio(uid_t uid, bool own_terminal) {
        for (int fd = 0; fd <= 2; fd++) {
                struct statfs sfs;
                struct stat st;

                if (fstat(fd, &st) < 0 || st.st_uid == uid || st.st_uid == 65534)
                        continue;
                if (S_ISCHR(st.st_mode)) {
                        if (!own_terminal || !isatty(fd))
                                continue;
                } else if (!S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode))
                        continue;
                else if (fstatfs(fd, &sfs) < 0 || (sfs.f_type != PIPEFS_MAGIC && sfs.f_type != SOCKFS_MAGIC))
                        continue;
                if (fchown(fd, uid, (gid_t) -1) < 0)
                        log_debug("process.user.uid: chown stdio fd %d to %" PRIu32 ": %m", fd,
                                  (uint32_t) uid);
        }
}

static int apply_user(const OciProcess *p, bool in_user_namespace, bool keep_groups, bool seccomp_loaded,
                      char **reterr) {
        /* Privileged region: runs in the container's init (or exec'd process), in all of its namespaces,
         * as root of its user namespace, right before execve. */
        const char *hint =
                seccomp_loaded
                        ? " (the seccomp filter is already loaded here because noNewPrivileges is false: it must allow this call)"
                        : "";
        CapabilityMasks m;
        unsigned last_cap;
        char name[64];
        int r;

        assert(p);

        r = capability_last_cap(&last_cap);
        if (r < 0)
                return errorf(reterr, r,
                              "process.capabilities: cannot determine the kernel's last capability: %s",
                              strerror(-r));
        capabilities_to_masks(&p->capabilities, last_cap, &m);

        /* 1. The bounding set, while we still have CAP_SETPCAP. */
        for (unsigned c = 0; c <= last_cap; c++) {
                if (m.bounding & CAP_BIT(c))
                        continue;
                r = prctl(PR_CAPBSET_READ, (unsigned long) c, 0, 0, 0);
                if (r <= 0) /* not in the set (or unknown): nothing to drop */
                        continue;
                if (prctl(PR_CAPBSET_DROP, (unsigned long) c, 0, 0, 0) < 0) {
                        r = -errno;
                        capability_name(c, name, sizeof name);
                        return errorf(
                                reterr, r,
                                "process.capabilities.bounding: dropping %s from the bounding set: %s%s",
                                name, strerror(-r), hint);
                }
        }

        /* 2. Keep the permitted set across the switch to a non-zero uid. */
        if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
                return errorf(reterr, -errno, "process.user: PR_SET_KEEPCAPS: %m%s", hint);

        /* The stdio made for the process becomes its user's, so that a process that is not root can reopen
         * /dev/stdout (nginx's access log) and own its terminal. */
        chown_stdio(p->user.uid, p->terminal);

        /* 3. Groups, gid, uid. run.oci.keep_original_groups (crun's; Podman's --group-add keep-groups): no
         * setgroups(2) at all, the process keeps the groups of whoever ran the runtime. */
        if (keep_groups) {
                if (p->user.n_additional_gids > 0)
                        log_warning("process.user.additionalGids: not set, the annotation "
                                    "run.oci.keep_original_groups keeps the original groups instead");
        } else if (in_user_namespace && setgroups_denied()) {
                if (p->user.n_additional_gids > 0)
                        return errorf(
                                reterr, -EPERM,
                                "process.user.additionalGids: setgroups(2) is denied in the container's user namespace");
        } else {
                _cleanup_free_ gid_t *g = NULL;
                if (p->user.n_additional_gids > 0) {
                        g = calloc(p->user.n_additional_gids, sizeof(gid_t));
                        if (!g)
                                return errorf(reterr, -ENOMEM, "process.user.additionalGids: out of memory");
                        for (size_t i = 0; i < p->user.n_additional_gids; i++)
                                g[i] = (gid_t) p->user.additional_gids[i];
                }
                /* Also with no additional gids: clears the groups the init inherited. */
                if (setgroups(p->user.n_additional_gids, g) < 0)
                        return errorf(reterr, -errno, "process.user.additionalGids: setgroups: %m%s", hint);
        }
        if (setresgid(p->user.gid, p->user.gid, p->user.gid) < 0)
                return errorf(reterr, -errno, "process.user.gid: setresgid(%" PRIu32 "): %m%s", p->user.gid,
                              hint);
        if (setresuid(p->user.uid, p->user.uid, p->user.uid) < 0)
                return errorf(reterr, -errno, "process.user.uid: setresuid(%" PRIu32 "): %m%s", p->user.uid,
                              hint);
        if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
                return errorf(reterr, -errno, "process.user: clearing PR_SET_KEEPCAPS: %m%s", hint);

        /* 4. Effective, permitted, inheritable. */
        {
                _cleanup_(cap_freep) cap_t c = cap_init();
                if (!c)
                        return errorf(reterr, -ENOMEM, "process.capabilities: out of memory");
                if (set_cap_flag(c, CAP_EFFECTIVE, m.effective) < 0 ||
                    set_cap_flag(c, CAP_PERMITTED, m.permitted) < 0 ||
                    set_cap_flag(c, CAP_INHERITABLE, m.inheritable) < 0)
                        return errorf(reterr, -EINVAL,
                                      "process.capabilities: building the capability sets: %m");
                if (cap_set_proc(c) < 0) {
                        r = -errno;
                        if (r == -EPERM && (m.effective & ~m.permitted))
                                return errorf(
                                        reterr, r,
                                        "process.capabilities.effective: must be a subset of permitted");
                        if (r == -EPERM && (m.inheritable & ~m.bounding)) {
                                _cleanup_free_ char *extra = NULL;
                                (void) capability_mask_to_string(m.inheritable & ~m.bounding, &extra);
                                return errorf(reterr, r,
                                              "process.capabilities.inheritable: %s not in the bounding set",
                                              strna(extra));
                        }
                        return errorf(
                                reterr, r,
                                "process.capabilities: setting the effective, permitted and inheritable sets: %s%s",
                                strerror(-r), hint);
                }
        }

        /* 5. Ambient: the kernel only raises what is both permitted and inheritable. Like runc and crun, a
         * capability that cannot be raised is not an error (Podman relies on that). Buildah asks for every
         * default capability as ambient with an empty inheritable set, on each RUN step: what the config
         * itself rules out is only a debug message (runc and crun say nothing), the rest a warning. These
         * go to the container's stderr when the runtime was given no --log. */
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
                return errorf(reterr, -errno, "process.capabilities.ambient: clearing the ambient set: %m%s",
                              hint);
        uint64_t ruled_out = 0;
        for (unsigned c = 0; c <= last_cap; c++) {
                if (!(m.ambient & CAP_BIT(c)))
                        continue;
                if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, (unsigned long) c, 0, 0) >= 0)
                        continue;
                r = -errno;
                capability_name(c, name, sizeof name);
                if (r != -EPERM && r != -EINVAL)
                        return errorf(reterr, r, "process.capabilities.ambient: raising %s: %s%s", name,
                                      strerror(-r), hint);
                if (!(m.permitted & CAP_BIT(c)) || !(m.inheritable & CAP_BIT(c)))
                        ruled_out |= CAP_BIT(c);
                else
                        log_warning("process.capabilities.ambient: cannot raise %s: %s.", name,
                                    strerror(-r));
        }
        if (ruled_out != 0) {
                _cleanup_free_ char *names = NULL;
                (void) capability_mask_to_string(ruled_out, &names);
                log_debug("process.capabilities.ambient: %s not raised: not both permitted and inheritable.",
                          strna(names));
        }

        (void) umask((mode_t) (p->user.has_umask ? p->user.umask : 0022) & 0777);

        /* 6. Last: no_new_privs, so that nothing above depends on it. */
        if (p->no_new_privileges && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return errorf(reterr, -errno, "process.noNewPrivileges: PR_SET_NO_NEW_PRIVS: %m%s", hint);

        return 0;
}

int capabilities_apply_user(const OciProcess *p, bool in_user_namespace, char **reterr) {
        return apply_user(p, in_user_namespace, false, false, reterr);
}

void security_plan(bool no_new_privileges, bool have_seccomp, SecurityStep ret[2]) {
        assert(ret);

        if (!have_seccomp) {
                ret[0] = SECURITY_STEP_APPLY_USER;
                ret[1] = SECURITY_STEP_NONE;
        } else if (no_new_privileges) {
                /* seccomp(2) is unprivileged under no_new_privs: as late as possible. */
                ret[0] = SECURITY_STEP_APPLY_USER;
                ret[1] = SECURITY_STEP_LOAD_SECCOMP;
        } else {
                /* Needs CAP_SYS_ADMIN: before the capabilities go. */
                ret[0] = SECURITY_STEP_LOAD_SECCOMP;
                ret[1] = SECURITY_STEP_APPLY_USER;
        }
}

int process_finalize_security_full(const OciProcess *p, const OciSeccomp *s, const SeccompProgram *ctx,
                                   bool in_user_namespace, bool keep_groups,
                                   int (*send_notify_fd)(int fd, void *userdata), void *userdata,
                                   int *ret_notify_fd, char **reterr) {
        /* Privileged region, container side: the last steps before execve. */
        _cleanup_close_ int notify_fd = -EBADF;
        SecurityStep plan[2];
        bool loaded = false;
        int r;

        assert(p);
        assert(!ctx || s);
        assert(ret_notify_fd);

        security_plan(p->no_new_privileges, ctx != NULL, plan);

        for (size_t i = 0; i < ELEMENTSOF(plan); i++)
                switch (plan[i]) {
                case SECURITY_STEP_NONE:
                        break;
                case SECURITY_STEP_APPLY_USER:
                        r = apply_user(p, in_user_namespace, keep_groups, loaded, reterr);
                        if (r < 0)
                                return r;
                        break;
                case SECURITY_STEP_LOAD_SECCOMP: {
                        int fd = -1;
                        r = oci_seccomp_load(ctx, s, &fd, reterr);
                        if (r < 0)
                                return r;
                        loaded = true;
                        notify_fd = fd >= 0 ? fd : -EBADF;
                        /* Hand the listener out right away: with the filter loaded before the user switch,
                         * a notified syscall below would otherwise wait for an agent that has no fd. */
                        if (notify_fd >= 0 && send_notify_fd) {
                                r = send_notify_fd(notify_fd, userdata);
                                if (r < 0)
                                        return errorf(
                                                reterr, r,
                                                "linux.seccomp: passing the notify fd to the runtime: %s",
                                                strerror(-r));
                                notify_fd = safe_close(notify_fd);
                        }
                        break;
                }
                }

        *ret_notify_fd = notify_fd >= 0 ? TAKE_FD(notify_fd) : -1;
        return 0;
}

int process_finalize_security(const OciProcess *p, const OciSeccomp *s, const SeccompProgram *ctx,
                              bool in_user_namespace, int *ret_notify_fd, char **reterr) {
        return process_finalize_security_full(p, s, ctx, in_user_namespace, false, NULL, NULL, ret_notify_fd,
                                              reterr);
}
