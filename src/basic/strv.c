/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "string-util.h"
#include "strv.h"

char **strv_free(char **l) {
        for (char **i = l; i && *i; i++)
                free(*i);
        free(l);
        return NULL;
}

size_t strv_length(char *const *l) {
        size_t n = 0;

        while (l && l[n])
                n++;
        return n;
}

bool strv_contains(char *const *l, const char *s) {
        for (char *const *i = l; i && *i; i++)
                if (streq(*i, s))
                        return true;
        return false;
}

int strv_dup(char *const *l, char ***ret) {
        _cleanup_strv_free_ char **c = NULL;
        size_t n = strv_length(l);

        c = calloc(n + 1, sizeof(char *));
        if (!c)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                c[i] = strdup(l[i]);
                if (!c[i])
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(c);
        return 0;
}

int strv_extend_strv(char ***l, char *const *add) {
        size_t n = strv_length(*l), k = strv_length(add);
        char **c;

        if (k == 0)
                return 0;
        c = realloc(*l, (n + k + 1) * sizeof(char *));
        if (!c)
                return -ENOMEM;
        *l = c;
        for (size_t i = 0; i < k; i++) {
                c[n + i] = strdup(add[i]);
                c[n + i + 1] = NULL; /* a valid list after every step, also when strdup() fails */
                if (!c[n + i])
                        return -ENOMEM;
        }
        return 0;
}

int strv_extend(char ***l, const char *s) {
        return strv_extend_strv(l, (char *const[]){ (char *) s, NULL });
}

int strv_extendf(char ***l, const char *fmt, ...) {
        _cleanup_free_ char *s = strdup_printf_args(fmt);
        if (!s)
                return -ENOMEM;
        return strv_extend(l, s);
}

char *strv_join(char *const *l, const char *sep) {
        size_t len = 1, k = strlen(sep);
        char *out, *p;

        for (char *const *i = l; i && *i; i++)
                len += strlen(*i) + k;
        out = p = malloc(len);
        if (!out)
                return NULL;
        *p = 0;
        for (char *const *i = l; i && *i; i++) {
                if (i != l)
                        p = stpcpy(p, sep);
                p = stpcpy(p, *i);
        }
        return out;
}

int strv_env_set(char ***l, const char *kv) {
        const char *eq = strchr(kv, '=');
        size_t klen = eq ? (size_t) (eq - kv) : strlen(kv);

        for (char **e = *l; e && *e; e++)
                if (strneq(*e, kv, klen) && ((*e)[klen] == '=' || (*e)[klen] == 0)) {
                        char *n = strdup(kv);
                        if (!n)
                                return -ENOMEM;
                        free(*e);
                        *e = n;
                        return 0;
                }
        return strv_extend(l, kv);
}
