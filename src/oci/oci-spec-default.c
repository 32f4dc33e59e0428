/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "json-util.h"
#include "macro.h"
#include "oci-spec-default.h"

static const char *const default_env[] = {
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "TERM=xterm",
};

static const char *const default_caps[] = {
        "CAP_AUDIT_WRITE",
        "CAP_KILL",
        "CAP_NET_BIND_SERVICE",
};

/* No ambient set: runc dropped it from its default spec, as ambient capabilities survive execve() of
 * unprivileged programs. */
static const char *const default_cap_sets[] = {
        "bounding",
        "effective",
        "permitted",
};

typedef struct DefaultMount {
        const char *destination;
        const char *type;
        const char *source;
        const char *const *options; /* NULL-terminated; NULL: no "options" */
} DefaultMount;

#define OPTS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static const DefaultMount default_mounts[] = {
        { "/proc", "proc", "proc", NULL },
        { "/dev", "tmpfs", "tmpfs", OPTS("nosuid", "strictatime", "mode=755", "size=65536k") },
        { "/dev/pts", "devpts", "devpts",
          OPTS("nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5") },
        { "/dev/shm", "tmpfs", "shm", OPTS("nosuid", "noexec", "nodev", "mode=1777", "size=65536k") },
        { "/dev/mqueue", "mqueue", "mqueue", OPTS("nosuid", "noexec", "nodev") },
        { "/sys", "sysfs", "sysfs", OPTS("nosuid", "noexec", "nodev", "ro") },
        { "/sys/fs/cgroup", "cgroup", "cgroup", OPTS("nosuid", "noexec", "nodev", "relatime", "ro") },
};

/* Rootless: a new sysfs needs a network namespace owned by the user namespace; bind the host's. */
static const DefaultMount rootless_sys_mount = {
        "/sys",
        "none",
        "/sys",
        OPTS("rbind", "nosuid", "noexec", "nodev", "ro"),
};

static const char *const default_masked_paths[] = {
        "/proc/acpi",       "/proc/asound",      "/proc/kcore",       "/proc/keys",    "/proc/latency_stats",
        "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware", "/proc/scsi",
};

static const char *const default_readonly_paths[] = {
        "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
};

static const char *const default_namespaces[] = {
        "pid", "network", "ipc", "uts", "mount", "cgroup",
};

/* A new object appended to array; NULL on OOM (also when array is NULL, the OOM of its creation). */
static cJSON *append_object(cJSON *array) {
        cJSON *o = cJSON_CreateObject();
        return json_append(array, o) ? o : NULL;
}

static cJSON *build_process(void) {
        _cleanup_json_ cJSON *p = cJSON_CreateObject();
        cJSON *user, *caps, *rlimits, *rl;

        if (!p)
                return NULL;
        if (!cJSON_AddBoolToObject(p, "terminal", true))
                return NULL;
        user = cJSON_AddObjectToObject(p, "user");
        if (!user || !cJSON_AddNumberToObject(user, "uid", 0) || !cJSON_AddNumberToObject(user, "gid", 0))
                return NULL;
        if (!json_add(p, "args", json_string_array((const char *const[]){ "sh" }, 1)) ||
            !json_add(p, "env", json_string_array(default_env, ELEMENTSOF(default_env))) ||
            !cJSON_AddStringToObject(p, "cwd", "/"))
                return NULL;

        caps = cJSON_AddObjectToObject(p, "capabilities");
        if (!caps)
                return NULL;
        FOREACH_ARRAY(set, default_cap_sets, ELEMENTSOF(default_cap_sets))
                if (!json_add(caps, *set, json_string_array(default_caps, ELEMENTSOF(default_caps))))
                        return NULL;

        rlimits = cJSON_AddArrayToObject(p, "rlimits");
        if (!rlimits)
                return NULL;
        rl = append_object(rlimits);
        if (!rl || !cJSON_AddStringToObject(rl, "type", "RLIMIT_NOFILE") ||
            !cJSON_AddNumberToObject(rl, "hard", 1024) || !cJSON_AddNumberToObject(rl, "soft", 1024))
                return NULL;

        if (!cJSON_AddBoolToObject(p, "noNewPrivileges", true))
                return NULL;
        return TAKE_PTR(p);
}

static cJSON *build_mount(const DefaultMount *m, bool rootless) {
        _cleanup_json_ cJSON *j = cJSON_CreateObject();
        cJSON *options;

        if (!j)
                return NULL;
        if (!cJSON_AddStringToObject(j, "destination", m->destination) ||
            !cJSON_AddStringToObject(j, "type", m->type) || !cJSON_AddStringToObject(j, "source", m->source))
                return NULL;
        if (!m->options)
                return TAKE_PTR(j);

        options = cJSON_AddArrayToObject(j, "options");
        if (!options)
                return NULL;
        for (const char *const *o = m->options; *o; o++) {
                /* In a user namespace only the mapped ids exist: drop uid=/gid= (devpts "gid=5"). */
                if (rootless && (strneq(*o, "uid=", 4) || strneq(*o, "gid=", 4)))
                        continue;
                if (!json_append(options, cJSON_CreateString(*o)))
                        return NULL;
        }
        return TAKE_PTR(j);
}

static cJSON *build_id_mapping(uint32_t host_id) {
        _cleanup_json_ cJSON *a = cJSON_CreateArray();
        cJSON *m = append_object(a);

        if (!m || !cJSON_AddNumberToObject(m, "containerID", 0) ||
            !cJSON_AddNumberToObject(m, "hostID", host_id) || !cJSON_AddNumberToObject(m, "size", 1))
                return NULL;
        return TAKE_PTR(a);
}

