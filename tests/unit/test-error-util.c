/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "error-util.h"
#include "macro.h"
#include "tap.h"

static void test_errorf(void) {
        _cleanup_free_ char *e = NULL;

        tap_is_int(errorf(NULL, EINVAL, "x"), -EINVAL, "errorf(NULL) still returns -errno");
        tap_is_int(errorf(&e, EINVAL, "bad %s", "thing"), -EINVAL, "a positive errno comes back negative");
        tap_is_str(e, "bad thing", "errorf formats the message");
        tap_is_int(errorf(&e, -ENOENT, "second %d", 2), -ENOENT, "a negative errno comes back as it is");
        tap_is_str(e, "second 2", "errorf replaces an older message (the last one wins)");
        errno = EACCES;
        (void) errorf(&e, EACCES, "open: %m");
        tap_is_str(e, "open: Permission denied", "%m sees the caller's errno");
}

static void test_errorf_first(void) {
        _cleanup_free_ char *e = NULL;

        tap_is_int(errorf_first(&e, EIO, "root cause"), -EIO, "errorf_first returns -errno");
        tap_is_int(errorf_first(&e, EPERM, "cleanup failed"), -EPERM, "errorf_first returns its own errno");
        tap_is_str(e, "root cause", "errorf_first keeps the first message");
        tap_is_int(errorf_first((char **) NULL, EPERM, "x"), -EPERM, "errorf_first(NULL)");

        _cleanup_free_ char *w = NULL;
        tap_is_int(errwrap_first(&w, -ENOENT, "mounts[%d]", 0), -ENOENT, "errwrap_first returns -errno");
        tap_is_str(w, "mounts[0]: No such file or directory", "errwrap_first: the errno's text follows");
        tap_is_int(errwrap_first(&w, -EPERM, "umount"), -EPERM, "errwrap_first returns its own errno");
        tap_is_str(w, "mounts[0]: No such file or directory", "errwrap_first keeps the first message");
        tap_is_int(errwrap_first((char **) NULL, -EIO, "x"), -EIO, "errwrap_first(NULL)");
}

static void test_errwrap(void) {
        _cleanup_free_ char *e = NULL;

        tap_is_int(errwrap(NULL, EINVAL, "p"), -EINVAL, "errwrap(NULL) returns -errno");
        tap_is_int(errwrap(&e, -ENOENT, "open \"%s\"", "/x"), -ENOENT, "errwrap with no inner message");
        tap_is_str(e, "open \"/x\": No such file or directory",
                   "the errno's text stands for the inner message");
        (void) errwrap(&e, ENOENT, "step %d", 1);
        tap_is_str(e, "step 1: open \"/x\": No such file or directory",
                   "errwrap prefixes the lower layer's message");
        (void) errwrap(&e, ENOENT, "%s", "");
        tap_is_str(e, "step 1: open \"/x\": No such file or directory", "an empty prefix keeps the message");
}

int main(void) {
        test_errorf();
        test_errorf_first();
        test_errwrap();
        return tap_done();
}
