/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* linux.resources / annotations -> unit properties and cgroup file writes, for both layouts. No bus. */

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup-props.h"
#include "fileio.h"
#include "keep-unit.h"
#include "macro.h"
#include "oci-config.h"
#include "tap.h"
#include "unit-property.h"

#define U CGROUP_LAYOUT_UNIFIED
#define H CGROUP_LAYOUT_HYBRID

/* "A=1; B=2" in list order. */
static char *join_props(const UnitPropertyList *l) {
        char *out = strdup("");
        for (size_t i = 0; out && i < l->n_items; i++) {
                char *s = unit_property_to_string(&l->items[i]), *n = NULL;
                if (!s || asprintf(&n, "%s%s%s", out, i > 0 ? "; " : "", s) < 0)
                        n = NULL;
                free(s);
                free(out);
                out = n;
        }
        return out;
}

/* "controller:file=value; ..." */
static char *join_writes(const CgroupFileWrites *w) {
        char *out = strdup("");
        for (size_t i = 0; out && i < w->n_items; i++) {
                char *n = NULL;
                if (asprintf(&n, "%s%s%s:%s=%s", out, i > 0 ? "; " : "", w->items[i].controller,
                             w->items[i].file, w->items[i].value) < 0)
                        n = NULL;
                free(out);
                out = n;
        }
        return out;
}

/* Map r for layout and compare the joined properties and writes; on an expected error (exp_r < 0),
 * check the message contains exp_props. */
static void check(const char *desc, const OciResources *r, CgroupLayout layout, int exp_r,
                  const char *exp_props, const char *exp_writes) {
        _cleanup_(unit_property_list_done) UnitPropertyList props = {};
        _cleanup_(cgroup_file_writes_done) CgroupFileWrites w = {};
        _cleanup_free_ char *err = NULL, *p = NULL, *ws = NULL;
        const char *lname = layout == U ? "unified" : "hybrid";

        int k = cgroup_props_from_resources(r, layout, &props, &w, &err);
        if (exp_r < 0) {
                tap_is_int(k, exp_r, "%s (%s): fails", desc, lname);
                if (!tap_ok(err && strstr(err, exp_props), "%s (%s): message contains \"%s\"", desc, lname,
                            exp_props))
                        printf("#   got: %s\n", strna(err));
                return;
        }
        if (!tap_is_int(k, 0, "%s (%s): ok", desc, lname))
                printf("#   error: %s\n", strna(err));
        p = join_props(&props);
        ws = join_writes(&w);
        tap_is_str(p, exp_props, "%s (%s): properties", desc, lname);
        tap_is_str(ws, exp_writes ?: "", "%s (%s): file writes", desc, lname);
}

static OciResources res(void) {
        return (OciResources){ .present = true };
}

static void test_memory(void) {
        OciResources r = res();
        r.memory.present = true;
        r.memory.has_limit = r.memory.has_reservation = r.memory.has_swap = true;
        r.memory.limit = 1 << 30;
        r.memory.reservation = 512 << 20;
        r.memory.swap = 2LL << 30;
        check("memory limit/reservation/swap", &r, U, 0,
              "MemoryMax=1073741824; MemoryLow=536870912; MemorySwapMax=1073741824", NULL);
        check("memory limit/reservation/swap", &r, H, 0, "MemoryLimit=1073741824; MemoryMax=1073741824",
              "memory:memory.soft_limit_in_bytes=536870912; memory:?memory.limit_in_bytes=1073741824; "
              "memory:memory.memsw.limit_in_bytes=2147483648; memory:memory.limit_in_bytes=1073741824");

        r = res();
        r.memory.present = r.memory.has_limit = r.memory.has_swap = true;
        r.memory.limit = -1;
        r.memory.swap = -1;
        check("memory -1 is unlimited", &r, U, 0, "MemoryMax=infinity; MemorySwapMax=infinity", NULL);
        check("memory -1 is unlimited", &r, H, 0, "MemoryLimit=infinity; MemoryMax=infinity",
              "memory:?memory.limit_in_bytes=-1; memory:memory.memsw.limit_in_bytes=-1; memory:memory.limit_in_bytes=-1");

        /* runc's update.bats: `update --memory -1` lifts a memory+swap limit too. */
        r.memory.has_swap = false;
        check("memory -1 alone lifts swap", &r, U, 0, "MemoryMax=infinity; MemorySwapMax=infinity", NULL);
        check("memory -1 alone lifts swap", &r, H, 0, "MemoryLimit=infinity; MemoryMax=infinity",
              "memory:?memory.memsw.limit_in_bytes=-1; memory:memory.limit_in_bytes=-1");
        r.memory.has_swap = true;

        r.memory.limit = 0;
        r.memory.swap = 0;
        check("memory 0 is unset", &r, U, 0, "", NULL);

        r.memory.limit = INT64_MAX;
        r.memory.has_swap = false;
        check("huge memory limit", &r, U, 0, "MemoryMax=9223372036854775807", NULL);

        r.memory.limit = -2;
        check("memory -2", &r, U, -EINVAL, "linux.resources.memory.limit: -2 is negative", NULL);

        r = res();
        r.memory.present = r.memory.has_limit = r.memory.has_swap = true;
        r.memory.limit = 200;
        r.memory.swap = 100;
        check("swap below limit", &r, U, -EINVAL,
              "linux.resources.memory.swap: memory+swap limit 100 is lower", NULL);
        check("swap below limit", &r, H, -EINVAL,
              "linux.resources.memory.swap: memory+swap limit 100 is lower", NULL);
        r.memory.has_limit = false;
        check("swap without limit", &r, U, -EINVAL, "needs linux.resources.memory.limit on cgroup v2", NULL);

        r = res();
        r.memory.present = r.memory.has_swappiness = r.memory.has_disable_oom_killer = true;
        r.memory.has_kernel = r.memory.has_kernel_tcp = true;
        r.memory.swappiness = 60;
        r.memory.disable_oom_killer = true;
        r.memory.kernel = 1000;
        r.memory.kernel_tcp = 2000;
        check("v1 memory knobs", &r, H, 0, "",
              "memory:memory.kmem.tcp.limit_in_bytes=2000; memory:memory.swappiness=60; memory:memory.oom_control=1");
        check("v1 memory knobs are ignored on v2", &r, U, 0, "", NULL);
        r.memory.swappiness = 101;
        check("swappiness 101", &r, H, -EINVAL, "linux.resources.memory.swappiness: 101 is out of range",
              NULL);
}

