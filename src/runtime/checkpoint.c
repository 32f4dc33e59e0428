/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `checkpoint`: dump a running container with `criu dump` (or `criu pre-dump`), runc's flags and meaning. */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cgroup-util.h"
#include "criu.h"
#include "error-util.h"
#include "fileio.h"
#include "hooks.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "sdunit.h"
#include "state.h"
#include "strv.h"

#define UNIT_STOP_TIMEOUT_USEC (30 * USEC_PER_SEC)

static int mkdir_and_resolve(const char *what, const char *path, char **ret, char **reterr) {
        if (mkdir(path, 0700) < 0 && errno != EEXIST)
                return errorf(reterr, -errno, "%s: cannot create \"%s\": %s", what, path, strerror(errno));
        *ret = realpath(path, NULL);
        if (!*ret)
                return errorf(reterr, -errno, "%s: \"%s\": %s", what, path, strerror(errno));
        return 0;
}

int criu_resolve_dirs(const CriuCommonOptions *o, bool create_image, char **ret_image, char **ret_work,
                      char **reterr) {
        _cleanup_free_ char *image = NULL, *def = NULL, *work = NULL;
        int r;

        if (!o->image_path) {
                _cleanup_free_ char *cwd = getcwd(NULL, 0);
                if (!cwd || asprintf(&def, "%s/checkpoint", cwd) < 0)
                        return -ENOMEM;
        }
        const char *ip = o->image_path ?: def;
        if (create_image) {
                r = mkdir_and_resolve("--image-path", ip, &image, reterr);
                if (r < 0)
                        return r;
        } else {
                struct stat st;
                image = realpath(ip, NULL);
                if (!image)
                        return errorf(reterr, -errno, "--image-path: \"%s\": %s", ip, strerror(errno));
                if (stat(image, &st) < 0 || !S_ISDIR(st.st_mode))
                        return errorf(reterr, ENOTDIR, "--image-path: \"%s\" is not a directory", ip);
        }
        if (o->work_path) {
                r = mkdir_and_resolve("--work-path", o->work_path, &work, reterr);
                if (r < 0)
                        return r;
        } else if (!(work = strdup(image)))
                return -ENOMEM;
        *ret_image = TAKE_PTR(image);
        *ret_work = TAKE_PTR(work);
        return 0;
}

int criu_add_common_args(char ***args, const CriuCommonOptions *o) {
        if (o->manage_cgroups_mode && strv_extendf(args, "--manage-cgroups=%s", o->manage_cgroups_mode) < 0)
                return -ENOMEM;
        if ((o->tcp_established && strv_extend(args, "--tcp-established") < 0) ||
            (o->ext_unix_sk && strv_extend(args, "--ext-unix-sk") < 0) ||
            (o->shell_job && strv_extend(args, "--shell-job") < 0) ||
            (o->file_locks && strv_extend(args, "--file-locks") < 0))
                return -ENOMEM;
        return 0;
}

/* runc's descriptors.json: where the init's stdio pointed ("pipe:[1234]", "/dev/null"), so that `restore`
 * can give the restored process the caller's new stdio in place of those pipes. */
static int write_descriptors(pid_t pid, const char *image) {
        _cleanup_json_ cJSON *a = cJSON_CreateArray();
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int dfd = -EBADF;

        if (!a)
                return -ENOMEM;
        for (int i = 0; i < 3; i++) {
                char path[64], target[PATH_MAX];
                ssize_t n;
                snprintf(path, sizeof path, "/proc/%d/fd/%d", (int) pid, i);
                n = readlink(path, target, sizeof target - 1);
                target[n < 0 ? 0 : n] = 0;
                if (!cJSON_AddItemToArray(a, cJSON_CreateString(target)))
                        return -ENOMEM;
        }
        text = json_print(a);
        if (!text)
                return -ENOMEM;
        dfd = open(image, O_DIRECTORY | O_CLOEXEC | O_RDONLY);
        if (dfd < 0)
                return -errno;
        return write_file_atomic_at(dfd, "descriptors.json", text, strlen(text), 0600);
}

