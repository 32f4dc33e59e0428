/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `restore`: the container's transient scope first (as `create`), then `criu restore` into it. */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cgroup-props.h"
#include "cgroup-util.h"
#include "container.h"
#include "criu.h"
#include "error-util.h"
#include "fileio.h"
#include "hooks.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "mount.h"
#include "process-util.h"
#include "socket-util.h"
#include "sdunit.h"
#include "state.h"
#include "strv.h"

#define MACHINE_ANNOTATION "io.github.sdrun.machine"
#define SCOPE_JOB_TIMEOUT_USEC (30 * USEC_PER_SEC)
#define UNIT_STOP_TIMEOUT_USEC (30 * USEC_PER_SEC)
/* criu gets the caller's stdio at these numbers, named by --inherit-fd (its own stdio is our capture). */
#define INHERIT_FD_BASE 100
#define NETNS_FD (INHERIT_FD_BASE + 3)
#define TTY_FD (INHERIT_FD_BASE + 4)
#define CRIU_ROOT "criu-root"
#define CRIU_DEVPTS "criu-devpts"
#define HOOK_SCRIPT "criu-hook.sh"
#define HOOK_REQ "criu-hook.req"
#define HOOK_ACK "criu-hook.ack"

/* The unit properties of the scope, exactly as `create` builds them. */
static int build_scope_properties(const OciConfig *c, CgroupLayout layout, UnitPropertyList *props,
                                  CgroupFileWrites *writes, char **reterr) {
        int r;

        if (c->linux_.resources.present) {
                r = cgroup_props_from_resources(&c->linux_.resources, layout, props, writes, reterr);
                if (r < 0)
                        return r;
                r = cgroup_check_block_devices(&c->linux_.resources, reterr);
                if (r < 0)
                        return r;
                r = cgroup_props_add_default_devices(props, writes);
                if (r < 0)
                        return r;
        }
        r = unit_property_add_u64(props, "TimeoutStopUSec", 10 * USEC_PER_SEC);
        if (r < 0)
                return r;
        if (layout != CGROUP_LAYOUT_UNIFIED && !c->linux_.resources.block_io.present) {
                r = unit_property_add_bool(props, "IOAccounting", false);
                if (r < 0)
                        return r;
        }
        r = cgroup_props_from_annotations(c->annotations, c->n_annotations, props, reterr);
        if (r < 0)
                return errorf(reterr, r, "annotations: %s", reterr && *reterr ? *reterr : strerror(-r));
        return 0;
}

typedef struct ChildSetup {
        const char *rootfs;
        const char *criu_root; /* absolute */
        bool inherit[3];
        int netns_fd;
        int tty_fd;
        int devpts_fd;          /* the terminal's devpts (detached), attached on devpts_dir */
        const char *devpts_dir; /* absolute */
} ChildSetup;

/* In the forked child, before it execs criu: the caller's stdio at INHERIT_FD_BASE.., the joined network
 * namespace at NETNS_FD, the new terminal's pty slave at TTY_FD (and its devpts on devpts_dir, the source of
 * /dev/console), and the rootfs bound on criu-root in a mount namespace of its own (CRIU's --root
 * must be a mount point; the bind vanishes with criu, nothing is left on the host). */
static int child_setup(void *userdata) {
        const ChildSetup *s = userdata;

        for (int i = 0; i < 3; i++)
                if (s->inherit[i] && dup2(i, INHERIT_FD_BASE + i) < 0)
                        return -errno;
        if (s->netns_fd >= 0 && dup2(s->netns_fd, NETNS_FD) < 0)
                return -errno;
        if (s->tty_fd >= 0 && dup2(s->tty_fd, TTY_FD) < 0)
                return -errno;
        if (unshare(CLONE_NEWNS) < 0) {
                dprintf(STDERR_FILENO, "unshare(CLONE_NEWNS): %m\n");
                return -errno;
        }
        if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0 ||
            mount(s->rootfs, s->criu_root, NULL, MS_BIND | MS_REC, NULL) < 0) {
                dprintf(STDERR_FILENO, "bind the rootfs on %s: %m\n", s->criu_root);
                return -errno;
        }
        if (s->devpts_fd >= 0 &&
            move_mount(s->devpts_fd, "", AT_FDCWD, s->devpts_dir, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
                dprintf(STDERR_FILENO, "attach the terminal's devpts on %s: %m\n", s->devpts_dir);
                return -errno;
        }
        return 0;
}

