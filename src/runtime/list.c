/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "container.h"
#include "error-util.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"

/* runc's state output: the OCI state plus rootfs, created and owner; "paused" as runc reports it. */
int container_state_json(Container *ct, ContainerStatus st, cJSON **ret) {
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

int container_state(const char *root, const char *id, cJSON **ret, char **reterr) {
        _cleanup_(container_freep) Container *ct = NULL;
        int r;

        r = container_load(root, id, CONTAINER_LOCK_NONE, &ct, reterr);
        if (r < 0)
                return r;
        return container_state_json(ct, container_status(ct), ret);
}

void container_list_done(ContainerList *l) {
        for (size_t i = 0; i < l->n; i++)
                container_freep(&l->entries[i].ct);
        free(l->entries);
        *l = (ContainerList){};
}

int container_list(const char *root, ContainerList *ret, char **reterr) {
        _cleanup_(container_list_done) ContainerList l = {};
        char **ids = NULL;
        size_t n = 0;
        int r;

        r = container_list_ids(root, &ids, &n, reterr);
        if (r < 0)
                return r;
        l.entries = n > 0 ? calloc(n, sizeof *l.entries) : NULL;
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *e = NULL;
                Container *ct = NULL;
                if (!l.entries)
                        break;
                r = container_load_salvage(root, ids[i], CONTAINER_LOCK_NONE, &ct, &e);
                /* Not ours alone, or written by a newer sdrun: left out, and said so. */
                if (r == -EPERM || r == -EPROTONOSUPPORT)
                        log_warning("list: %s", e);
                if (r < 0)
                        continue; /* deleted meanwhile */
                ContainerListEntry *x = &l.entries[l.n++];
                x->ct = ct;
                x->status = ct->corrupt ? CONTAINER_STOPPED : container_status(ct);
                x->pid = !ct->corrupt && (x->status == CONTAINER_CREATED || x->status == CONTAINER_RUNNING ||
                                          x->status == CONTAINER_PAUSED)
                                 ? ct->pid
                                 : 0;
        }
        for (size_t i = 0; i < n; i++)
                free(ids[i]);
        free(ids);
        if (n > 0 && !l.entries)
                return -ENOMEM;
        *ret = l;
        l = (ContainerList){};
        return 0;
}

/* A container as runc's `list --format json` gives it: its fields in runc's order (ociVersion, id, pid,
 * status, bundle, rootfs, created, annotations, owner; then sdrun's systemdUnit), and pid 0 when there is
 * no process, as runc writes it. */
static int list_entry_json(const ContainerListEntry *x, cJSON **ret) {
        static const char *const order[] = {
                "ociVersion", "id",      "pid",         "status", "bundle",
                "rootfs",     "created", "annotations", "owner",  "systemdUnit"
        };
        _cleanup_json_ cJSON *j = NULL, *o = NULL;
        int r;

        if (x->ct->corrupt) {
                /* Listed with its problem, never silently left out: `delete --force` removes it. */
                o = cJSON_CreateObject();
                if (!o || !cJSON_AddStringToObject(o, "id", x->ct->id) ||
                    !cJSON_AddNumberToObject(o, "pid", 0) ||
                    !cJSON_AddStringToObject(o, "status", "unknown") ||
                    !cJSON_AddStringToObject(o, "error", "state.json is corrupt"))
                        return -ENOMEM;
                *ret = TAKE_PTR(o);
                return 0;
        }
        r = container_state_json(x->ct, x->status, &j);
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

int container_list_json(const ContainerList *l, cJSON **ret) {
        _cleanup_json_ cJSON *arr = cJSON_CreateArray();
        if (!arr)
                return -ENOMEM;
        for (size_t i = 0; i < l->n; i++) {
                cJSON *j = NULL;
                int r = list_entry_json(&l->entries[i], &j);
                if (r < 0)
                        return r;
                if (!cJSON_AddItemToArray(arr, j)) {
                        cJSON_Delete(j);
                        return -ENOMEM;
                }
        }
        *ret = TAKE_PTR(arr);
        return 0;
}
