// SPDX-License-Identifier: GPL-2.0-or-later
#include "release_lead.h"

int64_t release_lead_learn(int64_t lead_ns, int64_t late_ns, int64_t need_ns)
{
	/* each term under the cap, so that no sum below overflows */
	late_ns = late_ns < 0 ? 0 : late_ns < RELEASE_LEAD_MAX_NS ? late_ns : RELEASE_LEAD_MAX_NS;
	need_ns = need_ns < 0 ? 0 : need_ns < RELEASE_LEAD_MAX_NS ? need_ns : RELEASE_LEAD_MAX_NS;
	lead_ns = lead_ns < 0 ? 0 : lead_ns < RELEASE_LEAD_MAX_NS ? lead_ns : RELEASE_LEAD_MAX_NS;

	int64_t want = need_ns + need_ns / 2 + RELEASE_LEAD_MARGIN_NS;
	if (late_ns > 0)
		lead_ns += late_ns + RELEASE_LEAD_MARGIN_NS;
	if (need_ns > 0 && want > lead_ns)
		lead_ns = want;
	else if (late_ns == 0)
		lead_ns -= lead_ns / RELEASE_LEAD_SHRINK;
	return lead_ns < RELEASE_LEAD_MAX_NS ? lead_ns : RELEASE_LEAD_MAX_NS;
}
