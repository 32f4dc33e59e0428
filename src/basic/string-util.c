/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "string-util.h"

int free_and_strdup(char **p, const char *s) {
        char *t = strdup(s);
        if (!t)
                return -ENOMEM;
        free(*p);
        *p = t;
        return 0;
}
