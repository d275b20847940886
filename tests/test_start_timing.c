// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * start_timing: what hostd believes of an agent's account of its start
 * (issue 21).  Every order that cannot be true is refused, an older agent's
 * silence is told apart from a lie, and extremes do not overflow.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>

#include "start_timing.h"
#include "testlib.h"

/* go sent at 1000; the agent read it at 1100, its child at 1150, started
 * at 1300, 60 ns queued on the way. */
static struct start_timing honest(void)
{
	return (struct start_timing){
		.agent_go_ns = 1100, .child_go_ns = 1150, .start_ns = 1300, .runq_ns = 60
	};
}

START_TEST(test_honest_kept)
{
	struct start_timing t = honest();
	ck_assert_int_eq(start_timing_check(&t, 1000, 0), 0);
	/* equal instants are possible: a coarse clock */
	t.agent_go_ns = t.child_go_ns = t.start_ns;
	t.runq_ns = 0;
	ck_assert_int_eq(start_timing_check(&t, 1000, 0), 0);
	/* all of the time since the child's read spent queued */
	t = honest();
	t.runq_ns = 150;
	ck_assert_int_eq(start_timing_check(&t, 1000, 0), 0);
}
END_TEST

START_TEST(test_older_agent)
{
	struct start_timing t = { .start_ns = 1300 };
	ck_assert_int_eq(start_timing_check(&t, 1000, 0), -ENODATA);
	/* a queue time alone is not silence */
	t.runq_ns = 5;
	ck_assert_int_eq(start_timing_check(&t, 1000, 0), -ERANGE);
}
END_TEST

/* Each way an account cannot be true, one field at a time. */
START_TEST(test_impossible_refused)
{
	struct start_timing t;

	t = honest(), t.agent_go_ns = 999; /* before the go left */
	ck_assert_int_eq(start_timing_check(&t, 1000, 0), -ERANGE);
	t = honest(), t.child_go_ns = 1099; /* the child before the agent */
	ck_assert_int_eq(start_timing_check(&t, 1000, 0), -ERANGE);
	t = honest(), t.start_ns = 1149; /* started before its child had the go */
	ck_assert_int_eq(start_timing_check(&t, 1000, 0), -ERANGE);
	t = honest(), t.runq_ns = 151; /* queued longer than passed from the child's read */
	ck_assert_int_eq(start_timing_check(&t, 1000, 0), -ERANGE);
	t = honest(), t.runq_ns = -1;
	ck_assert_int_eq(start_timing_check(&t, 1000, 0), -ERANGE);
	t = honest(), t.agent_go_ns = 0; /* one instant without the other */
	ck_assert_int_eq(start_timing_check(&t, 1000, 0), -ERANGE);
	t = honest(), t.child_go_ns = 0;
	ck_assert_int_eq(start_timing_check(&t, 1000, 0), -ERANGE);
	t = honest();
	ck_assert_int_eq(start_timing_check(&t, 1000, -1), -ERANGE);
}
END_TEST

/* A guest's instants are known to within its clock's bound: an agent read
 * up to the bound before the send is believed, not one past it. */
START_TEST(test_clock_bound)
{
	struct start_timing t = honest();
	t.agent_go_ns = 950;
	ck_assert_int_eq(start_timing_check(&t, 1000, 0), -ERANGE);
	ck_assert_int_eq(start_timing_check(&t, 1000, 50), 0);
	ck_assert_int_eq(start_timing_check(&t, 1000, 49), -ERANGE);
}
END_TEST

START_TEST(test_extremes)
{
	struct start_timing t = { .agent_go_ns = INT64_MIN,
				  .child_go_ns = INT64_MIN,
				  .start_ns = INT64_MAX,
				  .runq_ns = INT64_MAX };
	/* the send minus a huge bound saturates instead of wrapping (wrapped,
	 * it would lie far after the agent's read), and so does the span */
	ck_assert_int_eq(start_timing_check(&t, INT64_MIN + 10, INT64_MAX), 0);
	/* one nanosecond less span than queued */
	t.agent_go_ns = t.child_go_ns = 1;
	ck_assert_int_eq(start_timing_check(&t, INT64_MIN + 10, INT64_MAX), -ERANGE);
	t.runq_ns = INT64_MAX - 1;
	ck_assert_int_eq(start_timing_check(&t, INT64_MIN + 10, INT64_MAX), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("start_timing");
	TCase *tc = tcase_create("start_timing");

	tcase_add_test(tc, test_honest_kept);
	tcase_add_test(tc, test_older_agent);
	tcase_add_test(tc, test_impossible_refused);
	tcase_add_test(tc, test_clock_bound);
	tcase_add_test(tc, test_extremes);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
