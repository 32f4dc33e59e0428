/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

#include "oci-config.h"
#include "seccomp-filter.h"

/* Entries kept in ROOT/.seccomp-cache at most (a store into a full cache empties it first). */
#define SECCOMP_CACHE_MAX 64

/* linux.seccomp (s, parsed from raw, the whole config.json) compiled, from the state root's cache when an
 * entry with the same key is there, else compiled with oci_seccomp_prepare() and stored (see
 * seccomp-cache.c). Fails only as oci_seccomp_prepare() does. */
int seccomp_program_get(const char *root, const char *raw, size_t raw_len, const OciSeccomp *s,
                        SeccompProgram **ret, char **reterr);
