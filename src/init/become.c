/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "become.h"
#include "capabilities.h"
#include "console.h"
#include "error-util.h"
#include "fileio.h"
#include "log.h"
#include "process-util.h"
#include "process.h"
#include "strv.h"
#include "string-util.h"
#include "sync.h"
#include "trampoline.h"

#define PASSWD_SIZE_MAX (4U << 20)

_noreturn_ void become_fail(Become *b, int r, const char *step) {
        if (b->err)
                sync_send_error(b->sync_fd, r, "%s", b->err);
        else
                sync_send_error(b->sync_fd, r, "%s: %s", step, strerror(r < 0 ? -r : r));
        _exit(EXIT_FAILURE);
}

/* The lowest id /proc/self/{uid,gid}_map maps, set as the real, effective and saved uid (or gid), with the
 * capabilities the user namespace gave its first process kept and effective. */
static int become_lowest_mapped(const char *map, char **reterr) {
        _cleanup_free_ char *buf = NULL, *path = NULL;
        unsigned long lowest = ULONG_MAX, inside, outside, count;
        int r;

        if (asprintf(&path, "/proc/self/%s", map) < 0)
                return -ENOMEM;
        r = read_full_file_at(proc_dir_fd(), proc_rel(path), 64 * 1024, &buf, NULL);
        if (r < 0)
                return errorf(reterr, r, "read %s: %s", path, strerror(-r));
        for (const char *l = buf; *l;) {
                if (sscanf(l, "%lu %lu %lu", &inside, &outside, &count) == 3 && count > 0 && inside < lowest)
                        lowest = inside;
                l = strchrnul(l, '\n');
                if (*l)
                        l++;
        }
        if (lowest > UINT32_MAX - 1)
                return errorf(reterr, EINVAL, "the user namespace maps no %s",
                              map[0] == 'u' ? "uid" : "gid");

        bool uid = map[0] == 'u';
        if (uid && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
                return errorf(reterr, -errno, "PR_SET_KEEPCAPS: %m");
        if ((uid ? setresuid((uid_t) lowest, (uid_t) lowest, (uid_t) lowest)
                 : setresgid((gid_t) lowest, (gid_t) lowest, (gid_t) lowest)) < 0)
                return errorf(reterr, -errno,
                              "become %s %lu, the lowest the user namespace maps (it maps no 0): %m",
                              uid ? "uid" : "gid", lowest);
        if (!uid)
                return 0;
        (void) prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
        r = capabilities_raise_effective();
        if (r < 0)
                return errorf(reterr, r, "raise the capabilities again after becoming uid %lu: %s", lowest,
                              strerror(-r));
        return 0;
}

/* Root of the user namespace for "uid_map" or "gid_map". A namespace whose mappings have no 0 (runc issue
 * 1800: only the user the process runs as) refuses it (EINVAL): then the lowest id it maps, so that the init
 * and the hooks it runs are never the host's root there. */
static int become_namespace_root(const char *map, char **reterr) {
        bool uid = map[0] == 'u';

        if ((uid ? setresuid(0, 0, 0) : setresgid(0, 0, 0)) >= 0)
                return 0;
        if (errno != EINVAL)
                return errorf(reterr, -errno, "become root in the user namespace: %m");
        return become_lowest_mapped(map, reterr);
}

int become_userns_root(char **reterr) {
        int r;

        r = become_namespace_root("gid_map", reterr);
        if (r < 0)
                return r;
        return become_namespace_root("uid_map", reterr);
}

int become_read_file(const char *path, size_t max, char **ret) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        size_t n = 0;

        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode) || (uint64_t) st.st_size > max)
                return -EBADFD;
        buf = malloc((size_t) st.st_size + 1);
        if (!buf)
                return -ENOMEM;
        while (n < (size_t) st.st_size) {
                ssize_t k = read(fd, buf + n, (size_t) st.st_size - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        break;
                n += (size_t) k;
        }
        buf[n] = 0;
        *ret = TAKE_PTR(buf);
        return 0;
}

