/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup-util.h"
#include "cli.h"
#include "fileio.h"
#include "macro.h"
#include "state.h"

static pid_t *ps_pids;
static size_t ps_n_pids;

static int collect_procs(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        _cleanup_free_ char *file = NULL, *buf = NULL;

        if (type != FTW_D)
                return 0;
        /* The scope and everything below it (a container may nest cgroups in its delegated subtree). */
        if (asprintf(&file, "%s/cgroup.procs", path) < 0)
                return -ENOMEM;
        if (read_full_file_at(AT_FDCWD, file, 4U << 20, &buf, NULL) < 0)
                return 0;
        for (char *p = buf, *end; *p; p = end) {
                long v = strtol(p, &end, 10);
                if (end == p)
                        break;
                pid_t *np = realloc(ps_pids, (ps_n_pids + 1) * sizeof *ps_pids);
                if (!np)
                        return -ENOMEM;
                ps_pids = np;
                ps_pids[ps_n_pids++] = (pid_t) v;
        }
        return 0;
}

static int read_pids(const char *cgroup, pid_t **ret, size_t *ret_n) {
        _cleanup_free_ char *dir = NULL;
        int r;

        r = cgroup_unified_dir(cgroup, &dir);
        if (r < 0)
                return r;
        r = nftw(dir, collect_procs, 16, FTW_PHYS);
        if (r != 0) {
                free(ps_pids);
                ps_pids = NULL;
                ps_n_pids = 0;
                return r < 0 ? -ENOMEM : -EIO;
        }
        *ret = TAKE_PTR(ps_pids);
        *ret_n = ps_n_pids;
        return 0;
}

int verb_ps(int argc, char *argv[]) {
        static const struct option options[] = {
                { "format", required_argument, NULL, 'f' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        _cleanup_(container_freep) Container *ct = NULL;
        _cleanup_free_ char *err = NULL;
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;
        bool json = false;
        int c, r;

        while ((c = getopt_long(argc, argv, "+f:h", options, NULL)) >= 0) {
                switch (c) {
                case 'f':
                        if (cli_parse_format("ps", optarg, &json) < 0)
                                return EXIT_FAILURE;
                        break;
                case 'h':
                        cli_print_verb_help("ps");
                        return EXIT_SUCCESS;
                default:
                        return cli_usage_error("ps", "unknown or incomplete option \"%s\"", argv[optind - 1]);
                }
        }
        if (cli_expect_args("ps", argc, argv, 1, -1, "container id") < 0)
                return EXIT_FAILURE;
        const char *id = argv[optind];
        r = container_load(arg_root, id, CONTAINER_LOCK_NONE, &ct, &err);
        if (r < 0) {
                log_error_errno(r, "ps %s: %s", id, err ?: strerror(-r));
                return EXIT_FAILURE;
        }
        /* A stopped container has no processes: an empty list, and for the table only ps's header (as runc). */
        bool stopped = container_status(ct) == CONTAINER_STOPPED || isempty(ct->cgroup);
        if (stopped && json) {
                printf("[]\n");
                return EXIT_SUCCESS;
        }
        r = stopped ? 0 : read_pids(ct->cgroup, &pids, &n);
        if (r < 0) {
                log_error_errno(r, "ps %s: read the processes of %s: %m", id, ct->cgroup);
                return EXIT_FAILURE;
        }
        if (json) {
                printf("[");
                for (size_t i = 0; i < n; i++)
                        printf("%s%d", i ? "," : "", (int) pids[i]);
                printf("]\n");
                return EXIT_SUCCESS;
        }

        /* Table: ps(1) with the given arguments (default -ef), rows filtered to the container's pids. */
        int nps = argc - optind - 1;
        char **psargv = calloc((size_t) nps + 3, sizeof *psargv);
        if (!psargv)
                return log_oom(), EXIT_FAILURE;
        psargv[0] = (char *) "ps";
        if (nps == 0)
                psargv[1] = (char *) "-ef";
        for (int i = 0; i < nps; i++)
                psargv[i + 1] = argv[optind + 1 + i];
        int pfd[2];
        if (pipe2(pfd, O_CLOEXEC) < 0) {
                log_error("ps %s: pipe: %s", id, strerror(errno));
                free(psargv);
                return EXIT_FAILURE;
        }
        pid_t child = fork();
        if (child < 0) {
                int k = errno;
                free(psargv);
                safe_close(pfd[0]);
                safe_close(pfd[1]);
                log_error("ps %s: fork: %s", id, strerror(k));
                return EXIT_FAILURE;
        }
        if (child == 0) {
                dup2(pfd[1], STDOUT_FILENO);
                execvp("ps", psargv);
                _exit(127);
        }
        free(psargv);
        close(pfd[1]);
        FILE *f = fdopen(pfd[0], "r");
        char line[8192];
        int pid_col = -1;
        bool header = true;
        while (f && fgets(line, sizeof line, f)) {
                if (header) {
                        /* Find the PID column in the header. */
                        char copy[sizeof line];
                        strcpy(copy, line);
                        int col = 0;
                        for (char *tok = strtok(copy, " \t\n"); tok; tok = strtok(NULL, " \t\n"), col++)
                                if (streq(tok, "PID"))
                                        pid_col = col;
                        fputs(line, stdout);
                        header = false;
                        if (pid_col < 0) {
                                log_error("ps %s: no PID column in the output of ps", id);
                                break;
                        }
                        continue;
                }
                char copy[sizeof line];
                strcpy(copy, line);
                int col = 0;
                for (char *tok = strtok(copy, " \t\n"); tok; tok = strtok(NULL, " \t\n"), col++)
                        if (col == pid_col) {
                                int p = atoi(tok);
                                for (size_t i = 0; i < n; i++)
                                        if (pids[i] == p) {
                                                fputs(line, stdout);
                                                break;
                                        }
                                break;
                        }
        }
        if (f)
                fclose(f);
        int status = 0;
        (void) waitpid(child, &status, 0);
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 && pid_col >= 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
