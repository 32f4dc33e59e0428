/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* linux.seccomp compiled on the host, before anything is cloned (seccomp-cache.h keeps the result): the
 * container side only loads the program (src/init/seccomp-filter.h). */

#include <stdint.h>

#include "oci-config.h"
#include "seccomp-filter.h"

/* Compile linux.seccomp to its BPF program (not loaded). Unknown syscall names on this libseccomp are
 * skipped with a debug log (as runc does); unknown arch names, errnoRet on an action that has no errno,
 * flags the kernel does not support, SCMP_ACT_NOTIFY as default action or without listenerPath, a program
 * longer than the kernel takes -> error naming the JSON path ("linux.seccomp.syscalls[3].names[0]: ...").
 * Needs no privilege. On success *ret owns the program (seccomp_program_free()). */
int oci_seccomp_prepare(const OciSeccomp *s, SeccompProgram **ret, char **reterr);

/* libseccomp's arch token (SCMP_ARCH_*); -EINVAL: not a spec name, -EOPNOTSUPP: this libseccomp lacks it. */
int oci_seccomp_arch_from_name(const char *name, uint32_t *ret);
