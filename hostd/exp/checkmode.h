/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hostd --check --host-config h.conf --guest-config g.conf: reads both as a
 * run would, and prints, without starting anything, each node's plan and
 * samples per series (enough for hostctl compare's U test or not), the
 * files shipped with steps, the host state a run would change, what is
 * ignored and why, the binaries pushed with their size, and pre-flight
 * checks that need no guest.  The outer layer: it prints.
 */
#ifndef LOCKSTEP_CHECKMODE_H
#define LOCKSTEP_CHECKMODE_H

#include <stdio.h>

struct check_options {
	const char *host_config, *guest_config;
	const char *default_template; /* GUEST_TEMPLATE's default, may be NULL */
	const char *const *sets;      /* --set NAME=VALUE, NULL-terminated, may be NULL */
	const char *state_dir, *results_dir;
	const char *guest_agent; /* its size is reported; may be NULL */
	unsigned load_flags;	 /* EXPERIMENT_LENIENT (hostd --lenient) */
};

/* 0 when everything reads and every pre-flight check passes, else 1. */
int check_main(const struct check_options *o, FILE *out);

#endif
