/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cgroup-util.h"
#include "cli.h"
#include "fileio.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "oci-spec-default.h"

int verb_spec(int argc, char *argv[]) {
        enum {
                ARG_ROOTLESS = 0x100,
        };
        _cleanup_json_ cJSON *spec = NULL;
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int dir_fd = -EBADF, fd = -EBADF;
        const char *bundle = ".";
        bool rootless = false;
        const CliOption options[] = {
                { "bundle", required_argument, 'b' },
                { "rootless", no_argument, ARG_ROOTLESS, .flag = &rootless },
                {},
        };
        int c, r;

        while ((c = cli_next_option("spec", argc, argv, "+:b:h", options)) > 0) {
                if (isempty(optarg))
                        return cli_usage_error("spec", "--bundle: empty directory name");
                bundle = optarg;
        }
        if (c < 0 || cli_expect_args("spec", argc, argv, 0, 0, "") < 0)
                return 1;

        /* A cgroup namespace where the host is cgroup v2 only, as runc and crun write it. */
        CgroupLayout layout;
        bool cgroupns = cgroup_detect_layout(&layout) >= 0 && layout == CGROUP_LAYOUT_UNIFIED;
        if (oci_spec_default(rootless, cgroupns, &spec) < 0 || !(text = oci_json_format_pretty(spec)))
                return log_oom(), 1;

        dir_fd = open(bundle, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0) {
                log_error_errno(errno, "spec: cannot open bundle directory \"%s\": %m", bundle);
                return 1;
        }
        /* Like runc: never overwrite; O_EXCL makes the check and the creation one step. */
        fd = openat(dir_fd, "config.json", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0666);
        if (fd < 0) {
                if (errno == EEXIST)
                        log_error("spec: File config.json exists in \"%s\". Remove it first.", bundle);
                else
                        log_error_errno(errno, "spec: cannot create \"%s/config.json\": %m", bundle);
                return 1;
        }
        r = loop_write(fd, text, strlen(text));
        if (r >= 0)
                r = loop_write(fd, "\n", 1);
        if (r >= 0 && close(TAKE_FD(fd)) < 0)
                r = -errno;
        if (r < 0) {
                log_error_errno(r, "spec: cannot write \"%s/config.json\": %m", bundle);
                (void) unlinkat(dir_fd, "config.json", 0);
                return 1;
        }
        return 0;
}
