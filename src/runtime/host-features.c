/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "criu.h"
#include "error-util.h"
#include "fileio.h"
#include "host-features.h"
#include "macro.h"
#include "oci-features.h"
#include "sdunit.h"
#include "seccomp-filter.h"
#include "string-util.h"

bool host_apparmor_enabled(void) {
        _cleanup_free_ char *v = NULL;

        if (access("/proc/self/attr/apparmor/exec", F_OK) < 0)
                return false;
        return read_full_file_at(AT_FDCWD, "/sys/module/apparmor/parameters/enabled", 16, &v, NULL) >= 0 &&
               v[0] == 'Y';
}

bool host_selinux_enabled(void) {
        return access("/sys/fs/selinux/enforce", F_OK) >= 0;
}

int host_check_lsm(const OciProcess *p, const OciLinux *l, char **reterr) {
        if (p && !isempty(p->apparmor_profile) && !host_apparmor_enabled())
                return errorf(
                        reterr, EINVAL,
                        "process.apparmorProfile: \"%s\" requested, but AppArmor is not enabled on this host",
                        p->apparmor_profile);
        if (p && !isempty(p->selinux_label) && !host_selinux_enabled())
                return errorf(
                        reterr, EINVAL,
                        "process.selinuxLabel: \"%s\" requested, but SELinux is not enabled on this host",
                        p->selinux_label);
        if (l && !isempty(l->mount_label) && !host_selinux_enabled())
                return errorf(reterr, EINVAL,
                              "linux.mountLabel: \"%s\" requested, but SELinux is not enabled on this host",
                              l->mount_label);
        return 0;
}

int host_features_build(cJSON **ret) {
        _cleanup_free_ char *criu_version = NULL, *interface = NULL;
        _cleanup_(sdunit_libsystemd_info_done) SdUnitLibInfo lib = {};
        FeaturesHost host = {
                .apparmor = host_apparmor_enabled(),
                .selinux = host_selinux_enabled(),
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
