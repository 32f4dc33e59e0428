/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "oci-config.h"

/* `sdrun features`: the features document of src/oci/oci-features.c, with what only the runtime can probe
 * (the host's LSMs, CRIU) filled in. Returns 0 or -ENOMEM. */
int host_features_build(cJSON **ret);

/* The LSMs this kernel has enabled (for process.apparmorProfile, process.selinuxLabel, linux.mountLabel
 * and `features`). */
bool host_apparmor_enabled(void);
bool host_selinux_enabled(void);
/* A requested profile or label the host cannot apply is an error naming the field (as runc): p (the process)
 * and l (linux.mountLabel) may each be NULL. Runs in the runtime before anything is created. */
int host_check_lsm(const OciProcess *p, const OciLinux *l, char **reterr);
