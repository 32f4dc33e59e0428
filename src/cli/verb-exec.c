/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cli.h"

/* placeholder: being written */
int verb_exec(int argc, char *argv[]) {
        return cli_usage_error("exec", "not built yet");
}
