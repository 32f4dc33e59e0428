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
 * sdrun is not linked against libsystemd (only its headers are used). This file defines the libsystemd
 * functions src/sdunit calls, under their own names; each forwards to the real one, resolved with dlsym()
 * when the library is first loaded. Variadic functions forward to their va_list forms. A function that
 * creates a connection loads the library and fails with -ELIBACC when it cannot; a function that only
 * releases something is a no-op while nothing was loaded (nothing can have been allocated by it). Every
 * other function takes an object only a loaded library can have made.
 *
 * Adding a call to a new libsystemd function: add it to LIBSYSTEMD_SYMBOLS and write its forwarder below;
 * the link fails until both exist. */

#include <assert.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <systemd/sd-bus.h>

#include "error-util.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "sdunit.h"
#include "string-util.h"

#define LIBSYSTEMD_SONAME "libsystemd.so.0"

/* Every function forwarded, by the name dlsym() finds it under. */
#define LIBSYSTEMD_SYMBOLS(X)             \
        X(sd_bus_call)                    \
        X(sd_bus_call_methodv)            \
        X(sd_bus_call_method_asyncv)      \
        X(sd_bus_close_unref)             \
        X(sd_bus_error_copy)              \
        X(sd_bus_error_free)              \
        X(sd_bus_error_get_errno)         \
        X(sd_bus_error_has_name)          \
        X(sd_bus_error_is_set)            \
        X(sd_bus_flush)                   \
        X(sd_bus_flush_close_unref)       \
        X(sd_bus_get_property_string)     \
        X(sd_bus_is_open)                 \
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
        X(sd_bus_message_unref)           \
        X(sd_bus_new)                     \
        X(sd_bus_open_system)             \
        X(sd_bus_open_user)               \
        X(sd_bus_path_encode)             \
        X(sd_bus_process)                 \
        X(sd_bus_ref)                     \
        X(sd_bus_set_address)             \
        X(sd_bus_slot_unref)              \
        X(sd_bus_start)                   \
        X(sd_bus_unref)                   \
        X(sd_bus_wait)

static struct {
        void *handle;
#define X(name) typeof(name) *name;
        LIBSYSTEMD_SYMBOLS(X)
#undef X
} lib;

bool sdunit_libsystemd_loaded(void) {
        return lib.handle;
}

