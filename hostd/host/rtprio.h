/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A short real-time boost for the release of a barrier.  Every go written
 * wakes an agent, and on a busy host a woken agent preempts the writer, so
 * the last go of N leaves late.  Under SCHED_FIFO the writer keeps its CPU
 * until all N are written (a few microseconds), then returns to
 * SCHED_OTHER.  Needs CAP_SYS_NICE; without it the release runs unboosted.
 */
#ifndef LOCKSTEP_RTPRIO_H
#define LOCKSTEP_RTPRIO_H

#include <stdbool.h>

struct rtprio {
	int priority; /* SCHED_FIFO priority, 0: never boost */
	bool denied;  /* the kernel said no once: do not ask again */
};

/* true when the boost is in effect */
bool rtprio_boost(struct rtprio *r);
void rtprio_restore(struct rtprio *r);

#endif
