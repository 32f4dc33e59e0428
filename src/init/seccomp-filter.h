/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* linux.seccomp: build a libseccomp filter from the OCI model, load it right before execve, and hand the
 * notify listener to a seccomp agent.
 *
 * Our functions are prefixed oci_seccomp_: libseccomp owns seccomp_* (seccomp_load() is one of its own). */

#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/filter.h>
#include <seccomp.h>

#include "oci-config.h"

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

/* How long oci_seccomp_send_to_agent() may take in total (connect + send). */
#define SECCOMP_AGENT_TIMEOUT_USEC (5 * 1000 * 1000ULL)

/* Compile linux.seccomp to its BPF program (not loaded). Unknown syscall names on this libseccomp are
 * skipped with a debug log (as runc does); unknown arch names, errnoRet on an action that has no errno,
 * flags the kernel does not support, SCMP_ACT_NOTIFY as default action or without listenerPath, a program
 * longer than the kernel takes -> error naming the JSON path ("linux.seccomp.syscalls[3].names[0]: ...").
 * Needs no privilege. On success *ret owns the program (seccomp_program_free()). */
int oci_seccomp_prepare(const OciSeccomp *s, SeccompProgram **ret, char **reterr);

/* Load the program into the calling thread (all threads with SECCOMP_FILTER_FLAG_TSYNC), with seccomp(2)
 * directly, so that every flag of the spec (including SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, which
 * libseccomp 2.5 cannot express) is honoured and libseccomp never sets no_new_privs behind our back.
 * *ret_notify_fd gets the listener fd (O_CLOEXEC) when any rule is SCMP_ACT_NOTIFY, else -1. On success
 * this makes no syscall after seccomp(2) and neither logs nor frees anything: the caller's next syscalls
 * run under the new filter. prog stays owned by the caller. Needs no_new_privs or CAP_SYS_ADMIN in the
 * caller's user namespace. */
int oci_seccomp_load(const SeccompProgram *prog, const OciSeccomp *s, int *ret_notify_fd, char **reterr);

/* Runtime side: connect to s->listener_path (unix stream socket), send the notify fd with SCM_RIGHTS plus
 * the "container process state" JSON of config-linux.md (ociVersion, fds ["seccompFd"], pid, metadata =
 * listenerMetadata, state = the container state object) built from state_json (the OCI state document)
 * and pid, then close the connection. Bounded by SECCOMP_AGENT_TIMEOUT_USEC. notify_fd is not closed. */
int oci_seccomp_send_to_agent(const OciSeccomp *s, int notify_fd, pid_t pid, const char *state_json,
                              char **reterr);
/* The same with an explicit timeout (tests). */
int oci_seccomp_send_to_agent_timeout(const OciSeccomp *s, int notify_fd, pid_t pid, const char *state_json,
                                      uint64_t timeout_usec, char **reterr);
/* The JSON document oci_seccomp_send_to_agent() sends (malloc'd, unformatted). */
int oci_seccomp_container_process_state(const OciSeccomp *s, pid_t pid, const char *state_json, char **ret);

/* True when an action of s (default or a rule) is SCMP_ACT_NOTIFY. */
bool oci_seccomp_uses_notify(const OciSeccomp *s);

/* Whether the running kernel accepts the flag (probed with seccomp(2), as runc does); false for names
 * that are not in seccomp_known_flags() (oci-features.h). The name tables themselves are src/oci's
 * (oci_seccomp_action_names, oci_seccomp_op_names, oci_seccomp_archs in oci-config.h). */
bool oci_seccomp_flag_supported(const char *name);

/* Name -> value look-ups; -EINVAL for unknown names. */
int oci_seccomp_flag_from_name(const char *name, unsigned long *ret);
/* libseccomp's arch token (SCMP_ARCH_*); -EINVAL: not a spec name, -EOPNOTSUPP: this libseccomp lacks it. */
int oci_seccomp_arch_from_name(const char *name, uint32_t *ret);