int sdunit_libsystemd_load(char **reterr) {
        void *h;

        if (lib.handle)
                return 0;
        h = dlopen(LIBSYSTEMD_SONAME, RTLD_NOW | RTLD_LOCAL);
        if (!h)
                return errorf(reterr, ELIBACC, "cannot load %s (systemd's client library): %s",
                              LIBSYSTEMD_SONAME, strna(dlerror()));
#define X(name)                                                                                       \
        if (!(lib.name = (typeof(name) *) dlsym(h, #name))) {                                         \
                (void) dlclose(h);                                                                    \
                lib = (typeof(lib)){};                                                                \
                return errorf(reterr, ELIBACC, "%s has no %s(): sdrun needs libsystemd 252 or newer", \
                              LIBSYSTEMD_SONAME, #name);                                              \
        }
        LIBSYSTEMD_SYMBOLS(X)
#undef X
        lib.handle = h;
        return 0;
}

/* What `sdrun --version` and `sdrun features` say about the library: read from the loaded object itself (its
 * program headers, through dl_iterate_phdr()), since libsystemd has no call that tells its version. */
typedef struct LibInfoScan {
        const char *name; /* the link map's l_name and l_addr of the loaded library */
        ElfW(Addr) addr;
        bool found;
        unsigned interface;
        char *package_version;
} LibInfoScan;

/* A pointer of the dynamic section: glibc relocates some tags in place (DT_STRTAB) and not others
 * (DT_VERDEF), and not at all where the section is read-only. A library's own addresses are smaller than
 * its load address, an absolute one is not. */
static const void *dyn_ptr(ElfW(Addr) base, ElfW(Addr) p) {
        return (const void *) (p < base ? base + p : p);
}

/* The newest LIBSYSTEMD_NNN version node the library defines: the systemd release whose client interface
 * it has (its symbols are versioned by the release that added them). */
static unsigned scan_interface(ElfW(Addr) base, const ElfW(Dyn) * dyn) {
        ElfW(Addr) verdef = 0, strtab = 0;
        size_t n = 0;
        unsigned best = 0;

        for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++)
                if (d->d_tag == DT_VERDEF)
                        verdef = d->d_un.d_ptr;
                else if (d->d_tag == DT_VERDEFNUM)
                        n = d->d_un.d_val;
                else if (d->d_tag == DT_STRTAB)
                        strtab = d->d_un.d_ptr;
        if (!verdef || !strtab)
                return 0;

        const char *strings = dyn_ptr(base, strtab);
        const char *p = dyn_ptr(base, verdef);
        for (size_t i = 0; i < n; i++) {
                const ElfW(Verdef) *vd = (const ElfW(Verdef) *) p;
                const ElfW(Verdaux) *aux = (const ElfW(Verdaux) *) (p + vd->vd_aux);
                const char *name = strings + aux->vda_name;
                char *end;
                unsigned long v;

                if (!(vd->vd_flags & VER_FLG_BASE) && strneq(name, "LIBSYSTEMD_", STRLEN("LIBSYSTEMD_")) &&
                    (v = strtoul(name + STRLEN("LIBSYSTEMD_"), &end, 10)) > best && *end == '\0' &&
                    v < 100000)
                        best = v;
                if (vd->vd_next == 0)
                        break;
                p += vd->vd_next;
        }
        return best;
}

/* The distribution's version of the package the library came from, when it carries a package note
 * (https://systemd.io/ELF_PACKAGE_METADATA/: note "FDO", type 0xcafe1a7e, a JSON object with "version"),
 * as Debian's and Fedora's builds of systemd do. NULL when it has none. */
#define NOTE_FDO_PACKAGING_METADATA 0xcafe1a7eU
static size_t note_align(size_t n, size_t align) {
        return (n + align - 1) & ~(align - 1);
}
static char *scan_package_note(const char *p, size_t size, size_t align) {
        align = align == 8 ? 8 : 4;
        while (size >= sizeof(ElfW(Nhdr))) {
                const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *) p;
                size_t name_at = sizeof(*nh), desc_at = note_align(name_at + nh->n_namesz, align),
                       next = note_align(desc_at + nh->n_descsz, align);

                if (next > size || next < desc_at)
                        return NULL;
                if (nh->n_type == NOTE_FDO_PACKAGING_METADATA && nh->n_namesz == 4 &&
                    memcmp(p + name_at, "FDO", 4) == 0 && nh->n_descsz > 0 &&
                    p[desc_at + nh->n_descsz - 1] == '\0') {
                        _cleanup_json_ cJSON *meta = cJSON_Parse(p + desc_at);
                        const cJSON *v = cJSON_GetObjectItemCaseSensitive(meta, "version");

                        return cJSON_IsString(v) && *v->valuestring ? strdup(v->valuestring) : NULL;
                }
                p += next;
                size -= next;
        }
        return NULL;
}

static int scan_object(struct dl_phdr_info *info, size_t size, void *userdata) {
        LibInfoScan *s = userdata;

        if (info->dlpi_addr != s->addr || !info->dlpi_name || !streq(info->dlpi_name, s->name))
                return 0;
        s->found = true;
        for (size_t i = 0; i < info->dlpi_phnum; i++) {
                const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
                const char *at = (const char *) (info->dlpi_addr + ph->p_vaddr);

                if (ph->p_type == PT_DYNAMIC)
                        s->interface = scan_interface(info->dlpi_addr, (const ElfW(Dyn) *) at);
                else if (ph->p_type == PT_NOTE && !s->package_version)
                        s->package_version = scan_package_note(at, ph->p_memsz, ph->p_align);
        }
        return 1;
}

int sdunit_libsystemd_info(SdUnitLibInfo *ret, char **reterr) {
        _cleanup_free_ char *path = NULL, *version = NULL;
        struct link_map *lm = NULL;
        LibInfoScan scan = {};
        int r;

        assert(ret);

        r = sdunit_libsystemd_load(reterr);
        if (r < 0)
                return r;
        if (dlinfo(lib.handle, RTLD_DI_LINKMAP, &lm) < 0 || !lm || !lm->l_name)
                return errorf(reterr, EIO, "%s: no link map: %s", LIBSYSTEMD_SONAME, strna(dlerror()));
        scan.name = lm->l_name;
        scan.addr = lm->l_addr;
        (void) dl_iterate_phdr(scan_object, &scan);
        if (!scan.found)
                return errorf(reterr, EIO, "%s: %s is not among the loaded objects", LIBSYSTEMD_SONAME,
                              lm->l_name);
        version = scan.package_version;
        if (!version) {
                if (scan.interface > 0)
                        version = strdup_printf("%u", scan.interface);
                else
                        version = strdup("unknown");
                if (!version)
                        return -ENOMEM;
        }
        /* The file behind the soname link (libsystemd.so.0.35.0), for a bug report. */
        path = realpath(lm->l_name, NULL);
        if (!path && !(path = strdup(lm->l_name)))
                return -ENOMEM;
        *ret = (SdUnitLibInfo){
                .version = TAKE_PTR(version),
                .interface = scan.interface,
                .path = TAKE_PTR(path),
        };
        return 0;
}

void sdunit_libsystemd_info_done(SdUnitLibInfo *i) {
        if (!i)
                return;
        free(i->version);
        free(i->path);
        *i = (SdUnitLibInfo){};
}

/* The library, loaded now if it was not; false (with the reason logged at debug level) if it cannot be. */
static bool need(void) {
        _cleanup_free_ char *err = NULL;

        if (lib.handle)
                return true;
        if (sdunit_libsystemd_load(&err) >= 0)
                return true;
        log_debug("%s", err);
        return false;
}

/* Connections: load the library or fail. */
int sd_bus_new(sd_bus **ret) {
        return need() ? lib.sd_bus_new(ret) : -ELIBACC;
}
int sd_bus_open_system(sd_bus **ret) {
        return need() ? lib.sd_bus_open_system(ret) : -ELIBACC;
}
int sd_bus_open_user(sd_bus **ret) {
        return need() ? lib.sd_bus_open_user(ret) : -ELIBACC;
}
int sd_bus_path_encode(const char *prefix, const char *external_id, char **ret_path) {
        return need() ? lib.sd_bus_path_encode(prefix, external_id, ret_path) : -ELIBACC;
}

/* Releases and error checks: nothing to do while the library was never loaded. */
sd_bus *sd_bus_unref(sd_bus *bus) {
        return lib.handle ? lib.sd_bus_unref(bus) : NULL;
}
sd_bus *sd_bus_close_unref(sd_bus *bus) {
        return lib.handle ? lib.sd_bus_close_unref(bus) : NULL;
}
sd_bus *sd_bus_flush_close_unref(sd_bus *bus) {
        return lib.handle ? lib.sd_bus_flush_close_unref(bus) : NULL;
}
sd_bus_message *sd_bus_message_unref(sd_bus_message *m) {
        return lib.handle ? lib.sd_bus_message_unref(m) : NULL;
}
sd_bus_slot *sd_bus_slot_unref(sd_bus_slot *slot) {
        return lib.handle ? lib.sd_bus_slot_unref(slot) : NULL;
}
void sd_bus_error_free(sd_bus_error *e) {
        if (lib.handle)
                lib.sd_bus_error_free(e);
}
int sd_bus_error_is_set(const sd_bus_error *e) {
        return lib.handle ? lib.sd_bus_error_is_set(e) : 0;
}
int sd_bus_error_has_name(const sd_bus_error *e, const char *name) {
        return lib.handle ? lib.sd_bus_error_has_name(e, name) : 0;
}
int sd_bus_error_has_names_sentinel(const sd_bus_error *e, ...) {
        va_list ap;
        const char *name;
        int found = 0;

        va_start(ap, e);
        while (!found && (name = va_arg(ap, const char *)))
                found = sd_bus_error_has_name(e, name);
        va_end(ap);
        return found;
}
int sd_bus_error_get_errno(const sd_bus_error *e) {
        return lib.handle ? lib.sd_bus_error_get_errno(e) : 0;
}
int sd_bus_error_copy(sd_bus_error *dest, const sd_bus_error *e) {
        return need() ? lib.sd_bus_error_copy(dest, e) : -ELIBACC;
}

/* The rest take a connection or a message, which only a loaded library can have made. */
#define LOADED() assert(lib.handle)

sd_bus *sd_bus_ref(sd_bus *bus) {
        LOADED();
        return lib.sd_bus_ref(bus);
}
int sd_bus_set_address(sd_bus *bus, const char *address) {
        LOADED();
        return lib.sd_bus_set_address(bus, address);
}
int sd_bus_start(sd_bus *bus) {
        LOADED();
        return lib.sd_bus_start(bus);
}
int sd_bus_is_open(sd_bus *bus) {
        LOADED();
        return lib.sd_bus_is_open(bus);
}
int sd_bus_flush(sd_bus *bus) {
        LOADED();
        return lib.sd_bus_flush(bus);
}
int sd_bus_process(sd_bus *bus, sd_bus_message **r) {
        LOADED();
        return lib.sd_bus_process(bus, r);
}
int sd_bus_wait(sd_bus *bus, uint64_t timeout_usec) {
        LOADED();
        return lib.sd_bus_wait(bus, timeout_usec);
}
int sd_bus_call(sd_bus *bus, sd_bus_message *m, uint64_t usec, sd_bus_error *ret_error,
                sd_bus_message **reply) {
        LOADED();
        return lib.sd_bus_call(bus, m, usec, ret_error, reply);
}
int sd_bus_call_method(sd_bus *bus, const char *destination, const char *path, const char *interface,
                       const char *member, sd_bus_error *ret_error, sd_bus_message **reply,
                       const char *types, ...) {
        va_list ap;
        int r;

        LOADED();
        va_start(ap, types);
        r = lib.sd_bus_call_methodv(bus, destination, path, interface, member, ret_error, reply, types, ap);
        va_end(ap);
        return r;
}
int sd_bus_call_method_async(sd_bus *bus, sd_bus_slot **slot, const char *destination, const char *path,
                             const char *interface, const char *member, sd_bus_message_handler_t callback,
                             void *userdata, const char *types, ...) {
        va_list ap;
        int r;

        LOADED();
        va_start(ap, types);
        r = lib.sd_bus_call_method_asyncv(bus, slot, destination, path, interface, member, callback,
                                          userdata, types, ap);
        va_end(ap);
        return r;
}
int sd_bus_get_property_string(sd_bus *bus, const char *destination, const char *path, const char *interface,
                               const char *member, sd_bus_error *ret_error, char **ret) {
        LOADED();
        return lib.sd_bus_get_property_string(bus, destination, path, interface, member, ret_error, ret);
}
int sd_bus_match_signal_async(sd_bus *bus, sd_bus_slot **ret, const char *sender, const char *path,
                              const char *interface, const char *member,
                              sd_bus_message_handler_t match_callback, sd_bus_message_handler_t add_callback,
                              void *userdata) {
        LOADED();
        return lib.sd_bus_match_signal_async(bus, ret, sender, path, interface, member, match_callback,
                                             add_callback, userdata);
}
int sd_bus_message_new_method_call(sd_bus *bus, sd_bus_message **m, const char *destination,
                                   const char *path, const char *interface, const char *member) {
        LOADED();
        return lib.sd_bus_message_new_method_call(bus, m, destination, path, interface, member);
}
int sd_bus_message_append(sd_bus_message *m, const char *types, ...) {
        va_list ap;
        int r;

        LOADED();
        va_start(ap, types);
        r = lib.sd_bus_message_appendv(m, types, ap);
        va_end(ap);
        return r;
}
int sd_bus_message_appendv(sd_bus_message *m, const char *types, va_list ap) {
        LOADED();
        return lib.sd_bus_message_appendv(m, types, ap);
}
int sd_bus_message_append_array(sd_bus_message *m, char type, const void *ptr, size_t size) {
        LOADED();
        return lib.sd_bus_message_append_array(m, type, ptr, size);
}
int sd_bus_message_append_strv(sd_bus_message *m, char **l) {
        LOADED();
        return lib.sd_bus_message_append_strv(m, l);
}
int sd_bus_message_open_container(sd_bus_message *m, char type, const char *contents) {
        LOADED();
        return lib.sd_bus_message_open_container(m, type, contents);
}
int sd_bus_message_close_container(sd_bus_message *m) {
        LOADED();
        return lib.sd_bus_message_close_container(m);
}
int sd_bus_message_enter_container(sd_bus_message *m, char type, const char *contents) {
        LOADED();
        return lib.sd_bus_message_enter_container(m, type, contents);
}
int sd_bus_message_peek_type(sd_bus_message *m, char *type, const char **contents) {
        LOADED();
        return lib.sd_bus_message_peek_type(m, type, contents);
}
int sd_bus_message_read(sd_bus_message *m, const char *types, ...) {
        va_list ap;
        int r;

        LOADED();
        va_start(ap, types);
        r = lib.sd_bus_message_readv(m, types, ap);
        va_end(ap);
        return r;
}
int sd_bus_message_read_basic(sd_bus_message *m, char type, void *p) {
        LOADED();
        return lib.sd_bus_message_read_basic(m, type, p);
}
int sd_bus_message_read_strv(sd_bus_message *m, char ***l) {
        LOADED();
        return lib.sd_bus_message_read_strv(m, l);
}
const sd_bus_error *sd_bus_message_get_error(sd_bus_message *m) {
        LOADED();
        return lib.sd_bus_message_get_error(m);
}
