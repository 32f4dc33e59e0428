/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "console.h"
#include "error-util.h"
#include "macro.h"

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

int console_make_stdio(int slave_fd) {
        for (int i = 0; i < 3; i++)
                if (dup2(slave_fd, i) < 0)
                        return -errno;
        return 0;
}

int console_make_controlling(int slave_fd) {
        if (setsid() < 0 && errno != EPERM)
                return -errno;
        if (ioctl(slave_fd, TIOCSCTTY, 0) < 0)
                return -errno;
        return console_make_stdio(slave_fd);
}
