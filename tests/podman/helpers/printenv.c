/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* printenv for the look-alike of Podman's test image (tests/podman/test-podman-system.sh), static: the whole
 * environment, or the value of each name given (exit 1 if one is not set). A shell script cannot stand in:
 * busybox's sh sets a PATH when it has none, and `podman run --unsetenv-all` checks that there is none. */
#include <stdio.h>
#include <stdlib.h>

extern char **environ;

int main(int argc, char **argv) {
        int rc = 0;

        if (argc < 2)
                for (char **e = environ; *e; e++)
                        puts(*e);
        for (int i = 1; i < argc; i++) {
                const char *v = getenv(argv[i]);
                if (v)
                        puts(v);
                else
                        rc = 1;
        }
        return rc;
}
