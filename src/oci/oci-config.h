/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The typed model of an OCI runtime-spec v1.3.0 config.json (Linux). Every field the spec defines for
 * Linux has a member here; "has_" flags mark optional scalars that were present. Strings are owned
 * (malloc'd) and NULL when absent; string arrays are NULL-terminated (strv) and NULL when absent. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct OciIdMapping {
        uint32_t container_id;
        uint32_t host_id;
        uint32_t size;
} OciIdMapping;

typedef struct OciUser {
        uint32_t uid;
        uint32_t gid;
        bool has_uid, has_gid; /* the spec requires both; runc and crun take a missing one as 0 */
        bool has_umask;
        uint32_t umask;
        uint32_t *additional_gids;
        size_t n_additional_gids;
        char *username; /* Windows-only in the spec; rejected if set? no: ignored, as it is not for Linux */
} OciUser;

typedef struct OciCapabilities {
        /* Capability numbers (CAP_*); a name unknown to sdrun is skipped with a warning at parse time. A name
         * the running kernel does not know is kept here and dropped with a warning at apply time. */
        int *bounding, *effective, *inheritable, *permitted, *ambient;
        size_t n_bounding, n_effective, n_inheritable, n_permitted, n_ambient;
        bool present;
} OciCapabilities;

typedef struct OciRlimit {
        int type; /* RLIMIT_* */
        uint64_t soft;
        uint64_t hard;
} OciRlimit;

typedef struct OciScheduler {
        bool present;
        int policy; /* SCHED_* */
        bool has_nice, has_priority, has_runtime, has_deadline, has_period;
        int32_t nice;
        int32_t priority;
        uint64_t flags; /* SCHED_FLAG_* bits */
        uint64_t runtime, deadline, period;
} OciScheduler;

typedef struct OciIoPriority {
        bool present;
        int klass; /* IOPRIO_CLASS_RT/BE/IDLE */
        int32_t priority;
} OciIoPriority;

typedef struct OciProcess {
        bool terminal;
        bool has_console_size;
        uint64_t console_height, console_width;
        OciUser user;
        char **args;
        char *command_line; /* Windows only: rejected on Linux */
        char **env;
        char *cwd;
        OciCapabilities capabilities;
        OciRlimit *rlimits;
        size_t n_rlimits;
        bool no_new_privileges;
        char *apparmor_profile;
        bool has_oom_score_adj;
        int oom_score_adj;
        char *selinux_label;
        OciScheduler scheduler;
        OciIoPriority io_priority;
        char *exec_cpu_affinity_initial; /* cpu list strings, validated */
        char *exec_cpu_affinity_final;
} OciProcess;

typedef struct OciMount {
        char *destination;
        char *type;
        char *source;
        char **options;
        OciIdMapping *uid_mappings, *gid_mappings;
        size_t n_uid_mappings, n_gid_mappings;
} OciMount;

typedef struct OciHook {
        char *path;
        char **args;
        char **env;
        bool has_timeout;
        int timeout; /* seconds, > 0 */
} OciHook;

typedef enum OciHookKind {
        OCI_HOOK_PRESTART,
        OCI_HOOK_CREATE_RUNTIME,
        OCI_HOOK_CREATE_CONTAINER,
        OCI_HOOK_START_CONTAINER,
        OCI_HOOK_POSTSTART,
        OCI_HOOK_POSTSTOP,
        _OCI_HOOK_MAX,
} OciHookKind;

typedef struct OciHooks {
        OciHook *hooks[_OCI_HOOK_MAX];
        size_t n_hooks[_OCI_HOOK_MAX];
} OciHooks;

typedef enum OciNamespaceType {
        OCI_NS_PID,
        OCI_NS_NETWORK,
        OCI_NS_MOUNT,
        OCI_NS_IPC,
        OCI_NS_UTS,
        OCI_NS_USER,
        OCI_NS_CGROUP,
        OCI_NS_TIME,
        _OCI_NS_MAX,
} OciNamespaceType;

typedef struct OciNamespace {
        OciNamespaceType type;
        char *path; /* NULL: create a new one */
} OciNamespace;

typedef struct OciDevice {
        char type; /* 'c', 'b', 'u', 'p' */
        char *path;
        int64_t major, minor; /* -1 when absent (allowed only for 'p') */
        bool has_file_mode, has_uid, has_gid;
        uint32_t file_mode;
        uint32_t uid, gid;
} OciDevice;

typedef struct OciDeviceCgroup {
        bool allow;
        char type;            /* 'a', 'c', 'b'; 'a' when absent */
        int64_t major, minor; /* -1 = wildcard */
        char access[4];       /* subset of "rwm"; "rwm" when absent */
} OciDeviceCgroup;

typedef struct OciBlockIoDevice {
        int64_t major, minor;
        bool has_weight, has_leaf_weight;
        uint16_t weight, leaf_weight;
        uint64_t rate; /* for throttle entries */
} OciBlockIoDevice;

