/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error-util.h"
#include "log.h"
#include "macro.h"
#include "oci-features.h"
#include "seccomp-compile.h"
#include "seccomp-filter.h"

/* Arguments a syscall has at most (seccomp_data.args). */
#define SECCOMP_ARGS_MAX 6

static const enum scmp_compare operator_values[_OCI_SECCOMP_OP_MAX] = {
        [OCI_SECCOMP_OP_NE] = SCMP_CMP_NE,
        [OCI_SECCOMP_OP_LT] = SCMP_CMP_LT,
        [OCI_SECCOMP_OP_LE] = SCMP_CMP_LE,
        [OCI_SECCOMP_OP_EQ] = SCMP_CMP_EQ,
        [OCI_SECCOMP_OP_GE] = SCMP_CMP_GE,
        [OCI_SECCOMP_OP_GT] = SCMP_CMP_GT,
        [OCI_SECCOMP_OP_MASKED_EQ] = SCMP_CMP_MASKED_EQ,
};

int oci_seccomp_arch_from_name(const char *name, uint32_t *ret) {
        const OciSeccompArch *a;
        uint32_t token;

        assert(name);
        a = oci_seccomp_arch_find(name);
        if (!a)
                return -EINVAL;
        token = seccomp_arch_resolve_name(a->libseccomp);
        if (token == 0)
                return -EOPNOTSUPP;
        if (ret)
                *ret = token;
        return 0;
}

/* OCI action (+ errnoRet) -> libseccomp action value. path names the object for messages, e.g.
 * "linux.seccomp.syscalls[2]" or "linux.seccomp" (whose fields are defaultAction/defaultErrnoRet). */
static int action_to_scmp(OciSeccompAction a, bool has_errno_ret, uint32_t errno_ret, const char *path,
                          const char *errno_field, uint32_t *ret, char **reterr) {
        if (has_errno_ret && a != OCI_SECCOMP_ERRNO && a != OCI_SECCOMP_TRACE)
                return errorf(
                        reterr, -EINVAL,
                        "%s.%s: not allowed with action %s (only SCMP_ACT_ERRNO and SCMP_ACT_TRACE take an errno)",
                        path, errno_field, oci_seccomp_action_to_string(a) ?: "?");
        /* libseccomp keeps 16 bits of it; the kernel returns at most MAX_ERRNO (4095). */
        if (has_errno_ret && errno_ret > 4095)
                return errorf(reterr, -EINVAL, "%s.%s: %" PRIu32 " is not an errno value (0..4095)", path,
                              errno_field, errno_ret);

        uint32_t e = has_errno_ret ? errno_ret : EPERM;
        switch (a) {
        case OCI_SECCOMP_KILL:
        case OCI_SECCOMP_KILL_THREAD:
                *ret = SCMP_ACT_KILL_THREAD;
                return 0;
        case OCI_SECCOMP_KILL_PROCESS:
                *ret = SCMP_ACT_KILL_PROCESS;
                return 0;
        case OCI_SECCOMP_TRAP:
                *ret = SCMP_ACT_TRAP;
                return 0;
        case OCI_SECCOMP_ERRNO:
                *ret = SCMP_ACT_ERRNO(e);
                return 0;
        case OCI_SECCOMP_TRACE:
                *ret = SCMP_ACT_TRACE(e);
                return 0;
        case OCI_SECCOMP_ALLOW:
                *ret = SCMP_ACT_ALLOW;
                return 0;
        case OCI_SECCOMP_LOG:
                *ret = SCMP_ACT_LOG;
                return 0;
        case OCI_SECCOMP_NOTIFY:
                *ret = SCMP_ACT_NOTIFY;
                return 0;
        default:
                return errorf(reterr, -EINVAL, "%s: unknown seccomp action %d", path, (int) a);
        }
}

