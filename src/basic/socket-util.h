/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Hand fd to the AF_UNIX stream socket at path, as runc does for --console-socket and --pidfd-socket: one
 * message whose payload is name and whose SCM_RIGHTS carry the fd. option names the command line option in
 * the message of a failure (*reterr). Bounded: a listener that never accepts fails the send after 10 s. */
int unix_send_fd(const char *option, const char *path, const char *name, int fd, char **reterr);
