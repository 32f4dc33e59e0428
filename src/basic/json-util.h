/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <cjson/cJSON.h>

#include "macro.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);
#define _cleanup_json_ _cleanup_(cJSON_Deletep)

/* Serialise without whitespace; returns NULL on OOM. Caller frees. */
char *json_print(const cJSON *j);
/* Parse a whole buffer; rejects trailing garbage. -EINVAL with *ret_error_offset set on syntax error. */
int json_parse(const char *buf, size_t len, cJSON **ret, size_t *ret_error_offset);
