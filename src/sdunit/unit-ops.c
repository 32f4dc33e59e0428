/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-bus.h>

#include "macro.h"
#include "process-util.h"
#include "sdunit-internal.h"
#include "string-util.h"

static bool error_is_no_such_unit(const sd_bus_error *e) {
        return sym_sd_bus_error_has_names(e, "org.freedesktop.systemd1.NoSuchUnit",
                                          "org.freedesktop.systemd1.LoadFailed");
}

/* GetUnit: the object path of a loaded unit, -ENOENT when it is not loaded. Unlike reading a property of
 * the path computed from the name, this does not make PID 1 load the unit. */
static int get_loaded_unit_path(SdUnitBus *b, const char *unit, char **ret, char **reterr) {
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *path;
        int r;

        r = sym_sd_bus_call_method(b->bus, SD_DEST, SD_PATH, SD_IFACE_MANAGER, "GetUnit", &e, &reply, "s",
                                   unit);
        if (r < 0) {
                if (error_is_no_such_unit(&e))
                        r = -ENOENT;
                return sdunit_fail(reterr, r, &e, "unit %s", unit);
        }
        r = sym_sd_bus_message_read(reply, "o", &path);
        if (r < 0)
                return sdunit_fail(reterr, r, NULL, "unit %s: read GetUnit reply", unit);
        if (ret) {
                *ret = strdup(path);
                if (!*ret)
                        return -ENOMEM;
        }
        return 0;
}

static int get_string_at(SdUnitBus *b, const char *path, const char *unit, const char *iface,
                         const char *prop, char **ret, char **reterr) {
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        int r;

        r = sym_sd_bus_get_property_string(b->bus, SD_DEST, path, iface, prop, &e, ret);
        if (r < 0) {
                if (error_is_no_such_unit(&e) || sym_sd_bus_error_has_name(&e, SD_BUS_ERROR_UNKNOWN_OBJECT))
                        r = -ENOENT;
                return sdunit_fail(reterr, r, &e, "unit %s: read property %s.%s", unit, iface, prop);
        }
        return 0;
}

static const char *unit_type_interface(const char *unit) {
        static const struct {
                const char *suffix, *iface;
        } map[] = {
                { ".service", "org.freedesktop.systemd1.Service" },
                { ".slice", "org.freedesktop.systemd1.Slice" },
                { ".socket", "org.freedesktop.systemd1.Socket" },
                { ".mount", "org.freedesktop.systemd1.Mount" },
                { ".swap", "org.freedesktop.systemd1.Swap" },
        };
        size_t n = strlen(unit);

        for (size_t i = 0; i < ELEMENTSOF(map); i++) {
                size_t k = strlen(map[i].suffix);
                if (n > k && streq(unit + n - k, map[i].suffix))
                        return map[i].iface;
        }
        return SD_IFACE_SCOPE;
}

/* A string property of a loaded unit (-ENOENT when it is not loaded: reading an unloaded unit's object
 * would make PID 1 load it). */
static int get_loaded_unit_string(SdUnitBus *b, const char *unit, const char *iface, const char *property,
                                  char **ret, char **reterr) {
        _cleanup_free_ char *path = NULL;
        int r;

        assert(b);
        assert(unit);
        assert(ret);

        r = get_loaded_unit_path(b, unit, &path, reterr);
        if (r < 0)
                return r;
        return get_string_at(b, path, unit, iface, property, ret, reterr);
}

int sdunit_get_control_group(SdUnitBus *b, const char *unit, char **ret, char **reterr) {
        /* ControlGroup lives on the type's own interface (Scope, Service, Slice, ...). */
        return get_loaded_unit_string(b, unit, unit_type_interface(unit), "ControlGroup", ret, reterr);
}

int sdunit_get_manager_control_group(SdUnitBus *b, char **ret, char **reterr) {
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        int r;

        r = sym_sd_bus_get_property_string(b->bus, SD_DEST, SD_PATH, SD_IFACE_MANAGER, "ControlGroup", &e,
                                           ret);
        if (r < 0)
                return sdunit_fail(reterr, r, &e, "read the manager's ControlGroup");
        return 0;
}

