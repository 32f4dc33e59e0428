/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config.json "linux": namespaces, ID mappings, devices, sysctl, seccomp, rootfs propagation, Intel RDT,
 * memory policy, personality, time offsets and network devices; "linux.resources" is in
 * oci-config-resources.c. The parsing rules are those described at the top of oci-config.c. */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>

#include <cjson/cJSON.h>

#include "log.h"
#include "macro.h"
#include "oci-config-internal.h"
#include "oci-config.h"
#include "oci-json.h"
#include "strv.h"

/* ---- enum tables (values from the kernel / libseccomp headers' ABI) ---- */

const char *const namespace_names[_OCI_NS_MAX] = {
        [OCI_NS_PID] = "pid",       [OCI_NS_NETWORK] = "network", [OCI_NS_MOUNT] = "mount",
        [OCI_NS_IPC] = "ipc",       [OCI_NS_UTS] = "uts",         [OCI_NS_USER] = "user",
        [OCI_NS_CGROUP] = "cgroup", [OCI_NS_TIME] = "time",
};

/* linux.seccomp's names: the one table of each (see oci-config.h). */
const char *const oci_seccomp_action_names[_OCI_SECCOMP_ACTION_MAX + 1] = {
        [OCI_SECCOMP_KILL] = "SCMP_ACT_KILL",
        [OCI_SECCOMP_KILL_PROCESS] = "SCMP_ACT_KILL_PROCESS",
        [OCI_SECCOMP_KILL_THREAD] = "SCMP_ACT_KILL_THREAD",
        [OCI_SECCOMP_TRAP] = "SCMP_ACT_TRAP",
        [OCI_SECCOMP_ERRNO] = "SCMP_ACT_ERRNO",
        [OCI_SECCOMP_TRACE] = "SCMP_ACT_TRACE",
        [OCI_SECCOMP_ALLOW] = "SCMP_ACT_ALLOW",
        [OCI_SECCOMP_LOG] = "SCMP_ACT_LOG",
        [OCI_SECCOMP_NOTIFY] = "SCMP_ACT_NOTIFY",
};

const char *const oci_seccomp_op_names[_OCI_SECCOMP_OP_MAX + 1] = {
        [OCI_SECCOMP_OP_NE] = "SCMP_CMP_NE",
        [OCI_SECCOMP_OP_LT] = "SCMP_CMP_LT",
        [OCI_SECCOMP_OP_LE] = "SCMP_CMP_LE",
        [OCI_SECCOMP_OP_EQ] = "SCMP_CMP_EQ",
        [OCI_SECCOMP_OP_GE] = "SCMP_CMP_GE",
        [OCI_SECCOMP_OP_GT] = "SCMP_CMP_GT",
        [OCI_SECCOMP_OP_MASKED_EQ] = "SCMP_CMP_MASKED_EQ",
};

/* In the order `features` lists them. */
const OciSeccompArch oci_seccomp_archs[OCI_SECCOMP_N_ARCHS] = {
        { "SCMP_ARCH_AARCH64", "aarch64" },
        { "SCMP_ARCH_ARM", "arm" },
        { "SCMP_ARCH_LOONGARCH64", "loongarch64" },
        { "SCMP_ARCH_M68K", "m68k" },
        { "SCMP_ARCH_MIPS", "mips" },
        { "SCMP_ARCH_MIPS64", "mips64" },
        { "SCMP_ARCH_MIPS64N32", "mips64n32" },
        { "SCMP_ARCH_MIPSEL", "mipsel" },
        { "SCMP_ARCH_MIPSEL64", "mipsel64" },
        { "SCMP_ARCH_MIPSEL64N32", "mipsel64n32" },
        { "SCMP_ARCH_PARISC", "parisc" },
        { "SCMP_ARCH_PARISC64", "parisc64" },
        { "SCMP_ARCH_PPC", "ppc" },
        { "SCMP_ARCH_PPC64", "ppc64" },
        { "SCMP_ARCH_PPC64LE", "ppc64le" },
        { "SCMP_ARCH_RISCV64", "riscv64" },
        { "SCMP_ARCH_S390", "s390" },
        { "SCMP_ARCH_S390X", "s390x" },
        { "SCMP_ARCH_SH", "sh" },
        { "SCMP_ARCH_SHEB", "sheb" },
        { "SCMP_ARCH_X32", "x32" },
        { "SCMP_ARCH_X86", "x86" },
        { "SCMP_ARCH_X86_64", "x86_64" },
};

