// SPDX-License-Identifier: GPL-2.0-or-later
#include "rtprio.h"

#include <sched.h>

bool rtprio_boost(struct rtprio *r)
{
	if (r->priority <= 0 || r->denied)
		return false;
	struct sched_param sp = { .sched_priority = r->priority };
	if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0) {
		r->denied = true;
		return false;
	}
	return true;
}

void rtprio_restore(struct rtprio *r)
{
	(void)r;
	struct sched_param sp = { .sched_priority = 0 };
	sched_setscheduler(0, SCHED_OTHER, &sp);
}
