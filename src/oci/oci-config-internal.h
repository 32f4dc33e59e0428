/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the files of the config.json parser share; private to them (oci-config.c, oci-config-process.c,
 * oci-config-linux.c, oci-config-resources.c, oci-config-fields.c). Everybody else uses oci-config.h.
 * The calls go one way: oci-config.c -> oci-config-process.c, oci-config-linux.c -> oci-config-resources.c,
 * and every one of them -> oci-config-fields.c -> oci-json.c. */

#include <stddef.h>

#include <cjson/cJSON.h>

#include "oci-config.h"
#include "oci-json.h"

#define FIELD(name, fn, type, member, flags) \
        { name, fn, offsetof(type, member), OCI_JSON_NO_HAS, flags }
#define FIELD_HAS(name, fn, type, member, has, flags) \
        { name, fn, offsetof(type, member), offsetof(type, has), flags }
/* A field whose parser receives the whole parent object (maps and arrays with their count and checks
 * across their entries, values that set several members). */
#define FIELD_SELF(name, fn, flags) \
        { name, fn, 0, OCI_JSON_NO_HAS, flags }
/* Nested objects, read by oci_json_dispatch() itself with their own table of fields, then given to check
 * (NULL: none) for the checks across their fields. _HAS sets a bool (often member.present) once parsed;
 * FIELD_SELF_OBJECT reads the object's fields into the parent struct itself. */
#define FIELD_OBJECT(name, fields, check, type, member, flags) \
        { name, NULL, offsetof(type, member), OCI_JSON_NO_HAS, flags, 0, 0, fields, check }
#define FIELD_OBJECT_HAS(name, fields, check, type, member, has, flags) \
        { name, NULL, offsetof(type, member), offsetof(type, has), flags, 0, 0, fields, check }
#define FIELD_SELF_OBJECT(name, fields, flags) \
        { name, NULL, 0, OCI_JSON_NO_HAS, flags, 0, 0, fields, NULL }
/* Arrays of structs, read by oci_json_dispatch() itself: member is the pointer, n_member the count; each
 * element is read by elem_fn, or (_OF) by a table of fields and then check. */
#define ELEM_SIZE(type, member) sizeof(*((type *) NULL)->member)
#define FIELD_ARRAY(name, elem_fn, type, member, n_member, flags)                                       \
        {                                                                                               \
                name, elem_fn, offsetof(type, member), OCI_JSON_NO_HAS, flags, ELEM_SIZE(type, member), \
                        offsetof(type, n_member)                                                        \
        }
#define FIELD_ARRAY_OF(name, fields, check, type, member, n_member, flags)                           \
        {                                                                                            \
                name, NULL, offsetof(type, member), OCI_JSON_NO_HAS, flags, ELEM_SIZE(type, member), \
                        offsetof(type, n_member), fields, check                                      \
        }

#define OCI_SCHED_ISO 4 /* reserved by Linux, never implemented */

typedef struct NameValue {
        const char *name;
        int value;
} NameValue;

/* oci-config-fields.c: value parsers used by more than one section */
/* A string out of table (stored as an int); the error says "unknown <what> "<string>"". */
int get_enum(const cJSON *v, const OciJsonPath *p, const NameValue *table, size_t n, const char *what,
             void *ret /* int * */, char **reterr);
/* The same for a table of names indexed by value (NULL entries are gaps). */
int get_enum_index(const cJSON *v, const OciJsonPath *p, const char *const *names, size_t n,
                   const char *what, void *ret /* int * */, char **reterr);
/* An array of names out of table, whose values are ORed and stored in the integer of size bytes at ret. */
int get_flags(const cJSON *v, const OciJsonPath *p, const NameValue *table, size_t n, const char *what,
              void *ret, size_t size, char **reterr);
/* A device type: one letter out of types; expected lists them for the message ("c, b, u or p"). */
int get_device_type(const cJSON *v, const OciJsonPath *p, const char *types, const char *expected,
                    void *ret /* char * */, char **reterr);
int field_cpu_list(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr);
int field_env(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr);
/* A mode no larger than max of which the bits in keep are stored as uint32_t (umask, fileMode). */
int field_mode_bits(const cJSON *v, const OciJsonPath *p, uint64_t max, uint32_t keep, void *dst,
                    char **reterr);
int parse_string_map(const cJSON *v, const OciJsonPath *p, OciKeyValue **ret, size_t *ret_n,
                     OciJsonStringCheckFn check, char **reterr);
/* ID mappings (linux.uidMappings, mounts[].gidMappings...): FIELD_ARRAY_OF(name, id_mapping_fields,
 * check_id_mapping, ...). */
extern const OciJsonField id_mapping_fields[];
int check_id_mapping(const cJSON *v, const OciJsonPath *p, void *obj, char **reterr);
int field_device_number(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr);
/* The first entry of an array of structs whose int member at key_offset equals an earlier entry's: its
 * index (the earlier one's in *ret_earlier), or n when there is none. */
size_t find_duplicate(const void *array, size_t n, size_t elem_size, size_t key_offset, size_t *ret_earlier);

/* oci-config-process.c */
int parse_process_object(const cJSON *v, const OciJsonPath *p, OciProcess *proc, char **reterr);
int field_process(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr);

/* oci-config-linux.c */
extern const char *const namespace_names[_OCI_NS_MAX];
extern const OciJsonField linux_fields[]; /* OciLinux */

/* oci-config-resources.c */
extern const OciJsonField resources_fields[]; /* OciResources */
