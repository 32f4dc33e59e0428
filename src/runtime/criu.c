/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Talking to CRIU: finding it, its version, running it, explaining its failures, and the container's
 * external mounts as CRIU wants them declared. The verbs are in checkpoint.c and restore.c. */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-util.h"
#include "criu.h"
#include "error-util.h"
#include "fileio.h"
#include "log.h"
#include "macro.h"
#include "process-util.h"
#include "string-util.h"

#define CRIU_VERSION_TIMEOUT_USEC (5 * USEC_PER_SEC)
#define CRIU_STDERR_MAX (256U << 10)

static inline void *mfree(void *p) {
        free(p);
        return NULL;
}

int criu_find(const char *name, char **ret) {
        _cleanup_free_ char *path = NULL;
        const char *env;

        assert(ret);
        if (isempty(name))
                name = "criu";
        if (strchr(name, '/')) {
                if (access(name, X_OK) < 0)
                        return -errno;
                *ret = strdup(name);
                return *ret ? 0 : -ENOMEM;
        }
        env = getenv("PATH");
        if (asprintf(&path, "%s:/usr/sbin:/sbin", isempty(env) ? "/usr/local/bin:/usr/bin:/bin" : env) < 0)
                return -ENOMEM;
        for (char *p = path, *dir; (dir = strsep(&p, ":"));) {
                _cleanup_free_ char *full = NULL;
                struct stat st;
                if (isempty(dir))
                        continue;
                if (asprintf(&full, "%s/%s", dir, name) < 0)
                        return -ENOMEM;
                if (stat(full, &st) >= 0 && S_ISREG(st.st_mode) && access(full, X_OK) >= 0) {
                        *ret = TAKE_PTR(full);
                        return 0;
                }
        }
        return -ENOENT;
}

void criu_run_done(CriuRun *r) {
        r->stderr_text = mfree(r->stderr_text);
}

int criu_spawn(char *const *argv, int go_fd, int go_write_fd, bool die_with_us, int (*setup)(void *userdata),
               void *userdata, pid_t *ret_pid, int *ret_stderr_fd) {
        _cleanup_close_ int out = -EBADF;
        pid_t pid;

        assert(argv && argv[0]);
        assert(ret_pid);
        assert(ret_stderr_fd);

        /* A memfd, not a pipe: criu never blocks on it, and we read it once criu has exited. */
        out = memfd_create("sdrun-criu-stderr", MFD_CLOEXEC);
        if (out < 0)
                return -errno;
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                sigset_t all;

                sigemptyset(&all);
                (void) sigprocmask(SIG_SETMASK, &all, NULL);
                if (die_with_us)
                        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (go_write_fd >= 0)
                        (void) close(go_write_fd);
                if (setup && setup(userdata) < 0)
                        _exit(127);
                if (dup2(out, STDOUT_FILENO) < 0 || dup2(out, STDERR_FILENO) < 0)
                        _exit(127);
                if (go_fd >= 0) {
                        /* "G", then NUL-terminated arguments to append, then an empty one. (Not up to EOF:
                         * this child holds a copy of the write end.) */
                        static char buf[8192];
                        size_t len = 0, n_args = 0, n_extra = 0;
                        ssize_t k;
                        while (!(len >= 2 && buf[len - 1] == 0 && (len == 2 || buf[len - 2] == 0))) {
                                if (len >= sizeof buf - 1)
                                        _exit(1);
                                k = read(go_fd, buf + len, sizeof buf - 1 - len);
                                if (k < 0 && errno == EINTR)
                                        continue;
                                if (k <= 0)
                                        _exit(1);
                                len += (size_t) k;
                                if (buf[0] != 'G')
                                        _exit(1);
                        }
                        len--; /* the terminating empty argument */
                        for (size_t i = 1; i < len; i++)
                                n_extra += buf[i] == 0;
                        while (argv[n_args])
                                n_args++;
                        char **full = calloc(n_args + n_extra + 1, sizeof *full);
                        if (!full)
                                _exit(127);
                        memcpy(full, argv, n_args * sizeof *full);
                        for (size_t i = 1, a = n_args; i < len && a < n_args + n_extra;
                             i += strlen(buf + i) + 1)
                                full[a++] = buf + i;
                        argv = full;
                }
                execv(argv[0], argv);
                dprintf(STDERR_FILENO, "cannot execute %s: %s\n", argv[0], strerror(errno));
                _exit(127);
        }
        *ret_pid = pid;
        *ret_stderr_fd = TAKE_FD(out);
        return 0;
}

