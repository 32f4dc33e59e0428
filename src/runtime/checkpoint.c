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
#include "host-hooks.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "pipeline.h"
#include "sdunit.h"
#include "state.h"
#include "string-util.h"
#include "strv.h"

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

/* What container_checkpoint() holds while it runs. Nothing it makes is undone: the images stay for the
 * caller to look at (and CRIU's log names what failed). */
typedef struct CheckpointRun {
        const CheckpointOptions *o;
        Container *ct;
        OciConfig *c;
        char *criu, *version, *image, *work, *log_path;
        char **args;
        bool freezes; /* --freeze-cgroup of a running container: CHECKPOINTING_MARKER while criu runs */
        int errfd;
        CriuRun run;
} CheckpointRun;

static void checkpoint_run_done(CheckpointRun *cr) {
        criu_run_done(&cr->run);
        cr->errfd = safe_close(cr->errfd);
        strv_free(cr->args);
        free(cr->log_path);
        free(cr->work);
        free(cr->image);
        free(cr->version);
        free(cr->criu);
        oci_config_freep(&cr->c);
        container_freep(&cr->ct);
}

/* The container, running (or paused), and its config. */
static int checkpoint_load(CheckpointRun *cr, char **reterr) {
        const CheckpointOptions *o = cr->o;
        _cleanup_free_ char *raw = NULL;
        size_t raw_len = 0;
        ContainerStatus st;
        int r;

        if (o->common.lazy_pages)
                return errorf(reterr, EOPNOTSUPP,
                              "--lazy-pages: not supported by sdrun (see sdrun-checkpoint(8))");
        r = container_load_status(o->root, o->id, CONTAINER_LOCK_EXCLUSIVE, &cr->ct, &st, reterr);
        if (r < 0)
                return r;
        if (st != CONTAINER_RUNNING && st != CONTAINER_PAUSED)
                return errorf(reterr, EINVAL, "cannot checkpoint container \"%s\": it is %s, not running",
                              o->id, container_status_to_string(st));
        r = container_read_config(cr->ct, &raw, &raw_len);
        if (r >= 0)
                r = oci_config_reparse(raw, raw_len, &cr->c, NULL);
        if (r < 0)
                return errorf(reterr, r, "cannot read the config of container \"%s\"", o->id);
        return 0;
}

/* criu, and the directories of the images, of an earlier pre-dump (--parent-path) and of criu's work. */
static int checkpoint_image(CheckpointRun *cr, char **reterr) {
        const CheckpointOptions *o = cr->o;
        int r;

        r = criu_require(o->common.criu, &cr->criu, &cr->version, reterr);
        if (r < 0)
                return errwrap(reterr, r, "cannot checkpoint container \"%s\"", o->id);
        r = criu_resolve_dirs(&o->common, true, &cr->image, &cr->work, reterr);
        if (r < 0)
                return r;
        r = check_parent_path(o->parent_path, cr->image, reterr);
        if (r < 0)
                return r;
        cr->log_path = strdup_printf("%s/%s", cr->work, o->pre_dump ? "pre-dump.log" : "dump.log");
        if (!cr->log_path)
                return -ENOMEM;
        (void) unlink(cr->log_path);
        return 0;
}

/* --page-server ADDRESS:PORT, as CRIU's --address and --port. */
static int checkpoint_args_page_server(CheckpointRun *cr, char **reterr) {
        const char *ps = cr->o->page_server, *colon;

        if (!ps)
                return 0;
        colon = strrchr(ps, ':');
        if (!colon || colon == ps || !colon[1])
                return errorf(reterr, EINVAL, "--page-server: expected ADDRESS:PORT, got \"%s\"", ps);
        if (strv_extend(&cr->args, "--page-server") < 0 || strv_extend(&cr->args, "--address") < 0 ||
            strv_extendf(&cr->args, "%.*s", (int) (colon - ps), ps) < 0 ||
            strv_extend(&cr->args, "--port") < 0 || strv_extend(&cr->args, colon + 1) < 0)
                return -ENOMEM;
        return 0;
}