static const char *const seccomp_flag_names[] = {
        "SECCOMP_FILTER_FLAG_TSYNC",
        "SECCOMP_FILTER_FLAG_LOG",
        "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
        "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
};

/* <linux/mempolicy.h> (an enum there, and older headers lack the newest modes) */
enum {
        OCI_MPOL_DEFAULT = 0,
        OCI_MPOL_PREFERRED = 1,
        OCI_MPOL_BIND = 2,
        OCI_MPOL_INTERLEAVE = 3,
        OCI_MPOL_LOCAL = 4,
        OCI_MPOL_PREFERRED_MANY = 5,
        OCI_MPOL_WEIGHTED_INTERLEAVE = 6,
        OCI_MPOL_F_NUMA_BALANCING = 1 << 13,
        OCI_MPOL_F_RELATIVE_NODES = 1 << 14,
        OCI_MPOL_F_STATIC_NODES = 1 << 15,
};

static const NameValue mpol_mode_table[] = {
        { "MPOL_DEFAULT", OCI_MPOL_DEFAULT },
        { "MPOL_BIND", OCI_MPOL_BIND },
        { "MPOL_INTERLEAVE", OCI_MPOL_INTERLEAVE },
        { "MPOL_WEIGHTED_INTERLEAVE", OCI_MPOL_WEIGHTED_INTERLEAVE },
        { "MPOL_PREFERRED", OCI_MPOL_PREFERRED },
        { "MPOL_PREFERRED_MANY", OCI_MPOL_PREFERRED_MANY },
        { "MPOL_LOCAL", OCI_MPOL_LOCAL },
};

static const NameValue mpol_flag_table[] = {
        { "MPOL_F_NUMA_BALANCING", OCI_MPOL_F_NUMA_BALANCING },
        { "MPOL_F_RELATIVE_NODES", OCI_MPOL_F_RELATIVE_NODES },
        { "MPOL_F_STATIC_NODES", OCI_MPOL_F_STATIC_NODES },
};

static const NameValue personality_domain_table[] = {
        { "LINUX", PER_LINUX },
        { "LINUX32", PER_LINUX32 },
};

/* The r-forms are what runc, crun and most generators write (the rootfs is always handled recursively). */
static const char *const rootfs_propagation_names[] = { "private",  "shared",  "slave",  "unbindable",
                                                        "rprivate", "rshared", "rslave", "runbindable" };

const char *oci_namespace_type_to_string(OciNamespaceType t) {
        return t >= 0 && t < _OCI_NS_MAX ? namespace_names[t] : NULL;
}

const char *oci_seccomp_action_to_string(OciSeccompAction a) {
        return a >= 0 && a < _OCI_SECCOMP_ACTION_MAX ? oci_seccomp_action_names[a] : NULL;
}

const char *oci_seccomp_op_to_string(OciSeccompOp o) {
        return o >= 0 && o < _OCI_SECCOMP_OP_MAX ? oci_seccomp_op_names[o] : NULL;
}

static bool in_names(const char *const *names, size_t n, const char *s) {
        for (size_t i = 0; i < n; i++)
                if (names[i] && streq(names[i], s))
                        return true;
        return false;
}

/* ---- linux: namespaces, mappings, devices ---- */

static int field_namespace_type(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return get_enum_index(v, p, namespace_names, _OCI_NS_MAX, "namespace", dst, reterr);
}

/* An empty path is no path (a new namespace), as runc takes it (crun fails to open ""); the spec wants an
 * absolute one. */
static int field_namespace_path(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        if (cJSON_IsString(v) && isempty(cJSON_GetStringValue(v))) {
                _cleanup_free_ char *path = oci_json_path_to_string(p);
                log_warning("%s: empty, taken as no path (a new namespace), as runc does.", strna(path));
                return 0;
        }
        return oci_json_field_absolute_path(v, p, dst, reterr);
}

static const OciJsonField namespace_fields[] = {
        FIELD("type", field_namespace_type, OciNamespace, type, OCI_JSON_MANDATORY),
        FIELD("path", field_namespace_path, OciNamespace, path, 0),
        {},
};

