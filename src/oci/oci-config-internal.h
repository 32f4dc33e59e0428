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
/* A field whose parser receives the whole parent object (arrays of structs: pointer + count). */
#define FIELD_SELF(name, fn, flags) \
        { name, fn, 0, OCI_JSON_NO_HAS, flags }

#define OCI_SCHED_ISO 4 /* reserved by Linux, never implemented */

typedef struct NameValue {
        const char *name;
        int value;
} NameValue;

typedef int (*KeyCheckFn)(const char *key, const OciJsonPath *p, char **reterr);

/* oci-config-fields.c: value parsers used by more than one section */
int get_enum(const cJSON *v, const OciJsonPath *p, const NameValue *table, size_t n, const char *what,
             int *ret, char **reterr);
int field_cpu_list(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr);
int field_env(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr);
int check_no_duplicate_keys(const cJSON *obj, const OciJsonPath *p, char **reterr);
/* An unsigned integer no larger than max, stored as uint32_t (modes: umask, fileMode). */
int field_uint32_up_to(const cJSON *v, const OciJsonPath *p, uint64_t max, void *dst, char **reterr);
/* A JSON object used as a map: an object, non-empty unique keys; *ret_n = its size. */
int check_map(const cJSON *v, const OciJsonPath *p, size_t *ret_n, char **reterr);
int parse_string_map(const cJSON *v, const OciJsonPath *p, OciKeyValue **ret, size_t *ret_n,
                     KeyCheckFn check, char **reterr);
int parse_id_mapping(const cJSON *v, const OciJsonPath *p, void *elem, char **reterr);
int field_device_number(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr);

/* oci-config-process.c */
int parse_process_object(const cJSON *v, const OciJsonPath *p, OciProcess *proc, char **reterr);
int field_process(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr);

/* oci-config-linux.c */
extern const char *const namespace_names[_OCI_NS_MAX];
int parse_linux(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr);

/* oci-config-resources.c */
int parse_resources(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr);
