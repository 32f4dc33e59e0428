/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* libsystemd, loaded with dlopen() on first use (libsystemd-dl.c). src/sdunit calls it only through the
 * sym_-prefixed pointers below, as systemd calls the libraries it dlopen()s: sdrun is not linked against
 * libsystemd and defines none of its names, so a direct sd_bus_*() call fails to link and nothing can
 * silently go around the loader.
 *
 * Adding a call to a new libsystemd function: add it to the list that fits and call sym_NAME(). */

#include <systemd/sd-bus.h>
#include <systemd/sd-login.h>

/* Make a connection (or a path): they load the library first, and fail with -ELIBACC when it cannot be. */
#define LIBSYSTEMD_LOADING(X) \
        X(sd_bus_error_copy)  \
        X(sd_bus_new)         \
        X(sd_bus_open_system) \
        X(sd_bus_open_user)   \
        X(sd_bus_path_encode) \
        X(sd_machine_get_class)

/* Release or inspect: nothing to do while the library is not loaded (nothing can have been allocated). */
#define LIBSYSTEMD_IDLE(X)          \
        X(sd_bus_close_unref)       \
        X(sd_bus_error_free)        \
        X(sd_bus_error_get_errno)   \
        X(sd_bus_error_has_name)    \
        X(sd_bus_error_is_set)      \
        X(sd_bus_flush_close_unref) \
        X(sd_bus_message_unref)     \
        X(sd_bus_slot_unref)        \
        X(sd_bus_unref)

/* The rest take a connection or a message, which only a loaded library can have made (NULL before). */
#define LIBSYSTEMD_LOADED(X)              \
        X(sd_bus_call)                    \
        X(sd_bus_call_method_asyncv)      \
        X(sd_bus_call_methodv)            \
        X(sd_bus_flush)                   \
        X(sd_bus_get_property_string)     \
        X(sd_bus_is_open)                 \
        X(sd_bus_is_ready)                \
        X(sd_bus_match_signal_async)      \
        X(sd_bus_message_append_array)    \
        X(sd_bus_message_append_strv)     \
        X(sd_bus_message_appendv)         \
        X(sd_bus_message_close_container) \
        X(sd_bus_message_enter_container) \
        X(sd_bus_message_get_error)       \
        X(sd_bus_message_new_method_call) \
        X(sd_bus_message_open_container)  \
        X(sd_bus_message_peek_type)       \
        X(sd_bus_message_read_basic)      \
        X(sd_bus_message_read_strv)       \
        X(sd_bus_message_readv)           \
        X(sd_bus_process)                 \
        X(sd_bus_ref)                     \
        X(sd_bus_set_address)             \
        X(sd_bus_start)                   \
        X(sd_bus_wait)

#define LIBSYSTEMD_SYMBOLS(X) LIBSYSTEMD_LOADING(X) LIBSYSTEMD_IDLE(X) LIBSYSTEMD_LOADED(X)

#define X(name) extern typeof(name) *sym_##name;
LIBSYSTEMD_SYMBOLS(X)
#undef X

/* The variadic functions, over the va_list forms above. */
int sym_sd_bus_call_method(sd_bus *bus, const char *destination, const char *path, const char *interface,
                           const char *member, sd_bus_error *ret_error, sd_bus_message **reply,
                           const char *types, ...);
int sym_sd_bus_call_method_async(sd_bus *bus, sd_bus_slot **slot, const char *destination, const char *path,
                                 const char *interface, const char *member,
                                 sd_bus_message_handler_t callback, void *userdata, const char *types, ...);
int sym_sd_bus_message_append(sd_bus_message *m, const char *types, ...);
int sym_sd_bus_message_read(sd_bus_message *m, const char *types, ...);
int sym_sd_bus_error_has_names_sentinel(const sd_bus_error *e, ...);
#define sym_sd_bus_error_has_names(e, ...) sym_sd_bus_error_has_names_sentinel(e, __VA_ARGS__, NULL)

/* For _cleanup_(). */
static inline void sym_sd_bus_unrefp(sd_bus **p) {
        if (*p)
                sym_sd_bus_unref(*p);
}
static inline void sym_sd_bus_flush_close_unrefp(sd_bus **p) {
        if (*p)
                sym_sd_bus_flush_close_unref(*p);
}
static inline void sym_sd_bus_message_unrefp(sd_bus_message **p) {
        if (*p)
                sym_sd_bus_message_unref(*p);
}
static inline void sym_sd_bus_error_freep(sd_bus_error *e) {
        sym_sd_bus_error_free(e);
}
