/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cli.h"

/* placeholder: being written */
int verb_pause(int argc, char *argv[]) {
        return cli_usage_error("pause", "not built yet");
}
int verb_resume(int argc, char *argv[]) {
        return cli_usage_error("resume", "not built yet");
}
