/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The table-driven JSON layer under the config parser (src/oci/oci-json.c): typed integer stores, checked
 * strings and string lists, nested objects and arrays of objects as table rows, maps with their keys. */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json-util.h"
#include "macro.h"
#include "oci-json.h"
#include "strv.h"
#include "tap.h"

typedef struct Inner {
        bool present;
        uint16_t small;
        int32_t lo, hi;
} Inner;

typedef struct Item {
        char *key;
        char *name;
        int8_t tiny;
} Item;

typedef struct Outer {
        Inner inner;
        Item *items;
        size_t n_items;
        Item *map;
        size_t n_map;
        char **words;
        char *path;
} Outer;

static int field_small(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return oci_json_store_unsigned(v, p, 1000, dst, sizeof(uint16_t), reterr);
}

static int field_tiny(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return oci_json_store_signed(v, p, -5, 5, dst, sizeof(int8_t), reterr);
}

static int check_inner(const cJSON *v, const OciJsonPath *p, void *obj, char **reterr) {
        const Inner *i = obj;
        return i->lo > i->hi ? oci_json_error_at(reterr, p, "lo", "larger than hi (%d > %d)", i->lo, i->hi)
                             : 0;
}

static int check_word(const char *s, const OciJsonPath *p, char **reterr) {
        return streq(s, "bad") ? oci_json_error(reterr, p, "\"%s\" is not allowed", s) : 0;
}

static int field_words(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return oci_json_field_strv_checked(v, p, dst, check_word, reterr);
}

static int field_path(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        return oci_json_field_string_checked(v, p, dst, check_word, reterr);
}

static const OciJsonField inner_fields[] = {
        { "small", field_small, offsetof(Inner, small), OCI_JSON_NO_HAS, 0 },
        { "lo", oci_json_field_int32, offsetof(Inner, lo), OCI_JSON_NO_HAS, OCI_JSON_MANDATORY },
        { "hi", oci_json_field_int32, offsetof(Inner, hi), OCI_JSON_NO_HAS, 0 },
        {},
};

static const OciJsonField item_fields[] = {
        { "name", oci_json_field_string, offsetof(Item, name), OCI_JSON_NO_HAS, OCI_JSON_MANDATORY },
        { "tiny", field_tiny, offsetof(Item, tiny), OCI_JSON_NO_HAS, 0 },
        {},
};

static int check_map_key(const char *key, const OciJsonPath *p, char **reterr) {
        return key[0] == '.' ? oci_json_error(reterr, p, "hidden key") : 0;
}

static int parse_map(const cJSON *v, const OciJsonPath *p, void *dst, char **reterr) {
        static const OciJsonField value = { .fields = item_fields };
        Outer *o = dst;
        return oci_json_parse_map(v, p, sizeof(Item), (void **) &o->map, &o->n_map, check_map_key,
                                  offsetof(Item, key), &value, reterr);
}

static const OciJsonField outer_fields[] = {
        { "inner", NULL, offsetof(Outer, inner), offsetof(Outer, inner.present), 0, .fields = inner_fields,
          .check = check_inner },
        { "items", NULL, offsetof(Outer, items), OCI_JSON_NO_HAS, 0, sizeof(Item), offsetof(Outer, n_items),
          item_fields, NULL },
        { "map", parse_map, 0, OCI_JSON_NO_HAS, 0 },
        { "words", field_words, offsetof(Outer, words), OCI_JSON_NO_HAS, 0 },
        { "path", field_path, offsetof(Outer, path), OCI_JSON_NO_HAS, 0 },
        {},
};

static void items_free(Item *a, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(a[i].key);
                free(a[i].name);
        }
        free(a);
}

static void outer_done(Outer *o) {
        items_free(o->items, o->n_items);
        items_free(o->map, o->n_map);
        strv_free(o->words);
        free(o->path);
        *o = (Outer){};
}

/* Parse doc into *o with outer_fields under the path "top"; returns r, the message in *ret_err. */
static int parse(const char *doc, Outer *o, char **ret_err) {
        const OciJsonPath top = OCI_JSON_KEY(NULL, "top");
        _cleanup_json_ cJSON *j = NULL;
        int r;

        *o = (Outer){};
        *ret_err = NULL;
        r = oci_json_parse_strict(doc, strlen(doc), &j, ret_err);
        if (r < 0)
                return r;
        return oci_json_dispatch(j, &top, outer_fields, o, ret_err);
}

static void test_error(const char *doc, const char *expected, const char *what) {
        Outer o;
        char *err = NULL;
        int r = parse(doc, &o, &err);

        tap_is_int(r, -EINVAL, "%s: refused", what);
        tap_is_str(err, expected, "%s: message", what);
        free(err);
        outer_done(&o);
}

