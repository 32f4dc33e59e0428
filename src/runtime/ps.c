/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup-util.h"
#include "container-ops.h"
#include "error-util.h"
#include "fileio.h"
#include "macro.h"
#include "state.h"

/* nftw() passes no user data: the walk of one read_pids() call collects here. */
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
        ps_n_pids = 0;
        return 0;
}

int container_pids(const char *root, const char *id, pid_t **ret, size_t *ret_n, char **reterr) {
        _cleanup_(container_freep) Container *ct = NULL;
        int r;

        r = container_load(root, id, CONTAINER_LOCK_NONE, &ct, reterr);
        if (r < 0)
                return r;
        /* A stopped container has no processes. */
        if (container_status(ct) == CONTAINER_STOPPED || isempty(ct->cgroup)) {
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        r = read_pids(ct->cgroup, ret, ret_n);
        if (r < 0)
                return errorf(reterr, r, "read the processes of %s: %s", ct->cgroup, strerror(-r));
        return 0;
}

/* The column of the word "PID" in ps's header line, or -1. */
static int pid_column(const char *header) {
        _cleanup_free_ char *copy = strdup(header);
        int col = 0, found = -1;

        if (!copy)
                return -1;
        for (char *save, *tok = strtok_r(copy, " \t\n", &save); tok;
             tok = strtok_r(NULL, " \t\n", &save), col++)
                if (streq(tok, "PID"))
                        found = col;
        return found;
}

static bool row_has_pid(const char *line, int pid_col, const pid_t *pids, size_t n) {
        _cleanup_free_ char *copy = strdup(line);
        int col = 0;

        if (!copy)
                return false;
        for (char *save, *tok = strtok_r(copy, " \t\n", &save); tok;
             tok = strtok_r(NULL, " \t\n", &save), col++)
                if (col == pid_col) {
                        int p = atoi(tok);
                        for (size_t i = 0; i < n; i++)
                                if (pids[i] == p)
                                        return true;
                        return false;
                }
        return false;
}

int ps_table_write(char *const *args, const pid_t *pids, size_t n, FILE *out, char **reterr) {
        _cleanup_free_ char **psargv = NULL;
        size_t nps = 0;
        int pfd[2], r = 0;

        while (args && args[nps])
                nps++;
        psargv = calloc(nps + 3, sizeof *psargv);
        if (!psargv)
                return -ENOMEM;
        psargv[0] = (char *) "ps";
        if (nps == 0)
                psargv[1] = (char *) "-ef";
        for (size_t i = 0; i < nps; i++)
                psargv[i + 1] = args[i];

        /* Table: ps(1) with the given arguments, rows filtered to the container's pids. */
        if (pipe2(pfd, O_CLOEXEC) < 0)
                return errorf(reterr, errno, "pipe: %s", strerror(errno));
        fflush(out);
        pid_t child = fork();
        if (child < 0) {
                int k = errno;
                safe_close(pfd[0]);
                safe_close(pfd[1]);
                return errorf(reterr, k, "fork: %s", strerror(k));
        }
        if (child == 0) {
                dup2(pfd[1], STDOUT_FILENO);
                execvp("ps", psargv);
                _exit(127);
        }
        safe_close(pfd[1]);

        FILE *f = fdopen(pfd[0], "r");
        char line[8192];
        int pid_col = -1;
        bool header = true;
        if (!f)
                safe_close(pfd[0]);
        while (f && fgets(line, sizeof line, f)) {
                if (header) {
                        pid_col = pid_column(line);
                        fputs(line, out);
                        header = false;
                        if (pid_col < 0) {
                                r = errorf(reterr, EIO, "no PID column in the output of ps");
                                break;
                        }
                        continue;
                }
                if (row_has_pid(line, pid_col, pids, n))
                        fputs(line, out);
        }
        if (f)
                fclose(f);

        int status = 0;
        while (waitpid(child, &status, 0) < 0 && errno == EINTR)
                ;
        if (r < 0)
                return r;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 && pid_col >= 0 ? 0 : 1;
}