/* --parent-path names the images of an earlier (pre-)dump relative to the image directory, as CRIU's
 * --prev-images-dir (a link "parent" in the images): checked here, as runc does, so that a wrong one is an
 * error naming the option rather than CRIU failing half-way with its own words. */
static int check_parent_path(const char *parent, const char *image, char **reterr) {
        _cleanup_free_ char *full = NULL;
        struct stat st;

        if (!parent)
                return 0;
        if (isempty(parent) || parent[0] == '/')
                return errorf(reterr, EINVAL,
                              "--parent-path: \"%s\" must be a path relative to the image directory (%s)",
                              parent, image);
        if (asprintf(&full, "%s/%s", image, parent) < 0)
                return -ENOMEM;
        if (stat(full, &st) < 0)
                return errorf(reterr, -errno, "--parent-path: \"%s\" (%s): %s", parent, full,
                              strerror(errno));
        if (!S_ISDIR(st.st_mode))
                return errorf(reterr, ENOTDIR, "--parent-path: \"%s\" (%s) is not a directory", parent,
                              full);
        return 0;
}

/* process.terminal: the init's terminal is a pty slave of the container's devpts whose master is outside (with
 * whoever got it from --console-socket). CRIU dumps no pty without its master, but leaves out an external tty
 * (--external tty[RDEV:DEV]); `restore` gives CRIU a new pty's slave under that name and hands its master to
 * --console-socket, as runc does (runc with CRIU's orphan-pts-master, which works over CRIU's RPC only). The
 * name is kept in the image directory for `restore`. ret: NULL when no standard stream is a pty. */
static int terminal_key(pid_t pid, char **ret) {
        *ret = NULL;
        for (int i = 0; i < 3; i++) {
                char path[64];
                struct stat st;

                snprintf(path, sizeof path, "/proc/%d/fd/%d", (int) pid, i);
                /* Unix98 pty slaves: majors 136-143 */
                if (stat(path, &st) < 0 || !S_ISCHR(st.st_mode) || major(st.st_rdev) < 136 ||
                    major(st.st_rdev) > 143)
                        continue;
                if (asprintf(ret, "tty[%" PRIx64 ":%" PRIx64 "]", (uint64_t) st.st_rdev,
                             (uint64_t) st.st_dev) < 0)
                        return -ENOMEM;
                return 0;
        }
        return 0;
}

static int build_state_json(Container *ct, ContainerStatus st, char **ret) {
        _cleanup_json_ cJSON *j = NULL;
        int r = container_oci_state(ct, st, &j);
        if (r < 0)
                return r;
        *ret = json_print(j);
        return *ret ? 0 : -ENOMEM;
}