static int parse_namespaces(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        OciLinux *l = dst;
        size_t i, j;
        int r;

        r = oci_json_parse_array_of(v, p, sizeof(OciNamespace), (void **) &l->namespaces, &l->n_namespaces,
                                    namespace_fields, NULL, reterr);
        if (r < 0)
                return r;
        i = find_duplicate(l->namespaces, l->n_namespaces, sizeof(OciNamespace),
                           offsetof(OciNamespace, type), &j);
        if (i < l->n_namespaces) {
                const OciJsonPath ep = OCI_JSON_INDEX(p, i);
                return oci_json_error_at(reterr, &ep, "type",
                                         "duplicate namespace \"%s\" (also in entry %zu)",
                                         namespace_names[l->namespaces[i].type], j);
        }
        return 0;
}

static int field_device_type(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return get_device_type(v, p, "cbup", "c, b, u or p", dst, reterr);
}

/* Device numbers: int64 in the schema; Linux dev_t holds 32-bit majors and minors. */

static int field_file_mode(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        /* Decimal in JSON. Podman passes the host node's raw st_mode, file-type bits included (020666 for a
         * character device): as runc and crun, only the permission bits and setuid/setgid/sticky are kept
         * (the type comes from "type"). Anything beyond the 16 bits of a mode_t is refused. */
        return field_mode_bits(v, p, 0177777, 07777, dst, reterr);
}

static int parse_device(const cJSON *v, const OciJsonPath *p, void *elem, char **reterr) {
        static const OciJsonField table[] = {
                FIELD("type", field_device_type, OciDevice, type, OCI_JSON_MANDATORY),
                FIELD("path", oci_json_field_absolute_path, OciDevice, path, OCI_JSON_MANDATORY),
                FIELD("major", field_device_number, OciDevice, major, 0),
                FIELD("minor", field_device_number, OciDevice, minor, 0),
                FIELD_HAS("fileMode", field_file_mode, OciDevice, file_mode, has_file_mode, 0),
                FIELD_HAS("uid", oci_json_field_uint32, OciDevice, uid, has_uid, 0),
                FIELD_HAS("gid", oci_json_field_uint32, OciDevice, gid, has_gid, 0),
                {},
        };
        OciDevice *d = elem;
        int r;

        d->major = d->minor = -1;
        r = oci_json_dispatch(v, p, table, elem, reterr);
        if (r < 0)
                return r;
        if (d->type != 'p' && (d->major < 0 || d->minor < 0))
                return oci_json_error_at(reterr, p, d->major < 0 ? "major" : "minor",
                                         "required for device type '%c'", d->type);
        return 0;
}

/* ---- linux: sysctl, seccomp, the rest ---- */

typedef __typeof__(((OciLinux *) NULL)->intel_rdt) OciIntelRdt;
typedef __typeof__(((OciLinux *) NULL)->memory_policy) OciMemoryPolicy;
typedef __typeof__(((OciLinux *) NULL)->personality) OciPersonality;

/* sysctl keys become paths under /proc/sys ('.' or '/' separated): refuse empty components, which also
 * rules out "..", so that no key can leave /proc/sys. */
static int check_sysctl_key(const char *key, const OciJsonPath *p, char **reterr) {
        bool empty_component = true;

        for (const char *c = key; *c; c++) {
                if (*c == '.' || *c == '/') {
                        if (empty_component)
                                break;
                        empty_component = true;
                } else
                        empty_component = false;
        }
        if (empty_component)
                return oci_json_error(reterr, p, "invalid sysctl name");
        return 0;
}

static int parse_sysctl(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        OciLinux *l = dst;
        return parse_string_map(v, p, &l->sysctl, &l->n_sysctl, check_sysctl_key, reterr);
}

static int field_seccomp_action(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return get_enum_index(v, p, oci_seccomp_action_names, _OCI_SECCOMP_ACTION_MAX, "seccomp action", dst,
                              reterr);
}

static int field_seccomp_op(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return get_enum_index(v, p, oci_seccomp_op_names, _OCI_SECCOMP_OP_MAX, "seccomp operator", dst,
                              reterr);
}

