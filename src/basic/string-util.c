/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "string-util.h"

bool path_is_at_or_below(const char *path, const char *prefix) {
        size_t n = strlen(prefix);

        while (n > 0 && prefix[n - 1] == '/')
                n--;
        return strneq(path, prefix, n) && (path[n] == 0 || path[n] == '/');
}

char *next_line(char **p) {
        char *line = *p;

        if (!line || !*line)
                return NULL;
        *p = strchr(line, '\n');
        if (*p)
                *(*p)++ = 0;
        return line;
}

char *strdup_printf(const char *fmt, ...) {
        return strdup_printf_args(fmt);
}

int free_and_strdup(char **p, const char *s) {
        char *t = strdup(s);
        if (!t)
                return -ENOMEM;
        free(*p);
        *p = t;
        return 0;
}
