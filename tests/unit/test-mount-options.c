/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdbool.h>
#include <sys/mount.h>

#include "macro.h"
#include "mount-options.h"
#include "tap.h"

static void test_table(void) {
        const MountOption *o, *prev = NULL;
        bool sorted = true, consistent = true;
        size_t n = 0;

        for (size_t i = 0; (o = mount_option_get(i)); i++, n++) {
                if (prev && strcmp(prev->name, o->name) >= 0) {
                        printf("# not sorted or duplicate: \"%s\" after \"%s\"\n", o->name, prev->name);
                        sorted = false;
                }
                switch (o->kind) {
                case MOUNT_OPTION_FLAG:
                        /* Only "defaults" changes nothing. */
                        if ((o->flags == 0) != streq(o->name, "defaults") || o->attr_set || o->attr_clr)
                                consistent = false;
                        break;
                case MOUNT_OPTION_PROPAGATION:
                        if (!(o->flags & (MS_PRIVATE | MS_SHARED | MS_SLAVE | MS_UNBINDABLE)) || o->clear ||
                            ((o->flags & MS_REC) != 0) != (o->name[0] == 'r'))
                                consistent = false;
                        break;
                case MOUNT_OPTION_RECURSIVE:
                        if (o->name[0] != 'r' || o->flags || (!o->attr_set && !o->attr_clr))
                                consistent = false;
                        /* An atime mode is set with the whole atime field cleared. */
                        if ((o->attr_set & MOUNT_ATTR__ATIME) &&
                            (o->attr_clr & MOUNT_ATTR__ATIME) != MOUNT_ATTR__ATIME)
                                consistent = false;
                        break;
                case MOUNT_OPTION_IDMAP:
                        if (o->recursive != (o->name[0] == 'r'))
                                consistent = false;
                        break;
                case MOUNT_OPTION_TMPCOPYUP:
                        if (!streq(o->name, "tmpcopyup"))
                                consistent = false;
                        break;
                default:
                        consistent = false;
                }
                if (!consistent) {
                        printf("# inconsistent entry \"%s\"\n", o->name);
                        break;
                }
                prev = o;
        }
        tap_ok(sorted, "the table is sorted by name without duplicates");
        tap_ok(consistent, "every entry's fields fit its kind");
        tap_ok(mount_option_get(n) == NULL, "mount_option_get() past the end is NULL");
}

static void test_lookup(void) {
        const MountOption *o;

        o = mount_option_lookup("ro");
        tap_ok(o && o->kind == MOUNT_OPTION_FLAG && !o->clear && o->flags == MS_RDONLY, "ro sets MS_RDONLY");
        o = mount_option_lookup("rw");
        tap_ok(o && o->kind == MOUNT_OPTION_FLAG && o->clear && o->flags == MS_RDONLY,
               "rw clears MS_RDONLY");
        o = mount_option_lookup("rbind");
        tap_ok(o && o->flags == (MS_BIND | MS_REC), "rbind is MS_BIND|MS_REC");
        o = mount_option_lookup("rslave");
        tap_ok(o && o->kind == MOUNT_OPTION_PROPAGATION && o->flags == (MS_SLAVE | MS_REC),
               "rslave is recursive slave");
        o = mount_option_lookup("rro");
        tap_ok(o && o->kind == MOUNT_OPTION_RECURSIVE && o->attr_set == MOUNT_ATTR_RDONLY,
               "rro sets MOUNT_ATTR_RDONLY");
        o = mount_option_lookup("rnoatime");
        tap_ok(o && o->attr_set == MOUNT_ATTR_NOATIME && o->attr_clr == MOUNT_ATTR__ATIME,
               "rnoatime sets noatime and clears the atime field");
        o = mount_option_lookup("ridmap");
        tap_ok(o && o->kind == MOUNT_OPTION_IDMAP && o->recursive, "ridmap is a recursive idmap");
        tap_ok(mount_option_lookup("mode=755") == NULL, "mode=755 is mount data");
        tap_ok(mount_option_lookup("newinstance") == NULL, "newinstance is mount data");
        tap_ok(mount_option_lookup("RO") == NULL, "names are case-sensitive");
}

int main(void) {
        test_table();
        test_lookup();
        return tap_done();
}