static int read_descriptors(const char *image, char *ret[3]) {
        _cleanup_free_ char *buf = NULL;
        _cleanup_json_ cJSON *j = NULL;
        int r;

        r = read_full_file_in(image, "descriptors.json", 65536, &buf);
        if (r < 0)
                return r;
        j = cJSON_Parse(buf);
        if (!cJSON_IsArray(j))
                return -EBADMSG;
        for (int i = 0; i < 3; i++) {
                cJSON *e = cJSON_GetArrayItem(j, i);
                if (cJSON_IsString(e) && !(ret[i] = strdup(e->valuestring)))
                        return -ENOMEM;
        }
        return 0;
}

/* The prestart and createRuntime hooks run as runc runs them on restore: when CRIU has created the
 * container's namespaces ("setup-namespaces") and before it restores the processes. CRIU runs an action
 * script there; ours hands the init's pid to us over a FIFO and waits for our answer. */
static int write_hook_script(Container *ct, char **ret_path) {
        _cleanup_free_ char *script = NULL, *req = NULL, *ack = NULL, *text = NULL;
        int r;

        if (container_path(ct, HOOK_SCRIPT, &script) < 0 || container_path(ct, HOOK_REQ, &req) < 0 ||
            container_path(ct, HOOK_ACK, &ack) < 0)
                return -ENOMEM;
        if (mkfifoat(ct->dir_fd, HOOK_REQ, 0600) < 0 || mkfifoat(ct->dir_fd, HOOK_ACK, 0600) < 0)
                return -errno;
        if (asprintf(&text,
                     "#!/bin/sh\n"
                     "# sdrun restore: run the prestart/createRuntime hooks at CRIU's setup-namespaces.\n"
                     "[ \"$CRTOOLS_SCRIPT_ACTION\" = setup-namespaces ] || exit 0\n"
                     "echo \"$CRTOOLS_INIT_PID\" >'%s' || exit 1\n"
                     "read -r answer <'%s' || exit 1\n"
                     "[ \"$answer\" = ok ]\n",
                     req, ack) < 0)
                return -ENOMEM;
        r = write_file_atomic_at(ct->dir_fd, HOOK_SCRIPT, text, strlen(text), 0700);
        if (r < 0)
                return r;
        *ret_path = TAKE_PTR(script);
        return 0;
}

