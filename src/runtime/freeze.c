/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "cgroup-props.h"
#include "cgroup-util.h"
#include "container-ops.h"
#include "error-util.h"
#include "log.h"
#include "macro.h"
#include "sdunit.h"
#include "state.h"

#define FREEZE_TIMEOUT_USEC (10 * USEC_PER_SEC)

/* pause/resume go through systemd (FreezeUnit/ThawUnit) so the unit's FreezerState is right; where systemd
 * cannot freeze (systemd 252 on a hybrid layout answers NotSupported) the cgroup v2 freezer of the unit's
 * cgroup on the unified hierarchy does it directly. */
static int container_freeze(const char *root, const char *id, bool freeze, char **reterr) {
        const char *verb = freeze ? "pause" : "resume";
        _cleanup_(container_freep) Container *ct = NULL;
        _cleanup_(sdunit_bus_closep) SdUnitBus *bus = NULL;
        ContainerStatus st;
        CgroupLayout layout;
        int r;

        r = container_load_status(root, id, CONTAINER_LOCK_EXCLUSIVE, &ct, &st, reterr);
        if (r < 0)
                return r;
        if (freeze && st != CONTAINER_RUNNING)
                return errorf(reterr, EINVAL, "container not running (%s)", container_status_to_string(st));
        if (!freeze && st != CONTAINER_PAUSED)
                return errorf(reterr, EINVAL, "container not paused (%s)", container_status_to_string(st));
        if (!ct->cgroup)
                return errorf(reterr, EINVAL, "the container has no cgroup");

        /* --keep-unit: no unit of its own (freezing the service would freeze sdrun with it): the freezer of
         * its cgroup below the service. */
        if (!ct->unit)
                r = -EOPNOTSUPP;
        else {
                r = sdunit_bus_open(ct->user_bus, &bus, reterr);
                if (r >= 0)
                        r = freeze ? sdunit_freeze_unit(bus, ct->unit, reterr)
                                   : sdunit_thaw_unit(bus, ct->unit, reterr);
        }
        if (r == -EOPNOTSUPP) {
                log_debug("%s %s: systemd cannot %s %s here, using the cgroup freezer directly", verb, id,
                          freeze ? "freeze" : "thaw", strna(ct->unit));
                if (reterr)
                        free(*reterr), *reterr = NULL;
                r = cgroup_detect_layout(&layout);
                if (r >= 0)
                        r = cgroup_freeze(ct->cgroup, layout, freeze, FREEZE_TIMEOUT_USEC, reterr);
        }
        return r;
}

int container_pause(const char *root, const char *id, char **reterr) {
        return container_freeze(root, id, true, reterr);
}

int container_resume(const char *root, const char *id, char **reterr) {
        return container_freeze(root, id, false, reterr);
}
