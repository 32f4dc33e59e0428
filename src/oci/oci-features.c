/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <seccomp.h>
#include <sys/capability.h>

#include "config.h"
#include "version.h"
#include "oci-features.h"
#include "json-util.h"
#include "macro.h"
#include "mount-options.h"
#include "oci-config.h"

/* `sdrun features` must tell the truth: a client (podman, containerd) trusts it to decide what it may put
 * in config.json. Each list below is the ONE place that says what sdrun recognises; the comment above it
 * names the module that implements it. When you add or drop support in that module, change the table
 * here in the same commit. */

/* The runtime-spec versions whose config.json sdrun accepts (oci-config.c checks ociVersion). */
#define FEATURES_OCI_VERSION_MIN "1.0.0"
#define FEATURES_OCI_VERSION_MAX OCI_SPEC_VERSION

/* oci-hooks.c runs these (host-hooks.c for the runtime, at each point of the lifecycle; hooks.c of src/init in
 * the container). */
static const char *const features_hooks[] = {
        "prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop",
};

/* bootstrap.c creates or joins these (linux.namespaces[].type; oci-config-linux.c parses them). */
static const char *const features_namespaces[] = {
        "cgroup", "ipc", "mount", "network", "pid", "time", "user", "uts",
};

/* The cgroup managers of sdunit/scope.c and cgroup-props.c: every container is a systemd scope, on the
 * system manager (root) or the user manager (rootless), on cgroup v1 (hybrid) or v2 hosts. cgroup-props.c
 * has no RDMA controller support. */
static const struct {
        const char *key;
        bool value;
} features_cgroup[] = {
        { "v1", true }, { "v2", true }, { "systemd", true }, { "systemdUser", true }, { "rdma", false },
};

/* seccomp-filter.c: the actions (linux.seccomp.defaultAction, syscalls[].action), argument operators
 * (syscalls[].args[].op) and architectures it translates to libseccomp are oci-config.h's tables
 * (oci_seccomp_action_names, oci_seccomp_op_names, oci_seccomp_archs); the archs only those the libseccomp
 * we run with resolves. */

#ifndef SECCOMP_FILTER_FLAG_TSYNC
#define SECCOMP_FILTER_FLAG_TSYNC (1UL << 0)
#endif
#ifndef SECCOMP_FILTER_FLAG_LOG
#define SECCOMP_FILTER_FLAG_LOG (1UL << 1)
#endif
#ifndef SECCOMP_FILTER_FLAG_SPEC_ALLOW
#define SECCOMP_FILTER_FLAG_SPEC_ALLOW (1UL << 2)
#endif
#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

/* seccomp-filter.c: linux.seccomp.flags, passed as they are to seccomp(2) when the init loads the program
 * (the BPF itself is compiled by libseccomp, which never sees these flags): so the running kernel alone
 * decides which are supported (host_features_build() probes it). */
