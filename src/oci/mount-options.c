/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <string.h>
#include <sys/mount.h>

#include "macro.h"
#include "mount-options.h"

#define FLAG_SET(n, f) \
        { .name = (n), .kind = MOUNT_OPTION_FLAG, .flags = (f) }
#define FLAG_CLR(n, f) \
        { .name = (n), .kind = MOUNT_OPTION_FLAG, .clear = true, .flags = (f) }
#define PROPAGATION(n, f) \
        { .name = (n), .kind = MOUNT_OPTION_PROPAGATION, .flags = (f) }
#define REC_SET(n, a) \
        { .name = (n), .kind = MOUNT_OPTION_RECURSIVE, .attr_set = (a) }
#define REC_CLR(n, a) \
        { .name = (n), .kind = MOUNT_OPTION_RECURSIVE, .attr_clr = (a) }
/* The atime mode is a field, not a bit: the kernel wants all of MOUNT_ATTR__ATIME cleared whenever a
 * mode is set. */
#define REC_ATIME(n, a) \
        { .name = (n), .kind = MOUNT_OPTION_RECURSIVE, .attr_set = (a), .attr_clr = MOUNT_ATTR__ATIME }

/* Sorted by name (checked by test-mount-options). The meanings follow mount(8) and runc's behaviour;
 * "defaults" changes nothing. The negative atime forms of the recursive options select the mode the
 * kernel would choose without the positive one: ratime and rnostrictatime give relatime, rnorelatime
 * gives strictatime. */
static const MountOption mount_options[] = {
        FLAG_SET("acl", MS_POSIXACL),
        FLAG_CLR("async", MS_SYNCHRONOUS),
        FLAG_CLR("atime", MS_NOATIME),
        FLAG_SET("bind", MS_BIND),
        FLAG_SET("defaults", 0),
        FLAG_CLR("dev", MS_NODEV),
        FLAG_CLR("diratime", MS_NODIRATIME),
        FLAG_SET("dirsync", MS_DIRSYNC),
        FLAG_CLR("exec", MS_NOEXEC),
        { .name = "idmap", .kind = MOUNT_OPTION_IDMAP },
        FLAG_SET("iversion", MS_I_VERSION),
        FLAG_SET("lazytime", MS_LAZYTIME),
        FLAG_CLR("loud", MS_SILENT),
        FLAG_SET("mand", MS_MANDLOCK),
        FLAG_CLR("noacl", MS_POSIXACL),
        FLAG_SET("noatime", MS_NOATIME),
        FLAG_SET("nodev", MS_NODEV),
        FLAG_SET("nodiratime", MS_NODIRATIME),
        FLAG_SET("noexec", MS_NOEXEC),
        FLAG_CLR("noiversion", MS_I_VERSION),
        FLAG_CLR("nolazytime", MS_LAZYTIME),
        FLAG_CLR("nomand", MS_MANDLOCK),
        FLAG_CLR("norelatime", MS_RELATIME),
        FLAG_CLR("nostrictatime", MS_STRICTATIME),
        FLAG_SET("nosuid", MS_NOSUID),
        FLAG_SET("nosymfollow", MS_NOSYMFOLLOW),
        PROPAGATION("private", MS_PRIVATE),
        REC_ATIME("ratime", MOUNT_ATTR_RELATIME),
        FLAG_SET("rbind", MS_BIND | MS_REC),
        REC_CLR("rdev", MOUNT_ATTR_NODEV),
        REC_CLR("rdiratime", MOUNT_ATTR_NODIRATIME),
        FLAG_SET("relatime", MS_RELATIME),
        FLAG_SET("remount", MS_REMOUNT),
        REC_CLR("rexec", MOUNT_ATTR_NOEXEC),
        { .name = "ridmap", .kind = MOUNT_OPTION_IDMAP, .recursive = true },
        REC_ATIME("rnoatime", MOUNT_ATTR_NOATIME),
        REC_SET("rnodev", MOUNT_ATTR_NODEV),
        REC_SET("rnodiratime", MOUNT_ATTR_NODIRATIME),
        REC_SET("rnoexec", MOUNT_ATTR_NOEXEC),
        REC_ATIME("rnorelatime", MOUNT_ATTR_STRICTATIME),
        REC_ATIME("rnostrictatime", MOUNT_ATTR_RELATIME),
        REC_SET("rnosuid", MOUNT_ATTR_NOSUID),
        REC_SET("rnosymfollow", MOUNT_ATTR_NOSYMFOLLOW),
        FLAG_SET("ro", MS_RDONLY),
        PROPAGATION("rprivate", MS_PRIVATE | MS_REC),
        REC_ATIME("rrelatime", MOUNT_ATTR_RELATIME),
        REC_SET("rro", MOUNT_ATTR_RDONLY),
        REC_CLR("rrw", MOUNT_ATTR_RDONLY),
        PROPAGATION("rshared", MS_SHARED | MS_REC),
        PROPAGATION("rslave", MS_SLAVE | MS_REC),
        REC_ATIME("rstrictatime", MOUNT_ATTR_STRICTATIME),
        REC_CLR("rsuid", MOUNT_ATTR_NOSUID),
        REC_CLR("rsymfollow", MOUNT_ATTR_NOSYMFOLLOW),
        PROPAGATION("runbindable", MS_UNBINDABLE | MS_REC),
        FLAG_CLR("rw", MS_RDONLY),
        PROPAGATION("shared", MS_SHARED),
        FLAG_SET("silent", MS_SILENT),
        PROPAGATION("slave", MS_SLAVE),
        FLAG_SET("strictatime", MS_STRICTATIME),
        FLAG_CLR("suid", MS_NOSUID),
        FLAG_CLR("symfollow", MS_NOSYMFOLLOW),
        FLAG_SET("sync", MS_SYNCHRONOUS),
        { .name = "tmpcopyup", .kind = MOUNT_OPTION_TMPCOPYUP },
        PROPAGATION("unbindable", MS_UNBINDABLE),
};

const MountOption *mount_option_lookup(const char *name) {
        assert(name);

        FOREACH_ARRAY(o, mount_options, ELEMENTSOF(mount_options))
                if (streq(o->name, name))
                        return o;
        return NULL;
}

const MountOption *mount_option_get(size_t i) {
        return i < ELEMENTSOF(mount_options) ? &mount_options[i] : NULL;
}
