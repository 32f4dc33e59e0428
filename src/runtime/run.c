/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "container.h"
#include "foreground.h"
#include "log.h"
#include "macro.h"
#include "notify.h"
#include "process-util.h"

/* `run`: create, start, and (in the foreground) wait and delete, as one lifecycle operation. A start that
 * fails undoes the create: the init killed and, without --keep, the container deleted. */
int container_run(const RunOptions *o, int *ret_status, char **reterr) {
        CreateOptions co = o->create;
        _cleanup_close_ int pidfd = -EBADF, master = -EBADF;
        _cleanup_(notify_proxy_freep) NotifyProxy *notify = NULL;
        pid_t pid = 0;
        int r;

        /* In the foreground with process.terminal and no --console-socket, the pty is ours to proxy. */
        if (!o->detach && !co.console_socket)
                co.ret_console_master = &master;
        r = container_create(&co, &pid, &pidfd, reterr);
        if (r < 0)
                return r;
        /* NOTIFY_SOCKET: detached, READY=1 carries the init's pid (as runc); in the foreground we stay the
         * process whose exit is the container's (its exit status is ours), so MAINPID= names us. */
        StartOptions so = {
                .notify_mainpid = o->detach ? 0 : getpid(),
                .ret_notify_proxy = o->detach ? NULL : &notify,
        };
        r = container_start_full(co.root, co.id, &so, reterr);
        if (r < 0) {
                (void) pidfd_send_sig(pidfd, SIGKILL);
                (void) waitpid(pid, NULL, 0);
                if (!o->keep)
                        (void) container_delete(co.root, co.id, true, NULL);
                return r;
        }
        if (o->detach) {
                *ret_status = EXIT_SUCCESS;
                return 0;
        }

        _cleanup_close_ int sfd = foreground_block_signals();
        int status = foreground_wait(pid, pidfd, sfd, master, notify);
        if (status < 0)
                status = 255;
        if (!o->keep) {
                _cleanup_free_ char *err = NULL;
                r = container_delete(co.root, co.id, true, &err);
                if (r < 0)
                        log_warning_errno(r, "run %s: delete: %s", co.id, err ?: strerror(-r));
        }
        *ret_status = status;
        return 0;
}
