/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The value parsers that more than one section of config.json shares (enums, CPU lists, environment,
 * string maps, id mappings, device numbers). They depend on oci-json.c alone: oci-config.c parses the top
 * level and calls oci-config-process.c and oci-config-linux.c, which calls oci-config-resources.c; all of
 * them call down into this file, none calls back up. */

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "macro.h"
#include "oci-config-internal.h"
#include "oci-config.h"
#include "oci-json.h"

#define CPU_LIST_MAX 8191 /* highest CPU / NUMA node number accepted in a list (NR_CPUS is at most 8192) */

static int lookup_name(const NameValue *table, size_t n, const char *s, int *ret) {
        for (size_t i = 0; i < n; i++)
                if (streq(table[i].name, s)) {
                        *ret = table[i].value;
                        return 0;
                }
        return -ENOENT;
}

int get_enum(const cJSON *v, const OciJsonPath *p, const NameValue *table, size_t n, const char *what,
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
                                return oci_json_error(reterr, p,
                                                      "CPU/node number out of range (0..%d) in \"%s\"",
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

int field_cpu_list(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        int r;

        r = oci_json_field_string(v, p, dst, reterr);
        if (r < 0)
                return r;
        return validate_cpu_list(*(char **) dst, p, reterr);
}

static int check_env_entry(const char *e, const OciJsonPath *p, char **reterr) {
        const char *eq = strchr(e, '=');
        if (!eq || eq == e)
                return oci_json_error(reterr, p, "environment entry \"%s\" is not of the form NAME=VALUE",
                                      e);
        return 0;
}

int field_env(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
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

static int cmp_string_ptr(const void *a, const void *b) {
        return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* cJSON keeps duplicate keys; JSON maps with duplicates are ambiguous, so refuse them. O(n log n). */
int check_no_duplicate_keys(const cJSON *obj, const OciJsonPath *p, char **reterr) {
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

int field_uint32_up_to(const cJSON *v, const OciJsonPath *p, uint64_t max, void *dst, char **reterr) {
        uint64_t u;
        int r;

        r = oci_json_get_unsigned(v, p, max, &u, reterr);
        if (r < 0)
                return r;
        *(uint32_t *) dst = (uint32_t) u;
        return 0;
}

int check_map(const cJSON *v, const OciJsonPath *p, size_t *ret_n, char **reterr) {
        const cJSON *m;
        size_t n = 0;
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
        *ret_n = n;
        return 0;
}

int parse_string_map(const cJSON *v, const OciJsonPath *p, OciKeyValue **ret, size_t *ret_n,
                     KeyCheckFn check, char **reterr) {
        const cJSON *m;
        size_t n = 0, i = 0;
        int r;

        assert(!*ret);

        r = check_map(v, p, &n, reterr);
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

int parse_id_mapping(const cJSON *v, const OciJsonPath *p, void *elem, char **reterr) {
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

int field_device_number(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        int64_t s;
        int r;

        r = oci_json_get_signed(v, p, 0, UINT32_MAX, &s, reterr);
        if (r < 0)
                return r;
        *(int64_t *) dst = s;
        return 0;
}
