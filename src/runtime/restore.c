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
#include "host-hooks.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "mount.h"
#include "pipeline.h"
#include "process-util.h"
#include "rootless.h"
#include "socket-util.h"
#include "sdunit.h"
#include "state.h"
#include "userns-auto.h"
#include "string-util.h"
#include "strv.h"

/* criu gets the caller's stdio at these numbers, named by --inherit-fd (its own stdio is our capture). */
#define INHERIT_FD_BASE 100
#define NETNS_FD (INHERIT_FD_BASE + 3)
#define TTY_FD (INHERIT_FD_BASE + 4)
#define CRIU_ROOT "criu-root"
#define CRIU_DEVPTS "criu-devpts"
#define HOOK_SCRIPT "criu-hook.sh"
#define HOOK_REQ "criu-hook.req"
#define HOOK_ACK "criu-hook.ack"

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

/* Both FIFOs, opened by us before criu runs and held until we are done (close-on-exec: criu and the hooks
 * never hold them): the script's opens never block, and if we are killed its read of the answer ends (no
 * writer left) instead of blocking in the container's scope for ever. */
static int open_hook_fifos(Container *ct, int *ret_req, int *ret_ack) {
        *ret_req = openat(ct->dir_fd, HOOK_REQ, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (*ret_req < 0)
                return -errno;
        *ret_ack = openat(ct->dir_fd, HOOK_ACK, O_RDWR | O_CLOEXEC);
        if (*ret_ack < 0)
                return -errno;
        return 0;
}

/* Wait for criu, answering the hook script's request on the way. A failed hook fails the restore. */
static int wait_criu_with_hooks(Container *ct, const OciConfig *c, pid_t criu_pid, int req, int ack,
                                int errfd, CriuRun *run, char **reterr) {
        _cleanup_close_ int pidfd = -EBADF;
        int hook_r = 0;
        bool answered = false;

        pidfd = (int) syscall(SYS_pidfd_open, criu_pid, 0);
        if (pidfd < 0)
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
                                hook_r = host_hooks_run(c, OCI_HOOK_PRESTART, st, ct->bundle, reterr);
                        if (hook_r >= 0)
                                hook_r = host_hooks_run(c, OCI_HOOK_CREATE_RUNTIME, st, ct->bundle, reterr);
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

/* What container_restore() holds while it runs. Everything from the state directory on is undone by
 * restore_run_done() unless restore got to its end: criu killed, the machine unregistered, the unit stopped
 * (with what CRIU restored into it), the --pid-file and the state directory removed, in that order. */
typedef struct RestoreRun {
        const RestoreOptions *o;
        bool user_bus; /* the scope is the caller's user manager's (not root) */
        bool succeeded;
        /* config.json, the checkpoint, and what is derived from them */
        Bundle b;
        ScopePlan plan;
        char *criu, *version, *image, *work;
        char *tty_key; /* the checkpointed terminal's name (CRIU_TERMINAL_FILE), for process.terminal */
        char *descriptors[3];
        CriuExtMount *ext;
        size_t n_ext;
        int netns_fd; /* the network namespace the container joins by path */
        /* what exists, undone on failure */
        Container *ct;
        char *criu_root, *pid_path, *log_path, *hook_script, *devpts_dir;
        int hook_req, hook_ack; /* the hook script's FIFOs (open_hook_fifos()) */
        int devpts_fd, tty_master, tty_slave, pty_index;
        char **args;
        ChildSetup cs;
        SdUnitBus *bus;
        int go[2];
        pid_t criu_pid;
        int errfd;
        char *description;
        ScopeEntry se;
        CriuRun run;
        pid_t pid; /* the restored init */
        SdUnitMachineCall *machine_call;
} RestoreRun;

static void restore_run_done(RestoreRun *rr) {
        if (rr->criu_pid > 0) {
                (void) kill(rr->criu_pid, SIGKILL);
                (void) waitpid(rr->criu_pid, NULL, 0);
        }
        if (rr->ct && !rr->succeeded) {
                if (rr->ct->machine)
                        (void) sdunit_unregister_machine(rr->ct->machine, NULL);
                if (rr->se.started)
                        unit_teardown(rr->bus, rr->plan.unit, NULL, true, LOG_LEVEL_DEBUG);
                /* Restored, then a later step failed: the scope's teardown killed it; reap it if it is ours. */
                if (rr->pid > 0)
                        (void) waitpid(rr->pid, NULL, WNOHANG);
                if (rr->o->pid_file && rr->pid > 0)
                        (void) unlink(rr->o->pid_file);
                (void) unlinkat(rr->ct->dir_fd, CRIU_ROOT, AT_REMOVEDIR);
                (void) unlinkat(rr->ct->dir_fd, CRIU_DEVPTS, AT_REMOVEDIR);
                (void) container_remove(rr->ct);
        }
        sdunit_machine_call_freep(&rr->machine_call);
        criu_run_done(&rr->run);
        free(rr->se.cgroup);
        free(rr->se.scope_dir);
        free(rr->description);
        rr->errfd = safe_close(rr->errfd);
        close_pairp(&rr->go);
        sdunit_bus_closep(&rr->bus);
        strv_free(rr->args);
        rr->devpts_fd = safe_close(rr->devpts_fd);
        rr->tty_master = safe_close(rr->tty_master);
        rr->tty_slave = safe_close(rr->tty_slave);
        free(rr->devpts_dir);
        rr->hook_req = safe_close(rr->hook_req);
        rr->hook_ack = safe_close(rr->hook_ack);
        free(rr->hook_script);
        free(rr->log_path);
        free(rr->pid_path);
        free(rr->criu_root);
        container_freep(&rr->ct);
        rr->netns_fd = safe_close(rr->netns_fd);
        criu_external_mounts_free(rr->ext, rr->n_ext);
        for (int i = 0; i < 3; i++)
                free(rr->descriptors[i]);
        free(rr->tty_key);
        free(rr->work);
        free(rr->image);
        free(rr->version);
        free(rr->criu);
        scope_plan_done(&rr->plan);
        bundle_done(&rr->b);
}

/* The bundle and config.json, refused exactly as `create` refuses them. */
static int restore_load(RestoreRun *rr, char **reterr) {
        const RestoreOptions *o = rr->o;
        int r;

        if (o->common.lazy_pages)
                return errorf(reterr, EOPNOTSUPP,
                              "--lazy-pages: not supported by sdrun (see sdrun-restore(8))");
        r = bundle_load(o->bundle, NULL, o->id, &rr->b, reterr);
        if (r < 0)
                return r;
        /* criu restores the namespaces the checkpoint recorded: a range picked now could differ from it. */
        bool userns_auto;
        r = userns_auto_requested(rr->b.c, &userns_auto, reterr);
        if (r < 0)
                return r;
        if (userns_auto)
                return errorf(reterr, EOPNOTSUPP,
                              "the automatic user namespace (annotations[\"" USERNS_ANNOTATION
                              "\"] or " USERNS_ENV "=auto): not supported by restore");
        /* process.terminal wants --console-socket: the restored terminal is a new one, its master sent there. */
        BundleChecks k = { .root = o->root,
                           .console_socket = o->console_socket,
                           .rootless = rootless_detect() };
        return bundle_validate(&rr->b, &k, NULL, reterr);
}

/* The checkpoint: its images, the terminal it records, and the criu to restore it with. */
static int restore_image(RestoreRun *rr, char **reterr) {
        const RestoreOptions *o = rr->o;
        _cleanup_free_ char *inventory = NULL;
        int r;

        r = criu_resolve_dirs(&o->common, false, &rr->image, &rr->work, reterr);
        if (r < 0)
                return r;
        inventory = strdup_printf("%s/inventory.img", rr->image);
        if (!inventory)
                return -ENOMEM;
        if (access(inventory, F_OK) < 0)
                return errorf(reterr, ENOENT, "--image-path: \"%s\" holds no checkpoint (no inventory.img)",
                              rr->image);
        if (rr->b.c->has_process && rr->b.c->process.terminal) {
                r = read_full_file_in(rr->image, CRIU_TERMINAL_FILE, 256, &rr->tty_key);
                if (r < 0)
                        return errorf(
                                reterr, r,
                                "--console-socket: the checkpoint in \"%s\" records no terminal (no %s: not "
                                "made by sdrun checkpoint of a container with process.terminal)",
                                rr->image, CRIU_TERMINAL_FILE);
                rr->tty_key[strcspn(rr->tty_key, "\n")] = 0;
                if (!strneq(rr->tty_key, "tty[", 4))
                        return errorf(reterr, EBADMSG, "--image-path: \"%s/%s\": not a terminal's name",
                                      rr->image, CRIU_TERMINAL_FILE);
        }
        if (read_descriptors(rr->image, rr->descriptors) < 0)
                log_debug("restore %s: no usable descriptors.json in %s", o->id, rr->image);
        return criu_require(o->common.criu, &rr->criu, &rr->version, reterr);
}

/* The scope as `create` plans it, and what CRIU needs from the host: the joined network namespace, the
 * external mounts and their mount points in the rootfs. */
static int restore_plan(RestoreRun *rr, char **reterr) {
        const OciConfig *c = rr->b.c;
        const char *netns_path = NULL;
        int r;

        r = scope_plan(c, rr->o->id, &rr->plan, reterr);
        if (r < 0)
                return r;
        if (oci_config_has_namespace(c, OCI_NS_NETWORK, &netns_path) && netns_path) {
                rr->netns_fd = open(netns_path, O_RDONLY | O_CLOEXEC);
                if (rr->netns_fd < 0)
                        return errorf(reterr, -errno, "linux.namespaces: network namespace \"%s\": %s",
                                      netns_path, strerror(errno));
        }
        r = criu_external_mounts(c, rr->b.path, 0, &rr->ext, &rr->n_ext);
        if (r < 0)
                return r;
        return prepare_mount_points(rr->b.rootfs, rr->ext, rr->n_ext, reterr);
}

/* The state directory (from here on, everything created is undone on failure), CRIU's root mount point in it
 * and the hook script. */
static int restore_state(RestoreRun *rr, char **reterr) {
        const RestoreOptions *o = rr->o;
        int r;

        r = check_existing(o, reterr);
        if (r < 0)
                return r;
        r = container_state_new(o->root, o->id, &rr->b, &rr->plan, rr->user_bus, &rr->ct, reterr);
        if (r < 0)
                return r;
        if (container_path(rr->ct, CRIU_ROOT, &rr->criu_root) < 0 ||
            container_path(rr->ct, RESTORE_PID_FILE, &rr->pid_path) < 0 ||
            !(rr->log_path = strdup_printf("%s/restore.log", rr->work)))
                return -ENOMEM;
        if (mkdirat(rr->ct->dir_fd, CRIU_ROOT, 0700) < 0)
                return errorf(reterr, -errno, "create %s: %s", rr->criu_root, strerror(errno));
        if (rr->b.c->hooks.n_hooks[OCI_HOOK_PRESTART] + rr->b.c->hooks.n_hooks[OCI_HOOK_CREATE_RUNTIME] >
            0) {
                r = write_hook_script(rr->ct, &rr->hook_script);
                if (r >= 0)
                        r = open_hook_fifos(rr->ct, &rr->hook_req, &rr->hook_ack);
                if (r < 0)
                        return errorf(reterr, r, "write the hook script for criu: %s", strerror(-r));
        }
        (void) unlink(rr->log_path);
        return 0;
}

/* process.terminal: a new pty, its slave in place of the checkpointed terminal. */
static int restore_terminal(RestoreRun *rr, char **reterr) {
        int r;

        if (!rr->tty_key)
                return 0;
        r = open_terminal(&rr->devpts_fd, &rr->tty_master, &rr->tty_slave, reterr);
        if (r < 0)
                return r;
        if (ioctl(rr->tty_master, TIOCGPTN, &rr->pty_index) < 0)
                return errorf(reterr, -errno, "the terminal's pty: %s", strerror(errno));
        if (container_path(rr->ct, CRIU_DEVPTS, &rr->devpts_dir) < 0)
                return -ENOMEM;
        if (mkdirat(rr->ct->dir_fd, CRIU_DEVPTS, 0700) < 0)
                return errorf(reterr, -errno, "create %s: %s", rr->devpts_dir, strerror(errno));
        return 0;
}

/* CRIU's external mounts, each cookie once: every mask of linux.maskedPaths shares "/dev/null".
 * /dev/console: the new pty. The own cgroup's source, the new scope, comes with the go. */
static int restore_args_mounts(RestoreRun *rr) {
        const CriuExtMount *ext = rr->ext;

        for (size_t i = 0; i < rr->n_ext; i++) {
                bool dup = ext[i].own_cgroup || (ext[i].terminal && !rr->devpts_dir);
                for (size_t k = 0; k < i; k++)
                        dup = dup || streq(ext[k].cookie, ext[i].cookie);
                if (dup)
                        continue;
                if (strv_extend(&rr->args, "--ext-mount-map") < 0)
                        return -ENOMEM;
                if (ext[i].terminal) {
                        if (strv_extendf(&rr->args, "%s:%s/%d", ext[i].cookie, rr->devpts_dir,
                                         rr->pty_index) < 0)
                                return -ENOMEM;
                } else if (strv_extendf(&rr->args, "%s:%s", ext[i].cookie, ext[i].source) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* What criu inherits from us (set up by child_setup()): the caller's stdio in place of the checkpointed
 * pipes, the terminal's pty slave, the joined network namespace. */
static int restore_args_inherit(RestoreRun *rr) {
        for (int i = 0; i < 3; i++)
                if (rr->descriptors[i] && strneq(rr->descriptors[i], "pipe:", 5)) {
                        rr->cs.inherit[i] = true;
                        if (strv_extend(&rr->args, "--inherit-fd") < 0 ||
                            strv_extendf(&rr->args, "fd[%d]:%s", INHERIT_FD_BASE + i, rr->descriptors[i]) <
                                    0)
                                return -ENOMEM;
                }
        if (rr->tty_key && (strv_extend(&rr->args, "--inherit-fd") < 0 ||
                            strv_extendf(&rr->args, "fd[%d]:%s", TTY_FD, rr->tty_key) < 0))
                return -ENOMEM;
        if (rr->netns_fd >= 0 && (strv_extend(&rr->args, "--inherit-fd") < 0 ||
                                  strv_extendf(&rr->args, "fd[%d]:extRootNetNS", NETNS_FD) < 0))
                return -ENOMEM;
        return 0;
}

/* criu's command line, all but what only the scope tells (see restore_go()). */
static int restore_args(RestoreRun *rr, char **reterr) {
        int r;

        rr->cs = (ChildSetup){
                .rootfs = rr->b.rootfs,
                .criu_root = rr->criu_root,
                .netns_fd = rr->netns_fd,
                .tty_fd = rr->tty_slave,
                .devpts_fd = rr->devpts_fd,
                .devpts_dir = rr->devpts_dir,
        };
        r = strv_extend_strv(&rr->args,
                             (char *const[]){ rr->criu, "restore", "--images-dir", rr->image, "--work-dir",
                                              rr->work, "--log-file", rr->log_path, "-v4",
                                              "--restore-detached", "--restore-sibling", "--pidfile",
                                              rr->pid_path, "--root", rr->criu_root, NULL });
        if (r >= 0)
                r = restore_args_mounts(rr);
        if (r >= 0)
                r = restore_args_inherit(rr);
        if (r >= 0 && rr->hook_script &&
            (strv_extend(&rr->args, "--action-script") < 0 || strv_extend(&rr->args, rr->hook_script) < 0))
                r = -ENOMEM;
        if (r >= 0)
                r = criu_add_common_args(&rr->args, &rr->o->common);
        return r;
}

/* criu, forked and held before its exec until the scope holds it. */
static int restore_spawn(RestoreRun *rr, char **reterr) {
        const RestoreOptions *o = rr->o;
        int r;

        r = sdunit_bus_open(rr->user_bus, &rr->bus, reterr);
        if (r < 0)
                return errwrap(reterr, r, "connect to systemd");
        if (pipe2(rr->go, O_CLOEXEC) < 0)
                return -errno;
        /* A foreground restore waits for the restored init: as runc, be the subreaper that gets it. */
        if (!o->detach && !o->no_subreaper)
                (void) prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        /* Not PR_SET_PDEATHSIG: CRIU's root task is our child (--restore-sibling) and outlives a criu killed
         * in the middle of the restore, stuck in the scope waiting for criu's next stage, while state
         * says stopped. A criu that outlives us instead ends as if we had answered: killed before "G", the
         * child exits; killed while the hook script waits for our answer, the script reads EOF and fails,
         * and criu kills the tree it made; killed later, criu finishes the restore and writes its pidfile,
         * which state adopts (restored_init_adopt()). With the death signal, whether criu got to kill its
         * root task first was a race with our exit (test-vm-criu-kill, restore killed at the prestart
         * hook). */
        r = criu_spawn(rr->args, rr->go[0], rr->go[1], false, child_setup, &rr->cs, &rr->criu_pid,
                       &rr->errfd);
        if (r < 0)
                return errorf(reterr, r, "cannot run %s: %s", rr->criu, strerror(-r));
        rr->go[0] = safe_close(rr->go[0]);
        return 0;
}

/* The scope, holding criu (blocked before exec), as `create` starts it: CRIU restores the process tree
 * below it. */
static int restore_enter_scope(RestoreRun *rr, char **reterr) {
        _cleanup_close_ int subgroup_fd = -EBADF;

        rr->description = strdup_printf("sdrun container %s (bundle %s, restored)", rr->o->id, rr->b.path);
        if (!rr->description)
                return -ENOMEM;
        rr->se = (ScopeEntry){
                .bus = rr->bus,
                .unit = rr->plan.unit,
                .slice = rr->plan.slice,
                .description = rr->description,
                .cgroups_path = rr->b.c->linux_.cgroups_path,
                .props = &rr->plan.props,
                .writes = &rr->plan.writes,
                .layout = rr->plan.layout,
        };
        return scope_enter(&rr->se, rr->criu_pid, &subgroup_fd, reterr);
}

/* Go, with the cgroup root CRIU restores the tree into: the scope's cgroup; and that cgroup's directory as
 * the source of the container's cgroup mount where it is a bind of its own cgroup. */
static int restore_go(RestoreRun *rr, char **reterr) {
        _cleanup_strv_free_ char **extra = NULL;
        _cleanup_free_ char *msg = NULL;
        const char *cgroup = rr->se.cgroup;
        size_t len = 0;
        int r;

        if (strv_extend(&extra, "--cgroup-root") < 0 || strv_extend(&extra, cgroup) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < rr->n_ext; i++)
                if (rr->ext[i].own_cgroup &&
                    (strv_extend(&extra, "--ext-mount-map") < 0 ||
                     strv_extendf(&extra, "%s:/sys/fs/cgroup%s", rr->ext[i].cookie, cgroup) < 0))
                        return -ENOMEM;
        r = go_message(extra, &msg, &len);
        if (r < 0)
                return r;
        if (log_get_max_level() >= LOG_LEVEL_DEBUG) {
                _cleanup_free_ char *line = strv_join(rr->args, " "), *more = strv_join(extra, " ");
                log_debug("restore %s: %s %s", rr->o->id, strempty(line), strempty(more));
        }
        r = loop_write(rr->go[1], msg, len);
        rr->go[1] = safe_close(rr->go[1]);
        if (r < 0)
                return errorf(reterr, r, "start criu: %s", strerror(-r));
        return 0;
}

/* criu's end (answering the hook script on the way), and the init it restored. */
static int restore_wait(RestoreRun *rr, char **reterr) {
        _cleanup_free_ char *pidtext = NULL;
        int r;

        if (rr->hook_script)
                r = wait_criu_with_hooks(rr->ct, rr->b.c, rr->criu_pid, rr->hook_req, rr->hook_ack,
                                         rr->errfd, &rr->run, reterr);
        else
                r = criu_wait(rr->criu_pid, rr->errfd, &rr->run);
        rr->criu_pid = 0;
        if (r < 0)
                return errorf_first(reterr, r, "wait for criu: %s", strerror(-r));
        if (rr->run.status != 0) {
                _cleanup_free_ char *why = criu_explain_failure(rr->version, &rr->run, rr->log_path);
                return errorf(reterr, EIO, "%s", why ?: "criu failed");
        }
        r = read_full_file_at(rr->ct->dir_fd, RESTORE_PID_FILE, 64, &pidtext, NULL);
        if (r >= 0) {
                rr->pid = (pid_t) strtol(pidtext, NULL, 10);
                if (rr->pid <= 0)
                        r = -EBADMSG;
        }
        if (r < 0)
                return errorf(reterr, r, "criu restored the container but wrote no pid to %s", rr->pid_path);
        r = pid_get_start_time(rr->pid, &rr->ct->pid_start_time);
        if (r < 0)
                return errorf(reterr, r, "the restored init %d vanished: %s", (int) rr->pid, strerror(-r));
        return 0;
}

/* The container runs: the terminal's master to --console-socket, registered with machined as `create` does,
 * recorded, and the --pid-file written. */
static int restore_commit(RestoreRun *rr, char **reterr) {
        const RestoreOptions *o = rr->o;
        Container *ct = rr->ct;
        int r;

        if (rr->tty_master >= 0) {
                rr->tty_slave = safe_close(rr->tty_slave);
                r = unix_send_fd("--console-socket", o->console_socket, "/dev/ptmx", rr->tty_master, reterr);
                if (r < 0)
                        return r;
                rr->tty_master = safe_close(rr->tty_master);
        }
        rr->machine_call = machine_register_begin(rr->b.c, o->id, rr->pid, rr->b.rootfs);
        r = machine_register_end(rr->machine_call, o->id, &ct->machine);
        if (r < 0)
                return r;
        ct->pid = rr->pid;
        ct->recorded = CONTAINER_RUNNING;
        if (!ct->cgroup && !(ct->cgroup = strdup(rr->se.cgroup)))
                return -ENOMEM;
        r = container_save(ct);
        if (r < 0)
                return errorf(reterr, r, "write state of \"%s\": %s", o->id, strerror(-r));
        if (o->pid_file) {
                r = pid_file_write(o->pid_file, rr->pid, reterr);
                if (r < 0)
                        return r;
        }
        (void) unlinkat(ct->dir_fd, CRIU_ROOT, AT_REMOVEDIR);
        (void) unlinkat(ct->dir_fd, CRIU_DEVPTS, AT_REMOVEDIR);
        (void) unlinkat(ct->dir_fd, RESTORE_PID_FILE, 0);
        if (rr->hook_script) {
                (void) unlinkat(ct->dir_fd, HOOK_SCRIPT, 0);
                (void) unlinkat(ct->dir_fd, HOOK_REQ, 0);
                (void) unlinkat(ct->dir_fd, HOOK_ACK, 0);
        }
        return 0;
}

/* The steps of restore, in order: those it shares with create (see pipeline.h) and CRIU's own. */
static int (*const restore_steps[])(RestoreRun *rr, char **reterr) = {
        restore_load,  restore_image,       restore_plan, restore_state, restore_terminal, restore_args,
        restore_spawn, restore_enter_scope, restore_go,   restore_wait,  restore_commit,
};

int container_restore(const RestoreOptions *o, pid_t *ret_pid, int *ret_pidfd, char **reterr) {
        _cleanup_(restore_run_done) RestoreRun rr = {
                .o = o,
                .user_bus = geteuid() != 0,
                .netns_fd = -EBADF,
                .devpts_fd = -EBADF,
                .hook_req = -EBADF,
                .hook_ack = -EBADF,
                .tty_master = -EBADF,
                .tty_slave = -EBADF,
                .pty_index = -1,
                .go = { -EBADF, -EBADF },
                .errfd = -EBADF,
        };
        int r;

        assert(o);
        FOREACH_ARRAY(step, restore_steps, ELEMENTSOF(restore_steps)) {
                r = (*step)(&rr, reterr);
                if (r < 0)
                        return r;
        }

        log_info("restored container %s from %s in %s (init pid %d, criu %s)", o->id, rr.image, rr.plan.unit,
                 (int) rr.pid, rr.version);
        if (ret_pid)
                *ret_pid = rr.pid;
        if (ret_pidfd)
                *ret_pidfd = pidfd_open_verified(rr.pid, rr.ct->pid_start_time);
        rr.succeeded = true;
        return 0;
}
