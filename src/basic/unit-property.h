/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A systemd unit property as plain data: (name, D-Bus signature, value). src/runtime builds lists of these
 * from the OCI config (unit-testable without a bus); src/sdunit appends them to a D-Bus message in a thin
 * loop. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum UnitPropertyKind {
        UNIT_PROP_BOOL,         /* "b" */
        UNIT_PROP_STRING,       /* "s" */
        UNIT_PROP_UINT64,       /* "t" */
        UNIT_PROP_INT64,        /* "x" */
        UNIT_PROP_UINT32,       /* "u" */
        UNIT_PROP_INT32,        /* "i" */
        UNIT_PROP_DOUBLE,       /* "d" */
        UNIT_PROP_STRV,         /* "as" */
        UNIT_PROP_BYTES,        /* "ay" (AllowedCPUs=, AllowedMemoryNodes=: a CPU bitmask) */
        UNIT_PROP_PAIRS_SS,     /* "a(ss)" (DeviceAllow=) */
        UNIT_PROP_PAIRS_ST,     /* "a(st)" (IODeviceWeight=, IOReadBandwidthMax=, BlockIO...=) */
        UNIT_PROP_UINT32_ARRAY, /* "au" (PIDs=) */
        _UNIT_PROP_KIND_MAX,
} UnitPropertyKind;

typedef struct UnitPropertyPair {
        char *first;
        char *second;   /* a(ss) */
        uint64_t value; /* a(st) */
} UnitPropertyPair;

typedef struct UnitProperty {
        char *name;
        UnitPropertyKind kind;
        bool b;
        char *s;
        uint64_t u64; /* t, u (low 32 bits) */
        int64_t i64;  /* x, i */
        double d;
        char **strv;
        uint8_t *bytes;
        size_t n_bytes;
        UnitPropertyPair *pairs;
        size_t n_pairs;
        uint32_t *u32s;
        size_t n_u32s;
} UnitProperty;

typedef struct UnitPropertyList {
        UnitProperty *items;
        size_t n_items;
} UnitPropertyList;

const char *unit_property_kind_signature(UnitPropertyKind k);

/* Each returns 0 or -ENOMEM; the name and values are copied. A later property of the same name replaces an
 * earlier one unless the kind is a list (pairs), where systemd itself treats repeats as appends. */
int unit_property_add_bool(UnitPropertyList *l, const char *name, bool b);
int unit_property_add_string(UnitPropertyList *l, const char *name, const char *s);
int unit_property_add_u64(UnitPropertyList *l, const char *name, uint64_t v);
int unit_property_add_i64(UnitPropertyList *l, const char *name, int64_t v);
int unit_property_add_u32(UnitPropertyList *l, const char *name, uint32_t v);
int unit_property_add_i32(UnitPropertyList *l, const char *name, int32_t v);
int unit_property_add_double(UnitPropertyList *l, const char *name, double v);
int unit_property_add_strv(UnitPropertyList *l, const char *name, char *const *strv);
int unit_property_add_bytes(UnitPropertyList *l, const char *name, const uint8_t *b, size_t n);
int unit_property_add_pair_ss(UnitPropertyList *l, const char *name, const char *a, const char *b);
int unit_property_add_pair_st(UnitPropertyList *l, const char *name, const char *a, uint64_t v);
int unit_property_add_u32_array(UnitPropertyList *l, const char *name, const uint32_t *v, size_t n);

const UnitProperty *unit_property_list_find(const UnitPropertyList *l, const char *name);
/* Drop every property of that name (no-op when absent). */
void unit_property_list_remove(UnitPropertyList *l, const char *name);
void unit_property_list_done(UnitPropertyList *l);
/* "Name=value" for debugging and the unit tests. Caller frees. */
char *unit_property_to_string(const UnitProperty *p);
