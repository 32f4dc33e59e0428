/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* process.user, process.capabilities and process.noNewPrivileges: the final identity of a container
 * process, applied by the init (or an exec'd process) right before execve, and the ordering between that
 * and loading the seccomp filter. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "oci-config.h"
#include "seccomp-filter.h"

/* The five capability sets as bit masks (bit n = capability n). The kernel ABI has 64 bits. */
typedef struct CapabilityMasks {
        uint64_t bounding, effective, permitted, inheritable, ambient;
} CapabilityMasks;

/* Highest capability number the running kernel knows: /proc/sys/kernel/cap_last_cap, or probed with
 * PR_CAPBSET_READ when /proc is not there. */
int capability_last_cap(unsigned *ret);
/* Make every capability of the permitted set effective (after a uid change kept them, PR_SET_KEEPCAPS). */
int capabilities_raise_effective(void);

/* process.capabilities -> masks, keeping only capabilities <= last_cap; each dropped one is logged with
 * log_warning naming the set (as runc does). An absent capabilities object gives empty sets. */
void capabilities_to_masks(const OciCapabilities *c, unsigned last_cap, CapabilityMasks *ret);

/* "CAP_CHOWN CAP_KILL" for a mask (malloc'd; "" for 0). */
int capability_mask_to_string(uint64_t mask, char **ret);

/* The permitted and effective sets asked for are within what this process holds (its permitted set): else
 * -EPERM naming the missing capabilities. Checked when the init sets itself up, so that `create` fails
 * for it (as runc's and crun's do) rather than `start`, where the sets are applied. */
int capabilities_check_held(const OciProcess *p, char **reterr);

/* In the init, as root in the container's user namespace, before switching user (privileged region):
 * drop every capability not in bounding from the bounding set, set PR_SET_KEEPCAPS, switch to the user
 * (setgroups(additionalGids) unless setgroups is denied in the user namespace, setresgid, setresuid),
 * clear KEEPCAPS, set effective/permitted/inheritable (libcap), raise ambient capabilities (a failure to
 * raise one, e.g. because it is not also inheritable, is a warning as in runc/crun), set the umask
 * (process.user.umask, default 0022) and, last, PR_SET_NO_NEW_PRIVS when noNewPrivileges is set.
 * Capabilities the running kernel does not know are dropped with a warning. */
int capabilities_apply_user(const OciProcess *p, bool in_user_namespace, char **reterr);

/* The steps of process_finalize_security(), in order. */
typedef enum SecurityStep {
        SECURITY_STEP_NONE,
        SECURITY_STEP_APPLY_USER,   /* capabilities_apply_user() (includes no_new_privs) */
        SECURITY_STEP_LOAD_SECCOMP, /* oci_seccomp_load() */
} SecurityStep;

/* The ordering decision as data: with noNewPrivileges, seccomp(2) needs no privilege, so the filter is
 * loaded last, right before execve. Without it, loading needs CAP_SYS_ADMIN, so the filter goes first
 * and must then allow what capabilities_apply_user() calls. ret gets 2 steps (NONE-padded). */
void security_plan(bool no_new_privileges, bool have_seccomp, SecurityStep ret[2]);

/* Does the whole final identity + filter sequence right before execve: returns with everything applied;
 * the caller's next syscall must be execve (or sending *ret_notify_fd to the runtime, then execve).
 * ctx may be NULL (no linux.seccomp); s may be NULL then too. The notify fd is returned as by
 * oci_seccomp_load() (-1 without SCMP_ACT_NOTIFY). ctx stays the caller's: the process is about to exec. */
int process_finalize_security(const OciProcess *p, const OciSeccomp *s, const SeccompProgram *ctx,
                              bool in_user_namespace, int *ret_notify_fd, char **reterr);
/* The same, and when send_notify_fd is non-NULL it is called with the listener fd right after the filter is
 * loaded (the fd is closed afterwards and *ret_notify_fd is -1). Use this one when a profile may notify:
 * without noNewPrivileges the filter is loaded before the user switch, and a syscall of that switch that
 * is SCMP_ACT_NOTIFY would block forever while the agent has no fd yet. keep_groups: no setgroups(2), the
 * groups the process has stay (the annotation run.oci.keep_original_groups=1). */
int process_finalize_security_full(const OciProcess *p, const OciSeccomp *s, const SeccompProgram *ctx,
                                   bool in_user_namespace, bool keep_groups,
                                   int (*send_notify_fd)(int fd, void *userdata), void *userdata,
                                   int *ret_notify_fd, char **reterr);