static int add_syscall_rules(scmp_filter_ctx ctx, const OciSyscall *sc, size_t i, uint32_t default_action,
                             char **reterr) {
        char path[64];
        uint32_t action;
        int r;

        snprintf(path, sizeof path, "linux.seccomp.syscalls[%zu]", i);
        r = action_to_scmp(sc->action, sc->has_errno_ret, sc->errno_ret, path, "errnoRet", &action, reterr);
        if (r < 0)
                return r;

        if (sc->n_args > SECCOMP_ARGS_MAX)
                return errorf(reterr, -EINVAL, "%s.args: at most %d conditions are supported, got %zu", path,
                              SECCOMP_ARGS_MAX, sc->n_args);

        struct scmp_arg_cmp cmps[SECCOMP_ARGS_MAX];
        bool repeated_index = false;
        for (size_t j = 0; j < sc->n_args; j++) {
                const OciSeccompArg *a = &sc->args[j];

                if (a->index >= SECCOMP_ARGS_MAX)
                        return errorf(reterr, -EINVAL,
                                      "%s.args[%zu].index: %" PRIu32 " is out of range (0..%d)", path, j,
                                      a->index, SECCOMP_ARGS_MAX - 1);
                if ((unsigned) a->op >= _OCI_SECCOMP_OP_MAX)
                        return errorf(reterr, -EINVAL, "%s.args[%zu].op: unknown operator %d", path, j,
                                      (int) a->op);

                /* SCMP_CMP_MASKED_EQ: value is the mask, valueTwo the datum compared after masking. */
                cmps[j] = (struct scmp_arg_cmp){
                        .arg = a->index,
                        .op = operator_values[a->op],
                        .datum_a = a->value,
                        .datum_b = a->value_two,
                };
                for (size_t k = 0; k < j; k++)
                        if (sc->args[k].index == a->index)
                                repeated_index = true;
        }

        if (!sc->names || !sc->names[0])
                return 0; /* matches nothing (the parser warned about it) */

        for (size_t j = 0; sc->names[j]; j++) {
                const char *name = sc->names[j];

                int nr = seccomp_syscall_resolve_name(name);
                if (nr == __NR_SCMP_ERROR) {
                        log_debug(
                                "%s.names[%zu]: syscall \"%s\" is unknown to libseccomp %u.%u.%u, skipping.",
                                path, j, name, seccomp_version()->major, seccomp_version()->minor,
                                seccomp_version()->micro);
                        continue;
                }
                if (action == SCMP_ACT_NOTIFY && (streq(name, "sendmsg") || streq(name, "write")))
                        /* The init passes the listener fd with these after loading the filter: notifying
                         * them would make it wait for an agent that cannot have the fd yet. */
                        return errorf(
                                reterr, -EINVAL,
                                "%s.names[%zu]: SCMP_ACT_NOTIFY cannot be used for the %s syscall (the runtime needs it to pass the notify fd)",
                                path, j, name);
                if (action == default_action) {
                        /* libseccomp refuses a rule that repeats the default action; it would be a no-op. */
                        log_debug("%s.names[%zu]: \"%s\" has the default action, no rule needed.", path, j,
                                  name);
                        continue;
                }

                if (sc->n_args == 0)
                        r = seccomp_rule_add_array(ctx, action, nr, 0, NULL);
                else if (!repeated_index)
                        /* Conditions on different arguments: all must match (one rule). */
                        r = seccomp_rule_add_array(ctx, action, nr, (unsigned) sc->n_args, cmps);
                else
                        /* The same argument compared more than once: one rule per condition, so that any of
                         * them matches (what runc does; one rule cannot test an argument twice). */
                        for (size_t k = 0; k < sc->n_args; k++) {
                                r = seccomp_rule_add_array(ctx, action, nr, 1, &cmps[k]);
                                if (r < 0)
                                        break;
                        }
                if (r < 0)
                        return errorf(reterr, r, "%s.names[%zu]: adding rule for \"%s\": %s", path, j, name,
                                      strerror(-r));
        }
        return 0;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(scmp_filter_ctx, seccomp_release);

static int build_filter(const OciSeccomp *s, scmp_filter_ctx *ret, char **reterr) {
        _cleanup_(seccomp_releasep) scmp_filter_ctx ctx = NULL;
        uint32_t default_action;
        int r;

        assert(s);
        assert(ret);

        r = action_to_scmp(s->default_action, s->has_default_errno_ret, s->default_errno_ret,
                           "linux.seccomp", "defaultErrnoRet", &default_action, reterr);
        if (r < 0)
                return r;
        if (s->default_action == OCI_SECCOMP_NOTIFY)
                /* The init itself would block on its next syscall, waiting for an agent it cannot reach. */
                return errorf(reterr, -EINVAL,
                              "linux.seccomp.defaultAction: SCMP_ACT_NOTIFY cannot be the default action");

        bool notify = oci_seccomp_uses_notify(s);
        if (notify && isempty(s->listener_path))
                return errorf(reterr, -EINVAL,
                              "linux.seccomp.listenerPath: required when an action is SCMP_ACT_NOTIFY");
        if (notify && !oci_seccomp_kernel_accepts_flags(SECCOMP_FILTER_FLAG_NEW_LISTENER))
                return errorf(reterr, -EOPNOTSUPP,
                              "linux.seccomp: SCMP_ACT_NOTIFY is not supported by the running kernel");

        unsigned long flags = 0;
        for (size_t i = 0; s->flags && s->flags[i]; i++) {
                unsigned long f;

                if (oci_seccomp_flag_from_name(s->flags[i], &f) < 0)
                        return errorf(reterr, -EINVAL, "linux.seccomp.flags[%zu]: unknown flag \"%s\"", i,
                                      s->flags[i]);
                if (!oci_seccomp_flag_supported(s->flags[i]))
                        return errorf(reterr, -EOPNOTSUPP,
                                      "linux.seccomp.flags[%zu]: %s is not supported by the running kernel",
                                      i, s->flags[i]);
                flags |= f;
        }
        if ((flags & SECCOMP_FILTER_FLAG_TSYNC) && notify &&
            !oci_seccomp_kernel_accepts_flags(SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_TSYNC_ESRCH |
                                              SECCOMP_FILTER_FLAG_NEW_LISTENER))
                return errorf(
                        reterr, -EOPNOTSUPP,
                        "linux.seccomp.flags: SECCOMP_FILTER_FLAG_TSYNC together with SCMP_ACT_NOTIFY is not supported by the running kernel");

        ctx = seccomp_init(default_action);
        if (!ctx)
                return errorf(reterr, -ENOMEM, "linux.seccomp: creating the seccomp filter failed");

        /* libseccomp would set no_new_privs on load by default; noNewPrivileges decides that. */
        r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
        if (r < 0)
                return errorf(reterr, r, "linux.seccomp: disabling libseccomp's no_new_privs: %s",
                              strerror(-r));

        for (size_t i = 0; s->architectures && s->architectures[i]; i++) {
                uint32_t arch;

                r = oci_seccomp_arch_from_name(s->architectures[i], &arch);
                if (r == -EOPNOTSUPP)
                        return errorf(
                                reterr, r,
                                "linux.seccomp.architectures[%zu]: %s is not supported by libseccomp %u.%u.%u",
                                i, s->architectures[i], seccomp_version()->major, seccomp_version()->minor,
                                seccomp_version()->micro);
                if (r < 0)
                        return errorf(reterr, r,
                                      "linux.seccomp.architectures[%zu]: unknown architecture \"%s\"", i,
                                      s->architectures[i]);
                r = seccomp_arch_add(ctx, arch);
                if (r < 0 && r != -EEXIST) /* the native arch is always there */
                        return errorf(reterr, r, "linux.seccomp.architectures[%zu]: adding %s: %s", i,
                                      s->architectures[i], strerror(-r));
        }

        for (size_t i = 0; i < s->n_syscalls; i++) {
                r = add_syscall_rules(ctx, &s->syscalls[i], i, default_action, reterr);
                if (r < 0)
                        return r;
        }

        *ret = TAKE_PTR(ctx);
        return 0;
}

/* A syscall newer than every one the profile names fails with ENOSYS, not with the default action: a libc
 * that meets EPERM from a syscall it tries first (clone3, faccessat2, fchmodat2, ...) does not fall back to
 * the older one, with ENOSYS it does, as on a kernel that lacks it (runc does the same). Only where the default
 * denies: allowed is allowed. The stub runs before libseccomp's program: for each architecture of the filter,
 * a syscall number above the highest the profile resolves to there returns ENOSYS; anything else goes on.
 * On x86_64 the x32 numbers (bit 30 set) are left to the program. Fills *ret (malloc'd) and *ret_n; none
 * (*ret_n 0) where the default allows or no architecture has a named syscall. */
static int enosys_stub(const OciSeccomp *s, struct sock_filter **ret, size_t *ret_n) {
        uint32_t archs[16];
        size_t n_archs = 0;

        *ret = NULL;
        *ret_n = 0;
        if (s->default_action == OCI_SECCOMP_ALLOW || s->default_action == OCI_SECCOMP_LOG)
                return 0;
        archs[n_archs++] = seccomp_arch_native();
        for (size_t i = 0; s->architectures && s->architectures[i] && n_archs < ELEMENTSOF(archs); i++) {
                uint32_t a;
                bool seen = false;
                if (oci_seccomp_arch_from_name(s->architectures[i], &a) < 0)
                        continue;
                for (size_t j = 0; j < n_archs; j++)
                        seen = seen || archs[j] == a;
                if (!seen)
                        archs[n_archs++] = a;
        }

        size_t n_blocks = 0;
        uint32_t block_arch[16], block_max[16];
        for (size_t j = 0; j < n_archs; j++) {
                int max = -1;
                for (size_t i = 0; i < s->n_syscalls; i++)
                        for (char **name = s->syscalls[i].names; name && *name; name++) {
                                int nr = seccomp_syscall_resolve_name_arch(archs[j], *name);
                                if (nr > max)
                                        max = nr;
                        }
                if (max < 0)
                        continue;
                block_arch[n_blocks] = archs[j];
                block_max[n_blocks++] = (uint32_t) max;
        }
        if (n_blocks == 0)
                return 0;

        /* ld arch; per arch: jeq arch | ld nr | [x86_64: jge 0x40000000 -> program] | jgt max -> enosys;
         * ja program; ret ERRNO(ENOSYS); then the program. */
        size_t n = 1, cap = 1 + n_blocks * 4 + 2;
        _cleanup_free_ struct sock_filter *f = calloc(cap, sizeof *f);
        if (!f)
                return -ENOMEM;
        f[0] = (struct sock_filter) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
        size_t block_len[16];
        for (size_t b = 0; b < n_blocks; b++)
                block_len[b] = block_arch[b] == SCMP_ARCH_X86_64 ? 3 : 2; /* after the jeq */
        size_t total = 1;
        for (size_t b = 0; b < n_blocks; b++)
                total += 1 + block_len[b];
        size_t enosys = total + 1, program = total + 2;
        for (size_t b = 0; b < n_blocks; b++) {
                size_t start = n;
                f[n] = (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, block_arch[b], 0,
                                                     (uint8_t) block_len[b]);
                n++;
                f[n++] = (struct sock_filter) BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                                       offsetof(struct seccomp_data, nr));
                if (block_arch[b] == SCMP_ARCH_X86_64) {
                        f[n] = (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U,
                                                             (uint8_t) (program - (n + 1)), 0);
                        n++;
                }
                f[n] = (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, block_max[b],
                                                     (uint8_t) (enosys - (n + 1)),
                                                     (uint8_t) (program - (n + 1)));
                n++;
                assert(n - start == 1 + block_len[b]);
        }
        f[n++] = (struct sock_filter) BPF_STMT(BPF_JMP | BPF_JA, 1);
        f[n++] = (struct sock_filter) BPF_STMT(BPF_RET | BPF_K,
                                               SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA));
        assert(n == program && n <= cap);
        *ret = TAKE_PTR(f);
        *ret_n = n;
        return 0;
}