/* criu's command line from the options: the dump, the container's external mounts, and runc's flags. */
static int checkpoint_args(CheckpointRun *cr, char **reterr) {
        const CheckpointOptions *o = cr->o;
        CriuExtMount *ext = NULL;
        size_t n_ext = 0;
        int r;

        r = criu_external_mounts(cr->c, cr->ct->bundle, cr->ct->pid, &ext, &n_ext);
        if (r < 0)
                return errorf(reterr, r, "read the mounts of container \"%s\": %s", o->id, strerror(-r));
        if (strv_extend(&cr->args, cr->criu) < 0 ||
            strv_extend(&cr->args, o->pre_dump ? "pre-dump" : "dump") < 0 ||
            strv_extend(&cr->args, "--tree") < 0 || strv_extendf(&cr->args, "%d", (int) cr->ct->pid) < 0 ||
            strv_extend_strv(&cr->args, (char *const[]){ "--images-dir", cr->image, "--work-dir", cr->work,
                                                         "--log-file", cr->log_path, "-v4", NULL }) < 0)
                r = -ENOMEM;
        for (size_t i = 0; r >= 0 && i < n_ext; i++)
                if (strv_extend(&cr->args, "--ext-mount-map") < 0 ||
                    strv_extendf(&cr->args, "%s:%s", ext[i].mountpoint, ext[i].cookie) < 0)
                        r = -ENOMEM;
        criu_external_mounts_free(ext, n_ext);
        if (r >= 0)
                r = criu_add_common_args(&cr->args, &o->common);
        if (r < 0)
                return r;
        if ((o->leave_running && !o->pre_dump && strv_extend(&cr->args, "--leave-running") < 0) ||
            (o->parent_path && (strv_extend(&cr->args, "--prev-images-dir") < 0 ||
                                strv_extend(&cr->args, o->parent_path) < 0)) ||
            ((o->parent_path || o->pre_dump) && strv_extend(&cr->args, "--track-mem") < 0) ||
            (o->auto_dedup && strv_extend(&cr->args, "--auto-dedup") < 0) ||
            (o->empty_ns_network &&
             (strv_extend(&cr->args, "--empty-ns") < 0 || strv_extend(&cr->args, "net") < 0)))
                return -ENOMEM;
        return checkpoint_args_page_server(cr, reterr);
}

/* What the host holds of the container: a joined network namespace (external), its cgroup (frozen). */
static int checkpoint_args_host(CheckpointRun *cr, char **reterr) {
        const char *netns_path = NULL;
        CgroupLayout layout;
        struct stat st;

        /* A network namespace the container joined (linux.namespaces[].path, e.g. Podman's) is not the
         * container's to dump: declared external under runc's key, `restore` hands it back. */
        if (oci_config_has_namespace(cr->c, OCI_NS_NETWORK, &netns_path) && netns_path &&
            !cr->o->empty_ns_network) {
                if (stat(netns_path, &st) < 0)
                        return errorf(reterr, -errno, "linux.namespaces: network namespace \"%s\": %s",
                                      netns_path, strerror(errno));
                if (strv_extend(&cr->args, "--external") < 0 ||
                    strv_extendf(&cr->args, "net[%" PRIu64 "]:extRootNetNS", (uint64_t) st.st_ino) < 0)
                        return -ENOMEM;
        }
        /* Freeze through the cgroup (consistent, and what a paused container already is) where it is the
         * unified hierarchy; elsewhere CRIU seizes the tasks one by one. */
        if (cgroup_detect_layout(&layout) >= 0 && layout == CGROUP_LAYOUT_UNIFIED &&
            !isempty(cr->ct->cgroup)) {
                _cleanup_free_ char *dir = NULL;
                if (cgroup_unified_dir(cr->ct->cgroup, &dir) >= 0) {
                        if (strv_extend(&cr->args, "--freeze-cgroup") < 0 || strv_extend(&cr->args, dir) < 0)
                                return -ENOMEM;
                        /* A paused container stays frozen after CRIU: only a running one's freeze is ours
                         * to undo. */
                        cr->freezes = !container_is_frozen(cr->ct);
                }
        }
        return 0;
}

/* process.terminal: the terminal as CRIU's external tty, its name kept in the images for `restore`; and
 * where the init's stdio pointed (descriptors.json). */
static int checkpoint_stdio(CheckpointRun *cr, char **reterr) {
        _cleanup_free_ char *key = NULL;
        _cleanup_close_ int dfd = -EBADF;
        int r;

        if (cr->c->has_process && cr->c->process.terminal) {
                r = terminal_key(cr->ct->pid, &key);
                if (r < 0)
                        return r;
                dfd = open(cr->image, O_DIRECTORY | O_CLOEXEC | O_RDONLY);
                if (dfd < 0)
                        return errorf(reterr, -errno, "--image-path: \"%s\": %s", cr->image,
                                      strerror(errno));
                (void) unlinkat(dfd, CRIU_TERMINAL_FILE, 0);
                if (!key)
                        log_debug(
                                "checkpoint %s: process.terminal, but no standard stream of the init is a pty",
                                cr->o->id);
        }
        if (key) {
                r = write_file_atomic_at(dfd, CRIU_TERMINAL_FILE, key, strlen(key), 0600);
                if (r < 0)
                        return errorf(reterr, r, "--image-path: write \"%s/%s\": %s", cr->image,
                                      CRIU_TERMINAL_FILE, strerror(-r));
                if (strv_extend(&cr->args, "--external") < 0 || strv_extend(&cr->args, key) < 0)
                        return -ENOMEM;
        }
        r = write_descriptors(cr->ct->pid, cr->image);
        if (r < 0)
                return errorf(reterr, r, "--image-path: write \"%s/descriptors.json\": %s", cr->image,
                              strerror(-r));
        return 0;
}