static const SeccompFlagInfo features_seccomp_flags[] = {
        { "SECCOMP_FILTER_FLAG_TSYNC", SECCOMP_FILTER_FLAG_TSYNC },
        { "SECCOMP_FILTER_FLAG_LOG", SECCOMP_FILTER_FLAG_LOG },
        { "SECCOMP_FILTER_FLAG_SPEC_ALLOW", SECCOMP_FILTER_FLAG_SPEC_ALLOW },
        { "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV },
};

/* AppArmor and SELinux: what this host has enabled comes in FeaturesHost (become.c applies
 * process.apparmorProfile, process.selinuxLabel and linux.mountLabel there, and refuses them elsewhere).
 * Modules sdrun does not have:
 * no Intel RDT support (linux.intelRdt is refused or ignored by oci-config.c). Id-mapped bind mounts
 * (mounts[].uidMappings, the "idmap"/"ridmap" options) are made by rootfs_open_bind_sources(), network
 * devices (linux.netDevices) moved by src/runtime/netdev.c. Flip these when a module implements the feature;
 * FEATURES_IDMAP_MOUNTS also decides whether "idmap"/"ridmap" are listed in mountOptions. */
#define FEATURES_INTEL_RDT false
#define FEATURES_IDMAP_MOUNTS true
#define FEATURES_NET_DEVICES true

/* Config annotations that change what sdrun does (cgroup-props-annotations.c: org.systemd.property.NAME sets a unit
 * property of the container's scope, see sdrun-systemd(7)). A trailing "." marks a prefix. */
static const char *const features_unsafe_annotations[] = {
        "org.systemd.property.",
};

size_t seccomp_known_flags(const SeccompFlagInfo **ret) {
        assert(ret);
        *ret = features_seccomp_flags;
        return ELEMENTSOF(features_seccomp_flags);
}

static int cmp_string(const void *a, const void *b) {
        return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* A NULL-terminated name table (of at most 16 names), sorted as `features` lists it. */
static cJSON *sorted_string_array(const char *const *names) {
        const char *sorted[16];
        size_t n = 0;

        for (; names[n]; n++) {
                assert(n < ELEMENTSOF(sorted));
                sorted[n] = names[n];
        }
        qsort(sorted, n, sizeof sorted[0], cmp_string);
        return json_string_array(sorted, n);
}

static cJSON *enabled_object(bool enabled) {
        _cleanup_json_ cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddBoolToObject(o, "enabled", enabled))
                return NULL;
        return TAKE_PTR(o);
}

static cJSON *build_mount_options(void) {
        _cleanup_json_ cJSON *a = cJSON_CreateArray();
        const MountOption *o;

        if (!a)
                return NULL;
        for (size_t i = 0; (o = mount_option_get(i)); i++) {
                if (o->kind == MOUNT_OPTION_IDMAP && !FEATURES_IDMAP_MOUNTS)
                        continue;
                if (!json_append_string(a, o->name))
                        return NULL;
        }
        return TAKE_PTR(a);
}

/* capabilities.c accepts every name libcap knows (cap_from_name); list them in number order, upper
 * case, as config.json spells them. libcap names a capability it has no name for by its number: skip
 * those. */
static cJSON *build_capabilities(void) {
        _cleanup_json_ cJSON *a = cJSON_CreateArray();
        unsigned n;

        if (!a)
                return NULL;
        n = MAX((unsigned) cap_max_bits(), (unsigned) CAP_LAST_CAP + 1);
        for (unsigned c = 0; c < n; c++) {
                char *lower = cap_to_name((cap_value_t) c);
                _cleanup_free_ char *upper = NULL;

                if (!lower)
                        return NULL;
                if (!isalpha((unsigned char) lower[0])) {
                        cap_free(lower);
                        continue;
                }
                upper = strdup(lower);
                cap_free(lower);
                if (!upper)
                        return NULL;
                for (char *p = upper; *p; p++)
                        *p = (char) toupper((unsigned char) *p);
                if (!json_append_string(a, upper))
                        return NULL;
        }
        return TAKE_PTR(a);
}

static cJSON *build_seccomp(const FeaturesHost *host) {
        _cleanup_json_ cJSON *s = cJSON_CreateObject();
        cJSON *archs, *known, *supported;
        const SeccompFlagInfo *flags;
        size_t n_flags;

        if (!s || !cJSON_AddBoolToObject(s, "enabled", true))
                return NULL;
        if (!json_add(s, "actions", sorted_string_array(oci_seccomp_action_names)) ||
            !json_add(s, "operators", sorted_string_array(oci_seccomp_op_names)))
                return NULL;

        archs = cJSON_AddArrayToObject(s, "archs");
        if (!archs)
                return NULL;
        FOREACH_ARRAY(a, oci_seccomp_archs, OCI_SECCOMP_N_ARCHS)
                if (seccomp_arch_resolve_name(a->libseccomp) != 0 && !json_append_string(archs, a->name))
                        return NULL;

        known = cJSON_AddArrayToObject(s, "knownFlags");
        supported = cJSON_AddArrayToObject(s, "supportedFlags");
        if (!known || !supported)
                return NULL;
        n_flags = seccomp_known_flags(&flags);
        for (size_t i = 0; i < n_flags; i++) {
                if (!json_append_string(known, flags[i].name))
                        return NULL;
                if ((host->seccomp_flags & flags[i].kernel_flag) &&
                    !json_append_string(supported, flags[i].name))
                        return NULL;
        }
        return TAKE_PTR(s);
}

static cJSON *build_linux(const FeaturesHost *host) {
        _cleanup_json_ cJSON *l = cJSON_CreateObject();
        cJSON *cgroup, *ext;

        if (!l)
                return NULL;
        if (!json_add(l, "namespaces",
                      json_string_array(features_namespaces, ELEMENTSOF(features_namespaces))) ||
            !json_add(l, "capabilities", build_capabilities()))
                return NULL;

        cgroup = cJSON_AddObjectToObject(l, "cgroup");
        if (!cgroup)
                return NULL;
        FOREACH_ARRAY(c, features_cgroup, ELEMENTSOF(features_cgroup))
                if (!cJSON_AddBoolToObject(cgroup, c->key, c->value))
                        return NULL;

        if (!json_add(l, "seccomp", build_seccomp(host)) ||
            !json_add(l, "apparmor", enabled_object(host->apparmor)) ||
            !json_add(l, "selinux", enabled_object(host->selinux)) ||
            !json_add(l, "intelRdt", enabled_object(FEATURES_INTEL_RDT)))
                return NULL;

        ext = cJSON_AddObjectToObject(l, "mountExtensions");
        if (!ext || !json_add(ext, "idmap", enabled_object(FEATURES_IDMAP_MOUNTS)))
                return NULL;

        if (!json_add(l, "netDevices", enabled_object(FEATURES_NET_DEVICES)))
                return NULL;
        return TAKE_PTR(l);
}

static cJSON *build_annotations(const FeaturesHost *host) {
        _cleanup_json_ cJSON *a = cJSON_CreateObject();
        const struct scmp_version *v = seccomp_version();
        char buf[64];

        if (!a)
                return NULL;
        snprintf(buf, sizeof buf, "%u.%u.%u", v->major, v->minor, v->micro);
        if (!cJSON_AddStringToObject(a, "io.github.sdrun.version", PACKAGE_VERSION) ||
            !cJSON_AddStringToObject(a, "io.github.sdrun.commit", GIT_COMMIT) ||
            /* Every container is a transient systemd scope: there is no cgroupfs manager to choose. */
            !cJSON_AddStringToObject(a, "io.github.sdrun.systemd", "true") ||
            !cJSON_AddStringToObject(a, "io.github.seccomp.libseccomp.version", buf))
                return NULL;
        /* checkpoint/restore: whether CRIU is there and which (whether it works on this kernel shows only
         * when it runs: see sdrun-checkpoint(8)). */
        if (!cJSON_AddStringToObject(a, "io.github.sdrun.criu",
                                     host->criu >= 0         ? "available"
                                     : host->criu == -ENOENT ? "not installed"
                                                             : "not working") ||
            (host->criu >= 0 && host->criu_version &&
             !cJSON_AddStringToObject(a, "org.criu.version", host->criu_version)))
                return NULL;
        /* The libsystemd it loads (dlopen()ed: not a link-time dependency a client could see) and how it was
         * built, as `sdrun --version` says. */
        if (!cJSON_AddStringToObject(a, "io.github.sdrun.libsystemd.version",
                                     host->libsystemd_version ?: "not available") ||
            (host->libsystemd_interface &&
             !cJSON_AddStringToObject(a, "io.github.sdrun.libsystemd.interface",
                                      host->libsystemd_interface)) ||
            (host->libsystemd_path &&
             !cJSON_AddStringToObject(a, "io.github.sdrun.libsystemd.path", host->libsystemd_path)) ||
            !cJSON_AddStringToObject(a, "io.github.sdrun.build-options", BUILD_OPTIONS))
                return NULL;
        return TAKE_PTR(a);
}

int features_build(const FeaturesHost *host, cJSON **ret) {
        _cleanup_json_ cJSON *f = cJSON_CreateObject();

        assert(host);
        assert(ret);

        if (!f)
                return -ENOMEM;
        if (!cJSON_AddStringToObject(f, "ociVersionMin", FEATURES_OCI_VERSION_MIN) ||
            !cJSON_AddStringToObject(f, "ociVersionMax", FEATURES_OCI_VERSION_MAX))
                return -ENOMEM;
        if (!json_add(f, "hooks", json_string_array(features_hooks, ELEMENTSOF(features_hooks))) ||
            !json_add(f, "mountOptions", build_mount_options()) ||
            !json_add(f, "linux", build_linux(host)) ||
            !json_add(f, "annotations", build_annotations(host)) ||
            !json_add(
                    f, "potentiallyUnsafeConfigAnnotations",
                    json_string_array(features_unsafe_annotations, ELEMENTSOF(features_unsafe_annotations))))
                return -ENOMEM;

        *ret = TAKE_PTR(f);
        return 0;
}
