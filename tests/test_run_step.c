// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * run_step.h: where a participant is in its steps, without an agent: a
 * message about the wrong step, started twice, results over the limit or
 * said twice, raw output up to its limit, the parser's buffer cut, and the
 * budget of agent error text with what is held back and when it is said.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_step.h"
#include "testlib.h"

START_TEST(test_release_started_done)
{
	struct part_step *s = part_step_new();
	ck_assert_uint_eq(part_step_released(s), 0);
	ck_assert_uint_eq(part_step_running(s), 0);
	ck_assert(!part_step_matches(s, 0)); /* nothing before the first release */
	part_step_release(s, 1);
	ck_assert_uint_eq(part_step_running(s), 1);
	ck_assert(part_step_matches(s, 1));
	ck_assert(!part_step_matches(s, 2));
	ck_assert(!part_step_has_started(s));
	ck_assert_int_eq(part_step_started(s), 0);
	ck_assert(part_step_has_started(s));
	ck_assert_int_eq(part_step_started(s), -EALREADY);
	part_step_done(s);
	ck_assert_uint_eq(part_step_running(s), 0);
	ck_assert_uint_eq(part_step_released(s), 1);
	ck_assert(!part_step_matches(s, 1)); /* nothing about a step after its done */
	ck_assert_uint_eq(part_step_done_count(s), 1);
	/* the next step starts afresh */
	part_step_release(s, 2);
	ck_assert(!part_step_has_started(s));
	ck_assert_int_eq(part_step_started(s), 0);
	/* cut short by the end of the run: not a finished step */
	part_step_cut(s);
	ck_assert_uint_eq(part_step_running(s), 0);
	ck_assert_uint_eq(part_step_done_count(s), 1);
	part_step_free(s);
}
END_TEST

START_TEST(test_results_limit_and_names)
{
	struct part_step *s = part_step_new();
	char name[32];
	part_step_release(s, 3);
	ck_assert_int_eq(part_step_count_result(s), 0);
	ck_assert_int_eq(part_step_result_name(s, "ops"), 0);
	ck_assert_int_eq(part_step_count_result(s), 0);
	ck_assert_int_eq(part_step_result_name(s, "ops"), -EEXIST);
	for (int i = 2; i < RUN_RESULTS_PER_STEP_MAX; i++) {
		snprintf(name, sizeof(name), "m%d", i);
		ck_assert_int_eq(part_step_count_result(s), 0);
		ck_assert_int_eq(part_step_result_name(s, name), 0);
	}
	ck_assert_int_eq(part_step_count_result(s), -E2BIG);
	/* a new step has room and forgets the names */
	part_step_release(s, 4);
	ck_assert_int_eq(part_step_count_result(s), 0);
	ck_assert_int_eq(part_step_result_name(s, "ops"), 0);
	part_step_free(s);
}
END_TEST

START_TEST(test_output_limit)
{
	struct part_step *s = part_step_new();
	part_step_release(s, 1);
	ck_assert_int_eq(part_step_output(s, RUN_OUTPUT_PER_STEP_MAX - 10), PART_STEP_OUTPUT_KEEP);
	ck_assert_int_eq(part_step_output(s, 100), PART_STEP_OUTPUT_LAST);
	ck_assert_int_eq(part_step_output(s, 1), PART_STEP_OUTPUT_DROP);
	part_step_release(s, 2);
	ck_assert_int_eq(part_step_output(s, 1), PART_STEP_OUTPUT_KEEP);
	part_step_free(s);
}
END_TEST

START_TEST(test_parser_buffer)
{
	struct part_step *s = part_step_new();
	size_t len;
	bool cut;
	ck_assert_str_eq(part_step_buffered(s, &len, &cut), "");
	ck_assert_uint_eq(len, 0);
	part_step_buffer(s, "12 ops", 6);
	part_step_buffer(s, "/s\n", 3);
	const char *b = part_step_buffered(s, &len, &cut);
	ck_assert_uint_eq(len, 9);
	ck_assert(!cut);
	ck_assert_int_eq(memcmp(b, "12 ops/s\n", 9), 0);
	char *big = calloc(1, RUN_PARSE_INPUT_MAX);
	ck_assert_ptr_nonnull(big);
	part_step_buffer(s, big, RUN_PARSE_INPUT_MAX);
	ck_assert(part_step_buffer_cut(s));
	part_step_buffered(s, &len, &cut);
	ck_assert_uint_eq(len, 9); /* what it had */
	ck_assert(cut);
	part_step_buffer(s, "x", 1); /* nothing more once cut */
	part_step_buffered(s, &len, &cut);
	ck_assert_uint_eq(len, 9);
	part_step_buffer_drop(s);
	ck_assert(!part_step_buffer_cut(s));
	part_step_buffered(s, &len, &cut);
	ck_assert_uint_eq(len, 0);
	free(big);
	part_step_free(s);
}
END_TEST

/* Over the step's budget the text is held back and said, in one line, at
 * the next step's first text; over the run's budget, only at the end. */
START_TEST(test_text_budget)
{
	struct part_step *s = part_step_new();
	struct part_step_held held;
	const size_t chunk = 1024;
	for (size_t i = 0; i < RUN_GUEST_TEXT_PER_STEP_MAX / chunk; i++) {
		ck_assert(part_step_text(s, 1, chunk, &held));
		ck_assert_uint_eq(held.bytes, 0);
	}
	ck_assert(!part_step_text(s, 1, 10, &held));
	ck_assert(!part_step_text(s, 1, 20, &held));
	ck_assert_uint_eq(held.bytes, 0); /* held, not said yet */
	ck_assert(part_step_text(s, 2, 5, &held));
	ck_assert_uint_eq(held.bytes, 30);
	ck_assert_uint_eq(held.step, 1);
	/* said once */
	ck_assert(part_step_text(s, 3, 5, &held));
	ck_assert_uint_eq(held.bytes, 0);
	held = part_step_text_final(s);
	ck_assert_uint_eq(held.bytes, 0);
	part_step_free(s);
}
END_TEST

START_TEST(test_text_run_budget_spent)
{
	struct part_step *s = part_step_new();
	struct part_step_held held;
	const size_t chunk = RUN_GUEST_TEXT_PER_STEP_MAX;
	uint32_t step = 1;
	for (size_t sent = 0; sent < RUN_GUEST_TEXT_PER_RUN_MAX; sent += chunk)
		ck_assert(part_step_text(s, step++, chunk, &held));
	ck_assert(!part_step_text(s, step, 7, &held));
	/* spent: a new step says nothing, and shows nothing */
	ck_assert(!part_step_text(s, step + 1, 1, &held));
	ck_assert_uint_eq(held.bytes, 0);
	held = part_step_text_final(s);
	ck_assert_uint_eq(held.bytes, 8);
	ck_assert_uint_eq(held.step, step);
	held = part_step_text_final(s);
	ck_assert_uint_eq(held.bytes, 0);
	part_step_free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("run_step");
	TCase *tc = tcase_create("step");
	tcase_add_test(tc, test_release_started_done);
	tcase_add_test(tc, test_results_limit_and_names);
	tcase_add_test(tc, test_output_limit);
	tcase_add_test(tc, test_parser_buffer);
	tcase_add_test(tc, test_text_budget);
	tcase_add_test(tc, test_text_run_budget_spent);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