static void test_cpu(void) {
        OciResources r = res();
        r.cpu.present = r.cpu.has_shares = r.cpu.has_quota = r.cpu.has_period = true;
        r.cpu.shares = 1024;
        r.cpu.quota = 50000;
        r.cpu.period = 100000;
        check("cpu shares/quota/period", &r, U, 0,
              "CPUWeight=39; CPUQuotaPeriodUSec=100000; CPUQuotaPerSecUSec=500000", NULL);
        check("cpu shares/quota/period", &r, H, 0,
              "CPUShares=1024; CPUQuotaPeriodUSec=100000; CPUQuotaPerSecUSec=500000",
              "cpu:cpu.cfs_period_us=100000; cpu:cpu.cfs_quota_us=50000");
        /* 555.556 ms per second: systemd gets 560 ms (it keeps whole percents across daemon-reload), the
         * cgroup the exact quota */
        r.cpu.has_shares = false;
        r.cpu.quota = 500000;
        r.cpu.period = 900000;
        check("cpu quota 500000/900000", &r, U, 0, "CPUQuotaPeriodUSec=900000; CPUQuotaPerSecUSec=560000",
              ":cpu.max=500000 900000");
        check("cpu quota 500000/900000", &r, H, 0, "CPUQuotaPeriodUSec=900000; CPUQuotaPerSecUSec=560000",
              "cpu:cpu.cfs_period_us=900000; cpu:cpu.cfs_quota_us=500000");
        r.cpu.has_period = false;
        r.cpu.quota = 150000;
        check("cpu quota alone, 1.5 CPUs", &r, U, 0, "CPUQuotaPerSecUSec=1500000", NULL);
        check("cpu quota alone, 1.5 CPUs", &r, H, 0, "CPUQuotaPerSecUSec=1500000",
              "cpu:cpu.cfs_quota_us=150000");
        r.cpu.has_shares = true;

        r.cpu.shares = 2;
        r.cpu.quota = -1;
        r.cpu.has_period = false;
        check("cpu shares 2, quota -1", &r, U, 0, "CPUWeight=1; CPUQuotaPerSecUSec=infinity", NULL);
        check("cpu shares 2, quota -1", &r, H, 0, "CPUShares=2; CPUQuotaPerSecUSec=infinity",
              "cpu:cpu.cfs_quota_us=-1");
        /* v2, no quota or -1 with a period: "max PERIOD" as runc writes it (systemd would write its 100 ms) */
        r.cpu.has_shares = false;
        r.cpu.has_period = true;
        r.cpu.period = 900000;
        check("cpu quota -1, period 900000", &r, U, 0, "CPUQuotaPeriodUSec=900000; CPUQuotaPerSecUSec=infinity",
              ":cpu.max=max 900000");
        check("cpu quota -1, period 900000", &r, H, 0, "CPUQuotaPeriodUSec=900000; CPUQuotaPerSecUSec=infinity",
              "cpu:cpu.cfs_period_us=900000; cpu:cpu.cfs_quota_us=-1");
        r.cpu.has_quota = false;
        r.cpu.period = 1000000;
        check("cpu period alone", &r, U, 0, "CPUQuotaPeriodUSec=1000000", ":cpu.max=max 1000000");
        check("cpu period alone", &r, H, 0, "CPUQuotaPeriodUSec=1000000", "cpu:cpu.cfs_period_us=1000000");
        r.cpu.has_quota = r.cpu.has_shares = true;
        r.cpu.shares = 1000000;
        r.cpu.quota = 1;
        r.cpu.has_period = true;
        r.cpu.period = 3000;
        /* below the kernel's 1 ms: systemd writes 1 ms, our write of the exact value fails (as runc's) */
        check("cpu shares huge, quota rounded up", &r, U, 0,
              "CPUWeight=10000; CPUQuotaPeriodUSec=3000; CPUQuotaPerSecUSec=10000", ":cpu.max=1 3000");
        r.cpu.period = 999;
        check("cpu period 999", &r, U, -EINVAL, "linux.resources.cpu.period: 999 us is out of range", NULL);
        r.cpu.period = 100000;
        r.cpu.quota = -5;
        check("cpu quota -5", &r, U, -EINVAL, "linux.resources.cpu.quota: -5 is negative", NULL);

        r = res();
        r.cpu.present = true;
        r.cpu.cpus = (char *) "0-3,8";
        r.cpu.mems = (char *) "0";
        check("cpus/mems", &r, U, 0, "AllowedCPUs=0f01; AllowedMemoryNodes=01", NULL);
        /* v1: the properties too (systemd shows them, applies nothing there), and the files */
        check("cpus/mems", &r, H, 0, "AllowedCPUs=0f01; AllowedMemoryNodes=01",
              "cpuset:cpuset.cpus=0-3,8; cpuset:cpuset.mems=0");
        r.cpu.cpus = (char *) "3-1";
        check("cpus 3-1", &r, U, -EINVAL, "linux.resources.cpu.cpus: \"3-1\" is not a valid list", NULL);
        check("cpus 3-1", &r, H, -EINVAL, "linux.resources.cpu.cpus: \"3-1\" is not a valid list", NULL);
        r.cpu.cpus = (char *) "0,x";
        check("cpus 0,x", &r, U, -EINVAL, "linux.resources.cpu.cpus:", NULL);
        r.cpu.cpus = (char *) "8192";
        check("cpus 8192", &r, U, -EINVAL, "linux.resources.cpu.cpus:", NULL);
        r.cpu.cpus = NULL;
        r.cpu.mems = (char *) "0-";
        check("mems 0-", &r, U, -EINVAL, "linux.resources.cpu.mems:", NULL);

        r = res();
        r.cpu.present = r.cpu.has_burst = r.cpu.has_idle = true;
        r.cpu.has_realtime_period = r.cpu.has_realtime_runtime = true;
        r.cpu.burst = 1000;
        r.cpu.idle = 1;
        r.cpu.realtime_period = 1000000;
        r.cpu.realtime_runtime = 950000;
        check("cpu burst/idle/rt", &r, H, 0, "",
              "cpu:cpu.cfs_burst_us=1000; cpu:cpu.rt_period_us=1000000; cpu:cpu.rt_runtime_us=950000; cpu:cpu.idle=1");
        check("cpu rt on v2", &r, U, -EOPNOTSUPP, "realtimeRuntime/realtimePeriod", NULL);
        r.cpu.has_realtime_period = r.cpu.has_realtime_runtime = false;
        check("cpu burst/idle", &r, U, 0, "", ":cpu.max.burst=1000; :cpu.idle=1");
        r.cpu.idle = 2;
        check("cpu idle 2", &r, U, -EINVAL, "linux.resources.cpu.idle: 2", NULL);
}

