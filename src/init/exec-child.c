/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "become.h"
#include "clone-util.h"
#include "config.h"
#include "error-util.h"
#include "fileio.h"
#include "exec-child.h"
#include "log.h"
#include "macro.h"
#include "process.h"
#include "sync.h"

/* Container side, privileged: in the container's pid namespace and cgroup from the first instruction; joins
 * the rest below. */

typedef struct ExecChildContext {
        ExecChild *x;
        bool lost; /* the runtime is gone: nobody to report to */
} ExecChildContext;

/* The sync socket above the fds that pass into the process; then the runtime's go where it writes v1
 * cgroups after the clone (a runtime that dies closes its end: EPIPE, and we go). */
static int exec_child_attach(ExecChildContext *xc) {
        Become *b = &xc->x->b;
        int r, fd;

        (void) prctl(PR_SET_NAME, EXEC_CHILD_COMM);
        log_set_sink(NULL);
        /* Its stdio become the process's: debug lines go on to the runtime's stderr. */
        (void) log_pin_stderr((int) (3 + b->preserve_fds));

        fd = fcntl(b->sync_fd, F_DUPFD_CLOEXEC, (int) (3 + b->preserve_fds));
        if (fd < 0) {
                xc->lost = true;
                return -errno;
        }
        if (fd != b->sync_fd) {
                safe_close(b->sync_fd);
                b->sync_fd = fd;
        }
        /* Outside the container's pid namespace, its /proc has no "self" for us: the host's, kept. */
        if (b->fork_into_pidns) {
                _cleanup_close_ int proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (proc < 0)
                        return errorf(&b->err, -errno, "open /proc: %s", strerror(errno));
                fd = fcntl(proc, F_DUPFD_CLOEXEC, (int) (3 + b->preserve_fds));
                if (fd < 0)
                        return errorf(&b->err, -errno, "open /proc: %s", strerror(errno));
                proc_set_root(fd);
        }
        if (xc->x->wait_go) {
                r = sync_expect(b->sync_fd, -1, EXEC_CHILD_STEP_TIMEOUT_USEC, SYNC_GO, NULL, NULL);
                if (r < 0) {
                        xc->lost = true;
                        return r;
                }
        }
        /* process.oomScoreAdj while we are still the host's root, outside the container's user namespace:
         * inside it, after setresuid(), our /proc file is the host root's, and lowering the value takes
         * CAP_SYS_RESOURCE of the host's user namespace (/proc is still the host's here). */
        r = process_apply_oom_score_adj(b->p, &b->err);
        if (r < 0)
                return r;
        b->oom_score_adj_done = true;
        log_debug("child process in init(): exec's child %d joins the container", (int) getpid());
#if ENABLE_TEST_INJECTION
        /* SDRUN_TEST_SIGSTOP_AT=exec-child (test builds): stop here, in the container's cgroup, as a process
         * of the host that sends it SIGSTOP would (test-exec-interrupt: the caller's signal must still end
         * the waiting exec). */
        const char *e = getenv("SDRUN_TEST_SIGSTOP_AT");
        if (e && strcmp(e, "exec-child") == 0)
                (void) raise(SIGSTOP);
#endif
        return 0;
}

static int exec_child_join(ExecChildContext *xc) {
        ExecChild *x = xc->x;
        Become *b = &x->b;
        int r;

        if (x->ns_mask != 0 && setns(x->init_pidfd, (int) x->ns_mask) < 0) {
                r = -errno;
                return errorf(&b->err, r, "join the namespaces of the container init: %s%s", strerror(-r),
                              r == -EINVAL ? " (setns with a pidfd needs Linux 5.8 or later)" : "");
        }
        x->init_pidfd = safe_close(x->init_pidfd);
        if (b->in_userns)
                return become_userns_root(&b->err);
        return 0;
}

/* From here on, in the container's mount namespace: paths resolve in its root. */
static int exec_child_prepare(ExecChildContext *xc) {
        return become_prepare(&xc->x->b);
}

/* The pty comes from the container's own devpts (its /dev/ptmx). */
static int exec_child_console(ExecChildContext *xc) {
        return become_terminal(&xc->x->b, NULL);
}

/* The steps, in order; a step's name is what its failure says when it left no message of its own. */
static const struct {
        const char *name;
        int (*run)(ExecChildContext *xc);
} exec_child_steps[] = {
        { "attach", exec_child_attach },
        { "setns", exec_child_join },
        { "process", exec_child_prepare },
        { "console", exec_child_console },
};

_noreturn_ void exec_child_main(ExecChild *x) {
        ExecChildContext xc = { .x = x };

        FOREACH_ARRAY(s, exec_child_steps, ELEMENTSOF(exec_child_steps)) {
                int r = s->run(&xc);
                if (r < 0) {
                        if (xc.lost)
                                _exit(EXIT_FAILURE);
                        become_fail(&x->b, r, s->name);
                }
        }
        become_exec(&x->b);
}

/* Runs in the runtime's clone, then in the container's user and pid namespaces (privileged). */
_noreturn_ void exec_intermediate_main(ExecChild *x, int cgroup_fd) {
        ExecViaUserns v = {};
        int pidfd = -EBADF;

        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (setns(x->init_pidfd, CLONE_NEWUSER | CLONE_NEWPID) < 0) {
                sync_send_error(x->b.sync_fd, errno,
                                "join the user and pid namespaces of the container init: %m");
                _exit(EXIT_FAILURE);
        }
        v.in_cgroup = cgroup_fd >= 0;
        v.pid = clone3_pidfd(CLONE_PARENT, 0, cgroup_fd, &pidfd);
        if (v.pid < 0 && v.in_cgroup && (errno == EACCES || errno == EPERM)) {
                /* Not ours to write: systemd moves it (AttachProcessesToUnit) before it goes on. */
                v.in_cgroup = false;
                v.pid = clone3_pidfd(CLONE_PARENT, 0, -EBADF, &pidfd);
        }
        if (v.pid == 0)
                exec_child_main(x);
        if (v.pid < 0) {
                sync_send_error(x->b.sync_fd, errno, "clone the process in the container's namespaces: %m");
                _exit(EXIT_FAILURE);
        }
        _exit(sync_send(x->b.sync_fd, SYNC_STAGE1_PID, 0, &v, sizeof v, pidfd) < 0 ? EXIT_FAILURE
                                                                                   : EXIT_SUCCESS);
}
