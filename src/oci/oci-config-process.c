/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config.json "process", which is also the whole of process.json (oci_process_parse()): args, env, user,
 * capabilities, rlimits, scheduler, I/O priority, CPU affinity. The parsing rules are those described at
 * the top of oci-config.c. */

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <cjson/cJSON.h>
#include <sys/capability.h>

#include "log.h"
#include "macro.h"
#include "oci-config-internal.h"
#include "oci-config.h"
#include "oci-json.h"

/* ---- enum tables ---- */

static const NameValue rlimit_table[] = {
        { "RLIMIT_AS", RLIMIT_AS },
        { "RLIMIT_CORE", RLIMIT_CORE },
        { "RLIMIT_CPU", RLIMIT_CPU },
        { "RLIMIT_DATA", RLIMIT_DATA },
        { "RLIMIT_FSIZE", RLIMIT_FSIZE },
        { "RLIMIT_LOCKS", RLIMIT_LOCKS },
        { "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK },
        { "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE },
        { "RLIMIT_NICE", RLIMIT_NICE },
        { "RLIMIT_NOFILE", RLIMIT_NOFILE },
        { "RLIMIT_NPROC", RLIMIT_NPROC },
        { "RLIMIT_RSS", RLIMIT_RSS },
        { "RLIMIT_RTPRIO", RLIMIT_RTPRIO },
        { "RLIMIT_RTTIME", RLIMIT_RTTIME },
        { "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING },
        { "RLIMIT_STACK", RLIMIT_STACK },
};

static const NameValue sched_policy_table[] = {
        { "SCHED_OTHER", SCHED_OTHER },
        { "SCHED_FIFO", SCHED_FIFO },
        { "SCHED_RR", SCHED_RR },
        { "SCHED_BATCH", SCHED_BATCH },
        { "SCHED_ISO", OCI_SCHED_ISO },
        { "SCHED_IDLE", SCHED_IDLE },
        { "SCHED_DEADLINE", 6 /* SCHED_DEADLINE */ },
};

/* <linux/sched/types.h> sched_attr.sched_flags bits */
static const NameValue sched_flag_table[] = {
        { "SCHED_FLAG_RESET_ON_FORK", 0x01 },  { "SCHED_FLAG_RECLAIM", 0x02 },
        { "SCHED_FLAG_DL_OVERRUN", 0x04 },     { "SCHED_FLAG_KEEP_POLICY", 0x08 },
        { "SCHED_FLAG_KEEP_PARAMS", 0x10 },    { "SCHED_FLAG_UTIL_CLAMP_MIN", 0x20 },
        { "SCHED_FLAG_UTIL_CLAMP_MAX", 0x40 },
};

/* <linux/ioprio.h> */
static const NameValue ioprio_class_table[] = {
        { "IOPRIO_CLASS_RT", 1 },
        { "IOPRIO_CLASS_BE", 2 },
        { "IOPRIO_CLASS_IDLE", 3 },
};

/* ---- process ---- */

static const OciJsonField console_size_fields[] = {
        FIELD("height", oci_json_field_uint64, OciProcess, console_height, OCI_JSON_MANDATORY),
        FIELD("width", oci_json_field_uint64, OciProcess, console_width, OCI_JSON_MANDATORY),
        {},
};

static int field_umask(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        /* umask(2) keeps the 0777 bits; runc and crun accept the setuid/setgid/sticky bits and apply that. */
        return field_mode_bits(v, p, 07777, 0777, dst, reterr);
}

/* An array of uint32_t with one more 0 at the end, so that an empty array is not NULL. */
static int parse_additional_gids(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        OciUser *u = dst;
        return oci_json_parse_array(v, p, sizeof(uint32_t), /* extra= */ 1, (void **) &u->additional_gids,
                                    &u->n_additional_gids, oci_json_field_uint32, reterr);
}

/* The spec requires uid and gid; runc and crun take a missing one as 0 (runc's own integration tests send
 * {"uid": 0}). So do we, with a warning, as where else engines are laxer than the spec. */
static int check_user(const cJSON *v, const OciJsonPath *p, void *obj, char **reterr) {
        const OciUser *u = obj;
        _cleanup_free_ char *path = NULL;

        if (u->has_uid && u->has_gid)
                return 0;
        path = oci_json_path_to_string(p);
        if (!u->has_uid)
                log_warning("%s.uid: required by the runtime-spec but missing, using 0 as runc and crun do.",
                            strna(path));
        if (!u->has_gid)
                log_warning("%s.gid: required by the runtime-spec but missing, using 0 as runc and crun do.",
                            strna(path));
        return 0;
}

static const OciJsonField user_fields[] = {
        FIELD_HAS("uid", oci_json_field_uint32, OciUser, uid, has_uid, 0),
        FIELD_HAS("gid", oci_json_field_uint32, OciUser, gid, has_gid, 0),
        FIELD_HAS("umask", field_umask, OciUser, umask, has_umask, 0),
        FIELD_SELF("additionalGids", parse_additional_gids, 0),
        /* Windows-only; kept but not used on Linux (the spec defines it for Windows). */
        FIELD("username", oci_json_field_string, OciUser, username, 0),
        {},
};

/* A capability number, or -1 for a name that sdrun does not know. */
static int parse_cap(const cJSON *v, const OciJsonPath *p, void *elem, char **reterr) {
        const char *name;
        cap_value_t cap;
        int r;

        r = oci_json_get_string(v, p, &name, reterr);
        if (r < 0)
                return r;
        if (!strneq(name, "CAP_", 4) || cap_from_name(name, &cap) < 0) {
                /* runtime-spec config.md: an unknown capability "MUST be logged as a warning by the runtime"
                 * and "SHOULD NOT fail"; runc and crun skip it. */
                _cleanup_free_ char *path = oci_json_path_to_string(p);
                log_warning("%s: unknown capability \"%s\", ignoring it.", strna(path), name);
                cap = -1;
        }
        *(int *) elem = (int) cap;
        return 0;
}

static int parse_cap_list(const cJSON *v, const OciJsonPath *p, int **ret, size_t *ret_n, char **reterr) {
        size_t n = 0, k = 0;
        int r;

        /* One element more, so that an empty list is not NULL; the unknown names are dropped after. */
        r = oci_json_parse_array(v, p, sizeof(int), /* extra= */ 1, (void **) ret, &n, parse_cap, reterr);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                if ((*ret)[i] >= 0)
                        (*ret)[k++] = (*ret)[i];
        *ret_n = k;
        return 0;
}

#define DEFINE_CAP_FIELD(set)                                                                        \
        static int parse_cap_##set(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) { \
                OciCapabilities *c = dst;                                                            \
                return parse_cap_list(v, p, &c->set, &c->n_##set, reterr);                           \
        }
DEFINE_CAP_FIELD(bounding)
DEFINE_CAP_FIELD(effective)
DEFINE_CAP_FIELD(inheritable)
DEFINE_CAP_FIELD(permitted)
DEFINE_CAP_FIELD(ambient)

static const OciJsonField capabilities_fields[] = {
        FIELD_SELF("bounding", parse_cap_bounding, 0),       FIELD_SELF("effective", parse_cap_effective, 0),
        FIELD_SELF("inheritable", parse_cap_inheritable, 0), FIELD_SELF("permitted", parse_cap_permitted, 0),
        FIELD_SELF("ambient", parse_cap_ambient, 0),         {},
};

static int field_rlimit_type(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return get_enum(v, p, rlimit_table, ELEMENTSOF(rlimit_table), "resource limit", dst, reterr);
}

static const OciJsonField rlimit_fields[] = {
        FIELD("type", field_rlimit_type, OciRlimit, type, OCI_JSON_MANDATORY),
        FIELD("soft", oci_json_field_uint64, OciRlimit, soft, OCI_JSON_MANDATORY),
        FIELD("hard", oci_json_field_uint64, OciRlimit, hard, OCI_JSON_MANDATORY),
        {},
};

static int check_rlimit(const cJSON *v, const OciJsonPath *p, void *obj, char **reterr) {
        const OciRlimit *l = obj;
        return l->soft > l->hard
                       ? oci_json_error_at(reterr, p, "soft", "soft limit is larger than the hard limit")
                       : 0;
}

static int parse_rlimits(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        OciProcess *proc = dst;
        size_t i, j;
        int r;

        r = oci_json_parse_array_of(v, p, sizeof(OciRlimit), (void **) &proc->rlimits, &proc->n_rlimits,
                                    rlimit_fields, check_rlimit, reterr);
        if (r < 0)
                return r;
        i = find_duplicate(proc->rlimits, proc->n_rlimits, sizeof(OciRlimit), offsetof(OciRlimit, type), &j);
        if (i < proc->n_rlimits) {
                const OciJsonPath ep = OCI_JSON_INDEX(p, i);
                return oci_json_error_at(reterr, &ep, "type", "duplicate resource limit (also in entry %zu)",
                                         j);
        }
        return 0;
}

static int field_sched_policy(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return get_enum(v, p, sched_policy_table, ELEMENTSOF(sched_policy_table), "scheduling policy", dst,
                        reterr);
}

static int field_sched_flags(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return get_flags(v, p, sched_flag_table, ELEMENTSOF(sched_flag_table), "scheduler flag", dst,
                         sizeof(uint64_t), reterr);
}

static const OciJsonField scheduler_fields[] = {
        FIELD("policy", field_sched_policy, OciScheduler, policy, OCI_JSON_MANDATORY),
        FIELD_HAS("nice", oci_json_field_int32, OciScheduler, nice, has_nice, 0),
        FIELD_HAS("priority", oci_json_field_int32, OciScheduler, priority, has_priority, 0),
        FIELD("flags", field_sched_flags, OciScheduler, flags, 0),
        FIELD_HAS("runtime", oci_json_field_uint64, OciScheduler, runtime, has_runtime, 0),
        FIELD_HAS("deadline", oci_json_field_uint64, OciScheduler, deadline, has_deadline, 0),
        FIELD_HAS("period", oci_json_field_uint64, OciScheduler, period, has_period, 0),
        {},
};

static int check_scheduler(const cJSON *v, const OciJsonPath *p, void *obj, char **reterr) {
        const OciScheduler *s = obj;

        if (s->has_nice && (s->nice < -20 || s->nice > 19))
                return oci_json_error_at(reterr, p, "nice", "value %" PRId32 " out of range (-20..19)",
                                         s->nice);
        if (s->has_priority && (s->priority < 0 || s->priority > 99))
                return oci_json_error_at(reterr, p, "priority", "value %" PRId32 " out of range (0..99)",
                                         s->priority);
        return 0;
}

static int field_ioprio_class(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return get_enum(v, p, ioprio_class_table, ELEMENTSOF(ioprio_class_table), "I/O priority class", dst,
                        reterr);
}

/* "priority" is REQUIRED in the prose but not in the schema; absent means 0, as Go's zero value. */
static const OciJsonField io_priority_fields[] = {
        FIELD("class", field_ioprio_class, OciIoPriority, klass, OCI_JSON_MANDATORY),
        FIELD("priority", oci_json_field_int32, OciIoPriority, priority, 0),
        {},
};

static int check_io_priority(const cJSON *v, const OciJsonPath *p, void *obj, char **reterr) {
        const OciIoPriority *io = obj;

        if (io->priority < 0 || io->priority > 7)
                return oci_json_error_at(reterr, p, "priority", "value %" PRId32 " out of range (0..7)",
                                         io->priority);
        return 0;
}

static const OciJsonField exec_cpu_affinity_fields[] = {
        FIELD("initial", field_cpu_list, OciProcess, exec_cpu_affinity_initial, 0),
        FIELD("final", field_cpu_list, OciProcess, exec_cpu_affinity_final, 0),
        {},
};

static int field_oom_score_adj(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return oci_json_store_signed(v, p, -1000, 1000, dst, sizeof(int), reterr);
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
        { "consoleSize", NULL, 0, offsetof(OciProcess, has_console_size), 0, .fields = console_size_fields },
        FIELD_OBJECT("user", user_fields, check_user, OciProcess, user, 0),
        FIELD("args", field_args, OciProcess, args, OCI_JSON_MANDATORY),
        FIELD("commandLine", oci_json_field_string, OciProcess, command_line, 0),
        FIELD("env", field_env, OciProcess, env, 0),
        FIELD("cwd", oci_json_field_absolute_path, OciProcess, cwd, OCI_JSON_MANDATORY),
        FIELD_OBJECT_HAS("capabilities", capabilities_fields, NULL, OciProcess, capabilities,
                         capabilities.present, 0),
        FIELD_SELF("rlimits", parse_rlimits, 0),
        FIELD("noNewPrivileges", oci_json_field_bool, OciProcess, no_new_privileges, 0),
        FIELD("apparmorProfile", oci_json_field_string, OciProcess, apparmor_profile, 0),
        FIELD_HAS("oomScoreAdj", field_oom_score_adj, OciProcess, oom_score_adj, has_oom_score_adj, 0),
        FIELD("selinuxLabel", oci_json_field_string, OciProcess, selinux_label, 0),
        FIELD_OBJECT_HAS("scheduler", scheduler_fields, check_scheduler, OciProcess, scheduler,
                         scheduler.present, 0),
        FIELD_OBJECT_HAS("ioPriority", io_priority_fields, check_io_priority, OciProcess, io_priority,
                         io_priority.present, 0),
        FIELD_SELF_OBJECT("execCPUAffinity", exec_cpu_affinity_fields, 0),
        {},
};

int parse_process_object(const cJSON *v, const OciJsonPath *p, OciProcess *proc, char **reterr) {
        int r;

        /* commandLine is Windows-only; on Linux "args" is REQUIRED, so refuse it rather than ignore it: the
         * author plainly meant it to be run. Check before the table so the message names it. */
        if (cJSON_IsObject(v) && cJSON_GetObjectItemCaseSensitive(v, "commandLine"))
                return oci_json_error_at(reterr, p, "commandLine", "is Windows-only; use \"args\" on Linux");

        r = oci_json_dispatch(v, p, process_table, proc, reterr);
        if (r < 0)
                return r;

        /* consoleSize is ignored unless terminal is true (spec); when used, it must fit a struct winsize. */
        if (proc->terminal && proc->has_console_size &&
            (proc->console_height > UINT16_MAX || proc->console_width > UINT16_MAX))
                return oci_json_error_at(reterr, p, "consoleSize", "height and width must be at most 65535");
        return 0;
}

int field_process(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return parse_process_object(v, p, dst, reterr);
}
