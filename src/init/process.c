/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fileio.h"
#include "error-util.h"
#include "macro.h"
#include "process.h"

/* The kernel's struct sched_attr (linux/sched/types.h clashes with glibc's sched.h). */
struct kernel_sched_attr {
        uint32_t size;
        uint32_t sched_policy;
        uint64_t sched_flags;
        int32_t sched_nice;
        uint32_t sched_priority;
        uint64_t sched_runtime;
        uint64_t sched_deadline;
        uint64_t sched_period;
};

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static const char *env_get(char **env, const char *name) {
        size_t n = strlen(name);
        for (char **e = env; e && *e; e++)
                if (strneq(*e, name, n) && (*e)[n] == '=')
                        return *e + n + 1;
        return NULL;
}

static int check_executable(const char *path) {
        const char *rel = proc_rel(path); /* /proc/self/exe, /proc/self/fd/N: our own */
        struct stat st;

        if (fstatat(proc_dir_fd(), rel, &st, 0) < 0)
                return -errno;
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (!S_ISREG(st.st_mode))
                return -EACCES;
        if (faccessat(proc_dir_fd(), rel, X_OK, 0) < 0)
                return -errno;
        return 0;
}

int process_find_executable(const OciProcess *p, char **ret, char **reterr) {
        const char *name, *path;
        int r;

        if (!p->args || !p->args[0] || !*p->args[0])
                return errorf(reterr, EINVAL, "process.args: must not be empty");
        name = p->args[0];

        if (strchr(name, '/')) {
                r = check_executable(name);
                if (r == -ENOENT)
                        return errorf(reterr, r,
                                      "process.args[0]: exec: \"%s\": stat %s: no such file or directory",
                                      name, name);
                if (r < 0)
                        return errorf(reterr, r, "process.args[0]: exec: \"%s\": %s", name,
                                      r == -EACCES || r == -EISDIR ? "permission denied" : strerror(-r));
                *ret = strdup(name);
                return *ret ? 0 : -ENOMEM;
        }

        path = env_get(p->env, "PATH") ?: DEFAULT_PATH;
        _cleanup_free_ char *copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        int first_error = 0;
        for (char *dir = copy, *next; dir; dir = next) {
                next = strchr(dir, ':');
                if (next)
                        *next++ = 0;
                _cleanup_free_ char *full = NULL;
                if (asprintf(&full, "%s/%s", *dir ? dir : ".", name) < 0)
                        return -ENOMEM;
                r = check_executable(full);
                if (r == 0) {
                        *ret = TAKE_PTR(full);
                        return 0;
                }
                if (r != -ENOENT && r != -ENOTDIR && !first_error)
                        first_error = r;
        }
        if (first_error == -EACCES || first_error == -EISDIR)
                return errorf(reterr, EACCES, "process.args[0]: exec: \"%s\": permission denied", name);
        return errorf(reterr, ENOENT, "process.args[0]: exec: \"%s\": executable file not found in $PATH",
                      name);
}

int process_apply_rlimits(const OciProcess *p, char **reterr) {
        for (size_t i = 0; i < p->n_rlimits; i++) {
                struct rlimit rl = {
                        .rlim_cur = p->rlimits[i].soft == UINT64_MAX ? RLIM_INFINITY : p->rlimits[i].soft,
                        .rlim_max = p->rlimits[i].hard == UINT64_MAX ? RLIM_INFINITY : p->rlimits[i].hard,
                };
                if (setrlimit(p->rlimits[i].type, &rl) < 0)
                        return errorf(
                                reterr, -errno, "process.rlimits[%zu]: setrlimit(%d, %llu, %llu): %s%s", i,
                                p->rlimits[i].type, (unsigned long long) p->rlimits[i].soft,
                                (unsigned long long) p->rlimits[i].hard, strerror(errno),
                                errno == EPERM ? " (raising a hard limit needs CAP_SYS_RESOURCE)" : "");
        }
        return 0;
}

int process_apply_oom_score_adj(const OciProcess *p, char **reterr) {
        char buf[32];
        int r;

        if (!p->has_oom_score_adj)
                return 0;
        snprintf(buf, sizeof buf, "%d", p->oom_score_adj);
        r = write_string_file_at(proc_dir_fd(), proc_rel("/proc/self/oom_score_adj"), buf);
        if (r < 0)
                return errorf(reterr, r, "process.oomScoreAdj: write %s to /proc/self/oom_score_adj: %s",
                              buf, strerror(-r));
        return 0;
}

