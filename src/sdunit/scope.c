/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-bus.h>

#include "error-util.h"
#include "macro.h"
#include "process-util.h"
#include "sdunit-internal.h"

#define UNIT_NAME_MAX_LEN 255

static bool valid_unit_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ':' ||
               c == '_' || c == '.' || c == '-';
}

/* Escape s for use in a unit name: characters outside [A-Za-z0-9:_.-], a leading '.', and '\' become
 * "\xNN" (as systemd-escape does, except that '/' is escaped too rather than turned into '-': a container
 * id is not a path). */
static int unit_name_escape_part(const char *s, char **ret) {
        size_t n = strlen(s);
        char *e = malloc(n * 4 + 1), *p = e;

        if (!e)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char) s[i];
                if (!valid_unit_char((char) c) || (i == 0 && c == '.'))
                        p += sprintf(p, "\\x%02x", c);
                else
                        *p++ = (char) c;
        }
        *p = 0;
        *ret = e;
        return 0;
}

static bool endswith(const char *s, const char *suffix) {
        size_t a = strlen(s), b = strlen(suffix);
        return a >= b && streq(s + a - b, suffix);
}

/* A slice name as systemd accepts it: valid characters, ".slice" suffix, and the dash rules that make the
 * dashes a path ("a-b.slice" is below "a.slice"): no leading, trailing or double dash, except "-.slice"
 * (the root slice). */
static bool slice_name_is_valid(const char *s) {
        size_t n = strlen(s);

        if (n > UNIT_NAME_MAX_LEN || !endswith(s, ".slice") || n == STRLEN(".slice"))
                return false;
        if (streq(s, "-.slice"))
                return true;
        for (size_t i = 0; i < n - STRLEN(".slice"); i++) {
                if (!valid_unit_char(s[i]) && s[i] != '\\')
                        return false;
                if (s[i] == '-' && (i == 0 || s[i + 1] == '-' || s[i + 1] == '.'))
                        return false;
        }
        return s[0] != '.';
}

/* A cgroupfs-form cgroupsPath ("/docker/<id>", "kubepods/burstable/pod<uid>/<id>") as a scope name, with
 * systemd's path escaping (systemd-escape --path): the path is cleaned lexically as runc does (empty and "."
 * components dropped, ".." removes the component before it and stops at the root; absolute and relative
 * paths are the same, both taken from the root), components are joined with '-', and in each component
 * every character outside [A-Za-z0-9:_.], '-' included, and a '.' that starts the name become "\xNN". It is
 * reversible, so two different cleaned paths never give the same unit: "/docker/abc" is
 * "docker-abc.scope", "/docker-abc" is "docker\x2dabc.scope". ".scope" is always appended (also to a
 * last component that ends in it), which keeps the mapping one-to-one. */
static int scope_name_from_cgroupfs_path(const char *path, char **ret, char **reterr) {
        _cleanup_free_ char *copy = strdup(path), *out = NULL;
        _cleanup_free_ const char **comp = NULL;
        size_t n = 0, len = 0;
        char *p, *save = NULL;

        if (!copy)
                return -ENOMEM;
        comp = calloc(strlen(path) / 2 + 2, sizeof *comp);
        if (!comp)
                return -ENOMEM;
        for (p = strtok_r(copy, "/", &save); p; p = strtok_r(NULL, "/", &save)) {
                if (streq(p, "."))
                        continue;
                if (streq(p, "..")) {
                        if (n > 0)
                                n--;
                        continue;
                }
                comp[n++] = p;
        }
        if (n == 0)
                return errorf(reterr, -EINVAL,
                              "linux.cgroupsPath: \"%s\" names the root cgroup; a container needs a cgroup "
                              "of its own",
                              path);
        for (size_t i = 0; i < n; i++)
                len += strlen(comp[i]) * 4 + 1;
        out = malloc(len + STRLEN(".scope") + 1);
        if (!out)
                return -ENOMEM;
        p = out;
        for (size_t i = 0; i < n; i++) {
                if (i > 0)
                        *p++ = '-';
                for (const char *c = comp[i]; *c; c++)
                        if (!valid_unit_char(*c) || *c == '-' || (i == 0 && c == comp[0] && *c == '.'))
                                p += sprintf(p, "\\x%02x", (unsigned char) *c);
                        else
                                *p++ = *c;
        }
        strcpy(p, ".scope");
        *ret = TAKE_PTR(out);
        return 0;
}

/* The systemd form "slice:prefix:name": exactly two ':' and not an absolute path. Anything else is a path
 * in cgroupfs form. */
