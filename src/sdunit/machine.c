/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-bus.h>

#include "macro.h"
#include "process-util.h"
#include "sdunit-internal.h"
#include "sdunit.h"

#define MACHINE_NAME_MAX 64

/* FNV-1a, only to keep long ids apart predictably. */
static uint32_t hash32(const char *s) {
        uint32_t h = 2166136261U;
        for (; *s; s++) {
                h ^= (unsigned char) *s;
                h *= 16777619U;
        }
        return h;
}

static bool is_alnum(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

int sdunit_machine_name(const char *id, char **ret) {
        size_t n = strlen(id);
        char *name;

        if (n == 0)
                return -EINVAL;
        /* At most 64 characters: longer ids keep their first 55 and get "-" and a hash of the whole id. */
        if (n > MACHINE_NAME_MAX) {
                name = malloc(MACHINE_NAME_MAX + 1);
                if (!name)
                        return -ENOMEM;
                snprintf(name, MACHINE_NAME_MAX + 1, "%.*s-%08x", MACHINE_NAME_MAX - 9, id, hash32(id));
        } else {
                name = strdup(id);
                if (!name)
                        return -ENOMEM;
        }
        /* machined wants a valid host name (systemd's hostname_is_valid()): letters, digits and '-' in
         * dot-separated labels that neither start nor end with '-' (no '_'). Anything else becomes '-'; a dot
         * is kept only between two letters or digits ("a..b" would otherwise give "a.-b", which machined
         * refuses); a '-' at either end becomes '0'. */
        for (char *p = name; *p; p++) {
                bool ldh = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                           (*p >= '0' && *p <= '9') || *p == '-';
                if (*p == '.' && p != name && is_alnum(p[-1]) && is_alnum(p[1]))
                        continue;
                if (!ldh)
                        *p = '-';
        }
        if (name[0] == '-')
                name[0] = '0';
        if (name[strlen(name) - 1] == '-')
                name[strlen(name) - 1] = '0';
        *ret = name;
        return 0;
}

int sdunit_register_machine(bool user, const char *name, pid_t leader, const char *root_directory,
                            char **reterr) {
        _cleanup_(sym_sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        int r;

        if (user)
                return -EOPNOTSUPP; /* machined is a system service */
        r = sym_sd_bus_open_system(&bus);
        if (r < 0)
                return sdunit_fail(reterr, r, NULL, "connect to the system bus");
        r = sym_sd_bus_call_method(bus, "org.freedesktop.machine1", "/org/freedesktop/machine1",
                                   "org.freedesktop.machine1.Manager", "RegisterMachine", &e, NULL,
                                   "sayssus", name, (size_t) 0, "sdrun", "container", (uint32_t) leader,
                                   strempty(root_directory));
        if (r < 0) {
                if (sym_sd_bus_error_has_names(&e, SD_BUS_ERROR_SERVICE_UNKNOWN,
                                               SD_BUS_ERROR_NAME_HAS_NO_OWNER,
                                               "org.freedesktop.systemd1.NoSuchUnit",
                                               "org.freedesktop.DBus.Error.FileNotFound"))
                        return sdunit_fail(reterr, -ENOTCONN, &e, "systemd-machined is not available");
                return sdunit_fail(reterr, r, &e, "register machine \"%s\" with systemd-machined", name);
        }
        return 0;
}

int sdunit_unregister_machine(const char *name, char **reterr) {
        _cleanup_(sym_sd_bus_flush_close_unrefp) sd_bus *own = NULL;
        _cleanup_(sym_sd_bus_unrefp) sd_bus *shared = sdunit_bus_ref_system_broker();
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        int r;

        assert(name);

        /* machined collects a machine whose unit has gone by itself, usually before the runtime deletes it
         * (a container that stopped on its own): then there is nothing to unregister, and its registration
         * record is gone too (sd-login's sd_machine_get_class() reads it). Looking costs no round trip;
         * asking did (UnregisterMachine, answered NoSuchMachine). A machine still known is unregistered. */
        _cleanup_free_ char *class = NULL;
        if (sym_sd_machine_get_class(name, &class) == -ENXIO)
                return 0;

        if (!shared) {
                r = sym_sd_bus_open_system(&own);
                if (r < 0)
                        return sdunit_fail(reterr, r, NULL, "connect to the system bus");
        }
        r = sym_sd_bus_call_method(shared ?: own, "org.freedesktop.machine1", "/org/freedesktop/machine1",
                                   "org.freedesktop.machine1.Manager", "UnregisterMachine", &e, NULL, "s",
                                   name);
        if (r < 0) {
                if (sym_sd_bus_error_has_names(&e, "org.freedesktop.machine1.NoSuchMachine",
                                               SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER))
                        return 0;
                return sdunit_fail(reterr, r, &e, "unregister machine \"%s\" from systemd-machined", name);
        }
        return 0;
}

/* RegisterMachine in two halves, so that its round trips (connection, Hello, machined's own calls to
 * systemd) overlap with the container's setup instead of adding to `create`. */
struct SdUnitMachineCall {
        sd_bus *bus;
        bool shared; /* the process's connection to systemd: not ours to close */
        sd_bus_slot *slot;
        char *name;
        bool done;
        int r;
        sd_bus_error error;
};

static int on_register_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        SdUnitMachineCall *c = userdata;
        const sd_bus_error *e = sym_sd_bus_message_get_error(m);

        c->done = true;
        c->r = 0;
        if (e) {
                c->r = -sym_sd_bus_error_get_errno(e) ?: -EIO;
                (void) sym_sd_bus_error_copy(&c->error, e);
        }
        return 0;
}

void sdunit_machine_call_free(SdUnitMachineCall *c) {
        if (!c)
                return;
        sym_sd_bus_slot_unref(c->slot);
        if (c->shared)
                sym_sd_bus_unref(c->bus);
        else
                sym_sd_bus_flush_close_unref(c->bus);
        sym_sd_bus_error_free(&c->error);
        free(c->name);
        free(c);
}

int sdunit_register_machine_begin(bool user, const char *name, pid_t leader, const char *root_directory,
                                  SdUnitMachineCall **ret, char **reterr) {
        SdUnitMachineCall *c;
        int r;

        assert(ret);

        if (user)
                return -EOPNOTSUPP; /* machined is a system service */
        c = calloc(1, sizeof *c);
        if (!c)
                return -ENOMEM;
        c->error = SD_BUS_ERROR_NULL;
        c->name = strdup(name);
        if (!c->name) {
                sdunit_machine_call_free(c);
                return -ENOMEM;
        }
        /* One connection for systemd and machined where there is one already (one Hello less). */
        c->bus = sdunit_bus_ref_system_broker();
        c->shared = c->bus;
        r = c->bus ? 0 : sym_sd_bus_open_system(&c->bus);
        if (r < 0) {
                sdunit_machine_call_free(c);
                return sdunit_fail(reterr, r, NULL, "connect to the system bus");
        }
        r = sym_sd_bus_call_method_async(
                c->bus, &c->slot, "org.freedesktop.machine1", "/org/freedesktop/machine1",
                "org.freedesktop.machine1.Manager", "RegisterMachine", on_register_reply, c, "sayssus", name,
                (size_t) 0, "sdrun", "container", (uint32_t) leader, strempty(root_directory));
        if (r >= 0)
                r = sym_sd_bus_flush(c->bus); /* on its way: machined works while we do */
        if (r < 0) {
                sdunit_machine_call_free(c);
                return sdunit_fail(reterr, r, NULL, "register machine \"%s\" with systemd-machined", name);
        }
        *ret = c;
        return 0;
}

int sdunit_register_machine_end(SdUnitMachineCall *c, uint64_t timeout_usec, char **reterr) {
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + timeout_usec;
        int r;

        assert(c);

        while (!c->done) {
                r = sym_sd_bus_process(c->bus, NULL);
                if (r < 0)
                        return sdunit_fail(reterr, r, NULL, "register machine \"%s\" with systemd-machined",
                                           c->name);
                if (r > 0)
                        continue;
                uint64_t now = now_usec(CLOCK_MONOTONIC);
                if (now >= deadline)
                        return sdunit_fail(reterr, -ETIMEDOUT, NULL,
                                           "register machine \"%s\" with systemd-machined", c->name);
                r = sym_sd_bus_wait(c->bus, deadline - now);
                if (r < 0)
                        return sdunit_fail(reterr, r, NULL, "register machine \"%s\" with systemd-machined",
                                           c->name);
        }
        if (c->r < 0) {
                if (sym_sd_bus_error_has_names(&c->error, SD_BUS_ERROR_SERVICE_UNKNOWN,
                                               SD_BUS_ERROR_NAME_HAS_NO_OWNER,
                                               "org.freedesktop.systemd1.NoSuchUnit",
                                               "org.freedesktop.DBus.Error.FileNotFound"))
                        return sdunit_fail(reterr, -ENOTCONN, &c->error,
                                           "systemd-machined is not available");
                return sdunit_fail(reterr, c->r, &c->error, "register machine \"%s\" with systemd-machined",
                                   c->name);
        }
        return 0;
}
