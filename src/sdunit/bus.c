/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "error-util.h"
#include "macro.h"
#include "process-util.h"
#include "sdunit-internal.h"
#include "string-util.h"

/* One connection per process: every sdunit_bus_open() of the same kind hands out a reference to it, so a
 * verb that makes several calls pays for the connection (and the JobRemoved match) once. A
 * forked child gets a fresh one (sd-bus refuses to use a connection across fork()). */
static SdUnitBus *cached[2];

int sdunit_fail(char **reterr, int r, const sd_bus_error *e, const char *fmt, ...) {
        va_list ap;

        assert(r < 0);

        if (!reterr)
                return r;
        /* The bus error (or, without one, the errno's text) is the inner message the prefix goes before. */
        if (e && sym_sd_bus_error_is_set(e))
                (void) errorf(reterr, r, "%s: %s", e->name, strna(e->message));
        else {
                free(*reterr);
                *reterr = NULL;
        }
        va_start(ap, fmt);
        r = verrwrap(reterr, r, fmt, ap);
        va_end(ap);
        return r;
}

static void bus_free(SdUnitBus *b) {
        if (!b)
                return;
        while (b->waits) {
                SdUnitJobWait *w = b->waits;
                b->waits = w->next;
                w->next = NULL;
        }
        if (b->pid == getpid()) {
                /* Closed before the match's slot goes: the broker drops a connection's matches when it
                 * disconnects, and a slot freed on an open connection would first send RemoveMatch for
                 * nothing (2 of the broker's messages per connection with a match; bench/README.md). The
                 * slot holds the last reference: the connection is freed with it. */
                sym_sd_bus_flush(b->bus);
                sym_sd_bus_close_unref(b->bus);
                sym_sd_bus_slot_unref(b->job_removed_slot);
        } else {
                /* After fork(): drop our reference without touching the parent's connection state. */
                sym_sd_bus_slot_unref(b->job_removed_slot);
                sym_sd_bus_close_unref(b->bus);
        }
        free(b->watch_error_message);
        free(b);
}

/* PID 1's private socket (what systemctl uses when there is no bus). It is the fallback for the system
 * manager, not the first choice: PID 1 sets up its whole object tree for every private connection and sends
 * it every signal of every unit, which measured as twice PID 1's CPU time per container compared with the
 * broker (bench/README.md). The user manager (rootless) is still asked over its private socket first: its
 * cost is the user's own, and a user bus is not always there. */
static int bus_open_direct(const char *address, sd_bus **ret) {
        sd_bus *bus = NULL;
        int r;

        r = sym_sd_bus_new(&bus);
        if (r < 0)
                return r;
        r = sym_sd_bus_set_address(bus, address);
        if (r >= 0)
                r = sym_sd_bus_start(bus);
        if (r < 0) {
                sym_sd_bus_unref(bus);
                return r;
        }
        *ret = bus;
        return 0;
}

/* A bus connection is set up (authentication, then the broker's Hello) inside the first call that needs it,
 * and sd-bus gives that its own 90 s, whatever the call's timeout: a dbus-daemon that accepts connections
 * but has stopped answering held every verb that long, then failed with "Transport endpoint is not
 * connected". Wait for it here, bounded like a method call. The first call would wait for the same replies,
 * so this costs no round trip. */
#define BUS_READY_TIMEOUT_USEC (25 * USEC_PER_SEC)

static int bus_wait_ready(sd_bus *bus) {
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + BUS_READY_TIMEOUT_USEC;

        for (;;) {
                uint64_t now;
                int r;

                r = sym_sd_bus_is_ready(bus);
                if (r != 0)
                        return r < 0 ? r : 0;
                if (sym_sd_bus_is_open(bus) <= 0)
                        return -ENOTCONN;
                r = sym_sd_bus_process(bus, NULL);
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;
                now = now_usec(CLOCK_MONOTONIC);
                if (now >= deadline)
                        return -ETIMEDOUT;
                r = sym_sd_bus_wait(bus, deadline - now);
                if (r < 0 && r != -EINTR)
                        return r;
        }
}