static int read_memfd(int fd, char **ret) {
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        ssize_t n;

        if (fstat(fd, &st) < 0)
                return -errno;
        size_t size = MIN((size_t) st.st_size, (size_t) CRIU_STDERR_MAX);
        buf = malloc(size + 1);
        if (!buf)
                return -ENOMEM;
        n = pread(fd, buf, size, (off_t) st.st_size - (off_t) size);
        if (n < 0)
                return -errno;
        buf[n] = 0;
        *ret = TAKE_PTR(buf);
        return 0;
}

int criu_wait(pid_t pid, int stderr_fd, CriuRun *ret) {
        int status;

        assert(ret);
        *ret = (CriuRun){};
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        ret->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (stderr_fd >= 0)
                (void) read_memfd(stderr_fd, &ret->stderr_text);
        return 0;
}

int criu_get_version(const char *name, char **ret_path, char **ret_version) {
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int errfd = -EBADF;
        _cleanup_(criu_run_done) CriuRun run = {};
        pid_t pid;
        int r;

        r = criu_find(name, &path);
        if (r < 0)
                return r;
        char *argv[] = { path, (char *) "--version", NULL };
        r = criu_spawn(argv, -EBADF, -EBADF, true, NULL, NULL, &pid, &errfd);
        if (r < 0)
                return r;
        /* Bounded: `criu --version` prints and exits at once; a hung one is killed. */
        _cleanup_close_ int pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        r = pidfd < 0 ? -errno : pidfd_wait_exit(pidfd, CRIU_VERSION_TIMEOUT_USEC);
        if (r < 0) {
                (void) kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
                return r;
        }
        r = criu_wait(pid, errfd, &run);
        if (r < 0)
                return r;
        if (run.status != 0 || !run.stderr_text)
                return -EIO;
        const char *v = strstr(run.stderr_text, "Version: ");
        if (!v)
                return -EBADMSG;
        v += STRLEN("Version: ");
        if (ret_version) {
                *ret_version = strndup(v, strcspn(v, " \n"));
                if (!*ret_version)
                        return -ENOMEM;
        }
        if (ret_path)
                *ret_path = TAKE_PTR(path);
        return 0;
}

int criu_require(const char *name, char **ret_path, char **ret_version, char **reterr) {
        int r = criu_get_version(name, ret_path, ret_version);
        if (r == -ENOENT)
                return errorf(reterr, r,
                              "CRIU is not installed (no \"%s\" found; install the criu package or give "
                              "--criu PATH)",
                              name ?: "criu");
        if (r < 0)
                return errorf(reterr, r, "\"%s --version\" failed: %s", name ?: "criu", strerror(-r));
        return 0;
}

/* The message of the first CRIU error line ("(00.1) Error (criu/vdso.c:381): vdso: ...") that contains
 * needle: "vdso: ...". */
static char *error_line_with(const char *text, const char *needle) {
        for (const char *p = text; p && *p;) {
                const char *e = strchrnul(p, '\n'), *err = strstr(p, "Error (");
                if (err && err < e) {
                        const char *msg = strstr(err, "): ");
                        const char *n = strstr(p, needle);
                        if (msg && msg < e && n && n < e) {
                                msg += 3;
                                return strndup(msg, (size_t) (e - msg));
                        }
                }
                p = *e ? e + 1 : e;
        }
        return NULL;
}

/* The last n error lines of text, joined with "; ". */
static char *last_errors(const char *text, unsigned n) {
        const char *lines[8] = {};
        unsigned k = 0;
        char *out = NULL;
        size_t len = 0;

        if (!text)
                return NULL;
        n = MIN(n, ELEMENTSOF(lines));
        /* Log lines look like "(00.4)      1: Error (criu/x.c:12): what": keep "Error (...): what". */
        for (const char *p = text; *p;) {
                const char *e = strchrnul(p, '\n'), *err = strstr(p, "Error (");
                if (err && err < e)
                        lines[k++ % n] = err;
                p = *e ? e + 1 : e;
        }
        for (unsigned i = k > n ? k - n : 0; i < k; i++) {
                const char *l = lines[i % n];
                size_t ll = strcspn(l, "\n");
                char *nout = realloc(out, len + ll + 3);
                if (!nout)
                        return mfree(out);
                out = nout;
                if (len > 0) {
                        memcpy(out + len, "; ", 2);
                        len += 2;
                }
                memcpy(out + len, l, ll);
                len += ll;
                out[len] = 0;
        }
        return out;
}

