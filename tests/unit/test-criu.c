/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* src/runtime/criu.c without CRIU: the failure messages, the external mounts, the argv builder. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "criu.h"
#include "macro.h"
#include "oci-config.h"
#include "tap.h"

static void test_explain(void) {
        CriuRun run = {
                .status = 1,
                .stderr_text =
                        (char *) "Error (criu/vdso.c:381): vdso: Unexpected rt vDSO area bounds\n"
                                 "Error (criu/vdso.c:613): vdso: Failed to fill self vdso symtable\n"
                                 "Error (criu/kerndat.c:1615): kerndat_vdso_fill_symtable failed when initializing kerndat.\n"
                                 "Error (criu/crtools.c:260): Could not initialize kernel features detection.\n",
        };
        _cleanup_free_ char *m = criu_explain_failure("3.17.1", &run, NULL);
        tap_ok(m && strstr(m, "CRIU 3.17.1 cannot work on this kernel (Linux "),
               "kerndat failure: names CRIU and the kernel: %s", m);
        tap_ok(m && strstr(m, "(vdso: Unexpected rt vDSO area bounds)"),
               "kerndat failure: names CRIU's first vdso error");

        CriuRun diag = { .status = 1,
                         .stderr_text =
                                 (char *) "(00.1) Probing sock diag modules\n"
                                          "(00.2) Error (criu/sockets.c:1): Diag module missing (-2)\n" };
        _cleanup_free_ char *d = criu_explain_failure("3.17.1", &diag, NULL);
        tap_ok(d && strstr(d, "socket diagnostic modules"), "a missing diag module is named: %s", d);

        CriuRun other = { .status = 1,
                          .stderr_text =
                                  (char *) "(00.1) Probing sock diag modules\n"
                                           "(13.8)      1: Error (criu/pagemap.c:557): Can't read\n"
                                           "(13.9) Error (criu/cr-restore.c:2): Restoring FAILED.\n" };
        _cleanup_free_ char *o = criu_explain_failure("3.17.1", &other, "/x/restore.log");
        tap_is_str(
                o,
                "criu failed: Error (criu/pagemap.c:557): Can't read; Error (criu/cr-restore.c:2): Restoring FAILED.; "
                "see /x/restore.log",
                "other failures quote CRIU's last errors and name the log");
}

static void test_external_mounts(void) {
        static const char json[] =
                "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},"
                "\"mounts\":[{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\"},"
                "{\"destination\":\"/data\",\"type\":\"bind\",\"source\":\"/srv/data\",\"options\":[\"rbind\"]},"
                "{\"destination\":\"/etc/hosts\",\"source\":\"hosts\",\"options\":[\"bind\",\"ro\"]},"
                "{\"destination\":\"/sys\",\"type\":\"sysfs\",\"source\":\"sysfs\"}],"
                "\"linux\":{\"namespaces\":[{\"type\":\"mount\"},{\"type\":\"pid\"}],"
                "\"maskedPaths\":[\"/proc/kcore\",\"/proc/keys\"]}}";
        _cleanup_(oci_config_freep) OciConfig *c = NULL;
        _cleanup_free_ char *err = NULL;
        CriuExtMount *m = NULL;
        size_t n = 0;

        tap_ok(oci_config_parse(json, sizeof json - 1, &c, &err) >= 0, "config parses%s%s", err ? ": " : "",
               strempty(err));
        if (!c)
                return;
        tap_ok(criu_external_mounts(c, "/b", 0, &m, &n) >= 0, "external mounts computed");
        tap_is_int(n, 5, "two binds, the host /sys (no network namespace), two masks");
        if (n == 5) {
                tap_is_str(m[0].mountpoint, "/data", "bind: mount point");
                tap_is_str(m[0].cookie, "/data", "bind: cookie is the mount point");
                tap_is_str(m[0].source, "/srv/data", "bind: source");
                tap_is_str(m[1].source, "/b/hosts", "a relative bind source is the bundle's");
                tap_is_str(m[2].source, "/sys", "sysfs without a network namespace is the host's /sys");
                tap_is_str(m[3].mountpoint, "/proc/kcore", "mask: mount point");
                tap_is_str(m[3].cookie, "/dev/null", "mask: cookie /dev/null");
                tap_is_str(m[4].source, "/dev/null", "mask: source /dev/null");
        }
        criu_external_mounts_free(m, n);
}

int main(void) {
        test_explain();
        test_external_mounts();
        return tap_done();
}
