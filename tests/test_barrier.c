/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The coordinator's rules, without any I/O. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "barrier.h"

#define SEC 1000000000LL

START_TEST(test_release_when_all_ready)
{
	struct barrier *b = barrier_new(3, 2, 10 * SEC, 100 * SEC, 0);
	ck_assert_uint_eq(barrier_step(b), 1);
	ck_assert_int_eq(barrier_ready(b, 0, 1, 1), BARRIER_WAIT);
	ck_assert_int_eq(barrier_ready(b, 2, 1, 2), BARRIER_WAIT);
	size_t w[3];
	ck_assert_uint_eq(barrier_waiting_for(b, w, 3), 1);
	ck_assert_uint_eq(w[0], 1);
	ck_assert_int_eq(barrier_ready(b, 1, 1, 5), BARRIER_RELEASE);
	ck_assert_int_eq(barrier_last_ready_ns(b), 5);
	ck_assert_int_eq(barrier_ready_ns(b, 2), 2);
	barrier_released(b, 6);
	ck_assert_uint_eq(barrier_step(b), 2);
	ck_assert(!barrier_is_ready(b, 0));
	barrier_free(b);
}
END_TEST

START_TEST(test_duplicate_and_stale_ready)
{
	struct barrier *b = barrier_new(2, 3, 10 * SEC, 100 * SEC, 0);
	ck_assert_int_eq(barrier_ready(b, 0, 1, 1), BARRIER_WAIT);
	ck_assert_int_eq(barrier_ready(b, 0, 1, 2), BARRIER_DUPLICATE);
	ck_assert_int_eq(barrier_ready_ns(b, 0), 1); /* the first ready counts */
	ck_assert_int_eq(barrier_ready(b, 1, 1, 3), BARRIER_RELEASE);
	barrier_released(b, 4);
	/* a ready for the step just released: its go was lost */
	ck_assert_int_eq(barrier_ready(b, 1, 1, 5), BARRIER_RESEND_GO);
	/* a ready from the past or the future is a protocol violation */
	ck_assert_int_eq(barrier_ready(b, 1, 3, 5), BARRIER_INVALID);
	ck_assert_int_eq(barrier_ready(b, 1, 0, 5), BARRIER_INVALID);
	barrier_free(b);
}
END_TEST

START_TEST(test_drop_completes_barrier)
{
	struct barrier *b = barrier_new(3, 1, 10 * SEC, 100 * SEC, 0);
	ck_assert_int_eq(barrier_ready(b, 0, 1, 1), BARRIER_WAIT);
	ck_assert_int_eq(barrier_ready(b, 1, 1, 1), BARRIER_WAIT);
	ck_assert_int_eq(barrier_drop(b, 2), BARRIER_RELEASE);
	ck_assert_uint_eq(barrier_in_run_count(b), 2);
	ck_assert(!barrier_in_run(b, 2));
	/* a dropped participant cannot come back */
	ck_assert_int_eq(barrier_ready(b, 2, 1, 2), BARRIER_INVALID);
	ck_assert_int_eq(barrier_drop(b, 2), BARRIER_WAIT);
	barrier_free(b);
}
END_TEST

START_TEST(test_drop_of_ready_participant)
{
	struct barrier *b = barrier_new(3, 1, 10 * SEC, 100 * SEC, 0);
	ck_assert_int_eq(barrier_ready(b, 0, 1, 1), BARRIER_WAIT);
	/* the only ready one leaves: nobody is ready, nothing to release */
	ck_assert_int_eq(barrier_drop(b, 0), BARRIER_WAIT);
	ck_assert_int_eq(barrier_ready(b, 1, 1, 2), BARRIER_WAIT);
	ck_assert_int_eq(barrier_ready(b, 2, 1, 3), BARRIER_RELEASE);
	barrier_free(b);
}
END_TEST

START_TEST(test_deadlines)
{
	struct barrier *b = barrier_new(2, 2, 10 * SEC, 100 * SEC, 1000);
	/* barrier 1: bounded from the start */
	ck_assert_int_eq(barrier_deadline(b), 1000 + 10 * SEC);
	barrier_ready(b, 0, 1, 5 * SEC);
	/* the first ready arms the barrier timeout */
	ck_assert_int_eq(barrier_deadline(b), 15 * SEC);
	barrier_ready(b, 1, 1, 6 * SEC);
	barrier_released(b, 7 * SEC);
	/* nobody ready: the step timeout bounds the step itself */
	ck_assert_int_eq(barrier_deadline(b), 107 * SEC);
	barrier_ready(b, 1, 2, 20 * SEC);
	ck_assert_int_eq(barrier_deadline(b), 30 * SEC);
	size_t w[2];
	ck_assert_uint_eq(barrier_waiting_for(b, w, 2), 1);
	ck_assert_uint_eq(w[0], 0);
	barrier_free(b);
}
END_TEST

START_TEST(test_end_barrier)
{
	struct barrier *b = barrier_new(2, 1, 10 * SEC, 100 * SEC, 0);
	barrier_ready(b, 0, 1, 1);
	ck_assert_int_eq(barrier_ready(b, 1, 1, 1), BARRIER_RELEASE);
	barrier_released(b, 2);
	ck_assert_uint_eq(barrier_step(b), 2); /* nsteps + 1: the end */
	ck_assert_int_eq(barrier_ready(b, 0, 2, 3), BARRIER_WAIT);
	ck_assert_int_eq(barrier_ready(b, 1, 2, 4), BARRIER_RELEASE);
	barrier_released(b, 5);
	ck_assert_uint_eq(barrier_step(b), 3);
	/* nothing after the end barrier */
	ck_assert_int_eq(barrier_ready(b, 0, 3, 6), BARRIER_INVALID);
	barrier_free(b);
}
END_TEST

START_TEST(test_no_timeout)
{
	struct barrier *b = barrier_new(1, 1, 0, 0, 0);
	ck_assert_int_eq(barrier_deadline(b), INT64_MAX);
	barrier_free(b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("barrier");
	TCase *tc = tcase_create("rules");
	tcase_add_test(tc, test_release_when_all_ready);
	tcase_add_test(tc, test_duplicate_and_stale_ready);
	tcase_add_test(tc, test_drop_completes_barrier);
	tcase_add_test(tc, test_drop_of_ready_participant);
	tcase_add_test(tc, test_deadlines);
	tcase_add_test(tc, test_end_barrier);
	tcase_add_test(tc, test_no_timeout);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
