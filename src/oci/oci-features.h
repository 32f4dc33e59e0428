/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include <cjson/cJSON.h>

/* (Not "features.h": that name would shadow glibc's <features.h> for everything on the include path.) */

/* What the features document reports about the host rather than about sdrun's code: the caller
 * (host_features_build() in src/runtime) probes it, so that this library never calls into the runtime. */
typedef struct FeaturesHost {
        bool apparmor;            /* AppArmor is enabled on this host */
        bool selinux;             /* SELinux is enabled on this host */
        int criu;                 /* >= 0: CRIU works; -ENOENT: not installed; other < 0: not working */
        const char *criu_version; /* when criu >= 0 */
        unsigned long
                seccomp_flags; /* the SECCOMP_FILTER_FLAG_* of seccomp_known_flags() the kernel accepts */
        /* The libsystemd sdrun loads (sdunit_libsystemd_info()): its version, interface (LIBSYSTEMD_NNN) and
         * file; all NULL when it cannot be loaded. */
        const char *libsystemd_version;
        const char *libsystemd_interface;
        const char *libsystemd_path;
} FeaturesHost;

/* The runtime-spec features document (features.md, features-linux.md) of `sdrun features`. What the
 * runtime recognises comes from the tables in oci-features.c (each names the module that implements it)
 * and from mount-options.c; seccomp.supportedFlags comes from host->seccomp_flags. Returns 0 or -ENOMEM. */
int features_build(const FeaturesHost *host, cJSON **ret);

/* The names of the seccomp filter flags sdrun recognises in linux.seccomp.flags: for seccomp-filter.c (which
 * also probes the kernel for each) and `sdrun features`. */
typedef struct SeccompFlagInfo {
        const char *name;
        unsigned long kernel_flag; /* SECCOMP_FILTER_FLAG_* */
} SeccompFlagInfo;

size_t seccomp_known_flags(const SeccompFlagInfo **ret);
