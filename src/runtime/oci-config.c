/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Strict, table-driven parser of config.json (OCI runtime-spec v1.3.0, Linux).
 *
 * Every JSON object the spec defines has a table (OciJsonField[]) mapping its keys to typed members of the
 * model in oci-config.h. Rules:
 *  - unknown keys are ignored (runtime-spec config.md "Extensibility"); so are the sections of the other
 *    platforms (windows, solaris, vm, zos, freebsd), which are simply unknown keys here;
 *  - a known key given twice, a value of the wrong JSON type, an integer out of the range of its type, a
 *    fraction where an integer is expected, an unknown enum value, a relative path where the spec wants an
 *    absolute one, a string that is not valid UTF-8 or contains NUL: all are errors naming the JSON path;
 *  - valid values that sdrun cannot honour are listed in ONE table, unsupported_features[] below, and
 *    rejected with a message naming the path, never silently dropped.
 *
 * Integers: cJSON keeps numbers as doubles, which cannot represent every uint64/int64. The strict JSON
 * layer (oci-json.c) attaches each number's exact source text to its node and integers are converted from
 * that text with strtoull()/strtoll(), so 18446744073709551615 and 9223372036854775807 are exact and
 * 18446744073709551616, -1 (for an unsigned field), 1.5 and 1e3 are rejected. */

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/resource.h>

#include <cjson/cJSON.h>
#include <sys/capability.h>

#include "fileio.h"
#include "json-util.h"
#include "macro.h"
#include "oci-config.h"
#include "oci-json.h"

#define OCI_CONFIG_SIZE_MAX (4U * 1024U * 1024U)
#define CPU_LIST_MAX 8191 /* highest CPU / NUMA node number accepted in a list (NR_CPUS is at most 8192) */

#define FIELD(name, fn, type, member, flags) { name, fn, offsetof(type, member), OCI_JSON_NO_HAS, flags }
#define FIELD_HAS(name, fn, type, member, has, flags) \
        { name, fn, offsetof(type, member), offsetof(type, has), flags }
/* A field whose parser receives the whole parent object (arrays of structs: pointer + count). */
#define FIELD_SELF(name, fn, flags) { name, fn, 0, OCI_JSON_NO_HAS, flags }

typedef struct NameValue {
        const char *name;
        int value;
} NameValue;

static int lookup_name(const NameValue *table, size_t n, const char *s, int *ret) {
        for (size_t i = 0; i < n; i++)
                if (streq(table[i].name, s)) {
                        *ret = table[i].value;
                        return 0;
                }
        return -ENOENT;
}

static int get_enum(const cJSON *v, const OciJsonPath *p, const NameValue *table, size_t n, const char *what,
                    int *ret, char **reterr) {
        const char *s;
        int r;

        r = oci_json_get_string(v, p, &s, reterr);
        if (r < 0)
                return r;
        if (lookup_name(table, n, s, ret) < 0)
                return oci_json_error(reterr, p, "unknown %s \"%s\"", what, s);
        return 0;
}

/* ---- enum tables (values from the kernel / libseccomp headers' ABI) ---- */

static const char *const namespace_names[_OCI_NS_MAX] = {
        [OCI_NS_PID] = "pid",         [OCI_NS_NETWORK] = "network", [OCI_NS_MOUNT] = "mount",
        [OCI_NS_IPC] = "ipc",         [OCI_NS_UTS] = "uts",         [OCI_NS_USER] = "user",
        [OCI_NS_CGROUP] = "cgroup",   [OCI_NS_TIME] = "time",
};

static const char *const hook_names[_OCI_HOOK_MAX] = {
        [OCI_HOOK_PRESTART] = "prestart",
        [OCI_HOOK_CREATE_RUNTIME] = "createRuntime",
        [OCI_HOOK_CREATE_CONTAINER] = "createContainer",
        [OCI_HOOK_START_CONTAINER] = "startContainer",
        [OCI_HOOK_POSTSTART] = "poststart",
        [OCI_HOOK_POSTSTOP] = "poststop",
};

