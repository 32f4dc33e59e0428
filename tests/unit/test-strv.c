/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "macro.h"
#include "strv.h"
#include "tap.h"

static void test_length_contains(void) {
        char *l[] = { (char *) "a", (char *) "bc", NULL };

        tap_is_int(strv_length(NULL), 0, "strv_length(NULL) is 0");
        tap_is_int(strv_length(l), 2, "strv_length counts the strings");
        tap_ok(strv_contains(l, "bc"), "strv_contains finds an element");
        tap_ok(!strv_contains(l, "b"), "strv_contains compares whole strings, not prefixes");
        tap_ok(!strv_contains(NULL, "a"), "strv_contains on NULL is false");
        tap_ok(strv_free(NULL) == NULL, "strv_free(NULL) is a no-op returning NULL");
}

static void test_dup(void) {
        char *l[] = { (char *) "x", (char *) "y", NULL };
        _cleanup_strv_free_ char **c = NULL, **e = NULL;

        tap_is_int(strv_dup(l, &c), 0, "strv_dup");
        tap_ok(c && c != l && c[0] != l[0], "strv_dup copies the array and the strings");
        tap_is_int(strv_length(c), 2, "strv_dup keeps the length");
        tap_is_str(c[1], "y", "strv_dup keeps the order");
        tap_ok(c[2] == NULL, "strv_dup terminates the copy");
        tap_is_int(strv_dup(NULL, &e), 0, "strv_dup(NULL)");
        tap_ok(e && !e[0], "strv_dup(NULL) gives an empty list, not NULL");
}

static void test_extend(void) {
        char *add[] = { (char *) "b", (char *) "c", NULL };
        _cleanup_strv_free_ char **l = NULL;

        tap_is_int(strv_extend(&l, "a"), 0, "strv_extend onto NULL");
        tap_is_int(strv_extend_strv(&l, add), 0, "strv_extend_strv");
        tap_is_int(strv_extend_strv(&l, NULL), 0, "strv_extend_strv of nothing");
        tap_is_int(strv_length(l), 3, "three strings after extending");
        tap_is_str(l[0], "a", "first");
        tap_is_str(l[2], "c", "last");
        tap_ok(l[2] != add[1], "strv_extend_strv copies");
}

static void test_extendf_join(void) {
        _cleanup_strv_free_ char **l = NULL;
        _cleanup_free_ char *j = NULL, *e = NULL;

        tap_ok(strv_extend(&l, "criu") >= 0 && strv_extendf(&l, "--tree=%d", 42) >= 0, "argv built");
        tap_ok(l[2] == NULL, "NULL-terminated");
        j = strv_join(l, " ");
        tap_is_str(j, "criu --tree=42", "joined with a space");
        e = strv_join(NULL, " ");
        tap_is_str(e, "", "an empty list joins to \"\"");
}

static void test_env_set(void) {
        _cleanup_strv_free_ char **l = NULL;

        tap_is_int(strv_env_set(&l, "A=1"), 0, "strv_env_set appends a new key");
        tap_is_int(strv_env_set(&l, "AB=2"), 0, "a key that extends another is a different key");
        tap_is_int(strv_env_set(&l, "A=3"), 0, "strv_env_set replaces");
        tap_is_int(strv_length(l), 2, "A is defined once");
        tap_is_str(l[0], "A=3", "the replacement keeps the place");
        tap_is_str(l[1], "AB=2", "AB is untouched");
        free(l[1]);
        l[1] = strdup("AB");
        tap_is_int(strv_env_set(&l, "AB=4"), 0, "a bare KEY is replaced too");
        tap_is_str(l[1], "AB=4", "bare key replaced");
        tap_is_int(strv_length(l), 2, "still two");
}

int main(void) {
        test_length_contains();
        test_dup();
        test_extend();
        test_extendf_join();
        test_env_set();
        return tap_done();
}
