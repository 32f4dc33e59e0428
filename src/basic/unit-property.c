/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "strv.h"
#include "unit-property.h"

static const char *const kind_signatures[_UNIT_PROP_KIND_MAX] = {
        [UNIT_PROP_BOOL] = "b",         [UNIT_PROP_STRING] = "s",       [UNIT_PROP_UINT64] = "t",
        [UNIT_PROP_INT64] = "x",        [UNIT_PROP_UINT32] = "u",       [UNIT_PROP_INT32] = "i",
        [UNIT_PROP_DOUBLE] = "d",       [UNIT_PROP_STRV] = "as",        [UNIT_PROP_BYTES] = "ay",
        [UNIT_PROP_PAIRS_SS] = "a(ss)", [UNIT_PROP_PAIRS_ST] = "a(st)", [UNIT_PROP_UINT32_ARRAY] = "au",
};

const char *unit_property_kind_signature(UnitPropertyKind k) {
        if (k < 0 || k >= _UNIT_PROP_KIND_MAX)
                return NULL;
        return kind_signatures[k];
}

static void *memdup_local(const void *p, size_t n) {
        void *q = malloc(n);
        if (q)
                memcpy(q, p, n);
        return q;
}

static void unit_property_done(UnitProperty *p) {
        free(p->name);
        free(p->s);
        strv_free(p->strv);
        free(p->bytes);
        for (size_t i = 0; i < p->n_pairs; i++) {
                free(p->pairs[i].first);
                free(p->pairs[i].second);
        }
        free(p->pairs);
        free(p->u32s);
        *p = (UnitProperty){};
}

void unit_property_list_done(UnitPropertyList *l) {
        if (!l)
                return;
        for (size_t i = 0; i < l->n_items; i++)
                unit_property_done(&l->items[i]);
        free(l->items);
        l->items = NULL;
        l->n_items = 0;
}

static UnitProperty *list_find_mutable(UnitPropertyList *l, const char *name) {
        for (size_t i = 0; i < l->n_items; i++)
                if (streq(l->items[i].name, name))
                        return &l->items[i];
        return NULL;
}

const UnitProperty *unit_property_list_find(const UnitPropertyList *l, const char *name) {
        if (!l || !name)
                return NULL;
        for (size_t i = 0; i < l->n_items; i++)
                if (streq(l->items[i].name, name))
                        return &l->items[i];
        return NULL;
}

void unit_property_list_remove(UnitPropertyList *l, const char *name) {
        size_t m = 0;

        if (!l || !name)
                return;
        for (size_t i = 0; i < l->n_items; i++) {
                if (streq(l->items[i].name, name))
                        unit_property_done(&l->items[i]);
                else
                        l->items[m++] = l->items[i];
        }
        l->n_items = m;
}

/* Returns a slot for a scalar property: the existing one of that name (cleared, keeping its position and
 * name) or a fresh one at the end. */
static int slot_scalar(UnitPropertyList *l, const char *name, UnitPropertyKind kind, UnitProperty **ret) {
        UnitProperty *p;

        assert(l);
        assert(name);

        p = list_find_mutable(l, name);
        if (p) {
                char *n = TAKE_PTR(p->name);
                unit_property_done(p);
                p->name = n;
        } else {
                _cleanup_free_ char *n = strdup(name);
                if (!n)
                        return -ENOMEM;
                UnitProperty *items = reallocarray(l->items, l->n_items + 1, sizeof(UnitProperty));
                if (!items)
                        return -ENOMEM;
                l->items = items;
                p = &l->items[l->n_items++];
                *p = (UnitProperty){ .name = TAKE_PTR(n) };
        }
        p->kind = kind;
        *ret = p;
        return 0;
}

/* For the list kinds: an existing property of that name and kind is extended, else a new one is added. */
static int slot_list(UnitPropertyList *l, const char *name, UnitPropertyKind kind, UnitProperty **ret) {
        UnitProperty *p = list_find_mutable(l, name);
        if (p && p->kind == kind) {
                *ret = p;
                return 0;
        }
        return slot_scalar(l, name, kind, ret);
}

/* A failed allocation after slot_scalar() leaves an empty property of that name; drop it so the list stays
 * consistent. */
