/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-bus.h>

#include "macro.h"
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

int sdunit_machine_name(const char *id, char **ret) {
        size_t n = strlen(id);
        char *name;

        if (n == 0)
                return -EINVAL;
        /* machined accepts host-name-like names: [A-Za-z0-9_.-], at most 64 characters, no leading dot. */
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
        for (char *p = name; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                      *p == '_' || *p == '-' || (*p == '.' && p != name)))
                        *p = '_';
        *ret = name;
        return 0;
}

int sdunit_register_machine(bool user, const char *name, pid_t leader, const char *root_directory, char **reterr) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        int r;

        if (user)
                return -EOPNOTSUPP; /* machined is a system service */
        r = sd_bus_open_system(&bus);
        if (r < 0)
                return sdunit_fail(reterr, r, NULL, "connect to the system bus");
        r = sd_bus_call_method(bus, "org.freedesktop.machine1", "/org/freedesktop/machine1",
                               "org.freedesktop.machine1.Manager", "RegisterMachine", &e, NULL, "sayssus", name,
                               (size_t) 0, "sdrun", "container", (uint32_t) leader, strempty(root_directory));
        if (r < 0) {
                if (sd_bus_error_has_names(&e, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER,
                                           "org.freedesktop.systemd1.NoSuchUnit", "org.freedesktop.DBus.Error.FileNotFound"))
                        return sdunit_fail(reterr, -ENOTCONN, &e, "systemd-machined is not available");
                return sdunit_fail(reterr, r, &e, "register machine \"%s\" with systemd-machined", name);
        }
        return 0;
}
