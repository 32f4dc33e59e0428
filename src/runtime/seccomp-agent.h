/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* linux.seccomp.listenerPath: the runtime hands the container's seccomp notify listener to the agent. */

#include <stdint.h>
#include <sys/types.h>

#include "oci-config.h"

/* How long oci_seccomp_send_to_agent() may take in total (connect + send). */
#define SECCOMP_AGENT_TIMEOUT_USEC (5 * 1000 * 1000ULL)

/* Connect to s->listener_path (unix stream socket), send the notify fd with SCM_RIGHTS plus
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
