/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The automatic user namespace's pick (userns-auto.h): the first candidate, /etc/subuid lines, collisions. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "macro.h"
#include "oci-config.h"
#include "tap.h"
#include "userns-auto.h"

static uint32_t vetoed;
static bool veto_one(uint32_t base) {
        return base == vetoed;
}

static OciConfig *parse(const char *json) {
        OciConfig *c = NULL;
        return oci_config_parse(json, strlen(json), &c, NULL) < 0 ? NULL : c;
}

int main(void) {
        uint32_t a = userns_auto_first_candidate("web"), b;

        tap_ok(a >= USERNS_AUTO_FIRST && a <= USERNS_AUTO_LAST && a % USERNS_AUTO_SIZE == 0,
               "first candidate of \"web\" (%#x) is in the area, at a multiple of 65536", a);
        tap_is_int(userns_auto_first_candidate("web"), a, "the same for the same name");
        /* FNV-1a 32 of "web" is 0x0fd9bc91, modulo 28664 11897: what test-userns-auto.sh computes too */
        tap_is_int(a, USERNS_AUTO_FIRST + 11897U * USERNS_AUTO_SIZE,
                   "FNV-1a of the name, modulo the candidates");
        tap_ok(userns_auto_first_candidate("db") != a, "another name, another first candidate");

        tap_is_int(userns_auto_pick_free("web", NULL, 0, NULL, &b), 0, "nothing taken: a pick");
        tap_is_int(b, a, "  the first candidate");

        _cleanup_free_ IdRange *r = NULL;
        size_t n = 0;
        char text[256];
        snprintf(text, sizeof text, "# comment\nalice:100000:65536\nbad line\nbob:%u:1\nzero:5:0\n",
                 a + 65535);
        tap_is_int(userns_auto_parse_subid(text, &r, &n), 0, "parse a subuid text");
        tap_is_int(n, 2, "  two ranges (comment, bad line and empty range skipped)");
        tap_is_int(n == 2 ? r[1].start : 0, a + 65535, "  the second one's start");

        tap_is_int(userns_auto_pick_free("web", r, n, NULL, &b), 0,
                   "the last id of the first candidate taken");
        tap_is_int(b, a + USERNS_AUTO_SIZE, "  the next range");
        vetoed = a + USERNS_AUTO_SIZE;
        tap_is_int(userns_auto_pick_free("web", r, n, veto_one, &b), 0,
                   "the next vetoed (NSS knows a user)");
        tap_is_int(b, a + 2 * USERNS_AUTO_SIZE, "  the one after");

        IdRange all = { 0, (uint64_t) USERNS_AUTO_LAST + USERNS_AUTO_SIZE };
        tap_is_int(userns_auto_pick_free("web", &all, 1, NULL, &b), -EBUSY, "everything taken: -EBUSY");
        IdRange last = { USERNS_AUTO_FIRST, (uint64_t) USERNS_AUTO_LAST - USERNS_AUTO_FIRST };
        tap_is_int(userns_auto_pick_free("web", &last, 1, NULL, &b), 0, "all but the last range taken");
        tap_is_int(b, USERNS_AUTO_LAST, "  the last one, wrapping around");

        /* the request */
        _cleanup_(oci_config_freep) OciConfig *c1 = parse(
                "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"r\"},\"annotations\":{\"" USERNS_ANNOTATION
                "\":\"auto\"}}");
        _cleanup_(oci_config_freep) OciConfig *c2 = parse(
                "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"r\"},\"annotations\":{\"" USERNS_ANNOTATION
                "\":\"host\"}}");
        _cleanup_(oci_config_freep) OciConfig *c3 = parse(
                "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"r\"},\"annotations\":{\"" USERNS_ANNOTATION
                "\":\"pick\"}}");
        _cleanup_(oci_config_freep) OciConfig *c4 =
                parse("{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"r\"}}");
        bool on = false;
        _cleanup_free_ char *err = NULL;
        unsetenv(USERNS_ENV);
        tap_ok(c1 && c2 && c3 && c4, "configs parsed");
        if (c1 && c2 && c3 && c4) {
                tap_ok(userns_auto_requested(c1, &on, NULL) == 0 && on, "annotation \"auto\": asked for");
                setenv(USERNS_ENV, "auto", 1);
                tap_ok(userns_auto_requested(c2, &on, NULL) == 0 && !on,
                       "annotation \"host\": not, though " USERNS_ENV "=auto");
                tap_ok(userns_auto_requested(c4, &on, NULL) == 0 && on,
                       "no annotation, " USERNS_ENV "=auto: asked for");
                tap_is_int(userns_auto_requested(c3, &on, &err), -EINVAL, "annotation \"pick\": refused");
                tap_ok(err && strstr(err, "annotations[\"" USERNS_ANNOTATION "\"]"), "  naming it: %s",
                       strna(err));
                setenv(USERNS_ENV, "yes", 1);
                err = mfree(err);
                tap_is_int(userns_auto_requested(c4, &on, &err), -EINVAL, USERNS_ENV "=yes: refused");
                unsetenv(USERNS_ENV);
                tap_ok(userns_auto_requested(c4, &on, NULL) == 0 && !on, "neither: not asked for");
        }
        return tap_done();
}
