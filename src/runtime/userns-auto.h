/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The automatic user namespace (systemd-nspawn's --private-users=pick, Podman's --userns=auto): asked for by
 * the annotation USERNS_ANNOTATION "auto", else by the environment variable USERNS_ENV=auto (what
 * sdrun@.service's drop-ins set), the container gets a new user namespace mapping its ids 0..65535 onto a
 * range of the host's that sdrun picks: USERNS_AUTO_SIZE ids at a multiple of USERNS_AUTO_SIZE between
 * USERNS_AUTO_FIRST and USERNS_AUTO_LAST, the first candidate derived from the container's id (the same
 * range again after a restart, while it is free), then the next ones. A candidate is free when no range of
 * /etc/subuid or /etc/subgid, no other container of the state root (sdrun.usernsBase/usernsSize of its
 * state), no process of the host (its effective uid or gid) and no user or group that
 * NSS knows at its first or last id overlaps it. The rootfs is id-mapped through the same mapping
 * (BootstrapParams.idmap_rootfs): nothing on disk is chowned. */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "pipeline.h"

#define USERNS_ANNOTATION "io.github.sdrun.userns"
#define USERNS_ENV "SDRUN_USERNS"
#define USERNS_AUTO_SIZE 0x10000U
#define USERNS_AUTO_FIRST 0x80000U
#define USERNS_AUTO_LAST 0x6fff0000U
/* The lock file in the state root held from the pick until the container's state records the range. */
#define USERNS_LOCK_FILE ".userns-auto.lock"

typedef struct UsernsAuto {
        bool on;
        uint32_t base;
        int lock_fd; /* USERNS_LOCK_FILE, held until the state records base: close it then */
} UsernsAuto;
#define USERNS_AUTO_NULL ((UsernsAuto){ .lock_fd = -EBADF })
void userns_auto_done(UsernsAuto *u);

/* Whether config.json or the environment asks for it: "auto" yes; "host" or empty no (the annotation
 * wins over the environment); anything else -EINVAL naming the annotation or the variable. */
int userns_auto_requested(const OciConfig *c, bool *ret, char **reterr);

/* The first candidate base for a container id (a hash of it). */
uint32_t userns_auto_first_candidate(const char *id);

/* A range [start, start+count) of host ids taken by something else. */
typedef struct IdRange {
        uint64_t start, count;
} IdRange;
/* The ranges of a /etc/subuid-style text ("name:start:count" lines), appended to *ranges. */
int userns_auto_parse_subid(const char *text, IdRange **ranges, size_t *n);
/* The first free base at or after userns_auto_first_candidate(id) (wrapping around), given the taken
 * ranges; is_taken (may be NULL) vetoes a base for what the ranges do not say (NSS). -EBUSY: none. */
int userns_auto_pick_free(const char *id, const IdRange *taken, size_t n_taken,
                          bool (*is_taken)(uint32_t base), uint32_t *ret);

/* When asked for (ret->on): the config refused if it gives mappings or a user namespace by path (or we are
 * rootless), a range picked under USERNS_LOCK_FILE (held in ret->lock_fd), and config.json (b->raw, b->c)
 * rewritten with the user namespace and its mappings. */
int userns_auto_setup(const char *root, const char *id, bool rootless, Bundle *b, UsernsAuto *ret,
                      char **reterr);
