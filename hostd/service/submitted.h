/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An experiment's hostd as the service starts it: --run-as UID:GID (what
 * runs on the host runs as the submitter, runas.h) and --config-files
 * FILE (the configs as hostctl sent them, config_files.h: no config is
 * read from a path the submitter named).  Neither is for hand use.
 */
#ifndef LOCKSTEP_SUBMITTED_H
#define LOCKSTEP_SUBMITTED_H

#include "run.h"

/* Either may be NULL.  Sets o->runas; puts the configs in use.  0, or -1
 * after logging why. */
int submitted_setup(const char *run_as, const char *config_files, struct run_options *o);
/* After the configs are loaded: under the service, no file they name is
 * read with the service's rights unless anyone may read it (GUEST_SSH_KEY
 * never; HARNESS_BINARIES by a path only to a system file).  0, or -1
 * after logging which and why. */
int submitted_check(const struct experiment *e);

#endif
