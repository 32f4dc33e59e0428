/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* annotations "org.systemd.property.NAME" = VALUE (GVariant-like text) -> unit property NAME. */

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup-props.h"
#include "error-util.h"
#include "macro.h"
#include "oci-config.h"
#include "unit-property.h"

#define ANNOTATION_PREFIX "org.systemd.property."

static bool endswith_local(const char *s, const char *suffix) {
        size_t a = strlen(s), b = strlen(suffix);
        return a >= b && streq(s + a - b, suffix);
}

static const char *skip_space(const char *p) {
        while (isspace((unsigned char) *p))
                p++;
        return p;
}

/* A quoted GVariant string at *p ('x' or "x", with \\, \' and \" escapes); advances *p past it. */
static int parse_quoted(const char **p, char **ret) {
        char q = **p;
        const char *s = *p + 1;
        _cleanup_free_ char *out = malloc(strlen(s) + 1);
        size_t n = 0;

        if (!out)
                return -ENOMEM;
        if (q != '\'' && q != '"')
                return -EINVAL;
        for (; *s && *s != q; s++) {
                if (*s == '\\' && s[1])
                        s++;
                out[n++] = *s;
        }
        if (*s != q)
                return -EINVAL;
        out[n] = 0;
        *p = s + 1;
        *ret = TAKE_PTR(out);
        return 0;
}

static int parse_strv(const char *p, char ***ret) {
        char **l = NULL;
        size_t n = 0;
        int r;

        p = skip_space(p);
        if (*p != '[')
                return -EINVAL;
        p = skip_space(p + 1);
        l = calloc(1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        while (*p != ']') {
                char *s = NULL, **nl;

                r = parse_quoted(&p, &s);
                if (r < 0)
                        goto fail;
                nl = reallocarray(l, n + 2, sizeof(char *));
                if (!nl) {
                        free(s);
                        r = -ENOMEM;
                        goto fail;
                }
                l = nl;
                l[n++] = s;
                l[n] = NULL;
                p = skip_space(p);
                if (*p == ',')
                        p = skip_space(p + 1);
                else if (*p != ']') {
                        r = -EINVAL;
                        goto fail;
                }
        }
        if (*skip_space(p + 1) != 0) {
                r = -EINVAL;
                goto fail;
        }
        *ret = l;
        return 0;
fail:
        for (size_t i = 0; i < n; i++)
                free(l[i]);
        free(l);
        return r;
}

static int parse_i64_full(const char *s, int64_t *ret) {
        char *end;
        s = skip_space(s);
        if (!*s)
                return -EINVAL;
        errno = 0;
        long long v = strtoll(s, &end, 0);
        if (errno != 0 || *skip_space(end) != 0)
                return -EINVAL;
        *ret = v;
        return 0;
}

static int parse_u64_full(const char *s, uint64_t *ret) {
        char *end;
        s = skip_space(s);
        if (!isdigit((unsigned char) *s))
                return -EINVAL;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 0);
        if (errno != 0 || *skip_space(end) != 0)
                return -EINVAL;
        *ret = v;
        return 0;
}

static int parse_double_full(const char *s, double *ret) {
        char *end;
        s = skip_space(s);
        if (!*s)
                return -EINVAL;
        errno = 0;
        double v = strtod(s, &end);
        if (errno != 0 || *skip_space(end) != 0)
                return -EINVAL;
        *ret = v;
        return 0;
}

/* Seconds ("5", "1.5", "uint64 5", "@t 5", "double 0.5") -> microseconds. */
static int parse_seconds(const char *v, uint64_t *ret) {
        static const char *const prefixes[] = { "uint64 ", "@t ",    "int64 ", "@x ",     "uint32 ",
                                                "@u ",     "int32 ", "@i ",    "double ", "@d " };
        double d;

        for (size_t i = 0; i < ELEMENTSOF(prefixes); i++)
                if (strneq(v, prefixes[i], strlen(prefixes[i]))) {
                        v += strlen(prefixes[i]);
                        break;
                }
        if (parse_double_full(v, &d) < 0 || d < 0 || d * 1e6 >= 18446744073709551615.0)
                return -EINVAL;
        *ret = (uint64_t) (d * 1e6 + 0.5);
        return 0;
}