int sdunit_attach_processes(SdUnitBus *b, const char *unit, const char *subcgroup, pid_t pid,
                            char **reterr) {
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        int r;

        r = sym_sd_bus_call_method(b->bus, SD_DEST, SD_PATH, SD_IFACE_MANAGER, "AttachProcessesToUnit", &e,
                                   NULL, "ssau", unit, strempty(subcgroup), 1, (uint32_t) pid);
        if (r < 0)
                return sdunit_fail(reterr, r, &e, "attach process %d to unit %s", (int) pid, unit);
        return 0;
}

int sdunit_get_active_state(SdUnitBus *b, const char *unit, char **ret, char **reterr) {
        return get_loaded_unit_string(b, unit, SD_IFACE_UNIT, "ActiveState", ret, reterr);
}

int sdunit_get_freezer_state(SdUnitBus *b, const char *unit, char **ret, char **reterr) {
        return get_loaded_unit_string(b, unit, SD_IFACE_UNIT, "FreezerState", ret, reterr);
}

static int simple_manager_call(SdUnitBus *b, const char *method, const char *what, const char *unit,
                               char **reterr, const char *types, ...) {
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        va_list ap;
        int r;

        for (unsigned attempt = 0;; attempt++) {
                _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
                va_list aq;

                sym_sd_bus_error_free(&e);
                r = sym_sd_bus_message_new_method_call(b->bus, &m, SD_DEST, SD_PATH, SD_IFACE_MANAGER,
                                                       method);
                if (r < 0)
                        return sdunit_fail(reterr, r, NULL, "%s %s", what, unit);
                va_start(ap, types);
                va_copy(aq, ap);
                r = sym_sd_bus_message_appendv(m, types, aq);
                va_end(aq);
                va_end(ap);
                if (r < 0)
                        return sdunit_fail(reterr, r, NULL, "%s %s", what, unit);
                r = sym_sd_bus_call(b->bus, m, 0, &e, &reply);
                if (r >= 0 || attempt > 0 || !sdunit_manager_left_bus(b, &e) || !sdunit_manager_back(b))
                        break;
        }
        if (r < 0) {
                if (error_is_no_such_unit(&e))
                        r = -ENOENT;
                else if (sym_sd_bus_error_has_names(&e, SD_BUS_ERROR_NOT_SUPPORTED,
                                                    "org.freedesktop.systemd1.UnitInactive"))
                        r = sym_sd_bus_error_has_name(&e, SD_BUS_ERROR_NOT_SUPPORTED) ? -EOPNOTSUPP : -ESRCH;
                return sdunit_fail(reterr, r, &e, "%s %s", what, unit);
        }
        return 0;
}

int sdunit_kill_unit(SdUnitBus *b, const char *unit, int sig, char **reterr) {
        assert(b);
        assert(unit);
        return simple_manager_call(b, "KillUnit", "kill unit", unit, reterr, "ssi", unit, "all",
                                   (int32_t) sig);
}

/* FreezeUnit/ThawUnit reply once the cgroup reached the state (or right away when it already was).
 * systemd 252 freezes only through the cgroup v2 freezer of a unified layout; elsewhere it answers
 * NotSupported, which is returned as -EOPNOTSUPP (callers may then use cgroup_freeze()). */
int sdunit_freeze_unit(SdUnitBus *b, const char *unit, char **reterr) {
        assert(b);
        assert(unit);
        return simple_manager_call(b, "FreezeUnit", "freeze unit", unit, reterr, "s", unit);
}

int sdunit_thaw_unit(SdUnitBus *b, const char *unit, char **reterr) {
        assert(b);
        assert(unit);
        return simple_manager_call(b, "ThawUnit", "thaw unit", unit, reterr, "s", unit);
}

int sdunit_reset_failed_unit(SdUnitBus *b, const char *unit, char **reterr) {
        assert(b);
        assert(unit);
        return simple_manager_call(b, "ResetFailedUnit", "reset failed state of unit", unit, reterr, "s",
                                   unit);
}

