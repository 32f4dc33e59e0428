/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "json-util.h"
#include "macro.h"
#include "process-util.h"
#include "tap.h"

static void test_fileio(void) {
        char dir[] = "/tmp/sdrun-test-basic-XXXXXX";
        _cleanup_close_ int dfd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;

        tap_ok(mkdtemp(dir) != NULL, "mkdtemp");
        dfd = open(dir, O_DIRECTORY | O_CLOEXEC);
        tap_is_int(write_file_atomic_at(dfd, "f", "hello", 5, 0600), 0, "write_file_atomic_at");
        tap_is_int(read_full_file_at(dfd, "f", 1024, &buf, &size), 0, "read_full_file_at");
        tap_is_str(buf, "hello", "content round-trips");
        tap_is_int(size, 5, "size");
        free(TAKE_PTR(buf));
        tap_is_int(read_full_file_at(dfd, "f", 3, &buf, &size), -EFBIG, "max_size enforced");
        struct stat st;
        tap_ok(fstatat(dfd, "f", &st, 0) == 0 && (st.st_mode & 0777) == 0600, "mode");
        tap_ok(faccessat(dfd, "f.tmp", F_OK, 0) < 0, "no temporary file left");
        (void) unlinkat(dfd, "f", 0);
        (void) rmdir(dir);
}

static void test_json(void) {
        _cleanup_json_ cJSON *j = NULL;
        size_t off = 0;

        tap_is_int(json_parse("{\"a\":1}  \n", 9, &j, &off), 0, "parse with trailing whitespace");
        cJSON_Delete(TAKE_PTR(j));
        tap_is_int(json_parse("{\"a\":1} x", 9, &j, &off), -EINVAL, "trailing garbage rejected");
        tap_is_int(off, 8, "error offset points at the garbage");
        tap_is_int(json_parse("{\"a\":", 5, &j, &off), -EINVAL, "truncated document rejected");
}

static void test_process(void) {
        uint64_t st1 = 0, st2 = 0;
        char state = 0;

        tap_is_int(pid_get_start_time(getpid(), &st1), 0, "start time of self");
        tap_is_int(pid_get_start_time(getpid(), &st2), 0, "start time of self again");
        tap_ok(st1 == st2 && st1 > 0, "start time is stable");
        tap_is_int(pid_get_state(getpid(), &state), 0, "state of self");
        tap_ok(state == 'R', "self is running");
        tap_is_int(pid_get_start_time(0, &st1), -EINVAL, "pid 0 refused");
        tap_is_int(pid_get_start_time(-1, &st1), -EINVAL, "pid -1 refused");
        int fd = pidfd_open_verified(getpid(), st2 + 1);
        tap_is_int(fd, -ESRCH, "pidfd refused for a wrong start time");
        fd = pidfd_open_verified(getpid(), st2);
        tap_ok(fd >= 0, "pidfd for the right start time");
        safe_close(fd);
        tap_is_int(pidfd_open_verified(-1, 0), -ESRCH, "pidfd for pid -1 refused");
}

int main(void) {
        test_fileio();
        test_json();
        test_process();
        return tap_done();
}
