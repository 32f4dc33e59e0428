/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The last execve into a container, made from a sealed copy of a tiny static program (trampoline/): the
 * process that executes a container-controlled program — the init's user process, an exec'd process, a hook
 * run inside the container — has that memfd as its /proc/self/exe at that moment, never the runtime's own
 * binary (the CVE-2019-5736 class). A program that resolves to /proc/self/exe then runs the trampoline
 * again, which is harmless: the memfd is sealed against writes, and the trampoline has no ELF interpreter a
 * hostile image could substitute. The trampoline has no file capabilities and is not setuid, so the two
 * execve calls transform capabilities exactly as one would. */

#include <stdbool.h>

#include "oci-config.h"

/* A fresh sealed (write, grow, shrink, seal) close-on-exec memfd holding the trampoline. */
int trampoline_open(int *ret_fd);

/* Does linux.seccomp (loaded before the hop) refuse execveat? Then trampoline_execve() uses execve of
 * /proc/self/fd/N instead, which needs a procfs at /proc. */
bool trampoline_seccomp_blocks_execveat(const OciSeccomp *s);

/* This process's fd directory, verified to be reached through the root of a procfs at /proc (close-on-exec;
 * else "/proc/self/fd is not on procfs" in *reterr): what the path form below needs, opened before the
 * seccomp filter is loaded, which may refuse what the check needs. */
int trampoline_open_proc_fd(char **reterr);

/* Does linux.seccomp (loaded before the hop) let the trampoline clone the process into the pid namespace
 * (TRAMPOLINE_FORK: clone with CLONE_PARENT|CLONE_VFORK, prctl PR_SET_PDEATHSIG, setsid, and with a
 * terminal ioctl TIOCSCTTY)? Judged on the profile's rules for exactly those arguments; anything a rule could
 * refuse says no. */
bool trampoline_seccomp_allows_fork(const OciSeccomp *s, bool terminal);

typedef enum TrampolineFlags {
        /* Clone the process into the pid namespace we joined for our children (as our parent's child) and
         * execute the program there; we exit once it has (see trampoline/sdrun-trampoline.c). */
        TRAMPOLINE_FORK = 1 << 0,
        /* With TRAMPOLINE_FORK: the new process makes fd 0 its controlling terminal. */
        TRAMPOLINE_CTTY = 1 << 1,
} TrampolineFlags;

/* Execute path with argv/envp through the trampoline in tramp_fd. sync_fd (or -1) must not be close-on-exec:
 * the trampoline says SYNC_EXEC there once it runs (the runtime's proof that the process is the container's
 * from now on: not the comm, which that process can write), marks it close-on-exec before the final
 * execve, and reports a failing one (SYNC_EXEC_FAILED). Without execveat (avoid_execveat, or refused), N is
 * looked up in proc_fd_dir (from trampoline_open_proc_fd(); -1: open it now), never in whatever the
 * container has at /proc. Returns only on failure to run the trampoline itself (-errno, the reason in
 * *reterr). */
int trampoline_execve(int tramp_fd, bool avoid_execveat, int proc_fd_dir, const char *path,
                      char *const argv[], char *const envp[], int sync_fd, TrampolineFlags flags,
                      char **reterr);