static int set_properties_once(SdUnitBus *b, const char *unit, const UnitPropertyList *props,
                               sd_bus_error *e, char **reterr) {
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sym_sd_bus_message_new_method_call(b->bus, &m, SD_DEST, SD_PATH, SD_IFACE_MANAGER,
                                               "SetUnitProperties");
        if (r >= 0)
                r = sym_sd_bus_message_append(m, "sb", unit, 1);
        if (r >= 0)
                r = sym_sd_bus_message_open_container(m, 'a', "(sv)");
        if (r < 0)
                return sdunit_fail(reterr, r, NULL, "set properties of unit %s", unit);
        r = sdunit_append_properties(m, props, reterr);
        if (r < 0)
                return r;
        r = sym_sd_bus_message_close_container(m);
        if (r < 0)
                return sdunit_fail(reterr, r, NULL, "set properties of unit %s", unit);
        r = sym_sd_bus_call(b->bus, m, 0, e, NULL);
        if (r < 0) {
                if (error_is_no_such_unit(e))
                        r = -ENOENT;
                return sdunit_fail(reterr, r, e, "set properties of unit %s", unit);
        }
        return 0;
}

int sdunit_set_properties(SdUnitBus *b, const char *unit, const UnitPropertyList *props, char **reterr) {
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *err = NULL;
        int r;

        assert(b);
        assert(unit);

        r = set_properties_once(b, unit, props, &e, &err);
        if (r < 0 && sdunit_manager_left_bus(b, &e) && sdunit_manager_back(b)) {
                /* setting the same properties again is harmless */
                sym_sd_bus_error_free(&e);
                free(err);
                err = NULL;
                r = set_properties_once(b, unit, props, &e, &err);
        }
        if (r < 0 && reterr)
                *reterr = TAKE_PTR(err);
        return r;
}

static bool state_is_gone(const char *s) {
        return streq(s, "inactive") || streq(s, "failed");
}

int sdunit_stop_unit(SdUnitBus *b, const char *unit, bool loaded, uint64_t timeout_usec, char **reterr) {
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sdunit_job_wait_done) SdUnitJobWait w = {};
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + timeout_usec;
        int r;

        assert(b);
        assert(unit);

        /* A unit that is not loaded is gone already (the common case: a container that stopped on its own
         * and was collected). GetUnit says so in one round trip; StopUnit would first make PID 1 try to load
         * the unit from disk, only to answer NoSuchUnit. A caller that saw the unit's cgroup knows better. */
        if (!loaded) {
                r = get_loaded_unit_path(b, unit, NULL, reterr);
                if (r < 0)
                        return r;
        }

        r = sdunit_bus_watch_jobs(b, reterr);
        if (r < 0)
                return r;

        r = sym_sd_bus_call_method(b->bus, SD_DEST, SD_PATH, SD_IFACE_MANAGER, "StopUnit", &e, &reply, "ss",
                                   unit, "replace");
        if (r < 0) {
                if (error_is_no_such_unit(&e))
                        r = -ENOENT;
                return sdunit_fail(reterr, r, &e, "stop unit %s", unit);
        }
        r = sdunit_job_wait_reply(b, reply, &w, deadline, "stop unit", unit, reterr);
        if (r < 0)
                return r;

        /* PID 1 ends a stop job with "done" only once the unit is inactive or failed: nothing to look at (a
         * GetUnit here cost every delete one more round trip through the broker, usually answered with
         * NoSuchUnit since the unit was collected meanwhile). */
        if (streq(w.result, "done"))
                return 0;

        /* The stop job ended otherwise ("canceled": another job replaced it); the unit may be inactive (or
         * failed, or already collected) all the same. Check, and give a unit that is still settling a
         * bounded number of short looks. */
        for (unsigned i = 0;; i++) {
                _cleanup_free_ char *state = NULL, *err2 = NULL;

                r = sdunit_get_active_state(b, unit, &state, &err2);
                if (r == -ENOENT)
                        return 0;
                if (r < 0) {
                        if (reterr) {
                                free(*reterr);
                                *reterr = TAKE_PTR(err2);
                        }
                        return r;
                }
                if (state_is_gone(state))
                        return 0;
                if (now_usec(CLOCK_MONOTONIC) >= deadline)
                        return sdunit_fail(reterr, -ETIMEDOUT, NULL,
                                           "stop unit %s: still %s after the stop job ended (%s)", unit,
                                           state, w.result);
                /* The state changes are signalled as PropertiesChanged on the unit; a short wait on the bus
                 * wakes up as soon as anything arrives. */
                r = sym_sd_bus_wait(
                        b->bus, MIN(10 * USEC_PER_MSEC << MIN(i, 5u), deadline - now_usec(CLOCK_MONOTONIC)));
                if (r < 0)
                        return sdunit_fail(reterr, r, NULL, "stop unit %s: wait", unit);
                while ((r = sym_sd_bus_process(b->bus, NULL)) > 0)
                        ;
        }
}

