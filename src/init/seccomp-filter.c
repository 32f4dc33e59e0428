/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "error-util.h"
#include "log.h"
#include "macro.h"
#include "oci-features.h"
#include "seccomp-filter.h"

int oci_seccomp_flag_from_name(const char *name, unsigned long *ret) {
        const SeccompFlagInfo *flags;
        size_t n = seccomp_known_flags(&flags);

        assert(name);
        FOREACH_ARRAY(f, flags, n)
                if (streq(f->name, name)) {
                        if (ret)
                                *ret = f->kernel_flag;
                        return 0;
                }
        return -EINVAL;
}

static long sys_seccomp(unsigned op, unsigned long flags, void *args) {
        return syscall(SYS_seccomp, op, flags, args);
}

bool oci_seccomp_kernel_accepts_flags(unsigned long flags) {
        return sys_seccomp(SECCOMP_SET_MODE_FILTER, flags, NULL) < 0 && errno == EFAULT;
}

bool oci_seccomp_flag_supported(const char *name) {
        unsigned long f;

        if (oci_seccomp_flag_from_name(name, &f) < 0)
                return false;
        /* The kernel refuses WAIT_KILLABLE_RECV without a listener. */
        if (f == SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
                f |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
        return oci_seccomp_kernel_accepts_flags(f);
}

bool oci_seccomp_uses_notify(const OciSeccomp *s) {
        assert(s);
        if (s->default_action == OCI_SECCOMP_NOTIFY)
                return true;
        FOREACH_ARRAY(sc, s->syscalls, s->n_syscalls)
                if (sc->action == OCI_SECCOMP_NOTIFY)
                        return true;
        return false;
}

/* Filter flags for seccomp(2) from linux.seccomp.flags (validated by build_filter()). */
static unsigned long filter_flags(const OciSeccomp *s, bool notify) {
        unsigned long flags = 0;

        for (size_t i = 0; s->flags && s->flags[i]; i++) {
                unsigned long f;
                if (oci_seccomp_flag_from_name(s->flags[i], &f) >= 0)
                        flags |= f;
        }
        /* Without linux.seccomp.flags at all (not an empty list), SPEC_ALLOW where the kernel has it, as runc
         * and Docker do: a seccomp filter then does not also turn on the speculative store bypass mitigation,
         * which the container did not ask for and which costs it performance. */
        if (!s->flags && oci_seccomp_kernel_accepts_flags(SECCOMP_FILTER_FLAG_SPEC_ALLOW))
                flags |= SECCOMP_FILTER_FLAG_SPEC_ALLOW;
        if (notify) {
                flags |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
                /* With TSYNC, a failure to sync must be reported as ESRCH: the return value is the fd. */
                if (flags & SECCOMP_FILTER_FLAG_TSYNC)
                        flags |= SECCOMP_FILTER_FLAG_TSYNC_ESRCH;
        } else
                /* Only meaningful for a listener (and refused by the kernel without one), as libseccomp 2.6
                 * applies it. */
                flags &= ~SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
        return flags;
}

void seccomp_program_free(SeccompProgram *p) {
        if (!p)
                return;
        free(p->insns);
        free(p);
}

int oci_seccomp_load(const SeccompProgram *prog, const OciSeccomp *s, int *ret_notify_fd, char **reterr) {
        /* Runs in the container process, last step before execve: after the seccomp(2) call below, nothing
         * else may run here. The kernel copies the program. */
        int r;

        assert(prog);
        assert(s);
        assert(ret_notify_fd);

        bool notify = oci_seccomp_uses_notify(s);
        unsigned long flags = filter_flags(s, notify);
        log_debug("seccomp filter flags: %lu", flags);
        struct sock_fprog fprog = {
                .len = (unsigned short) prog->len,
                .filter = prog->insns,
        };
        long fd = sys_seccomp(SECCOMP_SET_MODE_FILTER, flags, &fprog);
        if (fd < 0) {
                r = -errno;
                if (r == -EACCES)
                        return errorf(
                                reterr, r,
                                "linux.seccomp: loading the filter: %s (needs noNewPrivileges or CAP_SYS_ADMIN)",
                                strerror(-r));
                if (r == -ESRCH)
                        return errorf(
                                reterr, r,
                                "linux.seccomp: loading the filter: another thread could not be synchronized (SECCOMP_FILTER_FLAG_TSYNC)");
                return errorf(reterr, r, "linux.seccomp: loading the filter: %s", strerror(-r));
        }

        *ret_notify_fd = notify ? (int) fd : -1;
        return 0;
}
