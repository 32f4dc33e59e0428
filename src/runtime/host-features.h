/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <cjson/cJSON.h>

/* `sdrun features`: the features document of src/oci/oci-features.c, with what only the runtime can probe
 * (the host's LSMs, CRIU) filled in. Returns 0 or -ENOMEM. */
int host_features_build(cJSON **ret);
