/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The seals of a sealed copy (sealed-exec.c, the trampoline): against writes, growth, shrinking and seals. */
#define FD_SEALS_ALL (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)
/* A memfd with every one of FD_SEALS_ALL. */
bool fd_is_sealed(int fd);
/* Nothing can write the file through any open of it (/proc/PID/exe, /proc/PID/fd/N): a sealed memfd, or a
 * file on a read-only mount, which a container cannot remount (it is not in its mount namespace). */
bool fd_is_write_protected(int fd);

/* Read a whole file (at most max_size bytes, else -EFBIG), NUL-terminated. dir_fd may be AT_FDCWD. */
int read_full_file_at(int dir_fd, const char *path, size_t max_size, char **ret, size_t *ret_size);
/* The same for the file name in the directory dir (a path). */
int read_full_file_in(const char *dir, const char *name, size_t max_size, char **ret);
/* write + fsync + rename into place; the file is created with mode. */
int write_file_atomic_at(int dir_fd, const char *path, const void *data, size_t size, mode_t mode);
/* "PID" (no newline) to path, atomically: the directory is opened once, the file renamed into place
 * in it, so a reader (conmon reads it as soon as create exits) never sees a partial one. */
int write_pid_file(const char *path, pid_t pid);
/* Write a short string to an existing file (cgroupfs, procfs). */
int write_string_file(const char *path, const char *s);
int write_string_file_at(int dir_fd, const char *path, const char *s);

/* Where this process's own "/proc/self/..." (and "/proc/thread-self/...") resolves: the procfs mounted at
 * /proc, or, once proc_set_root() was given one, a procfs root opened earlier (exec's child, which joins the
 * container's mount namespace but stays outside its pid namespace, where the container's /proc has no "self"
 * for it). For an *at() call: proc_dir_fd() (AT_FDCWD by default) and proc_rel("/proc/self/X"), which maps
 * only this process's own entries and leaves every other path as it is. */
void proc_set_root(int fd);
int proc_dir_fd(void);
const char *proc_rel(const char *abs_path);
int loop_write(int fd, const void *buf, size_t n);
int loop_read(int fd, void *buf, size_t n);
