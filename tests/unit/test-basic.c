/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileio.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "process-util.h"
#include "spawn-util.h"
#include "string-util.h"
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

        _cleanup_free_ char *pid_path = strdup_printf("%s/pid", dir);
        tap_is_int(write_pid_file(pid_path, 4711), 0, "write_pid_file");
        free(TAKE_PTR(buf));
        tap_is_int(read_full_file_at(dfd, "pid", 1024, &buf, &size), 0, "read the pid file");
        tap_is_str(buf, "4711", "pid file: the pid, no newline");
        tap_is_int(write_pid_file("/nonexistent-sdrun-dir/pid", 1), -ENOENT,
                   "pid file in a missing directory");
        (void) unlinkat(dfd, "pid", 0);
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

        /* proc_stat_is_dying(): a pending SIGKILL, or PF_EXITING (0x4) on the last thread only */
        tap_ok(!proc_stat_is_dying(&(ProcStat){ .state = 'S', .threads = 1 }), "a sleeping process is not dying");
        tap_ok(proc_stat_is_dying(&(ProcStat){ .state = 'S', .threads = 3, .sigpending = 1ULL << (SIGKILL - 1) }),
               "one with SIGKILL pending is");
        tap_ok(!proc_stat_is_dying(&(ProcStat){ .state = 'S', .threads = 1, .sigpending = 1ULL << (SIGTERM - 1) }),
               "one with SIGTERM pending is not");
        tap_ok(proc_stat_is_dying(&(ProcStat){ .state = 'R', .flags = 0x4, .threads = 1 }),
               "a single thread in do_exit() is");
        tap_ok(!proc_stat_is_dying(&(ProcStat){ .state = 'R', .flags = 0x4, .threads = 2 }),
               "a leader exiting alone while another thread runs is not");
        ProcStat self;
        if (tap_is_int(pid_read_stat(getpid(), &self), 0, "pid_read_stat of self"))
                tap_ok(self.state == 'R' && self.threads == 1 && self.start_time == st2 && self.sigpending == 0,
                       "... running, one thread, its start time, nothing pending");

        /* flock_holder_pid(): who took the flock() on a file, from /proc/locks */
        char lockpath[] = "/tmp/sdrun-test-lock.XXXXXX";
        int lfd = mkstemp(lockpath);
        if (tap_ok(lfd >= 0, "a file to lock")) {
                pid_t holder = -1;
                tap_is_int(flock_holder_pid(lfd, &holder), 0, "flock_holder_pid: no lock, no holder");
                if (tap_ok(flock(lfd, LOCK_EX) == 0, "flock it")) {
                        tap_is_int(flock_holder_pid(lfd, &holder), 1, "flock_holder_pid: a holder");
                        tap_is_int(holder, getpid(), "... ourselves");
                }
                (void) unlink(lockpath);
                safe_close(lfd);
        }

        /* proc_stat_is_dying() of pid_read_stat(): no for ourselves, yes for a zombie (it kept PF_EXITING),
         * -ESRCH once reaped */
        tap_is_int(pid_read_stat(getpid(), &self) >= 0 ? proc_stat_is_dying(&self) : -1, 0, "pid_is_dying: self is not");
        pid_t child = fork();
        if (child == 0)
                _exit(0);
        siginfo_t si = { 0 };
        if (tap_ok(child > 0 && waitid(P_PID, (id_t) child, &si, WEXITED | WNOWAIT) == 0, "a child that exits")) {
                ProcStat zst;
                tap_is_int(pid_read_stat(child, &zst) >= 0 ? proc_stat_is_dying(&zst) : -1, 1,
                           "pid_is_dying: an unreaped child that exited is");
                (void) waitpid(child, NULL, 0);
                tap_is_int(pid_read_stat(child, &zst), -ESRCH, "pid_is_dying: a reaped one is gone");
        }
}

static void test_poll_until(void) {
        _cleanup_close_pair_ int p[2] = { -EBADF, -EBADF };

        if (!tap_ok(pipe2(p, O_CLOEXEC) == 0, "pipe for poll_until()"))
                return;
        struct pollfd q = { .fd = p[0], .events = POLLIN };
        uint64_t t0 = now_usec(CLOCK_MONOTONIC);
        tap_is_int(poll_until(&q, 1, deadline_after(20 * USEC_PER_MSEC)), -ETIMEDOUT,
                   "nothing to read: -ETIMEDOUT");
        tap_ok(now_usec(CLOCK_MONOTONIC) - t0 >= 19 * USEC_PER_MSEC, "... after the deadline");
        tap_is_int(poll_until(&q, 1, deadline_after(0)), -ETIMEDOUT, "a timeout of 0 looks once");
        tap_ok(write(p[1], "x", 1) == 1, "write a byte");
        tap_is_int(poll_until(&q, 1, deadline_after(0)), 1, "a spent deadline still sees the byte");
        tap_is_int(poll_until(&q, 1, USEC_INFINITY), 1, "no deadline: ready");
}