const OciSeccompArch *oci_seccomp_arch_find(const char *name) {
        FOREACH_ARRAY(a, oci_seccomp_archs, OCI_SECCOMP_N_ARCHS)
                if (streq(a->name, name))
                        return a;
        return NULL;
}

static int check_seccomp_arch(const char *s, const OciJsonPath *p, char **reterr) {
        return oci_seccomp_arch_find(s)
                       ? 0
                       : oci_json_error(reterr, p, "unknown seccomp architecture \"%s\"", s);
}

static int field_seccomp_arches(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return oci_json_field_strv_checked(v, p, dst, check_seccomp_arch, reterr);
}

static int check_seccomp_flag(const char *s, const OciJsonPath *p, char **reterr) {
        if (!in_names(seccomp_flag_names, ELEMENTSOF(seccomp_flag_names), s))
                return oci_json_error(reterr, p, "unknown seccomp flag \"%s\"", s);
        return 0;
}

static int field_seccomp_flags(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return oci_json_field_strv_checked(v, p, dst, check_seccomp_flag, reterr);
}

static int check_syscall_name(const char *s, const OciJsonPath *p, char **reterr) {
        return isempty(s) ? oci_json_error(reterr, p, "empty system call name") : 0;
}

static int field_syscall_names(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        int r;

        r = oci_json_field_strv_checked(v, p, dst, check_syscall_name, reterr);
        if (r < 0)
                return r;
        if (!(*(char ***) dst)[0]) {
                /* runc and crun accept a rule without names; it matches nothing. */
                _cleanup_free_ char *path = oci_json_path_to_string(p);
                log_warning("%s: no system call names, the rule has no effect.", strna(path));
        }
        return 0;
}

static int field_seccomp_arg_index(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return oci_json_store_unsigned(v, p, 5, dst, sizeof(uint32_t), reterr);
}

static const OciJsonField seccomp_arg_fields[] = {
        FIELD("index", field_seccomp_arg_index, OciSeccompArg, index, OCI_JSON_MANDATORY),
        FIELD("value", oci_json_field_uint64, OciSeccompArg, value, OCI_JSON_MANDATORY),
        FIELD("valueTwo", oci_json_field_uint64, OciSeccompArg, value_two, 0),
        FIELD("op", field_seccomp_op, OciSeccompArg, op, OCI_JSON_MANDATORY),
        {},
};

/* errnoRet goes with the actions that return an errno: key names it in the object at p. */
static int check_errno_ret(const OciJsonPath *p, const char *key, bool has_errno_ret, OciSeccompAction a,
                           char **reterr) {
        if (has_errno_ret && a != OCI_SECCOMP_ERRNO && a != OCI_SECCOMP_TRACE)
                return oci_json_error_at(reterr, p, key,
                                         "only valid with SCMP_ACT_ERRNO or SCMP_ACT_TRACE, not %s",
                                         oci_seccomp_action_names[a]);
        return 0;
}

static const OciJsonField syscall_fields[] = {
        FIELD("names", field_syscall_names, OciSyscall, names, OCI_JSON_MANDATORY),
        FIELD("action", field_seccomp_action, OciSyscall, action, OCI_JSON_MANDATORY),
        FIELD_HAS("errnoRet", oci_json_field_uint32, OciSyscall, errno_ret, has_errno_ret, 0),
        FIELD_ARRAY_OF("args", seccomp_arg_fields, NULL, OciSyscall, args, n_args, 0),
        {},
};

static int check_syscall(const cJSON *v, const OciJsonPath *p, void *obj, char **reterr) {
        const OciSyscall *s = obj;
        return check_errno_ret(p, "errnoRet", s->has_errno_ret, s->action, reterr);
}

static const OciJsonField seccomp_fields[] = {
        FIELD("defaultAction", field_seccomp_action, OciSeccomp, default_action, OCI_JSON_MANDATORY),
        FIELD_HAS("defaultErrnoRet", oci_json_field_uint32, OciSeccomp, default_errno_ret,
                  has_default_errno_ret, 0),
        FIELD("architectures", field_seccomp_arches, OciSeccomp, architectures, 0),
        FIELD("flags", field_seccomp_flags, OciSeccomp, flags, 0),
        FIELD("listenerPath", oci_json_field_absolute_path, OciSeccomp, listener_path, 0),
        FIELD("listenerMetadata", oci_json_field_string, OciSeccomp, listener_metadata, 0),
        FIELD_ARRAY_OF("syscalls", syscall_fields, check_syscall, OciSeccomp, syscalls, n_syscalls, 0),
        {},
};

