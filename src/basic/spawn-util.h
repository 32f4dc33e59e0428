/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What spawn_run() keeps of a child's output. */
#define SPAWN_OUTPUT_MAX 8192

/* One child, run to its end. */
typedef struct SpawnParams {
        /* Written to the child's stdin while it runs, which is then closed (input_len 0: at EOF at once). A
         * child that closes its stdin early is fine: no SIGPIPE reaches the caller. */
        const char *input;
        size_t input_len;
        /* The child's working directory (NULL: the caller's; one the child cannot enter: "/"). */
        const char *cwd;
        /* An fd >= 3 the child keeps open when all others above stderr are closed (or -EBADF). */
        int keep_fd;
        /* From the fork on: the child is killed (SIGKILL) when it outlives this. */
        uint64_t timeout_usec;
        /* Called in the child once its stdin is the input pipe, its stdout and stderr the output pipe, every
         * other fd (but keep_fd) closed, the signal mask empty, the cwd entered and PR_SET_PDEATHSIG set (a
         * child whose parent already died exits 126 first): executes the program. If it returns, the child
         * exits 127 (it says why on stderr itself). */
        void (*exec)(void *userdata);
        void *userdata;
} SpawnParams;

typedef struct SpawnResult {
        bool timed_out; /* killed at the deadline */
        int code;       /* how the child ended, as waitid() tells it: CLD_EXITED, CLD_KILLED, CLD_DUMPED */
        int status;     /* its exit status, or the signal */
        size_t output_len;
        char output[SPAWN_OUTPUT_MAX +
                    1]; /* its stdout and stderr, the first SPAWN_OUTPUT_MAX bytes, NUL-terminated */
} SpawnResult;

/* Fork a child, feed it the input, collect its output, and wait until it exits (a grandchild still holding
 * the output pipe keeps nobody waiting) or the deadline passes (then it is killed), bounded; the child is
 * always reaped. Returns 0 with *ret filled whatever the child did, or a negative errno with a message
 * ("fork: ...", "pidfd_open: ...") in *reterr when it could not be run or watched. */
int spawn_run(const SpawnParams *p, SpawnResult *ret, char **reterr);
