/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <unistd.h>

#include <systemd/sd-journal.h>

#include "sdunit.h"

bool sdunit_journal_available(void) {
        return access("/run/systemd/journal/socket", W_OK) == 0;
}

void sdunit_journal_sink(int level, const char *container_id, const char *unit, const char *msg) {
        /* OBJECT_SYSTEMD_UNIT= from a root sender is what `journalctl -u UNIT` matches besides the unit's own
         * processes. */
        if (container_id && unit)
                (void) sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%d", level, "SYSLOG_IDENTIFIER=sdrun",
                                       "CONTAINER_ID=%s", container_id, "OBJECT_SYSTEMD_UNIT=%s", unit,
                                       "UNIT=%s", unit, NULL);
        else if (container_id)
                (void) sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%d", level, "SYSLOG_IDENTIFIER=sdrun",
                                       "CONTAINER_ID=%s", container_id, NULL);
        else
                (void) sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%d", level, "SYSLOG_IDENTIFIER=sdrun",
                                       NULL);
}