/* Wait for criu, answering the hook script's request on the way. A failed hook fails the restore. */
static int wait_criu_with_hooks(Container *ct, const OciConfig *c, pid_t criu_pid, int errfd, CriuRun *run,
                                char **reterr) {
        _cleanup_close_ int pidfd = -EBADF, req = -EBADF;
        int hook_r = 0;
        bool answered = false;

        pidfd = (int) syscall(SYS_pidfd_open, criu_pid, 0);
        req = openat(ct->dir_fd, HOOK_REQ, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (pidfd < 0 || req < 0)
                return -errno;
        while (!answered) {
                struct pollfd p[2] = { { .fd = pidfd, .events = POLLIN }, { .fd = req, .events = POLLIN } };
                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (p[1].revents & POLLIN) {
                        char buf[32] = {};
                        ssize_t n = read(req, buf, sizeof buf - 1);
                        if (n <= 0)
                                continue;
                        pid_t pid = (pid_t) strtol(buf, NULL, 10);
                        _cleanup_free_ char *st = NULL;
                        hook_r = container_hook_state_string(ct, CONTAINER_CREATING, pid, &st);
                        if (hook_r >= 0)
                                hook_r = hooks_run(c, OCI_HOOK_PRESTART, st, ct->bundle, reterr);
                        if (hook_r >= 0)
                                hook_r = hooks_run(c, OCI_HOOK_CREATE_RUNTIME, st, ct->bundle, reterr);
                        _cleanup_close_ int ack = openat(ct->dir_fd, HOOK_ACK, O_WRONLY | O_CLOEXEC);
                        if (ack >= 0)
                                (void) loop_write(ack, hook_r >= 0 ? "ok\n" : "fail\n", hook_r >= 0 ? 3 : 5);
                        answered = true;
                } else if (p[0].revents & POLLIN)
                        break;
        }
        int r = criu_wait(criu_pid, errfd, run);
        if (r < 0)
                return r;
        return hook_r;
}

static void teardown_scope(SdUnitBus *bus, const char *unit) {
        _cleanup_free_ char *err = NULL;
        int r;

        if (!bus || !unit)
                return;
        (void) sdunit_kill_unit(bus, unit, SIGKILL, NULL);
        r = sdunit_stop_unit(bus, unit, UNIT_STOP_TIMEOUT_USEC, &err);
        if (r < 0 && r != -ENOENT)
                log_debug("stop unit %s: %s", unit, err ?: strerror(-r));
}

/* An existing container with this id: a stopped one that `checkpoint` stopped is replaced (runc removes
 * those at once); anything else is refused. */
static int check_existing(const RestoreOptions *o, char **reterr) {
        _cleanup_(container_freep) Container *old = NULL;
        _cleanup_free_ char *err = NULL;
        ContainerStatus st;
        int r;

        r = container_load(o->root, o->id, CONTAINER_LOCK_EXCLUSIVE, &old, &err);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return errorf(reterr, r, "%s", err ?: strerror(-r));
        st = container_status(old);
        if (st == CONTAINER_STOPPED && faccessat(old->dir_fd, CHECKPOINTED_MARKER, F_OK, 0) >= 0) {
                log_debug("restore %s: replacing the container stopped by its checkpoint", o->id);
                (void) unlinkat(old->dir_fd, CRIU_ROOT, AT_REMOVEDIR);
                return container_remove(old);
        }
        return errorf(reterr, EEXIST, "container \"%s\" already exists (%s)", o->id,
                      container_status_to_string(st));
}

static int resolve_rootfs(const char *bundle, const OciConfig *c, char **ret, char **reterr) {
        _cleanup_free_ char *joined = NULL;
        struct stat st;

        if (!c->root_path)
                return errorf(reterr, EINVAL, "config.json: root.path: required");
        if (c->root_path[0] == '/')
                joined = strdup(c->root_path);
        else if (asprintf(&joined, "%s/%s", bundle, c->root_path) < 0)
                joined = NULL;
        if (!joined)
                return -ENOMEM;
        *ret = realpath(joined, NULL);
        if (!*ret || stat(*ret, &st) < 0)
                return errorf(reterr, -errno, "config.json: root.path: \"%s\": %s", joined, strerror(errno));
        if (!S_ISDIR(st.st_mode))
                return errorf(reterr, ENOTDIR, "config.json: root.path: \"%s\" is not a directory", joined);
        return 0;
}

/* The mount points of the bind mounts must exist in the rootfs (a fresh one, e.g. Podman's, may lack them):
 * created inside the root, as `create` would. Not below /dev, /proc, /sys: CRIU restores those filesystems. */
static int prepare_mount_points(const char *rootfs, const CriuExtMount *ext, size_t n, char **reterr) {
        _cleanup_close_ int root_fd = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);

        if (root_fd < 0)
                return errorf(reterr, -errno, "open rootfs \"%s\": %s", rootfs, strerror(errno));
        for (size_t i = 0; i < n; i++) {
                _cleanup_close_ int fd = -EBADF;
                const char *mp = ext[i].mountpoint;
                if (!streq(ext[i].cookie, mp) || ext[i].own_cgroup || strneq(mp, "/dev/", 5) ||
                    strneq(mp, "/proc/", 6) || strneq(mp, "/sys/", 5) || streq(mp, "/sys"))
                        continue;
                int r = mkdir_p_in_root(root_fd, mp, 0755, !ext[i].is_dir, &fd);
                if (r < 0)
                        return errorf(reterr, r, "mounts: create the mount point \"%s\" in the rootfs: %s",
                                      mp, strerror(-r));
        }
        return 0;
}

/* The restored container's terminal: a new pty in a devpts instance of its own, mounted nowhere (a detached
 * mount), so that no host mount and no host /dev/pts entry holds it. CRIU gets the slave in place of the
 * checkpointed terminal (an external tty) and binds it on /dev/console; the master goes to --console-socket. */
