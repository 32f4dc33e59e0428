/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The container's pty, made in the container (the host's end: src/runtime/host-console.h). */

/* In the init: open a new pty from the container's /dev/ptmx, apply consoleSize; returns master and slave. */
int console_open_pty(unsigned rows, unsigned cols, int *ret_master, int *ret_slave, char **reterr);
/* In the init: make slave the controlling terminal and stdio. */
int console_make_controlling(int slave_fd);
/* slave as stdio only (exec's process takes it as its controlling terminal in the trampoline). */
int console_make_stdio(int slave_fd);
