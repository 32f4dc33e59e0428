/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The foreground of `run`, `exec` and `restore`: the runtime stays the process whose exit is the container
 * process's, forwarding the signals it gets, proxying the pty, and forwarding the notify socket. */

#include <sys/types.h>

#include "notify.h"

/* Block the signals a foreground run/exec forwards and return a signalfd for them (-errno). */
int foreground_block_signals(void);
/* Wait for a child, forwarding the signals read from sfd to it (pidfd); its exit status as a shell reports it
 * (128 + signal when killed), or -errno. master >= 0: a pty master to proxy to our stdio. notify (NULL: none):
 * what the container sends to its notify socket (NOTIFY_SOCKET), forwarded within its limits. */
int foreground_wait(pid_t pid, int pidfd, int sfd, int master, NotifyProxy *notify);
