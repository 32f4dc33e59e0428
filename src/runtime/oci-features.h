/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NOTE (lead): renamed from features.h — a header named features.h under -Isrc/runtime shadows glibc <features.h> and breaks every build. Keep this name. */
#pragma once

#include <cjson/cJSON.h>

/* The runtime-spec features document (features.md, features-linux.md) of `sdrun features`. What the
 * runtime recognises comes from the tables in oci-features.c (each names the module that implements it)
 * and from mount-options.c; seccomp.supportedFlags is probed from the running kernel. Returns 0 or
 * -ENOMEM. */
int features_build(cJSON **ret);

/* The names of the seccomp filter flags sdrun recognises in linux.seccomp.flags, and whether the running
 * kernel (and the libseccomp sdrun was built with) supports each: for seccomp.c and `sdrun features`. */
typedef struct SeccompFlagInfo {
        const char *name;
        unsigned long kernel_flag; /* SECCOMP_FILTER_FLAG_* */
} SeccompFlagInfo;

size_t seccomp_known_flags(const SeccompFlagInfo **ret);
/* 1 if supported, 0 if not, negative errno if the probe itself failed unexpectedly. */
int seccomp_flag_supported(const SeccompFlagInfo *f);
