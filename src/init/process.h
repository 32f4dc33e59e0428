/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "oci-config.h"

/* These run in the container's init (or an exec'd process) in the container's namespaces, before execve. Each
 * fills *reterr with a message naming the step and the OCI field. */

/* Find process.args[0]: a path containing "/" is taken as is; else searched in PATH of process.env (runc's
 * default PATH when unset). Checks it is an executable regular file. Must run after pivot_root. */
int process_find_executable(const OciProcess *p, char **ret, char **reterr);
int process_apply_rlimits(const OciProcess *p, char **reterr);
int process_apply_oom_score_adj(const OciProcess *p, char **reterr);
int process_apply_scheduler(const OciProcess *p, char **reterr);
int process_apply_io_priority(const OciProcess *p, char **reterr);
/* execCPUAffinity.initial (before the final setup) or .final (right before execve). */
int process_apply_cpu_affinity(const char *cpus, const char *field, char **reterr);
int process_apply_personality(const OciLinux *l, char **reterr);
int process_apply_memory_policy(const OciLinux *l, char **reterr);
/* Close or mark close-on-exec every fd above 2 + preserve_fds. */
int process_close_fds(unsigned preserve_fds);
/* Parse a cpu list ("0-3,7") into a cpu_set_t sized buffer; for AllowedCPUs too. */
int cpu_list_parse(const char *s, void *set, size_t setsize);
