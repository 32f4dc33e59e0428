/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* process.user / capabilities / noNewPrivileges and the seccomp ordering. The helpers are tested
 * directly; the privileged parts run in a forked child, which is root either because the suite runs as
 * root or because it made itself root of a new user namespace, and are checked numerically against the
 * child's /proc/self/status. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>

#include "capabilities.h"
#include "fileio.h"
#include "macro.h"
#include "seccomp-compile.h"
#include "seccomp-filter.h"
#include "tap.h"

#define B(c) (UINT64_C(1) << (c))
#define MISSING_DIR "/nonexistent-sdrun-capabilities-test/x"

/* The value of a "Name:\t..." line of a /proc/PID/status text; hex for Cap*, octal for Umask. */
static bool status_field(const char *status, const char *name, char *buf, size_t size) {
        size_t l = strlen(name);
        for (const char *p = status; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
                if (strneq(p, name, l) && p[l] == ':') {
                        const char *v = p + l + 1;
                        v += strspn(v, " \t");
                        size_t n = strcspn(v, "\n");
                        if (n >= size)
                                return false;
                        memcpy(buf, v, n);
                        buf[n] = 0;
                        return true;
                }
        return false;
}

static uint64_t status_hex(const char *status, const char *name) {
        char buf[64];
        if (!status_field(status, name, buf, sizeof buf))
                return UINT64_MAX;
        return strtoull(buf, NULL, 16);
}

static void test_last_cap(void) {
        unsigned last = 0;
        _cleanup_free_ char *s = NULL;

        tap_is_int(capability_last_cap(&last), 0, "capability_last_cap()");
        tap_is_int(read_full_file_at(AT_FDCWD, "/proc/sys/kernel/cap_last_cap", 64, &s, NULL) >= 0 ? atoi(s) : -1,
                   (int) last, "matches /proc/sys/kernel/cap_last_cap");
        tap_ok(prctl(PR_CAPBSET_READ, (unsigned long) last, 0, 0, 0) >= 0 &&
                       prctl(PR_CAPBSET_READ, (unsigned long) last + 1, 0, 0, 0) < 0,
               "and is the highest capability the kernel accepts");
}

static void test_masks(void) {
        int bnd[] = { CAP_CHOWN, CAP_KILL, 40, 63 };
        int eff[] = { CAP_KILL };
        OciCapabilities c = {
                .present = true,
                .bounding = bnd,
                .n_bounding = ELEMENTSOF(bnd),
                .effective = eff,
                .n_effective = 1,
                .permitted = eff,
                .n_permitted = 1,
        };
        CapabilityMasks m;

        capabilities_to_masks(&c, 40, &m);
        tap_is_int(m.bounding, B(CAP_CHOWN) | B(CAP_KILL) | B(40), "bounding mask (63 > last cap 40 dropped)");
        tap_is_int(m.effective, B(CAP_KILL), "effective mask");
        tap_ok(m.inheritable == 0 && m.ambient == 0, "absent sets are empty");

        capabilities_to_masks(&c, 5, &m);
        tap_is_int(m.bounding, B(CAP_CHOWN) | B(CAP_KILL), "a kernel that stops at 5 (CAP_KILL): 40 and 63 dropped");

        c.present = false;
        capabilities_to_masks(&c, 40, &m);
        tap_ok(m.bounding == 0 && m.effective == 0 && m.permitted == 0, "no capabilities object: nothing");

        _cleanup_free_ char *s = NULL, *e = NULL;
        tap_is_int(capability_mask_to_string(B(CAP_CHOWN) | B(CAP_KILL) | B(CAP_SYS_ADMIN), &s), 0, "mask to string");
        tap_is_str(s, "CAP_CHOWN CAP_KILL CAP_SYS_ADMIN", "formatted");
        tap_is_int(capability_mask_to_string(0, &e), 0, "empty mask");
        tap_is_str(e, "", "formatted as empty");
}

static void test_plan(void) {
        SecurityStep p[2];

        security_plan(true, true, p);
        tap_ok(p[0] == SECURITY_STEP_APPLY_USER && p[1] == SECURITY_STEP_LOAD_SECCOMP,
               "noNewPrivileges: user and capabilities first, filter last");
        security_plan(false, true, p);
        tap_ok(p[0] == SECURITY_STEP_LOAD_SECCOMP && p[1] == SECURITY_STEP_APPLY_USER,
               "no noNewPrivileges: filter first (needs CAP_SYS_ADMIN), then user and capabilities");
        security_plan(false, false, p);
        tap_ok(p[0] == SECURITY_STEP_APPLY_USER && p[1] == SECURITY_STEP_NONE, "no seccomp: user only");
}

/* Make the calling (child) process root of a new user namespace mapping only its own ids. */
static int become_userns_root(void) {
        char map[64];
        uid_t uid = geteuid();
        gid_t gid = getegid();

        if (unshare(CLONE_NEWUSER) < 0)
                return -errno;
        if (write_string_file("/proc/self/setgroups", "deny") < 0)
                return -EPERM;
        snprintf(map, sizeof map, "0 %u 1", (unsigned) uid);
        if (write_string_file("/proc/self/uid_map", map) < 0)
                return -EPERM;
        snprintf(map, sizeof map, "0 %u 1", (unsigned) gid);
        if (write_string_file("/proc/self/gid_map", map) < 0)
                return -EPERM;
        return 0;
}

typedef struct Case {
        bool userns;             /* become root of a new user namespace first */
        const OciProcess *p;
        const OciSeccomp *s;     /* NULL: capabilities_apply_user() only */
        const char *exec_status; /* after applying, exec this to print its own /proc/self/status */
        int probe_errno;         /* after applying, mkdirat must fail with this (0: not checked) */
} Case;

/* Runs the case in a child. Returns 0 with *ret_status = the child's /proc/self/status (or the exec'd
 * program's), or the child's error message in *ret_err. -EOPNOTSUPP: user namespaces unavailable. */
static int run_case(const Case *c, char **ret_status, char **ret_err) {
        int pipefd[2];

        *ret_status = *ret_err = NULL;
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;

        pid_t pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                char *err = NULL;
                int r, fd = -1;

                close(pipefd[0]);
                if (c->userns && become_userns_root() < 0) {
                        (void) loop_write(pipefd[1], "E:userns", 8);
                        _exit(77);
                }
                if (c->s) {
                        SeccompProgram *ctx = NULL;
                        r = oci_seccomp_prepare(c->s, &ctx, &err);
                        if (r >= 0)
                                r = process_finalize_security(c->p, c->s, ctx, c->userns, &fd, &err);
                } else
                        r = capabilities_apply_user(c->p, c->userns, &err);
                if (r < 0) {
                        (void) loop_write(pipefd[1], "E:", 2);
                        (void) loop_write(pipefd[1], strna(err), strlen(strna(err)));
                        _exit(1);
                }
                if (c->probe_errno != 0) {
                        int e = syscall(SYS_mkdirat, 0, MISSING_DIR, 0) < 0 ? errno : 0;
                        if (e != c->probe_errno) {
                                (void) loop_write(pipefd[1], "E:probe", 7);
                                _exit(1);
                        }
                }
                if (c->exec_status) {
                        if (dup2(pipefd[1], STDOUT_FILENO) < 0)
                                _exit(2);
                        execl(c->exec_status, c->exec_status, "/proc/self/status", (char *) NULL);
                        _exit(3);
                }
                _cleanup_free_ char *st = NULL;
                size_t n;
                if (read_full_file_at(AT_FDCWD, "/proc/self/status", 1 << 16, &st, &n) < 0)
                        _exit(4);
                (void) loop_write(pipefd[1], st, n);
                _exit(0);
        }

        close(pipefd[1]);
        _cleanup_free_ char *out = NULL;
        size_t len = 0;
        char buf[4096];
        ssize_t n;
        while ((n = read(pipefd[0], buf, sizeof buf)) > 0) {
                char *o = realloc(out, len + (size_t) n + 1);
                if (!o)
                        break;
                out = o;
                memcpy(out + len, buf, (size_t) n);
                len += (size_t) n;
                out[len] = 0;
        }
        close(pipefd[0]);
        int status;
        (void) waitpid(pid, &status, 0);

        if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
                return -EOPNOTSUPP;
        if (out && strneq(out, "E:", 2)) {
                *ret_err = strdup(out + 2);
                return -EIO;
        }
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !out) {
                *ret_err = strdup("child failed");
                return -EIO;
        }
        *ret_status = TAKE_PTR(out);
        return 0;
}

