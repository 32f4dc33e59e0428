/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "json-util.h"

char *json_print(const cJSON *j) {
        return cJSON_PrintUnformatted(j);
}

int json_parse(const char *buf, size_t len, cJSON **ret, size_t *ret_error_offset) {
        const char *end = NULL;
        cJSON *j;

        j = cJSON_ParseWithLengthOpts(buf, len, &end, /* require_null_terminated= */ false);
        if (!j) {
                if (ret_error_offset)
                        *ret_error_offset = end && end >= buf ? (size_t) (end - buf) : 0;
                return -EINVAL;
        }
        /* Only whitespace may follow the document. */
        for (const char *p = end; p && p < buf + len && *p; p++)
                if (!strchr(" \t\r\n", *p)) {
                        cJSON_Delete(j);
                        if (ret_error_offset)
                                *ret_error_offset = (size_t) (p - buf);
                        return -EINVAL;
                }
        *ret = j;
        return 0;
}

bool json_add(cJSON *object, const char *key, cJSON *item) {
        if (!item)
                return false;
        if (!cJSON_AddItemToObject(object, key, item)) {
                cJSON_Delete(item);
                return false;
        }
        return true;
}

bool json_append(cJSON *array, cJSON *item) {
        if (!item)
                return false;
        if (!cJSON_AddItemToArray(array, item)) {
                cJSON_Delete(item);
                return false;
        }
        return true;
}

cJSON *json_string_array(const char *const *strv, size_t n) {
        _cleanup_json_ cJSON *a = cJSON_CreateArray();

        if (!a)
                return NULL;
        for (size_t i = 0; i < n && strv[i]; i++)
                if (!json_append_string(a, strv[i]))
                        return NULL;
        return TAKE_PTR(a);
}
