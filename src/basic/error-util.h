/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdarg.h>

#include "macro.h"

/* The one way library code reports a failure with context: fill *reterr (if non-NULL; any old message is
 * freed, the last message wins) with the formatted message and return -abs(r), so that
 * `return errorf(reterr, r, "...")` works. The message is formatted before anything else happens, so "%m"
 * still sees the caller's errno. The caller that decides to print it prints it once. */
int errorf(char **reterr, int r, const char *fmt, ...) _printf_(3, 4);
int verrorf(char **reterr, int r, const char *fmt, va_list ap) _printf_(3, 0);

/* Put a prefix before the message a lower layer left in *reterr ("PREFIX: INNER"; with no message there, the
 * errno's text stands for it; an empty prefix keeps the message as it is) and return -abs(r): the caller
 * that adds context to a failure it passes up. */
int errwrap(char **reterr, int r, const char *prefix_fmt, ...) _printf_(3, 4);
int verrwrap(char **reterr, int r, const char *prefix_fmt, va_list ap) _printf_(3, 0);

/* Where the first message must win (a step that reports the root cause, later cleanup failures must not
 * hide it), the call site says so: `if (reterr && !*reterr) errorf(...)`, or errorf_first(); errwrap_first()
 * is the same for errwrap() (with no message yet: "MESSAGE: the errno's text"). */
#define _first_message_(fn, reterr, r, ...)                               \
        ({                                                                \
                char **_e = (reterr);                                     \
                int _r = (r);                                             \
                _e &&*_e ? (_r < 0 ? _r : -_r) : fn(_e, _r, __VA_ARGS__); \
        })
#define errorf_first(reterr, r, ...) _first_message_(errorf, reterr, r, __VA_ARGS__)
#define errwrap_first(reterr, r, ...) _first_message_(errwrap, reterr, r, __VA_ARGS__)
