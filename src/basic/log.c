/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static int log_max_level = LOG_LEVEL_WARNING;
static int log_fd = -EBADF;
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

/* JSON string escaping for the log line; msg is arbitrary text. */
static void append_json_string(FILE *f, const char *s) {
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
                        fprintf(f, "\\u%04x", *p);
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

static void write_all_fd(int fd, const char *buf, size_t len) {
        while (len > 0) {
                ssize_t k = write(fd, buf, len);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return;
                }
                buf += k;
                len -= (size_t) k;
        }
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
        /* Without --log, --log-format json makes the terminal lines JSON too (runc does; callers parse them). */
        bool stderr_json = to_stderr && log_fd < 0 && log_format == LOG_FORMAT_JSON;

        if (to_file || stderr_json) {
                char *buf = NULL;
                size_t size = 0;
                FILE *f = open_memstream(&buf, &size);

                if (f) {
                        char ts[64];
                        format_now_rfc3339(ts, sizeof ts);
                        if (log_format == LOG_FORMAT_JSON) {
                                fprintf(f, "{\"level\":\"%s\",\"msg\":", level_name(level));
                                append_json_string(f, msg);
                                fprintf(f, ",\"time\":\"%s\"}\n", ts);
                        } else
                                fprintf(f, "time=\"%s\" level=%s msg=\"%s\"\n", ts, level_name(level), msg);
                        if (fclose(f) == 0)
                                write_all_fd(to_file ? log_fd : STDERR_FILENO, buf, size);
                        free(buf);
                }
        }

        if (to_stderr && !stderr_json) {
                char line_buf[4200];
                int n = snprintf(line_buf, sizeof line_buf, "sdrun: %s\n", msg);
                if (n > 0)
                        write_all_fd(STDERR_FILENO, line_buf, MIN((size_t) n, sizeof line_buf - 1));
        }

        if (to_sink)
                log_sink(level, log_container_id[0] ? log_container_id : NULL, log_unit[0] ? log_unit : NULL,
                         msg);

        errno = saved_errno;
        return -error;
}
