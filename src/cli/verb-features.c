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
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                {}
        };
        _cleanup_json_ cJSON *features = NULL;
        _cleanup_free_ char *text = NULL;
        int c;

        while ((c = getopt_long(argc, argv, "+:h", options, NULL)) >= 0)
                return cli_bad_option_precise("features", c, argv);
        if (cli_expect_args("features", argc, argv, 0, 0, "") < 0)
                return 1;

        if (host_features_build(&features) < 0) {
                log_oom();
                return 1;
        }
        text = oci_json_format_pretty(features);
        if (!text) {
                log_oom();
                return 1;
        }
        if (puts(text) == EOF || fflush(stdout) != 0) {
                log_error_errno(errno, "features: cannot write to standard output: %m");
                return 1;
        }
        return 0;
}
