/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "clock_offset.h"

bool clock_offset_add(struct clock_offset *c, int64_t t1, int64_t t2, int64_t t3, int64_t t4)
{
	if (t4 < t1 || t3 < t2)
		return false;
	/* halves first: the sums of two instants could overflow */
	int64_t delay = (t4 - t1) - (t3 - t2);
	if (delay < 0)
		return false; /* the guest claims it held the ping longer than the trip */
	int64_t offset = (t2 - t1) / 2 + (t3 - t4) / 2;
	int64_t bound = (delay + 1) / 2;
	if (c->samples == 0 || bound < c->bound_ns) {
		c->offset_ns = offset;
		c->bound_ns = bound;
	}
	c->samples++;
	return true;
}

int64_t clock_offset_to_host(const struct clock_offset *c, int64_t guest_ns)
{
	return guest_ns - c->offset_ns;
}