static int drop_on_enomem(UnitPropertyList *l, UnitProperty *p) {
        size_t idx = (size_t) (p - l->items);
        unit_property_done(p);
        memmove(l->items + idx, l->items + idx + 1, (l->n_items - idx - 1) * sizeof(UnitProperty));
        l->n_items--;
        return -ENOMEM;
}

/* Every kind but the pairs: v (its name aside) goes into the slot of that name, which then owns what v points
 * to. On -ENOMEM that is freed, and the list is as it was. */
static int add_value(UnitPropertyList *l, const char *name, UnitProperty v) {
        UnitProperty *p;
        int r = slot_scalar(l, name, v.kind, &p);
        if (r < 0) {
                unit_property_done(&v);
                return r;
        }
        v.name = p->name;
        *p = v;
        return 0;
}

int unit_property_add_bool(UnitPropertyList *l, const char *name, bool b) {
        return add_value(l, name, (UnitProperty){ .kind = UNIT_PROP_BOOL, .b = b });
}

int unit_property_add_string(UnitPropertyList *l, const char *name, const char *s) {
        char *copy = strdup(strempty(s));
        if (!copy)
                return -ENOMEM;
        return add_value(l, name, (UnitProperty){ .kind = UNIT_PROP_STRING, .s = copy });
}

int unit_property_add_u64(UnitPropertyList *l, const char *name, uint64_t v) {
        return add_value(l, name, (UnitProperty){ .kind = UNIT_PROP_UINT64, .u64 = v });
}

int unit_property_add_i64(UnitPropertyList *l, const char *name, int64_t v) {
        return add_value(l, name, (UnitProperty){ .kind = UNIT_PROP_INT64, .i64 = v });
}

int unit_property_add_u32(UnitPropertyList *l, const char *name, uint32_t v) {
        return add_value(l, name, (UnitProperty){ .kind = UNIT_PROP_UINT32, .u64 = v });
}

int unit_property_add_i32(UnitPropertyList *l, const char *name, int32_t v) {
        return add_value(l, name, (UnitProperty){ .kind = UNIT_PROP_INT32, .i64 = v });
}

int unit_property_add_double(UnitPropertyList *l, const char *name, double v) {
        return add_value(l, name, (UnitProperty){ .kind = UNIT_PROP_DOUBLE, .d = v });
}

int unit_property_add_strv(UnitPropertyList *l, const char *name, char *const *strv) {
        char **copy;
        if (strv_dup(strv, &copy) < 0)
                return -ENOMEM;
        return add_value(l, name, (UnitProperty){ .kind = UNIT_PROP_STRV, .strv = copy });
}

int unit_property_add_bytes(UnitPropertyList *l, const char *name, const uint8_t *b, size_t n) {
        uint8_t *copy = NULL;
        if (n > 0 && !(copy = memdup_local(b, n)))
                return -ENOMEM;
        return add_value(l, name, (UnitProperty){ .kind = UNIT_PROP_BYTES, .bytes = copy, .n_bytes = n });
}

static int add_pair(UnitPropertyList *l, const char *name, UnitPropertyKind kind, const char *a,
                    const char *b, uint64_t v) {
        _cleanup_free_ char *fa = NULL, *fb = NULL;
        UnitProperty *p;
        int r;

        fa = strdup(strempty(a));
        if (!fa)
                return -ENOMEM;
        if (kind == UNIT_PROP_PAIRS_SS) {
                fb = strdup(strempty(b));
                if (!fb)
                        return -ENOMEM;
        }
        r = slot_list(l, name, kind, &p);
        if (r < 0)
                return r;
        UnitPropertyPair *pairs = reallocarray(p->pairs, p->n_pairs + 1, sizeof(UnitPropertyPair));
        if (!pairs) {
                if (p->n_pairs == 0)
                        return drop_on_enomem(l, p);
                return -ENOMEM;
        }
        p->pairs = pairs;
        p->pairs[p->n_pairs++] = (UnitPropertyPair){
                .first = TAKE_PTR(fa),
                .second = TAKE_PTR(fb),
                .value = v,
        };
        return 0;
}