typedef struct OciKeyValue {
        char *key;
        char *value;
} OciKeyValue;

typedef struct OciHugepageLimit {
        char *page_size;
        uint64_t limit;
} OciHugepageLimit;

typedef struct OciNetPriority {
        char *name;
        uint32_t priority;
} OciNetPriority;

typedef struct OciRdma {
        char *device;
        bool has_hca_handles, has_hca_objects;
        uint32_t hca_handles, hca_objects;
} OciRdma;

typedef struct OciResources {
        bool present;

        OciDeviceCgroup *devices;
        size_t n_devices;

        struct {
                bool present;
                bool has_limit, has_reservation, has_swap, has_kernel, has_kernel_tcp, has_swappiness;
                int64_t limit, reservation, swap, kernel, kernel_tcp; /* -1 = unlimited */
                uint64_t swappiness;
                bool has_disable_oom_killer, disable_oom_killer;
                bool has_use_hierarchy, use_hierarchy;
                bool has_check_before_update, check_before_update;
        } memory;

        struct {
                bool present;
                bool has_shares, has_quota, has_burst, has_period, has_realtime_runtime, has_realtime_period,
                        has_idle;
                uint64_t shares;
                int64_t quota; /* -1 = unlimited */
                uint64_t burst;
                uint64_t period;
                int64_t realtime_runtime;
                uint64_t realtime_period;
                int64_t idle;
                char *cpus;
                char *mems;
        } cpu;

        struct {
                bool present;
                bool has_limit;
                int64_t limit; /* <= 0: unlimited */
        } pids;

        struct {
                bool present;
                bool has_weight, has_leaf_weight;
                uint16_t weight, leaf_weight;
                OciBlockIoDevice *weight_device;
                size_t n_weight_device;
                OciBlockIoDevice *throttle_read_bps, *throttle_write_bps, *throttle_read_iops,
                        *throttle_write_iops;
                size_t n_throttle_read_bps, n_throttle_write_bps, n_throttle_read_iops,
                        n_throttle_write_iops;
        } block_io;

        OciHugepageLimit *hugepage_limits;
        size_t n_hugepage_limits;

        struct {
                bool present;
                bool has_class_id;
                uint32_t class_id;
                OciNetPriority *priorities;
                size_t n_priorities;
        } network;

        OciRdma *rdma;
        size_t n_rdma;

        OciKeyValue *unified;
        size_t n_unified;
} OciResources;

typedef enum OciSeccompAction {
        OCI_SECCOMP_KILL, /* SCMP_ACT_KILL == KILL_THREAD */
        OCI_SECCOMP_KILL_PROCESS,
        OCI_SECCOMP_KILL_THREAD,
        OCI_SECCOMP_TRAP,
        OCI_SECCOMP_ERRNO,
        OCI_SECCOMP_TRACE,
        OCI_SECCOMP_ALLOW,
        OCI_SECCOMP_LOG,
        OCI_SECCOMP_NOTIFY,
        _OCI_SECCOMP_ACTION_MAX,
} OciSeccompAction;

typedef enum OciSeccompOp {
        OCI_SECCOMP_OP_NE,
        OCI_SECCOMP_OP_LT,
        OCI_SECCOMP_OP_LE,
        OCI_SECCOMP_OP_EQ,
        OCI_SECCOMP_OP_GE,
        OCI_SECCOMP_OP_GT,
        OCI_SECCOMP_OP_MASKED_EQ,
        _OCI_SECCOMP_OP_MAX,
} OciSeccompOp;

typedef struct OciSeccompArg {
        uint32_t index;
        uint64_t value;
        uint64_t value_two;
        OciSeccompOp op;
} OciSeccompArg;

typedef struct OciSyscall {
        char **names;
        OciSeccompAction action;
        bool has_errno_ret;
        uint32_t errno_ret;
        OciSeccompArg *args;
        size_t n_args;
} OciSyscall;

typedef struct OciSeccomp {
        bool present;
        OciSeccompAction default_action;
        bool has_default_errno_ret;
        uint32_t default_errno_ret;
        char **architectures; /* "SCMP_ARCH_*" names, validated against the schema's enum */
        char **flags;         /* "SECCOMP_FILTER_FLAG_*" names, validated */
        char *listener_path;
        char *listener_metadata;
        OciSyscall *syscalls;
        size_t n_syscalls;
} OciSeccomp;

typedef struct OciTimeOffset {
        bool present;
        int64_t secs;
        uint32_t nanosecs;
} OciTimeOffset;

