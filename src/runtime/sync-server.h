/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The runtime's one server for what the container side says over the sync protocol (sync.h): create serving
 * the init's setup, start serving the init until it has exec'd the process, exec serving its child until it
 * has exec'd. Each caller gives a handler per message type it expects; the server does the rest the same way
 * for all three: a bounded wait that also ends on the caller's SIGTERM, SIGINT or SIGHUP, the peer's
 * SYNC_ERROR, a message nobody expects, and what happens to the peer then: any failure kills it through its
 * pidfd (waited for, bounded) before sync_serve() returns. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "oci-config.h"
#include "sync.h"

/* How the server words its failures (each caller's texts; clients and tests match them). */
typedef struct SyncWording {
        const char *peer; /* "the container init": "sync with PEER: ...", "unexpected message N from PEER" */
        const char *prefix;    /* before an interruption: "start container \"ID\": " (may be "") */
        const char *awaited;   /* "interrupted by SIGTERM while waiting for AWAITED" */
        const char *killed;    /* NULL, or what the kill hit: "; KILLED was killed" after an interruption */
        const char *timed_out; /* the whole message when the peer did not answer in time */
        const char *error_prefix;  /* before the peer's own SYNC_ERROR message (may be "") */
        const char *error_default; /* a SYNC_ERROR without a message */
} SyncWording;

typedef struct SyncServer SyncServer;

/* A message's handler: < 0 fails the serve (with *reterr), 0 serves on, > 0 ends it with success. The handler
 * owns m (sync_msg_done() is called after it in any case). */
typedef int (*SyncHandler)(SyncServer *s, SyncMsg *m, char **reterr);

struct SyncServer {
        int sock;  /* ours of the sync socket */
        int pidfd; /* the peer's: its death ends a wait at once, and the kill goes through it */
        uint64_t timeout_usec;
        const SyncWording *wording;
        /* Indexed by SyncType; NULL: unexpected. SYNC_ERROR is the server's. */
        SyncHandler handlers[SYNC_EXEC + 1];
        /* The peer closed its end or died: < 0 fails (as a handler), >= 0 ends the serve with that. NULL: a
         * failure worded as "PEER died". */
        int (*on_hangup)(SyncServer *s, char **reterr);
        void *userdata;
        /* Set by the server: SYNC_EXEC was seen (the hop ran: the process is the container's). */
        bool exec_seen;
        /* Set by the server after a failure: the peer is dead (false: sent SIGKILL, not dead in time). */
        bool peer_dead;
};

/* Serve until a handler or on_hangup ends it (its value, >= 0) or something fails (< 0, *reterr set, the
 * peer killed). */
int sync_serve(SyncServer *s, char **reterr);

/* Handlers several callers share. SYNC_EXEC: s->exec_seen. */
int sync_handle_exec(SyncServer *s, SyncMsg *m, char **reterr);
/* SYNC_SECCOMP_FD: the listener to linux.seccomp.listenerPath's agent with the state JSON state_json for the
 * process pid, then SYNC_SECCOMP_FD_DONE. */
int sync_answer_seccomp(SyncServer *s, SyncMsg *m, const OciSeccomp *seccomp, pid_t pid,
                        const char *state_json, char **reterr);