int sdunit_bus_open(bool user, SdUnitBus **ret, char **reterr) {
        SdUnitBus **slot = &cached[user ? 1 : 0];
        _cleanup_free_ SdUnitBus *b = NULL;
        sd_bus *bus = NULL;
        bool direct = false;
        int r;

        assert(ret);

        /* Reuse the process's connection unless PID 1 dropped it (daemon-reexec closes private sockets); a
         * dropped one stays with whoever still holds a reference and is freed by their last close. */
        if (*slot && (*slot)->pid == getpid() && sym_sd_bus_is_open((*slot)->bus) > 0) {
                (*slot)->n_ref++;
                *ret = *slot;
                return 0;
        }
        /* A connection inherited over fork() is not ours to reuse; forget it (the parent still owns it). */
        *slot = NULL;

        r = sdunit_libsystemd_load(reterr);
        if (r < 0)
                return r;
        b = calloc(1, sizeof(SdUnitBus));
        if (!b)
                return -ENOMEM;

        if (!user) {
                r = sym_sd_bus_open_system(&bus);
                if (r < 0 && geteuid() == 0 && access("/run/systemd/private", F_OK) == 0 &&
                    bus_open_direct("unix:path=/run/systemd/private", &bus) >= 0)
                        direct = true; /* no system bus (yet): systemd itself still answers */
                else if (r < 0)
                        return sdunit_fail(reterr, r, NULL, "connect to the system bus");
        } else {
                const char *e = getenv("XDG_RUNTIME_DIR");
                _cleanup_free_ char *addr = NULL;

                if (e && asprintf(&addr, "unix:path=%s/systemd/private", e) >= 0 &&
                    bus_open_direct(addr, &bus) >= 0)
                        direct = true;
        }

        if (!bus) {
                r = user ? sym_sd_bus_open_user(&bus) : sym_sd_bus_open_system(&bus);
                if (r < 0)
                        return sdunit_fail(reterr, r, NULL, "connect to the %s bus",
                                           user ? "user" : "system");
        }
        r = bus_wait_ready(bus);
        if (r < 0) {
                const char *what = direct ? "systemd" : user ? "user" : "system";

                sym_sd_bus_close_unref(bus);
                if (r == -ETIMEDOUT)
                        return sdunit_fail(reterr, r, NULL,
                                           "connect to the %s bus: no answer within %llu s (is %s stalled?)",
                                           what,
                                           (unsigned long long) (BUS_READY_TIMEOUT_USEC / USEC_PER_SEC),
                                           direct ? "systemd" : "the dbus-daemon");
                return sdunit_fail(reterr, r, NULL, "connect to the %s bus", what);
        }

        b->n_ref = 1;
        b->pid = getpid();
        b->user = user;
        b->direct = direct;
        b->bus = bus;
        *slot = b;
        *ret = TAKE_PTR(b);
        return 0;
}

sd_bus *sdunit_bus_ref_system_broker(void) {
        SdUnitBus *b = cached[0];

        if (!b || b->direct || b->pid != getpid() || sym_sd_bus_is_open(b->bus) <= 0)
                return NULL;
        return sym_sd_bus_ref(b->bus);
}

void sdunit_bus_close(SdUnitBus *b) {
        if (!b)
                return;
        assert(b->n_ref > 0);
        if (--b->n_ref > 0)
                return;
        for (size_t i = 0; i < ELEMENTSOF(cached); i++)
                if (cached[i] == b)
                        cached[i] = NULL;
        bus_free(b);
}

static int on_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        SdUnitBus *b = userdata;
        const char *path = NULL, *unit = NULL, *result = NULL;
        uint32_t id;

        if (sym_sd_bus_message_read(m, "uoss", &id, &path, &unit, &result) < 0)
                return 0;
        for (SdUnitJobWait *w = b->waits; w; w = w->next)
                if (!w->done && w->job_path && streq(w->job_path, path)) {
                        w->result = strdup(result);
                        w->done = true; /* even if strdup() failed: result NULL is reported as ENOMEM */
                }
        return 0;
}

/* The reply to AddMatch, which is not waited for: a failure is kept and ends the next job wait (without the
 * match no JobRemoved would come). */
static int on_watch_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        SdUnitBus *b = userdata;
        const sd_bus_error *e = sym_sd_bus_message_get_error(m);

        if (!e || b->watch_error)
                return 0;
        b->watch_error = sym_sd_bus_error_get_errno(e);
        if (b->watch_error <= 0)
                b->watch_error = EIO;
        b->watch_error_message = strdup_printf("%s: %s", e->name, strna(e->message));
        return 0;
}