static int bnd[] = { CAP_CHOWN, CAP_KILL, CAP_SETUID, CAP_SETGID, CAP_NET_BIND_SERVICE };
static int eff[] = { CAP_CHOWN, CAP_KILL };
static int prm[] = { CAP_CHOWN, CAP_KILL, CAP_NET_BIND_SERVICE };
static int inh[] = { CAP_KILL, CAP_NET_BIND_SERVICE };
static int amb[] = { CAP_KILL, CAP_CHOWN /* not inheritable: a warning, not raised */ };
#define BND (B(CAP_CHOWN) | B(CAP_KILL) | B(CAP_SETUID) | B(CAP_SETGID) | B(CAP_NET_BIND_SERVICE))
#define EFF (B(CAP_CHOWN) | B(CAP_KILL))
#define PRM (B(CAP_CHOWN) | B(CAP_KILL) | B(CAP_NET_BIND_SERVICE))
#define INH (B(CAP_KILL) | B(CAP_NET_BIND_SERVICE))
#define AMB (B(CAP_KILL))

static OciProcess base_process(void) {
        return (OciProcess) {
                .user = { .uid = 0, .gid = 0, .has_umask = true, .umask = 027 },
                .capabilities = {
                        .present = true,
                        .bounding = bnd, .n_bounding = ELEMENTSOF(bnd),
                        .effective = eff, .n_effective = ELEMENTSOF(eff),
                        .permitted = prm, .n_permitted = ELEMENTSOF(prm),
                        .inheritable = inh, .n_inheritable = ELEMENTSOF(inh),
                        .ambient = amb, .n_ambient = ELEMENTSOF(amb),
                },
                .no_new_privileges = true,
        };
}

