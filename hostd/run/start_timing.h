/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How a node's start came about, from the optional fields of its agent's
 * `started` (docs/protocol.md): when the agent read the go, when the
 * step's child read it from the agent, and how long the child queued for
 * a CPU on the way.  Untrusted: an agent may send any numbers, so only an
 * order that can be true is kept.  Pure: the caller converts the instants
 * to the host's clock and passes what it knows; no I/O, no clock, no log.
 */
#ifndef HOSTD_START_TIMING_H
#define HOSTD_START_TIMING_H

#include <stdint.h>

/* On the host's clock (runq_ns a duration). */
struct start_timing {
	int64_t agent_go_ns; /* the agent read the go */
	int64_t child_go_ns; /* the step's child read it from the agent */
	int64_t start_ns;    /* the child's start stamp */
	int64_t runq_ns;     /* the child's time runnable but not running from child_go
			       * to its stamp */
};

/*
 * Checks t, whose instants the caller converted from the agent's clock,
 * against the go's first send (go_sent_ns) and the node's clock bound
 * (bound_ns, 0 for a clock shared with the host).  0: believable;
 * -ENODATA: the agent sent none (an older agent: agent_go_ns and
 * child_go_ns both 0); -ERANGE: an order that cannot be true (the agent
 * read the go before it was sent, the child before the agent, the start
 * before the child; more time queued between the child's read and the
 * start than passed; one instant without the other).
 */
int start_timing_check(const struct start_timing *t, int64_t go_sent_ns, int64_t bound_ns);

#endif
