/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* --keep-unit: the container lives in the service sdrun runs in (nspawn's --keep-unit), not in a scope of
 * its own. The service must have Delegate=yes; sdrun moves itself to SERVICE/supervisor and the init is born
 * in SERVICE/payload, so that the service's cgroup holds no process of its own (cgroup v2's rule for a
 * cgroup that hands controllers down). The service's own settings (MemoryMax=, CPUQuota=, ...) limit the
 * whole service, the container included; linux.resources of config.json are written to the payload's
 * files, a limit inside the service's that systemctl does not show as the service's. */

#include <stdbool.h>

#include "cgroup-props.h"
#include "sdunit.h"

#define KEEP_UNIT_SUPERVISOR "supervisor"
#define KEEP_UNIT_PAYLOAD "payload"

typedef struct KeepUnit {
        char *unit;      /* "sdrun@web.service" */
        char *cgroup;    /* its ControlGroup */
        char *payload;   /* cgroup + "/payload": the container's */
        char **dirs;     /* the service's directory in every hierarchy we are in it */
        bool in_payload; /* this process is in the payload (between keep_unit_enter and _leave) */
        bool made;       /* the payload exists: removed on failure */
} KeepUnit;

/* The service this process runs in, checked: a service (not a scope or the manager), Delegate=yes, and
 * this process at the root of its cgroup (its ExecStart=). Errors say what to do instead. */
int keep_unit_find(SdUnitBus *bus, CgroupLayout layout, KeepUnit *ret, char **reterr);

/* Move this process to SERVICE/supervisor, hand the service's controllers down, make SERVICE/payload with
 * linux.resources (props: what cgroup_props_from_resources() gave, as files; writes: as they are) written
 * to its files, and move this process into it: the init cloned next is born there. */
int keep_unit_enter(KeepUnit *k, CgroupLayout layout, const UnitPropertyList *props,
                    const CgroupFileWrites *writes, char **reterr);
/* This process back to SERVICE/supervisor (after the clone, or on failure). */
int keep_unit_leave(KeepUnit *k, char **reterr);
/* Kill what is left in the payload cgroup (a path as in ControlGroup=) and remove it in every hierarchy. */
void keep_unit_remove_payload(const char *payload_cgroup);

void keep_unit_done(KeepUnit *k);

/* The unit property list as cgroup files (the --keep-unit mode has no unit of its own to set them on):
 * unit-tested. Properties that only a scope of its own has (TimeoutStopUSec, *Accounting, the device
 * policy, which the service's DevicePolicy=/DeviceAllow= give) are skipped; one with no file is refused. */
int keep_unit_props_to_writes(const UnitPropertyList *props, CgroupLayout layout, const char *unit,
                              CgroupFileWrites *w, char **reterr);
