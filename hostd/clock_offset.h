/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A guest's clock against the host's, from ping/pong exchanges over its
 * channel (Cristian's method, four timestamps as NTP takes them):
 *
 *   t1 host sends ping, t2 guest receives it, t3 guest sends pong,
 *   t4 host receives pong.
 *   offset = ((t2 - t1) + (t3 - t4)) / 2      (guest clock - host clock)
 *   delay  = (t4 - t1) - (t3 - t2)            (time on the wire, both ways)
 *
 * Whatever the asymmetry of the two directions, the true offset lies within
 * delay/2 of the estimate; the exchange with the smallest delay gives the
 * tightest bound, so that is the one kept.  Pure arithmetic.
 */
#ifndef LOCKSTEP_CLOCK_OFFSET_H
#define LOCKSTEP_CLOCK_OFFSET_H

#include <stdbool.h>
#include <stdint.h>

struct clock_offset {
	unsigned samples;
	int64_t offset_ns; /* guest - host, of the best exchange */
	int64_t bound_ns;  /* |true offset - offset_ns| <= bound_ns */
};

/* Adds one exchange; false (and nothing kept) when its timestamps cannot
 * be right (t4 before t1, t3 before t2, a negative delay). */
bool clock_offset_add(struct clock_offset *c, int64_t t1, int64_t t2, int64_t t3, int64_t t4);
/* A guest instant on the host's clock. */
int64_t clock_offset_to_host(const struct clock_offset *c, int64_t guest_ns);

#endif
