/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cli.h"

/* placeholder: being written */
int verb_run(int argc, char *argv[]) {
        return cli_usage_error("run", "not built yet");
}
