/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hostd's progress line (--progress, a terminal): where the run is, what
 * it waits for, and about how long is left; and the line that closes a
 * run.  Pure: the caller passes the instants and names, nothing here reads
 * a clock or writes anywhere.
 */
#ifndef LOCKSTEP_PROGRESS_LINE_H
#define LOCKSTEP_PROGRESS_LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct progress_in {
	int64_t now_ns, started_ns;	 /* the run's start */
	int64_t first_release_ns;	 /* step 1's release; 0 before it */
	bool launched;			 /* every participant was started */
	uint32_t step, nsteps;		 /* the step released last (0: none yet) */
	const char *benchmark, *variant; /* of that step; variant may be "" */
	uint32_t iteration;
	size_t nready;		    /* nodes done with it, at the next barrier */
	const char *const *waiting; /* nodes not there yet (the first few) */
	size_t nwaiting_shown, nwaiting;
};

/* "12s  step 3/8 hackbench-process-pipes groups=4 #2: running; about 20s left" */
void progress_line(char *buf, size_t len, const struct progress_in *in);
/* "1m05s" */
void progress_duration(char *buf, size_t len, int64_t ns);

#endif
