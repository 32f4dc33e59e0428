/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "error-util.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "oci-json.h"
#include "strv.h"

/* Private bits in cJSON's type field (cJSON only looks at the low byte and at IsReference/StringIsConst). */
#define NODE_BAD_STRING (1 << 13) /* the string value contains NUL or a raw control character */
#define NODE_BAD_KEY (1 << 14)    /* the member key contains NUL or a raw control character */

#define NUMBER_SHOWN_MAX 40

/* ---- paths and errors ---- */

static bool key_is_identifier(const char *k) {
        if (isempty(k))
                return false;
        for (const char *c = k; *c; c++)
                if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                      *c == '_'))
                        return false;
        return true;
}

static void path_write(FILE *f, const OciJsonPath *p) {
        if (!p)
                return;
        path_write(f, p->parent);
        if (!p->key) {
                fprintf(f, "[%zu]", p->index);
                return;
        }
        if (key_is_identifier(p->key)) {
                if (p->parent)
                        fputc('.', f);
                fputs(p->key, f);
                return;
        }
        /* Quote anything else, escaping what is not printable ASCII so that the message stays readable. */
        fputs("[\"", f);
        for (const unsigned char *c = (const unsigned char *) p->key; *c; c++) {
                if (*c == '"' || *c == '\\')
                        fprintf(f, "\\%c", *c);
                else if (*c < 0x20 || *c >= 0x7f)
                        fprintf(f, "\\x%02x", *c);
                else
                        fputc(*c, f);
        }
        fputs("\"]", f);
}

char *oci_json_path_to_string(const OciJsonPath *p) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f;

        f = open_memstream(&buf, &size);
        if (!f)
                return NULL;
        path_write(f, p);
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

_printf_(3, 0) static int verror(char **reterr, const OciJsonPath *p, const char *fmt, va_list ap) {
        _cleanup_free_ char *path = NULL;

        if (!reterr || *reterr) /* the first error wins */
                return -EINVAL;
        path = oci_json_path_to_string(p);
        if (!path)
                return -ENOMEM;
        (void) verrorf(reterr, EINVAL, fmt, ap);
        if (!*reterr)
                return -ENOMEM;
        return errwrap(reterr, EINVAL, "%s", path); /* an empty path (the root) adds no prefix */
}

int oci_json_error(char **reterr, const OciJsonPath *p, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = verror(reterr, p, fmt, ap);
        va_end(ap);
        return r;
}

int oci_json_error_at(char **reterr, const OciJsonPath *p, const char *key, const char *fmt, ...) {
        const OciJsonPath kp = OCI_JSON_KEY(p, key);
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = verror(reterr, &kp, fmt, ap);
        va_end(ap);
        return r;
}

/* ---- UTF-8 ---- */

bool oci_utf8_is_valid(const char *s) {
        const unsigned char *c = (const unsigned char *) s;

        while (*c) {
                uint32_t cp;
                size_t n;

                if (*c < 0x80) {
                        c++;
                        continue;
                }
                if (*c >= 0xc2 && *c <= 0xdf) {
                        n = 1;
                        cp = *c & 0x1f;
                } else if (*c >= 0xe0 && *c <= 0xef) {
                        n = 2;
                        cp = *c & 0x0f;
                } else if (*c >= 0xf0 && *c <= 0xf4) {
                        n = 3;
                        cp = *c & 0x07;
                } else
                        return false; /* continuation byte, overlong 0xc0/0xc1 lead, or > U+10FFFF */

                for (size_t i = 1; i <= n; i++) {
                        if ((c[i] & 0xc0) != 0x80)
                                return false; /* also catches the terminating NUL */
                        cp = (cp << 6) | (c[i] & 0x3f);
                }
                if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
                    (cp >= 0xd800 && cp <= 0xdfff))
                        return false;
                c += n + 1;
        }
        return true;
}

/* ---- parsing and annotating ---- */

typedef struct Scanner {
        const char *p, *end;
} Scanner;

typedef struct Token {
        const char *start;
        size_t len;
        bool is_number;
        bool bad_string;
} Token;

/* Next string or number token; structural characters, whitespace and literals are skipped. The document
 * already parsed, so only the token boundaries matter here. */
