/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clone-util.h"
#include "macro.h"
#include "stage1.h"
#include "sync.h"

unsigned long namespace_clone_flag(OciNamespaceType t) {
        static const unsigned long table[_OCI_NS_MAX] = {
                [OCI_NS_PID] = CLONE_NEWPID,       [OCI_NS_NETWORK] = CLONE_NEWNET,
                [OCI_NS_MOUNT] = CLONE_NEWNS,      [OCI_NS_IPC] = CLONE_NEWIPC,
                [OCI_NS_UTS] = CLONE_NEWUTS,       [OCI_NS_USER] = CLONE_NEWUSER,
                [OCI_NS_CGROUP] = CLONE_NEWCGROUP, [OCI_NS_TIME] = CLONE_NEWTIME,
        };
        return t >= 0 && t < _OCI_NS_MAX ? table[t] : 0;
}

/* Whether the namespace of fd belongs to the user namespace of userns_fd (NS_GET_USERNS). Where the kernel
 * cannot tell, yes: it is then joined after the user namespace, as it always was. */
static bool ns_owned_by(int fd, int userns_fd) {
        _cleanup_close_ int owner = ioctl(fd, NS_GET_USERNS);
        struct stat a, b;

        if (owner < 0 || fstat(owner, &a) < 0 || fstat(userns_fd, &b) < 0)
                return true;
        return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* The init runs the host's sdrun binary until its last exec, possibly in a pid namespace a container shares
 * (a pod, --pid=host): non-dumpable from its first instruction (the flag is inherited by clone), no process
 * of the container can open its /proc/PID/exe, fds, mem or environ, or ptrace it, whatever it holds in the
 * container's user namespace: the process's memory was made by the host's exec, so the kernel asks for
 * CAP_SYS_PTRACE in the host's user namespace. The exec of the trampoline makes the container's process
 * dumpable again, as with any exec. With a user namespace too: the init's /proc files then belong to the
 * host's root, which the init still is (kuid 0) where it writes them (timens_offsets, before setresuid);
 * setresuid() into the namespace would make it non-dumpable anyway. Not rootless, where the runtime, an
 * unprivileged user, must reach them (newuidmap, /proc/PID/ns). */
void init_make_undumpable(void) {
        if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                _exit(EXIT_FAILURE);
}

/* Runs in the runtime's clone, then in the namespaces it joins (privileged). */
_noreturn_ void stage1_main(const Stage1Params *s) {
        InitParams *init = s->init;
        const int *ns_fds = s->ns_fds;
        unsigned long new_flags = s->new_flags;
        int sync_fd = s->sync_fd;
        static const OciNamespaceType order[] = { OCI_NS_USER, OCI_NS_MOUNT,  OCI_NS_NETWORK, OCI_NS_IPC,
                                                  OCI_NS_UTS,  OCI_NS_CGROUP, OCI_NS_PID,     OCI_NS_TIME };
        int pidfd = -EBADF;
        pid_t pid;
        int r;

        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != s->runtime_pid)
                _exit(EXIT_FAILURE);
        if (!s->wait_placed)
                init_make_undumpable();

        int cgroup_fd = s->init_cgroup_fd;
        if (s->wait_placed) {
                /* Rootless: wait until we are in the scope (the runtime passes a sub-cgroup's fd along). */
                SyncMsg m;
                if (sync_expect(sync_fd, -1, 60 * USEC_PER_SEC, SYNC_GO, &m, NULL) < 0)
                        _exit(EXIT_FAILURE);
                /* The init inherits it: the cgroup directory it is born in. */
                if (m.fd >= 0)
                        cgroup_fd = init->own_cgroup_fd = TAKE_FD(m.fd);
                sync_msg_done(&m);
        }

        /* A namespace the user namespace we join does not own (one made outside it: runc issue 4390) is joined
         * first, while we still have the host's privilege over it; the user namespace next, then what it
         * owns. Decided before any setns(): once in the user namespace, we may not ask about the others. */
        bool early[_OCI_NS_MAX] = {};
        FOREACH_ARRAY(t, order, ELEMENTSOF(order))
                early[*t] = ns_fds[*t] >= 0 && *t != OCI_NS_USER && ns_fds[OCI_NS_USER] >= 0 &&
                            !ns_owned_by(ns_fds[*t], ns_fds[OCI_NS_USER]);
        for (int pass = 0; pass < 2; pass++)
                FOREACH_ARRAY(t, order, ELEMENTSOF(order)) {
                        if (ns_fds[*t] < 0 || early[*t] != (pass == 0))
                                continue;
                        if (setns(ns_fds[*t], (int) namespace_clone_flag(*t)) < 0) {
                                r = -errno;
                                sync_send_error(sync_fd, r, "join %s namespace: %m",
                                                oci_namespace_type_to_string(*t));
                                _exit(EXIT_FAILURE);
                        }
                }
        pid = clone3_pidfd(new_flags | CLONE_PARENT, 0, cgroup_fd, &pidfd);
        if (pid < 0) {
                sync_send_error(sync_fd, errno, "clone the container init: %m");
                _exit(EXIT_FAILURE);
        }
        if (pid == 0)
                init_main(init, sync_fd, s->runtime_pid);

        r = sync_send(sync_fd, SYNC_STAGE1_PID, 0, &pid, sizeof pid, pidfd);
        _exit(r < 0 ? EXIT_FAILURE : EXIT_SUCCESS);
}
