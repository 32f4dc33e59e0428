/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* systemd credentials for the container: the files of the $CREDENTIALS_DIRECTORY the runtime was started
 * with (LoadCredential=, SetCredential=, LoadCredentialEncrypted= of the unit that runs sdrun), read into
 * memory by the runtime (src/runtime/credentials.c) and put by the init on a fresh read-only ramfs in the
 * container's own mount namespace: never on disk, never visible to another container, gone with it. */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "oci-config.h"

typedef struct Credential {
        char *name;
        char *data;
        size_t size;
} Credential;

typedef struct Credentials {
        bool present; /* the runtime had a CREDENTIALS_DIRECTORY (possibly empty) */
        Credential *items;
        size_t n;
} Credentials;

/* Wipe and free. */
void credentials_done(Credentials *c);

/* Where they go in the container: "/run/credentials/@system" when process.args[0] is systemd (its name, or
 * an absolute path that resolves in the rootfs to a file named systemd, such as /sbin/init), else
 * "/run/credentials". root_fd: the rootfs. */
const char *credentials_target(const OciConfig *config, int root_fd);

/* In the init, in the container's mount namespace, before pivot_root: a ramfs (tmpfs where ramfs cannot be
 * mounted) filled with the credentials (mode 0400, the directory 0500, owned by process.user), made
 * read-only, nosuid, nodev, noexec, then attached at credentials_target() inside the rootfs. *ret_target:
 * that path (static). Fills *reterr ("CREDENTIALS_DIRECTORY: ..."). */
int credentials_install(const Credentials *c, const OciConfig *config, const char *rootfs,
                        const char **ret_target, char **reterr);