static void check_sets(const char *st, uint64_t bounding, uint64_t effective, uint64_t permitted,
                       uint64_t inheritable, uint64_t ambient, const char *what) {
        tap_is_int(status_hex(st, "CapBnd"), bounding, "%s: CapBnd", what);
        tap_is_int(status_hex(st, "CapEff"), effective, "%s: CapEff", what);
        tap_is_int(status_hex(st, "CapPrm"), permitted, "%s: CapPrm", what);
        tap_is_int(status_hex(st, "CapInh"), inheritable, "%s: CapInh", what);
        tap_is_int(status_hex(st, "CapAmb"), ambient, "%s: CapAmb", what);
}

static void skip(int n, const char *why) {
        for (int i = 0; i < n; i++) {
                tap_n++;
                printf("ok %d # SKIP %s\n", tap_n, why);
        }
}

static void test_userns(void) {
        OciProcess p = base_process();
        Case c = { .userns = true, .p = &p };
        _cleanup_free_ char *st = NULL, *err = NULL;
        char buf[64];

        int r = run_case(&c, &st, &err);
        if (r == -EOPNOTSUPP) {
                skip(11, "no unprivileged user namespaces");
                return;
        }
        tap_is_int(r, 0, "user namespace root: capabilities_apply_user() %s", strna(err));
        if (r < 0) {
                skip(10, "previous failure");
                return;
        }
        check_sets(st, BND, EFF, PRM, INH, AMB, "user namespace");
        tap_ok(status_field(st, "NoNewPrivs", buf, sizeof buf) && streq(buf, "1"), "NoNewPrivs 1");
        tap_ok(status_field(st, "Umask", buf, sizeof buf) && streq(buf, "0027"), "Umask 0027 (got %s)", buf);

        /* A capability the kernel does not know: dropped with a warning, not an error. */
        unsigned last;
        int with_unknown[] = { CAP_KILL, 0 };
        OciProcess q = base_process();
        _cleanup_free_ char *st2 = NULL, *err2 = NULL;
        if (capability_last_cap(&last) >= 0 && last < 63) {
                with_unknown[1] = (int) last + 1;
                q.capabilities = (OciCapabilities) {
                        .present = true,
                        .bounding = with_unknown, .n_bounding = 2,
                        .effective = with_unknown, .n_effective = 2,
                        .permitted = with_unknown, .n_permitted = 2,
                };
                c.p = &q;
                r = run_case(&c, &st2, &err2);
                tap_ok(r == 0 && status_hex(st2, "CapBnd") == B(CAP_KILL) && status_hex(st2, "CapEff") == B(CAP_KILL),
                       "a capability beyond cap_last_cap is dropped with a warning (%s)", strna(err2));
        } else
                skip(1, "kernel knows 64 capabilities");

        int only_kill[] = { CAP_KILL }, nbs[] = { CAP_NET_BIND_SERVICE };
        OciProcess ib = base_process();
        _cleanup_free_ char *st4 = NULL, *err4 = NULL;
        ib.capabilities = (OciCapabilities) { .present = true, .bounding = only_kill, .n_bounding = 1,
                                              .permitted = nbs, .n_permitted = 1, .inheritable = nbs, .n_inheritable = 1 };
        c.p = &ib;
        r = run_case(&c, &st4, &err4);
        tap_ok(r < 0 && streq_ptr(err4, "process.capabilities.inheritable: CAP_NET_BIND_SERVICE not in the bounding set"),
               "inheritable outside the bounding set: %s", strna(err4));

        /* setgroups is denied in this user namespace: additionalGids cannot be honoured. */
        uint32_t gids[] = { 0 };
        OciProcess g = base_process();
        _cleanup_free_ char *st3 = NULL, *err3 = NULL;
        g.user.additional_gids = gids;
        g.user.n_additional_gids = 1;
        c.p = &g;
        r = run_case(&c, &st3, &err3);
        tap_ok(r < 0 && err3 && strneq(err3, "process.user.additionalGids:", 28),
               "additionalGids with setgroups denied: %s", strna(err3));
}

