/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "become.h"
#include "criu.h"
#include "host-features.h"
#include "macro.h"
#include "oci-features.h"
#include "sdunit.h"
#include "seccomp-filter.h"
#include "string-util.h"

int host_features_build(cJSON **ret) {
        _cleanup_free_ char *criu_version = NULL, *interface = NULL;
        _cleanup_(sdunit_libsystemd_info_done) SdUnitLibInfo lib = {};
        FeaturesHost host = {
                .apparmor = become_apparmor_enabled(),
                .selinux = become_selinux_enabled(),
        };

        const SeccompFlagInfo *flags;
        size_t n = seccomp_known_flags(&flags);
        FOREACH_ARRAY(f, flags, n)
                if (oci_seccomp_flag_supported(f->name))
                        host.seccomp_flags |= f->kernel_flag;

        host.criu = criu_get_version(NULL, NULL, &criu_version);
        host.criu_version = criu_version;
        /* Not loadable: the document says so rather than failing (`features` needs no systemd). */
        if (sdunit_libsystemd_info(&lib, NULL) >= 0) {
                if (!(interface = strdup_printf("LIBSYSTEMD_%u", lib.interface)))
                        return -ENOMEM;
                host.libsystemd_version = lib.version;
                host.libsystemd_interface = interface;
                host.libsystemd_path = lib.path;
        }
        return features_build(&host, ret);
}
