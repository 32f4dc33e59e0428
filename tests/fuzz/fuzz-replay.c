/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Runs every file of a fuzzer corpus directory (argv[1]) through LLVMFuzzerTestOneInput(), one TAP line
 * per file, so that the corpus is a regression test in the normal unit suite (and under ASan/UBSan). */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "macro.h"
#include "tap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int cmp_names(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

int main(int argc, char *argv[]) {
        _cleanup_close_ int dfd = -EBADF;
        char **names = NULL;
        size_t n = 0;
        DIR *d;

        if (argc != 2) {
                fprintf(stderr, "usage: %s CORPUS-DIR\n", argv[0]);
                return EXIT_FAILURE;
        }

        dfd = open(argv[1], O_DIRECTORY | O_RDONLY | O_CLOEXEC);
        d = dfd >= 0 ? fdopendir(dup(dfd)) : NULL;
        if (!tap_ok(d != NULL, "open corpus %s", argv[1]))
                return tap_done();

        for (struct dirent *de; (de = readdir(d));) {
                if (de->d_name[0] == '.')
                        continue;
                char **nn = realloc(names, (n + 1) * sizeof(char *));
                if (!nn || !(nn[n] = strdup(de->d_name))) {
                        fprintf(stderr, "out of memory\n");
                        return EXIT_FAILURE;
                }
                names = nn;
                n++;
        }
        closedir(d);
        qsort(names, n, sizeof(char *), cmp_names);

        tap_ok(n > 0, "corpus has %zu files", n);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *buf = NULL;
                size_t size = 0;
                int r;

                r = read_full_file_at(dfd, names[i], 16 * 1024 * 1024, &buf, &size);
                if (tap_ok(r >= 0, "replay %s (%zu bytes)", names[i], size))
                        (void) LLVMFuzzerTestOneInput((const uint8_t *) buf, size);
                free(names[i]);
        }
        free(names);
        return tap_done();
}
