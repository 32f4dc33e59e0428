/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* linux.netDevices (runtime-spec 1.3): host network devices moved into the container's network namespace
 * over rtnetlink, by the runtime, before the init goes on (its sysctls may name them). Each keeps its
 * permanent addresses of global scope (the kernel drops addresses when a device changes namespace: they are
 * read before and added again after), takes its new name (a "%d" template lets the kernel pick one), and is
 * set up. Nothing is moved back: a virtual device goes with the namespace, a physical one returns to the
 * host's, as the runtime-spec says. */

#include "oci-config.h"

/* Before anything exists: every device is on the host, the container has a network namespace of its own,
 * and we may move devices (not rootless). Errors name linux.netDevices["NAME"]. */
int netdev_check(const OciConfig *c, bool own_netns, bool rootless, char **reterr);

/* Move them into the network namespace of netns_fd. */
int netdev_move_all(const OciConfig *c, int netns_fd, char **reterr);