int become_prepare(Become *b) {
        const OciProcess *p = b->p;
        const char *cwd = p->cwd ?: "/";
        int r;

        r = process_find_executable(p, &b->exe, &b->err);
        if (r < 0)
                return r;
        if ((r = capabilities_check_held(p, &b->err)) < 0 ||
            (!b->oom_score_adj_done && (r = process_apply_oom_score_adj(p, &b->err)) < 0) ||
            (r = process_apply_rlimits(p, &b->err)) < 0 ||
            (r = process_apply_personality(&b->c->linux_, &b->err)) < 0 ||
            (r = process_apply_memory_policy(&b->c->linux_, &b->err)) < 0 ||
            (r = process_apply_scheduler(p, &b->err)) < 0 ||
            (r = process_apply_io_priority(p, &b->err)) < 0 ||
            (r = process_apply_cpu_affinity(p->exec_cpu_affinity_initial, "process.execCPUAffinity.initial",
                                            &b->err)) < 0)
                return r;
        if (chdir(cwd) < 0)
                return errorf(&b->err, -errno, "process.cwd: chdir(\"%s\"): %s", cwd, strerror(errno));
        return 0;
}

int become_terminal(Become *b, int (*setup_slave)(int slave, char **reterr)) {
        const OciProcess *p = b->p;
        _cleanup_close_ int master = -EBADF, slave = -EBADF;
        int r;

        if (!p->terminal) {
                if (b->fork_into_pidns)
                        return 0;
                if (setsid() < 0 && errno != EPERM)
                        return errorf(&b->err, -errno, "setsid: %s", strerror(errno));
                return 0;
        }
        r = console_open_pty(p->has_console_size ? (unsigned) p->console_height : 0,
                             p->has_console_size ? (unsigned) p->console_width : 0, &master, &slave,
                             &b->err);
        if (r < 0)
                return r;
        if (setup_slave && (r = setup_slave(slave, &b->err)) < 0)
                return r;
        r = sync_send(b->sync_fd, SYNC_CONSOLE, 0, NULL, 0, master);
        if (r < 0)
                _exit(EXIT_FAILURE);
        master = safe_close(master);
        r = sync_expect(b->sync_fd, -1, b->step_timeout_usec, SYNC_CONSOLE_DONE, NULL, NULL);
        if (r < 0)
                _exit(EXIT_FAILURE);
        r = b->fork_into_pidns ? console_make_stdio(slave) : console_make_controlling(slave);
        if (r < 0)
                return errorf(&b->err, r, "make the pty the controlling terminal: %s", strerror(-r));
        return 0;
}

typedef struct EnvEntry {
        const char *e;
        size_t key_len; /* "KEY=" */
        size_t index;
} EnvEntry;

static int env_key_compare(const EnvEntry *x, const EnvEntry *y) {
        int c = memcmp(x->e, y->e, MIN(x->key_len, y->key_len));

        if (c != 0 || x->key_len == y->key_len)
                return c;
        return x->key_len < y->key_len ? -1 : 1;
}

/* By key, then by position: the entries of one variable are together, in the order given. */
static int env_entry_compare(const void *a, const void *b) {
        const EnvEntry *x = a, *y = b;
        int c = env_key_compare(x, y);

        if (c != 0)
                return c;
        return x->index < y->index ? -1 : x->index > y->index;
}

/* HOME= for uid from the container's /etc/passwd, or "HOME=/". */
static char *passwd_home(uid_t uid) {
        _cleanup_free_ char *buf = NULL;
        char *home = NULL;

        if (become_read_file("/etc/passwd", PASSWD_SIZE_MAX, &buf) >= 0)
                for (char *q = buf, *line; !home && (line = next_line(&q));) {
                        char *f[7] = {};
                        int k = 0;

                        /* name:pw:uid:gid:gecos:home:shell */
                        for (char *s = line; s && k < 7; k++) {
                                f[k] = s;
                                s = strchr(s, ':');
                                if (s)
                                        *s++ = 0;
                        }
                        if (k >= 6 && *f[2] && strtoul(f[2], NULL, 10) == uid && *f[5])
                                if (asprintf(&home, "HOME=%s", f[5]) < 0)
                                        home = NULL;
                }
        return home ?: strdup("HOME=/");
}

/* Whether the variable e ("KEY=VALUE") is one that `set` names ("KEY=VALUE", or "KEY" to unset it). */
static bool env_is_set_by(const char *e, char *const *set) {
        size_t k = strcspn(e, "=");

        for (char *const *s = set; *s; s++)
                if (strncmp(e, *s, k) == 0 && ((*s)[k] == '=' || (*s)[k] == 0))
                        return true;
        return false;
}

/* What the runtime sets in the process's environment over process.env. Socket activation: LISTEN_FDS=n,
 * LISTEN_PID=1 and LISTEN_FDNAMES (or none: process.env's is dropped too, it would not match). The
 * credentials: CREDENTIALS_DIRECTORY. */
