/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* linux.seccomp in the container: load the program the runtime compiled (src/runtime/seccomp-compile.h) right
 * before execve; the notify listener goes back to the runtime, which hands it to the seccomp agent
 * (src/runtime/seccomp-agent.h). And the flag names and kernel probes both sides use.
 *
 * Our functions are prefixed oci_seccomp_: libseccomp owns seccomp_* (seccomp_load() is one of its own). */

#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/filter.h>
#include <seccomp.h>

#include "oci-config.h"

#ifndef SECCOMP_FILTER_FLAG_TSYNC_ESRCH
#define SECCOMP_FILTER_FLAG_TSYNC_ESRCH (1UL << 4)
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

/* linux.seccomp compiled to the BPF program seccomp(2) installs (libseccomp's output). Built by the runtime
 * before anything is cloned (src/runtime/seccomp-cache.c keeps it for the next container with the same
 * profile) and loaded in the container process right before execve. */
typedef struct SeccompProgram {
        struct sock_filter *insns;
        size_t len; /* instructions */
} SeccompProgram;

void seccomp_program_free(SeccompProgram *p);
static inline void seccomp_program_freep(SeccompProgram **p) {
        seccomp_program_free(*p);
}

/* Load the program into the calling thread (all threads with SECCOMP_FILTER_FLAG_TSYNC), with seccomp(2)
 * directly, so that every flag of the spec (including SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, which
 * libseccomp 2.5 cannot express) is honoured and libseccomp never sets no_new_privs behind our back.
 * *ret_notify_fd gets the listener fd (O_CLOEXEC) when any rule is SCMP_ACT_NOTIFY, else -1. On success
 * this makes no syscall after seccomp(2) and neither logs nor frees anything: the caller's next syscalls
 * run under the new filter. prog stays owned by the caller. Needs no_new_privs or CAP_SYS_ADMIN in the
 * caller's user namespace. */
int oci_seccomp_load(const SeccompProgram *prog, const OciSeccomp *s, int *ret_notify_fd, char **reterr);

/* True when an action of s (default or a rule) is SCMP_ACT_NOTIFY. */
bool oci_seccomp_uses_notify(const OciSeccomp *s);

/* Whether the running kernel accepts the flag (probed with seccomp(2), as runc does); false for names
 * that are not in seccomp_known_flags() (oci-features.h). The name tables themselves are src/oci's
 * (oci_seccomp_action_names, oci_seccomp_op_names, oci_seccomp_archs in oci-config.h). */
bool oci_seccomp_flag_supported(const char *name);

/* Name -> value look-ups; -EINVAL for unknown names. */
int oci_seccomp_flag_from_name(const char *name, unsigned long *ret);
/* With a NULL program the kernel validates the flags first and then fails to copy the program: whether it
 * accepts them. Needs no privilege and installs nothing. */
bool oci_seccomp_kernel_accepts_flags(unsigned long flags);
