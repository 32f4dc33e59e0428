/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "sync.h"

/* Send the pty master to the --console-socket (AF_UNIX stream) with SCM_RIGHTS, the protocol conmon and runc
 * use (the payload is the pty's name). Bounded. */
int console_send_master(const char *socket_path, int master_fd, char **reterr);
/* On the host, the answer to SYNC_CONSOLE m (done here) from the init or exec child at sync_fd: the pty master
 * goes to our caller when ret_master is non-NULL (sized like our stdin first, before the process can ask: the
 * caller proxies it to its terminal), else to the --console-socket socket_path; then SYNC_CONSOLE_DONE. */
int console_answer(int sync_fd, SyncMsg *m, int *ret_master, const char *socket_path, char **reterr);
/* In the init: open a new pty from the container's /dev/ptmx, apply consoleSize; returns master and slave. */
int console_open_pty(unsigned rows, unsigned cols, int *ret_master, int *ret_slave, char **reterr);
/* In the init: make slave the controlling terminal and stdio. */
int console_make_controlling(int slave_fd);
/* Give to_fd (a pty) the window size of from_fd (a terminal), if it has one. */
void console_copy_winsize(int from_fd, int to_fd);