static void test_pids_blockio(void) {
        OciResources r = res();
        r.pids.present = r.pids.has_limit = true;
        r.pids.limit = 100;
        check("pids 100", &r, U, 0, "TasksMax=100", NULL);
        check("pids 100", &r, H, 0, "TasksMax=100", NULL);
        r.pids.limit = 0;
        check("pids 0", &r, U, 0, "TasksMax=infinity", NULL);
        r.pids.limit = -1;
        check("pids -1", &r, H, 0, "TasksMax=infinity", NULL);

        OciBlockIoDevice wd = { .major = 8, .minor = 0, .has_weight = true, .weight = 100 };
        OciBlockIoDevice rbps = { .major = 8, .minor = 0, .rate = 1048576 };
        OciBlockIoDevice wbps = { .major = 8, .minor = 16, .rate = 0 };
        OciBlockIoDevice riops = { .major = 8, .minor = 0, .rate = 100 };
        OciBlockIoDevice wiops = { .major = 8, .minor = 0, .rate = 200 };
        r = res();
        r.block_io.present = r.block_io.has_weight = true;
        r.block_io.weight = 500;
        r.block_io.weight_device = &wd;
        r.block_io.n_weight_device = 1;
        r.block_io.throttle_read_bps = &rbps;
        r.block_io.n_throttle_read_bps = 1;
        r.block_io.throttle_write_bps = &wbps;
        r.block_io.n_throttle_write_bps = 1;
        r.block_io.throttle_read_iops = &riops;
        r.block_io.n_throttle_read_iops = 1;
        r.block_io.throttle_write_iops = &wiops;
        r.block_io.n_throttle_write_iops = 1;
        check("blockIO", &r, U, 0,
              "IOWeight=4950; IODeviceWeight=/dev/block/8:0 910; IOReadBandwidthMax=/dev/block/8:0 1048576; "
              "IOWriteBandwidthMax=/dev/block/8:16 infinity; IOReadIOPSMax=/dev/block/8:0 100; "
              "IOWriteIOPSMax=/dev/block/8:0 200",
              NULL);
        check("blockIO", &r, H, 0,
              "BlockIOWeight=500; BlockIODeviceWeight=/dev/block/8:0 100; BlockIOReadBandwidth=/dev/block/8:0 "
              "1048576; BlockIOWriteBandwidth=/dev/block/8:16 infinity",
              "blkio:blkio.bfq.weight_device|blkio.weight_device=8:0 100; "
              "blkio:blkio.throttle.read_iops_device=8:0 100; blkio:blkio.throttle.write_iops_device=8:0 200");

        r = res();
        r.block_io.present = r.block_io.has_weight = true;
        r.block_io.weight = 10;
        check("blkio weight 10", &r, U, 0, "IOWeight=1", NULL);
        r.block_io.weight = 1000;
        check("blkio weight 1000", &r, U, 0, "IOWeight=10000", NULL);
        r.block_io.weight = 5;
        check("blkio weight 5", &r, U, -EINVAL, "linux.resources.blockIO.weight: 5 is out of range", NULL);
        r.block_io.weight = 0;
        r.block_io.has_leaf_weight = true;
        r.block_io.leaf_weight = 300;
        check("blkio leaf weight", &r, H, 0, "", "blkio:blkio.leaf_weight=300");
        check("blkio leaf weight", &r, U, -EOPNOTSUPP, "linux.resources.blockIO.leafWeight", NULL);
        OciBlockIoDevice bad = { .major = 8, .minor = 0, .has_weight = true, .weight = 2000 };
        r = res();
        r.block_io.present = true;
        r.block_io.weight_device = &bad;
        r.block_io.n_weight_device = 1;
        check("weightDevice 2000", &r, U, -EINVAL, "linux.resources.blockIO.weightDevice[0].weight: 2000",
              NULL);
}

