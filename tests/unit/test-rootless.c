/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rootless.c without a bus: which controller a property needs, what is kept or refused for a user manager,
 * what a rootless config may not have. */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "log.h"
#include "oci-config.h"
#include "rootless.h"
#include "tap.h"
#include "unit-property.h"

static void test_controller(void) {
        tap_is_str(unit_property_controller("MemoryMax"), "memory", "MemoryMax= needs memory");
        tap_is_str(unit_property_controller("MemorySwapMax"), "memory", "MemorySwapMax= needs memory");
        tap_is_str(unit_property_controller("TasksMax"), "pids", "TasksMax= needs pids");
        tap_is_str(unit_property_controller("CPUWeight"), "cpu", "CPUWeight= needs cpu");
        tap_is_str(unit_property_controller("CPUQuotaPerSecUSec"), "cpu", "CPUQuotaPerSecUSec= needs cpu");
        tap_is_str(unit_property_controller("IOWeight"), "io", "IOWeight= needs io");
        tap_is_str(unit_property_controller("AllowedCPUs"), "cpuset", "AllowedCPUs= needs cpuset");
        tap_is_str(unit_property_controller("DeviceAllow"), "devices", "DeviceAllow= is a device rule");
        tap_ok(unit_property_controller("MemoryAccounting") == NULL, "MemoryAccounting= needs nothing");
        tap_ok(unit_property_controller("IOAccounting") == NULL, "IOAccounting= needs nothing");
        tap_ok(unit_property_controller("TimeoutStopUSec") == NULL, "TimeoutStopUSec= needs nothing");
}

static void test_filter(void) {
        _cleanup_(unit_property_list_done) UnitPropertyList l = {};
        _cleanup_free_ char *err = NULL;
        int r;

        unit_property_add_u64(&l, "MemoryMax", 64 << 20);
        unit_property_add_u64(&l, "TasksMax", 32);
        unit_property_add_string(&l, "DevicePolicy", "strict");
        unit_property_add_pair_ss(&l, "DeviceAllow", "/dev/null", "rwm");
        unit_property_add_bool(&l, "MemoryAccounting", true);
        unit_property_add_u64(&l, "TimeoutStopUSec", 10000000);

        r = rootless_filter_properties(&l, "cpu memory pids", CGROUP_LAYOUT_UNIFIED, &err);
        tap_is_int(r, 0, "v2 with memory and pids delegated: accepted");
        tap_ok(unit_property_list_find(&l, "MemoryMax") && unit_property_list_find(&l, "TasksMax"),
               "MemoryMax= and TasksMax= kept");
        tap_ok(!unit_property_list_find(&l, "DevicePolicy") && !unit_property_list_find(&l, "DeviceAllow"),
               "device rules dropped (no device cgroup in a user manager)");
        tap_ok(unit_property_list_find(&l, "MemoryAccounting") && unit_property_list_find(&l, "TimeoutStopUSec"),
               "accounting and other properties kept");

        r = rootless_filter_properties(&l, "cpu pids", CGROUP_LAYOUT_UNIFIED, &err);
        tap_is_int(r, -EOPNOTSUPP, "v2 without memory delegated: MemoryMax= refused");
        tap_ok(err && strstr(err, "MemoryMax=") && strstr(err, "memory controller"), "the error names the property and "
               "the controller: %s", err ?: "(null)");

        free(err);
        err = NULL;
        r = rootless_filter_properties(&l, "", CGROUP_LAYOUT_HYBRID, &err);
        tap_is_int(r, 0, "v1: not refused (a warning)");
        tap_ok(!unit_property_list_find(&l, "MemoryMax") && !unit_property_list_find(&l, "TasksMax"),
               "v1: the limits are dropped");
        tap_ok(unit_property_list_find(&l, "TimeoutStopUSec") != NULL, "v1: the rest is kept");
}

static OciConfig *parse(const char *json) {
        OciConfig *c = NULL;
        _cleanup_free_ char *err = NULL;

        if (oci_config_parse(json, strlen(json), &c, &err) < 0) {
                printf("# parse: %s\n", err ?: "?");
                return NULL;
        }
        return c;
}

#define CONFIG(extra_mounts, namespaces)                                                                      \
        "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\"," \
        "\"user\":{\"uid\":0,\"gid\":0}},\"mounts\":[{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":"  \
        "\"proc\"}" extra_mounts "],\"linux\":{\"namespaces\":[{\"type\":\"mount\"}" namespaces "],"          \
        "\"uidMappings\":[{\"containerID\":0,\"hostID\":1000,\"size\":1}],"                                    \
        "\"gidMappings\":[{\"containerID\":0,\"hostID\":1000,\"size\":1}]}}"

static void test_validate(void) {
        OciConfig *c;
        char *err = NULL;

        c = parse(CONFIG(",{\"destination\":\"/data\",\"type\":\"ext4\",\"source\":\"/dev/sda1\"}", ",{\"type\":\"user\"}"));
        tap_ok(c && rootless_validate_config(c, &err) == -EPERM && err && strstr(err, "mounts[1]") &&
               strstr(err, "\"ext4\""), "an ext4 mount is refused, naming mounts[1]: %s", err ?: "(null)");
        oci_config_free(c);
        free(err);
        err = NULL;

        c = parse(CONFIG(",{\"destination\":\"/data\",\"type\":\"none\",\"source\":\"/srv\",\"options\":[\"rbind\"]}"
                         ",{\"destination\":\"/t\",\"type\":\"tmpfs\",\"source\":\"tmpfs\"}", ",{\"type\":\"user\"}"));
        tap_ok(c && rootless_validate_config(c, &err) == 0, "bind and tmpfs mounts are fine");
        oci_config_free(c);
        free(err);
        err = NULL;

        if (geteuid() != 0) {
                c = parse(CONFIG("", ""));
                tap_ok(c && rootless_validate_config(c, &err) == -EPERM && err && strstr(err, "user namespace"),
                       "unprivileged without a user namespace: refused: %s", err ?: "(null)");
                oci_config_free(c);
                free(err);
        } else
                tap_ok(true, "(as root: a config without a user namespace is checked by test-rootless.sh)");
}

int main(void) {
        log_set_max_level(LOG_ERR);
        test_controller();
        test_filter();
        test_validate();
        return tap_done();
}