static int add_annotation_value(UnitPropertyList *props, const char *name, const char *v) {
        static const struct {
                const char *prefix;
                UnitPropertyKind kind;
        } typed[] = {
                { "uint64 ", UNIT_PROP_UINT64 }, { "@t ", UNIT_PROP_UINT64 },
                { "int64 ", UNIT_PROP_INT64 },   { "@x ", UNIT_PROP_INT64 },
                { "uint32 ", UNIT_PROP_UINT32 }, { "@u ", UNIT_PROP_UINT32 },
                { "int32 ", UNIT_PROP_INT32 },   { "@i ", UNIT_PROP_INT32 },
                { "double ", UNIT_PROP_DOUBLE }, { "@d ", UNIT_PROP_DOUBLE },
                { "@s ", UNIT_PROP_STRING },     { "string ", UNIT_PROP_STRING },
                { "@b ", UNIT_PROP_BOOL },       { "boolean ", UNIT_PROP_BOOL },
                { "@as ", UNIT_PROP_STRV },
        };
        UnitPropertyKind kind = _UNIT_PROP_KIND_MAX;
        uint64_t u;
        int64_t x;
        double d;
        int r;

        v = skip_space(v);
        for (size_t i = 0; i < ELEMENTSOF(typed); i++)
                if (strneq(v, typed[i].prefix, strlen(typed[i].prefix))) {
                        kind = typed[i].kind;
                        v = skip_space(v + strlen(typed[i].prefix));
                        break;
                }

        if (kind == _UNIT_PROP_KIND_MAX) {
                /* Untyped: infer from the text. */
                if (streq(v, "true") || streq(v, "false"))
                        kind = UNIT_PROP_BOOL;
                else if (*v == '\'' || *v == '"')
                        kind = UNIT_PROP_STRING;
                else if (*v == '[')
                        kind = UNIT_PROP_STRV;
                else if (parse_u64_full(v, &u) >= 0)
                        kind = UNIT_PROP_UINT64;
                else if (parse_i64_full(v, &x) >= 0)
                        kind = UNIT_PROP_INT64;
                else
                        return -EINVAL;
        }

        switch (kind) {
        case UNIT_PROP_BOOL:
                if (!streq(v, "true") && !streq(v, "false"))
                        return -EINVAL;
                return unit_property_add_bool(props, name, streq(v, "true"));
        case UNIT_PROP_STRING: {
                _cleanup_free_ char *s = NULL;
                const char *p = v;
                r = parse_quoted(&p, &s);
                if (r < 0)
                        return r;
                if (*skip_space(p) != 0)
                        return -EINVAL;
                return unit_property_add_string(props, name, s);
        }
        case UNIT_PROP_STRV: {
                char **l = NULL;
                r = parse_strv(v, &l);
                if (r < 0)
                        return r;
                r = unit_property_add_strv(props, name, l);
                for (char **i = l; *i; i++)
                        free(*i);
                free(l);
                return r;
        }
        case UNIT_PROP_UINT64:
                if (parse_u64_full(v, &u) < 0)
                        return -EINVAL;
                return unit_property_add_u64(props, name, u);
        case UNIT_PROP_UINT32:
                if (parse_u64_full(v, &u) < 0 || u > UINT32_MAX)
                        return -EINVAL;
                return unit_property_add_u32(props, name, (uint32_t) u);
        case UNIT_PROP_INT64:
                if (parse_i64_full(v, &x) < 0)
                        return -EINVAL;
                return unit_property_add_i64(props, name, x);
        case UNIT_PROP_INT32:
                if (parse_i64_full(v, &x) < 0 || x < INT32_MIN || x > INT32_MAX)
                        return -EINVAL;
                return unit_property_add_i32(props, name, (int32_t) x);
        case UNIT_PROP_DOUBLE:
                if (parse_double_full(v, &d) < 0)
                        return -EINVAL;
                return unit_property_add_double(props, name, d);
        default:
                return -EINVAL;
        }
}

int cgroup_props_from_annotations(const OciKeyValue *a, size_t n, UnitPropertyList *props, char **reterr) {
        int r;

        assert(props);

        for (size_t i = 0; i < n; i++) {
                const char *key = a[i].key, *name;
                _cleanup_free_ char *renamed = NULL;

                if (!key || !strneq(key, ANNOTATION_PREFIX, STRLEN(ANNOTATION_PREFIX)))
                        continue;
                name = key + STRLEN(ANNOTATION_PREFIX);
                if (isempty(name) || !isupper((unsigned char) name[0]))
                        return errorf(reterr, -EINVAL,
                                      "annotations.%s: \"%s\" is not a systemd property name", key, name);
                for (const char *c = name; *c; c++)
                        if (!isalnum((unsigned char) *c))
                                return errorf(reterr, -EINVAL,
                                              "annotations.%s: \"%s\" is not a systemd property name", key,
                                              name);

                if (endswith_local(name, "Sec") && !endswith_local(name, "USec")) {
                        uint64_t usec;

                        if (asprintf(&renamed, "%.*sUSec", (int) (strlen(name) - 3), name) < 0)
                                return -ENOMEM;
                        if (parse_seconds(strempty(a[i].value), &usec) < 0)
                                return errorf(
                                        reterr, -EINVAL,
                                        "annotations.%s: \"%s\" is not a number of seconds (it becomes %s=, in "
                                        "microseconds)",
                                        key, strempty(a[i].value), renamed);
                        r = unit_property_add_u64(props, renamed, usec);
                } else
                        r = add_annotation_value(props, name, strempty(a[i].value));
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return errorf(
                                reterr, -EINVAL,
                                "annotations.%s: \"%s\" is not a GVariant value sdrun understands (e.g. "
                                "\"uint64 5\", \"'text'\", \"true\", \"['a', 'b']\")",
                                key, strempty(a[i].value));
        }
        return 0;
}