static int check_seccomp(const cJSON *v, const OciJsonPath *p, void *obj, char **reterr) {
        const OciSeccomp *s = obj;
        int r;

        r = check_errno_ret(p, "defaultErrnoRet", s->has_default_errno_ret, s->default_action, reterr);
        if (r < 0)
                return r;
        if (s->listener_metadata && !s->listener_path)
                return oci_json_error_at(reterr, p, "listenerMetadata",
                                         "must not be set without listenerPath");
        /* SCMP_ACT_NOTIFY needs somebody to hand the notification fd to. */
        if (!s->listener_path) {
                if (s->default_action == OCI_SECCOMP_NOTIFY)
                        return oci_json_error_at(reterr, p, "defaultAction",
                                                 "SCMP_ACT_NOTIFY requires listenerPath");
                const OciJsonPath sp = OCI_JSON_KEY(p, "syscalls");
                for (size_t i = 0; i < s->n_syscalls; i++)
                        if (s->syscalls[i].action == OCI_SECCOMP_NOTIFY) {
                                const OciJsonPath ep = OCI_JSON_INDEX(&sp, i);
                                return oci_json_error_at(reterr, &ep, "action",
                                                         "SCMP_ACT_NOTIFY requires %s",
                                                         "linux.seccomp.listenerPath");
                        }
        }
        return 0;
}

static int check_rootfs_propagation(const char *s, const OciJsonPath *p, char **reterr) {
        if (!in_names(rootfs_propagation_names, ELEMENTSOF(rootfs_propagation_names), s))
                return oci_json_error(
                        reterr, p,
                        "unknown propagation \"%s\" (expected [r]private, [r]shared, [r]slave or "
                        "[r]unbindable)",
                        s);
        return 0;
}

static int field_rootfs_propagation(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return oci_json_field_string_checked(v, p, dst, check_rootfs_propagation, reterr);
}

static int check_mem_bw_schema(const char *s, const OciJsonPath *p, char **reterr) {
        if (!strneq(s, "MB:", 3) || strchr(s, '\n'))
                return oci_json_error(reterr, p, "must start with \"MB:\" and be a single line");
        return 0;
}

static int field_mem_bw_schema(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return oci_json_field_string_checked(v, p, dst, check_mem_bw_schema, reterr);
}

static const OciJsonField intel_rdt_fields[] = {
        FIELD("closID", oci_json_field_string, OciIntelRdt, clos_id, 0),
        FIELD("schemata", oci_json_field_strv, OciIntelRdt, schemata, 0),
        FIELD("l3CacheSchema", oci_json_field_string, OciIntelRdt, l3_cache_schema, 0),
        FIELD("memBwSchema", field_mem_bw_schema, OciIntelRdt, mem_bw_schema, 0),
        FIELD("enableMonitoring", oci_json_field_bool, OciIntelRdt, enable_monitoring, 0),
        {},
};

static int field_mpol_mode(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return get_enum(v, p, mpol_mode_table, ELEMENTSOF(mpol_mode_table), "memory policy mode", dst,
                        reterr);
}

static int field_mpol_flags(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return get_flags(v, p, mpol_flag_table, ELEMENTSOF(mpol_flag_table), "memory policy flag", dst,
                         sizeof(unsigned), reterr);
}

static const OciJsonField memory_policy_fields[] = {
        FIELD_HAS("mode", field_mpol_mode, OciMemoryPolicy, mode, has_mode, 0),
        FIELD("nodes", field_cpu_list, OciMemoryPolicy, nodes, 0),
        FIELD("flags", field_mpol_flags, OciMemoryPolicy, flags, 0),
        {},
};

