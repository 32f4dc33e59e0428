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

static int lookup_value(const NameValue *table, size_t n, const char *s, int *ret) {
        for (size_t i = 0; i < n; i++)
                if (streq(table[i].name, s)) {
                        *ret = table[i].value;
                        return 0;
                }
        return -ENOENT;
}

static int lookup_index(const char *const *names, size_t n, const char *s, int *ret) {
        for (size_t i = 0; i < n; i++)
                if (names[i] && streq(names[i], s)) {
                        *ret = (int) i;
                        return 0;
                }
        return -ENOENT;
}

/* A string out of a table (NameValue entries, or names indexed by value when values is NULL). */
static int get_table_value(const cJSON *v, const OciJsonPath *p, const NameValue *values,
                           const char *const *names, size_t n, const char *what, int *ret, char **reterr) {
        const char *s;
        int r;

        r = oci_json_get_string(v, p, &s, reterr);
        if (r < 0)
                return r;
        r = values ? lookup_value(values, n, s, ret) : lookup_index(names, n, s, ret);
        if (r < 0)
                return oci_json_error(reterr, p, "unknown %s \"%s\"", what, s);
        return 0;
}

int get_enum(const cJSON *v, const OciJsonPath *p, const NameValue *table, size_t n, const char *what,
             void *ret, char **reterr) {
        return get_table_value(v, p, table, NULL, n, what, ret, reterr);
}

int get_enum_index(const cJSON *v, const OciJsonPath *p, const char *const *names, size_t n,
                   const char *what, void *ret, char **reterr) {
        return get_table_value(v, p, NULL, names, n, what, ret, reterr);
}

int get_flags(const cJSON *v, const OciJsonPath *p, const NameValue *table, size_t n, const char *what,
              void *ret, size_t size, char **reterr) {
        const cJSON *e;
        uint64_t bits = 0;
        size_t i = 0;
        int r;

        r = oci_json_check_type(v, p, cJSON_Array, reterr);
        if (r < 0)
                return r;
        cJSON_ArrayForEach(e, v) {
                const OciJsonPath ep = OCI_JSON_INDEX(p, i++);
                int bit;
                r = get_enum(e, &ep, table, n, what, &bit, reterr);
                if (r < 0)
                        return r;
                bits |= (uint64_t) bit;
        }
        oci_json_store_integer(ret, size, bits);
        return 0;
}

int get_device_type(const cJSON *v, const OciJsonPath *p, const char *types, const char *expected, void *ret,
                    char **reterr) {
        const char *s;
        int r;

        r = oci_json_get_string(v, p, &s, reterr);
        if (r < 0)
                return r;
        if (strlen(s) != 1 || !strchr(types, s[0]))
                return oci_json_error(reterr, p, "unknown device type \"%s\" (expected %s)", s, expected);
        *(char *) ret = s[0];
        return 0;
}

/* ---- value validators ---- */

/* One number of a CPU/node list at *c (s is the whole list, for the messages); *c moves past it. */
static int cpu_list_number(const char **c, const char *s, const OciJsonPath *p, unsigned long *ret,
                           char **reterr) {
        char *end;

        if (**c < '0' || **c > '9')
                return oci_json_error(reterr, p, "invalid CPU/node list \"%s\"", s);
        errno = 0;
        *ret = strtoul(*c, &end, 10);
        if (errno != 0 || *ret > CPU_LIST_MAX)
                return oci_json_error(reterr, p, "CPU/node number out of range (0..%d) in \"%s\"",
                                      CPU_LIST_MAX, s);
        *c = end;
        return 0;
}

/* "0-3,7": comma-separated numbers or ranges a-b with a <= b; blanks around items allowed (the schema's
 * pattern is ^[0-9, -]*$). The empty string is valid (no list). */
static int validate_cpu_list(const char *s, const OciJsonPath *p, char **reterr) {
        const char *c = s;
        int r;

        while (*c == ' ')
                c++;
        if (!*c)
                return 0;

        for (;;) {
                unsigned long a, b;

                while (*c == ' ')
                        c++;
                r = cpu_list_number(&c, s, p, &a, reterr);
                if (r < 0)
                        return r;
                b = a;
                if (*c == '-') {
                        c++;
                        r = cpu_list_number(&c, s, p, &b, reterr);
                        if (r < 0)
                                return r;
                        if (b < a)
                                return oci_json_error(reterr, p, "invalid range %lu-%lu in \"%s\"", a, b, s);
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
        return oci_json_field_string_checked(v, p, dst, validate_cpu_list, reterr);
}

static int check_env_entry(const char *e, const OciJsonPath *p, char **reterr) {
        const char *eq = strchr(e, '=');
        if (!eq || eq == e)
                return oci_json_error(reterr, p, "environment entry \"%s\" is not of the form NAME=VALUE",
                                      e);
        return 0;
}

int field_env(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return oci_json_field_strv_checked(v, p, dst, check_env_entry, reterr);
}

int field_mode_bits(const cJSON *v, const OciJsonPath *p, uint64_t max, uint32_t keep, void *dst,
                    char **reterr) {
        int r;

        r = oci_json_store_unsigned(v, p, max, dst, sizeof(uint32_t), reterr);
        if (r < 0)
                return r;
        *(uint32_t *) dst &= keep;
        return 0;
}

int parse_string_map(const cJSON *v, const OciJsonPath *p, OciKeyValue **ret, size_t *ret_n,
                     OciJsonStringCheckFn check, char **reterr) {
        static const OciJsonField value = { .parse = oci_json_field_string,
                                            .offset = offsetof(OciKeyValue, value) };
        return oci_json_parse_map(v, p, sizeof(OciKeyValue), (void **) ret, ret_n, check,
                                  offsetof(OciKeyValue, key), &value, reterr);
}

const OciJsonField id_mapping_fields[] = {
        FIELD("containerID", oci_json_field_uint32, OciIdMapping, container_id, OCI_JSON_MANDATORY),
        FIELD("hostID", oci_json_field_uint32, OciIdMapping, host_id, OCI_JSON_MANDATORY),
        FIELD("size", oci_json_field_uint32, OciIdMapping, size, OCI_JSON_MANDATORY),
        {},
};

int check_id_mapping(const cJSON *v, const OciJsonPath *p, void *obj, char **reterr) {
        const OciIdMapping *m = obj;

        if (m->size == 0)
                return oci_json_error_at(reterr, p, "size", "must be at least 1");
        if ((uint64_t) m->container_id + m->size > UINT64_C(1) << 32 ||
            (uint64_t) m->host_id + m->size > UINT64_C(1) << 32)
                return oci_json_error_at(reterr, p, "size", "range exceeds the 32-bit ID space");
        return 0;
}

int field_device_number(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return oci_json_get_signed(v, p, 0, UINT32_MAX, dst, reterr);
}

size_t find_duplicate(const void *array, size_t n, size_t elem_size, size_t key_offset,
                      size_t *ret_earlier) {
        const uint8_t *a = array;

        for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < i; j++)
                        if (*(const int *) (a + i * elem_size + key_offset) ==
                            *(const int *) (a + j * elem_size + key_offset)) {
                                *ret_earlier = j;
                                return i;
                        }
        return n;
}