static OciDeviceCgroup dev(bool allow, char type, int64_t major, int64_t minor, const char *access) {
        OciDeviceCgroup d = { .allow = allow, .type = type, .major = major, .minor = minor };
        snprintf(d.access, sizeof(d.access), "%s", access);
        return d;
}

static void test_devices(void) {
        OciResources r = res();
        OciDeviceCgroup runc_default[] = {
                dev(false, 'a', -1, -1, "rwm"), dev(true, 'c', 1, 3, "rwm"), dev(true, 'c', 1, 5, "rwm"),
                dev(true, 'c', 1, -1, "rwm"),   dev(true, 'c', -1, -1, "m"), dev(true, 'b', -1, -1, "m"),
        };
        r.devices = runc_default;
        r.n_devices = ELEMENTSOF(runc_default);
        check("deny all + allows", &r, U, 0,
              "DevicePolicy=strict; DeviceAllow=/dev/char/1:3 rwm,/dev/char/1:5 rwm,char-mem rwm,char-* m,block-* m",
              NULL);
        check("deny all + allows", &r, H, 0,
              "DevicePolicy=strict; DeviceAllow=/dev/char/1:3 rwm,/dev/char/1:5 rwm,char-mem rwm,char-* m,block-* m",
              NULL);

        OciDeviceCgroup deny_only[] = { dev(false, 'a', -1, -1, "") };
        r.devices = deny_only;
        r.n_devices = 1;
        check("deny all (access absent = rwm)", &r, U, 0, "DevicePolicy=strict", NULL);

        OciDeviceCgroup narrowed[] = { dev(false, 'a', -1, -1, "rwm"), dev(true, 'a', 1, 3, "rwm"),
                                       dev(false, 'c', 1, 3, "w") };
        r.devices = narrowed;
        r.n_devices = ELEMENTSOF(narrowed);
        check("deny of an exact allow narrows its access", &r, U, 0,
              "DevicePolicy=strict; DeviceAllow=/dev/char/1:3 rm,/dev/block/1:3 rwm", NULL);

        OciDeviceCgroup allow_all[] = { dev(true, 'a', -1, -1, "rwm") };
        r.devices = allow_all;
        r.n_devices = 1;
        check("allow all", &r, U, 0, "", NULL);

        OciDeviceCgroup allow_then_deny[] = { dev(true, 'a', -1, -1, "rwm"), dev(false, 'c', 1, 3, "rwm") };
        r.devices = allow_then_deny;
        r.n_devices = ELEMENTSOF(allow_then_deny);
        check("allow all then deny", &r, U, -EOPNOTSUPP,
              "linux.resources.devices[1]: this deny rule narrows an earlier allow", NULL);
        check("allow all then deny", &r, H, 0, "",
              "devices:devices.allow=a; devices:devices.deny=c 1:3 rwm");

        OciDeviceCgroup partial[] = { dev(false, 'a', -1, -1, "rwm"), dev(true, 'c', 1, -1, "rwm"),
                                      dev(false, 'c', 1, 3, "rwm") };
        r.devices = partial;
        r.n_devices = ELEMENTSOF(partial);
        check("deny inside a wider allow", &r, U, -EOPNOTSUPP, "linux.resources.devices[2]", NULL);
        check("deny inside a wider allow", &r, H, 0, "",
              "devices:devices.deny=a; devices:devices.allow=c 1:* rwm; devices:devices.deny=c 1:3 rwm");

        OciDeviceCgroup unnamed[] = { dev(false, 'a', -1, -1, "rwm"), dev(true, 'c', 4, -1, "rwm") };
        r.devices = unnamed;
        r.n_devices = ELEMENTSOF(unnamed);
        check("major without a name of its own", &r, U, -EOPNOTSUPP, "linux.resources.devices[1]: c 4:*",
              NULL);
        check("major without a name of its own", &r, H, 0, "",
              "devices:devices.deny=a; devices:devices.allow=c 4:* rwm");

        OciDeviceCgroup badtype[] = { dev(true, 'x', 1, 3, "rwm") };
        r.devices = badtype;
        r.n_devices = 1;
        check("device type x", &r, U, -EINVAL, "linux.resources.devices[0].type", NULL);
}