static void test_strings(void) {
        char text[] = "one\ntwo\n\nafter an empty line", *p = text, *line;
        _cleanup_free_ char *s = NULL;

        tap_is_str(next_line(&p), "one", "first line");
        tap_is_str(next_line(&p), "two", "second line");
        tap_is_str(next_line(&p), "", "an empty line");
        tap_is_str(next_line(&p), "after an empty line", "the last line, without a newline");
        tap_ok(!next_line(&p) && !p, "then the end");
        char framed[] = "x\n", *r = framed;
        tap_ok(next_line(&r) && !next_line(&r),
               "a final newline ends the text, without an empty line after it");
        char empty[] = "", *q = empty;
        tap_ok(!(line = next_line(&q)), "no line in an empty text");

        tap_is_int(free_and_strdup(&s, "a"), 0, "free_and_strdup() into NULL");
        tap_is_int(free_and_strdup(&s, "b"), 0, "free_and_strdup() over a string");
        tap_is_str(s, "b", "the new copy");
        s = mfree(s);
        s = strdup_printf("%s-%d", "x", 42);
        tap_is_str(s, "x-42", "strdup_printf()");

        tap_ok(path_is_at_or_below("/a/b", "/a"), "path_is_at_or_below(): a child");
        tap_ok(path_is_at_or_below("/a", "/a/"),
               "path_is_at_or_below(): the path itself, trailing slash ignored");
        tap_ok(!path_is_at_or_below("/ab", "/a"), "path_is_at_or_below(): whole components only");
        tap_ok(path_is_at_or_below("/x", "/"), "path_is_at_or_below(): everything is below /");
}

static void test_log_json(void) {
        char path[] = "/tmp/sdrun-test-log.XXXXXX";
        _cleanup_close_ int fd = mkstemp(path);
        _cleanup_free_ char *buf = NULL;

        if (!tap_ok(fd >= 0, "a log file"))
                return;
        tap_is_int(log_open_file(path, LOG_FORMAT_JSON), 0, "open it as a JSON log");
        log_error("q\"b\\n\nt\tc\001 \303\251");
        log_close();
        tap_is_int(read_full_file_at(AT_FDCWD, path, 4096, &buf, NULL), 0, "read it back");
        tap_ok(buf && strstr(buf, "\"q\\\"b\\\\n\\nt\\tc\\u0001 \303\251\""), "the message is escaped: %s",
               strna(buf));
        (void) unlink(path);
}

static void spawn_exec_argv(void *userdata) {
        char **argv = userdata;
        execv(argv[0], argv);
}

static void spawn_exec_nothing(void *userdata) {
        (void) userdata;
}

/* spawn_run(): the input fed and the output collected, keep_fd the one fd above stderr that the child keeps,
 * an exec that returns, the deadline. */
static void test_spawn(void) {
        _cleanup_free_ char *err = NULL;
        SpawnResult res;
        char *cat[] = { (char *) "/bin/cat", NULL };
        char *ls[] = { (char *) "/bin/ls", (char *) "-1", (char *) "/proc/self/fd", NULL };
        char *sleep5[] = { (char *) "/bin/sleep", (char *) "5", NULL };

        tap_is_int(spawn_run(&(SpawnParams){ .input = "abc\n",
                                             .input_len = 4,
                                             .keep_fd = -EBADF,
                                             .timeout_usec = 10 * USEC_PER_SEC,
                                             .exec = spawn_exec_argv,
                                             .userdata = cat },
                             &res, &err),
                   0, "spawn_run(cat): 0");
        tap_ok(!res.timed_out && res.code == CLD_EXITED && res.status == 0, "cat exits 0");
        tap_is_str(res.output, "abc\n", "the input comes back as output");

        /* Two fds of ours without O_CLOEXEC (and any the test inherited): the child keeps keep_fd alone, ls
         * opens its own (3, or 4 where keep_fd is 3: the other one is above). */
        int keep = fcntl(STDERR_FILENO, F_DUPFD, 3), leak = fcntl(STDERR_FILENO, F_DUPFD, 5);
        tap_is_int(spawn_run(&(SpawnParams){ .keep_fd = keep,
                                             .timeout_usec = 10 * USEC_PER_SEC,
                                             .exec = spawn_exec_argv,
                                             .userdata = ls },
                             &res, &err),
                   0, "spawn_run(ls /proc/self/fd) with keep_fd %d: 0", keep);
        char want_keep[32], want_leak[32], fds[SPAWN_OUTPUT_MAX + 2];
        snprintf(fds, sizeof fds, "\n%s", res.output);
        snprintf(want_keep, sizeof want_keep, "\n%d\n", keep);
        snprintf(want_leak, sizeof want_leak, "\n%d\n", leak);
        size_t n_fds = 0;
        for (const char *q = res.output; *q; q++)
                n_fds += *q == '\n';
        tap_ok(strstr(fds, "\n0\n1\n") && strstr(fds, "\n2\n") && strstr(fds, want_keep) &&
                       !strstr(fds, want_leak) && n_fds == 5,
               "the child has stdio, keep_fd %d, its own and no other fd of ours (not %d)", keep, leak);
        safe_close(keep);
        safe_close(leak);

        tap_is_int(spawn_run(&(SpawnParams){ .keep_fd = -EBADF,
                                             .timeout_usec = 10 * USEC_PER_SEC,
                                             .exec = spawn_exec_nothing },
                             &res, &err),
                   0, "spawn_run() with an exec that returns: 0");
        tap_ok(res.code == CLD_EXITED && res.status == 127, "the child exits 127 (%d, %d)", res.code,
               res.status);

        uint64_t t0 = now_usec(CLOCK_MONOTONIC);
        tap_is_int(spawn_run(&(SpawnParams){ .keep_fd = -EBADF,
                                             .timeout_usec = 200 * USEC_PER_MSEC,
                                             .exec = spawn_exec_argv,
                                             .userdata = sleep5 },
                             &res, &err),
                   0, "spawn_run(sleep 5) with a deadline of 200 ms: 0");
        uint64_t dt = now_usec(CLOCK_MONOTONIC) - t0;
        tap_ok(res.timed_out && res.code == CLD_KILLED && res.status == SIGKILL, "killed at the deadline");
        tap_ok(dt < 3 * USEC_PER_SEC, "returns at the deadline (%llu ms)", (unsigned long long) (dt / 1000));
}

int main(void) {
        test_fileio();
        test_json();
        test_process();
        test_poll_until();
        test_strings();
        test_log_json();
        test_spawn();
        return tap_done();
}