/* criu dump (or pre-dump), to its end. */
static int checkpoint_dump(CheckpointRun *cr, char **reterr) {
        pid_t pid;
        int r;

        if (log_get_max_level() >= LOG_LEVEL_DEBUG) {
                _cleanup_free_ char *line = strv_join(cr->args, " ");
                log_debug("checkpoint %s: %s", cr->o->id, strempty(line));
        }
        /* Written before criu freezes the cgroup: if we are killed (criu with us), the next verb thaws it. */
        if (cr->freezes) {
                r = write_file_atomic_at(cr->ct->dir_fd, CHECKPOINTING_MARKER, "", 0, 0600);
                if (r < 0)
                        return errorf(reterr, r, "write %s in the state of \"%s\": %s", CHECKPOINTING_MARKER,
                                      cr->o->id, strerror(-r));
        }
        r = criu_spawn(cr->args, -EBADF, -EBADF, true, NULL, NULL, &pid, &cr->errfd);
        if (r < 0) {
                if (cr->freezes)
                        (void) container_end_checkpoint_freeze(cr->ct);
                return errorf(reterr, r, "cannot run %s: %s", cr->criu, strerror(-r));
        }
        r = criu_wait(pid, cr->errfd, &cr->run);
        /* criu thawed the cgroup unless it was killed: then we do. */
        if (cr->freezes)
                (void) container_end_checkpoint_freeze(cr->ct);
        if (r < 0)
                return errorf(reterr, r, "wait for criu: %s", strerror(-r));
        if (cr->run.status != 0) {
                _cleanup_free_ char *why = criu_explain_failure(cr->version, &cr->run, cr->log_path);
                return errorf(reterr, EIO, "%s", why ?: "criu failed");
        }
        log_info("%s container %s to %s (criu %s)", cr->o->pre_dump ? "pre-dumped" : "checkpointed",
                 cr->o->id, cr->image, cr->version);
        return 0;
}

/* CRIU has killed the container's processes (unless --pre-dump or --leave-running): the container is
 * stopped. As a container that stopped and is deleted: its scope stopped, its poststop hooks run, now (the
 * marker keeps `delete` from running them twice). */
static int checkpoint_stop(CheckpointRun *cr, char **reterr) {
        Container *ct = cr->ct;
        int r;

        if (cr->o->pre_dump || cr->o->leave_running)
                return 0;
        if (ct->unit) {
                _cleanup_(sdunit_bus_closep) SdUnitBus *bus = NULL;
                if (sdunit_bus_open(ct->user_bus, &bus, NULL) >= 0)
                        unit_teardown(bus, ct->unit, NULL, true, LOG_LEVEL_WARNING);
        }
        r = write_file_atomic_at(ct->dir_fd, CHECKPOINTED_MARKER, cr->image, strlen(cr->image), 0600);
        if (r < 0)
                log_warning_errno(r, "checkpoint %s: cannot write the checkpointed marker: %m", cr->o->id);
        if (cr->c->hooks.n_hooks[OCI_HOOK_POSTSTOP] > 0) {
                _cleanup_free_ char *state_json = NULL;
                if (build_state_json(ct, CONTAINER_STOPPED, &state_json) >= 0)
                        (void) host_hooks_run_all_warn(cr->c, OCI_HOOK_POSTSTOP, state_json,
                                                       ct->bundle ?: "/");
        }
        return 0;
}

/* The steps of checkpoint, in order. */
static int (*const checkpoint_steps[])(CheckpointRun *cr, char **reterr) = {
        checkpoint_load,  checkpoint_image, checkpoint_args, checkpoint_args_host,
        checkpoint_stdio, checkpoint_dump,  checkpoint_stop,
};

int container_checkpoint(const CheckpointOptions *o, char **reterr) {
        _cleanup_(checkpoint_run_done) CheckpointRun cr = { .o = o, .errfd = -EBADF };
        int r;

        assert(o);
        FOREACH_ARRAY(step, checkpoint_steps, ELEMENTSOF(checkpoint_steps)) {
                r = (*step)(&cr, reterr);
                if (r < 0)
                        return r;
        }
        return 0;
}