static void test_misc(void) {
        OciHugepageLimit hp[] = { { .page_size = (char *) "2MB", .limit = 1 << 30 } };
        OciResources r = res();
        r.hugepage_limits = hp;
        r.n_hugepage_limits = 1;
        check("hugetlb", &r, U, 0, "", ":hugetlb.2MB.max=1073741824");
        check("hugetlb", &r, H, 0, "", "hugetlb:hugetlb.2MB.limit_in_bytes=1073741824");
        hp[0].page_size = (char *) "2M";
        check("hugetlb 2M", &r, U, -EINVAL, "linux.resources.hugepageLimits[0].pageSize: \"2M\"", NULL);

        OciNetPriority prio[] = { { .name = (char *) "eth0", .priority = 5 } };
        r = res();
        r.network.present = r.network.has_class_id = true;
        r.network.class_id = 0x100001;
        r.network.priorities = prio;
        r.network.n_priorities = 1;
        check("network", &r, H, 0, "",
              "net_cls:net_cls.classid=1048577; net_prio:net_prio.ifpriomap=eth0 5");
        check("network", &r, U, -EOPNOTSUPP, "linux.resources.network: net_cls and net_prio are cgroup v1",
              NULL);

        OciRdma rdma[] = { { .device = (char *) "mlx5_1", .has_hca_handles = true, .hca_handles = 3 } };
        r = res();
        r.rdma = rdma;
        r.n_rdma = 1;
        check("rdma", &r, U, 0, "", ":rdma.max=mlx5_1 hca_handle=3 hca_object=max");
        check("rdma", &r, H, 0, "", "rdma:rdma.max=mlx5_1 hca_handle=3 hca_object=max");

        OciKeyValue uni[] = {
                { (char *) "memory.high", (char *) "1073741824" },
                { (char *) "memory.min", (char *) "max" },
                { (char *) "pids.max", (char *) "max" },
                { (char *) "cpu.max", (char *) "50000 100000" },
                { (char *) "cpu.weight", (char *) "200" },
                { (char *) "io.max", (char *) "8:0 rbps=1000" },
                { (char *) "cpuset.cpus", (char *) "1" },
        };
        r = res();
        r.pids.present = r.pids.has_limit = true;
        r.pids.limit = 10;
        r.unified = uni;
        r.n_unified = ELEMENTSOF(uni);
        check("unified", &r, U, 0,
              "TasksMax=infinity; MemoryHigh=1073741824; MemoryMin=infinity; CPUQuotaPerSecUSec=500000; "
              "CPUQuotaPeriodUSec=100000; CPUWeight=200; AllowedCPUs=02",
              ":io.max=8:0 rbps=1000");
        check("unified on hybrid", &r, H, -EOPNOTSUPP,
              "linux.resources.unified: \"memory.high\": invalid configuration: unified keys need", NULL);
        OciKeyValue bad[] = { { (char *) "cgroup.procs", (char *) "1" } };
        r.unified = bad;
        r.n_unified = 1;
        check("unified cgroup.procs", &r, U, -EINVAL, "\"cgroup.procs\" is not a cgroup file", NULL);
        OciKeyValue bad2[] = { { (char *) "../memory.max", (char *) "1" } };
        r.unified = bad2;
        check("unified ../", &r, U, -EINVAL, "is not a cgroup file", NULL);
        OciKeyValue bad3[] = { { (char *) "memory.high", (char *) "lots" } };
        r.unified = bad3;
        check("unified memory.high=lots", &r, U, -EINVAL, "linux.resources.unified.memory.high: \"lots\"",
              NULL);

        r = (OciResources){};
        check("no resources", &r, U, 0, "", NULL);
}

