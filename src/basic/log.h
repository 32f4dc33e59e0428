/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdarg.h>
#include <stdbool.h>

#include "macro.h"

/* Levels follow syslog priorities so that a journal backend can use them as they are. */
enum {
        LOG_LEVEL_ERR = 3,
        LOG_LEVEL_WARNING = 4,
        LOG_LEVEL_INFO = 6,
        LOG_LEVEL_DEBUG = 7,
};

typedef enum LogFormat {
        LOG_FORMAT_TEXT,
        LOG_FORMAT_JSON,
} LogFormat;

/* An optional extra sink (the journal backend registers one). It receives every message at or below the
 * maximum level together with the container id set by log_set_context(). */
typedef void (*log_sink_t)(int level, const char *container_id, const char *unit, const char *msg);

void log_set_max_level(int level);
int log_get_max_level(void);
/* path NULL: stderr only. Opens with O_APPEND|O_CLOEXEC. Returns negative errno. */
int log_open_file(const char *path, LogFormat format);
void log_set_context(const char *container_id, const char *unit);
void log_set_sink(log_sink_t sink);
/* Close the log file (e.g. in a child about to exec). */
void log_close(void);
/* In a child that will hand its stdio to the container (the init, exec's child): terminal lines go on to the
 * runtime's stderr through a close-on-exec copy at or above min_fd, not to the container's console. */
int log_pin_stderr(int min_fd);
/* The child's work for the runtime is done (the init has committed): the copy goes, so that a caller that
 * reads the runtime's stderr to its end is not held until the container stops. Lines go on to fd 2 only if
 * it is still that same file (no console took its place); else nowhere but a --log file. */
void log_unpin_stderr(void);

/* The current UTC time as RFC 3339 with nanoseconds ("2026-12-02T03:04:05.123456789Z"): the log's "time"
 * and the state's "created". n >= 32. */
void format_now_rfc3339(char *buf, size_t n);

int log_internal(int level, int error, const char *file, int line, const char *func, const char *fmt, ...)
        _printf_(6, 7);

/* All return -abs(error) (or 0 where error is 0), so that `return log_error_errno(r, "...")` works. %m
 * prints strerror(error). */
#define log_full_errno(level, error, ...) \
        log_internal((level), (error), __FILE__, __LINE__, __func__, __VA_ARGS__)

#define log_debug(...) log_full_errno(LOG_LEVEL_DEBUG, 0, __VA_ARGS__)
#define log_info(...) log_full_errno(LOG_LEVEL_INFO, 0, __VA_ARGS__)
#define log_warning(...) log_full_errno(LOG_LEVEL_WARNING, 0, __VA_ARGS__)
#define log_error(...) log_full_errno(LOG_LEVEL_ERR, 0, __VA_ARGS__)

#define log_debug_errno(e, ...) log_full_errno(LOG_LEVEL_DEBUG, (e), __VA_ARGS__)
#define log_info_errno(e, ...) log_full_errno(LOG_LEVEL_INFO, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) log_full_errno(LOG_LEVEL_WARNING, (e), __VA_ARGS__)
#define log_error_errno(e, ...) log_full_errno(LOG_LEVEL_ERR, (e), __VA_ARGS__)

#define log_oom() log_error_errno(ENOMEM, "Out of memory.")
