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
 * 18446744073709551616, -1 (for an unsigned field), 1.5 and 1e3 are rejected.
 *
 * The parser is split by concern: this file has the top level (ociVersion, root, mounts, hooks,
 * annotations), the value parsers the other files share, the cross-field checks, the unsupported list,
 * freeing and the entry points; oci-config-process.c parses "process", oci-config-linux.c "linux" and
 * oci-config-resources.c "linux.resources". oci-config-internal.h declares what they share. */

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "error-util.h"
#include "fileio.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "oci-config-internal.h"
#include "oci-config.h"
#include "oci-json.h"
#include "strv.h"

#define OCI_CONFIG_SIZE_MAX (4U * 1024U * 1024U)

static const char *const hook_names[_OCI_HOOK_MAX] = {
        [OCI_HOOK_PRESTART] = "prestart",
        [OCI_HOOK_CREATE_RUNTIME] = "createRuntime",
        [OCI_HOOK_CREATE_CONTAINER] = "createContainer",
        [OCI_HOOK_START_CONTAINER] = "startContainer",
        [OCI_HOOK_POSTSTART] = "poststart",
        [OCI_HOOK_POSTSTOP] = "poststop",
};

const char *oci_hook_kind_to_string(OciHookKind k) {
        return k >= 0 && k < _OCI_HOOK_MAX ? hook_names[k] : NULL;
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

static int check_oci_version(const char *s, const OciJsonPath *p, char **reterr) {
        const char *c = s;

        if (!semver_numeric(&c) || *c != '.' || (c++, !semver_numeric(&c)) || *c != '.' ||
            (c++, !semver_numeric(&c)) || (*c == '-' && (c++, !semver_identifiers(&c, true))) ||
            (*c == '+' && (c++, !semver_identifiers(&c, false))) || *c) {
                /* runc and crun accept a 1.x that is not SemVer ("1.0"): so does sdrun, with a warning. */
                if (!strneq(s, "1.", 2))
                        return oci_json_error(reterr, p, "\"%s\" is not a SemVer 2.0.0 version", s);
                log_warning("ociVersion: \"%s\" is not a SemVer 2.0.0 version, reading it as 1.x.", s);
        }
        if (!strneq(s, "1.", 2))
                return oci_json_error(reterr, p, "unsupported version \"%s\" (sdrun implements 1.x)", s);
        return 0;
}

static int field_oci_version(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return oci_json_field_string_checked(v, p, dst, check_oci_version, reterr);
}

/* ---- maps (string -> string) ---- */

static void key_values_free(OciKeyValue *kv, size_t n) {
        FOREACH_ARRAY(i, kv, n) {
                free(i->key);
                free(i->value);
        }
        free(kv);
}

/* ---- root, mounts, hooks ---- */

static const OciJsonField root_fields[] = {
        FIELD("path", oci_json_field_nonempty_string, OciConfig, root_path, OCI_JSON_MANDATORY),
        FIELD("readonly", oci_json_field_bool, OciConfig, root_readonly, 0),
        {},
};

static const OciJsonField mount_fields[] = {
        /* Linux: SHOULD be absolute; relative (deprecated) means relative to "/". Kept as written. */
        FIELD("destination", oci_json_field_nonempty_string, OciMount, destination, OCI_JSON_MANDATORY),
        FIELD("type", oci_json_field_string, OciMount, type, 0),
        FIELD("source", oci_json_field_string, OciMount, source, 0),
        FIELD("options", oci_json_field_strv, OciMount, options, 0),
        FIELD_ARRAY_OF("uidMappings", id_mapping_fields, check_id_mapping, OciMount, uid_mappings,
                       n_uid_mappings, 0),
        FIELD_ARRAY_OF("gidMappings", id_mapping_fields, check_id_mapping, OciMount, gid_mappings,
                       n_gid_mappings, 0),
        {},
};

static int check_mount(const cJSON *v, const OciJsonPath *p, void *obj, char **reterr) {
        OciMount *m = obj;

        /* The runtime-spec says the options SHOULD then name "idmap" or "ridmap"; runc and crun id-map the
         * mount without (runc's own idmap.bats gives mappings with "bind" alone): the top mount, as
         * "idmap" does. */
        if ((m->n_uid_mappings > 0 || m->n_gid_mappings > 0) && !oci_mount_is_idmapped(m)) {
                _cleanup_free_ char *path = oci_json_path_to_string(p);
                log_warning("%s: uidMappings or gidMappings without the \"idmap\" or \"ridmap\" option: "
                            "id-mapping it as \"idmap\", as runc and crun do.",
                            strna(path));
                if (strv_extend(&m->options, "idmap") < 0)
                        return -ENOMEM;
        }
        if ((m->n_uid_mappings > 0) != (m->n_gid_mappings > 0))
                return oci_json_error_at(reterr, p, m->n_uid_mappings > 0 ? "uidMappings" : "gidMappings",
                                         "must be given together with %s",
                                         m->n_uid_mappings > 0 ? "gidMappings" : "uidMappings");
        /* mount_setattr(MOUNT_ATTR_IDMAP) maps a mount tree of an existing filesystem: a bind mount's, as
         * with runc. */
        if (oci_mount_is_idmapped(m) && !oci_mount_is_bind(m))
                return oci_json_error_at(reterr, p, "options",
                                         "\"idmap\" and \"ridmap\" are supported for bind mounts only");
        return 0;
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

static const OciJsonField hook_fields[] = {
        FIELD("path", oci_json_field_absolute_path, OciHook, path, OCI_JSON_MANDATORY),
        FIELD("args", oci_json_field_strv, OciHook, args, 0),
        FIELD("env", field_env, OciHook, env, 0),
        FIELD_HAS("timeout", field_hook_timeout, OciHook, timeout, has_timeout, 0),
        {},
};

#define HOOK_FIELD(name, kind) \
        FIELD_ARRAY_OF(name, hook_fields, NULL, OciHooks, hooks[kind], n_hooks[kind], 0)

static const OciJsonField hooks_fields[] = {
        HOOK_FIELD("prestart", OCI_HOOK_PRESTART),
        HOOK_FIELD("createRuntime", OCI_HOOK_CREATE_RUNTIME),
        HOOK_FIELD("createContainer", OCI_HOOK_CREATE_CONTAINER),
        HOOK_FIELD("startContainer", OCI_HOOK_START_CONTAINER),
        HOOK_FIELD("poststart", OCI_HOOK_POSTSTART),
        HOOK_FIELD("poststop", OCI_HOOK_POSTSTOP),
        {},
};

static int parse_annotations(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        OciConfig *c = dst;
        return parse_string_map(v, p, &c->annotations, &c->n_annotations, NULL, reterr);
}

static const OciJsonField config_table[] = {
        FIELD("ociVersion", field_oci_version, OciConfig, oci_version, OCI_JSON_MANDATORY),
        FIELD_SELF_OBJECT("root", root_fields,
                          OCI_JSON_MANDATORY), /* REQUIRED on every platform but Windows */
        FIELD_ARRAY_OF("mounts", mount_fields, check_mount, OciConfig, mounts, n_mounts, 0),
        FIELD_HAS("process", field_process, OciConfig, process, has_process, 0),
        FIELD("hostname", oci_json_field_string, OciConfig, hostname, 0),
        FIELD("domainname", oci_json_field_string, OciConfig, domainname, 0),
        FIELD_OBJECT("hooks", hooks_fields, NULL, OciConfig, hooks, 0),
        FIELD_SELF("annotations", parse_annotations, 0),
        FIELD_OBJECT_HAS("linux", linux_fields, NULL, OciConfig, linux_, linux_.present, 0),
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
                return oci_json_error(reterr, NULL, "%s: requires a new %s namespace in linux.namespaces",
                                      what, namespace_names[t]);
        if (ns->path)
                return oci_json_error(reterr, NULL,
                                      "%s: cannot be applied to the existing %s namespace joined by "
                                      "linux.namespaces[%zu].path",
                                      what, namespace_names[t], i);
        return 0;
}

static int validate_config(const OciConfig *c, char **reterr) {
        const OciLinux *l = &c->linux_;
        int r;

        /* An id-mapped mount without mappings of its own takes the container's user namespace's: the
         * runtime-spec requires an error where there is none. */
        for (size_t i = 0; i < c->n_mounts; i++) {
                const OciMount *m = &c->mounts[i];
                if (!oci_mount_is_idmapped(m) || m->n_uid_mappings > 0)
                        continue;
                const OciNamespace *userns = find_namespace(c, OCI_NS_USER, NULL);
                if (!userns || (!userns->path && l->n_uid_mappings == 0))
                        return oci_json_error(
                                reterr, NULL,
                                "mounts[%zu]: \"idmap\" without uidMappings and gidMappings needs the "
                                "container's user namespace mappings (linux.uidMappings, or a user "
                                "namespace joined by path)",
                                i);
        }

        /* Without the namespace at all, runc and crun ignore the mappings and offsets: so does sdrun, with a
         * warning. With a user namespace joined by path the mappings describe it, and it has them already:
         * Podman sends them (--userns=container:X, a pod sharing its user namespace), runc 1.1 requires them
         * and crun accepts them. Nothing writes them there (an id-mapped mount without mappings of its own
         * maps through the joined namespace itself). */
        if (l->n_uid_mappings > 0 || l->n_gid_mappings > 0) {
                const char *what = l->n_uid_mappings > 0 ? "linux.uidMappings" : "linux.gidMappings";
                const OciNamespace *userns = find_namespace(c, OCI_NS_USER, NULL);
                if (!userns)
                        log_warning("%s: no user namespace in linux.namespaces, ignoring the mappings.",
                                    what);
                else if (userns->path)
                        log_debug("%s: the user namespace joined by path has its mappings already, not "
                                  "writing them.",
                                  what);
        }
        if (l->time_boottime.present || l->time_monotonic.present) {
                if (!find_namespace(c, OCI_NS_TIME, NULL))
                        log_warning(
                                "linux.timeOffsets: no time namespace in linux.namespaces, ignoring the offsets.");
                else {
                        r = require_new_namespace(c, OCI_NS_TIME, "linux.timeOffsets", reterr);
                        if (r < 0)
                                return r;
                }
        }
        /* Setting a hostname without a UTS namespace of its own would rename the host. */
        if (!isempty(c->hostname) && !find_namespace(c, OCI_NS_UTS, NULL))
                return oci_json_error(reterr, NULL,
                                      "hostname: requires a uts namespace in linux.namespaces");
        if (!isempty(c->domainname) && !find_namespace(c, OCI_NS_UTS, NULL))
                return oci_json_error(reterr, NULL,
                                      "domainname: requires a uts namespace in linux.namespaces");
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

static bool has_net_cls_prio(const OciConfig *c) {
        return c->linux_.resources.network.has_class_id || c->linux_.resources.network.n_priorities > 0;
}

static bool has_rdma(const OciConfig *c) {
        return c->linux_.resources.n_rdma > 0;
}

static bool has_leaf_weight(const OciConfig *c) {
        if (c->linux_.resources.block_io.has_leaf_weight)
                return true;
        FOREACH_ARRAY(d, c->linux_.resources.block_io.weight_device,
                      c->linux_.resources.block_io.n_weight_device)
                if (d->has_leaf_weight)
                        return true;
        return false;
}

static bool has_sched_iso(const OciProcess *p) {
        return p->scheduler.present && p->scheduler.policy == OCI_SCHED_ISO;
}

static const Unsupported unsupported_features[] = {
        { "linux.intelRdt", has_intel_rdt, NULL, "Intel RDT is not supported by sdrun" },
        { "linux.resources.network", has_net_cls_prio, NULL,
          "net_cls/net_prio are cgroup v1 controllers that sdrun cannot configure through systemd "
          "(an empty object is accepted)" },
        { "linux.resources.rdma", has_rdma, NULL,
          "the rdma controller is not supported by sdrun; set \"rdma.max\" in linux.resources.unified instead "
          "(an empty map is accepted)" },
        { "linux.resources.blockIO", has_leaf_weight, NULL,
          "leafWeight is not supported: it needs the CFQ I/O scheduler, removed in Linux 5.0" },
        { "process.scheduler.policy", NULL, has_sched_iso,
          "SCHED_ISO is reserved but not implemented by Linux" },
};

static int check_unsupported(const OciConfig *c, const OciProcess *p, char **reterr) {
        FOREACH_ARRAY(u, unsupported_features, ELEMENTSOF(unsupported_features))
                if ((c && u->in_config && u->in_config(c)) || (p && u->in_process && u->in_process(p)))
                        return errorf_first(reterr, EINVAL, "%s: %s", u->path, u->reason);
        return 0;
}

/* ---- freeing ---- */

void oci_process_done(OciProcess *p) {
        if (!p)
                return;
        free(p->user.additional_gids);
        free(p->user.username);
        strv_free(p->args);
        free(p->command_line);
        strv_free(p->env);
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
        *p = (OciProcess){};
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
        strv_free(s->architectures);
        strv_free(s->flags);
        free(s->listener_path);
        free(s->listener_metadata);
        FOREACH_ARRAY(sc, s->syscalls, s->n_syscalls) {
                strv_free(sc->names);
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
        strv_free(l->masked_paths);
        strv_free(l->readonly_paths);
        free(l->mount_label);
        free(l->intel_rdt.clos_id);
        strv_free(l->intel_rdt.schemata);
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
                strv_free(m->options);
                free(m->uid_mappings);
                free(m->gid_mappings);
        }
        free(c->mounts);
        for (size_t k = 0; k < _OCI_HOOK_MAX; k++) {
                FOREACH_ARRAY(h, c->hooks.hooks[k], c->hooks.n_hooks[k]) {
                        free(h->path);
                        strv_free(h->args);
                        strv_free(h->env);
                }
                free(c->hooks.hooks[k]);
        }
        key_values_free(c->annotations, c->n_annotations);
        linux_done(&c->linux_);
        free(c);
}

/* ---- entry points ---- */

/* A whole document: strict JSON, then parse into *obj, a new zeroed object that the caller frees on error
 * (NULL: out of memory, reported after a JSON syntax error); on success it moves to *ret. The error message, which names the JSON path, goes to
 * *reterr_message. */
static int parse_document(const char *json, size_t len,
                          int (*parse)(const cJSON *j, void *obj, char **reterr), void **obj, void **ret,
                          char **reterr_message) {
        _cleanup_json_ cJSON *j = NULL;
        _cleanup_free_ char *msg = NULL;
        int r;

        assert(json || len == 0);
        assert(ret);

        r = oci_json_parse_strict(json, len, &j, &msg);
        if (r >= 0) {
                if (!*obj)
                        return -ENOMEM;
                r = parse(j, *obj, &msg);
        }
        if (r < 0) {
                if (reterr_message)
                        *reterr_message = TAKE_PTR(msg);
                return r;
        }

        *ret = TAKE_PTR(*obj);
        return 0;
}

static int parse_config_document(const cJSON *j, void *obj, char **reterr) {
        OciConfig *c = obj;
        int r;

        if (!cJSON_IsObject(j))
                return oci_json_error(reterr, NULL, "expected a JSON object at the top level");
        r = oci_json_dispatch(j, NULL, config_table, c, reterr);
        if (r >= 0)
                r = validate_config(c, reterr);
        if (r >= 0)
                r = check_unsupported(c, c->has_process ? &c->process : NULL, reterr);
        return r;
}

int oci_config_parse(const char *json, size_t len, OciConfig **ret, char **reterr_message) {
        _cleanup_oci_config_ OciConfig *c = calloc(1, sizeof(OciConfig));
        return parse_document(json, len, parse_config_document, (void **) &c, (void **) ret, reterr_message);
}

int oci_config_reparse(const char *json, size_t len, OciConfig **ret, char **reterr_message) {
        int level = log_get_max_level(), r;

        if (level >= LOG_LEVEL_WARNING && level < LOG_LEVEL_DEBUG)
                log_set_max_level(LOG_LEVEL_ERR);
        r = oci_config_parse(json, len, ret, reterr_message);
        log_set_max_level(level);
        return r;
}

static int parse_process_document(const cJSON *j, void *obj, char **reterr) {
        const OciJsonPath root = OCI_JSON_KEY(NULL, "process");
        int r;

        r = parse_process_object(j, &root, obj, reterr);
        if (r >= 0)
                r = check_unsupported(NULL, obj, reterr);
        return r;
}

int oci_process_parse(const char *json, size_t len, OciProcess **ret, char **reterr_message) {
        _cleanup_oci_process_ OciProcess *p = calloc(1, sizeof(OciProcess));
        return parse_document(json, len, parse_process_document, (void **) &p, (void **) ret,
                              reterr_message);
}

int oci_config_load(int bundle_dir_fd, OciConfig **ret, char **reterr_message) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        int r;

        assert(ret);

        r = read_full_file_at(bundle_dir_fd, "config.json", OCI_CONFIG_SIZE_MAX, &buf, &size);
        if (r == -EFBIG)
                return errorf(reterr_message, r, "file is larger than %u MiB",
                              OCI_CONFIG_SIZE_MAX / 1024 / 1024);
        if (r < 0)
                return errorf(reterr_message, r, "cannot read: %s", strerror(-r));
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

bool oci_mount_is_idmapped(const OciMount *m) {
        return strv_contains(m->options, "idmap") || strv_contains(m->options, "ridmap");
}

bool oci_mount_is_bind(const OciMount *m) {
        assert(m);

        if (streq_ptr(m->type, "bind"))
                return true;
        for (char **o = m->options; o && *o; o++)
                if (streq(*o, "bind") || streq(*o, "rbind"))
                        return true;
        return false;
}

bool oci_config_has_namespace(const OciConfig *c, OciNamespaceType t, const char **ret_path) {
        const OciNamespace *ns;

        assert(c);

        ns = find_namespace(c, t, NULL);
        if (ret_path)
                *ret_path = ns ? ns->path : NULL;
        return ns;
}
