// SPDX-License-Identifier: GPL-2.0-or-later
#include "cluster_roster.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

void roster_init(struct roster *r, size_t n)
{
	assert(n >= 1 && n <= CLUSTER_MEMBERS_MAX);
	memset(r, 0, sizeof(*r));
	r->n = n;
	roster_step(r);
}

void roster_step(struct roster *r)
{
	memset(r->mark, 0, sizeof(r->mark));
	for (size_t i = 0; i < CLUSTER_MEMBERS_MAX; i++)
		r->rtt_ns[i] = -1;
}

static bool missing(const struct roster *r, enum roster_mark m, size_t i)
{
	return !r->dropped[i] && !r->mark[m][i];
}

bool roster_all(const struct roster *r, enum roster_mark m)
{
	for (size_t i = 1; i < r->n; i++)
		if (missing(r, m, i))
			return false;
	return true;
}

size_t roster_missing(const struct roster *r, enum roster_mark m, const char *const *names,
		      char *buf, size_t size)
{
	size_t len = 0, count = 0;
	if (size)
		buf[0] = 0;
	for (size_t i = 1; i < r->n; i++) {
		if (!missing(r, m, i))
			continue;
		count++;
		if (len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%s",
						count > 1 ? ", " : "", names[i]);
	}
	return count;
}

size_t roster_drop_missing(struct roster *r, enum roster_mark m)
{
	size_t count = 0;
	for (size_t i = 1; i < r->n; i++) {
		if (missing(r, m, i)) {
			r->dropped[i] = true;
			count++;
		}
	}
	return count;
}

int64_t roster_lead(const struct roster *r, int64_t own_rtt_ns, uint32_t step)
{
	int64_t slowest = own_rtt_ns > 0 ? own_rtt_ns : 0;
	for (size_t i = 1; i < r->n; i++)
		if (!r->dropped[i] && r->rtt_ns[i] > slowest)
			slowest = r->rtt_ns[i];
	if (slowest > CLUSTER_RTT_MAX_NS)
		slowest = CLUSTER_RTT_MAX_NS;
	int64_t lead = 2 * slowest + CLUSTER_MARGIN_NS;
	return step == 1 ? lead + CLUSTER_FIRST_LEAD_NS : lead;
}