static const char *const seccomp_action_names[_OCI_SECCOMP_ACTION_MAX] = {
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

static const char *const seccomp_op_names[_OCI_SECCOMP_OP_MAX] = {
        [OCI_SECCOMP_OP_NE] = "SCMP_CMP_NE", [OCI_SECCOMP_OP_LT] = "SCMP_CMP_LT",
        [OCI_SECCOMP_OP_LE] = "SCMP_CMP_LE", [OCI_SECCOMP_OP_EQ] = "SCMP_CMP_EQ",
        [OCI_SECCOMP_OP_GE] = "SCMP_CMP_GE", [OCI_SECCOMP_OP_GT] = "SCMP_CMP_GT",
        [OCI_SECCOMP_OP_MASKED_EQ] = "SCMP_CMP_MASKED_EQ",
};

static const char *const seccomp_arch_names[] = {
        "SCMP_ARCH_X86",      "SCMP_ARCH_X86_64",      "SCMP_ARCH_X32",         "SCMP_ARCH_ARM",
        "SCMP_ARCH_AARCH64",  "SCMP_ARCH_LOONGARCH64", "SCMP_ARCH_M68K",        "SCMP_ARCH_MIPS",
        "SCMP_ARCH_MIPS64",   "SCMP_ARCH_MIPS64N32",   "SCMP_ARCH_MIPSEL",      "SCMP_ARCH_MIPSEL64",
        "SCMP_ARCH_MIPSEL64N32", "SCMP_ARCH_PPC",      "SCMP_ARCH_PPC64",       "SCMP_ARCH_PPC64LE",
        "SCMP_ARCH_S390",     "SCMP_ARCH_S390X",       "SCMP_ARCH_SH",          "SCMP_ARCH_SHEB",
        "SCMP_ARCH_PARISC",   "SCMP_ARCH_PARISC64",    "SCMP_ARCH_RISCV64",
};

static const char *const seccomp_flag_names[] = {
        "SECCOMP_FILTER_FLAG_TSYNC",
        "SECCOMP_FILTER_FLAG_LOG",
        "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
        "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
};

static const NameValue rlimit_table[] = {
        { "RLIMIT_AS", RLIMIT_AS },           { "RLIMIT_CORE", RLIMIT_CORE },
        { "RLIMIT_CPU", RLIMIT_CPU },         { "RLIMIT_DATA", RLIMIT_DATA },
        { "RLIMIT_FSIZE", RLIMIT_FSIZE },     { "RLIMIT_LOCKS", RLIMIT_LOCKS },
        { "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK }, { "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE },
        { "RLIMIT_NICE", RLIMIT_NICE },       { "RLIMIT_NOFILE", RLIMIT_NOFILE },
        { "RLIMIT_NPROC", RLIMIT_NPROC },     { "RLIMIT_RSS", RLIMIT_RSS },
        { "RLIMIT_RTPRIO", RLIMIT_RTPRIO },   { "RLIMIT_RTTIME", RLIMIT_RTTIME },
        { "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING }, { "RLIMIT_STACK", RLIMIT_STACK },
};

#define OCI_SCHED_ISO 4 /* reserved by Linux, never implemented */
static const NameValue sched_policy_table[] = {
        { "SCHED_OTHER", SCHED_OTHER }, { "SCHED_FIFO", SCHED_FIFO }, { "SCHED_RR", SCHED_RR },
        { "SCHED_BATCH", SCHED_BATCH }, { "SCHED_ISO", OCI_SCHED_ISO }, { "SCHED_IDLE", SCHED_IDLE },
        { "SCHED_DEADLINE", 6 /* SCHED_DEADLINE */ },
};

/* <linux/sched/types.h> sched_attr.sched_flags bits */
static const NameValue sched_flag_table[] = {
        { "SCHED_FLAG_RESET_ON_FORK", 0x01 }, { "SCHED_FLAG_RECLAIM", 0x02 },
        { "SCHED_FLAG_DL_OVERRUN", 0x04 },    { "SCHED_FLAG_KEEP_POLICY", 0x08 },
        { "SCHED_FLAG_KEEP_PARAMS", 0x10 },   { "SCHED_FLAG_UTIL_CLAMP_MIN", 0x20 },
        { "SCHED_FLAG_UTIL_CLAMP_MAX", 0x40 },
};

/* <linux/ioprio.h> */
static const NameValue ioprio_class_table[] = {
        { "IOPRIO_CLASS_RT", 1 },
        { "IOPRIO_CLASS_BE", 2 },
        { "IOPRIO_CLASS_IDLE", 3 },
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

static const char *const rootfs_propagation_names[] = { "private", "shared", "slave", "unbindable" };

const char *oci_namespace_type_to_string(OciNamespaceType t) {
        return t >= 0 && t < _OCI_NS_MAX ? namespace_names[t] : NULL;
}

const char *oci_hook_kind_to_string(OciHookKind k) {
        return k >= 0 && k < _OCI_HOOK_MAX ? hook_names[k] : NULL;
}

const char *oci_seccomp_action_to_string(OciSeccompAction a) {
        return a >= 0 && a < _OCI_SECCOMP_ACTION_MAX ? seccomp_action_names[a] : NULL;
}

const char *oci_seccomp_op_to_string(OciSeccompOp o) {
        return o >= 0 && o < _OCI_SECCOMP_OP_MAX ? seccomp_op_names[o] : NULL;
}

static int strv_index(const char *const *names, size_t n, const char *s) {
        for (size_t i = 0; i < n; i++)
                if (names[i] && streq(names[i], s))
                        return (int) i;
        return -1;
}

/* ---- value validators ---- */

/* "0-3,7": comma-separated numbers or ranges a-b with a <= b; blanks around items allowed (the schema's
 * pattern is ^[0-9, -]*$). The empty string is valid (no list). */
static int validate_cpu_list(const char *s, const OciJsonPath *p, char **reterr) {
        const char *c = s;

        while (*c == ' ')
                c++;
        if (!*c)
                return 0;

        for (;;) {
                unsigned long a, b;
                char *end;

                while (*c == ' ')
                        c++;
                if (*c < '0' || *c > '9')
                        return oci_json_error(reterr, p, "invalid CPU/node list \"%s\"", s);
                errno = 0;
                a = strtoul(c, &end, 10);
                if (errno != 0 || a > CPU_LIST_MAX)
                        return oci_json_error(reterr, p, "CPU/node number out of range (0..%d) in \"%s\"",
                                              CPU_LIST_MAX, s);
                c = end;
                b = a;
                if (*c == '-') {
                        c++;
                        if (*c < '0' || *c > '9')
                                return oci_json_error(reterr, p, "invalid CPU/node list \"%s\"", s);
                        errno = 0;
                        b = strtoul(c, &end, 10);
                        if (errno != 0 || b > CPU_LIST_MAX)
                                return oci_json_error(reterr, p, "CPU/node number out of range (0..%d) in \"%s\"",
                                                      CPU_LIST_MAX, s);
                        if (b < a)
                                return oci_json_error(reterr, p, "invalid range %lu-%lu in \"%s\"", a, b, s);
                        c = end;
                }
                while (*c == ' ')
                        c++;
                if (!*c)
                        return 0;
                if (*c != ',')
                        return oci_json_error(reterr, p, "invalid CPU/node list \"%s\"", s);
                c++;
        }
}

static int field_cpu_list(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        int r;

        r = oci_json_field_string(v, p, dst, reterr);
        if (r < 0)
                return r;
        return validate_cpu_list(*(char **) dst, p, reterr);
}

/* SemVer 2.0.0 with major version 1: 1.MINOR.PATCH[-PRERELEASE][+BUILD]. */
static bool semver_numeric(const char **c) {
        const char *s = *c;
        size_t n = strspn(s, "0123456789");
        if (n == 0 || (n > 1 && s[0] == '0'))
                return false;
        *c = s + n;
        return true;
}

static bool semver_identifiers(const char **c, bool prerelease) {
        for (;;) {
                const char *s = *c;
                size_t n = strspn(s, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-");
                if (n == 0)
                        return false;
                if (prerelease && strspn(s, "0123456789") == n && n > 1 && s[0] == '0')
                        return false; /* numeric identifiers must not have leading zeros */
                *c = s + n;
                if (**c != '.')
                        return true;
                (*c)++;
        }
}

static int field_oci_version(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        const char *c;
        int r;

        r = oci_json_field_string(v, p, dst, reterr);
        if (r < 0)
                return r;
        c = *(char **) dst;

        if (!semver_numeric(&c) || *c != '.' || (c++, !semver_numeric(&c)) || *c != '.' ||
            (c++, !semver_numeric(&c)) || (*c == '-' && (c++, !semver_identifiers(&c, true))) ||
            (*c == '+' && (c++, !semver_identifiers(&c, false))) || *c)
                return oci_json_error(reterr, p, "\"%s\" is not a SemVer 2.0.0 version", *(char **) dst);
        if (!strneq(*(char **) dst, "1.", 2))
                return oci_json_error(reterr, p, "unsupported version \"%s\" (sdrun implements 1.x)",
                                      *(char **) dst);
        return 0;
}

static int check_env_entry(const char *e, const OciJsonPath *p, char **reterr) {
        const char *eq = strchr(e, '=');
        if (!eq || eq == e)
                return oci_json_error(reterr, p, "environment entry \"%s\" is not of the form NAME=VALUE", e);
        return 0;
}

static int field_env(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        char **l;
        size_t i = 0;
        int r;

        r = oci_json_field_strv(v, p, dst, reterr);
        if (r < 0)
                return r;
        l = *(char ***) dst;
        for (char **e = l; *e; e++, i++) {
                const OciJsonPath ep = OCI_JSON_INDEX(p, i);
                r = check_env_entry(*e, &ep, reterr);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- maps (string -> string) ---- */

static void key_values_free(OciKeyValue *kv, size_t n) {
        FOREACH_ARRAY(i, kv, n) {
                free(i->key);
                free(i->value);
        }
        free(kv);
}

static int cmp_string_ptr(const void *a, const void *b) {
        return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* cJSON keeps duplicate keys; JSON maps with duplicates are ambiguous, so refuse them. O(n log n). */
static int check_no_duplicate_keys(const cJSON *obj, const OciJsonPath *p, char **reterr) {
        _cleanup_free_ const char **keys = NULL;
        const cJSON *m;
        size_t n = 0, i = 0;

        cJSON_ArrayForEach(m, obj)
                n++;
        if (n < 2)
                return 0;
        keys = malloc(n * sizeof(char *));
        if (!keys)
                return -ENOMEM;
        cJSON_ArrayForEach(m, obj)
                keys[i++] = m->string;
        qsort(keys, n, sizeof(char *), cmp_string_ptr);
        for (i = 1; i < n; i++)
                if (streq(keys[i - 1], keys[i])) {
                        const OciJsonPath kp = OCI_JSON_KEY(p, keys[i]);
                        return oci_json_error(reterr, &kp, "duplicate key");
                }
        return 0;
}

typedef int (*KeyCheckFn)(const char *key, const OciJsonPath *p, char **reterr);

static int parse_string_map(const cJSON *v, const OciJsonPath *p, OciKeyValue **ret, size_t *ret_n, KeyCheckFn check,
                            char **reterr) {
        const cJSON *m;
        size_t n = 0, i = 0;
        int r;

        assert(!*ret);

        r = oci_json_check_type(v, p, cJSON_Object, reterr);
        if (r < 0)
                return r;
        cJSON_ArrayForEach(m, v) {
                r = oci_json_check_key(m, p, /* require_nonempty= */ true, reterr);
                if (r < 0)
                        return r;
                n++;
        }
        r = check_no_duplicate_keys(v, p, reterr);
        if (r < 0)
                return r;
        if (n == 0)
                return 0;

        *ret = calloc(n, sizeof(OciKeyValue));
        if (!*ret)
                return -ENOMEM;
        *ret_n = n;

        cJSON_ArrayForEach(m, v) {
                const OciJsonPath kp = OCI_JSON_KEY(p, m->string);
                if (check) {
                        r = check(m->string, &kp, reterr);
                        if (r < 0)
                                return r;
                }
                r = oci_json_field_string(m, &kp, &(*ret)[i].value, reterr);
                if (r < 0)
                        return r;
                (*ret)[i].key = strdup(m->string);
                if (!(*ret)[i].key)
                        return -ENOMEM;
                i++;
        }
        return 0;
}

/* ---- process ---- */

static int parse_console_size(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        static const OciJsonField table[] = {
                FIELD("height", oci_json_field_uint64, OciProcess, console_height, OCI_JSON_MANDATORY),
                FIELD("width", oci_json_field_uint64, OciProcess, console_width, OCI_JSON_MANDATORY),
                {},
        };
        return oci_json_dispatch(v, p, table, dst, reterr);
}

static int parse_additional_gids(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        OciUser *u = dst;
        const cJSON *e;
        size_t n = 0, i = 0;
        int r;

        r = oci_json_check_type(v, p, cJSON_Array, reterr);
        if (r < 0)
                return r;
        cJSON_ArrayForEach(e, v)
                n++;
        free(u->additional_gids);
        u->additional_gids = calloc(MAX(n, (size_t) 1), sizeof(uint32_t));
        if (!u->additional_gids)
                return -ENOMEM;
        cJSON_ArrayForEach(e, v) {
                const OciJsonPath ep = OCI_JSON_INDEX(p, i);
                r = oci_json_field_uint32(e, &ep, &u->additional_gids[i], reterr);
                if (r < 0)
                        return r;
                i++;
        }
        u->n_additional_gids = n;
        return 0;
}

static int field_umask(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        uint64_t u;
        int r;

        r = oci_json_get_unsigned(v, p, 0777, &u, reterr);
        if (r < 0)
                return r;
        *(uint32_t *) dst = (uint32_t) u;
        return 0;
}

static int parse_user(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        static const OciJsonField table[] = {
                FIELD("uid", oci_json_field_uint32, OciUser, uid, OCI_JSON_MANDATORY),
                FIELD("gid", oci_json_field_uint32, OciUser, gid, OCI_JSON_MANDATORY),
                FIELD_HAS("umask", field_umask, OciUser, umask, has_umask, 0),
                FIELD_SELF("additionalGids", parse_additional_gids, 0),
                /* Windows-only; kept but not used on Linux (the spec defines it for Windows). */
                FIELD("username", oci_json_field_string, OciUser, username, 0),
                {},
        };
        return oci_json_dispatch(v, p, table, dst, reterr);
}

static int parse_cap_list(const cJSON *v, const OciJsonPath *p, int **ret, size_t *ret_n, char **reterr) {
        const cJSON *e;
        size_t n = 0, i = 0;
        int r;

        r = oci_json_check_type(v, p, cJSON_Array, reterr);
        if (r < 0)
                return r;
        cJSON_ArrayForEach(e, v)
                n++;
        free(*ret);
        *ret = calloc(MAX(n, (size_t) 1), sizeof(int));
        if (!*ret)
                return -ENOMEM;
        cJSON_ArrayForEach(e, v) {
                const OciJsonPath ep = OCI_JSON_INDEX(p, i);
                const char *name;
                cap_value_t cap;

                r = oci_json_get_string(e, &ep, &name, reterr);
                if (r < 0)
                        return r;
                if (!strneq(name, "CAP_", 4) || cap_from_name(name, &cap) < 0)
                        return oci_json_error(reterr, &ep, "unknown capability \"%s\"", name);
                (*ret)[i++] = (int) cap;
        }
        *ret_n = n;
        return 0;
}

#define DEFINE_CAP_FIELD(set)                                                                         \
        static int parse_cap_##set(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) { \
                OciCapabilities *c = dst;                                                             \
                return parse_cap_list(v, p, &c->set, &c->n_##set, reterr);                            \
        }
DEFINE_CAP_FIELD(bounding)
DEFINE_CAP_FIELD(effective)
DEFINE_CAP_FIELD(inheritable)
DEFINE_CAP_FIELD(permitted)
DEFINE_CAP_FIELD(ambient)

static int parse_capabilities(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        static const OciJsonField table[] = {
                FIELD_SELF("bounding", parse_cap_bounding, 0),
                FIELD_SELF("effective", parse_cap_effective, 0),
                FIELD_SELF("inheritable", parse_cap_inheritable, 0),
                FIELD_SELF("permitted", parse_cap_permitted, 0),
                FIELD_SELF("ambient", parse_cap_ambient, 0),
                {},
        };
        OciCapabilities *c = dst;
        c->present = true;
        return oci_json_dispatch(v, p, table, dst, reterr);
}

static int field_rlimit_type(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return get_enum(v, p, rlimit_table, ELEMENTSOF(rlimit_table), "resource limit", dst, reterr);
}

static int parse_rlimit(const cJSON *v, const OciJsonPath *p, void *elem, char **reterr) {
        static const OciJsonField table[] = {
                FIELD("type", field_rlimit_type, OciRlimit, type, OCI_JSON_MANDATORY),
                FIELD("soft", oci_json_field_uint64, OciRlimit, soft, OCI_JSON_MANDATORY),
                FIELD("hard", oci_json_field_uint64, OciRlimit, hard, OCI_JSON_MANDATORY),
                {},
        };
        OciRlimit *l = elem;
        int r;

        r = oci_json_dispatch(v, p, table, elem, reterr);
        if (r < 0)
                return r;
        if (l->soft > l->hard) {
                const OciJsonPath sp = OCI_JSON_KEY(p, "soft");
                return oci_json_error(reterr, &sp, "soft limit is larger than the hard limit");
        }
        return 0;
}

static int parse_rlimits(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        OciProcess *proc = dst;
        int r;

        r = oci_json_parse_array(v, p, sizeof(OciRlimit), (void **) &proc->rlimits, &proc->n_rlimits, parse_rlimit,
                                 reterr);
        if (r < 0)
                return r;
        for (size_t i = 0; i < proc->n_rlimits; i++)
                for (size_t j = 0; j < i; j++)
                        if (proc->rlimits[i].type == proc->rlimits[j].type) {
                                const OciJsonPath ep = OCI_JSON_INDEX(p, i), tp = OCI_JSON_KEY(&ep, "type");
                                return oci_json_error(reterr, &tp, "duplicate resource limit (also in entry %zu)", j);
                        }
        return 0;
}

static int field_sched_policy(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return get_enum(v, p, sched_policy_table, ELEMENTSOF(sched_policy_table), "scheduling policy", dst, reterr);
}

static int field_sched_flags(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        const cJSON *e;
        size_t i = 0;
        int r;

        r = oci_json_check_type(v, p, cJSON_Array, reterr);
        if (r < 0)
                return r;
        cJSON_ArrayForEach(e, v) {
                const OciJsonPath ep = OCI_JSON_INDEX(p, i++);
                int bit;
                r = get_enum(e, &ep, sched_flag_table, ELEMENTSOF(sched_flag_table), "scheduler flag", &bit, reterr);
                if (r < 0)
                        return r;
                *(uint64_t *) dst |= (uint64_t) bit;
        }
        return 0;
}

static int parse_scheduler(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        static const OciJsonField table[] = {
                FIELD("policy", field_sched_policy, OciScheduler, policy, OCI_JSON_MANDATORY),
                FIELD_HAS("nice", oci_json_field_int32, OciScheduler, nice, has_nice, 0),
                FIELD_HAS("priority", oci_json_field_int32, OciScheduler, priority, has_priority, 0),
                FIELD("flags", field_sched_flags, OciScheduler, flags, 0),
                FIELD_HAS("runtime", oci_json_field_uint64, OciScheduler, runtime, has_runtime, 0),
                FIELD_HAS("deadline", oci_json_field_uint64, OciScheduler, deadline, has_deadline, 0),
                FIELD_HAS("period", oci_json_field_uint64, OciScheduler, period, has_period, 0),
                {},
        };
        OciScheduler *s = dst;
        int r;

        s->present = true;
        r = oci_json_dispatch(v, p, table, dst, reterr);
        if (r < 0)
                return r;
        if (s->has_nice && (s->nice < -20 || s->nice > 19)) {
                const OciJsonPath np = OCI_JSON_KEY(p, "nice");
                return oci_json_error(reterr, &np, "value %" PRId32 " out of range (-20..19)", s->nice);
        }
        if (s->has_priority && (s->priority < 0 || s->priority > 99)) {
                const OciJsonPath np = OCI_JSON_KEY(p, "priority");
                return oci_json_error(reterr, &np, "value %" PRId32 " out of range (0..99)", s->priority);
        }
        return 0;
}

static int field_ioprio_class(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return get_enum(v, p, ioprio_class_table, ELEMENTSOF(ioprio_class_table), "I/O priority class", dst, reterr);
}

static int parse_io_priority(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        /* "priority" is REQUIRED in the prose but not in the schema; absent means 0, as Go's zero value. */
        static const OciJsonField table[] = {
                FIELD("class", field_ioprio_class, OciIoPriority, klass, OCI_JSON_MANDATORY),
                FIELD("priority", oci_json_field_int32, OciIoPriority, priority, 0),
                {},
        };
        OciIoPriority *io = dst;
        int r;

        io->present = true;
        r = oci_json_dispatch(v, p, table, dst, reterr);
        if (r < 0)
                return r;
        if (io->priority < 0 || io->priority > 7) {
                const OciJsonPath pp = OCI_JSON_KEY(p, "priority");
                return oci_json_error(reterr, &pp, "value %" PRId32 " out of range (0..7)", io->priority);
        }
        return 0;
}

static int parse_exec_cpu_affinity(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        static const OciJsonField table[] = {
                FIELD("initial", field_cpu_list, OciProcess, exec_cpu_affinity_initial, 0),
                FIELD("final", field_cpu_list, OciProcess, exec_cpu_affinity_final, 0),
                {},
        };
        return oci_json_dispatch(v, p, table, dst, reterr);
}

static int field_oom_score_adj(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        int64_t s;
        int r;

        r = oci_json_get_signed(v, p, -1000, 1000, &s, reterr);
        if (r < 0)
                return r;
        *(int *) dst = (int) s;
        return 0;
}

static int field_args(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        int r;

        r = oci_json_field_strv(v, p, dst, reterr);
        if (r < 0)
                return r;
        if (!(*(char ***) dst)[0])
                return oci_json_error(reterr, p, "must contain at least one entry");
        return 0;
}

static const OciJsonField process_table[] = {
        FIELD("terminal", oci_json_field_bool, OciProcess, terminal, 0),
        { "consoleSize", parse_console_size, 0, offsetof(OciProcess, has_console_size), 0 },
        FIELD("user", parse_user, OciProcess, user, 0),
        FIELD("args", field_args, OciProcess, args, OCI_JSON_MANDATORY),
        FIELD("commandLine", oci_json_field_string, OciProcess, command_line, 0),
        FIELD("env", field_env, OciProcess, env, 0),
        FIELD("cwd", oci_json_field_absolute_path, OciProcess, cwd, OCI_JSON_MANDATORY),
        FIELD("capabilities", parse_capabilities, OciProcess, capabilities, 0),
        FIELD_SELF("rlimits", parse_rlimits, 0),
        FIELD("noNewPrivileges", oci_json_field_bool, OciProcess, no_new_privileges, 0),
        FIELD("apparmorProfile", oci_json_field_string, OciProcess, apparmor_profile, 0),
        FIELD_HAS("oomScoreAdj", field_oom_score_adj, OciProcess, oom_score_adj, has_oom_score_adj, 0),
        FIELD("selinuxLabel", oci_json_field_string, OciProcess, selinux_label, 0),
        FIELD("scheduler", parse_scheduler, OciProcess, scheduler, 0),
        FIELD("ioPriority", parse_io_priority, OciProcess, io_priority, 0),
        FIELD_SELF("execCPUAffinity", parse_exec_cpu_affinity, 0),
        {},
};

static int parse_process_object(const cJSON *v, const OciJsonPath *p, OciProcess *proc, char **reterr) {
        int r;

        /* commandLine is Windows-only; on Linux "args" is REQUIRED, so refuse it rather than ignore it: the
         * author plainly meant it to be run. Check before the table so the message names it. */
        if (cJSON_IsObject(v) && cJSON_GetObjectItemCaseSensitive(v, "commandLine")) {
                const OciJsonPath cp = OCI_JSON_KEY(p, "commandLine");
                return oci_json_error(reterr, &cp, "is Windows-only; use \"args\" on Linux");
        }

        r = oci_json_dispatch(v, p, process_table, proc, reterr);
        if (r < 0)
                return r;

        /* consoleSize is ignored unless terminal is true (spec); when used, it must fit a struct winsize. */
        if (proc->terminal && proc->has_console_size &&
            (proc->console_height > UINT16_MAX || proc->console_width > UINT16_MAX)) {
                const OciJsonPath cp = OCI_JSON_KEY(p, "consoleSize");
                return oci_json_error(reterr, &cp, "height and width must be at most 65535");
        }
        return 0;
}

static int field_process(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return parse_process_object(v, p, dst, reterr);
}

/* ---- root, mounts, hooks ---- */

static int parse_root(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        static const OciJsonField table[] = {
                FIELD("path", oci_json_field_nonempty_string, OciConfig, root_path, OCI_JSON_MANDATORY),
                FIELD("readonly", oci_json_field_bool, OciConfig, root_readonly, 0),
                {},
        };
        return oci_json_dispatch(v, p, table, dst, reterr);
}

static int parse_id_mapping(const cJSON *v, const OciJsonPath *p, void *elem, char **reterr) {
        static const OciJsonField table[] = {
                FIELD("containerID", oci_json_field_uint32, OciIdMapping, container_id, OCI_JSON_MANDATORY),
                FIELD("hostID", oci_json_field_uint32, OciIdMapping, host_id, OCI_JSON_MANDATORY),
                FIELD("size", oci_json_field_uint32, OciIdMapping, size, OCI_JSON_MANDATORY),
                {},
        };
        OciIdMapping *m = elem;
        int r;

        r = oci_json_dispatch(v, p, table, elem, reterr);
        if (r < 0)
                return r;
        if (m->size == 0) {
                const OciJsonPath sp = OCI_JSON_KEY(p, "size");
                return oci_json_error(reterr, &sp, "must be at least 1");
        }
        if ((uint64_t) m->container_id + m->size > UINT64_C(1) << 32 ||
            (uint64_t) m->host_id + m->size > UINT64_C(1) << 32) {
                const OciJsonPath sp = OCI_JSON_KEY(p, "size");
                return oci_json_error(reterr, &sp, "range exceeds the 32-bit ID space");
        }
        return 0;
}

static int parse_mount_uid_mappings(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        OciMount *m = dst;
        return oci_json_parse_array(v, p, sizeof(OciIdMapping), (void **) &m->uid_mappings, &m->n_uid_mappings,
                                    parse_id_mapping, reterr);
}

static int parse_mount_gid_mappings(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        OciMount *m = dst;
        return oci_json_parse_array(v, p, sizeof(OciIdMapping), (void **) &m->gid_mappings, &m->n_gid_mappings,
                                    parse_id_mapping, reterr);
}

static bool strv_contains(char **l, const char *s) {
        for (char **i = l; i && *i; i++)
                if (streq(*i, s))
                        return true;
        return false;
}

static int parse_mount(const cJSON *v, const OciJsonPath *p, void *elem, char **reterr) {
        static const OciJsonField table[] = {
                /* Linux: SHOULD be absolute; relative (deprecated) means relative to "/". Kept as written. */
                FIELD("destination", oci_json_field_nonempty_string, OciMount, destination, OCI_JSON_MANDATORY),
                FIELD("type", oci_json_field_string, OciMount, type, 0),
                FIELD("source", oci_json_field_string, OciMount, source, 0),
                FIELD("options", oci_json_field_strv, OciMount, options, 0),
                FIELD_SELF("uidMappings", parse_mount_uid_mappings, 0),
                FIELD_SELF("gidMappings", parse_mount_gid_mappings, 0),
                {},
        };
        OciMount *m = elem;
        int r;

        r = oci_json_dispatch(v, p, table, elem, reterr);
        if (r < 0)
                return r;
        if ((m->n_uid_mappings > 0 || m->n_gid_mappings > 0) && !strv_contains(m->options, "idmap") &&
            !strv_contains(m->options, "ridmap")) {
                const OciJsonPath mp = OCI_JSON_KEY(p, m->n_uid_mappings > 0 ? "uidMappings" : "gidMappings");
                return oci_json_error(reterr, &mp, "requires the \"idmap\" or \"ridmap\" mount option");
        }
        return 0;
}

static int parse_mounts(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        OciConfig *c = dst;
        return oci_json_parse_array(v, p, sizeof(OciMount), (void **) &c->mounts, &c->n_mounts, parse_mount, reterr);
}

static int field_hook_timeout(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        int64_t s;
        int r;

        r = oci_json_get_signed(v, p, INT64_MIN, INT64_MAX, &s, reterr);
        if (r < 0)
                return r;
        if (s < 1 || s > INT_MAX)
                return oci_json_error(reterr, p, "must be a number of seconds in 1..%d", INT_MAX);
        *(int *) dst = (int) s;
        return 0;
}

static int parse_hook(const cJSON *v, const OciJsonPath *p, void *elem, char **reterr) {
        static const OciJsonField table[] = {
                FIELD("path", oci_json_field_absolute_path, OciHook, path, OCI_JSON_MANDATORY),
                FIELD("args", oci_json_field_strv, OciHook, args, 0),
                FIELD("env", field_env, OciHook, env, 0),
                FIELD_HAS("timeout", field_hook_timeout, OciHook, timeout, has_timeout, 0),
                {},
        };
        return oci_json_dispatch(v, p, table, elem, reterr);
}

#define DEFINE_HOOK_FIELD(fn, kind)                                                                         \
        static int fn(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {                     \
                OciHooks *h = dst;                                                                          \
                return oci_json_parse_array(v, p, sizeof(OciHook), (void **) &h->hooks[kind],              \
                                            &h->n_hooks[kind], parse_hook, reterr);                         \
        }
DEFINE_HOOK_FIELD(parse_hooks_prestart, OCI_HOOK_PRESTART)
DEFINE_HOOK_FIELD(parse_hooks_create_runtime, OCI_HOOK_CREATE_RUNTIME)
DEFINE_HOOK_FIELD(parse_hooks_create_container, OCI_HOOK_CREATE_CONTAINER)
DEFINE_HOOK_FIELD(parse_hooks_start_container, OCI_HOOK_START_CONTAINER)
DEFINE_HOOK_FIELD(parse_hooks_poststart, OCI_HOOK_POSTSTART)
DEFINE_HOOK_FIELD(parse_hooks_poststop, OCI_HOOK_POSTSTOP)

static int parse_hooks(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        static const OciJsonField table[] = {
                FIELD_SELF("prestart", parse_hooks_prestart, 0),
                FIELD_SELF("createRuntime", parse_hooks_create_runtime, 0),
                FIELD_SELF("createContainer", parse_hooks_create_container, 0),
                FIELD_SELF("startContainer", parse_hooks_start_container, 0),
                FIELD_SELF("poststart", parse_hooks_poststart, 0),
                FIELD_SELF("poststop", parse_hooks_poststop, 0),
                {},
        };
        return oci_json_dispatch(v, p, table, dst, reterr);
}

static int parse_annotations(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        OciConfig *c = dst;
        return parse_string_map(v, p, &c->annotations, &c->n_annotations, NULL, reterr);
}

/* ---- linux: namespaces, mappings, devices ---- */

static int field_namespace_type(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        const char *s;
        int r, i;

        r = oci_json_get_string(v, p, &s, reterr);
        if (r < 0)
                return r;
        i = strv_index(namespace_names, _OCI_NS_MAX, s);
        if (i < 0)
                return oci_json_error(reterr, p, "unknown namespace \"%s\"", s);
        *(OciNamespaceType *) dst = (OciNamespaceType) i;
        return 0;
}

static int parse_namespace(const cJSON *v, const OciJsonPath *p, void *elem, char **reterr) {
        static const OciJsonField table[] = {
                FIELD("type", field_namespace_type, OciNamespace, type, OCI_JSON_MANDATORY),
                FIELD("path", oci_json_field_absolute_path, OciNamespace, path, 0),
                {},
        };
        return oci_json_dispatch(v, p, table, elem, reterr);
}

static int parse_namespaces(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        OciLinux *l = dst;
        int r;

        r = oci_json_parse_array(v, p, sizeof(OciNamespace), (void **) &l->namespaces, &l->n_namespaces,
                                 parse_namespace, reterr);
        if (r < 0)
                return r;
        for (size_t i = 0; i < l->n_namespaces; i++)
                for (size_t j = 0; j < i; j++)
                        if (l->namespaces[i].type == l->namespaces[j].type) {
                                const OciJsonPath ep = OCI_JSON_INDEX(p, i), tp = OCI_JSON_KEY(&ep, "type");
                                return oci_json_error(reterr, &tp, "duplicate namespace \"%s\" (also in entry %zu)",
                                                      namespace_names[l->namespaces[i].type], j);
                        }
        return 0;
}

static int parse_linux_uid_mappings(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        OciLinux *l = dst;
        return oci_json_parse_array(v, p, sizeof(OciIdMapping), (void **) &l->uid_mappings, &l->n_uid_mappings,
                                    parse_id_mapping, reterr);
}

static int parse_linux_gid_mappings(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        OciLinux *l = dst;
        return oci_json_parse_array(v, p, sizeof(OciIdMapping), (void **) &l->gid_mappings, &l->n_gid_mappings,
                                    parse_id_mapping, reterr);
}

static int field_device_type(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        const char *s;
        int r;

        r = oci_json_get_string(v, p, &s, reterr);
        if (r < 0)
                return r;
        if (strlen(s) != 1 || !strchr("cbup", s[0]))
                return oci_json_error(reterr, p, "unknown device type \"%s\" (expected c, b, u or p)", s);
        *(char *) dst = s[0];
        return 0;
}

/* Device numbers: int64 in the schema; Linux dev_t holds 32-bit majors and minors. */
static int field_device_number(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        int64_t s;
        int r;

        r = oci_json_get_signed(v, p, 0, UINT32_MAX, &s, reterr);
        if (r < 0)
                return r;
        *(int64_t *) dst = s;
        return 0;
}

static int field_file_mode(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        uint64_t u;
        int r;

        /* Decimal in JSON; permission bits and setuid/setgid/sticky only (the schema says max 511). */
        r = oci_json_get_unsigned(v, p, 07777, &u, reterr);
        if (r < 0)
                return r;
        *(uint32_t *) dst = (uint32_t) u;
        return 0;
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
        if (d->type != 'p' && (d->major < 0 || d->minor < 0)) {
                const OciJsonPath mp = OCI_JSON_KEY(p, d->major < 0 ? "major" : "minor");
                return oci_json_error(reterr, &mp, "required for device type '%c'", d->type);
        }
        return 0;
}

static int parse_devices(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        OciLinux *l = dst;
        return oci_json_parse_array(v, p, sizeof(OciDevice), (void **) &l->devices, &l->n_devices, parse_device,
                                    reterr);
}

/* ---- linux.resources ---- */

static int field_cgroup_device_type(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        const char *s;
        int r;

        r = oci_json_get_string(v, p, &s, reterr);
        if (r < 0)
                return r;
        if (strlen(s) != 1 || !strchr("acb", s[0]))
                return oci_json_error(reterr, p, "unknown device type \"%s\" (expected a, c or b)", s);
        *(char *) dst = s[0];
        return 0;
}

/* major/minor of a device rule: a device number, or -1 for "all" (the '*' of the cgroup v1 syntax). */
static int field_cgroup_device_number(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        int64_t s;
        int r;

        r = oci_json_get_signed(v, p, -1, UINT32_MAX, &s, reterr);
        if (r < 0)
                return r;
        *(int64_t *) dst = s;
        return 0;
}

static int field_cgroup_device_access(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        const char *s;
        bool rd = false, wr = false, mk = false;
        char *a = dst;
        int r;

        r = oci_json_get_string(v, p, &s, reterr);
        if (r < 0)
                return r;
        if (isempty(s))
                return oci_json_error(reterr, p, "must be a non-empty combination of 'r', 'w' and 'm'");
        for (const char *c = s; *c; c++) {
                bool *b = *c == 'r' ? &rd : *c == 'w' ? &wr : *c == 'm' ? &mk : NULL;
                if (!b || *b)
                        return oci_json_error(reterr, p, "invalid access \"%s\" (a combination of 'r', 'w' and 'm')",
                                              s);
                *b = true;
        }
        size_t n = 0;
        if (rd)
                a[n++] = 'r';
        if (wr)
                a[n++] = 'w';
        if (mk)
                a[n++] = 'm';
        a[n] = 0;
        return 0;
}

static int parse_cgroup_device(const cJSON *v, const OciJsonPath *p, void *elem, char **reterr) {
        static const OciJsonField table[] = {
                FIELD("allow", oci_json_field_bool, OciDeviceCgroup, allow, OCI_JSON_MANDATORY),
                FIELD("type", field_cgroup_device_type, OciDeviceCgroup, type, 0),
                FIELD("major", field_cgroup_device_number, OciDeviceCgroup, major, 0),
                FIELD("minor", field_cgroup_device_number, OciDeviceCgroup, minor, 0),
                FIELD("access", field_cgroup_device_access, OciDeviceCgroup, access, 0),
                {},
        };
        OciDeviceCgroup *d = elem;

        d->type = 'a';
        d->major = d->minor = -1;
        strcpy(d->access, "rwm");
        return oci_json_dispatch(v, p, table, elem, reterr);
}

static int parse_resources_devices(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        OciResources *res = dst;
        return oci_json_parse_array(v, p, sizeof(OciDeviceCgroup), (void **) &res->devices, &res->n_devices,
                                    parse_cgroup_device, reterr);
}

/* Memory amounts: bytes, or -1 for unlimited. */
static int field_memory_amount(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        int64_t s;
        int r;

        r = oci_json_get_signed(v, p, -1, INT64_MAX, &s, reterr);
        if (r < 0)
                return r;
        *(int64_t *) dst = s;
        return 0;
}

static int field_swappiness(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return oci_json_get_unsigned(v, p, 100, dst, reterr);
}

typedef __typeof__(((OciResources *) NULL)->memory) OciMemory;
typedef __typeof__(((OciResources *) NULL)->cpu) OciCpu;
typedef __typeof__(((OciResources *) NULL)->pids) OciPids;
typedef __typeof__(((OciResources *) NULL)->block_io) OciBlockIo;
typedef __typeof__(((OciResources *) NULL)->network) OciNetwork;
typedef __typeof__(((OciLinux *) NULL)->intel_rdt) OciIntelRdt;
typedef __typeof__(((OciLinux *) NULL)->memory_policy) OciMemoryPolicy;
typedef __typeof__(((OciLinux *) NULL)->personality) OciPersonality;

static int parse_memory(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        static const OciJsonField table[] = {
                FIELD_HAS("limit", field_memory_amount, OciMemory, limit, has_limit, 0),
                FIELD_HAS("reservation", field_memory_amount, OciMemory, reservation, has_reservation, 0),
                FIELD_HAS("swap", field_memory_amount, OciMemory, swap, has_swap, 0),
                FIELD_HAS("kernel", field_memory_amount, OciMemory, kernel, has_kernel, 0),
                FIELD_HAS("kernelTCP", field_memory_amount, OciMemory, kernel_tcp, has_kernel_tcp, 0),
                FIELD_HAS("swappiness", field_swappiness, OciMemory, swappiness, has_swappiness, 0),
                FIELD_HAS("disableOOMKiller", oci_json_field_bool, OciMemory, disable_oom_killer,
                          has_disable_oom_killer, 0),
                FIELD_HAS("useHierarchy", oci_json_field_bool, OciMemory, use_hierarchy, has_use_hierarchy, 0),
                FIELD_HAS("checkBeforeUpdate", oci_json_field_bool, OciMemory, check_before_update,
                          has_check_before_update, 0),
                {},
        };
        ((OciMemory *) dst)->present = true;
        return oci_json_dispatch(v, p, table, dst, reterr);
}

static int field_idle(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return oci_json_get_signed(v, p, 0, 1, dst, reterr);
}

static int parse_cpu(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        static const OciJsonField table[] = {
                FIELD_HAS("shares", oci_json_field_uint64, OciCpu, shares, has_shares, 0),
                FIELD_HAS("quota", field_memory_amount /* -1 or >= 0 */, OciCpu, quota, has_quota, 0),
                FIELD_HAS("burst", oci_json_field_uint64, OciCpu, burst, has_burst, 0),
                FIELD_HAS("period", oci_json_field_uint64, OciCpu, period, has_period, 0),
                FIELD_HAS("realtimeRuntime", field_memory_amount /* -1 or >= 0 */, OciCpu, realtime_runtime,
                          has_realtime_runtime, 0),
                FIELD_HAS("realtimePeriod", oci_json_field_uint64, OciCpu, realtime_period, has_realtime_period,
                          0),
                FIELD("cpus", field_cpu_list, OciCpu, cpus, 0),
                FIELD("mems", field_cpu_list, OciCpu, mems, 0),
                FIELD_HAS("idle", field_idle, OciCpu, idle, has_idle, 0),
                {},
        };
        OciCpu *cpu = dst;
        int r;

        cpu->present = true;
        r = oci_json_dispatch(v, p, table, dst, reterr);
        if (r < 0)
                return r;
        if (cpu->has_burst && cpu->has_quota && cpu->quota > 0 && cpu->burst > (uint64_t) cpu->quota) {
                const OciJsonPath bp = OCI_JSON_KEY(p, "burst");
                return oci_json_error(reterr, &bp, "must not be larger than quota");
        }
        return 0;
}

static int parse_pids(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        static const OciJsonField table[] = {
                FIELD_HAS("limit", field_memory_amount /* -1 (max) or >= 0 */, OciPids, limit, has_limit,
                          OCI_JSON_MANDATORY),
                {},
        };
        ((OciPids *) dst)->present = true;
        return oci_json_dispatch(v, p, table, dst, reterr);
}

static int field_blkio_weight(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        uint64_t u;
        int r;

        r = oci_json_get_unsigned(v, p, UINT16_MAX, &u, reterr);
        if (r < 0)
                return r;
        if (u < 10 || u > 1000)
                return oci_json_error(reterr, p, "value %" PRIu64 " out of range (10..1000)", u);
        *(uint16_t *) dst = (uint16_t) u;
        return 0;
}

static int parse_weight_device(const cJSON *v, const OciJsonPath *p, void *elem, char **reterr) {
        static const OciJsonField table[] = {
                FIELD("major", field_device_number, OciBlockIoDevice, major, OCI_JSON_MANDATORY),
                FIELD("minor", field_device_number, OciBlockIoDevice, minor, OCI_JSON_MANDATORY),
                FIELD_HAS("weight", field_blkio_weight, OciBlockIoDevice, weight, has_weight, 0),
                FIELD_HAS("leafWeight", field_blkio_weight, OciBlockIoDevice, leaf_weight, has_leaf_weight, 0),
                {},
        };
        OciBlockIoDevice *d = elem;
        int r;

        r = oci_json_dispatch(v, p, table, elem, reterr);
        if (r < 0)
                return r;
        if (!d->has_weight && !d->has_leaf_weight)
                return oci_json_error(reterr, p, "at least one of \"weight\" and \"leafWeight\" is required");
        return 0;
}

static int parse_throttle_device(const cJSON *v, const OciJsonPath *p, void *elem, char **reterr) {
        static const OciJsonField table[] = {
                FIELD("major", field_device_number, OciBlockIoDevice, major, OCI_JSON_MANDATORY),
                FIELD("minor", field_device_number, OciBlockIoDevice, minor, OCI_JSON_MANDATORY),
                FIELD("rate", oci_json_field_uint64, OciBlockIoDevice, rate, OCI_JSON_MANDATORY),
                {},
        };
        return oci_json_dispatch(v, p, table, elem, reterr);
}

#define DEFINE_BLKIO_ARRAY(fn, member, elem_fn)                                                               \
        static int fn(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {                       \
                OciBlockIo *b = dst;                                                                          \
                return oci_json_parse_array(v, p, sizeof(OciBlockIoDevice), (void **) &b->member,            \
                                            &b->n_##member, elem_fn, reterr);                                 \
        }
DEFINE_BLKIO_ARRAY(parse_weight_devices, weight_device, parse_weight_device)
DEFINE_BLKIO_ARRAY(parse_throttle_read_bps, throttle_read_bps, parse_throttle_device)
DEFINE_BLKIO_ARRAY(parse_throttle_write_bps, throttle_write_bps, parse_throttle_device)
DEFINE_BLKIO_ARRAY(parse_throttle_read_iops, throttle_read_iops, parse_throttle_device)
DEFINE_BLKIO_ARRAY(parse_throttle_write_iops, throttle_write_iops, parse_throttle_device)

static int parse_block_io(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        static const OciJsonField table[] = {
                FIELD_HAS("weight", field_blkio_weight, OciBlockIo, weight, has_weight, 0),
                FIELD_HAS("leafWeight", field_blkio_weight, OciBlockIo, leaf_weight, has_leaf_weight, 0),
                FIELD_SELF("weightDevice", parse_weight_devices, 0),
                FIELD_SELF("throttleReadBpsDevice", parse_throttle_read_bps, 0),
                FIELD_SELF("throttleWriteBpsDevice", parse_throttle_write_bps, 0),
                FIELD_SELF("throttleReadIOPSDevice", parse_throttle_read_iops, 0),
                FIELD_SELF("throttleWriteIOPSDevice", parse_throttle_write_iops, 0),
                {},
        };
        ((OciBlockIo *) dst)->present = true;
        return oci_json_dispatch(v, p, table, dst, reterr);
}

static int field_page_size(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        const char *s;
        size_t n;
        int r;

        r = oci_json_field_string(v, p, dst, reterr);
        if (r < 0)
                return r;
        s = *(char **) dst;
        n = strspn(s, "0123456789");
        /* ^[1-9][0-9]*[KMG]B$ */
        if (n == 0 || s[0] == '0' || !s[n] || !strchr("KMG", s[n]) || s[n + 1] != 'B' || s[n + 2] != 0)
                return oci_json_error(reterr, p, "invalid page size \"%s\" (expected e.g. 2MB, 1GB, 64KB)", s);
        return 0;
}

static int parse_hugepage_limit(const cJSON *v, const OciJsonPath *p, void *elem, char **reterr) {
        static const OciJsonField table[] = {
                FIELD("pageSize", field_page_size, OciHugepageLimit, page_size, OCI_JSON_MANDATORY),
                FIELD("limit", oci_json_field_uint64, OciHugepageLimit, limit, OCI_JSON_MANDATORY),
                {},
        };
        return oci_json_dispatch(v, p, table, elem, reterr);
}

static int parse_hugepage_limits(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        OciResources *res = dst;
        return oci_json_parse_array(v, p, sizeof(OciHugepageLimit), (void **) &res->hugepage_limits,
                                    &res->n_hugepage_limits, parse_hugepage_limit, reterr);
}

static int parse_net_priority(const cJSON *v, const OciJsonPath *p, void *elem, char **reterr) {
        static const OciJsonField table[] = {
                FIELD("name", oci_json_field_nonempty_string, OciNetPriority, name, OCI_JSON_MANDATORY),
                FIELD("priority", oci_json_field_uint32, OciNetPriority, priority, OCI_JSON_MANDATORY),
                {},
        };
        return oci_json_dispatch(v, p, table, elem, reterr);
}

static int parse_net_priorities(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        OciNetwork *n = dst;
        return oci_json_parse_array(v, p, sizeof(OciNetPriority), (void **) &n->priorities, &n->n_priorities,
                                    parse_net_priority, reterr);
}

static int parse_network(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        static const OciJsonField table[] = {
                FIELD_HAS("classID", oci_json_field_uint32, OciNetwork, class_id, has_class_id, 0),
                FIELD_SELF("priorities", parse_net_priorities, 0),
                {},
        };
        ((OciNetwork *) dst)->present = true;
        return oci_json_dispatch(v, p, table, dst, reterr);
}

static int parse_rdma_entry(const cJSON *v, const OciJsonPath *p, OciRdma *e, char **reterr) {
        static const OciJsonField table[] = {
                FIELD_HAS("hcaHandles", oci_json_field_uint32, OciRdma, hca_handles, has_hca_handles, 0),
                FIELD_HAS("hcaObjects", oci_json_field_uint32, OciRdma, hca_objects, has_hca_objects, 0),
                {},
        };
        int r;

        r = oci_json_dispatch(v, p, table, e, reterr);
        if (r < 0)
                return r;
        if (!e->has_hca_handles && !e->has_hca_objects)
                return oci_json_error(reterr, p, "at least one of \"hcaHandles\" and \"hcaObjects\" is required");
        return 0;
}

static int parse_rdma(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        OciResources *res = dst;
        const cJSON *m;
        size_t n = 0, i = 0;
        int r;

        r = oci_json_check_type(v, p, cJSON_Object, reterr);
        if (r < 0)
                return r;
        cJSON_ArrayForEach(m, v) {
                r = oci_json_check_key(m, p, /* require_nonempty= */ true, reterr);
                if (r < 0)
                        return r;
                n++;
        }
        r = check_no_duplicate_keys(v, p, reterr);
        if (r < 0)
                return r;
        if (n == 0)
                return 0;
        res->rdma = calloc(n, sizeof(OciRdma));
        if (!res->rdma)
                return -ENOMEM;
        res->n_rdma = n;
        cJSON_ArrayForEach(m, v) {
                const OciJsonPath kp = OCI_JSON_KEY(p, m->string);
                res->rdma[i].device = strdup(m->string);
                if (!res->rdma[i].device)
                        return -ENOMEM;
                r = parse_rdma_entry(m, &kp, &res->rdma[i], reterr);
                if (r < 0)
                        return r;
                i++;
        }
        return 0;
}

/* unified: keys name files in the container's cgroup directory; refuse anything that could leave it. */
static int check_unified_key(const char *key, const OciJsonPath *p, char **reterr) {
        if (strchr(key, '/') || key[0] == '.')
                return oci_json_error(reterr, p, "not a cgroup file name");
        return 0;
}

static int parse_unified(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        OciResources *res = dst;
        return parse_string_map(v, p, &res->unified, &res->n_unified, check_unified_key, reterr);
}

static int parse_resources(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        static const OciJsonField table[] = {
                FIELD_SELF("devices", parse_resources_devices, 0),
                FIELD("memory", parse_memory, OciResources, memory, 0),
                FIELD("cpu", parse_cpu, OciResources, cpu, 0),
                FIELD("pids", parse_pids, OciResources, pids, 0),
                FIELD("blockIO", parse_block_io, OciResources, block_io, 0),
                FIELD_SELF("hugepageLimits", parse_hugepage_limits, 0),
                FIELD("network", parse_network, OciResources, network, 0),
                FIELD_SELF("rdma", parse_rdma, 0),
                FIELD_SELF("unified", parse_unified, 0),
                {},
        };
        ((OciResources *) dst)->present = true;
        return oci_json_dispatch(v, p, table, dst, reterr);
}

/* ---- linux: sysctl, seccomp, the rest ---- */

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
        const char *s;
        int r, i;

        r = oci_json_get_string(v, p, &s, reterr);
        if (r < 0)
                return r;
        i = strv_index(seccomp_action_names, _OCI_SECCOMP_ACTION_MAX, s);
        if (i < 0)
                return oci_json_error(reterr, p, "unknown seccomp action \"%s\"", s);
        *(OciSeccompAction *) dst = (OciSeccompAction) i;
        return 0;
}

static int field_seccomp_op(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        const char *s;
        int r, i;

        r = oci_json_get_string(v, p, &s, reterr);
        if (r < 0)
                return r;
        i = strv_index(seccomp_op_names, _OCI_SECCOMP_OP_MAX, s);
        if (i < 0)
                return oci_json_error(reterr, p, "unknown seccomp operator \"%s\"", s);
        *(OciSeccompOp *) dst = (OciSeccompOp) i;
        return 0;
}

static int field_enum_strv(const cJSON *v, const OciJsonPath *p, char ***dst, const char *const *names, size_t n,
                           const char *what, char **reterr) {
        size_t i = 0;
        int r;

        r = oci_json_field_strv(v, p, dst, reterr);
        if (r < 0)
                return r;
        for (char **s = *dst; *s; s++, i++)
                if (strv_index(names, n, *s) < 0) {
                        const OciJsonPath ep = OCI_JSON_INDEX(p, i);
                        return oci_json_error(reterr, &ep, "unknown %s \"%s\"", what, *s);
                }
        return 0;
}

static int field_seccomp_arches(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return field_enum_strv(v, p, dst, seccomp_arch_names, ELEMENTSOF(seccomp_arch_names),
                               "seccomp architecture", reterr);
}

static int field_seccomp_flags(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return field_enum_strv(v, p, dst, seccomp_flag_names, ELEMENTSOF(seccomp_flag_names), "seccomp flag",
                               reterr);
}

static int field_syscall_names(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        size_t i = 0;
        int r;

        r = oci_json_field_strv(v, p, dst, reterr);
        if (r < 0)
                return r;
        if (!(*(char ***) dst)[0])
                return oci_json_error(reterr, p, "must contain at least one system call name");
        for (char **s = *(char ***) dst; *s; s++, i++)
                if (isempty(*s)) {
                        const OciJsonPath ep = OCI_JSON_INDEX(p, i);
                        return oci_json_error(reterr, &ep, "empty system call name");
                }
        return 0;
}

static int field_seccomp_arg_index(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        uint64_t u;
        int r;

        r = oci_json_get_unsigned(v, p, 5, &u, reterr);
        if (r < 0)
                return r;
        *(uint32_t *) dst = (uint32_t) u;
        return 0;
}

static int parse_seccomp_arg(const cJSON *v, const OciJsonPath *p, void *elem, char **reterr) {
        static const OciJsonField table[] = {
                FIELD("index", field_seccomp_arg_index, OciSeccompArg, index, OCI_JSON_MANDATORY),
                FIELD("value", oci_json_field_uint64, OciSeccompArg, value, OCI_JSON_MANDATORY),
                FIELD("valueTwo", oci_json_field_uint64, OciSeccompArg, value_two, 0),
                FIELD("op", field_seccomp_op, OciSeccompArg, op, OCI_JSON_MANDATORY),
                {},
        };
        return oci_json_dispatch(v, p, table, elem, reterr);
}

static int parse_seccomp_args(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        OciSyscall *s = dst;
        return oci_json_parse_array(v, p, sizeof(OciSeccompArg), (void **) &s->args, &s->n_args, parse_seccomp_arg,
                                    reterr);
}

static bool seccomp_action_takes_errno(OciSeccompAction a) {
        return a == OCI_SECCOMP_ERRNO || a == OCI_SECCOMP_TRACE;
}

static int parse_syscall(const cJSON *v, const OciJsonPath *p, void *elem, char **reterr) {
        static const OciJsonField table[] = {
                FIELD("names", field_syscall_names, OciSyscall, names, OCI_JSON_MANDATORY),
                FIELD("action", field_seccomp_action, OciSyscall, action, OCI_JSON_MANDATORY),
                FIELD_HAS("errnoRet", oci_json_field_uint32, OciSyscall, errno_ret, has_errno_ret, 0),
                FIELD_SELF("args", parse_seccomp_args, 0),
                {},
        };
        OciSyscall *s = elem;
        int r;

        r = oci_json_dispatch(v, p, table, elem, reterr);
        if (r < 0)
                return r;
        if (s->has_errno_ret && !seccomp_action_takes_errno(s->action)) {
                const OciJsonPath ep = OCI_JSON_KEY(p, "errnoRet");
                return oci_json_error(reterr, &ep, "only valid with SCMP_ACT_ERRNO or SCMP_ACT_TRACE, not %s",
                                      seccomp_action_names[s->action]);
        }
        return 0;
}

static int parse_syscalls(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        OciSeccomp *s = dst;
        return oci_json_parse_array(v, p, sizeof(OciSyscall), (void **) &s->syscalls, &s->n_syscalls, parse_syscall,
                                    reterr);
}

static int parse_seccomp(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        static const OciJsonField table[] = {
                FIELD("defaultAction", field_seccomp_action, OciSeccomp, default_action, OCI_JSON_MANDATORY),
                FIELD_HAS("defaultErrnoRet", oci_json_field_uint32, OciSeccomp, default_errno_ret,
                          has_default_errno_ret, 0),
                FIELD("architectures", field_seccomp_arches, OciSeccomp, architectures, 0),
                FIELD("flags", field_seccomp_flags, OciSeccomp, flags, 0),
                FIELD("listenerPath", oci_json_field_absolute_path, OciSeccomp, listener_path, 0),
                FIELD("listenerMetadata", oci_json_field_string, OciSeccomp, listener_metadata, 0),
                FIELD_SELF("syscalls", parse_syscalls, 0),
                {},
        };
        OciSeccomp *s = dst;
        int r;

        s->present = true;
        r = oci_json_dispatch(v, p, table, dst, reterr);
        if (r < 0)
                return r;

        if (s->has_default_errno_ret && !seccomp_action_takes_errno(s->default_action)) {
                const OciJsonPath ep = OCI_JSON_KEY(p, "defaultErrnoRet");
                return oci_json_error(reterr, &ep, "only valid with SCMP_ACT_ERRNO or SCMP_ACT_TRACE, not %s",
                                      seccomp_action_names[s->default_action]);
        }
        if (s->listener_metadata && !s->listener_path) {
                const OciJsonPath ep = OCI_JSON_KEY(p, "listenerMetadata");
                return oci_json_error(reterr, &ep, "must not be set without listenerPath");
        }
        /* SCMP_ACT_NOTIFY needs somebody to hand the notification fd to. */
        if (!s->listener_path) {
                if (s->default_action == OCI_SECCOMP_NOTIFY) {
                        const OciJsonPath ep = OCI_JSON_KEY(p, "defaultAction");
                        return oci_json_error(reterr, &ep, "SCMP_ACT_NOTIFY requires listenerPath");
                }
                const OciJsonPath sp = OCI_JSON_KEY(p, "syscalls");
                for (size_t i = 0; i < s->n_syscalls; i++)
                        if (s->syscalls[i].action == OCI_SECCOMP_NOTIFY) {
                                const OciJsonPath ep = OCI_JSON_INDEX(&sp, i), ap = OCI_JSON_KEY(&ep, "action");
                                return oci_json_error(reterr, &ap, "SCMP_ACT_NOTIFY requires %s",
                                                      "linux.seccomp.listenerPath");
                        }
        }
        return 0;
}

static int field_rootfs_propagation(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        int r;

        r = oci_json_field_string(v, p, dst, reterr);
        if (r < 0)
                return r;
        if (strv_index(rootfs_propagation_names, ELEMENTSOF(rootfs_propagation_names), *(char **) dst) < 0)
                return oci_json_error(reterr, p,
                                      "unknown propagation \"%s\" (expected private, shared, slave or unbindable)",
                                      *(char **) dst);
        return 0;
}

static int field_mem_bw_schema(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        int r;

        r = oci_json_field_string(v, p, dst, reterr);
        if (r < 0)
                return r;
        if (!strneq(*(char **) dst, "MB:", 3) || strchr(*(char **) dst, '\n'))
                return oci_json_error(reterr, p, "must start with \"MB:\" and be a single line");
        return 0;
}

static int parse_intel_rdt(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        static const OciJsonField table[] = {
                FIELD("closID", oci_json_field_string, OciIntelRdt, clos_id, 0),
                FIELD("schemata", oci_json_field_strv, OciIntelRdt, schemata, 0),
                FIELD("l3CacheSchema", oci_json_field_string, OciIntelRdt, l3_cache_schema, 0),
                FIELD("memBwSchema", field_mem_bw_schema, OciIntelRdt, mem_bw_schema, 0),
                FIELD("enableMonitoring", oci_json_field_bool, OciIntelRdt, enable_monitoring, 0),
                {},
        };
        ((OciIntelRdt *) dst)->present = true;
        return oci_json_dispatch(v, p, table, dst, reterr);
}

static int field_mpol_mode(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return get_enum(v, p, mpol_mode_table, ELEMENTSOF(mpol_mode_table), "memory policy mode", dst, reterr);
}

static int field_mpol_flags(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        const cJSON *e;
        size_t i = 0;
        int r;

        r = oci_json_check_type(v, p, cJSON_Array, reterr);
        if (r < 0)
                return r;
        cJSON_ArrayForEach(e, v) {
                const OciJsonPath ep = OCI_JSON_INDEX(p, i++);
                int bit;
                r = get_enum(e, &ep, mpol_flag_table, ELEMENTSOF(mpol_flag_table), "memory policy flag", &bit,
                             reterr);
                if (r < 0)
                        return r;
                *(unsigned *) dst |= (unsigned) bit;
        }
        return 0;
}

static int parse_memory_policy(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        static const OciJsonField table[] = {
                FIELD("mode", field_mpol_mode, OciMemoryPolicy, mode, OCI_JSON_MANDATORY),
                FIELD("nodes", field_cpu_list, OciMemoryPolicy, nodes, 0),
                FIELD("flags", field_mpol_flags, OciMemoryPolicy, flags, 0),
                {},
        };
        OciMemoryPolicy *m = dst;
        bool has_nodes;
        int r;

        m->present = true;
        r = oci_json_dispatch(v, p, table, dst, reterr);
        if (r < 0)
                return r;

        /* set_mempolicy(2): DEFAULT and LOCAL take no nodes; BIND, INTERLEAVE, WEIGHTED_INTERLEAVE and
         * PREFERRED_MANY need at least one; PREFERRED takes zero (= local) or more. */
        has_nodes = m->nodes && m->nodes[strspn(m->nodes, " ")];
        const OciJsonPath np = OCI_JSON_KEY(p, "nodes");
        if ((m->mode == OCI_MPOL_DEFAULT || m->mode == OCI_MPOL_LOCAL) && has_nodes)
                return oci_json_error(reterr, &np, "must be empty for this mode");
        if ((m->mode == OCI_MPOL_BIND || m->mode == OCI_MPOL_INTERLEAVE || m->mode == OCI_MPOL_WEIGHTED_INTERLEAVE ||
             m->mode == OCI_MPOL_PREFERRED_MANY) &&
            !has_nodes)
                return oci_json_error(reterr, &np, "at least one node is required for this mode");
        if ((m->flags & OCI_MPOL_F_STATIC_NODES) && (m->flags & OCI_MPOL_F_RELATIVE_NODES)) {
                const OciJsonPath fp = OCI_JSON_KEY(p, "flags");
                return oci_json_error(reterr, &fp, "MPOL_F_STATIC_NODES and MPOL_F_RELATIVE_NODES are exclusive");
        }
        return 0;
}

static int field_personality_domain(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        int d, r;

        r = get_enum(v, p, personality_domain_table, ELEMENTSOF(personality_domain_table), "personality domain",
                     &d, reterr);
        if (r < 0)
                return r;
        *(unsigned long *) dst = (unsigned long) d;
        return 0;
}

static int field_personality_flags(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        _cleanup_(oci_strv_freep) char **flags = NULL;
        int r;

        /* runtime-spec: "Currently no flag values are supported." Any entry is therefore unknown. */
        r = oci_json_field_strv(v, p, &flags, reterr);
        if (r < 0)
                return r;
        if (flags[0]) {
                const OciJsonPath ep = OCI_JSON_INDEX(p, 0);
                return oci_json_error(reterr, &ep, "unknown personality flag \"%s\"", flags[0]);
        }
        return 0;
}

static int parse_personality(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        static const OciJsonField table[] = {
                FIELD("domain", field_personality_domain, OciPersonality, domain, OCI_JSON_MANDATORY),
                FIELD_SELF("flags", field_personality_flags, 0),
                {},
        };
        ((OciPersonality *) dst)->present = true;
        return oci_json_dispatch(v, p, table, dst, reterr);
}

static int field_nanosecs(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        uint64_t u;
        int r;

        r = oci_json_get_unsigned(v, p, 999999999, &u, reterr);
        if (r < 0)
                return r;
        *(uint32_t *) dst = (uint32_t) u;
        return 0;
}

static int parse_time_offset(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        static const OciJsonField table[] = {
                FIELD("secs", oci_json_field_int64, OciTimeOffset, secs, 0),
                FIELD("nanosecs", field_nanosecs, OciTimeOffset, nanosecs, 0),
                {},
        };
        ((OciTimeOffset *) dst)->present = true;
        return oci_json_dispatch(v, p, table, dst, reterr);
}

static int parse_time_offsets(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        static const OciJsonField table[] = {
                FIELD("boottime", parse_time_offset, OciLinux, time_boottime, 0),
                FIELD("monotonic", parse_time_offset, OciLinux, time_monotonic, 0),
                {},
        };
        const cJSON *m;
        int r;

        /* The keys name clocks: an unknown clock cannot be ignored like an unknown property, the offset
         * would silently not apply. Only CLOCK_BOOTTIME and CLOCK_MONOTONIC can be offset (time_namespaces(7)). */
        r = oci_json_check_type(v, p, cJSON_Object, reterr);
        if (r < 0)
                return r;
        cJSON_ArrayForEach(m, v)
                if (m->string && !streq(m->string, "boottime") && !streq(m->string, "monotonic")) {
                        const OciJsonPath kp = OCI_JSON_KEY(p, m->string);
                        return oci_json_error(reterr, &kp, "unknown clock (only boottime and monotonic)");
                }
        return oci_json_dispatch(v, p, table, dst, reterr);
}

/* Interface names (IFNAMSIZ 16 with the NUL; no '/', ':' or blanks; not "." or ".."), "%d" templates allowed. */
static int check_ifname(const char *name, const OciJsonPath *p, char **reterr) {
        if (isempty(name) || strlen(name) > 15 || streq(name, ".") || streq(name, "..") || strpbrk(name, "/: \t\n"))
                return oci_json_error(reterr, p, "invalid network interface name \"%s\"", name);
        return 0;
}

static int parse_net_devices(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        static const OciJsonField table[] = {
                FIELD("name", oci_json_field_string, OciKeyValue, value, 0),
                {},
        };
        OciLinux *l = dst;
        const cJSON *m;
        size_t n = 0, i = 0;
        int r;

        r = oci_json_check_type(v, p, cJSON_Object, reterr);
        if (r < 0)
                return r;
        cJSON_ArrayForEach(m, v) {
                r = oci_json_check_key(m, p, /* require_nonempty= */ true, reterr);
                if (r < 0)
                        return r;
                n++;
        }
        r = check_no_duplicate_keys(v, p, reterr);
        if (r < 0)
                return r;
        if (n == 0)
                return 0;
        l->net_devices = calloc(n, sizeof(OciKeyValue));
        if (!l->net_devices)
                return -ENOMEM;
        l->n_net_devices = n;
        cJSON_ArrayForEach(m, v) {
                const OciJsonPath kp = OCI_JSON_KEY(p, m->string);
                OciKeyValue *kv = &l->net_devices[i++];

                r = check_ifname(m->string, &kp, reterr);
                if (r < 0)
                        return r;
                kv->key = strdup(m->string);
                if (!kv->key)
                        return -ENOMEM;
                r = oci_json_dispatch(m, &kp, table, kv, reterr);
                if (r < 0)
                        return r;
                if (kv->value && !isempty(kv->value)) {
                        const OciJsonPath np = OCI_JSON_KEY(&kp, "name");
                        r = check_ifname(kv->value, &np, reterr);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static int parse_linux(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        static const OciJsonField table[] = {
                FIELD_SELF("namespaces", parse_namespaces, 0),
                FIELD_SELF("uidMappings", parse_linux_uid_mappings, 0),
                FIELD_SELF("gidMappings", parse_linux_gid_mappings, 0),
                FIELD_SELF("devices", parse_devices, 0),
                FIELD_SELF("netDevices", parse_net_devices, 0),
                FIELD("cgroupsPath", oci_json_field_string, OciLinux, cgroups_path, 0),
                FIELD("resources", parse_resources, OciLinux, resources, 0),
                FIELD_SELF("sysctl", parse_sysctl, 0),
                FIELD("seccomp", parse_seccomp, OciLinux, seccomp, 0),
                FIELD("rootfsPropagation", field_rootfs_propagation, OciLinux, rootfs_propagation, 0),
                FIELD("maskedPaths", oci_json_field_absolute_path_strv, OciLinux, masked_paths, 0),
                FIELD("readonlyPaths", oci_json_field_absolute_path_strv, OciLinux, readonly_paths, 0),
                FIELD("mountLabel", oci_json_field_string, OciLinux, mount_label, 0),
                FIELD("intelRdt", parse_intel_rdt, OciLinux, intel_rdt, 0),
                FIELD("memoryPolicy", parse_memory_policy, OciLinux, memory_policy, 0),
                FIELD("personality", parse_personality, OciLinux, personality, 0),
                FIELD_SELF("timeOffsets", parse_time_offsets, 0),
                {},
        };
        ((OciLinux *) dst)->present = true;
        return oci_json_dispatch(v, p, table, dst, reterr);
}

static const OciJsonField config_table[] = {
        FIELD("ociVersion", field_oci_version, OciConfig, oci_version, OCI_JSON_MANDATORY),
        FIELD_SELF("root", parse_root, OCI_JSON_MANDATORY), /* REQUIRED on every platform but Windows */
        FIELD_SELF("mounts", parse_mounts, 0),
        FIELD_HAS("process", field_process, OciConfig, process, has_process, 0),
        FIELD("hostname", oci_json_field_string, OciConfig, hostname, 0),
        FIELD("domainname", oci_json_field_string, OciConfig, domainname, 0),
        FIELD("hooks", parse_hooks, OciConfig, hooks, 0),
        FIELD_SELF("annotations", parse_annotations, 0),
        FIELD("linux", parse_linux, OciConfig, linux_, 0),
        /* "windows", "solaris", "vm", "zos", "freebsd": other platforms, ignored as unknown keys. */
        {},
};

/* ---- cross-field checks ---- */

static const OciNamespace *find_namespace(const OciConfig *c, OciNamespaceType t, size_t *ret_index) {
        for (size_t i = 0; i < c->linux_.n_namespaces; i++)
                if (c->linux_.namespaces[i].type == t) {
                        if (ret_index)
                                *ret_index = i;
                        return &c->linux_.namespaces[i];
                }
        return NULL;
}

/* Settings that only make sense with a namespace the container creates itself. */
static int require_new_namespace(const OciConfig *c, OciNamespaceType t, const char *what, char **reterr) {
        const OciNamespace *ns;
        size_t i = 0;

        ns = find_namespace(c, t, &i);
        if (!ns)
                return oci_json_error(reterr, NULL, "%s: requires a new %s namespace in linux.namespaces", what,
                                      namespace_names[t]);
        if (ns->path)
                return oci_json_error(reterr, NULL, "%s: cannot be applied to the existing %s namespace joined by "
                                      "linux.namespaces[%zu].path", what, namespace_names[t], i);
        return 0;
}

static int validate_config(const OciConfig *c, char **reterr) {
        const OciLinux *l = &c->linux_;
        int r;

        if (l->n_uid_mappings > 0 || l->n_gid_mappings > 0) {
                r = require_new_namespace(c, OCI_NS_USER, l->n_uid_mappings > 0 ? "linux.uidMappings" : "linux.gidMappings",
                                          reterr);
                if (r < 0)
                        return r;
        }
        if (l->time_boottime.present || l->time_monotonic.present) {
                r = require_new_namespace(c, OCI_NS_TIME, "linux.timeOffsets", reterr);
                if (r < 0)
                        return r;
        }
        /* Setting a hostname without a UTS namespace of its own would rename the host. */
        if (!isempty(c->hostname) && !find_namespace(c, OCI_NS_UTS, NULL))
                return oci_json_error(reterr, NULL, "hostname: requires a uts namespace in linux.namespaces");
        if (!isempty(c->domainname) && !find_namespace(c, OCI_NS_UTS, NULL))
                return oci_json_error(reterr, NULL, "domainname: requires a uts namespace in linux.namespaces");
        return 0;
}

/* ---- THE list of valid-but-unsupported settings ----
 *
 * Everything the spec defines for Linux is parsed into the model. The entries below are valid values that
 * sdrun does not (or cannot) apply; the spec requires an error for those ("Runtimes MUST generate an error
 * when invalid or unsupported values are encountered"), so each is refused with its path and the reason.
 * Settings not listed here are applied by the module that owns them. */

typedef struct Unsupported {
        const char *path;
        bool (*in_config)(const OciConfig *c);
        bool (*in_process)(const OciProcess *p);
        const char *reason;
} Unsupported;

static bool has_intel_rdt(const OciConfig *c) {
        return c->linux_.intel_rdt.present;
}

static bool has_net_devices(const OciConfig *c) {
        return c->linux_.n_net_devices > 0;
}

static bool has_net_cls_prio(const OciConfig *c) {
        return c->linux_.resources.network.has_class_id || c->linux_.resources.network.n_priorities > 0;
}

static bool has_rdma(const OciConfig *c) {
        return c->linux_.resources.n_rdma > 0;
}

static bool has_leaf_weight(const OciConfig *c) {
        if (c->linux_.resources.block_io.has_leaf_weight)
                return true;
        FOREACH_ARRAY(d, c->linux_.resources.block_io.weight_device, c->linux_.resources.block_io.n_weight_device)
                if (d->has_leaf_weight)
                        return true;
        return false;
}

static bool has_kernel_memory(const OciConfig *c) {
        return c->linux_.resources.memory.has_kernel && c->linux_.resources.memory.kernel != -1;
}

static bool has_kernel_tcp_memory(const OciConfig *c) {
        return c->linux_.resources.memory.has_kernel_tcp && c->linux_.resources.memory.kernel_tcp != -1;
}

static bool has_sched_iso(const OciProcess *p) {
        return p->scheduler.present && p->scheduler.policy == OCI_SCHED_ISO;
}

static const Unsupported unsupported_features[] = {
        { "linux.intelRdt", has_intel_rdt, NULL,
          "Intel RDT is not supported by sdrun" },
        { "linux.netDevices", has_net_devices, NULL,
          "moving network devices into the container is not supported by sdrun (an empty map is accepted)" },
        { "linux.resources.network", has_net_cls_prio, NULL,
          "net_cls/net_prio are cgroup v1 controllers that sdrun cannot configure through systemd "
          "(an empty object is accepted)" },
        { "linux.resources.rdma", has_rdma, NULL,
          "the rdma controller is not supported by sdrun; set \"rdma.max\" in linux.resources.unified instead "
          "(an empty map is accepted)" },
        { "linux.resources.blockIO", has_leaf_weight, NULL,
          "leafWeight is not supported: it needs the CFQ I/O scheduler, removed in Linux 5.0" },
        { "linux.resources.memory.kernel", has_kernel_memory, NULL,
          "kernel memory limits are not supported (NOT RECOMMENDED by the spec, absent from cgroup v2); "
          "only -1 is accepted" },
        { "linux.resources.memory.kernelTCP", has_kernel_tcp_memory, NULL,
          "kernel TCP memory limits are not supported (absent from cgroup v2); only -1 is accepted" },
        { "process.scheduler.policy", NULL, has_sched_iso,
          "SCHED_ISO is reserved but not implemented by Linux" },
};

static int check_unsupported(const OciConfig *c, const OciProcess *p, char **reterr) {
        FOREACH_ARRAY(u, unsupported_features, ELEMENTSOF(unsupported_features))
                if ((c && u->in_config && u->in_config(c)) || (p && u->in_process && u->in_process(p))) {
                        if (reterr && !*reterr && asprintf(reterr, "%s: %s", u->path, u->reason) < 0) {
                                *reterr = NULL;
                                return -ENOMEM;
                        }
                        return -EINVAL;
                }
        return 0;
}

/* ---- freeing ---- */

void oci_process_done(OciProcess *p) {
        if (!p)
                return;
        free(p->user.additional_gids);
        free(p->user.username);
        oci_strv_free(p->args);
        free(p->command_line);
        oci_strv_free(p->env);
        free(p->cwd);
        free(p->capabilities.bounding);
        free(p->capabilities.effective);
        free(p->capabilities.inheritable);
        free(p->capabilities.permitted);
        free(p->capabilities.ambient);
        free(p->rlimits);
        free(p->apparmor_profile);
        free(p->selinux_label);
        free(p->exec_cpu_affinity_initial);
        free(p->exec_cpu_affinity_final);
        *p = (OciProcess) {};
}

void oci_process_free(OciProcess *p) {
        if (!p)
                return;
        oci_process_done(p);
        free(p);
}

static void resources_done(OciResources *r) {
        free(r->devices);
        free(r->cpu.cpus);
        free(r->cpu.mems);
        free(r->block_io.weight_device);
        free(r->block_io.throttle_read_bps);
        free(r->block_io.throttle_write_bps);
        free(r->block_io.throttle_read_iops);
        free(r->block_io.throttle_write_iops);
        FOREACH_ARRAY(h, r->hugepage_limits, r->n_hugepage_limits)
                free(h->page_size);
        free(r->hugepage_limits);
        FOREACH_ARRAY(n, r->network.priorities, r->network.n_priorities)
                free(n->name);
        free(r->network.priorities);
        FOREACH_ARRAY(d, r->rdma, r->n_rdma)
                free(d->device);
        free(r->rdma);
        key_values_free(r->unified, r->n_unified);
}

static void seccomp_done(OciSeccomp *s) {
        oci_strv_free(s->architectures);
        oci_strv_free(s->flags);
        free(s->listener_path);
        free(s->listener_metadata);
        FOREACH_ARRAY(sc, s->syscalls, s->n_syscalls) {
                oci_strv_free(sc->names);
                free(sc->args);
        }
        free(s->syscalls);
}

static void linux_done(OciLinux *l) {
        free(l->uid_mappings);
        free(l->gid_mappings);
        FOREACH_ARRAY(ns, l->namespaces, l->n_namespaces)
                free(ns->path);
        free(l->namespaces);
        FOREACH_ARRAY(d, l->devices, l->n_devices)
                free(d->path);
        free(l->devices);
        free(l->cgroups_path);
        resources_done(&l->resources);
        key_values_free(l->sysctl, l->n_sysctl);
        seccomp_done(&l->seccomp);
        free(l->rootfs_propagation);
        oci_strv_free(l->masked_paths);
        oci_strv_free(l->readonly_paths);
        free(l->mount_label);
        free(l->intel_rdt.clos_id);
        oci_strv_free(l->intel_rdt.schemata);
        free(l->intel_rdt.l3_cache_schema);
        free(l->intel_rdt.mem_bw_schema);
        free(l->memory_policy.nodes);
        key_values_free(l->net_devices, l->n_net_devices);
}

void oci_config_free(OciConfig *c) {
        if (!c)
                return;
        free(c->oci_version);
        free(c->root_path);
        oci_process_done(&c->process);
        free(c->hostname);
        free(c->domainname);
        FOREACH_ARRAY(m, c->mounts, c->n_mounts) {
                free(m->destination);
                free(m->type);
                free(m->source);
                oci_strv_free(m->options);
                free(m->uid_mappings);
                free(m->gid_mappings);
        }
        free(c->mounts);
        for (size_t k = 0; k < _OCI_HOOK_MAX; k++) {
                FOREACH_ARRAY(h, c->hooks.hooks[k], c->hooks.n_hooks[k]) {
                        free(h->path);
                        oci_strv_free(h->args);
                        oci_strv_free(h->env);
                }
                free(c->hooks.hooks[k]);
        }
        key_values_free(c->annotations, c->n_annotations);
        linux_done(&c->linux_);
        free(c);
}

/* ---- entry points ---- */

int oci_config_parse(const char *json, size_t len, OciConfig **ret, char **reterr_message) {
        _cleanup_json_ cJSON *j = NULL;
        _cleanup_oci_config_ OciConfig *c = NULL;
        _cleanup_free_ char *msg = NULL;
        int r;

        assert(json || len == 0);
        assert(ret);

        r = oci_json_parse_strict(json, len, &j, &msg);
        if (r >= 0) {
                c = calloc(1, sizeof(OciConfig));
                if (!c)
                        return -ENOMEM;
                if (!cJSON_IsObject(j))
                        r = oci_json_error(&msg, NULL, "expected a JSON object at the top level");
                else
                        r = oci_json_dispatch(j, NULL, config_table, c, &msg);
        }
        if (r >= 0)
                r = validate_config(c, &msg);
        if (r >= 0)
                r = check_unsupported(c, c->has_process ? &c->process : NULL, &msg);
        if (r < 0) {
                if (reterr_message)
                        *reterr_message = TAKE_PTR(msg);
                return r;
        }

        *ret = TAKE_PTR(c);
        return 0;
}

int oci_process_parse(const char *json, size_t len, OciProcess **ret, char **reterr_message) {
        _cleanup_json_ cJSON *j = NULL;
        _cleanup_oci_process_ OciProcess *p = NULL;
        _cleanup_free_ char *msg = NULL;
        const OciJsonPath root = OCI_JSON_KEY(NULL, "process");
        int r;

        assert(json || len == 0);
        assert(ret);

        r = oci_json_parse_strict(json, len, &j, &msg);
        if (r >= 0) {
                p = calloc(1, sizeof(OciProcess));
                if (!p)
                        return -ENOMEM;
                r = parse_process_object(j, &root, p, &msg);
        }
        if (r >= 0)
                r = check_unsupported(NULL, p, &msg);
        if (r < 0) {
                if (reterr_message)
                        *reterr_message = TAKE_PTR(msg);
                return r;
        }

        *ret = TAKE_PTR(p);
        return 0;
}

int oci_config_load(int bundle_dir_fd, OciConfig **ret, char **reterr_message) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        int r;

        assert(ret);

        r = read_full_file_at(bundle_dir_fd, "config.json", OCI_CONFIG_SIZE_MAX, &buf, &size);
        if (r == -EFBIG) {
                if (reterr_message && asprintf(reterr_message, "file is larger than %u MiB",
                                               OCI_CONFIG_SIZE_MAX / 1024 / 1024) < 0)
                        *reterr_message = NULL;
                return r;
        }
        if (r < 0) {
                if (reterr_message && asprintf(reterr_message, "cannot read: %s", strerror(-r)) < 0)
                        *reterr_message = NULL;
                return r;
        }
        return oci_config_parse(buf, size, ret, reterr_message);
}

const char *oci_config_annotation(const OciConfig *c, const char *key) {
        assert(c);
        assert(key);

        FOREACH_ARRAY(a, c->annotations, c->n_annotations)
                if (streq(a->key, key))
                        return a->value;
        return NULL;
}

bool oci_config_has_namespace(const OciConfig *c, OciNamespaceType t, const char **ret_path) {
        const OciNamespace *ns;

        assert(c);

        ns = find_namespace(c, t, NULL);
        if (ret_path)
                *ret_path = ns ? ns->path : NULL;
        return ns;
}
