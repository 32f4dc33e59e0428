/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "tap.h"
#include "unit-property.h"

static char *prop_str(const UnitPropertyList *l, const char *name) {
        const UnitProperty *p = unit_property_list_find(l, name);
        return p ? unit_property_to_string(p) : NULL;
}

#define is_prop(l, name, expected)                                                 \
        ({                                                                         \
                char *_s_ = prop_str((l), (name));                                 \
                tap_is_str(_s_, (expected), "%s", (expected) ?: name " absent");   \
                free(_s_);                                                         \
        })

int main(void) {
        _cleanup_(unit_property_list_done) UnitPropertyList l = {};
        const uint8_t mask[] = { 0x0f, 0x01 };
        const uint32_t pids[] = { 1, 42 };
        char *strv[] = { (char *) "a", (char *) "b c", NULL };

        tap_is_str(unit_property_kind_signature(UNIT_PROP_PAIRS_ST), "a(st)", "signature of PAIRS_ST");
        tap_is_str(unit_property_kind_signature(UNIT_PROP_UINT32_ARRAY), "au", "signature of UINT32_ARRAY");
        tap_ok(unit_property_kind_signature(_UNIT_PROP_KIND_MAX) == NULL, "no signature for an invalid kind");

        tap_is_int(unit_property_add_bool(&l, "Delegate", true), 0, "add bool");
        tap_is_int(unit_property_add_string(&l, "Slice", "machine.slice"), 0, "add string");
        tap_is_int(unit_property_add_u64(&l, "MemoryMax", 1024), 0, "add u64");
        tap_is_int(unit_property_add_i64(&l, "Nice", -5), 0, "add i64");
        tap_is_int(unit_property_add_u32(&l, "U", 7), 0, "add u32");
        tap_is_int(unit_property_add_i32(&l, "I", -7), 0, "add i32");
        tap_is_int(unit_property_add_double(&l, "D", 1.5), 0, "add double");
        tap_is_int(unit_property_add_strv(&l, "Names", strv), 0, "add strv");
        tap_is_int(unit_property_add_bytes(&l, "AllowedCPUs", mask, sizeof(mask)), 0, "add bytes");
        tap_is_int(unit_property_add_u32_array(&l, "PIDs", pids, 2), 0, "add u32 array");
        tap_is_int(unit_property_add_pair_ss(&l, "DeviceAllow", "/dev/null", "rw"), 0, "add pair ss");
        tap_is_int(unit_property_add_pair_ss(&l, "DeviceAllow", "char-pts", "rwm"), 0, "add another pair ss");
        tap_is_int(unit_property_add_pair_st(&l, "IOReadBandwidthMax", "/dev/block/8:0", 1000), 0, "add pair st");
        tap_is_int((int) l.n_items, 12, "12 distinct properties");

        is_prop(&l, "Delegate", "Delegate=yes");
        is_prop(&l, "Slice", "Slice=machine.slice");
        is_prop(&l, "MemoryMax", "MemoryMax=1024");
        is_prop(&l, "Nice", "Nice=-5");
        is_prop(&l, "U", "U=7");
        is_prop(&l, "I", "I=-7");
        is_prop(&l, "D", "D=1.5");
        is_prop(&l, "Names", "Names=a b c");
        is_prop(&l, "AllowedCPUs", "AllowedCPUs=0f01");
        is_prop(&l, "PIDs", "PIDs=1 42");
        is_prop(&l, "DeviceAllow", "DeviceAllow=/dev/null rw,char-pts rwm");
        is_prop(&l, "IOReadBandwidthMax", "IOReadBandwidthMax=/dev/block/8:0 1000");

        /* Replace-by-name for scalars, keeping the position. */
        tap_is_int(unit_property_add_u64(&l, "MemoryMax", UINT64_MAX), 0, "replace u64");
        is_prop(&l, "MemoryMax", "MemoryMax=infinity");
        tap_is_str(l.items[2].name, "MemoryMax", "a replaced property keeps its position");
        tap_is_int(unit_property_add_string(&l, "MemoryMax", "x"), 0, "replace with another kind");
        tap_ok(unit_property_list_find(&l, "MemoryMax")->kind == UNIT_PROP_STRING, "the kind follows the last add");
        tap_is_int((int) l.n_items, 12, "still 12 properties");

        /* Pairs append. */
        tap_is_int(unit_property_add_pair_st(&l, "IOReadBandwidthMax", "/dev/block/8:16", UINT64_MAX), 0,
                   "append pair st");
        is_prop(&l, "IOReadBandwidthMax", "IOReadBandwidthMax=/dev/block/8:0 1000,/dev/block/8:16 infinity");

        /* Empty values. */
        tap_is_int(unit_property_add_bytes(&l, "AllowedMemoryNodes", NULL, 0), 0, "add empty bytes");
        is_prop(&l, "AllowedMemoryNodes", "AllowedMemoryNodes=");
        tap_is_int(unit_property_add_strv(&l, "Empty", NULL), 0, "add NULL strv");
        is_prop(&l, "Empty", "Empty=");

        unit_property_list_remove(&l, "DeviceAllow");
        tap_ok(!unit_property_list_find(&l, "DeviceAllow"), "remove drops the property");
        tap_ok(unit_property_list_find(&l, "PIDs") != NULL, "remove keeps the others");
        unit_property_list_remove(&l, "NoSuch");
        tap_is_int((int) l.n_items, 13, "13 properties after remove");

        unit_property_list_done(&l);
        tap_is_int((int) l.n_items, 0, "done empties the list");
        tap_ok(unit_property_list_find(&l, "Slice") == NULL, "find on an empty list");
        unit_property_list_done(&l); /* twice is fine */

        return tap_done();
}
