/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "macro.h"

/* Replace the string *p with a copy of s; -ENOMEM leaves *p as it was. */
int free_and_strdup(char **p, const char *s);

/* The next line of the text at *p, cut off in place (its '\n' becomes a NUL), and *p moved past it:
 * `for (char *p = buf, *line; (line = next_line(&p));)`. NULL at the end of the text (a final '\n' does not
 * make an empty last line). */
char *next_line(char **p);

/* Whether path is prefix or below it, by whole components ("/a/b" is below "/a", "/ab" is not); trailing
 * slashes of prefix do not count, so every absolute path is below "/". */
bool path_is_at_or_below(const char *path, const char *prefix);

/* A new string, formatted; NULL on out of memory. */
char *strdup_printf(const char *fmt, ...) _printf_(1, 2);

/* In a printf-like function whose last named parameter is fmt: its "fmt, ..." formatted into a new string,
 * NULL on out of memory. */
#define strdup_printf_args(fmt)                       \
        ({                                            \
                va_list _ap_;                         \
                char *_s_;                            \
                va_start(_ap_, fmt);                  \
                if (vasprintf(&_s_, (fmt), _ap_) < 0) \
                        _s_ = NULL;                   \
                va_end(_ap_);                         \
                _s_;                                  \
        })