int container_checkpoint(const CheckpointOptions *o, char **reterr) {
        _cleanup_(container_freep) Container *ct = NULL;
        _cleanup_(oci_config_freep) OciConfig *c = NULL;
        _cleanup_free_ char *raw = NULL, *criu = NULL, *version = NULL, *image = NULL, *work = NULL,
                            *log_path = NULL;
        _cleanup_strv_free_ char **args = NULL;
        _cleanup_(criu_run_done) CriuRun run = {};
        _cleanup_close_ int errfd = -EBADF;
        CriuExtMount *ext = NULL;
        size_t raw_len = 0, n_ext = 0;
        ContainerStatus st;
        CgroupLayout layout;
        pid_t pid;
        int r;

        assert(o);
        if (o->common.lazy_pages)
                return errorf(reterr, EOPNOTSUPP,
                              "--lazy-pages: not supported by sdrun (see sdrun-checkpoint(8))");

        r = container_load_status(o->root, o->id, CONTAINER_LOCK_EXCLUSIVE, &ct, &st, reterr);
        if (r < 0)
                return r;
        if (st != CONTAINER_RUNNING && st != CONTAINER_PAUSED)
                return errorf(reterr, EINVAL, "cannot checkpoint container \"%s\": it is %s, not running",
                              o->id, container_status_to_string(st));
        r = container_read_config(ct, &raw, &raw_len);
        if (r >= 0)
                r = oci_config_reparse(raw, raw_len, &c, NULL);
        if (r < 0)
                return errorf(reterr, r, "cannot read the config of container \"%s\"", o->id);

        r = criu_require(o->common.criu, &criu, &version, reterr);
        if (r < 0)
                return errwrap(reterr, r, "cannot checkpoint container \"%s\"", o->id);

        r = criu_resolve_dirs(&o->common, true, &image, &work, reterr);
        if (r < 0)
                return r;
        r = check_parent_path(o->parent_path, image, reterr);
        if (r < 0)
                return r;
        if (asprintf(&log_path, "%s/%s", work, o->pre_dump ? "pre-dump.log" : "dump.log") < 0)
                return -ENOMEM;
        (void) unlink(log_path);

        r = criu_external_mounts(c, ct->bundle, ct->pid, &ext, &n_ext);
        if (r < 0)
                return errorf(reterr, r, "read the mounts of container \"%s\": %s", o->id, strerror(-r));

        if (strv_extend(&args, criu) < 0 || strv_extend(&args, o->pre_dump ? "pre-dump" : "dump") < 0 ||
            strv_extend(&args, "--tree") < 0 || strv_extendf(&args, "%d", (int) ct->pid) < 0 ||
            strv_extend(&args, "--images-dir") < 0 || strv_extend(&args, image) < 0 ||
            strv_extend(&args, "--work-dir") < 0 || strv_extend(&args, work) < 0 ||
            strv_extend(&args, "--log-file") < 0 || strv_extend(&args, log_path) < 0 ||
            strv_extend(&args, "-v4") < 0)
                r = -ENOMEM;
        for (size_t i = 0; r >= 0 && i < n_ext; i++)
                if (strv_extend(&args, "--ext-mount-map") < 0 ||
                    strv_extendf(&args, "%s:%s", ext[i].mountpoint, ext[i].cookie) < 0)
                        r = -ENOMEM;
        criu_external_mounts_free(ext, n_ext);
        if (r < 0)
                return r;
        r = criu_add_common_args(&args, &o->common);
        if (r < 0)
                return r;
        if ((o->leave_running && !o->pre_dump && strv_extend(&args, "--leave-running") < 0) ||
            (o->parent_path &&
             (strv_extend(&args, "--prev-images-dir") < 0 || strv_extend(&args, o->parent_path) < 0)) ||
            ((o->parent_path || o->pre_dump) && strv_extend(&args, "--track-mem") < 0) ||
            (o->auto_dedup && strv_extend(&args, "--auto-dedup") < 0) ||
            (o->empty_ns_network && (strv_extend(&args, "--empty-ns") < 0 || strv_extend(&args, "net") < 0)))
                return -ENOMEM;
        if (o->page_server) {
                const char *colon = strrchr(o->page_server, ':');
                if (!colon || colon == o->page_server || !colon[1])
                        return errorf(reterr, EINVAL, "--page-server: expected ADDRESS:PORT, got \"%s\"",
                                      o->page_server);
                if (strv_extend(&args, "--page-server") < 0 || strv_extend(&args, "--address") < 0 ||
                    strv_extendf(&args, "%.*s", (int) (colon - o->page_server), o->page_server) < 0 ||
                    strv_extend(&args, "--port") < 0 || strv_extend(&args, colon + 1) < 0)
                        return -ENOMEM;
        }
        /* A network namespace the container joined (linux.namespaces[].path, e.g. Podman's) is not the
         * container's to dump: declared external under runc's key, `restore` hands it back. */
        {
                const char *netns_path = NULL;
                struct stat sst;
                if (oci_config_has_namespace(c, OCI_NS_NETWORK, &netns_path) && netns_path &&
                    !o->empty_ns_network) {
                        if (stat(netns_path, &sst) < 0)
                                return errorf(reterr, -errno,
                                              "linux.namespaces: network namespace \"%s\": %s", netns_path,
                                              strerror(errno));
                        if (strv_extend(&args, "--external") < 0 ||
                            strv_extendf(&args, "net[%" PRIu64 "]:extRootNetNS", (uint64_t) sst.st_ino) < 0)
                                return -ENOMEM;
                }
        }
        /* Freeze through the cgroup (consistent, and what a paused container already is) where it is the
         * unified hierarchy; elsewhere CRIU seizes the tasks one by one. */
        if (cgroup_detect_layout(&layout) >= 0 && layout == CGROUP_LAYOUT_UNIFIED && !isempty(ct->cgroup)) {
                _cleanup_free_ char *dir = NULL;
                if (cgroup_unified_dir(ct->cgroup, &dir) >= 0 &&
                    (strv_extend(&args, "--freeze-cgroup") < 0 || strv_extend(&args, dir) < 0))
                        return -ENOMEM;
        }

        if (c->has_process && c->process.terminal) {
                _cleanup_free_ char *key = NULL;
                _cleanup_close_ int dfd = -EBADF;
                r = terminal_key(ct->pid, &key);
                if (r < 0)
                        return r;
                dfd = open(image, O_DIRECTORY | O_CLOEXEC | O_RDONLY);
                if (dfd < 0)
                        return errorf(reterr, -errno, "--image-path: \"%s\": %s", image, strerror(errno));
                (void) unlinkat(dfd, CRIU_TERMINAL_FILE, 0);
                if (key) {
                        r = write_file_atomic_at(dfd, CRIU_TERMINAL_FILE, key, strlen(key), 0600);
                        if (r < 0)
                                return errorf(reterr, r, "--image-path: write \"%s/%s\": %s", image,
                                              CRIU_TERMINAL_FILE, strerror(-r));
                        if (strv_extend(&args, "--external") < 0 || strv_extend(&args, key) < 0)
                                return -ENOMEM;
                } else
                        log_debug(
                                "checkpoint %s: process.terminal, but no standard stream of the init is a pty",
                                o->id);
        }

        r = write_descriptors(ct->pid, image);
        if (r < 0)
                return errorf(reterr, r, "--image-path: write \"%s/descriptors.json\": %s", image,
                              strerror(-r));

        if (log_get_max_level() >= LOG_LEVEL_DEBUG) {
                _cleanup_free_ char *line = strv_join(args, " ");
                log_debug("checkpoint %s: %s", o->id, strempty(line));
        }
        r = criu_spawn(args, -EBADF, -EBADF, NULL, NULL, &pid, &errfd);
        if (r < 0)
                return errorf(reterr, r, "cannot run %s: %s", criu, strerror(-r));
        r = criu_wait(pid, errfd, &run);
        if (r < 0)
                return errorf(reterr, r, "wait for criu: %s", strerror(-r));
        if (run.status != 0) {
                _cleanup_free_ char *why = criu_explain_failure(version, &run, log_path);
                return errorf(reterr, EIO, "%s", why ?: "criu failed");
        }
        log_info("%s container %s to %s (criu %s)", o->pre_dump ? "pre-dumped" : "checkpointed", o->id,
                 image, version);
        if (o->pre_dump || o->leave_running)
                return 0;

        /* CRIU has killed the container's processes: the container is stopped. As a container that stopped
         * and is deleted: its scope stopped, its poststop hooks run, now (the marker keeps `delete` from running
         * them twice). */
        if (ct->unit) {
                _cleanup_(sdunit_bus_closep) SdUnitBus *bus = NULL;
                _cleanup_free_ char *err = NULL;
                if (sdunit_bus_open(ct->user_bus, &bus, NULL) >= 0) {
                        (void) sdunit_kill_unit(bus, ct->unit, SIGKILL, NULL);
                        r = sdunit_stop_unit(bus, ct->unit, UNIT_STOP_TIMEOUT_USEC, &err);
                        if (r < 0 && r != -ENOENT)
                                log_warning("checkpoint %s: stop unit %s: %s", o->id, ct->unit,
                                            err ?: strerror(-r));
                }
        }
        r = write_file_atomic_at(ct->dir_fd, CHECKPOINTED_MARKER, image, strlen(image), 0600);
        if (r < 0)
                log_warning_errno(r, "checkpoint %s: cannot write the checkpointed marker: %m", o->id);
        if (c->hooks.n_hooks[OCI_HOOK_POSTSTOP] > 0) {
                _cleanup_free_ char *state_json = NULL;
                if (build_state_json(ct, CONTAINER_STOPPED, &state_json) >= 0)
                        (void) hooks_run_all_warn(c, OCI_HOOK_POSTSTOP, state_json, ct->bundle ?: "/");
        }
        return 0;
}
