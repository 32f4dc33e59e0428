/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A tiny TAP producer for the unit tests: plan-less, "ok N - desc" lines, a trailing "1..N". */

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed;

#define tap_ok(cond, ...)                                                              \
        ({                                                                             \
                bool _c_ = (cond);                                                     \
                tap_n++;                                                               \
                printf("%sok %d - ", _c_ ? "" : "not ", tap_n);                        \
                printf(__VA_ARGS__);                                                   \
                printf("\n");                                                          \
                if (!_c_) {                                                            \
                        tap_failed++;                                                  \
                        printf("# failed at %s:%d: %s\n", __FILE__, __LINE__, #cond);  \
                }                                                                      \
                fflush(stdout);                                                        \
                _c_;                                                                   \
        })

#define tap_is_int(got, expected, ...)                                                 \
        ({                                                                             \
                long long _g_ = (got), _e_ = (expected);                               \
                bool _r_ = tap_ok(_g_ == _e_, __VA_ARGS__);                            \
                if (!_r_)                                                              \
                        printf("#   got %lld, expected %lld\n", _g_, _e_);             \
                _r_;                                                                   \
        })

#define tap_is_str(got, expected, ...)                                                 \
        ({                                                                             \
                const char *_g_ = (got), *_e_ = (expected);                            \
                bool _r_ = tap_ok(_g_ && _e_ ? strcmp(_g_, _e_) == 0 : _g_ == _e_, __VA_ARGS__); \
                if (!_r_)                                                              \
                        printf("#   got \"%s\", expected \"%s\"\n", _g_ ?: "(null)", _e_ ?: "(null)"); \
                _r_;                                                                   \
        })

static inline int tap_done(void) {
        printf("1..%d\n", tap_n);
        return tap_failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* Test helpers more than one test uses. */
static inline void *mfree(void *p) {
        free(p);
        return NULL;
}

static inline int rm_rf_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) flag;
        (void) ftw;
        return remove(path) < 0 ? -1 : 0;
}

/* Remove a scratch tree (best effort, without following symlinks). */
static inline void rm_rf(const char *path) {
        (void) nftw(path, rm_rf_one, 16, FTW_DEPTH | FTW_PHYS);
}
