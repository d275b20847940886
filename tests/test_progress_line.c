// SPDX-License-Identifier: GPL-2.0-or-later
/* hostd's progress line (issue 15): the step and its sweep point, running
 * or waiting at the barrier for whom, elapsed time and what is left. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "progress_line.h"
#include "testlib.h"

#define S 1000000000LL

START_TEST(starting_and_finishing)
{
	char buf[256];
	const char *w[] = { "guest-1", "guest-2" };
	struct progress_in in = { .now_ns = 5 * S, .started_ns = 2 * S };

	progress_line(buf, sizeof(buf), &in);
	ck_assert_str_eq(buf, "3s  starting the guests");
	in.launched = true;
	in.waiting = w;
	in.nwaiting = in.nwaiting_shown = 2;
	progress_line(buf, sizeof(buf), &in);
	ck_assert_str_eq(buf, "3s  starting: waiting at the first barrier for guest-1, guest-2");
	in.step = 9;
	in.nsteps = 8;
	progress_line(buf, sizeof(buf), &in);
	ck_assert_str_eq(buf, "3s  finishing");
}
END_TEST

START_TEST(running_then_waiting_with_what_is_left)
{
	char buf[256];
	const char *w[] = { "guest-3", "guest-4", "guest-5", "guest-6" };
	/* step 3 of 8 released; steps 1 and 2 took 10 s from step 1's release:
	 * 5 s a step, 6 steps to go counting this one */
	struct progress_in in = { .now_ns = 112 * S,
				  .started_ns = 100 * S,
				  .first_release_ns = 102 * S,
				  .launched = true,
				  .step = 3,
				  .nsteps = 8,
				  .benchmark = "hackbench-process-pipes",
				  .variant = "groups=4",
				  .iteration = 2 };

	progress_line(buf, sizeof(buf), &in);
	ck_assert_str_eq(buf, "12s  step 3/8 hackbench-process-pipes groups=4 #2: running; "
			      "about 30s left");
	in.nready = 2;
	in.waiting = w;
	in.nwaiting_shown = 4;
	in.nwaiting = 6;
	in.variant = "";
	progress_line(buf, sizeof(buf), &in);
	ck_assert_str_eq(buf,
			 "12s  step 3/8 hackbench-process-pipes #2: 2 done, waiting at the "
			 "barrier for guest-3, guest-4, guest-5, guest-6 (+2 more); about 30s left");
	/* the first step has no past to estimate from */
	in.step = 1;
	progress_line(buf, sizeof(buf), &in);
	ck_assert_ptr_null(strstr(buf, "left"));
}
END_TEST

START_TEST(durations_and_short_buffers)
{
	char buf[16];
	struct progress_in in = { .now_ns = 4000 * S,
				  .launched = true,
				  .step = 3,
				  .nsteps = 8,
				  .benchmark = "a-benchmark-with-a-long-name",
				  .iteration = 1 };

	progress_duration(buf, sizeof(buf), 65 * S);
	ck_assert_str_eq(buf, "1m05s");
	progress_duration(buf, sizeof(buf), 3725 * S);
	ck_assert_str_eq(buf, "1h02m");
	progress_duration(buf, sizeof(buf), -S);
	ck_assert_str_eq(buf, "0s");
	progress_line(buf, sizeof(buf), &in);
	ck_assert_uint_eq(strlen(buf), sizeof(buf) - 1); /* cut, terminated */
	ck_assert(!strncmp(buf, "1h06m  step 3/8", sizeof(buf) - 1));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("progress-line");
	TCase *tc = tcase_create("line");

	tcase_add_test(tc, starting_and_finishing);
	tcase_add_test(tc, running_then_waiting_with_what_is_left);
	tcase_add_test(tc, durations_and_short_buffers);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
