/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The steps `create` (container.c) and `restore` (restore.c) share, in the order both run them: the bundle
 * loaded and validated, the scope planned, the state directory made, the scope started, the machine
 * registered, the --pid-file written; and, when a later step fails, the unit torn down. Each driver holds
 * what the steps return in its run struct and undoes it in that struct's cleanup. */

#include <stdbool.h>
#include <sys/types.h>

#include "cgroup-props.h"
#include "cgroup-util.h"
#include "oci-config.h"
#include "sdunit.h"
#include "seccomp-filter.h"
#include "state.h"
#include "unit-property.h"

#define MACHINE_ANNOTATION "io.github.sdrun.machine"
/* crun's name: the init runs in this sub-cgroup of the scope, which then has no processes of its own. */
#define SUBGROUP_ANNOTATION "run.oci.systemd.subgroup"
#define SCOPE_JOB_TIMEOUT_USEC (30 * USEC_PER_SEC)
#define UNIT_STOP_TIMEOUT_USEC (30 * USEC_PER_SEC)

/* The bundle: its directory, config.json as read and parsed, and root.path resolved. */
typedef struct Bundle {
        char *path; /* absolute */
        char *raw;  /* config.json as read, for the state directory */
        size_t raw_len;
        OciConfig *c;
        char *rootfs; /* root.path, absolute, a directory */
        bool warned; /* set by the caller: config.json's warnings were logged (by the process this one is the
                       * sealed re-exec of): parsed without them */
} Bundle;
/* path NULL: the current directory; config_file NULL: "config.json" (relative to the bundle). The id is
 * checked first. */
int bundle_load(const char *path, const char *config_file, const char *id, Bundle *ret, char **reterr);
void bundle_done(Bundle *b);

/* What the checks of config.json depend on besides the file. */
typedef struct BundleChecks {
        const char *root;           /* --root: where compiled seccomp programs are cached */
        const char *console_socket; /* --console-socket */
        bool console_master;        /* the caller keeps the pty master itself (foreground `run`) */
        bool rootless;
} BundleChecks;
/* Everything config.json alone can refuse, refused before any state, unit, process or mount exists; every
 * message names the field ("config.json: FIELD: ..."). linux.seccomp compiled into *ret_seccomp (NULL: not
 * wanted; the program is checked all the same). */
int bundle_validate(const Bundle *b, const BundleChecks *k, SeccompProgram **ret_seccomp, char **reterr);
/* Whether the container has a namespace of type t of its own: a new one, or one joined by path that is not
 * the runtime's own (proc_name: its name in /proc/self/ns). */
bool config_has_own_namespace(const OciConfig *c, OciNamespaceType t, const char *proc_name);

/* The scope's name (from linux.cgroupsPath), the host's cgroup layout and the unit's properties and cgroup
 * file writes (from linux.resources and the annotations). */
typedef struct ScopePlan {
        char *slice, *unit;
        bool service_owned; /* --keep-unit: the unit is the service's, which no verb may stop, kill or freeze */
        CgroupLayout layout;
        UnitPropertyList props;
        CgroupFileWrites writes;
} ScopePlan;
int scope_plan(const OciConfig *c, const char *id, ScopePlan *ret, char **reterr);
void scope_plan_done(ScopePlan *p);

/* The state directory of a new container, recording the bundle, the unit, the owner and config.json. From
 * here on the driver removes it (container_remove()) when a later step fails. */
int container_state_new(const char *root, const char *id, const Bundle *b, const ScopePlan *p, bool user_bus,
                        Container **ret, char **reterr);

/* The container's scope, holding pid, before the container's processes exist; its resources files written
 * and the sub-cgroup for the init made when asked. pid is the runtime itself (create as root), stage1
 * (rootless create: we could not move back out), or criu held before its exec (restore). */
typedef struct ScopeEntry {
        SdUnitBus *bus;
        const char *unit, *slice, *description, *subgroup;
        const char *cgroups_path; /* linux.cgroupsPath, for the message when the unit exists already */
        const UnitPropertyList *props;
        const CgroupFileWrites *writes;
        CgroupLayout layout;
        bool started;    /* the unit exists: tear it down on failure */
        char *cgroup;    /* its ControlGroup */
        char *scope_dir; /* its cgroupfs directory, when there is a sub-cgroup */
} ScopeEntry;
int scope_enter(ScopeEntry *s, pid_t pid, int *ret_subgroup_fd, char **reterr);
/* Rootless: scope_enter() for stage1 (BootstrapParams.place_stage1; userdata: the ScopeEntry). */
int scope_place_stage1(pid_t stage1_pid, void *userdata, int *ret_cgroup_fd, char **reterr);

/* Stop the unit and wait until it is gone. kill: SIGKILL whatever is left in it first. cgroup: the unit's
 * ControlGroup when the caller has it recorded (else NULL): where its directory is gone, so is the unit
 * (nothing is asked of systemd), and where it is there, StopUnit goes without a GetUnit first. A failure to
 * stop it is logged at log_level (a unit that is gone already is no failure). */
void unit_teardown(SdUnitBus *bus, const char *unit, const char *cgroup, bool kill, int log_level);

/* systemd-machined: the registration sent as soon as the leader exists, answered when the driver needs it
 * (machined's work overlaps with the container's setup). NULL: nothing to wait for (the annotation
 * MACHINE_ANNOTATION is "false", rootless, or it could not be sent). */
SdUnitMachineCall *machine_register_begin(const OciConfig *c, const char *id, pid_t leader,
                                          const char *rootfs);
/* Whether the container is now registered: its machine name in *ret_machine (for `delete` to unregister
 * exactly what was registered), else NULL. Failures are logged, never fatal: the container works without. */
int machine_register_end(SdUnitMachineCall *call, const char *id, char **ret_machine);

/* --pid-file: the container's init pid, written atomically; the message names the option. */
int pid_file_write(const char *path, pid_t pid, char **reterr);
