/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup-props.h"
#include "cgroup-util.h"
#include "cli.h"
#include "macro.h"
#include "sdunit.h"
#include "state.h"

#define FREEZE_TIMEOUT_USEC (10 * USEC_PER_SEC)

/* pause/resume go through systemd (FreezeUnit/ThawUnit) so the unit's FreezerState is right; where systemd
 * cannot freeze (systemd 252 on a hybrid layout answers NotSupported) the cgroup v2 freezer of the unit's
 * cgroup on the unified hierarchy does it directly. */
static int do_freeze(const char *verb, bool freeze, int argc, char *argv[]) {
        _cleanup_(container_freep) Container *ct = NULL;
        _cleanup_(sdunit_bus_closep) SdUnitBus *bus = NULL;
        _cleanup_free_ char *err = NULL;
        ContainerStatus st;
        CgroupLayout layout;
        const char *id;
        int r;

        if (cli_parse_id_only(verb, argc, argv, &id) < 0)
                return EXIT_FAILURE;
        log_set_context(id, NULL);
        r = container_load(arg_root, id, CONTAINER_LOCK_EXCLUSIVE, &ct, &err);
        if (r < 0) {
                log_error_errno(r, "%s %s: %s", verb, id, err ?: strerror(-r));
                return EXIT_FAILURE;
        }
        st = container_status(ct);
        if (freeze && st != CONTAINER_RUNNING) {
                log_error("pause %s: container not running (%s)", id, container_status_to_string(st));
                return EXIT_FAILURE;
        }
        if (!freeze && st != CONTAINER_PAUSED) {
                log_error("resume %s: container not paused (%s)", id, container_status_to_string(st));
                return EXIT_FAILURE;
        }
        if (!ct->unit || !ct->cgroup) {
                log_error("%s %s: the container has no systemd unit", verb, id);
                return EXIT_FAILURE;
        }

        r = sdunit_bus_open(ct->user_bus, &bus, &err);
        if (r >= 0)
                r = freeze ? sdunit_freeze_unit(bus, ct->unit, &err) : sdunit_thaw_unit(bus, ct->unit, &err);
        if (r == -EOPNOTSUPP) {
                log_debug("%s %s: systemd cannot %s %s here, using the cgroup freezer directly", verb, id,
                          freeze ? "freeze" : "thaw", ct->unit);
                free(err);
                err = NULL;
                r = cgroup_detect_layout(&layout);
                if (r >= 0)
                        r = cgroup_freeze(ct->cgroup, layout, freeze, FREEZE_TIMEOUT_USEC, &err);
        }
        if (r < 0) {
                log_error_errno(r, "%s %s: %s", verb, id, err ?: strerror(-r));
                return EXIT_FAILURE;
        }
        return EXIT_SUCCESS;
}

int verb_pause(int argc, char *argv[]) {
        return do_freeze("pause", true, argc, argv);
}

int verb_resume(int argc, char *argv[]) {
        return do_freeze("resume", false, argc, argv);
}
