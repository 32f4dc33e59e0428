/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The host side of systemd credentials (credentials.h in src/init holds the container side). */

#include "credentials.h"

/* When the runtime was started with $CREDENTIALS_DIRECTORY (by a unit with LoadCredential=, SetCredential=
 * or LoadCredentialEncrypted=: a ramfs of systemd's, private to that unit), read its regular files into
 * *ret (ret->present set, even for none). Without it, or when it is not an absolute path to a directory,
 * *ret stays empty. Nothing is written anywhere. Fills *reterr ("CREDENTIALS_DIRECTORY: ..."). */
int credentials_load(Credentials *ret, char **reterr);