int sdunit_bus_watch_jobs(SdUnitBus *b, char **reterr) {
        int r;

        assert(b);

        /* Not waited for: the method call that creates the job goes out behind it on the same connection, and
         * the broker handles one sender's messages in order, so the match is in place before the job can end.
         * That saves a round trip per create. */
        if (!b->job_removed_slot) {
                /* On a direct connection this is a local filter only; through the broker it is one AddMatch. */
                r = sym_sd_bus_match_signal_async(b->bus, &b->job_removed_slot, b->direct ? NULL : SD_DEST,
                                                  SD_PATH, SD_IFACE_MANAGER, "JobRemoved", on_job_removed,
                                                  b->direct ? NULL : on_watch_reply, b);
                if (r < 0)
                        return sdunit_fail(reterr, r, NULL,
                                           "install a match for systemd's JobRemoved signal");
        }

        /* No Subscribe: PID 1 sends a job's JobNew and JobRemoved through the broker to the client that asked
         * for the job as well as to its subscribers (the job tracks its requester, and that track survives
         * daemon-reexec). A subscription would cost PID 1 a tracked client per connection: the call and its
         * reply, a match on the client's name through the broker, and its removal at our exit. */
        return 0;
}

void sdunit_job_wait_register(SdUnitBus *b, SdUnitJobWait *w) {
        w->next = b->waits;
        b->waits = w;
}

void sdunit_job_wait_unregister(SdUnitBus *b, SdUnitJobWait *w) {
        for (SdUnitJobWait **p = &b->waits; *p; p = &(*p)->next)
                if (*p == w) {
                        *p = w->next;
                        w->next = NULL;
                        return;
                }
}

int sdunit_job_wait_run(SdUnitBus *b, SdUnitJobWait *w, uint64_t deadline_usec) {
        int r;

        for (;;) {
                /* Drain everything queued (signals that arrived while we waited for a method reply are in
                 * the read queue already) before sleeping. */
                do {
                        r = sym_sd_bus_process(b->bus, NULL);
                        if (r < 0)
                                return r;
                        if (w->done)
                                return w->result ? 0 : -ENOMEM;
                        if (b->watch_error)
                                return -b->watch_error;
                } while (r > 0);

                uint64_t now = now_usec(CLOCK_MONOTONIC);
                if (now >= deadline_usec)
                        return -ETIMEDOUT;
                r = sym_sd_bus_wait(b->bus, deadline_usec - now);
                if (r < 0)
                        return r;
        }
}

int sdunit_job_wait_reply(SdUnitBus *b, sd_bus_message *reply, SdUnitJobWait *w, uint64_t deadline_usec,
                          const char *action, const char *unit, char **reterr) {
        const char *job;
        int r;

        r = sym_sd_bus_message_read(reply, "o", &job);
        if (r < 0)
                return sdunit_fail(reterr, r, NULL, "%s %s: read job path", action, unit);
        w->job_path = strdup(job);
        if (!w->job_path)
                return -ENOMEM;

        sdunit_job_wait_register(b, w);
        r = sdunit_job_wait_run(b, w, deadline_usec);
        sdunit_job_wait_unregister(b, w);
        if (r < 0 && b->watch_error_message)
                return errorf(reterr, r, "%s %s: watch systemd's jobs: %s", action, unit,
                              b->watch_error_message);
        if (r < 0)
                return sdunit_fail(reterr, r, NULL, "%s %s: wait for job %s", action, unit, job);
        return 0;
}

/* PID 1 re-executing itself (daemon-reexec, a systemd upgrade) leaves the bus for a moment: a call in flight
 * is answered NoReply by the broker ("recipient disconnected"), one sent in the gap ServiceUnknown or
 * NameHasNoOwner. crun and runc do not see this for pause, resume or kill: they write cgroupfs. So a call
 * that may be sent twice is sent once more when the manager is back on the bus (within MANAGER_BACK_USEC).
 * Only through the broker: a private connection dies with the old PID 1 and is reopened by the next
 * sdunit_bus_open(). */
#define MANAGER_BACK_USEC (10 * USEC_PER_SEC)