static void test_conversions(void) {
        _cleanup_free_ uint8_t *m = NULL;
        size_t n;

        tap_is_int((long long) cgroup_cpu_shares_to_weight(0), 0, "shares 0 -> 0");
        tap_is_int((long long) cgroup_cpu_shares_to_weight(2), 1, "shares 2 -> 1");
        tap_is_int((long long) cgroup_cpu_shares_to_weight(1024), 39, "shares 1024 -> 39");
        tap_is_int((long long) cgroup_cpu_shares_to_weight(262144), 10000, "shares 262144 -> 10000");
        tap_is_int((long long) cgroup_blkio_weight_to_io_weight(500), 4950, "blkio 500 -> 4950");
        tap_is_int((long long) cgroup_blkio_weight_to_io_weight(100), 910, "blkio 100 -> 910");
        tap_is_int(cgroup_parse_cpu_list("0, 2-3 ,15", &m, &n), 0, "cpu list with spaces");
        tap_ok(n == 2 && m[0] == 0x0d && m[1] == 0x80, "cpu list 0,2-3,15 -> 0d80");
        free(m);
        m = NULL;
        tap_is_int(cgroup_parse_cpu_list("", &m, &n), 0, "empty cpu list");
        tap_ok(n == 0 && !m, "empty cpu list -> no mask");
        tap_is_int(cgroup_parse_cpu_list("1,", &m, &n), -EINVAL, "trailing comma");
        tap_is_int(cgroup_parse_cpu_list("-1", &m, &n), -EINVAL, "negative");
        tap_is_int(cgroup_parse_cpu_list("99999", &m, &n), -ERANGE, "too large");
}

/* What systemd 252 re-applies after daemon-reload: the drop-in's "CPUQuota=N%" with N = per_sec / 10 ms,
 * truncated. */
static uint64_t after_reload(uint64_t per_sec) {
        return per_sec / 10000 * 10000;
}

static void test_cpu_quota_rounding(void) {
        static const struct {
                uint64_t quota, period, per_sec, applied;
        } cases[] = {
                { 50000, 100000, 500000, 50000 },    /* on the 10 ms grid: exact */
                { 150000, 100000, 1500000, 150000 }, /* docker --cpus 1.5 */
                { 500000, 900000, 560000, 504000 },  /* 555.556 ms: runc's 560 ms, never below */
                { 9000, 900000, 10000, 9000 },       /* 1%: exact */
                { 1000, 1000000, 10000, 10000 },     /* 0.1%: one step, the smallest systemd keeps */
                { 1, 3000, 10000, 1000 },            /* below the kernel's 1 ms: systemd's 1 ms */
                { 400000, 1000000, 400000, 400000 },
                { 33333, 100000, 340000, 34000 },
        };
        FOREACH_ARRAY(c, cases, ELEMENTSOF(cases)) {
                uint64_t v = 0;
                tap_is_int(cgroup_cpu_quota_per_sec(c->quota, c->period, &v), 0,
                           "quota %" PRIu64 "/%" PRIu64, c->quota, c->period);
                tap_is_int((long long) v, (long long) c->per_sec, "... -> CPUQuotaPerSecUSec=%" PRIu64,
                           c->per_sec);
                tap_is_int((long long) cgroup_cpu_quota_systemd(v, c->period), (long long) c->applied,
                           "... systemd applies %" PRIu64, c->applied);
                tap_is_int((long long) cgroup_cpu_quota_systemd(after_reload(v), c->period),
                           (long long) c->applied, "... and the same after daemon-reload");
        }

        /* Over every period in [1 ms, 1 s] in 7 us steps and a spread of quotas: a whole percent, never below
         * the quota, the same after a reload, and the smallest such value (one step less falls short, before
         * systemd's 1 ms floor: below the quota, systemd would also lengthen the period). */
        unsigned bad = 0, n = 0;
        for (uint64_t period = 1000; period <= 1000000; period += 7)
                for (uint64_t quota = 1000; quota <= 4 * period; quota += period / 3 + 1) {
                        uint64_t v;
                        n++;
                        if (cgroup_cpu_quota_per_sec(quota, period, &v) < 0 || v % 10000 != 0 ||
                            after_reload(v) != v || cgroup_cpu_quota_systemd(v, period) < quota ||
                            (v > 10000 && (v - 10000) * period / 1000000 >= quota)) {
                                if (bad++ < 5)
                                        printf("#   quota %" PRIu64 " period %" PRIu64 " -> %" PRIu64 "\n",
                                               quota, period, v);
                        }
                }
        tap_is_int(
                bad, 0,
                "%u quota/period pairs: rounded up to whole percents, never below, stable across a reload",
                n);

        uint64_t v;
        tap_is_int(cgroup_cpu_quota_per_sec(UINT64_MAX / 2, 1000, &v), -ERANGE,
                   "a quota too large -> -ERANGE");
}

static char *annot(const char *key, const char *value, int *ret_r) {
        _cleanup_(unit_property_list_done) UnitPropertyList props = {};
        _cleanup_free_ char *err = NULL;
        OciKeyValue a[] = { { (char *) "other.annotation", (char *) "x" },
                            { (char *) key, (char *) value } };

        *ret_r = cgroup_props_from_annotations(a, ELEMENTSOF(a), &props, &err);
        if (*ret_r < 0)
                return TAKE_PTR(err);
        return join_props(&props);
}

