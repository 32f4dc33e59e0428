/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static int log_max_level = LOG_LEVEL_WARNING;
static int log_fd = -EBADF;
static int log_stderr_fd = STDERR_FILENO;
static LogFormat log_format = LOG_FORMAT_TEXT;
static log_sink_t log_sink;
static char log_container_id[256];
static char log_unit[512];

void log_set_max_level(int level) {
        log_max_level = level;
}

int log_get_max_level(void) {
        return log_max_level;
}

void log_set_sink(log_sink_t sink) {
        log_sink = sink;
}

void log_set_context(const char *container_id, const char *unit) {
        snprintf(log_container_id, sizeof log_container_id, "%s", strempty(container_id));
        snprintf(log_unit, sizeof log_unit, "%s", strempty(unit));
}

int log_open_file(const char *path, LogFormat format) {
        log_format = format;
        if (!path)
                return 0;

        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0640);
        if (fd < 0)
                return -errno;
        log_close();
        log_fd = fd;
        return 0;
}

void log_close(void) {
        log_fd = safe_close(log_fd);
}

int log_pin_stderr(int min_fd) {
        if (log_stderr_fd != STDERR_FILENO)
                return 0;
        int fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, min_fd);
        if (fd < 0)
                return -errno;
        log_stderr_fd = fd;
        return 0;
}

void log_unpin_stderr(void) {
        struct stat a, b;

        if (log_stderr_fd < 0 || log_stderr_fd == STDERR_FILENO)
                return;
        bool same = fstat(log_stderr_fd, &a) >= 0 && fstat(STDERR_FILENO, &b) >= 0 && a.st_dev == b.st_dev &&
                    a.st_ino == b.st_ino;
        safe_close(log_stderr_fd);
        log_stderr_fd = same ? STDERR_FILENO : -EBADF;
}

static const char *level_name(int level) {
        switch (level) {
        case LOG_LEVEL_ERR:
                return "error";
        case LOG_LEVEL_WARNING:
                return "warning";
        case LOG_LEVEL_INFO:
                return "info";
        default:
                return "debug";
        }
}

/* The msg of a log line, quoted: a JSON string, or a quoted logfmt value (the same escapes, as runc's logrus
 * text format writes it). msg is arbitrary text. */
static void append_quoted(FILE *f, const char *s, bool json) {
        static const char *const escapes[UCHAR_MAX + 1] = {
                ['"'] = "\\\"",
                ['\\'] = "\\\\",
                ['\n'] = "\\n",
                ['\t'] = "\\t",
        };

        fputc('"', f);
        for (const unsigned char *p = (const unsigned char *) s; *p; p++)
                if (escapes[*p])
                        fputs(escapes[*p], f);
                else if (*p < 0x20)
                        fprintf(f, json ? "\\u%04x" : "\\x%02x", *p);
                else
                        fputc(*p, f);
        fputc('"', f);
}

void format_now_rfc3339(char *buf, size_t n) {
        struct timespec ts;
        struct tm tm;

        clock_gettime(CLOCK_REALTIME, &ts);
        gmtime_r(&ts.tv_sec, &tm);
        size_t k = strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(buf + k, n - k, ".%09ldZ", ts.tv_nsec);
}

/* A log line never kills its writer: a stderr that is a pipe nobody reads any more (the init's, once the
 * create that owned it has returned and its caller closed the pipe) fails with EPIPE, and the SIGPIPE it
 * raises is taken back, unless one was pending before. */
static void write_all_fd(int fd, const char *buf, size_t len) {
        sigset_t pipe_set, saved;
        bool epipe = false;

        sigemptyset(&pipe_set);
        sigaddset(&pipe_set, SIGPIPE);
        if (pthread_sigmask(SIG_BLOCK, &pipe_set, &saved) != 0)
                return;
        while (len > 0) {
                ssize_t k = write(fd, buf, len);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        epipe = errno == EPIPE;
                        break;
                }
                buf += k;
                len -= (size_t) k;
        }
        if (epipe && !sigismember(&saved, SIGPIPE)) {
                const struct timespec zero = {};
                while (sigtimedwait(&pipe_set, NULL, &zero) > 0)
                        ;
        }
        (void) pthread_sigmask(SIG_SETMASK, &saved, NULL);
}

int log_internal(int level, int error, const char *file, int line, const char *func, const char *fmt, ...) {
        int saved_errno = errno;
        char msg[4096];
        va_list ap;

        (void) file;
        (void) line;
        (void) func;

        if (error < 0)
                error = -error;

        /* The sink (the journal) gets informational messages too: they are what admins look for there. */
        /* The log file and the sink (the journal) get informational messages too (runc logs at info level
         * by default): hook output, "created container", ... The terminal shows warnings and errors. */
        int record_level = MAX(log_max_level, LOG_LEVEL_INFO);
        bool to_sink = log_sink && level <= record_level;
        bool to_file = log_fd >= 0 && level <= record_level;
        if (level > log_max_level && !to_sink && !to_file) {
                errno = saved_errno;
                return -error;
        }

        /* %m must print the error we were given, not whatever errno is. */
        errno = error;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);

        bool to_stderr = level <= log_max_level && (log_fd < 0 || level <= LOG_LEVEL_ERR);
        /* Without --log, the terminal lines are log lines too with --log-format json (runc does; callers parse
         * them) and with --debug (their times are what one debugs with; runc's tests look for level=debug). */
        bool stderr_structured = to_stderr && log_fd < 0 &&
                                 (log_format == LOG_FORMAT_JSON || log_max_level >= LOG_LEVEL_DEBUG);

        if (to_file || stderr_structured) {
                char *buf = NULL;
                size_t size = 0;
                FILE *f = open_memstream(&buf, &size);

                if (f) {
                        char ts[64];
                        bool json = log_format == LOG_FORMAT_JSON;
                        format_now_rfc3339(ts, sizeof ts);
                        if (json)
                                fprintf(f, "{\"level\":\"%s\",\"msg\":", level_name(level));
                        else
                                fprintf(f, "time=\"%s\" level=%s msg=", ts, level_name(level));
                        append_quoted(f, msg, json);
                        if (json)
                                fprintf(f, ",\"time\":\"%s\"}\n", ts);
                        else
                                fputc('\n', f);
                        if (fclose(f) == 0)
                                write_all_fd(to_file ? log_fd : log_stderr_fd, buf, size);
                        free(buf);
                }
        }

        if (to_stderr && !stderr_structured) {
                char line_buf[4200];
                int n = snprintf(line_buf, sizeof line_buf, "sdrun: %s\n", msg);
                if (n > 0)
                        write_all_fd(log_stderr_fd, line_buf, MIN((size_t) n, sizeof line_buf - 1));
        }

        if (to_sink)
                log_sink(level, log_container_id[0] ? log_container_id : NULL, log_unit[0] ? log_unit : NULL,
                         msg);

        errno = saved_errno;
        return -error;
}