char *criu_explain_failure(const char *criu_version, const CriuRun *run, const char *log_path) {
        _cleanup_free_ char *logtext = NULL, *all = NULL, *cause = NULL, *errs = NULL;
        struct utsname u = {};
        char *msg = NULL;

        if (log_path)
                (void) read_full_file_at(AT_FDCWD, log_path, 4U << 20, &logtext, NULL);
        if (asprintf(&all, "%s\n%s", run && run->stderr_text ? run->stderr_text : "", strempty(logtext)) < 0)
                return NULL;
        (void) uname(&u);

        /* CRIU learns what the kernel can do (kerndat) before anything else: when that fails, this kernel is
         * one this CRIU cannot work on (CRIU 3.17's vDSO parser and Linux >= 6.x's vDSO layout, e.g.). */
        if (strstr(all, "Could not initialize kernel features detection") || strstr(all, "kerndat_")) {
                cause = error_line_with(all, "vdso:") ?: error_line_with(all, "kerndat");
                if (asprintf(
                            &msg,
                            "CRIU %s cannot work on this kernel (Linux %s): it fails to detect the kernel's features "
                            "(%s); checkpoint/restore needs a kernel this CRIU supports",
                            criu_version ?: "(unknown version)", u.release, cause ?: "kerndat failed") < 0)
                        return NULL;
                return msg;
        }
        cause = error_line_with(all, "iag module");
        if (cause) {
                if (asprintf(
                            &msg,
                            "CRIU needs the kernel's socket diagnostic modules (unix_diag, inet_diag, tcp_diag, "
                            "netlink_diag, packet_diag), which are not loaded and cannot be loaded on Linux %s (%s)%s%s",
                            u.release, cause, log_path ? "; see " : "", strempty(log_path)) < 0)
                        return NULL;
                return msg;
        }
        errs = last_errors(all, 3);
        if (asprintf(&msg, "criu %s%s%s%s%s", run && run->status >= 128 ? "was killed" : "failed",
                     errs ? ": " : "", strempty(errs), log_path ? "; see " : "", strempty(log_path)) < 0)
                return NULL;
        return msg;
}

