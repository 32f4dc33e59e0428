/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <unistd.h>

#include <sys/capability.h>

#include "fileio.h"
#include "macro.h"
#include "oci-config.h"
#include "strv.h"
#include "tap.h"

#define CASES TEST_SRCDIR "/tests/unit/oci-config-cases"

static OciConfig *load_case(const char *name) {
        _cleanup_close_ int dfd = -EBADF;
        _cleanup_free_ char *buf = NULL, *err = NULL;
        OciConfig *c = NULL;
        size_t size = 0;
        int r;

        dfd = open(CASES, O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return NULL;
        r = read_full_file_at(dfd, name, 4 << 20, &buf, &size);
        if (r < 0)
                return NULL;
        r = oci_config_parse(buf, size, &c, &err);
        if (r < 0)
                printf("# %s: %s\n", name, strna(err));
        return c;
}

static bool has_cap(const int *caps, size_t n, cap_value_t cap) {
        for (size_t i = 0; i < n; i++)
                if (caps[i] == cap)
                        return true;
        return false;
}

static void test_full(void) {
        _cleanup_oci_config_ OciConfig *c = load_case("full.json");
        const char *path = NULL;

        if (!tap_ok(c != NULL, "full.json parses"))
                return;

        tap_is_str(c->oci_version, "1.3.0", "ociVersion");
        tap_is_str(c->root_path, "rootfs", "root.path");
        tap_ok(c->root_readonly, "root.readonly");
        tap_is_str(c->hostname, "sdrun-full", "hostname");
        tap_is_str(c->domainname, "example.org", "domainname");

        /* process */
        const OciProcess *p = &c->process;
        tap_ok(c->has_process, "process present");
        tap_ok(p->terminal, "process.terminal");
        tap_ok(p->has_console_size && p->console_height == 25 && p->console_width == 80, "consoleSize");
        tap_ok(p->user.uid == 1000 && p->user.gid == 1000, "user uid/gid");
        tap_ok(p->user.has_umask && p->user.umask == 18, "user.umask");
        tap_ok(p->user.n_additional_gids == 3 && p->user.additional_gids[2] == UINT32_MAX, "additionalGids");
        tap_is_str(p->args[2], "echo hello", "args[2]");
        tap_ok(p->args[3] == NULL, "args NULL-terminated");
        tap_is_str(p->env[2], "EMPTY=", "env[2]");
        tap_is_str(p->cwd, "/", "cwd");
        tap_ok(p->capabilities.present, "capabilities present");
        tap_is_int(p->capabilities.n_bounding, 4, "4 bounding capabilities");
        tap_ok(has_cap(p->capabilities.bounding, p->capabilities.n_bounding, CAP_SYS_ADMIN), "CAP_SYS_ADMIN bounding");
        tap_is_int(p->capabilities.n_inheritable, 0, "empty inheritable");
        tap_ok(p->capabilities.n_ambient == 1 && p->capabilities.ambient[0] == CAP_NET_BIND_SERVICE, "ambient");
        tap_is_int(p->n_rlimits, 2, "2 rlimits");
        tap_ok(p->rlimits[0].type == RLIMIT_NOFILE && p->rlimits[0].soft == 1024, "RLIMIT_NOFILE");
        tap_ok(p->rlimits[1].type == RLIMIT_CORE && p->rlimits[1].hard == UINT64_MAX, "uint64 max is exact");
        tap_ok(p->rlimits[1].soft == (uint64_t) INT64_MAX, "2^63-1 is exact (not rounded through a double)");
        tap_ok(p->no_new_privileges, "noNewPrivileges");
        tap_is_str(p->apparmor_profile, "acme_secure_profile", "apparmorProfile");
        tap_ok(p->has_oom_score_adj && p->oom_score_adj == -500, "oomScoreAdj");
        tap_ok(p->selinux_label != NULL, "selinuxLabel");
        tap_ok(p->scheduler.present && p->scheduler.policy == 6, "scheduler.policy SCHED_DEADLINE");
        tap_ok(p->scheduler.has_nice && p->scheduler.nice == -5, "scheduler.nice");
        tap_is_int(p->scheduler.flags, 0x01 | 0x04, "scheduler.flags bits");
        tap_ok(p->scheduler.has_period && p->scheduler.period == 30000000, "scheduler.period");
        tap_ok(p->io_priority.present && p->io_priority.klass == 3 && p->io_priority.priority == 4, "ioPriority");
        tap_is_str(p->exec_cpu_affinity_initial, "7", "execCPUAffinity.initial");
        tap_is_str(p->exec_cpu_affinity_final, "0-3,7", "execCPUAffinity.final");

        /* mounts */
        tap_is_int(c->n_mounts, 8, "8 mounts");
        tap_is_str(c->mounts[1].destination, "/dev", "mounts[1].destination");
        tap_is_str(c->mounts[1].options[3], "size=65536k", "mounts[1].options[3]");
        tap_ok(c->mounts[0].options == NULL, "mounts[0] without options");
        tap_ok(c->mounts[7].n_uid_mappings == 1 && c->mounts[7].uid_mappings[0].host_id == 100000,
               "idmapped mount uidMappings");

        /* hooks */
        for (OciHookKind k = 0; k < _OCI_HOOK_MAX; k++)
                tap_is_int(c->hooks.n_hooks[k], 1, "one %s hook", oci_hook_kind_to_string(k));
        tap_is_str(c->hooks.hooks[OCI_HOOK_PRESTART][0].env[0], "key1=value1", "prestart env");
        tap_ok(c->hooks.hooks[OCI_HOOK_POSTSTART][0].has_timeout && c->hooks.hooks[OCI_HOOK_POSTSTART][0].timeout == 5,
               "poststart timeout");
        tap_ok(!c->hooks.hooks[OCI_HOOK_POSTSTOP][0].has_timeout, "poststop has no timeout");

        /* annotations */
        tap_is_int(c->n_annotations, 3, "3 annotations");
        tap_is_str(oci_config_annotation(c, "com.example.key1"), "value1", "annotation look-up");
        tap_is_str(oci_config_annotation(c, "com.example.key2"), "", "empty annotation value");
        tap_ok(oci_config_annotation(c, "nope") == NULL, "missing annotation");

        /* linux */
        const OciLinux *l = &c->linux_;
        tap_ok(l->present, "linux present");
        tap_is_int(l->n_namespaces, 8, "8 namespaces");
        tap_ok(oci_config_has_namespace(c, OCI_NS_NETWORK, &path) && streq_ptr(path, "/var/run/netns/neta"),
               "network namespace path");
        tap_ok(oci_config_has_namespace(c, OCI_NS_TIME, &path) && path == NULL, "new time namespace");
        tap_ok(l->n_uid_mappings == 1 && l->uid_mappings[0].size == 32000, "uidMappings");
        tap_ok(l->time_boottime.present && l->time_boottime.secs == -86400 && l->time_boottime.nanosecs == 500,
               "timeOffsets.boottime");
        tap_ok(l->time_monotonic.present && l->time_monotonic.secs == INT64_MAX, "timeOffsets.monotonic int64 max");
        tap_is_int(l->n_devices, 3, "3 devices");
        tap_ok(l->devices[0].type == 'c' && l->devices[0].major == 10 && l->devices[0].minor == 229 &&
               l->devices[0].has_file_mode && l->devices[0].file_mode == 438, "devices[0]");
        tap_ok(l->devices[1].has_file_mode && !l->devices[1].has_uid, "devices[1] without uid");
        tap_ok(l->devices[2].type == 'p' && l->devices[2].major == -1, "fifo without numbers");
        tap_is_int(l->n_net_devices, 0, "empty netDevices accepted");
        tap_is_str(l->cgroups_path, "/myRuntime/myContainer", "cgroupsPath");

        const OciResources *r = &l->resources;
        tap_ok(r->present, "resources present");
        tap_is_int(r->n_devices, 3, "3 device rules");
        tap_ok(!r->devices[0].allow && r->devices[0].type == 'a' && r->devices[0].major == -1, "deny-all rule");
        tap_is_str(r->devices[1].access, "rw", "access normalised to rwm order");
        tap_ok(r->devices[2].minor == -1, "minor -1 = wildcard");
        tap_ok(r->memory.present && r->memory.has_limit && r->memory.limit == 536870912, "memory.limit");
        tap_ok(r->memory.has_kernel && r->memory.kernel == -1, "memory.kernel -1 accepted");
        tap_ok(r->memory.has_swappiness && r->memory.swappiness == 0, "swappiness 0 is present");
        tap_ok(r->memory.has_check_before_update && r->memory.check_before_update, "checkBeforeUpdate");
        tap_ok(r->cpu.has_quota && r->cpu.quota == 1000000 && r->cpu.has_burst, "cpu quota/burst");
        tap_is_str(r->cpu.cpus, "2-3", "cpu.cpus");
        tap_ok(r->cpu.has_idle && r->cpu.idle == 0, "cpu.idle");
        tap_ok(r->pids.has_limit && r->pids.limit == 32771, "pids.limit");
        tap_ok(r->block_io.has_weight && r->block_io.weight == 10, "blockIO.weight");
        tap_ok(r->block_io.n_weight_device == 2 && r->block_io.weight_device[1].weight == 1000, "weightDevice");
        tap_ok(r->block_io.n_throttle_write_bps == 1 && r->block_io.throttle_write_bps[0].rate == UINT64_MAX,
               "throttle rate uint64 max");
        tap_ok(r->n_hugepage_limits == 2 && streq(r->hugepage_limits[1].page_size, "64KB"), "hugepageLimits");
        tap_ok(r->n_unified == 2 && streq(r->unified[0].key, "io.max") && strchr(r->unified[0].value, '\n'),
               "unified");
        tap_is_int(l->n_sysctl, 2, "2 sysctls");
        tap_is_str(l->sysctl[0].key, "net.ipv4.ip_forward", "sysctl key");

        const OciSeccomp *s = &l->seccomp;
        tap_ok(s->present && s->default_action == OCI_SECCOMP_ERRNO, "seccomp.defaultAction");
        tap_ok(s->has_default_errno_ret && s->default_errno_ret == 1, "defaultErrnoRet");
        tap_is_str(s->architectures[1], "SCMP_ARCH_X86", "architectures[1]");
        tap_is_str(s->flags[0], "SECCOMP_FILTER_FLAG_LOG", "flags[0]");
        tap_is_str(s->listener_path, "/run/seccomp-agent.socket", "listenerPath");
        tap_is_int(s->n_syscalls, 5, "5 syscall rules");
        tap_ok(s->syscalls[1].n_args == 2 && s->syscalls[1].args[1].index == 5 &&
               s->syscalls[1].args[1].value == UINT64_MAX && s->syscalls[1].args[1].value_two == UINT32_MAX &&
               s->syscalls[1].args[1].op == OCI_SECCOMP_OP_MASKED_EQ, "seccomp args");
        tap_ok(s->syscalls[2].has_errno_ret && s->syscalls[2].errno_ret == 38, "errnoRet");
        tap_ok(s->syscalls[3].action == OCI_SECCOMP_NOTIFY, "SCMP_ACT_NOTIFY");
        tap_is_str(oci_seccomp_action_to_string(s->syscalls[4].action), "SCMP_ACT_KILL_PROCESS", "action name");

        tap_is_str(l->rootfs_propagation, "slave", "rootfsPropagation");
        tap_is_str(l->masked_paths[2], "/sys/firmware", "maskedPaths");
        tap_is_str(l->readonly_paths[0], "/proc/asound", "readonlyPaths");
        tap_ok(l->mount_label != NULL, "mountLabel");
        tap_ok(l->memory_policy.present && l->memory_policy.mode == 3 && l->memory_policy.flags == (1u << 15) &&
               streq_ptr(l->memory_policy.nodes, "0-1"), "memoryPolicy");
        tap_ok(l->personality.present && l->personality.domain == PER_LINUX32, "personality");
        tap_ok(!l->intel_rdt.present, "no intelRdt");

        tap_is_str(oci_namespace_type_to_string(OCI_NS_CGROUP), "cgroup", "namespace name");
        tap_is_str(oci_seccomp_op_to_string(OCI_SECCOMP_OP_GE), "SCMP_CMP_GE", "operator name");
        tap_ok(oci_namespace_type_to_string(_OCI_NS_MAX) == NULL, "out-of-range enum name is NULL");
}

static void test_generated_specs(void) {
        static const char *const names[] = { "runc-spec.json", "runc-spec-rootless.json", "crun-spec.json" };

        FOREACH_ARRAY(n, names, ELEMENTSOF(names)) {
                _cleanup_oci_config_ OciConfig *c = load_case(*n);
                tap_ok(c && c->has_process && c->process.args && c->linux_.n_namespaces > 0, "%s parses", *n);
        }
}

typedef struct BadCase {
        const char *json;
        const char *expect; /* substring of the error message: the JSON path (and reason) */
} BadCase;

#define MIN_ "\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"rootfs\"}"
#define PROC_ "\"process\":{\"cwd\":\"/\",\"args\":[\"sh\"]"
#define LNX_ "\"linux\":{"

static const BadCase bad_cases[] = {
        /* document level */
        { "", "empty" },
        { "   \n", "empty" },
        { "{" MIN_ "} trailing", "syntax error at line 1" },
        { "{" MIN_ ",}", "syntax error" },
        { "[]", "expected a JSON object" },
        { "{\"root\":{\"path\":\"rootfs\"}}", "ociVersion: required property is missing" },
        { "{\"ociVersion\":\"1.3.0\"}", "root: required property is missing" },
        { "{\"ociVersion\":1,\"root\":{\"path\":\"rootfs\"}}", "ociVersion: expected a string, got number" },
        { "{\"ociVersion\":\"2.0.0\",\"root\":{\"path\":\"rootfs\"}}", "ociVersion: unsupported version" },
        { "{\"ociVersion\":\"2.0\",\"root\":{\"path\":\"rootfs\"}}", "ociVersion: \"2.0\" is not a SemVer" },
        { "{\"ociVersion\":\"x1.0.0\",\"root\":{\"path\":\"rootfs\"}}", "ociVersion: \"x1.0.0\" is not a SemVer" },
        { "{" MIN_ ",\"ociVersion\":\"1.3.0\"}", "ociVersion: duplicate key" },
        { "{" MIN_ ",\"hostname\":\"h\\u0000x\"," LNX_ "\"namespaces\":[{\"type\":\"uts\"}]}}",
          "hostname: string contains a NUL" },
        { "{" MIN_ ",\"hostname\":\"\xff\xfe\"}", "hostname: string is not valid UTF-8" },
        { "{" MIN_ ",\"hostname\":\"\xc0\xaf\"}", "hostname: string is not valid UTF-8" }, /* overlong '/' */
        { "{" MIN_ ",\"hostname\":\"\xed\xa0\x80\"}", "hostname: string is not valid UTF-8" }, /* surrogate */
        { "{" MIN_ ",\"hostname\":\"box\"}", "hostname: requires a uts namespace" },
        { "{" MIN_ ",\"root\":null}", "root: duplicate key" },
        { "{\"ociVersion\":\"1.3.0\",\"root\":null}", "root: required property is null" },
        { "{\"ociVersion\":null,\"root\":{\"path\":\"rootfs\"}}", "ociVersion: required property is null" },
        { "{" MIN_ ",\"process\":{\"cwd\":null,\"args\":[\"sh\"]}}", "process.cwd: required property is null" },
        { "{" MIN_ ",\"mounts\":[null]}", "mounts[0]: expected an object, got null" },
        { "{" MIN_ "," PROC_ ",\"env\":[\"A=1\",null]}}", "process.env[1]: expected a string, got null" },
        { "{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"\"}}", "root.path: must not be empty" },
        { "{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"r\",\"readonly\":\"yes\"}}",
          "root.readonly: expected a boolean, got string" },
        /* process */
        { "{" MIN_ ",\"process\":{\"args\":[\"sh\"]}}", "process.cwd: required property is missing" },
        { "{" MIN_ ",\"process\":{\"cwd\":\"relative\",\"args\":[\"sh\"]}}", "process.cwd: \"relative\" is not an absolute" },
        { "{" MIN_ ",\"process\":{\"cwd\":\"/\",\"args\":[]}}", "process.args: must contain at least one entry" },
        { "{" MIN_ ",\"process\":{\"cwd\":\"/\"}}", "process.args: required property is missing" },
        { "{" MIN_ ",\"process\":{\"cwd\":\"/\",\"commandLine\":\"cmd.exe\"}}", "process.commandLine: is Windows-only" },
        { "{" MIN_ "," PROC_ ",\"env\":[\"PATH=/bin\",\"NOEQUALS\"]}}", "process.env[1]: environment entry" },
        { "{" MIN_ "," PROC_ ",\"user\":{\"uid\":-1,\"gid\":0}}}", "process.user.uid: expected an unsigned integer, got -1" },
        { "{" MIN_ "," PROC_ ",\"user\":{\"uid\":4294967296,\"gid\":0}}}", "process.user.uid: value 4294967296 out of range" },
        { "{" MIN_ "," PROC_ ",\"user\":{\"uid\":1.5,\"gid\":0}}}", "process.user.uid: expected an integer, got 1.5" },
        { "{" MIN_ "," PROC_ ",\"user\":{\"uid\":1e3,\"gid\":0}}}", "process.user.uid: expected an integer, got 1e3" },
        { "{" MIN_ "," PROC_ ",\"user\":{\"uid\":0,\"gid\":0,\"additionalGids\":[1,\"2\"]}}}",
          "process.user.additionalGids[1]: expected a number, got string" },
        { "{" MIN_ "," PROC_ ",\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"soft\":10,\"hard\":5}]}}",
          "process.rlimits[0].soft: soft limit is larger" },
        { "{" MIN_ "," PROC_ ",\"rlimits\":[{\"type\":\"RLIMIT_FOO\",\"soft\":1,\"hard\":1}]}}",
          "process.rlimits[0].type: unknown resource limit \"RLIMIT_FOO\"" },
        { "{" MIN_ "," PROC_ ",\"rlimits\":[{\"type\":\"RLIMIT_CORE\",\"soft\":1,\"hard\":1},"
          "{\"type\":\"RLIMIT_CORE\",\"soft\":1,\"hard\":1}]}}", "process.rlimits[1].type: duplicate resource limit" },
        { "{" MIN_ "," PROC_ ",\"rlimits\":[{\"type\":\"RLIMIT_CORE\",\"soft\":1e400,\"hard\":1}]}}",
          "process.rlimits[0].soft: expected an integer, got 1e400" },
        { "{" MIN_ "," PROC_ ",\"rlimits\":[{\"type\":\"RLIMIT_CORE\",\"soft\":1,\"hard\":18446744073709551616}]}}",
          "process.rlimits[0].hard: value 18446744073709551616 out of range" },
        { "{" MIN_ "," PROC_ ",\"oomScoreAdj\":1001}}", "process.oomScoreAdj: value 1001 out of range (-1000..1000)" },
        { "{" MIN_ "," PROC_ ",\"scheduler\":{\"policy\":\"SCHED_FOO\"}}}", "process.scheduler.policy: unknown scheduling policy" },
        { "{" MIN_ "," PROC_ ",\"scheduler\":{\"policy\":\"SCHED_ISO\"}}}", "process.scheduler.policy: SCHED_ISO is reserved" },
        { "{" MIN_ "," PROC_ ",\"scheduler\":{\"policy\":\"SCHED_OTHER\",\"flags\":[\"SCHED_FLAG_X\"]}}}",
          "process.scheduler.flags[0]: unknown scheduler flag" },
        { "{" MIN_ "," PROC_ ",\"scheduler\":{\"nice\":1}}}", "process.scheduler.policy: required property is missing" },
        { "{" MIN_ "," PROC_ ",\"ioPriority\":{\"class\":\"IOPRIO_CLASS_BE\",\"priority\":8}}}",
          "process.ioPriority.priority: value 8 out of range (0..7)" },
        { "{" MIN_ "," PROC_ ",\"ioPriority\":{\"class\":\"IOPRIO_CLASS_NONE\"}}}", "process.ioPriority.class: unknown" },
        { "{" MIN_ "," PROC_ ",\"execCPUAffinity\":{\"final\":\"3-1\"}}}", "process.execCPUAffinity.final: invalid range 3-1" },
        { "{" MIN_ "," PROC_ ",\"execCPUAffinity\":{\"initial\":\"0,,1\"}}}", "process.execCPUAffinity.initial: invalid CPU" },
        { "{" MIN_ "," PROC_ ",\"execCPUAffinity\":{\"initial\":\"a\"}}}", "process.execCPUAffinity.initial: invalid CPU" },
        { "{" MIN_ "," PROC_ ",\"terminal\":true,\"consoleSize\":{\"height\":70000,\"width\":80}}}",
          "process.consoleSize: height and width must be at most 65535" },
        /* mounts, hooks, annotations */
        { "{" MIN_ ",\"mounts\":[{\"type\":\"proc\"}]}", "mounts[0].destination: required property is missing" },
        { "{" MIN_ ",\"mounts\":[{\"destination\":\"/a\",\"options\":\"ro\"}]}", "mounts[0].options: expected an array" },
        { "{" MIN_ ",\"mounts\":[{\"destination\":\"/a\",\"uidMappings\":[{\"containerID\":0,\"hostID\":1,\"size\":1}]}]}",
          "mounts[0].uidMappings: must be given together with gidMappings" },
        { "{" MIN_ ",\"mounts\":[{\"destination\":\"/a\",\"type\":\"tmpfs\",\"uidMappings\":[{\"containerID\":0,\"hostID\":1,\"size\":1}],"
          "\"gidMappings\":[{\"containerID\":0,\"hostID\":1,\"size\":1}]}]}",
          "mounts[0].options: \"idmap\" and \"ridmap\" are supported for bind mounts only" },
        { "{" MIN_ ",\"mounts\":[{\"destination\":\"/a\",\"source\":\"/s\",\"options\":[\"bind\",\"idmap\"]}]}",
          "mounts[0]: \"idmap\" without uidMappings and gidMappings needs the container's user namespace" },
        { "{" MIN_ ",\"hooks\":{\"prestart\":[{\"path\":\"hook.sh\"}]}}", "hooks.prestart[0].path: \"hook.sh\" is not an absolute" },
        { "{" MIN_ ",\"hooks\":{\"poststop\":[{\"path\":\"/bin/true\",\"timeout\":0}]}}", "hooks.poststop[0].timeout: must be" },
        { "{" MIN_ ",\"hooks\":{\"createRuntime\":[{\"path\":\"/bin/true\",\"timeout\":-3}]}}",
          "hooks.createRuntime[0].timeout: must be" },
        { "{" MIN_ ",\"annotations\":{\"\":\"x\"}}", "annotations: empty key" },
        { "{" MIN_ ",\"annotations\":{\"a\":1}}", "annotations.a: expected a string, got number" },
        { "{" MIN_ ",\"annotations\":{\"com.x\":\"1\",\"com.x\":\"2\"}}", "annotations[\"com.x\"]: duplicate key" },
        /* linux */
        { "{" MIN_ "," LNX_ "\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"mount\"},{\"type\":\"foo\"}]}}",
          "linux.namespaces[2].type: unknown namespace \"foo\"" },
        { "{" MIN_ "," LNX_ "\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"pid\"}]}}",
          "linux.namespaces[1].type: duplicate namespace \"pid\"" },
        { "{" MIN_ "," LNX_ "\"namespaces\":[{\"type\":\"net\",\"path\":\"/x\"}]}}", "linux.namespaces[0].type: unknown namespace" },
        { "{" MIN_ "," LNX_ "\"namespaces\":[{\"type\":\"network\",\"path\":\"run/netns/x\"}]}}",
          "linux.namespaces[0].path: \"run/netns/x\" is not an absolute path" },
        { "{" MIN_ "," LNX_ "\"namespaces\":[{\"type\":\"user\"}],\"uidMappings\":[{\"containerID\":0,\"hostID\":1000,\"size\":0}]}}",
          "linux.uidMappings[0].size: must be at least 1" },
        { "{" MIN_ "," LNX_ "\"namespaces\":[{\"type\":\"time\"}],\"timeOffsets\":{\"realtime\":{\"secs\":1}}}}",
          "linux.timeOffsets.realtime: unknown clock" },
        { "{" MIN_ "," LNX_ "\"namespaces\":[{\"type\":\"time\"}],\"timeOffsets\":{\"monotonic\":{\"nanosecs\":1000000000}}}}",
          "linux.timeOffsets.monotonic.nanosecs: value 1000000000 out of range" },
        { "{" MIN_ "," LNX_ "\"devices\":[{\"type\":\"x\",\"path\":\"/dev/x\"}]}}", "linux.devices[0].type: unknown device type" },
        { "{" MIN_ "," LNX_ "\"devices\":[{\"type\":\"c\",\"path\":\"dev/null\",\"major\":1,\"minor\":3}]}}",
          "linux.devices[0].path: \"dev/null\" is not an absolute path" },
        { "{" MIN_ "," LNX_ "\"devices\":[{\"type\":\"c\",\"path\":\"/dev/null\",\"major\":1}]}}",
          "linux.devices[0].minor: required for device type 'c'" },
        { "{" MIN_ "," LNX_ "\"resources\":{\"devices\":[{\"allow\":true,\"access\":\"xyz\"}]}}}",
          "linux.resources.devices[0].access: invalid access \"xyz\"" },
        { "{" MIN_ "," LNX_ "\"resources\":{\"devices\":[{\"access\":\"r\"}]}}}",
          "linux.resources.devices[0].allow: required property is missing" },
        { "{" MIN_ "," LNX_ "\"resources\":{\"devices\":[{\"allow\":true,\"type\":\"p\"}]}}}",
          "linux.resources.devices[0].type: unknown device type" },
        { "{" MIN_ "," LNX_ "\"resources\":{\"memory\":{\"limit\":-2}}}}", "linux.resources.memory.limit: value -2 out of range" },
        { "{" MIN_ "," LNX_ "\"resources\":{\"memory\":{\"limit\":9223372036854775808}}}}",
          "linux.resources.memory.limit: value 9223372036854775808 out of range" },
        { "{" MIN_ "," LNX_ "\"resources\":{\"memory\":{\"swappiness\":101}}}}", "linux.resources.memory.swappiness: value 101" },
        { "{" MIN_ "," LNX_ "\"resources\":{\"cpu\":{\"cpus\":\"0-\"}}}}", "linux.resources.cpu.cpus: invalid CPU/node list" },
        { "{" MIN_ "," LNX_ "\"resources\":{\"pids\":{}}}}", "linux.resources.pids.limit: required property is missing" },
        { "{" MIN_ "," LNX_ "\"resources\":{\"blockIO\":{\"weight\":5}}}}", "linux.resources.blockIO.weight: value 5 out of range (10..1000" },
        { "{" MIN_ "," LNX_ "\"resources\":{\"blockIO\":{\"weight\":1001}}}}", "linux.resources.blockIO.weight: value 1001 out of range (10..1000" },
        { "{" MIN_ "," LNX_ "\"resources\":{\"blockIO\":{\"weightDevice\":[{\"major\":8,\"minor\":0}]}}}}",
          "linux.resources.blockIO.weightDevice[0]: at least one of" },
        { "{" MIN_ "," LNX_ "\"resources\":{\"blockIO\":{\"leafWeight\":500}}}}", "linux.resources.blockIO: leafWeight" },
        { "{" MIN_ "," LNX_ "\"resources\":{\"hugepageLimits\":[{\"pageSize\":\"2M\",\"limit\":1}]}}}",
          "linux.resources.hugepageLimits[0].pageSize: invalid page size" },
        { "{" MIN_ "," LNX_ "\"resources\":{\"unified\":{\"../../cgroup.procs\":\"1\"}}}}",
          "linux.resources.unified[\"../../cgroup.procs\"]: not a cgroup file name" },
        { "{" MIN_ "," LNX_ "\"resources\":{\"rdma\":{\"mlx5_1\":{\"hcaHandles\":3}}}}}", "linux.resources.rdma: the rdma controller" },
        { "{" MIN_ "," LNX_ "\"resources\":{\"rdma\":{\"mlx5_1\":{}}}}}", "linux.resources.rdma.mlx5_1: at least one of" },
        { "{" MIN_ "," LNX_ "\"resources\":{\"network\":{\"classID\":1048577}}}}", "linux.resources.network: net_cls" },
        { "{" MIN_ "," LNX_ "\"sysctl\":{\"net..ipv4\":\"1\"}}}", "linux.sysctl[\"net..ipv4\"]: invalid sysctl name" },
        { "{" MIN_ "," LNX_ "\"sysctl\":{\"kernel.x\":1}}}", "linux.sysctl[\"kernel.x\"]: expected a string" },
        { "{" MIN_ "," LNX_ "\"seccomp\":{\"defaultAction\":\"SCMP_ACT_FOO\"}}}", "linux.seccomp.defaultAction: unknown seccomp action" },
        { "{" MIN_ "," LNX_ "\"seccomp\":{\"syscalls\":[]}}}", "linux.seccomp.defaultAction: required property is missing" },
        { "{" MIN_ "," LNX_ "\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"architectures\":[\"SCMP_ARCH_Z80\"]}}}",
          "linux.seccomp.architectures[0]: unknown seccomp architecture" },
        { "{" MIN_ "," LNX_ "\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"flags\":[\"SECCOMP_FILTER_FLAG_NEW_LISTENER\"]}}}",
          "linux.seccomp.flags[0]: unknown seccomp flag" },
        { "{" MIN_ "," LNX_ "\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"read\"],"
          "\"action\":\"SCMP_ACT_KILL\",\"errnoRet\":1}]}}}", "linux.seccomp.syscalls[0].errnoRet: only valid with" },
        { "{" MIN_ "," LNX_ "\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"defaultErrnoRet\":1}}}",
          "linux.seccomp.defaultErrnoRet: only valid with" },
        { "{" MIN_ "," LNX_ "\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"read\"],"
          "\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":6,\"value\":0,\"op\":\"SCMP_CMP_EQ\"}]}]}}}",
          "linux.seccomp.syscalls[0].args[0].index: value 6 out of range (0..5)" },
        { "{" MIN_ "," LNX_ "\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"read\"],"
          "\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,\"value\":0,\"op\":\"SCMP_CMP_FOO\"}]}]}}}",
          "linux.seccomp.syscalls[0].args[0].op: unknown seccomp operator" },
        { "{" MIN_ "," LNX_ "\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"read\"],"
          "\"action\":\"SCMP_ACT_NOTIFY\"}]}}}", "linux.seccomp.syscalls[0].action: SCMP_ACT_NOTIFY requires" },
        { "{" MIN_ "," LNX_ "\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"listenerMetadata\":\"x\"}}}",
          "linux.seccomp.listenerMetadata: must not be set without listenerPath" },
        /* runc refuses an unknown propagation (crun ignores it): refused */
        { "{" MIN_ "," LNX_ "\"rootfsPropagation\":\"rbogus\"}}", "linux.rootfsPropagation: unknown propagation" },
        /* fileMode: the 16 bits of a mode_t, type bits included (masked), nothing above */
        { "{" MIN_ "," LNX_ "\"devices\":[{\"type\":\"c\",\"path\":\"/dev/x\",\"major\":1,\"minor\":3,\"fileMode\":65536}]}}",
          "linux.devices[0].fileMode: value 65536 out of range" },
        { "{" MIN_ "," LNX_ "\"maskedPaths\":[\"/proc/kcore\",\"\"]}}", "linux.maskedPaths[1]: \"\" is not an absolute" },
        { "{" MIN_ "," LNX_ "\"readonlyPaths\":[\"\"]}}", "linux.readonlyPaths[0]: \"\" is not an absolute" },
        { "{" MIN_ "," LNX_ "\"intelRdt\":{\"closID\":\"guaranteed_group\"}}}", "linux.intelRdt: Intel RDT is not supported by sdrun" },
        { "{" MIN_ "," LNX_ "\"intelRdt\":{\"memBwSchema\":\"L3:0=1\"}}}", "linux.intelRdt.memBwSchema: must start with" },
        { "{" MIN_ "," LNX_ "\"netDevices\":{\"eth0\":{\"name\":\"../x\"}}}}", "linux.netDevices.eth0.name: invalid network interface" },
        { "{" MIN_ "," LNX_ "\"memoryPolicy\":{\"mode\":\"MPOL_BIND\"}}}", "linux.memoryPolicy.nodes: at least one node" },
        { "{" MIN_ "," LNX_ "\"memoryPolicy\":{\"mode\":\"MPOL_LOCAL\",\"nodes\":\"0\"}}}", "linux.memoryPolicy.nodes: must be empty" },
        { "{" MIN_ "," LNX_ "\"memoryPolicy\":{\"mode\":\"MPOL_X\"}}}", "linux.memoryPolicy.mode: unknown memory policy mode" },
        { "{" MIN_ "," LNX_ "\"memoryPolicy\":{\"nodes\":\"0\"}}}", "linux.memoryPolicy.mode: required property is missing" },
        { "{" MIN_ "," LNX_ "\"memoryPolicy\":{\"mode\":\"MPOL_BIND\",\"nodes\":\"0\",\"flags\":[\"MPOL_F_STATIC_NODES\","
          "\"MPOL_F_RELATIVE_NODES\"]}}}", "linux.memoryPolicy.flags: MPOL_F_STATIC_NODES and MPOL_F_RELATIVE_NODES" },
        { "{" MIN_ "," LNX_ "\"personality\":{\"domain\":\"LINUX64\"}}}", "linux.personality.domain: unknown personality domain" },
        { "{" MIN_ "," LNX_ "\"cgroupsPath\":[\"a\"]}}", "linux.cgroupsPath: expected a string, got array" },
        { "{" MIN_ ",\"linux\":[]}", "linux: expected an object, got array" },
};

static void test_bad_cases(void) {
        FOREACH_ARRAY(t, bad_cases, ELEMENTSOF(bad_cases)) {
                _cleanup_oci_config_ OciConfig *c = NULL;
                _cleanup_free_ char *err = NULL;
                int r;

                r = oci_config_parse(t->json, strlen(t->json), &c, &err);
                tap_ok(r == -EINVAL && !c && err && strstr(err, t->expect), "rejected: %s", t->expect);
                printf("#   r=%d message: %s\n", r, strna(err));
        }
}

static void test_deep_nesting(void) {
        /* 100000 '[' under a known and under an unknown key: cJSON's nesting limit refuses both without
         * recursing 100000 deep. */
        const size_t depth = 100000;
        static const char *const prefixes[] = { "{\"ociVersion\":\"1.3.0\",\"x\":", "{\"linux\":" };

        FOREACH_ARRAY(pfx, prefixes, ELEMENTSOF(prefixes)) {
                _cleanup_oci_config_ OciConfig *c = NULL;
                _cleanup_free_ char *err = NULL, *doc = NULL;
                size_t pl = strlen(*pfx);
                int r;

                doc = malloc(pl + depth * 2 + 2);
                assert(doc);
                memcpy(doc, *pfx, pl);
                memset(doc + pl, '[', depth);
                memset(doc + pl + depth, ']', depth);
                doc[pl + depth * 2] = '}';
                doc[pl + depth * 2 + 1] = 0;

                r = oci_config_parse(doc, strlen(doc), &c, &err);
                tap_ok(r == -EINVAL && err && strstr(err, "nesting"), "100000 nested arrays rejected (%s)", strna(err));
        }
}

static void test_embedded_nul_byte(void) {
        static const char doc[] = "{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"rootfs\"}}\0{garbage";
        _cleanup_oci_config_ OciConfig *c = NULL;
        _cleanup_free_ char *err = NULL;

        tap_is_int(oci_config_parse(doc, sizeof(doc) - 1, &c, &err), -EINVAL, "NUL byte inside the buffer rejected");
        tap_ok(err && strstr(err, "NUL byte at offset"), "message names the offset");
}

static void test_unknown_keys_ignored(void) {
        static const char doc[] =
                "{\"ociVersion\":\"1.0.2-dev\",\"root\":{\"path\":\"/abs/rootfs\",\"future\":1},"
                "\"process\":{\"cwd\":\"/\",\"args\":[\"sh\"],\"user\":{\"uid\":0,\"gid\":0,\"username\":\"ContainerUser\"}},"
                "\"linux\":{\"resources\":{\"network\":{},\"rdma\":{},\"newController\":{\"x\":1}},\"newThing\":null},"
                "\"windows\":{\"anything\":[1,2]},\"vm\":null}";
        _cleanup_oci_config_ OciConfig *c = NULL;
        _cleanup_free_ char *err = NULL;
        int r;

        r = oci_config_parse(doc, strlen(doc), &c, &err);
        tap_is_int(r, 0, "unknown keys and other platforms ignored (%s)", strna(err));
        tap_ok(c && streq_ptr(c->process.user.username, "ContainerUser"), "username kept");
        tap_ok(c && !c->linux_.intel_rdt.present && c->linux_.resources.network.present, "empty network accepted");
}

/* What Docker, Podman and the others send and runc 1.1 and crun 1.8 accept (issue 12): blockIO weight 0 and
 * cpu shares 0 mean "not set", raw st_mode in fileMode, r-forms of rootfsPropagation, unknown capabilities
 * skipped with a warning, kernel memory ignored. */
static void test_engine_compat(void) {
        _cleanup_oci_config_ OciConfig *c = load_case("engine-compat.json");
        const OciResources *r;

        if (!tap_ok(c != NULL, "engine-compat.json parses"))
                return;
        r = &c->linux_.resources;
        tap_ok(r->block_io.present && !r->block_io.has_weight && !r->block_io.has_leaf_weight,
               "blockIO.weight 0 and leafWeight 0: not set");
        tap_ok(r->block_io.n_weight_device == 1 && !r->block_io.weight_device[0].has_weight &&
               !r->block_io.weight_device[0].has_leaf_weight, "blockIO.weightDevice[0] weight 0: not set");
        tap_ok(r->cpu.present && !r->cpu.has_shares, "cpu.shares 0: not set");
        tap_ok(c->linux_.n_devices == 2 && c->linux_.devices[0].file_mode == 0666 &&
               c->linux_.devices[1].file_mode == 0660, "devices[].fileMode with type bits (020666, 060660) masked to 07777");
        tap_is_str(c->linux_.rootfs_propagation, "rprivate", "rootfsPropagation rprivate accepted");
        tap_ok(c->process.capabilities.n_bounding == 2 && has_cap(c->process.capabilities.bounding, 2, CAP_CHOWN) &&
               has_cap(c->process.capabilities.bounding, 2, CAP_KILL), "unknown capability skipped in bounding");
        tap_ok(c->process.capabilities.n_permitted == 2, "capability without CAP_ prefix skipped in permitted");
        tap_is_str(c->process.cwd, "/work/does/not/exist", "cwd kept (created at start)");

        static const char *const props[] = { "rshared", "rslave", "runbindable", "shared", "slave", "unbindable" };
        FOREACH_ARRAY(pr, props, ELEMENTSOF(props)) {
                _cleanup_oci_config_ OciConfig *d = NULL;
                _cleanup_free_ char *doc = NULL, *err = NULL;
                if (asprintf(&doc, "{" MIN_ "," LNX_ "\"rootfsPropagation\":\"%s\"}}", *pr) < 0)
                        doc = NULL;
                assert(doc);
                tap_is_int(oci_config_parse(doc, strlen(doc), &d, &err), 0, "rootfsPropagation %s accepted (%s)", *pr,
                           strna(err));
        }

        /* Podman's --userns=container:X: the joined user namespace's mappings given along with its path */
        static const char joined[] = "{" MIN_ "," LNX_ "\"namespaces\":[{\"type\":\"user\",\"path\":\"/proc/1/ns/user\"}],"
                "\"uidMappings\":[{\"containerID\":0,\"hostID\":100000,\"size\":65536}],"
                "\"gidMappings\":[{\"containerID\":0,\"hostID\":100000,\"size\":65536}]}}";
        _cleanup_oci_config_ OciConfig *j = NULL;
        _cleanup_free_ char *jerr = NULL;
        tap_is_int(oci_config_parse(joined, strlen(joined), &j, &jerr), 0,
                   "uidMappings and gidMappings with a user namespace joined by path accepted (%s)", strna(jerr));

        static const char more[] = "{" MIN_ "," LNX_ "\"resources\":{\"devices\":[{\"allow\":true,\"access\":\"rwxr\"}]},"
                "\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[],\"action\":\"SCMP_ACT_LOG\"}]}}}";
        _cleanup_oci_config_ OciConfig *m = NULL;
        _cleanup_free_ char *merr = NULL;
        tap_is_int(oci_config_parse(more, strlen(more), &m, &merr), 0, "devices access \"rwxr\" and a seccomp rule without names accepted (%s)",
                   strna(merr));
        tap_ok(m && m->linux_.resources.n_devices == 1 && streq(m->linux_.resources.devices[0].access, "rw"),
               "devices access \"rwxr\" -> \"rw\"");
        tap_ok(m && m->linux_.seccomp.n_syscalls == 1 && m->linux_.seccomp.syscalls[0].names && !m->linux_.seccomp.syscalls[0].names[0],
               "seccomp rule without names kept (matches nothing)");

        static const char um[] = "{" MIN_ "," PROC_ ",\"user\":{\"uid\":0,\"gid\":0,\"umask\":4095}},"
                LNX_ "\"resources\":{\"cpu\":{\"quota\":1000,\"burst\":2000}}}}";
        _cleanup_oci_config_ OciConfig *u = NULL;
        _cleanup_free_ char *uerr = NULL;
        tap_is_int(oci_config_parse(um, strlen(um), &u, &uerr), 0, "umask 07777 and cpu.burst > quota accepted (%s)", strna(uerr));
        tap_ok(u && u->process.user.umask == 0777, "umask 07777 -> 0777 (what umask(2) keeps)");
        tap_ok(u && !u->linux_.resources.cpu.has_burst, "cpu.burst > quota: not applied");

        static const char nogid[] = "{" MIN_ "," PROC_ ",\"user\":{\"uid\":7}}}";
        _cleanup_oci_config_ OciConfig *ng = NULL;
        _cleanup_free_ char *ngerr = NULL;
        tap_is_int(oci_config_parse(nogid, strlen(nogid), &ng, &ngerr), 0,
                   "process.user without gid: accepted with a warning, as runc and crun do (%s)", strna(ngerr));
        tap_ok(ng && ng->process.user.uid == 7 && ng->process.user.gid == 0, "process.user without gid: gid 0");
        static const char nouid[] = "{" MIN_ "," PROC_ ",\"user\":{\"gid\":8}}}";
        _cleanup_oci_config_ OciConfig *nu = NULL;
        _cleanup_free_ char *nuerr = NULL;
        tap_is_int(oci_config_parse(nouid, strlen(nouid), &nu, &nuerr), 0, "process.user without uid: accepted (%s)",
                   strna(nuerr));
        tap_ok(nu && nu->process.user.uid == 0 && nu->process.user.gid == 8, "process.user without uid: uid 0");

        static const char mpol[] = "{" MIN_ "," LNX_ "\"memoryPolicy\":{}}}";
        _cleanup_oci_config_ OciConfig *mp = NULL;
        _cleanup_free_ char *mperr = NULL;
        tap_is_int(oci_config_parse(mpol, strlen(mpol), &mp, &mperr), 0,
                   "linux.memoryPolicy {}: accepted with a warning, as runc does (%s)", strna(mperr));
        tap_ok(mp && mp->linux_.memory_policy.present && mp->linux_.memory_policy.mode == 0 /* MPOL_DEFAULT */,
               "linux.memoryPolicy {}: MPOL_DEFAULT");

        static const char pers[] = "{" MIN_ "," LNX_ "\"personality\":{\"domain\":\"LINUX\",\"flags\":[\"ADDR_NO_RANDOMIZE\"]}}}";
        _cleanup_oci_config_ OciConfig *pc = NULL;
        _cleanup_free_ char *perr = NULL;
        tap_is_int(oci_config_parse(pers, strlen(pers), &pc, &perr), 0, "personality.flags: ignored with a warning (%s)", strna(perr));

        static const char nons[] = "{" MIN_ "," LNX_ "\"namespaces\":[{\"type\":\"pid\"}],\"uidMappings\":[{\"containerID\":0,"
                "\"hostID\":1000,\"size\":1}],\"timeOffsets\":{\"boottime\":{\"secs\":1}}}}";
        _cleanup_oci_config_ OciConfig *nc = NULL;
        _cleanup_free_ char *nerr = NULL;
        tap_is_int(oci_config_parse(nons, strlen(nons), &nc, &nerr), 0,
                   "uidMappings without a user namespace and timeOffsets without a time namespace: ignored (%s)", strna(nerr));

        /* linux.netDevices parses into host name -> name in the container (NULL: the same) */
        static const char nd[] = "{" MIN_ "," LNX_ "\"netDevices\":{\"eth0\":{\"name\":\"ctr0\"},\"eth1\":{}}}}";
        _cleanup_oci_config_ OciConfig *ndc = NULL;
        _cleanup_free_ char *nderr = NULL;
        tap_is_int(oci_config_parse(nd, strlen(nd), &ndc, &nderr), 0, "linux.netDevices accepted (%s)", strna(nderr));
        tap_ok(ndc && ndc->linux_.n_net_devices == 2 && streq(ndc->linux_.net_devices[0].key, "eth0") &&
               streq_ptr(ndc->linux_.net_devices[0].value, "ctr0") && !ndc->linux_.net_devices[1].value,
               "linux.netDevices: eth0 -> ctr0, eth1 keeps its name");

        /* mount mappings without "idmap"/"ridmap" (runc's idmap.bats): id-mapped as "idmap", with a warning */
        static const char idm[] = "{" MIN_ ",\"mounts\":[{\"destination\":\"/a\",\"source\":\"/s\",\"options\":[\"bind\"],"
                "\"uidMappings\":[{\"containerID\":0,\"hostID\":1,\"size\":1}],\"gidMappings\":[{\"containerID\":0,\"hostID\":1,\"size\":1}]}]}";
        _cleanup_oci_config_ OciConfig *im = NULL;
        _cleanup_free_ char *imerr = NULL;
        tap_is_int(oci_config_parse(idm, strlen(idm), &im, &imerr), 0,
                   "mounts[].uidMappings without \"idmap\": accepted, as runc and crun do (%s)", strna(imerr));
        tap_ok(im && im->n_mounts == 1 && strv_contains(im->mounts[0].options, "idmap"),
               "mounts[].uidMappings without \"idmap\": the mount is id-mapped as with \"idmap\"");

        /* null for an optional member is "not set", as runc and crun read it (Go, yajl) */
        static const char nulls[] = "{" MIN_ ",\"hostname\":null,\"mounts\":null,\"hooks\":{\"prestart\":null},"
                "\"annotations\":null," PROC_ ",\"env\":null,\"terminal\":null,\"capabilities\":{\"bounding\":null},"
                "\"rlimits\":null,\"user\":{\"uid\":0,\"gid\":0,\"additionalGids\":null,\"umask\":null}},"
                LNX_ "\"namespaces\":[{\"type\":\"pid\",\"path\":null}],\"timeOffsets\":null,\"resources\":{\"cpu\":"
                "{\"shares\":null,\"quota\":1000},\"memory\":null,\"devices\":null},\"seccomp\":null,\"sysctl\":null,"
                "\"maskedPaths\":null,\"cgroupsPath\":null}}";
        _cleanup_oci_config_ OciConfig *nl = NULL;
        _cleanup_free_ char *nlerr = NULL;
        tap_is_int(oci_config_parse(nulls, strlen(nulls), &nl, &nlerr), 0,
                   "null for optional members: not set, as runc and crun take it (%s)", strna(nlerr));
        tap_ok(nl && !nl->hostname && nl->n_mounts == 0 && !nl->process.env && !nl->linux_.seccomp.present &&
               nl->linux_.resources.cpu.has_quota && !nl->linux_.resources.cpu.has_shares && !nl->linux_.namespaces[0].path,
               "null members: absent in the model, their siblings kept");

        static const char *const vers[] = { "1.0", "1.0.01", "1.2-rc" };
        FOREACH_ARRAY(ver, vers, ELEMENTSOF(vers)) {
                _cleanup_oci_config_ OciConfig *vc = NULL;
                _cleanup_free_ char *vdoc = NULL, *verr = NULL;
                if (asprintf(&vdoc, "{\"ociVersion\":\"%s\",\"root\":{\"path\":\"rootfs\"}}", *ver) < 0)
                        vdoc = NULL;
                assert(vdoc);
                tap_is_int(oci_config_parse(vdoc, strlen(vdoc), &vc, &verr), 0, "ociVersion \"%s\" accepted as 1.x (%s)", *ver,
                           strna(verr));
        }

        static const char relm[] = "{" MIN_ "," LNX_ "\"maskedPaths\":[\"/proc/kcore\",\"proc/x\"],\"readonlyPaths\":[\"sys\"]}}";
        _cleanup_oci_config_ OciConfig *rm = NULL;
        _cleanup_free_ char *rmerr = NULL;
        tap_is_int(oci_config_parse(relm, strlen(relm), &rm, &rmerr), 0, "relative maskedPaths/readonlyPaths accepted (%s)",
                   strna(rmerr));

        static const char kmem[] = "{" MIN_ "," LNX_ "\"resources\":{\"memory\":{\"kernel\":1048576,\"kernelTCP\":1048576}}}}";
        _cleanup_oci_config_ OciConfig *k = NULL;
        _cleanup_free_ char *err = NULL;
        tap_is_int(oci_config_parse(kmem, strlen(kmem), &k, &err), 0, "memory.kernel and kernelTCP accepted (%s)", strna(err));
}

static void test_process_parse(void) {
        static const char good[] = "{\"cwd\":\"/tmp\",\"args\":[\"ls\",\"-l\"],\"env\":[\"A=1\"],\"terminal\":false}";
        static const char bad[] = "{\"cwd\":\"/\",\"args\":[\"ls\"],\"capabilities\":{\"permitted\":[\"CAP_CHOWN\",7]}}";
        _cleanup_oci_process_ OciProcess *p = NULL, *q = NULL;
        _cleanup_free_ char *err = NULL;

        tap_is_int(oci_process_parse(good, strlen(good), &p, &err), 0, "process.json parses");
        tap_ok(p && streq_ptr(p->args[1], "-l") && streq_ptr(p->cwd, "/tmp"), "process.json content");
        tap_is_int(oci_process_parse(bad, strlen(bad), &q, &err), -EINVAL, "bad process.json rejected");
        tap_ok(err && strstr(err, "process.capabilities.permitted[1]: expected a string"),
               "process.json error names the path");
        free(TAKE_PTR(err));
        tap_is_int(oci_process_parse("[1]", 3, &q, &err), -EINVAL, "array as process rejected");
        tap_ok(err && strstr(err, "process: expected an object, got array"), "message: %s", strna(err));
}

static void test_load(void) {
        char dir[] = "/tmp/sdrun-test-oci-config-XXXXXX";
        _cleanup_close_ int dfd = -EBADF;
        _cleanup_oci_config_ OciConfig *c = NULL;
        _cleanup_free_ char *err = NULL, *big = NULL;
        const size_t big_size = 4 * 1024 * 1024 + 1;
        static const char doc[] = "{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"rootfs\"}}";

        tap_ok(mkdtemp(dir) != NULL, "mkdtemp");
        dfd = open(dir, O_DIRECTORY | O_CLOEXEC);

        tap_is_int(oci_config_load(dfd, &c, &err), -ENOENT, "missing config.json");
        tap_ok(err && strstr(err, "cannot read"), "message for a missing file");
        free(TAKE_PTR(err));

        tap_is_int(write_file_atomic_at(dfd, "config.json", doc, strlen(doc), 0600), 0, "write config.json");
        tap_is_int(oci_config_load(dfd, &c, &err), 0, "load config.json");
        tap_ok(c && streq_ptr(c->root_path, "rootfs"), "loaded content");

        big = malloc(big_size);
        assert(big);
        memset(big, ' ', big_size);
        memcpy(big, doc, strlen(doc));
        tap_is_int(write_file_atomic_at(dfd, "config.json", big, big_size, 0600), 0, "write a 4 MiB + 1 config.json");
        oci_config_free(TAKE_PTR(c));
        tap_is_int(oci_config_load(dfd, &c, &err), -EFBIG, "oversized config.json refused");
        tap_ok(err && strstr(err, "larger than 4 MiB"), "message for an oversized file");

        (void) unlinkat(dfd, "config.json", 0);
        (void) rmdir(dir);
}

int main(void) {
        test_full();
        test_generated_specs();
        test_bad_cases();
        test_deep_nesting();
        test_embedded_nul_byte();
        test_unknown_keys_ignored();
        test_engine_compat();
        test_process_parse();
        test_load();
        return tap_done();
}
