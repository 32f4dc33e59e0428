/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "macro.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);
#define _cleanup_json_ _cleanup_(cJSON_Deletep)

/* Serialise without whitespace; returns NULL on OOM. Caller frees. */
char *json_print(const cJSON *j);
/* Parse a whole buffer; rejects trailing garbage. -EINVAL with *ret_error_offset set on syntax error. */
int json_parse(const char *buf, size_t len, cJSON **ret, size_t *ret_error_offset);

/* Add item to an object under key, or to an array, taking ownership: on failure (also for a NULL item, the
 * OOM of the call that built it) item is freed and false returned, so that `json_add(o, "k", build())`
 * chains with ||. */
bool json_add(cJSON *object, const char *key, cJSON *item);
bool json_append(cJSON *array, cJSON *item);
static inline bool json_append_string(cJSON *array, const char *s) {
        return json_append(array, cJSON_CreateString(s));
}
/* A new array of the first n strings of strv (fewer if a NULL comes first); NULL on OOM. */
cJSON *json_string_array(const char *const *strv, size_t n);
