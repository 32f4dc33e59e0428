/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The host's end of the container's pty: the master the init or exec child sends (SYNC_CONSOLE) goes to our
 * caller, who proxies it (foreground.h), or to the --console-socket. The pty itself is made in the container
 * (src/init/console.h). */

#include "sync.h"

/* Send the pty master to the --console-socket (AF_UNIX stream) with SCM_RIGHTS, the protocol conmon and runc
 * use (the payload is the pty's name). Bounded. */
int console_send_master(const char *socket_path, int master_fd, char **reterr);
/* The answer to SYNC_CONSOLE m (done here) from the init or exec child at sync_fd: the pty master goes to our
 * caller when ret_master is non-NULL (sized like our stdin first, before the process can ask: the caller
 * proxies it to its terminal), else to the --console-socket socket_path; then SYNC_CONSOLE_DONE. */
int console_answer(int sync_fd, SyncMsg *m, int *ret_master, const char *socket_path, char **reterr);
/* Give to_fd (a pty) the window size of from_fd (a terminal), if it has one. */
void console_copy_winsize(int from_fd, int to_fd);
