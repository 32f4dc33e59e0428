/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What src/init, src/oci and src/basic take from glibc 2.36 that musl 1.2.3 lacks, for build-musl-probe.sh
 * (a measurement, not a port): the new mount API and statx, declared from the kernel's headers and called
 * with syscall(). Included before everything else with -include. */
#pragma once

#include <fcntl.h>
#include <linux/mount.h>
#include <linux/stat.h>
#include <stddef.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int fsopen(const char *fs_name, unsigned flags);
int fsconfig(int fd, unsigned cmd, const char *key, const void *value, int aux);
int fsmount(int fd, unsigned flags, unsigned attr_flags);
int open_tree(int dfd, const char *path, unsigned flags);
int move_mount(int from_dfd, const char *from_path, int to_dfd, const char *to_path, unsigned flags);
int mount_setattr(int dfd, const char *path, unsigned flags, struct mount_attr *attr, size_t size);
int statx(int dfd, const char *path, int flags, unsigned mask, struct statx *buf);