typedef struct OciLinux {
        bool present;
        OciIdMapping *uid_mappings, *gid_mappings;
        size_t n_uid_mappings, n_gid_mappings;
        OciNamespace *namespaces;
        size_t n_namespaces;
        OciDevice *devices;
        size_t n_devices;
        char *cgroups_path;
        OciResources resources;
        OciKeyValue *sysctl;
        size_t n_sysctl;
        OciSeccomp seccomp;
        char *rootfs_propagation; /* [r]private, [r]shared, [r]slave, [r]unbindable (validated) */
        char **masked_paths;
        char **readonly_paths;
        char *mount_label;
        struct {
                bool present;
                char *clos_id;
                char **schemata;
                char *l3_cache_schema;
                char *mem_bw_schema;
                bool enable_monitoring;
        } intel_rdt;
        struct {
                bool present;
                bool has_mode; /* an empty object, which runc accepts, is MPOL_DEFAULT */
                int mode;      /* MPOL_* */
                char *nodes;
                unsigned flags; /* MPOL_F_* */
        } memory_policy;
        struct {
                bool present;
                unsigned long domain; /* PER_LINUX / PER_LINUX32 */
        } personality;
        OciTimeOffset time_boottime, time_monotonic;
        OciKeyValue *net_devices; /* key: host name, value: name in the container (NULL: same) */
        size_t n_net_devices;
} OciLinux;

typedef struct OciConfig {
        char *oci_version;
        char *root_path; /* as written; resolved against the bundle by the caller */
        bool root_readonly;
        bool has_process;
        OciProcess process;
        char *hostname;
        char *domainname;
        OciMount *mounts;
        size_t n_mounts;
        OciHooks hooks;
        OciKeyValue *annotations;
        size_t n_annotations;
        OciLinux linux_;
} OciConfig;

/* Parse and validate a config.json document. On error returns negative errno and, when reterr_message is
 * non-NULL, a malloc'd message that names the JSON path, e.g.
 * "linux.namespaces[2].type: unknown namespace \"foo\"" (the caller prefixes "config.json: "). */
int oci_config_parse(const char *json, size_t len, OciConfig **ret, char **reterr_message);
/* The same, for a config that create already parsed and warned about (the copy in the state directory, read
 * again by start, exec, delete...): without its warnings, which were said once. */
int oci_config_reparse(const char *json, size_t len, OciConfig **ret, char **reterr_message);
/* Parse a process object (exec --process, or config.json's process) the same way; path_prefix is used in
 * messages ("process" for exec --process files). */
int oci_process_parse(const char *json, size_t len, OciProcess **ret, char **reterr_message);
int oci_config_load(int bundle_dir_fd, OciConfig **ret, char **reterr_message);
void oci_config_free(OciConfig *c);
void oci_process_free(OciProcess *p);
void oci_process_done(OciProcess *p);
/* Annotations look-up; NULL if absent. */
const char *oci_config_annotation(const OciConfig *c, const char *key);
bool oci_config_has_namespace(const OciConfig *c, OciNamespaceType t, const char **ret_path);
/* Whether a mount is a bind mount: type "bind", or a "bind"/"rbind" option (runc and crun accept both). */
bool oci_mount_is_bind(const OciMount *m);
/* Whether a mount is id-mapped: an "idmap" or "ridmap" option (the parser adds "idmap" where only mappings
 * are given). */
bool oci_mount_is_idmapped(const OciMount *m);

const char *oci_namespace_type_to_string(OciNamespaceType t);
const char *oci_hook_kind_to_string(OciHookKind k);
const char *oci_seccomp_action_to_string(OciSeccompAction a);
const char *oci_seccomp_op_to_string(OciSeccompOp o);

/* linux.seccomp's names, the one table of each: the parser, the filter (src/init/seccomp-filter.c) and
 * `features` read them. The spec's SCMP_ACT_* and SCMP_CMP_* names by enum value, NULL-terminated: */
extern const char *const oci_seccomp_action_names[_OCI_SECCOMP_ACTION_MAX + 1];
extern const char *const oci_seccomp_op_names[_OCI_SECCOMP_OP_MAX + 1];
/* The spec's SCMP_ARCH_* names and libseccomp's for them (seccomp_arch_resolve_name()). */
typedef struct OciSeccompArch {
        const char *name;
        const char *libseccomp;
} OciSeccompArch;
#define OCI_SECCOMP_N_ARCHS 23
extern const OciSeccompArch oci_seccomp_archs[OCI_SECCOMP_N_ARCHS];
/* The entry of a spec name; NULL when the spec has no such architecture. */
const OciSeccompArch *oci_seccomp_arch_find(const char *name);

static inline void oci_config_freep(OciConfig **c) {
        if (*c)
                oci_config_free(*c);
}
#define _cleanup_oci_config_ __attribute__((cleanup(oci_config_freep)))
static inline void oci_process_freep(OciProcess **p) {
        if (*p)
                oci_process_free(*p);
}
#define _cleanup_oci_process_ __attribute__((cleanup(oci_process_freep)))
