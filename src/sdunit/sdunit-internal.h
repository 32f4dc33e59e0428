/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Private to src/sdunit: the connection object and helpers shared by bus.c, scope.c and unit-ops.c. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-bus.h>

#include "libsystemd-dl.h"
#include "macro.h"
#include "sdunit.h"

#define SD_DEST "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_IFACE_MANAGER "org.freedesktop.systemd1.Manager"
#define SD_IFACE_UNIT "org.freedesktop.systemd1.Unit"
#define SD_IFACE_SCOPE "org.freedesktop.systemd1.Scope"

/* The result of one job, filled by the JobRemoved handler. */
typedef struct SdUnitJobWait {
        char *job_path; /* what we wait for */
        bool done;
        char *result; /* "done", "failed", "canceled", "timeout", "dependency", "skipped", ... */
        struct SdUnitJobWait *next;
} SdUnitJobWait;

struct SdUnitBus {
        unsigned n_ref;
        pid_t pid; /* the process that opened it: sd-bus connections do not survive fork() */
        bool user;
        bool direct;     /* peer-to-peer connection to the manager's private socket (no broker) */
        int watch_error; /* errno of a failed AddMatch or Subscribe (their replies are not waited for) */
        char *watch_error_message;
        sd_bus *bus;
        sd_bus_slot *job_removed_slot;
        SdUnitJobWait *waits;
};

/* errwrap() for a failed bus call: fill *reterr with "<prefix>: <error name>: <message>" (or "<prefix>:
 * strerror" when e is unset) and return r (< 0). Messages that say everything themselves use errorf(). */
int sdunit_fail(char **reterr, int r, const sd_bus_error *e, const char *fmt, ...) _printf_(4, 5);

/* A new reference to this process's open system-bus connection (through the broker, not PID 1's private
 * socket), for calls to other services on the same connection; NULL when there is none. */
sd_bus *sdunit_bus_ref_system_broker(void);

/* Install (once per connection) the JobRemoved match and subscribe to the manager's signals. */
int sdunit_bus_watch_jobs(SdUnitBus *b, char **reterr);
/* Wait until the job at `w->job_path` is removed or timeout_usec passes (-ETIMEDOUT). The wait must have
 * been registered with sdunit_job_wait_register() before the call that created the job returned. */
void sdunit_job_wait_register(SdUnitBus *b, SdUnitJobWait *w);
void sdunit_job_wait_unregister(SdUnitBus *b, SdUnitJobWait *w);
int sdunit_job_wait_run(SdUnitBus *b, SdUnitJobWait *w, uint64_t deadline_usec);
/* Read the job path of a manager call's reply ("o") into w and wait for that job as above: w->result then
 * says how it ended. Failures read "<action> <unit>: read job path" or "...: wait for job <path>". */
int sdunit_job_wait_reply(SdUnitBus *b, sd_bus_message *reply, SdUnitJobWait *w, uint64_t deadline_usec,
                          const char *action, const char *unit, char **reterr);

/* PID 1 left the bus (daemon-reexec) while a call was in flight or before it was sent: the broker's NoReply,
 * ServiceUnknown or NameHasNoOwner on a broker connection. sdunit_manager_back() waits (bounded) until
 * org.freedesktop.systemd1 has an owner again; then a call that may be repeated is sent once more. */
bool sdunit_manager_left_bus(SdUnitBus *b, const sd_bus_error *e);
bool sdunit_manager_back(SdUnitBus *b);

/* D-Bus object path of a unit (without a round trip: the path is the escaped name). */
int sdunit_unit_object_path(const char *unit, char **ret);

/* Append the properties as "(sv)" entries of the currently open a(sv) container. */
int sdunit_append_properties(sd_bus_message *m, const UnitPropertyList *l, char **reterr);

static inline void sdunit_job_wait_done(SdUnitJobWait *w) {
        free(w->job_path);
        free(w->result);
        w->job_path = w->result = NULL;
}