#define check_annot(key, value, expected)                                  \
        ({                                                                 \
                int _ar_;                                                  \
                char *_s_ = annot(key, value, &_ar_);                      \
                tap_is_str(_s_, expected, "annotation %s=%s", key, value); \
                free(_s_);                                                 \
        })
#define check_annot_fails(key, value, part)                                                 \
        ({                                                                                  \
                int _ar_;                                                                   \
                char *_s_ = annot(key, value, &_ar_);                                       \
                tap_is_int(_ar_, -EINVAL, "annotation %s=%s fails", key, value);            \
                if (!tap_ok(_s_ && strstr(_s_, part), "... message contains \"%s\"", part)) \
                        printf("#   got: %s\n", strna(_s_));                                \
                free(_s_);                                                                  \
        })

static void test_annotations(void) {
        check_annot("org.systemd.property.TimeoutStopSec", "15", "TimeoutStopUSec=15000000");
        check_annot("org.systemd.property.RuntimeMaxSec", "1.5", "RuntimeMaxUSec=1500000");
        check_annot("org.systemd.property.TimeoutStopSec", "uint64 2", "TimeoutStopUSec=2000000");
        check_annot("org.systemd.property.TimeoutStopUSec", "uint64 123", "TimeoutStopUSec=123");
        check_annot("org.systemd.property.TimeoutStopUSec", "@t 5", "TimeoutStopUSec=5");
        check_annot("org.systemd.property.CPUWeight", "200", "CPUWeight=200");
        check_annot("org.systemd.property.Nice", "-5", "Nice=-5");
        check_annot("org.systemd.property.Nice", "int32 -5", "Nice=-5");
        check_annot("org.systemd.property.Foo", "@u 7", "Foo=7");
        check_annot("org.systemd.property.Foo", "@x -7", "Foo=-7");
        check_annot("org.systemd.property.Foo", "double 0.5", "Foo=0.5");
        check_annot("org.systemd.property.CollectMode", "'inactive-or-failed'",
                    "CollectMode=inactive-or-failed");
        check_annot("org.systemd.property.Description", "\"it's \\\"quoted\\\"\"",
                    "Description=it's \"quoted\"");
        check_annot("org.systemd.property.Delegate", "true", "Delegate=yes");
        check_annot("org.systemd.property.Delegate", "false", "Delegate=no");
        check_annot("org.systemd.property.After", "['a.service', 'b.service']", "After=a.service b.service");
        check_annot("org.systemd.property.After", "@as []", "After=");
        check_annot("org.other.Foo", "x y", "");
        check_annot_fails("org.systemd.property.Foo", "some words",
                          "annotations.org.systemd.property.Foo: \"some words\"");
        check_annot_fails("org.systemd.property.Foo", "'unterminated", "is not a GVariant value");
        check_annot_fails("org.systemd.property.Foo", "uint32 99999999999", "is not a GVariant value");
        check_annot_fails("org.systemd.property.Foo", "['a' 'b']", "is not a GVariant value");
        check_annot_fails("org.systemd.property.TimeoutStopSec", "'x'", "is not a number of seconds");
        check_annot_fails("org.systemd.property.lower", "1", "is not a systemd property name");
        check_annot_fails("org.systemd.property.", "1", "is not a systemd property name");
        check_annot_fails("org.systemd.property.A-B", "1", "is not a systemd property name");
}

static int write_file(const char *path, const char *s) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        return loop_write(fd, s, strlen(s));
}

static char *read_file(const char *path) {
        char *s = NULL;
        if (read_full_file_at(AT_FDCWD, path, 4096, &s, NULL) < 0)
                return NULL;
        return s;
}