int sdunit_get_property_string(SdUnitBus *b, const char *unit, const char *interface, const char *property,
                               char **ret, char **reterr) {
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ char *path = NULL;
        const char *contents;
        char type;
        char *s = NULL;
        int r;

        assert(b);
        assert(unit);
        assert(interface);
        assert(property);
        assert(ret);

        r = sdunit_unit_object_path(unit, &path);
        if (r < 0)
                return sdunit_fail(reterr, r, NULL, "unit %s: object path", unit);

        r = sym_sd_bus_call_method(b->bus, SD_DEST, path, "org.freedesktop.DBus.Properties", "Get", &e,
                                   &reply, "ss", interface, property);
        if (r < 0) {
                if (error_is_no_such_unit(&e))
                        r = -ENOENT;
                return sdunit_fail(reterr, r, &e, "unit %s: read property %s.%s", unit, interface, property);
        }

        r = sym_sd_bus_message_peek_type(reply, &type, &contents);
        if (r < 0)
                goto fail;
        r = sym_sd_bus_message_enter_container(reply, 'v', contents);
        if (r < 0)
                goto fail;

        if (contents[0] && !contents[1] && strchr("sobtxui", contents[0])) {
                union {
                        const char *s;
                        int b;
                        uint64_t t;
                        int64_t x;
                        uint32_t u;
                        int32_t i;
                } v;
                r = sym_sd_bus_message_read_basic(reply, contents[0], &v);
                if (r >= 0) {
                        switch (contents[0]) {
                        case 'b':
                                s = strdup(v.b ? "yes" : "no");
                                break;
                        case 't':
                        case 'u':
                                s = strdup_printf("%" PRIu64, contents[0] == 't' ? v.t : v.u);
                                break;
                        case 'x':
                        case 'i':
                                s = strdup_printf("%" PRIi64, contents[0] == 'x' ? v.x : v.i);
                                break;
                        default: /* 's', 'o' */
                                s = strdup(v.s);
                        }
                        if (!s)
                                return -ENOMEM;
                }
        } else if (streq(contents, "as")) {
                char **l = NULL;
                size_t len = 0;
                r = sym_sd_bus_message_read_strv(reply, &l);
                if (r >= 0) {
                        for (char **i = l; i && *i; i++)
                                len += strlen(*i) + 1;
                        s = calloc(1, len + 1);
                        for (char **i = l; s && i && *i; i++) {
                                if (i != l)
                                        strcat(s, " ");
                                strcat(s, *i);
                        }
                }
                for (char **i = l; i && *i; i++)
                        free(*i);
                free(l);
                if (r >= 0 && !s)
                        return -ENOMEM;
        } else
                return sdunit_fail(
                        reterr, -EOPNOTSUPP, NULL,
                        "unit %s: property %s.%s has D-Bus type %s, which cannot be shown as text", unit,
                        interface, property, contents);
        if (r < 0)
                goto fail;

        *ret = s;
        return 0;
fail:
        free(s);
        return sdunit_fail(reterr, r, NULL, "unit %s: read property %s.%s", unit, interface, property);
}
