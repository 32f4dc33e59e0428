/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Device nodes and the standard /dev links inside the container's rootfs (runtime-spec config-linux.md
 * "Default Devices", runtime-linux.md "Dev symbolic links"). Runs in the container init, before
 * pivot_root, with root_fd an O_PATH fd of the rootfs. */

#include <stdbool.h>
#include <sys/types.h>

#include "oci-config.h"

typedef struct DefaultDevice {
        const char *path;
        unsigned major, minor;
} DefaultDevice;

/* /dev/null, zero, full, random, urandom, tty: character devices, mode 0666, owned by 0:0. */
extern const DefaultDevice default_devices[];
extern const size_t n_default_devices;

/* Create the default devices (unless linux.devices has an entry for the same path) and every
 * linux.devices entry. bind_from_host: bind-mount the host's node of the same path onto an empty file
 * instead of mknod (needed in a user namespace). Errors name the device: `linux.devices[2] "/dev/foo":
 * mknod: Operation not permitted`. */
int devices_create(int root_fd, const OciConfig *config, bool bind_from_host, char **reterr);

/* /dev/fd, /dev/stdin, /dev/stdout, /dev/stderr (and /dev/core when the host has /proc/kcore), and
 * /dev/ptmx -> pts/ptmx. Existing links are kept; an existing /dev/ptmx is replaced. */
int devices_create_links(int root_fd, char **reterr);

/* An empty regular file at /dev/console, the mount point for the terminal (rootfs_setup_console). */
int devices_create_console_placeholder(int root_fd, char **reterr);
