/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Test driver for src/init/rootfs.c without the container lifecycle (root only):
 *
 *     rootfs-driver [--no-pivot] [--cgroupns] [--no-netns] [--userns] [--drop-sys-admin] BUNDLE -- CMD [ARG...]
 *
 * unshares mount, pid, uts, ipc and (unless --no-netns) net namespaces, forks the namespace's pid 1,
 * loads BUNDLE/config.json, runs rootfs_prepare() and rootfs_finish() there and execs CMD inside the
 * container's root. Exits with CMD's status (128+signal when killed), 125 when the setup failed (the
 * error on stderr). --drop-sys-admin removes CAP_SYS_ADMIN from the bounding set before exec, like the
 * default capabilities of a container. --userns tells rootfs.c that the container has its own user
 * namespace (run the driver under `unshare -U --map-root-user` for that). */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>

#include "macro.h"
#include "oci-config.h"
#include "rootfs.h"

static _noreturn_ void fail(const char *what, const char *msg) {
        fprintf(stderr, "rootfs-driver: %s: %s\n", what, msg);
        _exit(125);
}

static int exit_status(int status) {
        if (WIFEXITED(status))
                return WEXITSTATUS(status);
        if (WIFSIGNALED(status))
                return 128 + WTERMSIG(status);
        return 125;
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "no-pivot", no_argument, NULL, 'p' },
                { "cgroupns", no_argument, NULL, 'c' },
                { "no-netns", no_argument, NULL, 'n' },
                { "drop-sys-admin", no_argument, NULL, 'd' },
                { "userns", no_argument, NULL, 'u' },
                {},
        };
        bool no_pivot = false, cgroupns = false, netns = true, drop_sys_admin = false, userns = false;
        const char *bundle;
        char **cmd;
        int c, flags, status;
        pid_t pid;

        while ((c = getopt_long(argc, argv, "+", options, NULL)) >= 0)
                switch (c) {
                case 'p':
                        no_pivot = true;
                        break;
                case 'c':
                        cgroupns = true;
                        break;
                case 'n':
                        netns = false;
                        break;
                case 'd':
                        drop_sys_admin = true;
                        break;
                case 'u':
                        userns = true;
                        break;
                default:
                        return 2;
                }
        if (optind + 2 >= argc || !streq(argv[optind + 1], "--")) {
                fprintf(stderr, "usage: rootfs-driver [--no-pivot] [--cgroupns] [--no-netns] [--userns] "
                                "[--drop-sys-admin] BUNDLE -- CMD...\n");
                return 2;
        }
        bundle = argv[optind];
        cmd = argv + optind + 2;

        flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWUTS | CLONE_NEWIPC | (netns ? CLONE_NEWNET : 0) |
                (cgroupns ? CLONE_NEWCGROUP : 0);
        if (unshare(flags) < 0) {
                perror("rootfs-driver: unshare");
                return 125;
        }

        pid = fork();
        if (pid < 0) {
                perror("rootfs-driver: fork");
                return 125;
        }
        if (pid == 0) {
                _cleanup_oci_config_ OciConfig *config = NULL;
                _cleanup_free_ char *err = NULL, *root = NULL, *rootfs = NULL, *bundle_abs = NULL;
                _cleanup_close_ int bundle_fd = -EBADF;
                RootfsContext ctx;
                int r;

                bundle_abs = realpath(bundle, NULL);
                if (!bundle_abs)
                        fail(bundle, strerror(errno));
                bundle_fd = open(bundle_abs, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (bundle_fd < 0)
                        fail(bundle, strerror(errno));
                r = oci_config_load(bundle_fd, &config, &err);
                if (r < 0)
                        fail("config.json", err ?: strerror(-r));
                if (isempty(config->root_path))
                        fail("config.json", "root.path missing");
                if (asprintf(&root, "%s/%s", bundle_abs, config->root_path) < 0)
                        fail("asprintf", strerror(ENOMEM));
                rootfs = realpath(config->root_path[0] == '/' ? config->root_path : root, NULL);
                if (!rootfs)
                        fail("root.path", strerror(errno));

                ctx = (RootfsContext) {
                        .config = config,
                        .rootfs = rootfs,
                        .no_pivot = no_pivot,
                        .new_userns = userns,
                        .own_cgroupns = cgroupns,
                        .own_mountns = true, /* the driver unshares one */
                        .new_netns = netns,
                        .bundle = bundle_abs,
                };
                r = rootfs_prepare(&ctx, &err);
                if (r < 0)
                        fail("rootfs_prepare", err ?: strerror(-r));
                r = rootfs_finish(&ctx, &err);
                if (r < 0)
                        fail("rootfs_finish", err ?: strerror(-r));

                if (drop_sys_admin && prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0) < 0)
                        fail("PR_CAPBSET_DROP", strerror(errno));
                setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 1);
                execvp(cmd[0], cmd);
                fprintf(stderr, "rootfs-driver: exec %s: %m\n", cmd[0]);
                _exit(127);
        }

        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR) {
                        perror("rootfs-driver: waitpid");
                        return 125;
                }
        return exit_status(status);
}
