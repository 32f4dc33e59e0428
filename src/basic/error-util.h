/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "macro.h"

/* The one way library code reports a failure with context: fill *reterr (if non-NULL; any old message is
 * freed) with the formatted message and return -abs(r), so that `return errorf(reterr, r, "...")` works.
 * The caller that decides to print it prints it once. */
int errorf(char **reterr, int r, const char *fmt, ...) _printf_(3, 4);
