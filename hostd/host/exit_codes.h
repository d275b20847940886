/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Exit codes of hostd (docs/hostd.md): what main() returns, what a run
 * ends with (run.h) and what the service reads from an experiment's hostd
 * (service_run.c).  In a header of their own so that a reader of the codes
 * needs nothing of the run.
 */
#ifndef LOCKSTEP_EXIT_CODES_H
#define LOCKSTEP_EXIT_CODES_H

enum {
	RUN_EXIT_COMPLETE = 0, /* every step ran on every participant */
	RUN_EXIT_USAGE = 1,    /* bad options or configuration: nothing ran */
	RUN_EXIT_FAILED = 2,   /* degraded, aborted or interrupted; results kept */
};

#endif
