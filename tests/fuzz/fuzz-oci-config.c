/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: config.json and process.json parsing must never crash, leak or hang, whatever the
 * input. Built with -Dfuzz=true (clang); fuzz-replay.c runs the corpus in the unit suite. */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "oci-config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        OciConfig *c = NULL;
        OciProcess *p = NULL;
        char *err = NULL;

        if (oci_config_parse((const char *) data, size, &c, &err) >= 0) {
                /* Exercise the look-ups on whatever parsed. */
                (void) oci_config_annotation(c, "org.opencontainers.image.stopSignal");
                (void) oci_config_has_namespace(c, OCI_NS_USER, NULL);
                oci_config_free(c);
        }
        free(err);
        err = NULL;

        if (oci_process_parse((const char *) data, size, &p, &err) >= 0)
                oci_process_free(p);
        free(err);
        return 0;
}
