/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "macro.h"

/* NULL-terminated arrays of malloc'ed strings ("strv"). A NULL strv is the empty list everywhere. */

/* Free every string and the array; returns NULL, so that `l = strv_free(l);` works. */
char **strv_free(char **l);
static inline void strv_freep(char ***l) {
        strv_free(*l);
}
#define _cleanup_strv_free_ _cleanup_(strv_freep)

size_t strv_length(char *const *l);
bool strv_contains(char *const *l, const char *s);

/* A deep copy of l in *ret (an empty list for a NULL l). -ENOMEM leaves *ret alone. */
int strv_dup(char *const *l, char ***ret);

/* Append a copy of s, or copies of every string of add, to *l. On -ENOMEM *l is still a valid strv. */
int strv_extend(char ***l, const char *s);
int strv_extend_strv(char ***l, char *const *add);
/* Append a formatted string (an argv under construction: "--tree=%d"). */
int strv_extendf(char ***l, const char *fmt, ...) _printf_(2, 3);

/* The strings of l with sep between them ("" for an empty list); NULL on ENOMEM. */
char *strv_join(char *const *l, const char *sep);

/* Environment-style "KEY=VALUE": replace the entry of the same KEY ("KEY=..." or a bare "KEY"), or append
 * one: a key is then defined once. */
int strv_env_set(char ***l, const char *kv);