bool sdunit_manager_left_bus(SdUnitBus *b, const sd_bus_error *e) {
        if (b->direct)
                return false;
        return sym_sd_bus_error_has_names(e, SD_BUS_ERROR_NO_REPLY, SD_BUS_ERROR_SERVICE_UNKNOWN,
                                          SD_BUS_ERROR_NAME_HAS_NO_OWNER);
}

bool sdunit_manager_back(SdUnitBus *b) {
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + MANAGER_BACK_USEC;

        do {
                _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
                _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *reply = NULL;

                if (sym_sd_bus_call_method(b->bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                           "org.freedesktop.DBus", "GetNameOwner", &e, &reply, "s",
                                           SD_DEST) >= 0)
                        return true;
                if (sym_sd_bus_is_open(b->bus) <= 0)
                        return false;
                (void) usleep(50 * 1000);
        } while (now_usec(CLOCK_MONOTONIC) < deadline);
        return false;
}

int sdunit_unit_object_path(const char *unit, char **ret) {
        return sym_sd_bus_path_encode("/org/freedesktop/systemd1/unit", unit, ret);
}

static int append_one(sd_bus_message *m, const UnitProperty *p) {
        const char *sig = unit_property_kind_signature(p->kind);
        int r;

        if (!sig)
                return -EINVAL;

        r = sym_sd_bus_message_open_container(m, 'r', "sv");
        if (r < 0)
                return r;
        r = sym_sd_bus_message_append(m, "s", p->name);
        if (r < 0)
                return r;
        r = sym_sd_bus_message_open_container(m, 'v', sig);
        if (r < 0)
                return r;

        switch (p->kind) {
        case UNIT_PROP_BOOL:
                r = sym_sd_bus_message_append(m, "b", (int) p->b);
                break;
        case UNIT_PROP_STRING:
                r = sym_sd_bus_message_append(m, "s", strempty(p->s));
                break;
        case UNIT_PROP_UINT64:
                r = sym_sd_bus_message_append(m, "t", p->u64);
                break;
        case UNIT_PROP_INT64:
                r = sym_sd_bus_message_append(m, "x", p->i64);
                break;
        case UNIT_PROP_UINT32:
                r = sym_sd_bus_message_append(m, "u", (uint32_t) p->u64);
                break;
        case UNIT_PROP_INT32:
                r = sym_sd_bus_message_append(m, "i", (int32_t) p->i64);
                break;
        case UNIT_PROP_DOUBLE:
                r = sym_sd_bus_message_append(m, "d", p->d);
                break;
        case UNIT_PROP_STRV:
                r = sym_sd_bus_message_append_strv(m, p->strv);
                break;
        case UNIT_PROP_BYTES:
                r = sym_sd_bus_message_append_array(m, 'y', p->bytes, p->n_bytes);
                break;
        case UNIT_PROP_PAIRS_SS:
        case UNIT_PROP_PAIRS_ST: {
                bool ss = p->kind == UNIT_PROP_PAIRS_SS;
                r = sym_sd_bus_message_open_container(m, 'a', ss ? "(ss)" : "(st)");
                for (size_t i = 0; r >= 0 && i < p->n_pairs; i++)
                        r = ss ? sym_sd_bus_message_append(m, "(ss)", p->pairs[i].first, p->pairs[i].second)
                               : sym_sd_bus_message_append(m, "(st)", p->pairs[i].first, p->pairs[i].value);
                if (r >= 0)
                        r = sym_sd_bus_message_close_container(m);
                break;
        }
        case UNIT_PROP_UINT32_ARRAY:
                r = sym_sd_bus_message_append_array(m, 'u', p->u32s, p->n_u32s * sizeof(uint32_t));
                break;
        default:
                r = -EINVAL;
        }
        if (r < 0)
                return r;

        r = sym_sd_bus_message_close_container(m);
        if (r < 0)
                return r;
        return sym_sd_bus_message_close_container(m);
}

int sdunit_append_properties(sd_bus_message *m, const UnitPropertyList *l, char **reterr) {
        int r;

        if (!l)
                return 0;
        for (size_t i = 0; i < l->n_items; i++) {
                r = append_one(m, &l->items[i]);
                if (r < 0)
                        return sdunit_fail(reterr, r, NULL, "append unit property %s (%s)", l->items[i].name,
                                           strna(unit_property_kind_signature(l->items[i].kind)));
        }
        return 0;
}
