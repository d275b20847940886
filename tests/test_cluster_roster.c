// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cluster_roster: the leader's view of its followers at one step: who is
 * missing, who is dropped for good, and the release lead from the round
 * trips of those still in.
 */
#include <check.h>

#include "cluster_roster.h"
#include "testlib.h"

static const char *const names[] = { "lead", "b", "c", "d" };

START_TEST(test_all_and_missing)
{
	struct roster r;
	char buf[64];
	roster_init(&r, 4);
	ck_assert(!roster_all(&r, ROSTER_ONLINE));
	ck_assert_uint_eq(roster_missing(&r, ROSTER_ONLINE, names, buf, sizeof(buf)), 3);
	ck_assert_str_eq(buf, "b, c, d");
	r.mark[ROSTER_ONLINE][1] = r.mark[ROSTER_ONLINE][3] = true;
	ck_assert_uint_eq(roster_missing(&r, ROSTER_ONLINE, names, buf, sizeof(buf)), 1);
	ck_assert_str_eq(buf, "c");
	r.mark[ROSTER_ONLINE][2] = true;
	ck_assert(roster_all(&r, ROSTER_ONLINE));
	/* the leader's own mark is never asked for */
	ck_assert(!r.mark[ROSTER_ONLINE][0]);
	ck_assert(!roster_all(&r, ROSTER_READY));
	/* a cut list still counts every one */
	ck_assert_uint_eq(roster_missing(&r, ROSTER_READY, names, buf, 4), 3);
	ck_assert_str_eq(buf, "b, ");
}
END_TEST

START_TEST(test_dropped_stay_dropped)
{
	struct roster r;
	char buf[64];
	roster_init(&r, 4);
	r.mark[ROSTER_READY][1] = true;
	ck_assert_uint_eq(roster_drop_missing(&r, ROSTER_READY), 2);
	ck_assert(roster_all(&r, ROSTER_READY));
	roster_step(&r);
	/* the next step waits only for b */
	ck_assert(!roster_all(&r, ROSTER_ONLINE));
	ck_assert_uint_eq(roster_missing(&r, ROSTER_ONLINE, names, buf, sizeof(buf)), 1);
	ck_assert_str_eq(buf, "b");
	r.mark[ROSTER_ONLINE][1] = true;
	ck_assert(roster_all(&r, ROSTER_ONLINE));
	/* a leader alone: nobody to wait for */
	roster_init(&r, 1);
	ck_assert(roster_all(&r, ROSTER_GONE));
}
END_TEST

START_TEST(test_lead_from_slowest_still_in)
{
	struct roster r;
	roster_init(&r, 3);
	/* nobody told: the leader's own */
	ck_assert_int_eq(roster_lead(&r, 100000, 2), 200000 + CLUSTER_MARGIN_NS);
	r.rtt_ns[1] = 400000;
	r.rtt_ns[2] = 900000;
	ck_assert_int_eq(roster_lead(&r, 100000, 2), 1800000 + CLUSTER_MARGIN_NS);
	ck_assert_int_eq(roster_lead(&r, 100000, 1),
			 1800000 + CLUSTER_MARGIN_NS + CLUSTER_FIRST_LEAD_NS);
	/* a dropped member's round trip no longer counts */
	r.dropped[2] = true;
	ck_assert_int_eq(roster_lead(&r, 100000, 2), 800000 + CLUSTER_MARGIN_NS);
	/* a stall's round trip counts as CLUSTER_RTT_MAX_NS */
	r.rtt_ns[1] = 3500000000LL;
	ck_assert_int_eq(roster_lead(&r, 100000, 2), 2 * CLUSTER_RTT_MAX_NS + CLUSTER_MARGIN_NS);
	r.rtt_ns[1] = 400000;
	ck_assert_int_eq(roster_lead(&r, 4000000000LL, 2), 2 * CLUSTER_RTT_MAX_NS + CLUSTER_MARGIN_NS);
	/* forgotten at the next step */
	roster_step(&r);
	ck_assert_int_eq(r.rtt_ns[1], -1);
	ck_assert_int_eq(roster_lead(&r, -1, 3), CLUSTER_MARGIN_NS);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("cluster_roster");
	TCase *tc = tcase_create("roster");
	tcase_add_test(tc, test_all_and_missing);
	tcase_add_test(tc, test_dropped_stay_dropped);
	tcase_add_test(tc, test_lead_from_slowest_still_in);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testlib_main(suite());
}
