/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error-util.h"

int verrorf(char **reterr, int r, const char *fmt, va_list ap) {
        char *m;

        if (reterr) {
                /* Format first, free after: "%m" reads errno, which nothing may have touched yet. errno is not
                 * read after vasprintf(): it need not set it. */
                if (vasprintf(&m, fmt, ap) < 0)
                        m = NULL;
                free(*reterr);
                *reterr = m;
        }
        return r < 0 ? r : -r;
}

int errorf(char **reterr, int r, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        r = verrorf(reterr, r, fmt, ap);
        va_end(ap);
        return r;
}

int verrwrap(char **reterr, int r, const char *prefix_fmt, va_list ap) {
        _cleanup_free_ char *prefix = NULL, *inner = NULL;
        int e = r < 0 ? -r : r;

        if (!reterr)
                return -e;
        if (vasprintf(&prefix, prefix_fmt, ap) < 0)
                prefix = NULL;
        inner = TAKE_PTR(*reterr);
        return errorf(reterr, -e, "%s%s%s", strempty(prefix), !isempty(prefix) ? ": " : "",
                      inner ?: strerror(e));
}

int errwrap(char **reterr, int r, const char *prefix_fmt, ...) {
        va_list ap;

        va_start(ap, prefix_fmt);
        r = verrwrap(reterr, r, prefix_fmt, ap);
        va_end(ap);
        return r;
}
