/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How far ahead of its instant a scheduled release's first go is written:
 * learnt from what each barrier needed.  Pure: the caller passes what a
 * barrier showed; no I/O, no clock, no log.
 *
 * A barrier says two things: how late the latest go reached its node
 * after the instant (late, 0: none was), and, from the nodes' start
 * timing, how long after the first go's send the last node's step child
 * had its go (need, 0: unknown).  A late go grows the lead by its
 * lateness and a margin; a need above about two thirds of the lead grows
 * it to one and a half times that need and a margin, before any go is
 * late (issue 21: growing only after a late go, the lead was short
 * again and again while a busy machine's delivery times rose); otherwise
 * it shrinks by 1/RELEASE_LEAD_SHRINK a barrier.  The caller keeps it
 * above its floor.
 */
#ifndef HOSTD_RELEASE_LEAD_H
#define HOSTD_RELEASE_LEAD_H

#include <stdint.h>

#define RELEASE_LEAD_MARGIN_NS (50 * 1000LL)
#define RELEASE_LEAD_SHRINK 32
#define RELEASE_LEAD_MAX_NS (100 * 1000 * 1000LL)

/* The lead after a barrier that had lead_ns; late_ns and need_ns as above
 * (negative reads as 0).  Never more than RELEASE_LEAD_MAX_NS. */
int64_t release_lead_learn(int64_t lead_ns, int64_t late_ns, int64_t need_ns);

#endif