static cJSON *build_linux(bool rootless, bool cgroupns) {
        _cleanup_json_ cJSON *l = cJSON_CreateObject();
        cJSON *namespaces;

        if (!l)
                return NULL;

        if (rootless) {
                if (!json_add(l, "uidMappings", build_id_mapping(geteuid())) ||
                    !json_add(l, "gidMappings", build_id_mapping(getegid())))
                        return NULL;
        } else {
                /* An unprivileged user cannot set up a device cgroup: rootless has no resources. */
                cJSON *resources, *devices, *d;

                resources = cJSON_AddObjectToObject(l, "resources");
                if (!resources)
                        return NULL;
                devices = cJSON_AddArrayToObject(resources, "devices");
                if (!devices)
                        return NULL;
                d = append_object(devices);
                if (!d || !cJSON_AddBoolToObject(d, "allow", false) ||
                    !cJSON_AddStringToObject(d, "access", "rwm"))
                        return NULL;
        }

        namespaces = cJSON_AddArrayToObject(l, "namespaces");
        if (!namespaces)
                return NULL;
        FOREACH_ARRAY(ns, default_namespaces, ELEMENTSOF(default_namespaces)) {
                cJSON *n;

                /* Rootless: no network namespace, the container shares the host's network. */
                if (rootless && streq(*ns, "network"))
                        continue;
                if (!cgroupns && streq(*ns, "cgroup"))
                        continue;
                n = append_object(namespaces);
                if (!n || !cJSON_AddStringToObject(n, "type", *ns))
                        return NULL;
        }
        if (rootless) {
                cJSON *n = append_object(namespaces);
                if (!n || !cJSON_AddStringToObject(n, "type", "user"))
                        return NULL;
        }

        if (!json_add(l, "maskedPaths",
                      json_string_array(default_masked_paths, ELEMENTSOF(default_masked_paths))) ||
            !json_add(l, "readonlyPaths",
                      json_string_array(default_readonly_paths, ELEMENTSOF(default_readonly_paths))))
                return NULL;

        return TAKE_PTR(l);
}

int oci_spec_default(bool rootless, bool cgroupns, cJSON **ret) {
        _cleanup_json_ cJSON *spec = NULL;
        cJSON *root, *mounts;

        assert(ret);

        spec = cJSON_CreateObject();
        if (!spec)
                return -ENOMEM;
        if (!cJSON_AddStringToObject(spec, "ociVersion", OCI_SPEC_VERSION))
                return -ENOMEM;
        if (!json_add(spec, "process", build_process()))
                return -ENOMEM;

        root = cJSON_AddObjectToObject(spec, "root");
        if (!root || !cJSON_AddStringToObject(root, "path", "rootfs") ||
            !cJSON_AddBoolToObject(root, "readonly", true))
                return -ENOMEM;

        if (!cJSON_AddStringToObject(spec, "hostname", "sdrun"))
                return -ENOMEM;

        mounts = cJSON_AddArrayToObject(spec, "mounts");
        if (!mounts)
                return -ENOMEM;
        FOREACH_ARRAY(m, default_mounts, ELEMENTSOF(default_mounts)) {
                const DefaultMount *use =
                        rootless && streq(m->destination, "/sys") ? &rootless_sys_mount : m;
                if (!json_append(mounts, build_mount(use, rootless)))
                        return -ENOMEM;
        }

        if (!json_add(spec, "linux", build_linux(rootless, cgroupns)))
                return -ENOMEM;

        *ret = TAKE_PTR(spec);
        return 0;
}

static int format_value(FILE *f, const cJSON *j, unsigned depth) {
        bool is_object = cJSON_IsObject(j);
        const cJSON *child;

        if (!cJSON_IsArray(j) && !is_object) {
                /* Scalars: cJSON does the escaping and number formatting. */
                _cleanup_free_ char *s = cJSON_PrintUnformatted(j);
                if (!s)
                        return -ENOMEM;
                fputs(s, f);
                return 0;
        }

        if (!j->child) {
                fputs(is_object ? "{}" : "[]", f);
                return 0;
        }

        fputc(is_object ? '{' : '[', f);
        cJSON_ArrayForEach(child, j) {
                int r;

                fputc('\n', f);
                for (unsigned i = 0; i < depth + 1; i++)
                        fputc('\t', f);
                if (is_object) {
                        _cleanup_json_ cJSON *key = cJSON_CreateString(child->string);
                        _cleanup_free_ char *k = key ? cJSON_PrintUnformatted(key) : NULL;
                        if (!k)
                                return -ENOMEM;
                        fprintf(f, "%s: ", k);
                }
                r = format_value(f, child, depth + 1);
                if (r < 0)
                        return r;
                if (child->next)
                        fputc(',', f);
        }
        fputc('\n', f);
        for (unsigned i = 0; i < depth; i++)
                fputc('\t', f);
        fputc(is_object ? '}' : ']', f);
        return 0;
}

char *oci_json_format_pretty(const cJSON *j) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f;
        int r;

        assert(j);

        f = open_memstream(&buf, &size);
        if (!f)
                return NULL;
        r = format_value(f, j, 0);
        if (fclose(f) != 0 || r < 0)
                return NULL;
        return TAKE_PTR(buf);
}
