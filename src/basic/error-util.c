/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "error-util.h"

int errorf(char **reterr, int r, const char *fmt, ...) {
        va_list ap;

        if (reterr) {
                free(*reterr);
                va_start(ap, fmt);
                if (vasprintf(reterr, fmt, ap) < 0)
                        *reterr = NULL;
                va_end(ap);
        }
        return r < 0 ? r : -r;
}
