/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "container.h"
#include "json-util.h"
#include "macro.h"
#include "oci-spec-default.h"

int verb_state(int argc, char *argv[]) {
        _cleanup_json_ cJSON *j = NULL;
        _cleanup_free_ char *err = NULL, *s = NULL;
        const char *id;
        int r;

        if (cli_parse_id_only("state", argc, argv, &id) < 0)
                return EXIT_FAILURE;
        r = container_state(arg_root, id, &j, &err);
        if (r < 0 && err) /* the state could not be loaded; without a message, building it failed */
                return cli_runtime_error("state", id, r, err);
        if (r < 0 || !(s = oci_json_format_pretty(j))) {
                log_oom();
                return EXIT_FAILURE;
        }
        fputs(s, stdout);
        if (!*s || s[strlen(s) - 1] != '\n')
                fputc('\n', stdout);
        return EXIT_SUCCESS;
}