static int check_memory_policy(const cJSON *v, const OciJsonPath *p, void *obj, char **reterr) {
        OciMemoryPolicy *m = obj;
        bool has_nodes;

        /* The spec requires mode; runc takes an empty object as no policy (MPOL_DEFAULT, what a process has
         * anyway), and so do we, with a warning. With nodes or flags, a missing mode is an error. */
        if (!m->has_mode) {
                if (cJSON_GetArraySize(v) > 0)
                        return oci_json_error_at(reterr, p, "mode", "required property is missing");
                _cleanup_free_ char *path = oci_json_path_to_string(p);
                log_warning("%s: an empty object, required by the runtime-spec to give a mode; taking it as "
                            "MPOL_DEFAULT, as runc does.",
                            strna(path));
                m->mode = OCI_MPOL_DEFAULT;
        }

        /* set_mempolicy(2): DEFAULT and LOCAL take no nodes; BIND, INTERLEAVE, WEIGHTED_INTERLEAVE and
         * PREFERRED_MANY need at least one; PREFERRED takes zero (= local) or more. */
        has_nodes = m->nodes && m->nodes[strspn(m->nodes, " ")];
        if ((m->mode == OCI_MPOL_DEFAULT || m->mode == OCI_MPOL_LOCAL) && has_nodes)
                return oci_json_error_at(reterr, p, "nodes", "must be empty for this mode");
        if ((m->mode == OCI_MPOL_BIND || m->mode == OCI_MPOL_INTERLEAVE ||
             m->mode == OCI_MPOL_WEIGHTED_INTERLEAVE || m->mode == OCI_MPOL_PREFERRED_MANY) &&
            !has_nodes)
                return oci_json_error_at(reterr, p, "nodes", "at least one node is required for this mode");
        if ((m->flags & OCI_MPOL_F_STATIC_NODES) && (m->flags & OCI_MPOL_F_RELATIVE_NODES))
                return oci_json_error_at(reterr, p, "flags",
                                         "MPOL_F_STATIC_NODES and MPOL_F_RELATIVE_NODES are exclusive");
        return 0;
}

static int field_personality_domain(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        int d, r;

        r = get_enum(v, p, personality_domain_table, ELEMENTSOF(personality_domain_table),
                     "personality domain", &d, reterr);
        if (r < 0)
                return r;
        *(unsigned long *) dst = (unsigned long) d;
        return 0;
}

static int field_personality_flags(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        _cleanup_strv_free_ char **flags = NULL;
        int r;

        /* runtime-spec: "Currently no flag values are supported." Any entry is therefore unknown; runc and crun
         * accept and ignore them: so does sdrun, with a warning. */
        r = oci_json_field_strv(v, p, &flags, reterr);
        if (r < 0)
                return r;
        for (size_t i = 0; flags[i]; i++) {
                const OciJsonPath ep = OCI_JSON_INDEX(p, i);
                _cleanup_free_ char *path = oci_json_path_to_string(&ep);
                log_warning("%s: personality flag \"%s\" is not supported, ignoring it.", strna(path),
                            flags[i]);
        }
        return 0;
}

static const OciJsonField personality_fields[] = {
        FIELD("domain", field_personality_domain, OciPersonality, domain, OCI_JSON_MANDATORY),
        FIELD_SELF("flags", field_personality_flags, 0),
        {},
};

static int field_nanosecs(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return oci_json_store_unsigned(v, p, 999999999, dst, sizeof(uint32_t), reterr);
}

static const OciJsonField time_offset_fields[] = {
        FIELD("secs", oci_json_field_int64, OciTimeOffset, secs, 0),
        FIELD("nanosecs", field_nanosecs, OciTimeOffset, nanosecs, 0),
        {},
};

static const OciJsonField time_offsets_fields[] = {
        FIELD_OBJECT_HAS("boottime", time_offset_fields, NULL, OciLinux, time_boottime,
                         time_boottime.present, 0),
        FIELD_OBJECT_HAS("monotonic", time_offset_fields, NULL, OciLinux, time_monotonic,
                         time_monotonic.present, 0),
        {},
};

static int parse_time_offsets(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        const cJSON *m;
        int r;

        /* The keys name clocks: an unknown clock cannot be ignored like an unknown property, the offset
         * would silently not apply. Only CLOCK_BOOTTIME and CLOCK_MONOTONIC can be offset (time_namespaces(7)). */
        r = oci_json_check_type(v, p, cJSON_Object, reterr);
        if (r < 0)
                return r;
        cJSON_ArrayForEach(m, v)
                if (m->string && !streq(m->string, "boottime") && !streq(m->string, "monotonic"))
                        return oci_json_error_at(reterr, p, m->string,
                                                 "unknown clock (only boottime and monotonic)");
        return oci_json_dispatch(v, p, time_offsets_fields, dst, reterr);
}

