/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "host-console.h"
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

void console_copy_winsize(int from_fd, int to_fd) {
        struct winsize ws;

        if (ioctl(from_fd, TIOCGWINSZ, &ws) == 0 && (ws.ws_row > 0 || ws.ws_col > 0))
                (void) ioctl(to_fd, TIOCSWINSZ, &ws);
}