static char *n_mkdirat[] = { "mkdirat", NULL };
static char *n_setresuid[] = { "setresuid", NULL };

static void test_ordering(void) {
        OciSyscall sc = { .names = n_mkdirat, .action = OCI_SECCOMP_ERRNO, .has_errno_ret = true, .errno_ret = EXDEV };
        OciSeccomp s = { .present = true, .default_action = OCI_SECCOMP_ALLOW, .syscalls = &sc, .n_syscalls = 1 };
        _cleanup_free_ char *st = NULL, *err = NULL, *st2 = NULL, *err2 = NULL, *st3 = NULL, *err3 = NULL;
        char buf[64];

        /* The capability sets lack CAP_SYS_ADMIN: without NNP the filter can only be loaded first. */
        OciProcess p = base_process();
        p.no_new_privileges = false;
        Case c = { .userns = true, .p = &p, .s = &s, .probe_errno = EXDEV };
        int r = run_case(&c, &st, &err);
        if (r == -EOPNOTSUPP) {
                skip(6, "no unprivileged user namespaces");
                return;
        }
        tap_is_int(r, 0, "noNewPrivileges=false: filter loaded before CAP_SYS_ADMIN goes, then the user switch (%s)", strna(err));
        tap_ok(st && status_field(st, "NoNewPrivs", buf, sizeof buf) && streq(buf, "0"), "NoNewPrivs stays 0");
        tap_ok(st && status_hex(st, "CapEff") == EFF, "and the capabilities are applied after the filter");

        p.no_new_privileges = true;
        r = run_case(&c, &st2, &err2);
        tap_is_int(r, 0, "noNewPrivileges=true: user switch first, filter loaded unprivileged last (%s)", strna(err2));

        /* A filter that denies what the user switch needs: with the filter first, the error says why. */
        OciSyscall deny = { .names = n_setresuid, .action = OCI_SECCOMP_ERRNO };
        OciSeccomp sd = { .present = true, .default_action = OCI_SECCOMP_ALLOW, .syscalls = &deny, .n_syscalls = 1 };
        p.no_new_privileges = false;
        c.s = &sd;
        c.probe_errno = 0;
        r = run_case(&c, &st3, &err3);
        tap_ok(r < 0 && err3 && strstr(err3, "process.user.uid") && strstr(err3, "seccomp filter is already loaded"),
               "setresuid denied by a filter loaded first: %s", strna(err3));

        _cleanup_free_ char *st4 = NULL, *err4 = NULL;
        p.no_new_privileges = true;
        r = run_case(&c, &st4, &err4);
        tap_is_int(r, 0, "the same filter with noNewPrivileges: loaded after setresuid, no conflict (%s)", strna(err4));
}

static void test_root(void) {
        if (geteuid() != 0) {
                skip(15, "needs root");
                return;
        }

        uint32_t gids[] = { 10, 20 };
        OciProcess p = base_process();
        p.user.uid = 1000;
        p.user.gid = 1001;
        p.user.additional_gids = gids;
        p.user.n_additional_gids = 2;
        Case c = { .p = &p };
        _cleanup_free_ char *st = NULL, *err = NULL, *st2 = NULL, *err2 = NULL;
        char buf[128];

        int r = run_case(&c, &st, &err);
        tap_is_int(r, 0, "root: capabilities_apply_user() to uid 1000 (%s)", strna(err));
        check_sets(st, BND, EFF, PRM, INH, AMB, "uid 1000 before exec");
        tap_ok(status_field(st, "Uid", buf, sizeof buf) && streq(buf, "1000\t1000\t1000\t1000"), "Uid 1000 (real, effective, saved, fs)");
        tap_ok(status_field(st, "Gid", buf, sizeof buf) && streq(buf, "1001\t1001\t1001\t1001"), "Gid 1001");
        tap_ok(status_field(st, "Groups", buf, sizeof buf) && strneq(buf, "10 20", 5) && strspn(buf + 5, " ") == strlen(buf + 5),
               "Groups 10 20 (got \"%s\")", buf);

        /* After execve of a plain binary as uid 1000, only the ambient set survives into P and E. */
        c.exec_status = "/bin/cat";
        r = run_case(&c, &st2, &err2);
        tap_is_int(r, 0, "exec as uid 1000 (%s)", strna(err2));
        check_sets(st2, BND, AMB, AMB, INH, AMB, "uid 1000 after exec");
}

int main(void) {
        test_last_cap();
        test_masks();
        test_plan();
        test_userns();
        test_ordering();
        test_root();
        return tap_done();
}