static void test_apply(void) {
        char root[] = "/tmp/test-cgroup-props.XXXXXX";
        _cleanup_(cgroup_file_writes_done) CgroupFileWrites w = {};
        _cleanup_free_ char *err = NULL, *cmd = NULL;
        char p[512];

        if (!mkdtemp(root)) {
                tap_ok(false, "mkdtemp");
                return;
        }
        snprintf(p, sizeof(p), "mkdir -p %s/unified/machine.slice/x.scope %s/memory/machine.slice/x.scope",
                 root, root);
        tap_is_int(system(p), 0, "fake cgroupfs");
        snprintf(p, sizeof(p), "%s/unified/machine.slice/x.scope/hugetlb.2MB.max", root);
        write_file(p, "");
        snprintf(p, sizeof(p), "%s/memory/machine.slice/x.scope/memory.swappiness", root);
        write_file(p, "");

        tap_is_int(cgroup_file_writes_add(&w, "", "hugetlb.2MB.max", "1024"), 0, "add a v2 write");
        tap_is_int(cgroup_file_writes_add(&w, "memory", "memory.swappiness", "10"), 0, "add a v1 write");
        tap_is_int(cgroup_apply_file_writes_at(root, &w, "/machine.slice/x.scope", H, &err), 0,
                   "apply on hybrid");
        snprintf(p, sizeof(p), "%s/unified/machine.slice/x.scope/hugetlb.2MB.max", root);
        _cleanup_free_ char *a = read_file(p);
        tap_is_str(a, "1024", "v2 file written below unified/");
        snprintf(p, sizeof(p), "%s/memory/machine.slice/x.scope/memory.swappiness", root);
        _cleanup_free_ char *b = read_file(p);
        tap_is_str(b, "10", "v1 file written below memory/");

        tap_is_int(cgroup_apply_file_writes_at(root, &w, "/machine.slice/x.scope", U, &err), -EOPNOTSUPP,
                   "a v1 write on the unified layout fails");
        tap_ok(err && strstr(err, "memory.swappiness: the memory controller is cgroup v1"),
               "... naming the file");

        cgroup_file_writes_done(&w);
        tap_is_int(cgroup_file_writes_add(&w, "", "nosuch.file", "1"), 0, "add a write to a missing file");
        tap_is_int(cgroup_apply_file_writes_at(root, &w, "/machine.slice/x.scope", H, &err), -ENOENT,
                   "a missing file fails");
        tap_ok(err && strstr(err, "nosuch.file") && strstr(err, "no such file"), "... naming the file");

        /* an optional write (cpu.max where the cgroup has no cpu controller) is skipped when the file is missing;
         * a refused write names the JSON field */
        cgroup_file_writes_done(&w);
        free(err);
        err = NULL;
        tap_is_int(
                cgroup_file_writes_add_for(&w, "linux.resources.cpu.quota", "", "cpu.max", "1 1000", true),
                0, "add an optional write");
        tap_is_int(cgroup_apply_file_writes_at(root, &w, "/machine.slice/x.scope", H, &err), 0,
                   "an optional write to a missing file is skipped");
        cgroup_file_writes_done(&w);
        tap_is_int(
                cgroup_file_writes_add_for(&w, "linux.resources.cpu.quota", "", "nosuch.file", "1", false),
                0, "add a write for a field");
        tap_is_int(cgroup_apply_file_writes_at(root, &w, "/machine.slice/x.scope", H, &err), -ENOENT,
                   "a missing file fails");
        tap_ok(err && strncmp(err, "linux.resources.cpu.quota: write \"1\" to ", 40) == 0,
               "... the message starts with the field: %s", strna(err));

        tap_ok(asprintf(&cmd, "rm -rf %s", root) >= 0 && system(cmd) == 0, "remove the fake cgroupfs");
}

/* --keep-unit: the properties of linux.resources as the payload's files, both layouts. */
static void check_keep(const char *desc, const OciResources *r, CgroupLayout layout, int exp_r,
                       const char *exp) {
        _cleanup_(unit_property_list_done) UnitPropertyList props = {};
        _cleanup_(cgroup_file_writes_done) CgroupFileWrites w = {}, files = {};
        _cleanup_free_ char *err = NULL, *got = NULL;
        const char *lname = layout == U ? "unified" : "hybrid";

        if (!tap_is_int(cgroup_props_from_resources(r, layout, &props, &w, &err), 0, "%s (%s): mapped", desc,
                        lname))
                return;
        (void) unit_property_add_u64(&props, "TimeoutStopUSec", 10000000);
        int k = keep_unit_props_to_writes(&props, layout, "sdrun@web.service", &files, &err);
        tap_is_int(k, exp_r, "%s (%s): keep-unit %s", desc, lname, exp_r < 0 ? "refuses" : "maps");
        got = exp_r < 0 ? strdup(strempty(err)) : join_writes(&files);
        if (!tap_ok(got && strstr(got, exp), "%s (%s): \"%s\"", desc, lname, exp))
                printf("#   got: %s\n", strna(got));
}

static void test_keep_unit(void) {
        OciResources r = { .present = true };
        r.memory.present = true;
        r.memory.has_limit = true;
        r.memory.limit = 100663296;
        r.pids.present = r.pids.has_limit = true;
        r.pids.limit = 77;
        check_keep("memory and pids limits", &r, U, 0, ":memory.max=100663296; :pids.max=77");
        check_keep("memory and pids limits", &r, H, 0,
                   "memory:memory.limit_in_bytes=100663296; pids:pids.max=77");

        OciResources q = { .present = true };
        q.cpu.present = true;
        q.cpu.has_quota = true;
        q.cpu.quota = 50000;
        q.cpu.has_period = true;
        q.cpu.period = 100000;
        check_keep("cpu quota", &q, U, 0, ":cpu.max=50000 100000");
        check_keep("cpu quota", &q, H, 0, "cpu:cpu.cfs_period_us=100000; cpu:cpu.cfs_quota_us=50000");
}

int main(void) {
        test_memory();
        test_cpu();
        test_pids_blockio();
        test_devices();
        test_misc();
        test_conversions();
        test_cpu_quota_rounding();
        test_annotations();
        test_apply();
        test_keep_unit();
        return tap_done();
}
