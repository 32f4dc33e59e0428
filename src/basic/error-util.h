/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "macro.h"

/* The one way library code reports a failure with context: fill *reterr (if non-NULL; any old message is
 * freed) with the formatted message and return -abs(r), so that `return errorf(reterr, r, "...")` works.
 * The caller that decides to print it prints it once. */
int errorf(char **reterr, int r, const char *fmt, ...) _printf_(3, 4);

/* Put a prefix before the message a lower layer left in *reterr ("PREFIX: INNER"; with no message there, the
 * errno's text stands for it; an empty prefix keeps the message as it is) and return -abs(r): the caller
 * that adds context to a failure it passes up. */
int errwrap(char **reterr, int r, const char *prefix_fmt, ...) _printf_(3, 4);