int oci_seccomp_prepare(const OciSeccomp *s, SeccompProgram **ret, char **reterr) {
        _cleanup_(seccomp_releasep) scmp_filter_ctx ctx = NULL;
        _cleanup_(seccomp_program_freep) SeccompProgram *prog = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int r;

        assert(s);
        assert(ret);

        r = build_filter(s, &ctx, reterr);
        if (r < 0)
                return r;

        fd = memfd_create("sdrun-seccomp-bpf", MFD_CLOEXEC);
        if (fd < 0)
                return errorf(reterr, -errno, "linux.seccomp: creating a memfd for the BPF program: %m");
        r = seccomp_export_bpf(ctx, fd);
        if (r < 0)
                return errorf(reterr, r, "linux.seccomp: generating the BPF program: %s", strerror(-r));
        if (fstat(fd, &st) < 0)
                return errorf(reterr, -errno, "linux.seccomp: stat of the BPF program: %m");
        if (st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) != 0)
                return errorf(reterr, -EIO, "linux.seccomp: BPF program has an invalid size %jd",
                              (intmax_t) st.st_size);
        /* BPF_MAXINSNS (4096) instructions is what the kernel accepts at most. */
        if ((size_t) st.st_size > BPF_MAXINSNS * sizeof(struct sock_filter))
                return errorf(
                        reterr, -E2BIG,
                        "linux.seccomp: the filter compiles to %zu BPF instructions, the kernel accepts at most %d",
                        (size_t) st.st_size / sizeof(struct sock_filter), BPF_MAXINSNS);

        prog = calloc(1, sizeof *prog);
        if (!prog)
                return -ENOMEM;
        prog->insns = malloc((size_t) st.st_size);
        if (!prog->insns)
                return -ENOMEM;
        ssize_t n = pread(fd, prog->insns, (size_t) st.st_size, 0);
        if (n < 0)
                return errorf(reterr, -errno, "linux.seccomp: reading the BPF program: %m");
        if (n != st.st_size)
                return errorf(reterr, -EIO, "linux.seccomp: short read of the BPF program");
        prog->len = (size_t) st.st_size / sizeof(struct sock_filter);

        _cleanup_free_ struct sock_filter *stub = NULL;
        size_t n_stub = 0;
        r = enosys_stub(s, &stub, &n_stub);
        if (r < 0)
                return r;
        if (n_stub > 0) {
                if (n_stub + prog->len > BPF_MAXINSNS)
                        return errorf(
                                reterr, -E2BIG,
                                "linux.seccomp: the filter compiles to %zu BPF instructions, the kernel accepts at most %d",
                                n_stub + prog->len, BPF_MAXINSNS);
                struct sock_filter *all = malloc((n_stub + prog->len) * sizeof *all);
                if (!all)
                        return -ENOMEM;
                memcpy(all, stub, n_stub * sizeof *all);
                memcpy(all + n_stub, prog->insns, prog->len * sizeof *all);
                free(prog->insns);
                prog->insns = all;
                prog->len += n_stub;
        }
        *ret = TAKE_PTR(prog);
        return 0;
}
