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
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "error-util.h"
#include "json-util.h"
#include "libsystemd-dl.h"
#include "log.h"
#include "macro.h"
#include "sdunit.h"
#include "string-util.h"

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
        if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) < 0 || !lm || !lm->l_name)
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
static int load_sd_machine_get_class(const char *machine, char **ret_clazz) {
        return need() ? sym_sd_machine_get_class(machine, ret_clazz) : -ELIBACC;
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
