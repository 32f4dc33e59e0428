/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "macro.h"
#include "oci-spec-default.h"
#include "state.h"

/* A container as runc's `list --format json` gives it: its fields in runc's order (ociVersion, id, pid,
 * status, bundle, rootfs, created, annotations, owner; then sdrun's systemdUnit), and pid 0 when there is
 * no process, as runc writes it. */
static int list_entry_json(Container *ct, ContainerStatus st, cJSON **ret) {
        static const char *const order[] = {
                "ociVersion", "id",      "pid",         "status", "bundle",
                "rootfs",     "created", "annotations", "owner",  "systemdUnit"
        };
        _cleanup_json_ cJSON *j = NULL, *o = NULL;
        int r;

        r = cli_container_json(ct, st, &j);
        if (r < 0)
                return r;
        if (!cJSON_GetObjectItemCaseSensitive(j, "pid") && !cJSON_AddNumberToObject(j, "pid", 0))
                return -ENOMEM;
        o = cJSON_CreateObject();
        if (!o)
                return -ENOMEM;
        FOREACH_ARRAY(k, order, ELEMENTSOF(order)) {
                cJSON *item = cJSON_DetachItemFromObjectCaseSensitive(j, *k);
                if (item)
                        cJSON_AddItemToObject(o, *k, item);
        }
        /* whatever else the state has, after those */
        for (cJSON *item; (item = j->child);) {
                char *name = item->string;
                cJSON_DetachItemViaPointer(j, item);
                item->string = NULL;
                cJSON_AddItemToObject(o, name, item);
                free(name);
        }
        *ret = TAKE_PTR(o);
        return 0;
}

int verb_list(int argc, char *argv[]) {
        bool quiet = false, json = false;
        const CliOption options[] = {
                { "quiet", no_argument, 'q', .flag = &quiet },
                { "format", required_argument, 'f' },
                {},
        };
        _cleanup_free_ char *err = NULL;
        char **ids = NULL;
        size_t n = 0;
        int c, r;

        while ((c = cli_next_option("list", argc, argv, "qf:h", options)) > 0)
                if (cli_parse_format("list", optarg, &json) < 0)
                        return EXIT_FAILURE;
        if (c < 0 || cli_expect_args("list", argc, argv, 0, 0, "") < 0)
                return EXIT_FAILURE;

        r = container_list_ids(arg_root, &ids, &n, &err);
        if (r < 0) {
                log_error_errno(r, "list: %s", err ?: strerror(-r));
                return EXIT_FAILURE;
        }

        _cleanup_json_ cJSON *arr = json ? cJSON_CreateArray() : NULL;
        if (!quiet && !json)
                printf("%-12s %-10s %-10s %-40s %-30s %s\n", "ID", "PID", "STATUS", "BUNDLE", "CREATED",
                       "OWNER");
        for (size_t i = 0; i < n; i++) {
                _cleanup_(container_freep) Container *ct = NULL;
                _cleanup_free_ char *e = NULL;
                r = container_load_salvage(arg_root, ids[i], CONTAINER_LOCK_NONE, &ct, &e);
                /* Not ours alone, or written by a newer sdrun: left out, and said so. */
                if (r == -EPERM || r == -EPROTONOSUPPORT)
                        log_warning("list: %s", e);
                if (r < 0)
                        continue; /* deleted meanwhile */
                if (ct->corrupt) {
                        /* Listed with its problem, never silently left out: `delete --force` removes it. */
                        if (quiet)
                                printf("%s\n", ct->id);
                        else if (json) {
                                cJSON *j = cJSON_CreateObject();
                                if (!j || !cJSON_AddItemToArray(arr, j) ||
                                    !cJSON_AddStringToObject(j, "id", ct->id) ||
                                    !cJSON_AddNumberToObject(j, "pid", 0) ||
                                    !cJSON_AddStringToObject(j, "status", "unknown") ||
                                    !cJSON_AddStringToObject(j, "error", "state.json is corrupt")) {
                                        log_oom();
                                        break;
                                }
                        } else
                                printf("%-12s %-10d %-10s %-40s %-30s %s\n", ct->id, 0, "unknown",
                                       "(state.json is corrupt)", "", "");
                        continue;
                }
                ContainerStatus st = container_status(ct);
                if (quiet)
                        printf("%s\n", ct->id);
                else if (json) {
                        cJSON *j = NULL;
                        if (list_entry_json(ct, st, &j) < 0 || !cJSON_AddItemToArray(arr, j)) {
                                cJSON_Delete(j);
                                log_oom();
                                break;
                        }
                } else {
                        bool has_pid =
                                st == CONTAINER_CREATED || st == CONTAINER_RUNNING || st == CONTAINER_PAUSED;
                        printf("%-12s %-10d %-10s %-40s %-30s %s\n", ct->id, has_pid ? (int) ct->pid : 0,
                               container_status_to_string(st), strempty(ct->bundle), strempty(ct->created),
                               strempty(ct->owner));
                }
        }
        if (json) {
                /* One line, as runc's encoder writes it (runc's list.bats matches the line). */
                _cleanup_free_ char *s = cJSON_PrintUnformatted(arr);
                if (s)
                        printf("%s\n", s);
        }
        for (size_t i = 0; i < n; i++)
                free(ids[i]);
        free(ids);
        return EXIT_SUCCESS;
}
