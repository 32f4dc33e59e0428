/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "macro.h"
#include "oci-spec-default.h"
#include "state.h"

/* runc's state output: the OCI state plus rootfs, created and owner; "paused" as runc reports it. */
int cli_container_json(Container *ct, ContainerStatus st, cJSON **ret) {
        _cleanup_json_ cJSON *j = NULL;
        int r;

        r = container_oci_state(ct, st, &j);
        if (r < 0)
                return r;
        if ((ct->rootfs && !cJSON_AddStringToObject(j, "rootfs", ct->rootfs)) ||
            (ct->created && !cJSON_AddStringToObject(j, "created", ct->created)) ||
            (ct->owner && !cJSON_AddStringToObject(j, "owner", ct->owner)) ||
            (ct->unit && !cJSON_AddStringToObject(j, "systemdUnit", ct->unit)))
                return -ENOMEM;
        *ret = TAKE_PTR(j);
        return 0;
}

int verb_state(int argc, char *argv[]) {
        _cleanup_(container_freep) Container *ct = NULL;
        _cleanup_json_ cJSON *j = NULL;
        _cleanup_free_ char *err = NULL, *s = NULL;
        const char *id;
        int r;

        if (cli_parse_id_only("state", argc, argv, &id) < 0)
                return EXIT_FAILURE;
        r = container_load(arg_root, id, CONTAINER_LOCK_NONE, &ct, &err);
        if (r < 0)
                return cli_runtime_error("state", id, r, err);
        r = cli_container_json(ct, container_status(ct), &j);
        if (r < 0 || !(s = oci_json_format_pretty(j))) {
                log_oom();
                return EXIT_FAILURE;
        }
        fputs(s, stdout);
        if (!*s || s[strlen(s) - 1] != '\n')
                fputc('\n', stdout);
        return EXIT_SUCCESS;
}
