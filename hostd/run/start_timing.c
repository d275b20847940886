// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdbool.h>

#include "start_timing.h"

static int64_t sat_sub(int64_t a, int64_t b)
{
	int64_t d;
	return __builtin_sub_overflow(a, b, &d) ? (b > 0 ? INT64_MIN : INT64_MAX) : d;
}

int start_timing_check(const struct start_timing *t, int64_t go_sent_ns, int64_t bound_ns)
{
	bool agent = t->agent_go_ns != 0, child = t->child_go_ns != 0;

	if (!agent && !child)
		return t->runq_ns ? -ERANGE : -ENODATA;
	if (!agent || !child || bound_ns < 0)
		return -ERANGE;
	/* each instant of a guest is only known to within its clock's bound;
	 * the order between two of the same clock is exact */
	if (t->agent_go_ns < sat_sub(go_sent_ns, bound_ns) || t->child_go_ns < t->agent_go_ns ||
	    t->start_ns < t->child_go_ns)
		return -ERANGE;
	/* counted from the child's read of the go to its stamp */
	if (t->runq_ns < 0 || t->runq_ns > sat_sub(t->start_ns, t->child_go_ns))
		return -ERANGE;
	return 0;
}