int unit_property_add_pair_ss(UnitPropertyList *l, const char *name, const char *a, const char *b) {
        return add_pair(l, name, UNIT_PROP_PAIRS_SS, a, b, 0);
}

int unit_property_add_pair_st(UnitPropertyList *l, const char *name, const char *a, uint64_t v) {
        return add_pair(l, name, UNIT_PROP_PAIRS_ST, a, NULL, v);
}

int unit_property_add_u32_array(UnitPropertyList *l, const char *name, const uint32_t *v, size_t n) {
        uint32_t *copy = NULL;
        if (n > 0 && !(copy = memdup_local(v, n * sizeof(uint32_t))))
                return -ENOMEM;
        return add_value(l, name,
                         (UnitProperty){ .kind = UNIT_PROP_UINT32_ARRAY, .u32s = copy, .n_u32s = n });
}

/* A growing string buffer for to_string. */
typedef struct Buf {
        char *s;
        size_t len;
        bool oom;
} Buf;

_printf_(2, 3) static void buf_printf(Buf *b, const char *fmt, ...) {
        va_list ap;
        char *t = NULL;
        int n;

        if (b->oom)
                return;
        va_start(ap, fmt);
        n = vasprintf(&t, fmt, ap);
        va_end(ap);
        if (n < 0) {
                b->oom = true;
                return;
        }
        char *ns = realloc(b->s, b->len + (size_t) n + 1);
        if (!ns) {
                free(t);
                b->oom = true;
                return;
        }
        memcpy(ns + b->len, t, (size_t) n + 1);
        b->s = ns;
        b->len += (size_t) n;
        free(t);
}

static void buf_u64(Buf *b, uint64_t v) {
        if (v == UINT64_MAX)
                buf_printf(b, "infinity");
        else
                buf_printf(b, "%" PRIu64, v);
}

char *unit_property_to_string(const UnitProperty *p) {
        Buf b = {};

        if (!p)
                return NULL;

        buf_printf(&b, "%s=", p->name);
        switch (p->kind) {
        case UNIT_PROP_BOOL:
                buf_printf(&b, "%s", p->b ? "yes" : "no");
                break;
        case UNIT_PROP_STRING:
                buf_printf(&b, "%s", strempty(p->s));
                break;
        case UNIT_PROP_UINT64:
                buf_u64(&b, p->u64);
                break;
        case UNIT_PROP_UINT32:
                buf_printf(&b, "%" PRIu32, (uint32_t) p->u64);
                break;
        case UNIT_PROP_INT64:
        case UNIT_PROP_INT32:
                buf_printf(&b, "%" PRIi64, p->i64);
                break;
        case UNIT_PROP_DOUBLE:
                buf_printf(&b, "%g", p->d);
                break;
        case UNIT_PROP_STRV:
                for (size_t i = 0; p->strv && p->strv[i]; i++)
                        buf_printf(&b, "%s%s", i > 0 ? " " : "", p->strv[i]);
                break;
        case UNIT_PROP_BYTES:
                /* Hex, lowest byte first, as the bytes travel on the bus. */
                for (size_t i = 0; i < p->n_bytes; i++)
                        buf_printf(&b, "%02x", p->bytes[i]);
                break;
        case UNIT_PROP_PAIRS_SS:
                for (size_t i = 0; i < p->n_pairs; i++)
                        buf_printf(&b, "%s%s %s", i > 0 ? "," : "", p->pairs[i].first, p->pairs[i].second);
                break;
        case UNIT_PROP_PAIRS_ST:
                for (size_t i = 0; i < p->n_pairs; i++) {
                        buf_printf(&b, "%s%s ", i > 0 ? "," : "", p->pairs[i].first);
                        buf_u64(&b, p->pairs[i].value);
                }
                break;
        case UNIT_PROP_UINT32_ARRAY:
                for (size_t i = 0; i < p->n_u32s; i++)
                        buf_printf(&b, "%s%" PRIu32, i > 0 ? " " : "", p->u32s[i]);
                break;
        default:
                buf_printf(&b, "?");
        }

        if (b.oom) {
                free(b.s);
                return NULL;
        }
        return b.s;
}
