/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A measurement probe for issue 31 (bench/README.md, "Static container side"): the container side (src/init,
 * src/oci, src/basic) linked as one static program, to learn its size and what executing a sealed memfd copy
 * of it costs, before the init is converted to run that way. It links init_main() and exec_child_main() with
 * all they call, and exits at once without running them; with "--parse FILE" it first parses FILE as a
 * config.json (what a static init would do with the bytes the runtime passes it). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec-child.h"
#include "init.h"
#include "oci-config.h"

/* Kept reachable so that --gc-sections leaves the whole container side in the image. */
void *const volatile static_probe_keep[] = { (void *) init_main, (void *) exec_child_main };

int main(int argc, char *argv[]) {
        if (argc > 2 && strcmp(argv[1], "--parse") == 0) {
                static char buf[1 << 20];
                OciConfig *c = NULL;
                char *err = NULL;
                ssize_t n;
                int fd;

                fd = open(argv[2], O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        return 1;
                n = read(fd, buf, sizeof buf - 1);
                if (n < 0 || oci_config_parse(buf, (size_t) n, &c, &err) < 0)
                        return 1;
                oci_config_free(c);
                return 0;
        }
        if (argc > 1 && !static_probe_keep[0])
                abort();
        return 0;
}
