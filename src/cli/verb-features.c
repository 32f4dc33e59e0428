/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "host-features.h"
#include "oci-spec-default.h"

int verb_features(int argc, char *argv[]) {
        static const CliOption options[] = { {} };
        _cleanup_json_ cJSON *features = NULL;
        _cleanup_free_ char *text = NULL;

        if (cli_next_option("features", argc, argv, "+:h", options) < 0 ||
            cli_expect_args("features", argc, argv, 0, 0, "") < 0)
                return 1;

        if (host_features_build(&features) < 0 || !(text = oci_json_format_pretty(features)))
                return log_oom(), 1;
        if (puts(text) == EOF || fflush(stdout) != 0) {
                log_error_errno(errno, "features: cannot write to standard output: %m");
                return 1;
        }
        return 0;
}