static bool cgroups_path_is_systemd_form(const char *path) {
        const char *c1 = strchr(path, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

        return path[0] != '/' && c2 && !strchr(c2 + 1, ':');
}

int sdunit_scope_name_from_cgroups_path(const char *cgroups_path, const char *id, char **ret_slice,
                                        char **ret_unit, char **reterr) {
        _cleanup_free_ char *slice = NULL, *unit = NULL, *ep = NULL, *en = NULL, *copy = NULL, *base = NULL;
        const char *s, *prefix, *name;
        char *c1, *c2;
        int r;

        assert(ret_slice);
        assert(ret_unit);

        if (isempty(cgroups_path)) {
                if (isempty(id))
                        return errorf(reterr, -EINVAL,
                                      "linux.cgroupsPath is empty and no container id was given");
                r = unit_name_escape_part(id, &en);
                if (r < 0)
                        return r;
                if (asprintf(&unit, "sdrun-%s.scope", en) < 0)
                        return -ENOMEM;
                slice = strdup("machine.slice");
                if (!slice)
                        return -ENOMEM;
                goto check;
        }

        if (!cgroups_path_is_systemd_form(cgroups_path)) {
                r = scope_name_from_cgroupfs_path(cgroups_path, &unit, reterr);
                if (r < 0)
                        return r;
                slice = strdup("machine.slice");
                if (!slice)
                        return -ENOMEM;
                goto check;
        }

        copy = strdup(cgroups_path);
        if (!copy)
                return -ENOMEM;
        c1 = strchr(copy, ':');
        c2 = strchr(c1 + 1, ':');
        *c1 = *c2 = 0;
        s = copy;
        prefix = c1 + 1;
        name = c2 + 1;

        if (isempty(s))
                s = "machine.slice";
        if (!slice_name_is_valid(s))
                return errorf(reterr, -EINVAL,
                              "linux.cgroupsPath: \"%s\": \"%s\" is not a valid slice name (it must end in "
                              "\".slice\", use only [A-Za-z0-9:_.-] and no leading, trailing or double '-')",
                              cgroups_path, s);
        if (isempty(name))
                return errorf(reterr, -EINVAL, "linux.cgroupsPath: \"%s\": the name part is empty",
                              cgroups_path);
        if (endswith(name, ".slice"))
                return errorf(reterr, -EINVAL,
                              "linux.cgroupsPath: \"%s\": the name is a slice; sdrun puts every container "
                              "in a scope of its own and supports only scope names",
                              cgroups_path);

        /* "x.scope" as the name means the scope x: do not double the suffix. */
        base = strdup(name);
        if (!base)
                return -ENOMEM;
        if (endswith(base, ".scope"))
                base[strlen(base) - STRLEN(".scope")] = 0;
        if (isempty(base))
                return errorf(reterr, -EINVAL, "linux.cgroupsPath: \"%s\": the name part is empty",
                              cgroups_path);

        r = unit_name_escape_part(base, &en);
        if (r < 0)
                return r;
        if (isempty(prefix))
                r = asprintf(&unit, "%s.scope", en);
        else {
                r = unit_name_escape_part(prefix, &ep);
                if (r < 0)
                        return r;
                r = asprintf(&unit, "%s-%s.scope", ep, en);
        }
        if (r < 0)
                return -ENOMEM;
        slice = strdup(s);
        if (!slice)
                return -ENOMEM;

check:
        if (strlen(unit) > UNIT_NAME_MAX_LEN) {
                if (isempty(cgroups_path))
                        /* The unit name came from the id alone: blame the id, not a field nobody set. */
                        return errorf(
                                reterr, -EINVAL,
                                "container id \"%.40s...\" (%zu characters) is too long for its systemd unit "
                                "name (sdrun-ID.scope, at most %d characters once escaped): use a shorter id "
                                "or name the scope with linux.cgroupsPath",
                                id, strlen(id), UNIT_NAME_MAX_LEN);
                return errorf(reterr, -EINVAL,
                              "linux.cgroupsPath: unit name \"%s\" is longer than %d characters", unit,
                              UNIT_NAME_MAX_LEN);
        }
        *ret_slice = TAKE_PTR(slice);
        *ret_unit = TAKE_PTR(unit);
        return 0;
}

static int job_result_to_errno(const char *result) {
        if (streq(result, "timeout"))
                return -ETIMEDOUT;
        if (streq(result, "canceled"))
                return -ECANCELED;
        return -EIO;
}

static int start_transient(SdUnitBus *b, const char *unit, const char *slice, const char *description,
                           pid_t pid, const UnitPropertyList *extra, uint64_t timeout_usec, sd_bus_error *e,
                           sd_bus_message **ret_reply, char **reterr) {
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_free_ char *desc = NULL;
        uint32_t upid = (uint32_t) pid;
        int r;

        if (isempty(description)) {
                if (asprintf(&desc, "sdrun container %s", unit) < 0)
                        return -ENOMEM;
                description = desc;
        }

        r = sym_sd_bus_message_new_method_call(b->bus, &m, SD_DEST, SD_PATH, SD_IFACE_MANAGER,
                                               "StartTransientUnit");
        if (r < 0)
                goto fail;
        r = sym_sd_bus_message_append(m, "ss", unit, "fail");
        if (r < 0)
                goto fail;
        r = sym_sd_bus_message_open_container(m, 'a', "(sv)");
        if (r < 0)
                goto fail;
        r = sym_sd_bus_message_append(m, "(sv)(sv)(sv)(sv)(sv)", "Description", "s", description, "Slice",
                                      "s", slice, "Delegate", "b", 1, "DefaultDependencies", "b", 0,
                                      "CollectMode", "s", "inactive-or-failed");
        if (r < 0)
                goto fail;
        r = sym_sd_bus_message_append(m, "(sv)(sv)(sv)(sv)", "MemoryAccounting", "b", 1, "TasksAccounting",
                                      "b", 1, "CPUAccounting", "b", 1, "IOAccounting", "b", 1);
        if (r < 0)
                goto fail;
        r = sym_sd_bus_message_append(m, "(sv)", "PIDs", "au", 1, upid);
        if (r < 0)
                goto fail;
        r = sdunit_append_properties(m, extra, reterr);
        if (r < 0)
                return r;
        r = sym_sd_bus_message_close_container(m);
        if (r < 0)
                goto fail;
        r = sym_sd_bus_message_append(m, "a(sa(sv))", 0);
        if (r < 0)
                goto fail;

        return sym_sd_bus_call(b->bus, m, timeout_usec, e, ret_reply);
fail:
        return sdunit_fail(reterr, r, NULL, "build StartTransientUnit message for %s", unit);
}

int sdunit_start_scope(SdUnitBus *b, const char *unit, const char *slice, const char *description, pid_t pid,
                       const UnitPropertyList *extra, uint64_t timeout_usec, char **reterr) {
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + timeout_usec;
        int r;

        assert(b);
        assert(unit);
        assert(slice);
        assert(pid > 0);

        r = sdunit_bus_watch_jobs(b, reterr);
        if (r < 0)
                return r;

        for (unsigned attempt = 0;; attempt++) {
                _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
                _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                _cleanup_(sdunit_job_wait_done) SdUnitJobWait w = {};
                uint64_t now = now_usec(CLOCK_MONOTONIC);

                if (now >= deadline)
                        return sdunit_fail(reterr, -ETIMEDOUT, NULL, "start transient scope %s", unit);

                /* The JobRemoved match was installed above; signals that arrive while sd_bus_call() waits
                 * for the reply are queued and only dispatched by sdunit_job_wait_run(). */
                r = start_transient(b, unit, slice, description, pid, extra, deadline - now, &e, &reply,
                                    reterr);
                if (r < 0 && sym_sd_bus_error_has_name(&e, "org.freedesktop.systemd1.UnitExists") &&
                    attempt == 0) {
                        _cleanup_free_ char *state = NULL;
                        _cleanup_free_ char *err2 = NULL;

                        /* Only now find out what the existing unit is: the common path costs no round trip. */
                        r = sdunit_get_active_state(b, unit, &state, &err2);
                        if (r == -ENOENT)
                                continue; /* gone in between */
                        if (r < 0)
                                return sdunit_fail(reterr, -EEXIST, &e, "start transient scope %s", unit);
                        if (!streq(state, "failed") && !streq(state, "inactive"))
                                return errorf(reterr, -EEXIST,
                                              "start transient scope %s: unit %s already exists and is %s",
                                              unit, unit, state);
                        r = sdunit_reset_failed_unit(b, unit, reterr);
                        if (r < 0 && r != -ENOENT)
                                return r;
                        continue;
                }
                if (r < 0 && attempt == 0 && sdunit_manager_left_bus(b, &e) && sdunit_manager_back(b)) {
                        _cleanup_free_ char *state = NULL, *err2 = NULL;

                        /* PID 1 re-executed with our call in flight: it either never saw it (no unit: send it
                         * again) or made the scope, with our pid in it, before it left (done). */
                        r = sdunit_get_active_state(b, unit, &state, &err2);
                        if (r == -ENOENT)
                                continue;
                        if (r >= 0 && streq(state, "active"))
                                return 0;
                        r = -EIO; /* anything else: report the first failure */
                }
                if (r < 0) {
                        if (reterr && *reterr && !sym_sd_bus_error_is_set(&e))
                                return r; /* message already filled while building the call */
                        if (sym_sd_bus_error_has_name(&e, "org.freedesktop.systemd1.UnitExists"))
                                r = -EEXIST;
                        return sdunit_fail(reterr, r, &e, "start transient scope %s in %s", unit, slice);
                }

                r = sdunit_job_wait_reply(b, reply, &w, deadline, "start transient scope", unit, reterr);
                if (r == -ESTALE) {
                        /* The job ended while PID 1 re-executed itself, unseen: the unit tells how. */
                        _cleanup_free_ char *state = NULL, *err2 = NULL;

                        if (sdunit_get_active_state(b, unit, &state, &err2) >= 0 && streq(state, "active")) {
                                if (reterr) {
                                        free(*reterr);
                                        *reterr = NULL;
                                }
                                return 0;
                        }
                        return r;
                }
                if (r < 0)
                        return r;
                if (!streq(w.result, "done")) {
                        _cleanup_free_ char *why = NULL, *err2 = NULL;

                        (void) sdunit_get_property_string(b, unit, SD_IFACE_SCOPE, "Result", &why, &err2);
                        return sdunit_fail(reterr, job_result_to_errno(w.result), NULL,
                                           "start transient scope %s: job %s (unit result: %s)", unit,
                                           w.result, strna(why));
                }
                return 0;
        }
}
