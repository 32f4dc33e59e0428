/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* sdunit_scope_name_from_cgroups_path(): no bus needed. */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "sdunit.h"
#include "tap.h"

static void check(const char *path, const char *id, const char *slice, const char *unit) {
        _cleanup_free_ char *s = NULL, *u = NULL, *err = NULL;
        int r = sdunit_scope_name_from_cgroups_path(path, id, &s, &u, &err);

        if (!tap_is_int(r, 0, "\"%s\" is accepted", strna(path)))
                printf("#   error: %s\n", strna(err));
        tap_is_str(s, slice, "\"%s\" -> slice %s", strna(path), slice);
        tap_is_str(u, unit, "\"%s\" -> unit %s", strna(path), unit);
}

static void refuse(const char *path, const char *id, const char *message_part) {
        _cleanup_free_ char *s = NULL, *u = NULL, *err = NULL;
        int r = sdunit_scope_name_from_cgroups_path(path, id, &s, &u, &err);

        tap_is_int(r, -EINVAL, "\"%s\" is refused with -EINVAL", strna(path));
        if (!tap_ok(err && strstr(err, message_part), "... with a message containing \"%s\"", message_part))
                printf("#   got: %s\n", strna(err));
}

int main(void) {
        check(NULL, "abc", "machine.slice", "sdrun-abc.scope");
        check("", "abc", "machine.slice", "sdrun-abc.scope");
        check("machine.slice:libpod:0123abcd", "x", "machine.slice", "libpod-0123abcd.scope");
        check("system.slice:docker:abc", "x", "system.slice", "docker-abc.scope");
        check(":sdrun:abc", "x", "machine.slice", "sdrun-abc.scope");
        check("::abc", "x", "machine.slice", "abc.scope");
        check("::abc.scope", "x", "machine.slice", "abc.scope");
        check("user-1000.slice:p:n", "x", "user-1000.slice", "p-n.scope");
        check("-.slice:p:n", "x", "-.slice", "p-n.scope");
        /* Characters systemd does not allow are escaped as \xNN (also a leading dot). */
        check("::a b/c", "x", "machine.slice", "a\\x20b\\x2fc.scope");
        check("::.hidden", "x", "machine.slice", "\\x2ehidden.scope");
        check(NULL, "id@1", "machine.slice", "sdrun-id\\x401.scope");

        /* cgroupfs form (Docker's cgroupfs driver, Podman with cgroup_manager=cgroupfs, Kubernetes): systemd's
         * path escaping, in machine.slice; cleaned lexically as runc does; relative is the same as absolute. */
        check("/docker/0123abcd", "x", "machine.slice", "docker-0123abcd.scope");
        check("docker/0123abcd", "x", "machine.slice", "docker-0123abcd.scope");
        check("/docker-0123abcd", "x", "machine.slice", "docker\\x2d0123abcd.scope");
        check("/libpod_parent/libpod-0123", "x", "machine.slice", "libpod_parent-libpod\\x2d0123.scope");
        check("/kubepods/burstable/pod1a-2b/c0ffee", "x", "machine.slice",
              "kubepods-burstable-pod1a\\x2d2b-c0ffee.scope");
        check("//docker///abc/", "x", "machine.slice", "docker-abc.scope");
        check("/docker/./abc", "x", "machine.slice", "docker-abc.scope");
        check("/docker/../other/abc", "x", "machine.slice", "other-abc.scope");
        check("/../../abc", "x", "machine.slice", "abc.scope");
        check("/a/.hidden", "x", "machine.slice", "a-.hidden.scope");
        check("/.hidden/a", "x", "machine.slice", "\\x2ehidden-a.scope");
        check("/a/b c\\d", "x", "machine.slice", "a-b\\x20c\\x5cd.scope");
        check("/a/b.scope", "x", "machine.slice", "a-b.scope.scope");
        check("abc", "x", "machine.slice", "abc.scope");
        check("machine.slice:name", "x", "machine.slice", "machine.slice:name.scope");
        check("a:b:c:d", "x", "machine.slice", "a:b:c:d.scope");
        check("/a:b:c", "x", "machine.slice", "a:b:c.scope");
        refuse("/", "x", "names the root cgroup");
        refuse("/a/..", "x", "names the root cgroup");
        refuse("..", "x", "names the root cgroup");
        {
                char deep[400] = "/";
                for (int i = 0; i < 60; i++)
                        strcat(deep, "a-b/");
                refuse(deep, "x", "longer than 255 characters");
        }
        refuse("machine:p:n", "x", "\"machine\" is not a valid slice name");
        refuse("-a.slice:p:n", "x", "is not a valid slice name");
        refuse("a--b.slice:p:n", "x", "is not a valid slice name");
        refuse("a-.slice:p:n", "x", "is not a valid slice name");
        refuse("a b.slice:p:n", "x", "is not a valid slice name");
        refuse("machine.slice:p:", "x", "the name part is empty");
        refuse("machine.slice:p:.scope", "x", "the name part is empty");
        refuse("machine.slice:libpod:foo.slice", "x", "supports only scope names");
        refuse(NULL, NULL, "no container id");

        /* 255 characters at most. */
        char longid[300];
        memset(longid, 'a', sizeof(longid) - 1);
        longid[sizeof(longid) - 1] = 0;
        refuse(NULL, longid, "is too long for its systemd unit name");
        longid[255 - STRLEN("sdrun-.scope")] = 0;
        _cleanup_free_ char *s = NULL, *u = NULL, *err = NULL;
        tap_is_int(sdunit_scope_name_from_cgroups_path(NULL, longid, &s, &u, &err), 0, "a 255-character name is fine");
        tap_is_int((int) strlen(u), 255, "... and is 255 characters long");

        /* Machine names are valid host names: no label starts or ends with '-' (machined refuses "a.-b"). */
        static const char *const machine[][2] = {
                { "a.b", "a.b" }, { "a..b", "a--b" }, { "a.-b", "a--b" }, { "a_b.c", "a-b.c" },
                { "x-", "x0" },   { "_x", "0x" },     { "a.", "a0" },
        };
        for (size_t i = 0; i < ELEMENTSOF(machine); i++) {
                _cleanup_free_ char *m = NULL;
                tap_is_int(sdunit_machine_name(machine[i][0], &m), 0, "machine name of \"%s\"", machine[i][0]);
                tap_is_str(m, machine[i][1], "... is \"%s\"", machine[i][1]);
        }

        return tap_done();
}
