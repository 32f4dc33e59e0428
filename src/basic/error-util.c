/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error-util.h"

int errorf(char **reterr, int r, const char *fmt, ...) {
        va_list ap;

        if (reterr) {
                free(*reterr);
                va_start(ap, fmt);
                if (vasprintf(reterr, fmt, ap) < 0) /* errno is not read: vasprintf() need not set it */
                        *reterr = NULL;
                va_end(ap);
        }
        return r < 0 ? r : -r;
}

int errwrap(char **reterr, int r, const char *prefix_fmt, ...) {
        _cleanup_free_ char *prefix = NULL, *inner = NULL;
        va_list ap;
        int n;

        if (!reterr)
                return r < 0 ? r : -r;
        inner = TAKE_PTR(*reterr);
        va_start(ap, prefix_fmt);
        n = vasprintf(&prefix, prefix_fmt, ap);
        va_end(ap);
        if (n < 0)
                prefix = NULL;
        return errorf(reterr, r, "%s%s%s", strempty(prefix), !isempty(prefix) ? ": " : "",
                      inner ?: strerror(r < 0 ? -r : r));
}