static int open_terminal(int *ret_devpts, int *ret_master, int *ret_slave, char **reterr) {
        _cleanup_close_ int fs_fd = -EBADF, mnt_fd = -EBADF, master = -EBADF, slave = -EBADF;
        int unlock = 0;

        fs_fd = fsopen("devpts", FSOPEN_CLOEXEC);
        if (fs_fd < 0 || fsconfig(fs_fd, FSCONFIG_SET_STRING, "mode", "0620", 0) < 0 ||
            fsconfig(fs_fd, FSCONFIG_SET_STRING, "ptmxmode", "0666", 0) < 0 ||
            fsconfig(fs_fd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                return errorf(reterr, -errno, "create a devpts instance for the terminal: %s",
                              strerror(errno));
        mnt_fd = fsmount(fs_fd, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
        if (mnt_fd < 0)
                return errorf(reterr, -errno, "mount a devpts instance for the terminal: %s",
                              strerror(errno));
        master = openat(mnt_fd, "ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (master < 0 || ioctl(master, TIOCSPTLCK, &unlock) < 0)
                return errorf(reterr, -errno, "open a pty for the terminal: %s", strerror(errno));
        slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (slave < 0)
                return errorf(reterr, -errno, "open the pty's peer: %s", strerror(errno));
        *ret_devpts = TAKE_FD(mnt_fd);
        *ret_master = TAKE_FD(master);
        *ret_slave = TAKE_FD(slave);
        return 0;
}

/* The go message for criu: "G", NUL-terminated arguments, an empty one. */
static int go_message(char **argv, char **ret, size_t *ret_len) {
        size_t len = 1;
        char *msg, *p;

        for (char **a = argv; *a; a++)
                len += strlen(*a) + 1;
        msg = malloc(len + 1);
        if (!msg)
                return -ENOMEM;
        msg[0] = 'G';
        p = msg + 1;
        for (char **a = argv; *a; a++)
                p = stpcpy(p, *a) + 1;
        *p = 0;
        *ret = msg;
        *ret_len = len + 1;
        return 0;
}

int container_restore(const RestoreOptions *o, pid_t *ret_pid, int *ret_pidfd, char **reterr) {
        _cleanup_(oci_config_freep) OciConfig *c = NULL;
        _cleanup_(container_freep) Container *ct = NULL;
        _cleanup_(sdunit_bus_closep) SdUnitBus *bus = NULL;
        _cleanup_free_ char *bundle = NULL, *rootfs = NULL, *raw = NULL, *slice = NULL, *unit = NULL,
                            *description = NULL, *cgroup = NULL, *criu = NULL, *version = NULL,
                            *image = NULL, *work = NULL, *log_path = NULL, *criu_root = NULL,
                            *pid_path = NULL, *hook_script = NULL, *pidtext = NULL, *tty_key = NULL,
                            *devpts_dir = NULL;
        _cleanup_(unit_property_list_done) UnitPropertyList props = {};
        _cleanup_(cgroup_file_writes_done) CgroupFileWrites writes = {};
        _cleanup_strv_free_ char **args = NULL;
        _cleanup_(criu_run_done) CriuRun run = {};
        _cleanup_close_ int bundle_fd = -EBADF, errfd = -EBADF, netns_fd = -EBADF, tty_master = -EBADF,
                            tty_slave = -EBADF, devpts_fd = -EBADF;
        _cleanup_close_pair_ int go[2] = { -EBADF, -EBADF };
        char *descriptors[3] = {};
        CriuExtMount *ext = NULL;
        size_t raw_len = 0, n_ext = 0;
        bool unit_started = false;
        pid_t criu_pid = 0, pid = 0;
        CgroupLayout layout;
        int r;

        assert(o);
        if (o->common.lazy_pages)
                return errorf(reterr, EOPNOTSUPP,
                              "--lazy-pages: not supported by sdrun (see sdrun-restore(8))");
        r = container_id_validate(o->id, reterr);
        if (r < 0)
                return r;
        bundle = realpath(o->bundle ?: ".", NULL);
        if (!bundle)
                return errorf(reterr, -errno, "--bundle: \"%s\": %s", o->bundle ?: ".", strerror(errno));
        bundle_fd = open(bundle, O_DIRECTORY | O_CLOEXEC | O_RDONLY);
        if (bundle_fd < 0)
                return errorf(reterr, -errno, "--bundle: \"%s\": %s", bundle, strerror(errno));
        r = read_full_file_at(bundle_fd, "config.json", 16U << 20, &raw, &raw_len);
        if (r < 0)
                return errorf(reterr, r, "config.json: cannot read \"%s/config.json\": %s", bundle,
                              strerror(-r));
        {
                _cleanup_free_ char *perr = NULL;
                r = oci_config_parse(raw, raw_len, &c, &perr);
                if (r < 0)
                        return errorf(reterr, r, "config.json: %s", perr ?: strerror(-r));
        }
        r = resolve_rootfs(bundle, c, &rootfs, reterr);
        if (r < 0)
                return r;
        bool terminal = c->has_process && c->process.terminal;
        if (o->console_socket && !terminal)
                return errorf(reterr, EINVAL, "--console-socket given but process.terminal is false");
        /* A terminal: a new one, its master to --console-socket (as runc). */
        if (terminal && !o->console_socket)
                return errorf(reterr, EINVAL, "process.terminal is true: --console-socket is required");

        r = criu_resolve_dirs(&o->common, false, &image, &work, reterr);
        if (r < 0)
                return r;
        if (faccessat(AT_FDCWD, image, F_OK, 0) < 0 || !({
                    _cleanup_free_ char *inv = NULL;
                    asprintf(&inv, "%s/inventory.img", image) >= 0 && access(inv, F_OK) >= 0;
            }))
                return errorf(reterr, ENOENT, "--image-path: \"%s\" holds no checkpoint (no inventory.img)",
                              image);
        if (terminal) {
                r = read_full_file_in(image, CRIU_TERMINAL_FILE, 256, &tty_key);
                if (r < 0)
                        return errorf(
                                reterr, r,
                                "--console-socket: the checkpoint in \"%s\" records no terminal (no %s: not "
                                "made by sdrun checkpoint of a container with process.terminal)",
                                image, CRIU_TERMINAL_FILE);
                tty_key[strcspn(tty_key, "\n")] = 0;
                if (!strneq(tty_key, "tty[", 4))
                        return errorf(reterr, EBADMSG, "--image-path: \"%s/%s\": not a terminal's name",
                                      image, CRIU_TERMINAL_FILE);
        }
        r = criu_require(o->common.criu, &criu, &version, reterr);
        if (r < 0)
                return r;

        r = sdunit_scope_name_from_cgroups_path(c->linux_.cgroups_path, o->id, &slice, &unit, reterr);
        if (r < 0)
                return errorf(reterr, r, "config.json: %s", reterr && *reterr ? *reterr : strerror(-r));
        log_set_context(o->id, unit);
        r = cgroup_detect_layout(&layout);
        if (r < 0)
                return errorf(reterr, r, "cannot determine the cgroup layout of /sys/fs/cgroup: %s",
                              strerror(-r));
        r = build_scope_properties(c, layout, &props, &writes, reterr);
        if (r < 0)
                return errorf(reterr, r, "config.json: %s", reterr && *reterr ? *reterr : strerror(-r));
        {
                const char *netns_path = NULL;
                if (oci_config_has_namespace(c, OCI_NS_NETWORK, &netns_path) && netns_path) {
                        netns_fd = open(netns_path, O_RDONLY | O_CLOEXEC);
                        if (netns_fd < 0)
                                return errorf(reterr, -errno,
                                              "linux.namespaces: network namespace \"%s\": %s", netns_path,
                                              strerror(errno));
                }
        }
        r = criu_external_mounts(c, bundle, 0, &ext, &n_ext);
        if (r < 0)
                return r;
        r = prepare_mount_points(rootfs, ext, n_ext, reterr);
        if (r < 0) {
                criu_external_mounts_free(ext, n_ext);
                return r;
        }

        r = check_existing(o, reterr);
        if (r < 0) {
                criu_external_mounts_free(ext, n_ext);
                return r;
        }

        /* From here on, everything created is undone on failure. */
        r = container_new(o->root, o->id, &ct, reterr);
        if (r < 0) {
                criu_external_mounts_free(ext, n_ext);
                return r;
        }
        ct->bundle = strdup(bundle);
        ct->rootfs = strdup(rootfs);
        ct->unit = strdup(unit);
        ct->slice = strdup(slice);
        container_record_owner_and_annotations(ct, c);
        if (!ct->bundle || !ct->rootfs || !ct->unit || !ct->slice ||
            container_path(ct, CRIU_ROOT, &criu_root) < 0 ||
            container_path(ct, "restore.pid", &pid_path) < 0 ||
            asprintf(&log_path, "%s/restore.log", work) < 0) {
                r = -ENOMEM;
                goto fail;
        }
        r = container_save_config(ct, raw, raw_len);
        if (r >= 0)
                r = container_save(ct);
        if (r < 0) {
                errorf(reterr, r, "write state of \"%s\": %s", o->id, strerror(-r));
                goto fail;
        }
        if (mkdirat(ct->dir_fd, CRIU_ROOT, 0700) < 0) {
                r = errorf(reterr, -errno, "create %s: %s", criu_root, strerror(errno));
                goto fail;
        }
        if (c->hooks.n_hooks[OCI_HOOK_PRESTART] + c->hooks.n_hooks[OCI_HOOK_CREATE_RUNTIME] > 0) {
                r = write_hook_script(ct, &hook_script);
                if (r < 0) {
                        errorf(reterr, r, "write the hook script for criu: %s", strerror(-r));
                        goto fail;
                }
        }
        (void) unlink(log_path);

        int pty_index = -1;
        if (tty_key) {
                r = open_terminal(&devpts_fd, &tty_master, &tty_slave, reterr);
                if (r < 0)
                        goto fail;
                if (ioctl(tty_master, TIOCGPTN, &pty_index) < 0) {
                        r = errorf(reterr, -errno, "the terminal's pty: %s", strerror(errno));
                        goto fail;
                }
                if (container_path(ct, CRIU_DEVPTS, &devpts_dir) < 0) {
                        r = -ENOMEM;
                        goto fail;
                }
                if (mkdirat(ct->dir_fd, CRIU_DEVPTS, 0700) < 0) {
                        r = errorf(reterr, -errno, "create %s: %s", devpts_dir, strerror(errno));
                        goto fail;
                }
        }
        ChildSetup cs = { .rootfs = rootfs,
                          .criu_root = criu_root,
                          .netns_fd = netns_fd,
                          .tty_fd = tty_slave,
                          .devpts_fd = devpts_fd,
                          .devpts_dir = devpts_dir };
        if (read_descriptors(image, descriptors) < 0)
                log_debug("restore %s: no usable descriptors.json in %s", o->id, image);

        if (strv_extend(&args, criu) < 0 || strv_extend(&args, "restore") < 0 ||
            strv_extend(&args, "--images-dir") < 0 || strv_extend(&args, image) < 0 ||
            strv_extend(&args, "--work-dir") < 0 || strv_extend(&args, work) < 0 ||
            strv_extend(&args, "--log-file") < 0 || strv_extend(&args, log_path) < 0 ||
            strv_extend(&args, "-v4") < 0 || strv_extend(&args, "--restore-detached") < 0 ||
            strv_extend(&args, "--restore-sibling") < 0 || strv_extend(&args, "--pidfile") < 0 ||
            strv_extend(&args, pid_path) < 0 || strv_extend(&args, "--root") < 0 ||
            strv_extend(&args, criu_root) < 0)
                r = -ENOMEM;
        /* Each cookie once: every mask of linux.maskedPaths shares "/dev/null". /dev/console: the new pty. The
         * own cgroup's source, the new scope, comes with the go. */
        for (size_t i = 0; r >= 0 && i < n_ext; i++) {
                bool dup = ext[i].own_cgroup || (ext[i].terminal && !devpts_dir);
                for (size_t k = 0; k < i; k++)
                        dup = dup || streq(ext[k].cookie, ext[i].cookie);
                if (dup)
                        continue;
                if (strv_extend(&args, "--ext-mount-map") < 0)
                        r = -ENOMEM;
                else if (ext[i].terminal)
                        r = strv_extendf(&args, "%s:%s/%d", ext[i].cookie, devpts_dir, pty_index) < 0
                                    ? -ENOMEM
                                    : 0;
                else
                        r = strv_extendf(&args, "%s:%s", ext[i].cookie, ext[i].source) < 0 ? -ENOMEM : 0;
        }
        for (int i = 0; r >= 0 && i < 3; i++)
                if (descriptors[i] && strneq(descriptors[i], "pipe:", 5)) {
                        cs.inherit[i] = true;
                        if (strv_extend(&args, "--inherit-fd") < 0 ||
                            strv_extendf(&args, "fd[%d]:%s", INHERIT_FD_BASE + i, descriptors[i]) < 0)
                                r = -ENOMEM;
                }
        if (r >= 0 && tty_key &&
            (strv_extend(&args, "--inherit-fd") < 0 ||
             strv_extendf(&args, "fd[%d]:%s", TTY_FD, tty_key) < 0))
                r = -ENOMEM;
        if (r >= 0 && netns_fd >= 0 &&
            (strv_extend(&args, "--inherit-fd") < 0 ||
             strv_extendf(&args, "fd[%d]:extRootNetNS", NETNS_FD) < 0))
                r = -ENOMEM;
        if (r >= 0 && hook_script &&
            (strv_extend(&args, "--action-script") < 0 || strv_extend(&args, hook_script) < 0))
                r = -ENOMEM;
        if (r >= 0)
                r = criu_add_common_args(&args, &o->common);
        if (r < 0)
                goto fail;

        r = sdunit_bus_open(geteuid() != 0, &bus, reterr);
        if (r < 0) {
                errorf(reterr, r, "connect to systemd: %s", reterr && *reterr ? *reterr : strerror(-r));
                goto fail;
        }
        if (pipe2(go, O_CLOEXEC) < 0) {
                r = -errno;
                goto fail;
        }
        /* A foreground restore waits for the restored init: as runc, be the subreaper that gets it. */
        if (!o->detach && !o->no_subreaper)
                (void) prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        r = criu_spawn(args, go[0], go[1], child_setup, &cs, &criu_pid, &errfd);
        if (r < 0) {
                errorf(reterr, r, "cannot run %s: %s", criu, strerror(-r));
                goto fail;
        }
        go[0] = safe_close(go[0]);

        /* The scope first, holding criu (blocked before exec): CRIU restores the process tree below it. */
        if (asprintf(&description, "sdrun container %s (bundle %s, restored)", o->id, bundle) < 0) {
                r = -ENOMEM;
                goto fail;
        }
        r = sdunit_start_scope(bus, unit, slice, description, criu_pid, &props, SCOPE_JOB_TIMEOUT_USEC,
                               reterr);
        if (r < 0)
                goto fail;
        unit_started = true;
        r = sdunit_get_control_group(bus, unit, &cgroup, reterr);
        if (r >= 0 && isempty(cgroup))
                r = errorf(reterr, EIO, "cannot find the cgroup of unit %s", unit);
        if (r < 0)
                goto fail;
        ct->cgroup = strdup(cgroup);
        if (writes.n_items > 0) {
                r = cgroup_apply_file_writes(&writes, cgroup, layout, reterr);
                if (r < 0) {
                        errorf(reterr, r, "config.json: linux.resources: %s",
                               reterr && *reterr ? *reterr : strerror(-r));
                        goto fail;
                }
        }
        log_debug("restore %s: scope %s started", o->id, unit);

        /* Go, with the cgroup root CRIU restores the tree into: the scope's cgroup; and that cgroup's directory as
         * the source of the container's cgroup mount where it is a bind of its own cgroup. */
        {
                _cleanup_strv_free_ char **extra = NULL;
                _cleanup_free_ char *msg = NULL;
                size_t len = 0;

                r = strv_extend(&extra, "--cgroup-root") < 0 || strv_extend(&extra, cgroup) < 0 ? -ENOMEM
                                                                                                : 0;
                for (size_t i = 0; r >= 0 && i < n_ext; i++)
                        if (ext[i].own_cgroup &&
                            (strv_extend(&extra, "--ext-mount-map") < 0 ||
                             strv_extendf(&extra, "%s:/sys/fs/cgroup%s", ext[i].cookie, cgroup) < 0))
                                r = -ENOMEM;
                if (r >= 0)
                        r = go_message(extra, &msg, &len);
                if (r < 0)
                        goto fail;
                if (log_get_max_level() >= LOG_LEVEL_DEBUG) {
                        _cleanup_free_ char *line = strv_join(args, " "), *more = strv_join(extra, " ");
                        log_debug("restore %s: %s %s", o->id, strempty(line), strempty(more));
                }
                r = loop_write(go[1], msg, len);
                go[1] = safe_close(go[1]);
                if (r < 0) {
                        errorf(reterr, r, "start criu: %s", strerror(-r));
                        goto fail;
                }
        }
        if (hook_script)
                r = wait_criu_with_hooks(ct, c, criu_pid, errfd, &run, reterr);
        else
                r = criu_wait(criu_pid, errfd, &run);
        criu_pid = 0;
        if (r < 0) {
                if (!reterr || !*reterr)
                        errorf(reterr, r, "wait for criu: %s", strerror(-r));
                goto fail;
        }
        if (run.status != 0) {
                _cleanup_free_ char *why = criu_explain_failure(version, &run, log_path);
                r = errorf(reterr, EIO, "%s", why ?: "criu failed");
                goto fail;
        }
        r = read_full_file_at(ct->dir_fd, "restore.pid", 64, &pidtext, NULL);
        if (r >= 0) {
                pid = (pid_t) strtol(pidtext, NULL, 10);
                if (pid <= 0)
                        r = -EBADMSG;
        }
        if (r < 0) {
                errorf(reterr, r, "criu restored the container but wrote no pid to %s", pid_path);
                goto fail;
        }
        r = pid_get_start_time(pid, &ct->pid_start_time);
        if (r < 0) {
                errorf(reterr, r, "the restored init %d vanished: %s", (int) pid, strerror(-r));
                goto fail;
        }
        if (tty_master >= 0) {
                tty_slave = safe_close(tty_slave);
                r = unix_send_fd("--console-socket", o->console_socket, "/dev/ptmx", tty_master, reterr);
                if (r < 0)
                        goto fail;
                tty_master = safe_close(tty_master);
        }
        ct->pid = pid;
        ct->recorded = CONTAINER_RUNNING;
        r = container_save(ct);
        if (r < 0) {
                errorf(reterr, r, "write state of \"%s\": %s", o->id, strerror(-r));
                goto fail;
        }
        if (o->pid_file) {
                r = write_pid_file(o->pid_file, pid);
                if (r < 0) {
                        errorf(reterr, r, "--pid-file: write \"%s\": %s", o->pid_file, strerror(-r));
                        goto fail;
                }
        }
        /* systemd-machined, as for `create` (skipped quietly where machined is not there). */
        {
                const char *a = oci_config_annotation(c, MACHINE_ANNOTATION);
                _cleanup_free_ char *name = NULL, *err = NULL;
                if (!(a && streq(a, "false")) && geteuid() == 0 && sdunit_machine_name(o->id, &name) >= 0) {
                        r = sdunit_register_machine(false, name, pid, rootfs, &err);
                        if (r == -ENOTCONN)
                                log_debug("%s", err ?: "systemd-machined is not available");
                        else if (r < 0)
                                log_warning("%s", err ?: "cannot register with systemd-machined");
                        else {
                                /* For delete to unregister it before the scope goes (see create). */
                                ct->machine = TAKE_PTR(name);
                                r = container_save(ct);
                                if (r < 0)
                                        log_warning("write state of \"%s\": %s", o->id, strerror(-r));
                        }
                }
        }
        (void) unlinkat(ct->dir_fd, CRIU_ROOT, AT_REMOVEDIR);
        (void) unlinkat(ct->dir_fd, CRIU_DEVPTS, AT_REMOVEDIR);
        (void) unlinkat(ct->dir_fd, "restore.pid", 0);
        if (hook_script) {
                (void) unlinkat(ct->dir_fd, HOOK_SCRIPT, 0);
                (void) unlinkat(ct->dir_fd, HOOK_REQ, 0);
                (void) unlinkat(ct->dir_fd, HOOK_ACK, 0);
        }
        criu_external_mounts_free(ext, n_ext);
        for (int i = 0; i < 3; i++)
                free(descriptors[i]);
        log_info("restored container %s from %s in %s (init pid %d, criu %s)", o->id, image, unit, (int) pid,
                 version);
        if (ret_pid)
                *ret_pid = pid;
        if (ret_pidfd)
                *ret_pidfd = pidfd_open_verified(pid, ct->pid_start_time);
        return 0;

fail:
        criu_external_mounts_free(ext, n_ext);
        for (int i = 0; i < 3; i++)
                free(descriptors[i]);
        if (criu_pid > 0) {
                (void) kill(criu_pid, SIGKILL);
                (void) waitpid(criu_pid, NULL, 0);
        }
        if (unit_started)
                teardown_scope(bus, unit);
        if (pid > 0) {
                /* Restored, then a later step failed: the scope's teardown killed it; reap it if it is ours. */
                (void) waitpid(pid, NULL, WNOHANG);
        }
        if (o->pid_file && pid > 0)
                (void) unlink(o->pid_file);
        if (ct) {
                (void) unlinkat(ct->dir_fd, CRIU_ROOT, AT_REMOVEDIR);
                (void) unlinkat(ct->dir_fd, CRIU_DEVPTS, AT_REMOVEDIR);
                (void) container_remove(ct);
        }
        return r;
}
