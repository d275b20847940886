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
 * Whatever the asymmetry of the two directions, the true offset of one
 * exchange lies within delay/2 of its estimate, so exchanges with a small
 * delay are the ones worth believing.  Clocks also drift apart (a TCG
 * guest's clock is emulated), so one exchange is not enough for a whole
 * run: the last CLOCK_OFFSET_WINDOW exchanges are kept, the good ones (delay
 * close to the smallest) are fitted with a line over time, and an instant is
 * converted with the line at that instant.  The bound is the good
 * exchanges' delay/2 plus how far they stray from the line.  Pure
 * arithmetic.
 */
#ifndef LOCKSTEP_CLOCK_OFFSET_H
#define LOCKSTEP_CLOCK_OFFSET_H

#include <stdbool.h>
#include <stdint.h>

#define CLOCK_OFFSET_WINDOW 64

struct clock_exchange {
	int64_t at_ns;     /* host time of the exchange: (t1 + t4) / 2 */
	int64_t offset_ns; /* guest - host */
	int64_t delay_ns;
};

struct clock_offset {
	unsigned samples;                /* exchanges added, ever */
	unsigned count, next;            /* ring of the last ones */
	struct clock_exchange ring[CLOCK_OFFSET_WINDOW];
	int64_t max_delay_ns;            /* the largest delay in the ring */

	/* the current estimate (clock_offset_add refreshes it) */
	int64_t offset_ns;               /* guest - host at ref_ns */
	int64_t ref_ns;                  /* host time the estimate is for */
	double drift;                    /* d(offset)/d(host time), e.g. 1e-6 = 1 ppm */
	int64_t bound_ns;                /* |true - estimate| <= bound near ref_ns */
};

/* Adds one exchange; false (and nothing kept) when its timestamps cannot
 * be right (t4 before t1, t3 before t2, a negative delay). */
bool clock_offset_add(struct clock_offset *c, int64_t t1, int64_t t2, int64_t t3, int64_t t4);
/* guest - host at host instant host_ns (the fitted line there). */
int64_t clock_offset_at(const struct clock_offset *c, int64_t host_ns);
/* A guest instant on the host's clock, and a host instant on the guest's. */
int64_t clock_offset_to_host(const struct clock_offset *c, int64_t guest_ns);
int64_t clock_offset_to_guest(const struct clock_offset *c, int64_t host_ns);

#endif