void criu_reopen_dev_null_stdio(void) {
        /* Runs in the container's namespaces (the init, after pivot_root). */
        struct stat own_null, st;
        _cleanup_close_ int fd = -EBADF;

        fd = open("/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY);
        if (fd < 0 || fstat(fd, &own_null) < 0 || !S_ISCHR(own_null.st_mode) ||
            own_null.st_rdev != makedev(1, 3))
                return;
        for (int i = 0; i < 3; i++)
                if (fstat(i, &st) >= 0 && S_ISCHR(st.st_mode) && st.st_rdev == own_null.st_rdev &&
                    (st.st_dev != own_null.st_dev || st.st_ino != own_null.st_ino))
                        (void) dup2(fd, i);
}

void criu_external_mounts_free(CriuExtMount *m, size_t n) {
        for (size_t i = 0; m && i < n; i++) {
                free(m[i].mountpoint);
                free(m[i].cookie);
                free(m[i].source);
        }
        free(m);
}

/* The mount points of pid's mount namespace, as one "\n"-separated, "\n"-framed string. */
static int read_mount_points(pid_t pid, char **ret) {
        _cleanup_free_ char *buf = NULL, *out = NULL;
        char path[64];
        size_t len = 0;
        int r;

        snprintf(path, sizeof path, "/proc/%d/mountinfo", (int) pid);
        r = read_full_file_at(AT_FDCWD, path, 16U << 20, &buf, NULL);
        if (r < 0)
                return r;
        out = malloc(strlen(buf) + 2);
        if (!out)
                return -ENOMEM;
        out[len++] = '\n';
        for (char *p = buf, *line; (line = next_line(&p));) {
                /* id parent maj:min root mountpoint ... */
                char *f = line;
                for (int i = 0; i < 4 && f; i++)
                        if ((f = strchr(f, ' ')))
                                f++;
                if (!f)
                        continue;
                size_t l = strcspn(f, " ");
                memcpy(out + len, f, l);
                len += l;
                out[len++] = '\n';
        }
        out[len] = 0;
        *ret = TAKE_PTR(out);
        return 0;
}

static bool has_mount_point(const char *points, const char *path) {
        _cleanup_free_ char *needle = NULL;

        if (!points)
                return true;
        if (asprintf(&needle, "\n%s\n", path) < 0)
                return true;
        return strstr(points, needle) != NULL;
}

static int add_ext(CriuExtMount **m, size_t *n, const char *mountpoint, const char *cookie,
                   const char *source, bool is_dir) {
        CriuExtMount *nm = reallocarray(*m, *n + 1, sizeof **m);
        if (!nm)
                return -ENOMEM;
        *m = nm;
        nm[*n] = (CriuExtMount){
                .mountpoint = strdup(mountpoint),
                .cookie = strdup(cookie),
                .source = strdup(source),
                .is_dir = is_dir,
        };
        if (!nm[*n].mountpoint || !nm[*n].cookie || !nm[*n].source) {
                (*n)++;
                return -ENOMEM;
        }
        (*n)++;
        return 0;
}

int criu_external_mounts(const OciConfig *c, const char *bundle, pid_t pid, CriuExtMount **ret,
                         size_t *ret_n) {
        _cleanup_free_ char *points = NULL;
        CriuExtMount *m = NULL;
        size_t n = 0;
        int r = 0;

        assert(c);
        assert(ret);
        assert(ret_n);

        if (pid > 0) {
                r = read_mount_points(pid, &points);
                if (r < 0)
                        return r;
        }
        const char *netns_path = NULL;
        bool new_netns = oci_config_has_namespace(c, OCI_NS_NETWORK, &netns_path) && !netns_path;
        CgroupLayout layout;
        /* rootfs.c binds the init's own cgroup directory on a cgroup mount then */
        bool cgroup_bind = !oci_config_has_namespace(c, OCI_NS_CGROUP, NULL) &&
                           cgroup_detect_layout(&layout) >= 0 && layout == CGROUP_LAYOUT_UNIFIED;

        for (size_t i = 0; r >= 0 && i < c->n_mounts; i++) {
                const OciMount *om = &c->mounts[i];
                _cleanup_free_ char *src = NULL;
                struct stat st;
                bool own_cgroup = false;

                if (!om->destination)
                        continue;
                if (oci_mount_is_bind(om) && om->source) {
                        if (om->source[0] == '/' || !bundle)
                                src = strdup(om->source);
                        else if (asprintf(&src, "%s/%s", bundle, om->source) < 0)
                                src = NULL;
                } else if (streq_ptr(om->type, "sysfs") && !new_netns)
                        src = strdup("/sys"); /* rootfs.c binds the host's /sys then */
                else if (streq_ptr(om->type, "cgroup") && cgroup_bind) {
                        src = strdup("");
                        own_cgroup = true;
                } else
                        continue;
                if (!src) {
                        r = -ENOMEM;
                        break;
                }
                if (!has_mount_point(points, om->destination))
                        continue;
                r = add_ext(&m, &n, om->destination, om->destination, src,
                            own_cgroup || stat(src, &st) < 0 || S_ISDIR(st.st_mode));
                if (r >= 0)
                        m[n - 1].own_cgroup = own_cgroup;
        }

        /* linux.maskedPaths: files are masked with binds of the host's /dev/null (directories with a tmpfs,
         * which CRIU dumps itself). All of them share one cookie, mapped back to /dev/null on restore. */
        for (char **p = c->linux_.masked_paths; r >= 0 && p && *p; p++) {
                if (pid > 0) {
                        char path[PATH_MAX];
                        struct stat st;
                        snprintf(path, sizeof path, "/proc/%d/root%s", (int) pid, *p);
                        if (!has_mount_point(points, *p) || stat(path, &st) < 0 || !S_ISCHR(st.st_mode))
                                continue;
                }
                r = add_ext(&m, &n, *p, "/dev/null", "/dev/null", false);
        }

        /* process.terminal: /dev/console is a bind of the pty (a mount of devpts whose root is the slave,
         * which CRIU dumps only with its master: outside the container). */
        if (r >= 0 && c->has_process && c->process.terminal && has_mount_point(points, "/dev/console")) {
                r = add_ext(&m, &n, "/dev/console", "/dev/console", "", false);
                if (r >= 0)
                        m[n - 1].terminal = true;
        }

        /* In a user namespace, device nodes are binds of the host's (devices.c). */
        if (r >= 0 && oci_config_has_namespace(c, OCI_NS_USER, NULL)) {
                for (size_t i = 0; r >= 0 && i < c->linux_.n_devices; i++) {
                        const OciDevice *d = &c->linux_.devices[i];
                        if ((d->type == 'c' || d->type == 'u' || d->type == 'b') &&
                            has_mount_point(points, d->path))
                                r = add_ext(&m, &n, d->path, d->path, d->path, false);
                }
                static const char *const defaults[] = { "/dev/null",   "/dev/zero",    "/dev/full",
                                                        "/dev/random", "/dev/urandom", "/dev/tty" };
                for (size_t i = 0; r >= 0 && i < ELEMENTSOF(defaults); i++)
                        if (has_mount_point(points, defaults[i]))
                                r = add_ext(&m, &n, defaults[i], defaults[i], defaults[i], false);
        }
        if (r < 0) {
                criu_external_mounts_free(m, n);
                return r;
        }
        *ret = m;
        *ret_n = n;
        return 0;
}
