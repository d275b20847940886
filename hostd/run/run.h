/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One experiment, start to end, on one libuv loop: start the participants,
 * hand them the plan, coordinate every barrier, write what arrives, and
 * finish the manifest whatever happens.
 */
#ifndef LOCKSTEP_RUN_H
#define LOCKSTEP_RUN_H

#include "config.h"
#include "exit_codes.h" /* what run_experiment returns */
#include "experiment.h"
#include "runas.h"

struct run_options {
	const char *host_config, *guest_config;
	const char *results_dir;
	const char *run_name; /* NULL: a timestamp */
	const char *agent_path;
	const char *guest_agent_path; /* pushed into libvirt guests; must be static */
	const char *state_dir;	      /* hostd's own key, known_hosts, saved host state */
	const char *sysfs_root;	      /* "/" but in tests of host state */
	bool progress;		      /* a progress line on a terminal */
	const char *status_file;      /* NULL, or rewritten at each barrier edge (run_status.c) */
	/* under the service: the submitter, as whom the programs of the run
	 * on the host run (runas.h); NULL: as hostd */
	const struct runas *runas;
};

int run_experiment(const struct experiment *exp, const struct run_options *opt);

#endif
