/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Strict, table-driven reading of JSON documents for the OCI parsers (config.json, process.json).
 *
 * oci_json_parse_strict() parses with cJSON and then walks the raw text once more, in document order, to:
 *  - attach the exact source text of every number to its node (in node->valuestring, which cJSON_Delete()
 *    frees), so that 64-bit integers are range-checked and converted exactly instead of through a double;
 *  - flag strings and keys that contain a NUL (raw or escaped as \u0000) or a raw control character, which
 *    cJSON would silently truncate or accept.
 * Every error message has the form "<json path>: <reason>" and is returned in *reterr. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

typedef struct OciJsonPath OciJsonPath;
struct OciJsonPath {
        const OciJsonPath *parent;
        const char *key; /* NULL for an array index */
        size_t index;
};

#define OCI_JSON_KEY(p, k) ((const OciJsonPath){ .parent = (p), .key = (k) })
#define OCI_JSON_INDEX(p, i) ((const OciJsonPath){ .parent = (p), .index = (i) })

/* "process.capabilities.bounding[3]", "linux.sysctl[\"net.ipv4.ip_forward\"]"; "" for the root. */
char *oci_json_path_to_string(const OciJsonPath *p);
/* Fill *reterr (if non-NULL and still unset) with "<path>: <reason>"; returns -EINVAL. */
int oci_json_error(char **reterr, const OciJsonPath *p, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* The same for the member key of the object at p ("<path>.<key>: <reason>"). */
int oci_json_error_at(char **reterr, const OciJsonPath *p, const char *key, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

int oci_json_parse_strict(const char *buf, size_t len, cJSON **ret, char **reterr);

bool oci_utf8_is_valid(const char *s);

/* Scalar readers. Strings are checked for valid UTF-8 and embedded NULs; the result points into the tree. */
int oci_json_get_string(const cJSON *v, const OciJsonPath *p, const char **ret, char **reterr);
int oci_json_get_bool(const cJSON *v, const OciJsonPath *p, bool *ret, char **reterr);
int oci_json_get_unsigned(const cJSON *v, const OciJsonPath *p, uint64_t max, uint64_t *ret, char **reterr);
int oci_json_get_signed(const cJSON *v, const OciJsonPath *p, int64_t min, int64_t max, int64_t *ret,
                        char **reterr);
/* Check an object member's key (no NUL, valid UTF-8, and non-empty when require_nonempty). */
int oci_json_check_key(const cJSON *member, const OciJsonPath *parent, bool require_nonempty, char **reterr);
int oci_json_check_type(const cJSON *v, const OciJsonPath *p, int type, char **reterr);

/* Table-driven objects: each known key maps to a parser writing to base + offset. Unknown keys are
 * ignored (runtime-spec "Extensibility"), a known key given twice is an error, OCI_JSON_MANDATORY keys must be
 * present. When has_offset != OCI_JSON_NO_HAS, the bool at base + has_offset is set once the field parsed.
 * When fields is set, the value is an object read with that table into base + offset, and then given to
 * check (when set) for the checks across its fields. When elem_size is not 0 the key is an array of structs:
 * base + offset is the pointer, base + n_offset the count, and each element is read as just said (by parse,
 * or by fields and check); see oci_json_parse_array(). */
typedef int (*OciJsonFieldFn)(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr);
/* Checks a string (a value or a key) that p names: 0, or an error naming p. */
typedef int (*OciJsonStringCheckFn)(const char *s, const OciJsonPath *p, char **reterr);

enum {
        OCI_JSON_MANDATORY = 1 << 0,
};

typedef struct OciJsonField {
        const char *name;
        OciJsonFieldFn parse;
        size_t offset;
        size_t has_offset;
        unsigned flags;
        size_t elem_size;
        size_t n_offset;
        const struct OciJsonField *fields;
        OciJsonFieldFn check;
} OciJsonField;

#define OCI_JSON_NO_HAS SIZE_MAX

int oci_json_dispatch(const cJSON *obj, const OciJsonPath *p, const OciJsonField *table, void *base,
                      char **reterr);

/* Check that v is an array (the error names p) and count its elements. */
int oci_json_array_size(const cJSON *v, const OciJsonPath *p, size_t *ret_n, char **reterr);

/* Ready-made field parsers; dst points to the member of the named type. */
int oci_json_field_string(const cJSON *v, const OciJsonPath *p, void *dst /* char ** */, char **reterr);
int oci_json_field_nonempty_string(const cJSON *v, const OciJsonPath *p, void *dst /* char ** */,
                                   char **reterr);
int oci_json_field_absolute_path(const cJSON *v, const OciJsonPath *p, void *dst /* char ** */,
                                 char **reterr);
int oci_json_field_strv(const cJSON *v, const OciJsonPath *p, void *dst /* char *** */, char **reterr);
int oci_json_field_bool(const cJSON *v, const OciJsonPath *p, void *dst /* bool * */, char **reterr);
int oci_json_field_uint32(const cJSON *v, const OciJsonPath *p, void *dst /* uint32_t * */, char **reterr);
int oci_json_field_uint64(const cJSON *v, const OciJsonPath *p, void *dst /* uint64_t * */, char **reterr);
int oci_json_field_int32(const cJSON *v, const OciJsonPath *p, void *dst /* int32_t * */, char **reterr);
int oci_json_field_int64(const cJSON *v, const OciJsonPath *p, void *dst /* int64_t * */, char **reterr);
/* A string, then check(string, p) (a validated string field: the value parsers' usual shape). */
int oci_json_field_string_checked(const cJSON *v, const OciJsonPath *p, void *dst /* char ** */,
                                  OciJsonStringCheckFn check, char **reterr);
/* An array of strings, then check(entry, path of the entry) on each one in order. */
int oci_json_field_strv_checked(const cJSON *v, const OciJsonPath *p, void *dst /* char *** */,
                                OciJsonStringCheckFn check, char **reterr);

/* Integers in min..max (0..max) stored in the integer member at dst, of size bytes (1, 2, 4 or 8). */
void oci_json_store_integer(void *dst, size_t size, uint64_t value);
int oci_json_store_unsigned(const cJSON *v, const OciJsonPath *p, uint64_t max, void *dst, size_t size,
                            char **reterr);
int oci_json_store_signed(const cJSON *v, const OciJsonPath *p, int64_t min, int64_t max, void *dst,
                          size_t size, char **reterr);

/* Arrays: allocates n + extra zeroed elements (nothing when that is 0), stores them in *ret and *ret_n (when
 * non-NULL) BEFORE filling them (so the owner's free function releases partially parsed arrays), then calls
 * parse_elem on each element with its path. extra = 1 gives a NULL-terminated array of pointers. */
int oci_json_parse_array(const cJSON *v, const OciJsonPath *p, size_t elem_size, size_t extra, void **ret,
                         size_t *ret_n, OciJsonFieldFn parse_elem, char **reterr);
/* The same for an array of objects read with a table of fields and then check (or NULL) each. */
int oci_json_parse_array_of(const cJSON *v, const OciJsonPath *p, size_t elem_size, void **ret,
                            size_t *ret_n, const OciJsonField *fields, OciJsonFieldFn check, char **reterr);
/* Objects used as maps (non-empty unique keys): the same with the members. Each key is checked with check_key
 * (when non-NULL) and copied to the char * at key_offset in its element; then the value is read as value
 * says (value->parse, or value->fields and value->check) into the element + value->offset. */
int oci_json_parse_map(const cJSON *v, const OciJsonPath *p, size_t elem_size, void **ret, size_t *ret_n,
                       OciJsonStringCheckFn check_key, size_t key_offset, const OciJsonField *value,
                       char **reterr);
/* The map checks alone: an object with non-empty, unique keys; *ret_n = its size. */
int oci_json_check_map(const cJSON *v, const OciJsonPath *p, size_t *ret_n, char **reterr);