static int runtime_env(const Become *b, char ***ret) {
        _cleanup_strv_free_ char **set = NULL;
        _cleanup_free_ char *fds = NULL, *names = NULL, *creds = NULL;

        if (b->listen_fds > 0) {
                fds = strdup_printf("LISTEN_FDS=%u", b->listen_fds);
                names = b->listen_fdnames ? strdup_printf("LISTEN_FDNAMES=%s", b->listen_fdnames)
                                          : strdup("LISTEN_FDNAMES");
                if (!fds || !names || strv_extend(&set, fds) < 0 || strv_extend(&set, "LISTEN_PID=1") < 0 ||
                    strv_extend(&set, names) < 0)
                        return -ENOMEM;
        }
        if (b->credentials_dir) {
                creds = strdup_printf("CREDENTIALS_DIRECTORY=%s", b->credentials_dir);
                if (!creds || strv_extend(&set, creds) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(set);
        return 0;
}

/* process.env, as runc makes it: a variable given twice is set once, where it first appears, to the value
 * it was given last; the runtime's variables (runtime_env()) replace whatever it says about them; HOME, when
 * missing or empty, comes from the container's /etc/passwd. */
static int build_env(const OciProcess *p, char *const *set, char ***ret) {
        _cleanup_free_ EnvEntry *sorted = NULL;
        _cleanup_free_ const char **keep = NULL;
        size_t n = 0, total = 0, m = 0, n_set = 0;
        ssize_t home = -1;
        char **env;

        for (char **e = p->env; e && *e; e++)
                total++;
        for (char *const *e = set; e && *e; e++)
                n_set++;
        env = calloc(total + n_set + 2, sizeof(char *));
        sorted = calloc(total + 1, sizeof(EnvEntry));
        keep = calloc(total + 1, sizeof(char *));
        if (!env || !sorted || !keep)
                return -ENOMEM; /* the caller fails right away */
        for (size_t i = 0; i < total; i++) {
                const char *e = p->env[i], *eq = strchr(e, '=');

                if (set && env_is_set_by(e, set))
                        continue;
                sorted[m++] =
                        (EnvEntry){ .e = e, .key_len = eq ? (size_t) (eq - e) + 1 : strlen(e), .index = i };
        }
        /* Sorted rather than compared pairwise: a config may hold a great many variables. */
        qsort(sorted, m, sizeof(EnvEntry), env_entry_compare);
        for (size_t a = 0, b; a < m; a = b) {
                for (b = a + 1; b < m && env_key_compare(&sorted[a], &sorted[b]) == 0; b++)
                        ;
                keep[sorted[a].index] = sorted[b - 1].e; /* the first place, the last value */
        }
        for (size_t i = 0; i < total; i++) {
                if (!keep[i])
                        continue;
                if (strneq(keep[i], "HOME=", 5))
                        home = (ssize_t) n;
                env[n++] = (char *) keep[i];
        }
        for (char *const *e = set; e && *e; e++)
                if (strchr(*e, '='))
                        env[n++] = *e;
        if (home < 0)
                env[n] = passwd_home(p->user.uid);
        else if (streq(env[home], "HOME="))
                env[home] = passwd_home(p->user.uid);
        *ret = env;
        return 0;
}

/* process.apparmorProfile / process.selinuxLabel: the label of the next execve. (Checked against the host's
 * LSMs by host_check_lsm() before anything was created; a write that fails here is still an error.) */
static int apply_lsm_exec_labels(Become *b) {
        const OciProcess *p = b->p;
        _cleanup_free_ char *v = NULL;
        int r;

        if (!isempty(p->apparmor_profile)) {
                if (asprintf(&v, "exec %s", p->apparmor_profile) < 0)
                        return -ENOMEM;
                r = write_string_file_at(proc_dir_fd(), proc_rel("/proc/thread-self/attr/apparmor/exec"), v);
                if (r == -ENOENT)
                        r = write_string_file_at(proc_dir_fd(), proc_rel("/proc/self/attr/exec"), v);
                if (r < 0)
                        return errorf(&b->err, r, "process.apparmorProfile: apply \"%s\": %s",
                                      p->apparmor_profile, strerror(-r));
        }
        if (!isempty(p->selinux_label)) {
                r = write_string_file_at(proc_dir_fd(), proc_rel("/proc/thread-self/attr/exec"),
                                         p->selinux_label);
                if (r < 0)
                        return errorf(&b->err, r, "process.selinuxLabel: apply \"%s\": %s", p->selinux_label,
                                      strerror(-r));
        }
        return 0;
}

static int send_notify_fd(int fd, void *userdata) {
        Become *b = userdata;
        int r;

        r = sync_send(b->sync_fd, SYNC_SECCOMP_FD, 0, NULL, 0, fd);
        if (r < 0)
                return r;
        return sync_expect(b->sync_fd, -1, b->step_timeout_usec, SYNC_SECCOMP_FD_DONE, NULL, NULL);
}

static void reset_signals(void) {
        struct sigaction sa = { .sa_handler = SIG_DFL };
        sigset_t none;

        /* The runtime's caller (conmon ignores SIGPIPE, a shell's `trap '' PIPE`) must not decide them. */
        for (int s = 1; s < _NSIG; s++)
                if (s != SIGKILL && s != SIGSTOP)
                        (void) sigaction(s, &sa, NULL);
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
}

/* crun's annotation (Podman's --group-add keep-groups): "1" keeps the supplementary groups the process has. */
#define KEEP_GROUPS_ANNOTATION "run.oci.keep_original_groups"

_noreturn_ void become_exec(Become *b) {
        const OciProcess *p = b->p;
        const OciSeccomp *s = b->filter ? &b->c->linux_.seccomp : NULL;
        _cleanup_close_ int tramp = -EBADF, proc_fd_dir = -EBADF;
        _cleanup_free_ char **env = NULL;
        _cleanup_strv_free_ char **set = NULL;
        int r, notify_fd = -1;

        r = runtime_env(b, &set);
        if (r >= 0)
                r = build_env(p, set, &env);
        if (r < 0)
                become_fail(b, r, "environment");
        r = process_apply_cpu_affinity(p->exec_cpu_affinity_final, "process.execCPUAffinity.final", &b->err);
        if (r < 0)
                become_fail(b, r, "cpu affinity");
        r = apply_lsm_exec_labels(b);
        if (r < 0)
                become_fail(b, r, "lsm");
        r = trampoline_open(&tramp);
        if (r < 0) {
                errorf(&b->err, r, "prepare the exec trampoline (memfd): %s", strerror(-r));
                become_fail(b, r, "trampoline");
        }
        /* The last line before the fds go: from here, failures go over the sync socket only. */
        log_debug("%s: about to exec \"%s\" (%s)", b->role, p->args[0], b->exe);
        r = process_close_fds(b->preserve_fds);
        if (r < 0)
                become_fail(b, r, "close fds");
        /* The trampoline reports a failing execve on the sync socket and closes it on exec. */
        if (fcntl(b->sync_fd, F_SETFD, 0) < 0)
                become_fail(b, -errno, "sync socket");
        reset_signals();

        /* Without execveat, the hop goes through /proc/self/fd/N: checked now, before the filter. */
        bool avoid_execveat = trampoline_seccomp_blocks_execveat(s);
        if (avoid_execveat) {
                proc_fd_dir = trampoline_open_proc_fd(&b->err);
                if (proc_fd_dir < 0) {
                        errwrap(&b->err, proc_fd_dir, "exec \"%s\": linux.seccomp refuses execveat",
                                p->args[0]);
                        become_fail(b, proc_fd_dir, "exec");
                }
        }

        const char *keep = oci_config_annotation(b->c, KEEP_GROUPS_ANNOTATION);
        r = process_finalize_security_full(p, s, b->filter, b->in_userns, keep && streq(keep, "1"),
                                           send_notify_fd, b, &notify_fd, &b->err);
        if (r < 0)
                become_fail(b, r, "security");
        if (b->before_exec) {
                r = b->before_exec(b, b->before_exec_userdata);
                if (r < 0)
                        become_fail(b, r, "startContainer hooks");
        }

        TrampolineFlags flags = 0;
        if (b->fork_into_pidns)
                flags = TRAMPOLINE_FORK | (p->terminal ? TRAMPOLINE_CTTY : 0);
        r = trampoline_execve(tramp, avoid_execveat, proc_fd_dir, b->exe, p->args, env, b->sync_fd, flags,
                              &b->err);
        errwrap(&b->err, r, "exec \"%s\": run the exec trampoline", p->args[0]);
        become_fail(b, r, "exec");
}