static void test_store_integer(void) {
        uint8_t u8 = 0;
        uint16_t u16 = 0;
        int32_t i32 = 0;
        uint64_t u64 = 0;
        int64_t i64 = 0;

        oci_json_store_integer(&u8, sizeof(u8), 200);
        oci_json_store_integer(&u16, sizeof(u16), 65535);
        oci_json_store_integer(&i32, sizeof(i32), (uint64_t) (int64_t) -7);
        oci_json_store_integer(&u64, sizeof(u64), UINT64_MAX);
        oci_json_store_integer(&i64, sizeof(i64), (uint64_t) INT64_MIN);
        tap_is_int(u8, 200, "store_integer: 1 byte");
        tap_is_int(u16, 65535, "store_integer: 2 bytes");
        tap_is_int(i32, -7, "store_integer: a negative value in 4 bytes");
        tap_ok(u64 == UINT64_MAX, "store_integer: 8 bytes unsigned");
        tap_ok(i64 == INT64_MIN, "store_integer: 8 bytes signed");
}

static void test_good(void) {
        const char *doc = "{\"inner\":{\"small\":1000,\"lo\":-3,\"hi\":4},"
                          "\"items\":[{\"name\":\"a\",\"tiny\":-5},{\"name\":\"b\",\"tiny\":5}],"
                          "\"map\":{\"k1\":{\"name\":\"x\"},\"k2\":{\"name\":\"y\",\"tiny\":1}},"
                          "\"words\":[\"one\",\"two\"],\"path\":\"ok\",\"unknown\":[1]}";
        Outer o;
        char *err = NULL;

        tap_is_int(parse(doc, &o, &err), 0, "a good document parses (%s)", strna(err));
        tap_ok(o.inner.present, "nested object: its has flag is set");
        tap_is_int(o.inner.small, 1000, "nested object: uint16_t member");
        tap_is_int(o.inner.lo, -3, "nested object: int32_t member");
        tap_is_int(o.n_items, 2, "array of objects: count");
        tap_is_str(o.n_items == 2 ? o.items[1].name : NULL, "b",
                   "array of objects: element read by its table");
        tap_is_int(o.n_items == 2 ? o.items[0].tiny : 0, -5, "array of objects: int8_t member");
        tap_is_int(o.n_map, 2, "map: count");
        tap_is_str(o.n_map == 2 ? o.map[1].key : NULL, "k2", "map: the key is copied to the element");
        tap_is_str(o.n_map == 2 ? o.map[1].name : NULL, "y", "map: the value is read by its table");
        tap_ok(strv_length(o.words) == 2 && streq(o.words[1], "two"), "checked strv: entries kept");
        tap_is_str(o.path, "ok", "checked string: value kept");
        free(err);
        outer_done(&o);

        tap_is_int(parse("{\"items\":[]}", &o, &err), 0, "an empty array of objects parses");
        tap_ok(!o.items && o.n_items == 0, "an empty array of objects allocates nothing");
        free(err);
        outer_done(&o);
}

static void test_errors(void) {
        test_error("{\"inner\":{\"small\":1001,\"lo\":0}}",
                   "top.inner.small: value 1001 out of range (0..1000)", "unsigned store: above max");
        test_error("{\"inner\":{\"lo\":5,\"hi\":4}}", "top.inner.lo: larger than hi (5 > 4)",
                   "nested object: check runs after its fields");
        test_error("{\"inner\":{\"hi\":4}}", "top.inner.lo: required property is missing",
                   "nested object: mandatory field (oci_json_error_at)");
        test_error("{\"inner\":[]}", "top.inner: expected an object, got array",
                   "nested object: wrong type");
        test_error("{\"items\":[{\"name\":\"a\"},{\"name\":\"b\",\"tiny\":-6}]}",
                   "top.items[1].tiny: value -6 out of range (-5..5)", "array of objects: element path");
        test_error("{\"items\":{}}", "top.items: expected an array, got object",
                   "array of objects: wrong type");
        test_error("{\"map\":{\"k\":{\"name\":\"x\"},\".h\":{\"name\":\"y\"}}}",
                   "top.map[\".h\"]: hidden key", "map: key check with the key's path");
        test_error("{\"map\":{\"k\":{}}}", "top.map.k.name: required property is missing",
                   "map: value read by its table");
        test_error("{\"map\":{\"k\":{\"name\":\"x\"},\"k\":{\"name\":\"y\"}}}", "top.map.k: duplicate key",
                   "map: duplicate key");
        test_error("{\"map\":{\"\":{\"name\":\"x\"}}}", "top.map: empty key", "map: empty key");
        test_error("{\"words\":[\"one\",\"bad\"]}", "top.words[1]: \"bad\" is not allowed",
                   "checked strv: the entry's path");
        test_error("{\"path\":\"bad\"}", "top.path: \"bad\" is not allowed", "checked string");
}

static void test_parse_array_extra(void) {
        _cleanup_json_ cJSON *j = NULL;
        const OciJsonPath p = OCI_JSON_KEY(NULL, "a");
        uint32_t *a = NULL;
        size_t n = 99;
        char *err = NULL;

        tap_is_int(oci_json_parse_strict("[]", 2, &j, &err), 0, "parse []");
        tap_is_int(oci_json_parse_array(j, &p, sizeof(uint32_t), 1, (void **) &a, &n, oci_json_field_uint32,
                                        &err),
                   0, "parse_array: empty array with extra=1");
        tap_ok(a && n == 0, "parse_array: extra=1 gives a non-NULL empty array");
        free(a);
        free(err);
}

int main(void) {
        test_store_integer();
        test_good();
        test_errors();
        test_parse_array_extra();
        return tap_done();
}
