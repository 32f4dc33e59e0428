/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The only interface to systemd. Nothing in here exposes sd-bus types: callers see an opaque connection,
 * unit names and plain property lists. Every call that fails for a reason systemd gave fills *reterr
 * (malloc'd, may be NULL) with a message naming the unit and systemd's error; it never logs itself. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "unit-property.h"

typedef struct SdUnitBus SdUnitBus;

/* libsystemd is loaded on first use (libsystemd-dl.c): sdunit_bus_open() loads it, and fails with
 * -ELIBACC and a message naming the library when it cannot. */
int sdunit_libsystemd_load(char **reterr);
bool sdunit_libsystemd_loaded(void);

/* The libsystemd sdrun loads (for `sdrun --version` and `sdrun features`), loaded now if it was not.
 * -ELIBACC with a message when it cannot be loaded. */
typedef struct SdUnitLibInfo {
        /* The version of the distribution package the library came from, when it carries an ELF package
         * note ("252.39-1~deb12u2"); else its interface as a number ("252"); else "unknown". */
        char *version;
        /* The newest LIBSYSTEMD_NNN symbol version it defines: the systemd release whose client interface
         * it has. 0 if it defines none. */
        unsigned interface;
        /* The file loaded, the soname's link resolved ("/lib/x86_64-linux-gnu/libsystemd.so.0.35.0"). */
        char *path;
} SdUnitLibInfo;
int sdunit_libsystemd_info(SdUnitLibInfo *ret, char **reterr);
void sdunit_libsystemd_info_done(SdUnitLibInfo *i);

/* System bus when user is false (root), else the user manager's bus. */
int sdunit_bus_open(bool user, SdUnitBus **ret, char **reterr);
void sdunit_bus_close(SdUnitBus *b);
static inline void sdunit_bus_closep(SdUnitBus **b) {
        if (*b)
                sdunit_bus_close(*b);
}
#define _cleanup_sdunit_bus_ __attribute__((cleanup(sdunit_bus_closep)))

/* Map linux.cgroupsPath to (slice, unit): "slice:prefix:name" -> prefix-name.scope in slice; "" or NULL ->
 * sdrun-<id>.scope in machine.slice. A path-style value ("/a/b") is refused with -EINVAL and a message. */
int sdunit_scope_name_from_cgroups_path(const char *cgroups_path, const char *id, char **ret_slice,
                                        char **ret_unit, char **reterr);

/* Start a transient scope holding pid, with Delegate=yes, Slice=, Description=, DefaultDependencies=no,
 * CollectMode=inactive-or-failed, accounting and the extra properties, and wait for its job (a match is
 * installed before the call) at most timeout_usec. A loaded unit of that name that is failed is reset and
 * the call retried once; an active one is refused with -EEXIST. */
int sdunit_start_scope(SdUnitBus *b, const char *unit, const char *slice, const char *description, pid_t pid,
                       const UnitPropertyList *extra, uint64_t timeout_usec, char **reterr);

/* The unit's ControlGroup property ("/machine.slice/x.scope"), "" when it has none. */
int sdunit_get_control_group(SdUnitBus *b, const char *unit, char **ret, char **reterr);
/* The manager's own ControlGroup (a user manager's: "/user.slice/user-1000.slice/user@1000.service"). */
int sdunit_get_manager_control_group(SdUnitBus *b, char **ret, char **reterr);
/* AttachProcessesToUnit(unit, subcgroup, [pid]): systemd moves a process of ours into a unit's cgroup (a
 * user manager asks the system manager where the user cannot write the common ancestor). */
int sdunit_attach_processes(SdUnitBus *b, const char *unit, const char *subcgroup, pid_t pid, char **reterr);
/* ActiveState ("active", "inactive", "failed", ...); -ENOENT when not loaded. */
int sdunit_get_active_state(SdUnitBus *b, const char *unit, char **ret, char **reterr);
/* FreezerState ("running", "frozen", ...). */
int sdunit_get_freezer_state(SdUnitBus *b, const char *unit, char **ret, char **reterr);
/* StopUnit and wait until the unit is gone or inactive, bounded by timeout_usec. -ENOENT when not loaded.
 * loaded: the caller knows the unit is loaded (its cgroup is there), so no GetUnit first; a unit collected
 * in between costs PID 1 a load attempt and still gives -ENOENT. */
int sdunit_stop_unit(SdUnitBus *b, const char *unit, bool loaded, uint64_t timeout_usec, char **reterr);
/* KillUnit(unit, "all", sig). */
int sdunit_kill_unit(SdUnitBus *b, const char *unit, int sig, char **reterr);
int sdunit_freeze_unit(SdUnitBus *b, const char *unit, char **reterr);
int sdunit_thaw_unit(SdUnitBus *b, const char *unit, char **reterr);
int sdunit_reset_failed_unit(SdUnitBus *b, const char *unit, char **reterr);
/* SetUnitProperties(unit, runtime=true, props). */
int sdunit_set_properties(SdUnitBus *b, const char *unit, const UnitPropertyList *props, char **reterr);
/* Read one property as text (for tests and `events`), using the unit's object path. */
int sdunit_get_property_string(SdUnitBus *b, const char *unit, const char *interface, const char *property,
                               char **ret, char **reterr);

/* systemd-machined: the machine name for a container id (characters a host name may not have -- '_', '+',
 * a leading, trailing or doubled '.' -- become "-"; ids longer than 64 characters are cut to 55 and suffixed
 * with "-" and 8 hex digits of the FNV-1a hash of the whole id). */
int sdunit_machine_name(const char *id, char **ret);
/* RegisterMachine(name, service "sdrun", class "container", leader, root): machined binds the machine to the
 * scope the leader is in. -ENOTCONN when machined is not available. */
int sdunit_register_machine(bool user, const char *name, pid_t leader, const char *root_directory,
                            char **reterr);
/* UnregisterMachine(name): machined forgets the machine without touching its unit. `delete` calls it before
 * stopping the scope: machined otherwise stops the machine's unit *by name* when it collects a dead machine,
 * which may be after a new container of the same id has created its scope. 0 also when machined does not
 * know the machine (any more). */
int sdunit_unregister_machine(const char *name, char **reterr);

/* The journal as a log sink (log_set_sink()): CONTAINER_ID=, OBJECT_SYSTEMD_UNIT= and UNIT= fields. */
bool sdunit_journal_available(void);
void sdunit_journal_sink(int level, const char *container_id, const char *unit, const char *msg);

/* The same RegisterMachine in two halves: _begin connects and sends the call (no round trip waited for),
 * _end waits for the reply at most timeout_usec and returns what sdunit_register_machine() would. Free the
 * call with sdunit_machine_call_free() in either case (also without _end, to abandon it). */
typedef struct SdUnitMachineCall SdUnitMachineCall;
int sdunit_register_machine_begin(bool user, const char *name, pid_t leader, const char *root_directory,
                                  SdUnitMachineCall **ret, char **reterr);
int sdunit_register_machine_end(SdUnitMachineCall *c, uint64_t timeout_usec, char **reterr);
void sdunit_machine_call_free(SdUnitMachineCall *c);
static inline void sdunit_machine_call_freep(SdUnitMachineCall **c) {
        sdunit_machine_call_free(*c);
}
