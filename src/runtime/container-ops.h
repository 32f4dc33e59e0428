/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The operations on an existing container besides the lifecycle of container.h: pause/resume, update, ps,
 * events. As there, each returns a negative errno and fills *reterr with the message the CLI prints once
 * after "VERB ID: ". */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

/* pause/resume (freeze.c): through systemd (FreezeUnit/ThawUnit) so that the unit's FreezerState is right,
 * else the cgroup v2 freezer of the unit's cgroup. pause wants a running container, resume a paused one. */
int container_pause(const char *root, const char *id, char **reterr);
int container_resume(const char *root, const char *id, char **reterr);

/* update (update.c): the linux.resources fields its flags set, as runc's update names them. */
typedef enum UpdateField {
        UPDATE_MEMORY_LIMIT,
        UPDATE_MEMORY_SWAP,
        UPDATE_MEMORY_RESERVATION,
        UPDATE_CPU_SHARES,
        UPDATE_CPU_QUOTA,
        UPDATE_CPU_PERIOD,
        UPDATE_CPU_CPUS,
        UPDATE_CPU_MEMS,
        UPDATE_PIDS_LIMIT,
        UPDATE_BLOCKIO_WEIGHT,
        _UPDATE_FIELD_MAX,
} UpdateField;

/* A string field (cpu.cpus, cpu.mems) takes string, the others number. */
bool update_field_is_string(UpdateField f);

typedef struct UpdateValue {
        bool set;
        double number;
        const char *string;
} UpdateValue;

typedef struct UpdateOptions {
        const char *root;
        const char *id;
        /* --resources: a linux.resources object (NULL: none); the values override it field by field. */
        const cJSON *resources;
        UpdateValue values[_UPDATE_FIELD_MAX];
} UpdateOptions;

/* Whether o asks for anything at all. */
bool update_options_empty(const UpdateOptions *o);
/* Parses the merged resources with the config's own parser (errors name linux.resources.FIELD), maps them
 * to unit properties and cgroup file writes and applies them to the running container's scope. */
int container_update(const UpdateOptions *o, char **reterr);

/* ps (ps.c): the pids of every process in the container's cgroup and below it; none (and success) for a
 * stopped container. */
int container_pids(const char *root, const char *id, pid_t **ret, size_t *ret_n, char **reterr);
/* ps's table: runs ps(1) with args (NULL-terminated; empty: "-ef") and writes its header and the rows of
 * pids to out. Returns 0, 1 when ps itself failed (it said why on its stderr), or a negative errno. */
int ps_table_write(char *const *args, const pid_t *pids, size_t n, FILE *out, char **reterr);

/* events (events.c): one "stats" event, or (stats_once false) an "oom" event whenever the OOM killer struck
 * and a "stats" event every interval until the container's init exits. Each event goes to emit. */
typedef void (*ContainerEventFn)(const cJSON *event, void *userdata);
typedef struct EventsOptions {
        const char *root;
        const char *id;
        bool stats_once;
        uint64_t interval_usec;
        ContainerEventFn emit;
        void *userdata;
} EventsOptions;
int container_events(const EventsOptions *o, char **reterr);
