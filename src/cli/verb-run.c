/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "container.h"
#include "macro.h"
#include "notify.h"
#include "process-util.h"

int verb_run(int argc, char *argv[]) {
        CreateOptions o = {};
        _cleanup_free_ char *err = NULL;
        _cleanup_close_ int pidfd = -EBADF, master = -EBADF;
        _cleanup_(notify_proxy_freep) NotifyProxy *notify = NULL;
        bool detach = false, keep = false;
        pid_t pid = 0;
        int r, status;

        if (cli_parse_create_options("run", argc, argv, &o, &detach, &keep) < 0)
                return EXIT_FAILURE;
        log_set_context(o.id, NULL);
        /* In the foreground with process.terminal and no --console-socket, the pty is ours to proxy. */
        if (!detach && !o.console_socket)
                o.ret_console_master = &master;
        r = container_create(&o, &pid, &pidfd, &err);
        if (r < 0)
                return cli_runtime_error("run", o.id, r, err);
        /* NOTIFY_SOCKET: detached, READY=1 carries the init's pid (as runc); in the foreground we stay the
         * process whose exit is the container's (its exit status is ours), so MAINPID= names us. */
        StartOptions so = {
                .notify_mainpid = detach ? 0 : getpid(),
                .ret_notify_proxy = detach ? NULL : &notify,
        };
        r = container_start_full(o.root, o.id, &so, &err);
        if (r < 0) {
                (void) cli_runtime_error("run", o.id, r, err);
                (void) pidfd_send_sig(pidfd, SIGKILL);
                (void) waitpid(pid, NULL, 0);
                free(err);
                err = NULL;
                if (!keep)
                        (void) container_delete(o.root, o.id, true, &err);
                return EXIT_FAILURE;
        }
        if (detach)
                return EXIT_SUCCESS;

        _cleanup_close_ int sfd = cli_block_forwarded_signals();
        status = cli_wait_forwarding_signals_notify(pid, pidfd, sfd, master, notify);
        if (status < 0)
                status = 255;
        if (!keep) {
                r = container_delete(o.root, o.id, true, &err);
                if (r < 0)
                        log_warning_errno(r, "run %s: delete: %s", o.id, err ?: strerror(-r));
        }
        return status;
}