int process_apply_scheduler(const OciProcess *p, char **reterr) {
        struct kernel_sched_attr attr = { .size = sizeof attr };

        if (!p->scheduler.present)
                return 0;
        attr.sched_policy = (uint32_t) p->scheduler.policy;
        attr.sched_flags = p->scheduler.flags;
        attr.sched_nice = p->scheduler.nice;
        attr.sched_priority = (uint32_t) p->scheduler.priority;
        attr.sched_runtime = p->scheduler.runtime;
        attr.sched_deadline = p->scheduler.deadline;
        attr.sched_period = p->scheduler.period;
        if (syscall(SYS_sched_setattr, 0, &attr, 0) < 0)
                return errorf(reterr, -errno, "process.scheduler: sched_setattr: %s", strerror(errno));
        return 0;
}

#define IOPRIO_CLASS_SHIFT 13
int process_apply_io_priority(const OciProcess *p, char **reterr) {
        if (!p->io_priority.present)
                return 0;
        int prio = (p->io_priority.klass << IOPRIO_CLASS_SHIFT) | p->io_priority.priority;
        if (syscall(SYS_ioprio_set, 1 /* IOPRIO_WHO_PROCESS */, 0, prio) < 0)
                return errorf(reterr, -errno, "process.ioPriority: ioprio_set: %s", strerror(errno));
        return 0;
}

int cpu_list_parse(const char *s, void *set, size_t setsize) {
        cpu_set_t *cs = set;

        CPU_ZERO_S(setsize, cs);
        if (isempty(s))
                return -EINVAL;
        for (const char *p = s; *p;) {
                char *end;
                errno = 0;
                unsigned long a = strtoul(p, &end, 10), b;
                if (errno || end == p || a >= setsize * 8)
                        return -EINVAL;
                b = a;
                if (*end == '-') {
                        p = end + 1;
                        b = strtoul(p, &end, 10);
                        if (errno || end == p || b < a || b >= setsize * 8)
                                return -EINVAL;
                }
                for (unsigned long i = a; i <= b; i++)
                        CPU_SET_S(i, setsize, cs);
                if (*end == ',')
                        end++;
                else if (*end)
                        return -EINVAL;
                p = end;
        }
        return 0;
}

int process_apply_cpu_affinity(const char *cpus, const char *field, char **reterr) {
        cpu_set_t set;
        int r;

        if (isempty(cpus))
                return 0;
        r = cpu_list_parse(cpus, &set, sizeof set);
        if (r < 0)
                return errorf(reterr, r, "%s: invalid cpu list \"%s\"", field, cpus);
        if (sched_setaffinity(0, sizeof set, &set) < 0)
                return errorf(reterr, -errno, "%s: sched_setaffinity(\"%s\"): %s", field, cpus,
                              strerror(errno));
        return 0;
}

int process_apply_personality(const OciLinux *l, char **reterr) {
        if (!l->personality.present)
                return 0;
        if (personality(l->personality.domain) < 0)
                return errorf(reterr, -errno, "linux.personality: %s", strerror(errno));
        return 0;
}

int process_apply_memory_policy(const OciLinux *l, char **reterr) {
        unsigned long mask[16] = {};

        if (!l->memory_policy.present)
                return 0;
        if (!isempty(l->memory_policy.nodes)) {
                cpu_set_t set;
                if (cpu_list_parse(l->memory_policy.nodes, &set, sizeof set) < 0)
                        return errorf(reterr, EINVAL, "linux.memoryPolicy.nodes: invalid node list \"%s\"",
                                      l->memory_policy.nodes);
                memcpy(mask, &set, MIN(sizeof mask, sizeof set));
        }
        if (syscall(SYS_set_mempolicy, l->memory_policy.mode | (int) l->memory_policy.flags,
                    isempty(l->memory_policy.nodes) ? NULL : mask,
                    isempty(l->memory_policy.nodes) ? 0UL : (unsigned long) (sizeof mask * 8)) < 0)
                return errorf(reterr, -errno, "linux.memoryPolicy: set_mempolicy: %s", strerror(errno));
        return 0;
}

int process_close_fds(unsigned preserve_fds) {
        unsigned first = 3 + preserve_fds;

        /* Close-on-exec rather than close: the fds we still need until execve (sync socket) close then. */
        if (syscall(SYS_close_range, first, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */) < 0)
                return -errno;
        return 0;
}