static bool scanner_next(Scanner *s, Token *ret) {
        while (s->p < s->end) {
                char c = *s->p;

                if (c == '"') {
                        const char *start = s->p++;
                        bool bad = false;

                        while (s->p < s->end && *s->p != '"') {
                                unsigned char u = (unsigned char) *s->p;
                                if (u < 0x20)
                                        bad = true;
                                if (u == '\\') {
                                        if (s->end - s->p >= 6 && s->p[1] == 'u' &&
                                            strneq(s->p + 2, "0000", 4))
                                                bad = true;
                                        s->p++;
                                }
                                s->p++;
                        }
                        if (s->p < s->end)
                                s->p++; /* closing quote */
                        *ret = (Token){ .start = start, .len = (size_t) (s->p - start), .bad_string = bad };
                        return true;
                }
                if (c == '-' || (c >= '0' && c <= '9')) {
                        const char *start = s->p;
                        while (s->p < s->end && strchr("+-.eE0123456789", *s->p) && *s->p)
                                s->p++;
                        *ret = (Token){ .start = start, .len = (size_t) (s->p - start), .is_number = true };
                        return true;
                }
                s->p++;
        }
        return false;
}

static int annotate(cJSON *node, bool in_object, Scanner *s) {
        Token t;

        if (in_object) {
                if (!scanner_next(s, &t) || t.is_number)
                        return -EBADMSG;
                if (t.bad_string)
                        node->type |= NODE_BAD_KEY;
        }

        if (cJSON_IsString(node)) {
                if (!scanner_next(s, &t) || t.is_number)
                        return -EBADMSG;
                if (t.bad_string)
                        node->type |= NODE_BAD_STRING;
        } else if (cJSON_IsNumber(node)) {
                if (!scanner_next(s, &t) || !t.is_number)
                        return -EBADMSG;
                free(node->valuestring);
                node->valuestring = strndup(t.start, t.len);
                if (!node->valuestring)
                        return -ENOMEM;
        } else if (cJSON_IsArray(node) || cJSON_IsObject(node)) {
                /* Recursion depth is bounded by cJSON's CJSON_NESTING_LIMIT. */
                cJSON *child;
                cJSON_ArrayForEach(child, node) {
                        int r = annotate(child, cJSON_IsObject(node), s);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static void offset_to_line_column(const char *buf, size_t offset, size_t *ret_line, size_t *ret_column) {
        size_t line = 1, column = 1;

        for (size_t i = 0; i < offset; i++)
                if (buf[i] == '\n') {
                        line++;
                        column = 1;
                } else
                        column++;
        *ret_line = line;
        *ret_column = column;
}

int oci_json_parse_strict(const char *buf, size_t len, cJSON **ret, char **reterr) {
        _cleanup_json_ cJSON *j = NULL;
        const char *nul;
        size_t off = 0, line, column;
        bool blank = true;
        int r;

        assert(buf || len == 0);
        assert(ret);

        nul = memchr(buf, 0, len);
        if (nul)
                return oci_json_error(reterr, NULL, "invalid JSON: NUL byte at offset %zu",
                                      (size_t) (nul - buf));

        for (size_t i = 0; i < len; i++)
                if (!strchr(" \t\r\n", buf[i])) {
                        blank = false;
                        break;
                }
        if (blank)
                return oci_json_error(reterr, NULL, "invalid JSON: the document is empty");

        r = json_parse(buf, len, &j, &off);
        if (r == -EINVAL) {
                if (off > len)
                        off = len;
                offset_to_line_column(buf, off, &line, &column);
                return oci_json_error(
                        reterr, NULL,
                        "invalid JSON: syntax error at line %zu, column %zu (or nesting deeper than %d)",
                        line, column, CJSON_NESTING_LIMIT);
        }
        if (r < 0)
                return r;

        Scanner s = { .p = buf, .end = buf + len };
        r = annotate(j, false, &s);
        if (r == -EBADMSG)
                return oci_json_error(reterr, NULL,
                                      "invalid JSON: could not match tokens to the parsed document");
        if (r < 0)
                return r;

        *ret = TAKE_PTR(j);
        return 0;
}

/* ---- scalars ---- */

static const char *json_type_name(const cJSON *v) {
        switch (v->type & 0xff) {
        case cJSON_False:
        case cJSON_True:
                return "boolean";
        case cJSON_NULL:
                return "null";
        case cJSON_Number:
                return "number";
        case cJSON_String:
                return "string";
        case cJSON_Array:
                return "array";
        case cJSON_Object:
                return "object";
        default:
                return "invalid value";
        }
}

int oci_json_check_type(const cJSON *v, const OciJsonPath *p, int type, char **reterr) {
        const char *want;

        if ((v->type & 0xff) == type || (type == cJSON_True && cJSON_IsBool(v)))
                return 0;

        switch (type) {
        case cJSON_Object:
                want = "an object";
                break;
        case cJSON_Array:
                want = "an array";
                break;
        case cJSON_String:
                want = "a string";
                break;
        case cJSON_True:
                want = "a boolean";
                break;
        default:
                want = "a number";
        }
        return oci_json_error(reterr, p, "expected %s, got %s", want, json_type_name(v));
}

int oci_json_get_string(const cJSON *v, const OciJsonPath *p, const char **ret, char **reterr) {
        int r;

        r = oci_json_check_type(v, p, cJSON_String, reterr);
        if (r < 0)
                return r;
        if (v->type & NODE_BAD_STRING)
                return oci_json_error(reterr, p, "string contains a NUL or an unescaped control character");
        if (!oci_utf8_is_valid(v->valuestring))
                return oci_json_error(reterr, p, "string is not valid UTF-8");
        *ret = v->valuestring;
        return 0;
}

int oci_json_get_bool(const cJSON *v, const OciJsonPath *p, bool *ret, char **reterr) {
        int r;

        r = oci_json_check_type(v, p, cJSON_True, reterr);
        if (r < 0)
                return r;
        *ret = cJSON_IsTrue(v);
        return 0;
}

int oci_json_check_key(const cJSON *member, const OciJsonPath *parent, bool require_nonempty,
                       char **reterr) {
        const OciJsonPath p = OCI_JSON_KEY(parent, member->string);

        if (member->type & NODE_BAD_KEY)
                return oci_json_error(reterr, &p, "key contains a NUL or an unescaped control character");
        if (!oci_utf8_is_valid(member->string))
                return oci_json_error(reterr, parent, "key is not valid UTF-8");
        if (require_nonempty && isempty(member->string))
                return oci_json_error(reterr, parent, "empty key");
        return 0;
}

/* Split the exact number text (attached by oci_json_parse_strict()) and reject anything that is not a
 * plain integer: fractions and exponents are refused even when the value would be integral, as Go's
 * encoding/json does for integer fields. */
static int number_text(const cJSON *v, const OciJsonPath *p, const char **ret, bool *ret_negative,
                       char **reterr) {
        const char *t;
        int r;

        r = oci_json_check_type(v, p, cJSON_Number, reterr);
        if (r < 0)
                return r;

        t = v->valuestring;
        if (!t) /* a tree that did not come from oci_json_parse_strict() */
                return oci_json_error(reterr, p, "number without source text");

        const char *d = t + (*t == '-');
        size_t n = strspn(d, "0123456789");
        if (n == 0 || d[n] != 0 || (n > 1 && d[0] == '0'))
                return oci_json_error(reterr, p, "expected an integer, got %.*s%s", NUMBER_SHOWN_MAX, t,
                                      strlen(t) > NUMBER_SHOWN_MAX ? "..." : "");
        *ret = t;
        *ret_negative = *t == '-' && !streq(d, "0");
        return 0;
}

int oci_json_get_unsigned(const cJSON *v, const OciJsonPath *p, uint64_t max, uint64_t *ret, char **reterr) {
        const char *t;
        bool negative;
        unsigned long long u;
        char *end;
        int r;

        r = number_text(v, p, &t, &negative, reterr);
        if (r < 0)
                return r;
        if (negative)
                return oci_json_error(reterr, p, "expected an unsigned integer, got %.*s%s",
                                      NUMBER_SHOWN_MAX, t, strlen(t) > NUMBER_SHOWN_MAX ? "..." : "");

        errno = 0;
        u = strtoull(t + (*t == '-'), &end, 10);
        if (errno == ERANGE || *end || u > max)
                return oci_json_error(reterr, p, "value %.*s%s out of range (0..%" PRIu64 ")",
                                      NUMBER_SHOWN_MAX, t, strlen(t) > NUMBER_SHOWN_MAX ? "..." : "", max);
        *ret = (uint64_t) u;
        return 0;
}

int oci_json_get_signed(const cJSON *v, const OciJsonPath *p, int64_t min, int64_t max, int64_t *ret,
                        char **reterr) {
        const char *t;
        bool negative;
        long long s;
        char *end;
        int r;

        r = number_text(v, p, &t, &negative, reterr);
        if (r < 0)
                return r;

        errno = 0;
        s = strtoll(t, &end, 10);
        if (errno == ERANGE || *end || s < min || s > max)
                return oci_json_error(reterr, p, "value %.*s%s out of range (%" PRId64 "..%" PRId64 ")",
                                      NUMBER_SHOWN_MAX, t, strlen(t) > NUMBER_SHOWN_MAX ? "..." : "", min,
                                      max);
        *ret = (int64_t) s;
        return 0;
}

/* ---- tables ---- */

static int parse_value(const cJSON *v, const OciJsonPath *p, const OciJsonField *f, void *dst,
                       char **reterr);
static int parse_elements(const cJSON *v, const OciJsonPath *p, size_t elem_size, size_t extra, void **ret,
                          size_t *ret_n, const OciJsonField *how, char **reterr);

int oci_json_dispatch(const cJSON *obj, const OciJsonPath *p, const OciJsonField *table, void *base,
                      char **reterr) {
        uint64_t seen = 0;
        size_t n_fields = 0;
        const cJSON *m;
        int r;

        assert(table);

        r = oci_json_check_type(obj, p, cJSON_Object, reterr);
        if (r < 0)
                return r;

        for (const OciJsonField *f = table; f->name; f++)
                n_fields++;
        assert(n_fields <= 64);

        cJSON_ArrayForEach(m, obj) {
                const OciJsonField *f;

                r = oci_json_check_key(m, p, /* require_nonempty= */ false, reterr);
                if (r < 0)
                        return r;

                for (f = table; f->name; f++)
                        if (streq(f->name, m->string))
                                break;
                if (!f->name)
                        continue; /* unknown: ignored, as the runtime-spec requires */

                const OciJsonPath fp = OCI_JSON_KEY(p, f->name);
                uint64_t bit = UINT64_C(1) << (f - table);
                if (seen & bit)
                        return oci_json_error(reterr, &fp, "duplicate key");
                seen |= bit;

                /* null is "not set" to runc and crun (Go's encoding/json, yajl), which run such a config (jq's
                 * `.linux.timeOffsets = null` in runc's own tests): the same here, with a warning. */
                if (cJSON_IsNull(m)) {
                        if (f->flags & OCI_JSON_MANDATORY)
                                return oci_json_error(reterr, &fp, "required property is null");
                        _cleanup_free_ char *path = oci_json_path_to_string(&fp);
                        log_warning("%s: null, taken as not set, as runc and crun take it.", strna(path));
                        continue;
                }

                void *dst = (uint8_t *) base + f->offset;
                if (f->elem_size > 0)
                        r = parse_elements(m, &fp, f->elem_size, /* extra= */ 0, dst,
                                           (size_t *) ((uint8_t *) base + f->n_offset), f, reterr);
                else
                        r = parse_value(m, &fp, f, dst, reterr);
                if (r < 0)
                        return r;
                if (f->has_offset != OCI_JSON_NO_HAS)
                        *(bool *) ((uint8_t *) base + f->has_offset) = true;
        }

        for (const OciJsonField *f = table; f->name; f++)
                if ((f->flags & OCI_JSON_MANDATORY) && !(seen & (UINT64_C(1) << (f - table))))
                        return oci_json_error_at(reterr, p, f->name, "required property is missing");
        return 0;
}

int oci_json_field_string(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        char **s = dst;
        const char *t;
        int r;

        r = oci_json_get_string(v, p, &t, reterr);
        if (r < 0)
                return r;
        char *c = strdup(t);
        if (!c)
                return -ENOMEM;
        free(*s);
        *s = c;
        return 0;
}

int oci_json_field_string_checked(const cJSON *v, const OciJsonPath *p, void *dst,
                                  OciJsonStringCheckFn check, char **reterr) {
        int r;

        r = oci_json_field_string(v, p, dst, reterr);
        if (r < 0)
                return r;
        return check(*(char **) dst, p, reterr);
}

static int check_nonempty(const char *s, const OciJsonPath *p, char **reterr) {
        return isempty(s) ? oci_json_error(reterr, p, "must not be empty") : 0;
}

int oci_json_field_nonempty_string(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return oci_json_field_string_checked(v, p, dst, check_nonempty, reterr);
}

static int check_absolute_path(const char *s, const OciJsonPath *p, char **reterr) {
        return s[0] != '/' ? oci_json_error(reterr, p, "\"%s\" is not an absolute path", s) : 0;
}

int oci_json_field_absolute_path(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return oci_json_field_string_checked(v, p, dst, check_absolute_path, reterr);
}

/* Check that v is of type (an array or an object: then with non-empty keys) and count its members. */
static int count_members(const cJSON *v, const OciJsonPath *p, int type, size_t *ret_n, char **reterr) {
        const cJSON *e;
        size_t n = 0;
        int r;

        r = oci_json_check_type(v, p, type, reterr);
        if (r < 0)
                return r;
        cJSON_ArrayForEach(e, v) {
                if (type == cJSON_Object) {
                        r = oci_json_check_key(e, p, /* require_nonempty= */ true, reterr);
                        if (r < 0)
                                return r;
                }
                n++;
        }
        *ret_n = n;
        return 0;
}

int oci_json_array_size(const cJSON *v, const OciJsonPath *p, size_t *ret_n, char **reterr) {
        return count_members(v, p, cJSON_Array, ret_n, reterr);
}

int oci_json_field_strv(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        strv_free(*(char ***) dst);
        *(char ***) dst = NULL;
        return oci_json_parse_array(v, p, sizeof(char *), /* extra= */ 1, dst, NULL, oci_json_field_string,
                                    reterr);
}

int oci_json_field_strv_checked(const cJSON *v, const OciJsonPath *p, void *dst, OciJsonStringCheckFn check,
                                char **reterr) {
        size_t i = 0;
        int r;

        r = oci_json_field_strv(v, p, dst, reterr);
        if (r < 0)
                return r;
        for (char **s = *(char ***) dst; *s; s++, i++) {
                const OciJsonPath ep = OCI_JSON_INDEX(p, i);
                r = check(*s, &ep, reterr);
                if (r < 0)
                        return r;
        }
        return 0;
}

int oci_json_field_bool(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return oci_json_get_bool(v, p, dst, reterr);
}

void oci_json_store_integer(void *dst, size_t size, uint64_t value) {
        /* Two's complement: an in-range signed value converted to uint64_t truncates to itself. */
        switch (size) {
        case sizeof(uint8_t):
                *(uint8_t *) dst = (uint8_t) value;
                break;
        case sizeof(uint16_t):
                *(uint16_t *) dst = (uint16_t) value;
                break;
        case sizeof(uint32_t):
                *(uint32_t *) dst = (uint32_t) value;
                break;
        default:
                assert(size == sizeof(uint64_t));
                *(uint64_t *) dst = value;
        }
}

int oci_json_store_unsigned(const cJSON *v, const OciJsonPath *p, uint64_t max, void *dst, size_t size,
                            char **reterr) {
        uint64_t u;
        int r;

        r = oci_json_get_unsigned(v, p, max, &u, reterr);
        if (r < 0)
                return r;
        oci_json_store_integer(dst, size, u);
        return 0;
}

int oci_json_store_signed(const cJSON *v, const OciJsonPath *p, int64_t min, int64_t max, void *dst,
                          size_t size, char **reterr) {
        int64_t s;
        int r;

        r = oci_json_get_signed(v, p, min, max, &s, reterr);
        if (r < 0)
                return r;
        oci_json_store_integer(dst, size, (uint64_t) s);
        return 0;
}

int oci_json_field_uint32(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return oci_json_store_unsigned(v, p, UINT32_MAX, dst, sizeof(uint32_t), reterr);
}

int oci_json_field_uint64(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return oci_json_get_unsigned(v, p, UINT64_MAX, dst, reterr);
}

int oci_json_field_int32(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return oci_json_store_signed(v, p, INT32_MIN, INT32_MAX, dst, sizeof(int32_t), reterr);
}

int oci_json_field_int64(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return oci_json_get_signed(v, p, INT64_MIN, INT64_MAX, dst, reterr);
}

/* Read v into dst as the field f says: with its parser, or with its table of fields and then its check. */
static int parse_value(const cJSON *v, const OciJsonPath *p, const OciJsonField *f, void *dst,
                       char **reterr) {
        int r;

        if (!f->fields)
                return f->parse(v, p, dst, reterr);
        r = oci_json_dispatch(v, p, f->fields, dst, reterr);
        if (r < 0 || !f->check)
                return r;
        return f->check(v, p, dst, reterr);
}

static int copy_key(const cJSON *m, const OciJsonPath *p, void *elem, size_t key_offset,
                    OciJsonStringCheckFn check_key, char **reterr) {
        char *k;
        int r;

        if (check_key) {
                r = check_key(m->string, p, reterr);
                if (r < 0)
                        return r;
        }
        k = strdup(m->string);
        if (!k)
                return -ENOMEM;
        *(char **) ((uint8_t *) elem + key_offset) = k;
        return 0;
}

/* The elements of an array, or the members of a map (see oci_json_parse_map()), each with its path, read as
 * how says into the elements of the array at a. */
static int parse_members(const cJSON *v, const OciJsonPath *p, uint8_t *a, size_t elem_size,
                         OciJsonStringCheckFn check_key, size_t key_offset, const OciJsonField *how,
                         char **reterr) {
        const bool map = cJSON_IsObject(v);
        const cJSON *e;
        size_t i = 0;
        int r;

        cJSON_ArrayForEach(e, v) {
                const OciJsonPath ep = map ? OCI_JSON_KEY(p, e->string) : OCI_JSON_INDEX(p, i);
                uint8_t *elem = a + i * elem_size;
                if (map) {
                        r = copy_key(e, &ep, elem, key_offset, check_key, reterr);
                        if (r < 0)
                                return r;
                }
                r = parse_value(e, &ep, how, map ? elem + how->offset : elem, reterr);
                if (r < 0)
                        return r;
                i++;
        }
        return 0;
}

static int alloc_elements(size_t n, size_t elem_size, size_t extra, void **ret, size_t *ret_n) {
        assert(!*ret); /* the field is parsed once (oci_json_dispatch() rejects duplicate keys) */

        if (n + extra == 0)
                return 0;
        *ret = calloc(n + extra, elem_size);
        if (!*ret)
                return -ENOMEM;
        if (ret_n)
                *ret_n = n;
        return 0;
}

static int parse_elements(const cJSON *v, const OciJsonPath *p, size_t elem_size, size_t extra, void **ret,
                          size_t *ret_n, const OciJsonField *how, char **reterr) {
        size_t n = 0;
        int r;

        r = oci_json_array_size(v, p, &n, reterr);
        if (r < 0)
                return r;
        r = alloc_elements(n, elem_size, extra, ret, ret_n);
        if (r < 0)
                return r;
        return parse_members(v, p, *ret, elem_size, NULL, 0, how, reterr);
}

int oci_json_parse_array(const cJSON *v, const OciJsonPath *p, size_t elem_size, size_t extra, void **ret,
                         size_t *ret_n, OciJsonFieldFn parse_elem, char **reterr) {
        const OciJsonField how = { .parse = parse_elem };
        return parse_elements(v, p, elem_size, extra, ret, ret_n, &how, reterr);
}

int oci_json_parse_array_of(const cJSON *v, const OciJsonPath *p, size_t elem_size, void **ret,
                            size_t *ret_n, const OciJsonField *fields, OciJsonFieldFn check, char **reterr) {
        const OciJsonField how = { .fields = fields, .check = check };
        return parse_elements(v, p, elem_size, /* extra= */ 0, ret, ret_n, &how, reterr);
}

static int cmp_string_ptr(const void *a, const void *b) {
        return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* cJSON keeps duplicate keys; JSON maps with duplicates are ambiguous, so refuse them. O(n log n). */
static int check_no_duplicate_keys(const cJSON *obj, const OciJsonPath *p, size_t n, char **reterr) {
        _cleanup_free_ const char **keys = NULL;
        const cJSON *m;
        size_t i = 0;

        if (n < 2)
                return 0;
        keys = malloc(n * sizeof(char *));
        if (!keys)
                return -ENOMEM;
        cJSON_ArrayForEach(m, obj)
                keys[i++] = m->string;
        qsort(keys, n, sizeof(char *), cmp_string_ptr);
        for (i = 1; i < n; i++)
                if (streq(keys[i - 1], keys[i]))
                        return oci_json_error_at(reterr, p, keys[i], "duplicate key");
        return 0;
}

int oci_json_check_map(const cJSON *v, const OciJsonPath *p, size_t *ret_n, char **reterr) {
        size_t n = 0;
        int r;

        r = count_members(v, p, cJSON_Object, &n, reterr);
        if (r < 0)
                return r;
        r = check_no_duplicate_keys(v, p, n, reterr);
        if (r < 0)
                return r;
        *ret_n = n;
        return 0;
}

int oci_json_parse_map(const cJSON *v, const OciJsonPath *p, size_t elem_size, void **ret, size_t *ret_n,
                       OciJsonStringCheckFn check_key, size_t key_offset, const OciJsonField *value,
                       char **reterr) {
        size_t n = 0;
        int r;

        r = oci_json_check_map(v, p, &n, reterr);
        if (r < 0)
                return r;
        r = alloc_elements(n, elem_size, /* extra= */ 0, ret, ret_n);
        if (r < 0)
                return r;
        return parse_members(v, p, *ret, elem_size, check_key, key_offset, value, reterr);
}
