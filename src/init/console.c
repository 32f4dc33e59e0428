/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "console.h"
#include "error-util.h"
#include "macro.h"
#include "socket-util.h"

int console_send_master(const char *socket_path, int master_fd, char **reterr) {
        return unix_send_fd("--console-socket", socket_path, "/dev/ptmx", master_fd, reterr);
}

int console_answer(int sync_fd, SyncMsg *m, int *ret_master, const char *socket_path, char **reterr) {
        _cleanup_close_ int fd = TAKE_FD(m->fd);

        sync_msg_done(m);
        if (ret_master) {
                console_copy_winsize(STDIN_FILENO, fd);
                /* Where what the container prints goes to a file or a pipe, not a terminal, the pty does not
                 * turn each "\n" into "\r\n": the output is what the process wrote, as with runc. A terminal
                 * keeps the translation, which it needs in raw mode. */
                if (!isatty(STDOUT_FILENO)) {
                        struct termios t;
                        if (tcgetattr(fd, &t) == 0) {
                                t.c_oflag &= ~(tcflag_t) ONLCR;
                                (void) tcsetattr(fd, TCSANOW, &t);
                        }
                }
                *ret_master = TAKE_FD(fd);
        } else {
                int r = console_send_master(socket_path, fd, reterr);
                if (r < 0)
                        return r;
        }
        (void) sync_send(sync_fd, SYNC_CONSOLE_DONE, 0, NULL, 0, -EBADF);
        return 0;
}

int console_open_pty(unsigned rows, unsigned cols, int *ret_master, int *ret_slave, char **reterr) {
        _cleanup_close_ int master = -EBADF, slave = -EBADF;
        int unlock = 0;

        /* In the container's own devpts instance: /dev/ptmx is a link to pts/ptmx. */
        master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (master < 0)
                return errorf(reterr, errno, "open \"/dev/ptmx\" in the container: %m");
        if (ioctl(master, TIOCSPTLCK, &unlock) < 0)
                return -errno;
        slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (slave < 0)
                return errorf(reterr, errno, "open the pty peer: %m");
        if (rows > 0 || cols > 0) {
                struct winsize ws = { .ws_row = (unsigned short) rows, .ws_col = (unsigned short) cols };
                (void) ioctl(slave, TIOCSWINSZ, &ws);
        }
        *ret_master = TAKE_FD(master);
        *ret_slave = TAKE_FD(slave);
        return 0;
}

int console_make_controlling(int slave_fd) {
        if (setsid() < 0 && errno != EPERM)
                return -errno;
        if (ioctl(slave_fd, TIOCSCTTY, 0) < 0)
                return -errno;
        for (int i = 0; i < 3; i++)
                if (dup2(slave_fd, i) < 0)
                        return -errno;
        return 0;
}

void console_copy_winsize(int from_fd, int to_fd) {
        struct winsize ws;

        if (ioctl(from_fd, TIOCGWINSZ, &ws) == 0 && (ws.ws_row > 0 || ws.ws_col > 0))
                (void) ioctl(to_fd, TIOCSWINSZ, &ws);
}
