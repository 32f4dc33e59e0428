/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* libsystemd, loaded when a verb first talks to systemd, not when sdrun starts.
 *
 * libsystemd.so.0 brings libgcrypt, libgpg-error, liblzma, libzstd and liblz4 with it: mapping and
 * relocating them took ~2 ms of every sdrun invocation (bench/README.md), the same as crun pays. `state`,
 * `list`, `ps`, `exec`, `start` and `kill` of one process never call systemd, so they no longer pay it;
 * `create`, `run`, `delete` and the rest pay it once, when they connect. (Loading it in a second thread
 * while create reads the config and writes the state was measured too: create was no faster, so it is not
 * done.)
 *
 * sdrun is not linked against libsystemd (only its headers are used). src/sdunit calls the library through
 * the sym_ pointers of libsystemd-dl.h, set here from dlsym() when it is first loaded; before that, they
 * point at the small functions below that load it (for a connection) or do nothing (for a release). */

#include <assert.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include "error-util.h"
#include "libsystemd-dl.h"
#include "log.h"
#include "macro.h"
#include "sdunit.h"

#define LIBSYSTEMD_SONAME "libsystemd.so.0"

static void *handle;

bool sdunit_libsystemd_loaded(void) {
        return handle;
}

/* Defined below: the pointers' values until the library is loaded. */
#define X(name) static typeof(name) load_##name;
LIBSYSTEMD_LOADING(X)
#undef X
#define X(name) static typeof(name) idle_##name;
LIBSYSTEMD_IDLE(X)
#undef X

#define X(name) typeof(name) *sym_##name = load_##name;
LIBSYSTEMD_LOADING(X)
#undef X
#define X(name) typeof(name) *sym_##name = idle_##name;
LIBSYSTEMD_IDLE(X)
#undef X
#define X(name) typeof(name) *sym_##name = NULL;
LIBSYSTEMD_LOADED(X)
#undef X

int sdunit_libsystemd_load(char **reterr) {
        struct {
#define X(name) typeof(name) *name;
                LIBSYSTEMD_SYMBOLS(X)
#undef X
        } found;
        void *h;

        if (handle)
                return 0;
        h = dlopen(LIBSYSTEMD_SONAME, RTLD_NOW | RTLD_LOCAL);
        if (!h)
                return errorf(reterr, ELIBACC, "cannot load %s (systemd's client library): %s",
                              LIBSYSTEMD_SONAME, strna(dlerror()));
                /* All or nothing: the pointers change only once every symbol was found. */
#define X(name)                                                                                       \
        if (!(found.name = (typeof(name) *) dlsym(h, #name))) {                                       \
                (void) dlclose(h);                                                                    \
                return errorf(reterr, ELIBACC, "%s has no %s(): sdrun needs libsystemd 252 or newer", \
                              LIBSYSTEMD_SONAME, #name);                                              \
        }
        LIBSYSTEMD_SYMBOLS(X)
#undef X
#define X(name) sym_##name = found.name;
        LIBSYSTEMD_SYMBOLS(X)
#undef X
        handle = h;
        return 0;
}

/* The library, loaded now if it was not; false (with the reason logged at debug level) if it cannot be. */
static bool need(void) {
        _cleanup_free_ char *err = NULL;

        if (handle)
                return true;
        if (sdunit_libsystemd_load(&err) >= 0)
                return true;
        log_debug("%s", err);
        return false;
}

/* Connections: load the library or fail. */
static int load_sd_bus_new(sd_bus **ret) {
        return need() ? sym_sd_bus_new(ret) : -ELIBACC;
}
static int load_sd_bus_open_system(sd_bus **ret) {
        return need() ? sym_sd_bus_open_system(ret) : -ELIBACC;
}
static int load_sd_bus_open_user(sd_bus **ret) {
        return need() ? sym_sd_bus_open_user(ret) : -ELIBACC;
}
static int load_sd_bus_path_encode(const char *prefix, const char *external_id, char **ret_path) {
        return need() ? sym_sd_bus_path_encode(prefix, external_id, ret_path) : -ELIBACC;
}
static int load_sd_bus_error_copy(sd_bus_error *dest, const sd_bus_error *e) {
        return need() ? sym_sd_bus_error_copy(dest, e) : -ELIBACC;
}

/* Releases and error checks: nothing to do while the library was never loaded. */
static sd_bus *idle_sd_bus_unref(sd_bus *bus) {
        (void) bus;
        return NULL;
}
static sd_bus *idle_sd_bus_close_unref(sd_bus *bus) {
        (void) bus;
        return NULL;
}
static sd_bus *idle_sd_bus_flush_close_unref(sd_bus *bus) {
        (void) bus;
        return NULL;
}
static sd_bus_message *idle_sd_bus_message_unref(sd_bus_message *m) {
        (void) m;
        return NULL;
}
static sd_bus_slot *idle_sd_bus_slot_unref(sd_bus_slot *slot) {
        (void) slot;
        return NULL;
}
static void idle_sd_bus_error_free(sd_bus_error *e) {
        (void) e;
}
static int idle_sd_bus_error_is_set(const sd_bus_error *e) {
        (void) e;
        return 0;
}
static int idle_sd_bus_error_has_name(const sd_bus_error *e, const char *name) {
        (void) e, (void) name;
        return 0;
}
static int idle_sd_bus_error_get_errno(const sd_bus_error *e) {
        (void) e;
        return 0;
}

/* The variadic functions, over their va_list forms. */
int sym_sd_bus_error_has_names_sentinel(const sd_bus_error *e, ...) {
        va_list ap;
        const char *name;
        int found = 0;

        va_start(ap, e);
        while (!found && (name = va_arg(ap, const char *)))
                found = sym_sd_bus_error_has_name(e, name);
        va_end(ap);
        return found;
}
int sym_sd_bus_call_method(sd_bus *bus, const char *destination, const char *path, const char *interface,
                           const char *member, sd_bus_error *ret_error, sd_bus_message **reply,
                           const char *types, ...) {
        va_list ap;
        int r;

        va_start(ap, types);
        r = sym_sd_bus_call_methodv(bus, destination, path, interface, member, ret_error, reply, types, ap);
        va_end(ap);
        return r;
}
int sym_sd_bus_call_method_async(sd_bus *bus, sd_bus_slot **slot, const char *destination, const char *path,
                                 const char *interface, const char *member,
                                 sd_bus_message_handler_t callback, void *userdata, const char *types, ...) {
        va_list ap;
        int r;

        va_start(ap, types);
        r = sym_sd_bus_call_method_asyncv(bus, slot, destination, path, interface, member, callback,
                                          userdata, types, ap);
        va_end(ap);
        return r;
}
int sym_sd_bus_message_append(sd_bus_message *m, const char *types, ...) {
        va_list ap;
        int r;

        va_start(ap, types);
        r = sym_sd_bus_message_appendv(m, types, ap);
        va_end(ap);
        return r;
}
int sym_sd_bus_message_read(sd_bus_message *m, const char *types, ...) {
        va_list ap;
        int r;

        va_start(ap, types);
        r = sym_sd_bus_message_readv(m, types, ap);
        va_end(ap);
        return r;
}