/* Interface names (IFNAMSIZ 16 with the NUL; no '/', ':' or blanks; not "." or ".."), "%d" templates allowed. */
static int check_ifname(const char *name, const OciJsonPath *p, char **reterr) {
        if (isempty(name) || strlen(name) > 15 || streq(name, ".") || streq(name, "..") ||
            strpbrk(name, "/: \t\n"))
                return oci_json_error(reterr, p, "invalid network interface name \"%s\"", name);
        return 0;
}

static const OciJsonField net_device_fields[] = {
        FIELD("name", oci_json_field_string, OciKeyValue, value, 0),
        {},
};

static int check_net_device(const cJSON *v, const OciJsonPath *p, void *obj, char **reterr) {
        const OciKeyValue *kv = obj;
        const OciJsonPath np = OCI_JSON_KEY(p, "name");
        return kv->value && !isempty(kv->value) ? check_ifname(kv->value, &np, reterr) : 0;
}

/* netDevices: host interface name -> { "name": name in the container } */
static int parse_net_devices(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        static const OciJsonField value = { .fields = net_device_fields, .check = check_net_device };
        OciLinux *l = dst;
        return oci_json_parse_map(v, p, sizeof(OciKeyValue), (void **) &l->net_devices, &l->n_net_devices,
                                  check_ifname, offsetof(OciKeyValue, key), &value, reterr);
}

/* maskedPaths/readonlyPaths: runc and crun accept a relative path and read it relative to the container's
 * "/" (where sdrun resolves every entry anyway, inside the root): warned about. Empty stays an error. */
static int check_container_path(const char *s, const OciJsonPath *p, char **reterr) {
        if (isempty(s))
                return oci_json_error(reterr, p, "\"\" is not an absolute path");
        if (s[0] != '/') {
                _cleanup_free_ char *path = oci_json_path_to_string(p);
                log_warning("%s: \"%s\" is not an absolute path, reading it relative to \"/\".", strna(path),
                            s);
        }
        return 0;
}

static int field_container_path_strv(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return oci_json_field_strv_checked(v, p, dst, check_container_path, reterr);
}

const OciJsonField linux_fields[] = {
        FIELD_SELF("namespaces", parse_namespaces, 0),
        FIELD_ARRAY_OF("uidMappings", id_mapping_fields, check_id_mapping, OciLinux, uid_mappings,
                       n_uid_mappings, 0),
        FIELD_ARRAY_OF("gidMappings", id_mapping_fields, check_id_mapping, OciLinux, gid_mappings,
                       n_gid_mappings, 0),
        FIELD_ARRAY("devices", parse_device, OciLinux, devices, n_devices, 0),
        FIELD_SELF("netDevices", parse_net_devices, 0),
        FIELD("cgroupsPath", oci_json_field_string, OciLinux, cgroups_path, 0),
        FIELD_OBJECT_HAS("resources", resources_fields, NULL, OciLinux, resources, resources.present, 0),
        FIELD_SELF("sysctl", parse_sysctl, 0),
        FIELD_OBJECT_HAS("seccomp", seccomp_fields, check_seccomp, OciLinux, seccomp, seccomp.present, 0),
        FIELD("rootfsPropagation", field_rootfs_propagation, OciLinux, rootfs_propagation, 0),
        FIELD("maskedPaths", field_container_path_strv, OciLinux, masked_paths, 0),
        FIELD("readonlyPaths", field_container_path_strv, OciLinux, readonly_paths, 0),
        FIELD("mountLabel", oci_json_field_string, OciLinux, mount_label, 0),
        FIELD_OBJECT_HAS("intelRdt", intel_rdt_fields, NULL, OciLinux, intel_rdt, intel_rdt.present, 0),
        FIELD_OBJECT_HAS("memoryPolicy", memory_policy_fields, check_memory_policy, OciLinux, memory_policy,
                         memory_policy.present, 0),
        FIELD_OBJECT_HAS("personality", personality_fields, NULL, OciLinux, personality, personality.present,
                         0),
        FIELD_SELF("timeOffsets", parse_time_offsets, 0),
        {},
};
