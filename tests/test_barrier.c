// SPDX-License-Identifier: GPL-2.0-or-later
/* The coordinator's rules, without any I/O; then its edges as the run meets
 * them, on a fake participant set. */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "barrier.h"
#include "testlib.h"

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

/* ---- edges, on a fake participant set --------------------------------
 *
 * What hostd's run does with each verdict (run.c: release, run_fail,
 * run_on_ready, the deadline), without processes or sockets: a release
 * sends go to every participant still in the run; a participant that
 * fails leaves the barrier, which may complete it; a ready for a step
 * released long ago is ignored, any other invalid ready fails its sender;
 * at the deadline everybody still awaited fails.  Instants come from
 * testlib's fake clock. */

#define FR_MAX 4
#define FR_STEPS 4

struct fake_run {
	struct barrier *b;
	size_t n;
	uint32_t nsteps;
	bool failed[FR_MAX];
	unsigned gos[FR_MAX][FR_STEPS + 2]; /* gos each received, per step */
	unsigned releases;		    /* barriers released, the end one too */
	unsigned stale;			    /* readies ignored as long released */
	bool finished, aborted;
};

static struct fake_run fr;

static void fr_start(size_t n, uint32_t nsteps)
{
	ck_assert_uint_le(n, FR_MAX);
	ck_assert_uint_le(nsteps, FR_STEPS);
	memset(&fr, 0, sizeof(fr));
	testlib_clock_set(0);
	fr.n = n;
	fr.nsteps = nsteps;
	fr.b = barrier_new(n, nsteps, 10 * SEC, 100 * SEC, 0);
}

static void fr_stop(void)
{
	barrier_free(fr.b);
	fr.b = NULL;
}

static void fr_release(void)
{
	uint32_t k = barrier_step(fr.b);

	fr.releases++;
	if (k > fr.nsteps) {
		fr.finished = true;
	} else {
		for (size_t i = 0; i < fr.n; i++)
			if (barrier_in_run(fr.b, i))
				fr.gos[i][k]++;
	}
	barrier_released(fr.b, testlib_clock_now());
}

static void fr_fail(size_t i)
{
	enum barrier_verdict v;

	if (fr.failed[i])
		return;
	fr.failed[i] = true;
	v = barrier_drop(fr.b, i);
	if (barrier_in_run_count(fr.b) == 0)
		fr.aborted = true;
	else if (v == BARRIER_RELEASE)
		fr_release();
}

/* Participant i says ready(step) now; returns the barrier's verdict after
 * acting on it as the run does. */
static enum barrier_verdict fr_ready(size_t i, uint32_t step)
{
	enum barrier_verdict v = barrier_ready(fr.b, i, step, testlib_clock_now());

	switch (v) {
	case BARRIER_RELEASE: fr_release(); break;
	case BARRIER_RESEND_GO: fr.gos[i][step]++; break;
	case BARRIER_INVALID:
		if (step && step < barrier_step(fr.b) && !fr.failed[i])
			fr.stale++;
		else
			fr_fail(i);
		break;
	case BARRIER_WAIT:
	case BARRIER_DUPLICATE: break;
	}
	return v;
}

/* Everybody in the run says ready(step), in index order. */
static void fr_all_ready(uint32_t step)
{
	for (size_t i = 0; i < fr.n; i++)
		if (barrier_in_run(fr.b, i))
			fr_ready(i, step);
}

/* The deadline timer: when it passed, everybody still awaited fails. */
static void fr_tick(void)
{
	size_t late[FR_MAX], nlate;

	if (testlib_clock_now() < barrier_deadline(fr.b))
		return;
	nlate = barrier_waiting_for(fr.b, late, FR_MAX);
	for (size_t j = 0; j < nlate; j++)
		fr_fail(late[j]);
}

/* gos[i][step] of each participant i, as a string: "1 0 1" */
static const char *fr_gos(uint32_t step)
{
	static char s[32];
	size_t len = 0;

	for (size_t i = 0; i < fr.n; i++)
		len += (size_t)snprintf(s + len, sizeof(s) - len, "%s%u", i ? " " : "",
					fr.gos[i][step]);
	return s;
}

/* Participant 1 of 3 lost in each state it can be in: 0 before its first
 * ready, 1 ready while the others are not all, 2 the last one missing, 3
 * running a step, 4 at the end barrier, 5 after the end. */
START_TEST(test_lost_at_each_state)
{
	fr_start(3, 2);
	switch (_i) {
	case 0:
		fr_fail(1);
		ck_assert_int_eq(fr_ready(0, 1), BARRIER_WAIT);
		ck_assert_int_eq(fr_ready(2, 1), BARRIER_RELEASE);
		break;
	case 1:
		ck_assert_int_eq(fr_ready(1, 1), BARRIER_WAIT);
		ck_assert_int_eq(fr_ready(0, 1), BARRIER_WAIT);
		fr_fail(1);
		ck_assert(!barrier_is_ready(fr.b, 1));
		ck_assert_uint_eq(fr.releases, 0);
		ck_assert_int_eq(fr_ready(2, 1), BARRIER_RELEASE);
		break;
	case 2:
		fr_ready(0, 1);
		fr_ready(2, 1);
		fr_fail(1); /* its leaving completes barrier 1 */
		break;
	case 3:
		fr_all_ready(1);
		ck_assert_str_eq(fr_gos(1), "1 1 1");
		fr_ready(0, 2);
		fr_ready(2, 2);
		fr_fail(1);
		ck_assert_str_eq(fr_gos(2), "1 0 1");
		break;
	case 4:
		fr_all_ready(1);
		fr_all_ready(2);
		ck_assert_int_eq(fr_ready(1, 3), BARRIER_WAIT); /* done with the last step */
		ck_assert_int_eq(fr_ready(0, 3), BARRIER_WAIT);
		fr_fail(1);
		ck_assert(!fr.finished);
		ck_assert_int_eq(fr_ready(2, 3), BARRIER_RELEASE);
		ck_assert(fr.finished);
		break;
	case 5:
		fr_all_ready(1);
		fr_all_ready(2);
		fr_all_ready(3);
		ck_assert(fr.finished);
		ck_assert_int_eq(barrier_drop(fr.b, 1), BARRIER_WAIT);
		ck_assert_uint_eq(fr.releases, 3);
		ck_assert_uint_eq(barrier_step(fr.b), 4);
		break;
	}
	if (_i <= 2) {
		ck_assert_msg(!strcmp(fr_gos(1), "1 0 1"), "state %d: gos for step 1 '%s'", _i,
			      fr_gos(1));
		ck_assert_uint_eq(barrier_step(fr.b), 2);
	}
	ck_assert(!fr.aborted);
	ck_assert(!barrier_in_run(fr.b, 1));
	ck_assert_uint_eq(barrier_in_run_count(fr.b), 2);
	fr_stop();
}
END_TEST

/* Everybody lost: nothing is released, the run is over. */
START_TEST(test_all_lost)
{
	fr_start(3, 2);
	fr_ready(0, 1);
	fr_fail(0);
	fr_fail(2);
	ck_assert(!fr.aborted);
	fr_fail(1);
	ck_assert(fr.aborted);
	ck_assert_uint_eq(fr.releases, 0);
	ck_assert_uint_eq(barrier_in_run_count(fr.b), 0);
	ck_assert_int_eq(barrier_drop(fr.b, 1), BARRIER_WAIT);
	fr_stop();
}
END_TEST

/* A late ready inside BARRIER_TIMEOUT of the first still releases; the
 * deadline is the first ready's, not moved by a duplicate; past it the
 * one awaited fails, which releases the others, and its ready arriving
 * then changes nothing. */
START_TEST(test_late_ready)
{
	fr_start(2, 3);
	fr_all_ready(1);
	testlib_clock_set(20 * SEC);
	fr_ready(0, 2);
	ck_assert_int_eq(barrier_deadline(fr.b), 30 * SEC);
	testlib_clock_set(30 * SEC - 1);
	fr_tick();
	ck_assert(!fr.failed[1]);
	ck_assert_int_eq(fr_ready(1, 2), BARRIER_RELEASE);
	ck_assert_str_eq(fr_gos(2), "1 1");

	testlib_clock_set(40 * SEC);
	fr_ready(0, 3);
	testlib_clock_set(45 * SEC);
	ck_assert_int_eq(fr_ready(0, 3), BARRIER_DUPLICATE);
	ck_assert_int_eq(barrier_deadline(fr.b), 50 * SEC);
	ck_assert_int_eq(barrier_ready_ns(fr.b, 0), 40 * SEC);
	testlib_clock_set(50 * SEC);
	fr_tick();
	ck_assert(fr.failed[1]);
	ck_assert_str_eq(fr_gos(3), "1 0");
	testlib_clock_set(50 * SEC + 1);
	ck_assert_int_eq(fr_ready(1, 3), BARRIER_INVALID);
	ck_assert_str_eq(fr_gos(3), "1 0");
	ck_assert_uint_eq(fr.stale, 0);
	ck_assert_uint_eq(barrier_in_run_count(fr.b), 1);
	fr_stop();
}
END_TEST

/* Nobody ready after a release: the step timeout is what bounds it; a
 * step that never ends fails everybody, and the run is over. */
START_TEST(test_step_never_ends)
{
	fr_start(2, 2);
	testlib_clock_set(5 * SEC);
	fr_all_ready(1);
	ck_assert_int_eq(barrier_deadline(fr.b), 105 * SEC);
	testlib_clock_set(104 * SEC);
	fr_tick();
	ck_assert(!fr.failed[0] && !fr.failed[1]);
	testlib_clock_set(105 * SEC);
	fr_tick();
	ck_assert(fr.failed[0] && fr.failed[1]);
	ck_assert(fr.aborted);
	ck_assert_uint_eq(fr.releases, 1);
	fr_stop();
}
END_TEST

/* A resync in the middle of a barrier: the agent re-announces hello and
 * the ready it is at.  Already counted: a duplicate, its first instant
 * kept.  For the step just released (its go was lost): that go again, the
 * open barrier untouched.  For the step before the one it is ready for
 * (it got that go): nothing. */
START_TEST(test_resync_mid_barrier)
{
	size_t w[FR_MAX];

	fr_start(3, 3);
	testlib_clock_set(1 * SEC);
	fr_ready(0, 1);
	testlib_clock_set(2 * SEC);
	fr_ready(1, 1);
	testlib_clock_set(3 * SEC);
	ck_assert_int_eq(fr_ready(0, 1), BARRIER_DUPLICATE);
	ck_assert_int_eq(barrier_ready_ns(fr.b, 0), 1 * SEC);
	ck_assert_int_eq(barrier_deadline(fr.b), 11 * SEC);
	ck_assert_uint_eq(barrier_waiting_for(fr.b, w, FR_MAX), 1);
	ck_assert_uint_eq(w[0], 2);
	ck_assert_int_eq(fr_ready(2, 1), BARRIER_RELEASE);
	ck_assert_str_eq(fr_gos(1), "1 1 1");

	/* participant 1 lost its go and says ready(1) again */
	testlib_clock_set(4 * SEC);
	ck_assert_int_eq(fr_ready(1, 1), BARRIER_RESEND_GO);
	ck_assert_str_eq(fr_gos(1), "1 2 1");
	ck_assert_uint_eq(barrier_step(fr.b), 2);
	ck_assert_uint_eq(barrier_waiting_for(fr.b, w, FR_MAX), 3);
	ck_assert_int_eq(barrier_deadline(fr.b), 3 * SEC + 100 * SEC);

	fr_ready(0, 2);
	ck_assert_int_eq(fr_ready(0, 2), BARRIER_DUPLICATE);
	/* participant 0 is ready for 2: a ready(1) from it asks for no go */
	ck_assert_int_eq(fr_ready(0, 1), BARRIER_DUPLICATE);
	ck_assert_str_eq(fr_gos(1), "1 2 1");
	fr_ready(1, 2);
	ck_assert_int_eq(fr_ready(2, 2), BARRIER_RELEASE);
	ck_assert_str_eq(fr_gos(2), "1 1 1");
	ck_assert_uint_eq(fr.stale, 0);
	ck_assert(!fr.failed[0] && !fr.failed[1] && !fr.failed[2]);
	fr_stop();
}
END_TEST

/* A ready for the wrong barrier: 0 one ahead of the open one (a lie: it
 * fails, which may release the others), 1 two behind (long released:
 * ignored, still in the run), 2 step 0, 3 past the end barrier, 4 the end
 * barrier again after it completed (there is no go to send). */
START_TEST(test_ready_for_wrong_barrier)
{
	fr_start(2, 3);
	switch (_i) {
	case 0:
		fr_ready(0, 1);
		ck_assert_int_eq(fr_ready(1, 2), BARRIER_INVALID);
		ck_assert(fr.failed[1]);
		ck_assert_str_eq(fr_gos(1), "1 0"); /* its failing released 0 */
		break;
	case 1:
		fr_all_ready(1);
		fr_all_ready(2);
		ck_assert_int_eq(fr_ready(1, 1), BARRIER_INVALID);
		ck_assert(!fr.failed[1]);
		ck_assert_uint_eq(fr.stale, 1);
		ck_assert_int_eq(fr_ready(0, 3), BARRIER_WAIT);
		ck_assert_int_eq(fr_ready(1, 3), BARRIER_RELEASE);
		break;
	case 2:
		ck_assert_int_eq(fr_ready(1, 0), BARRIER_INVALID);
		ck_assert(fr.failed[1]);
		break;
	case 3:
		ck_assert_int_eq(fr_ready(1, 5), BARRIER_INVALID);
		ck_assert(fr.failed[1]);
		ck_assert_int_eq(fr_ready(0, 1), BARRIER_RELEASE);
		break;
	case 4:
		for (uint32_t k = 1; k <= 4; k++)
			fr_all_ready(k);
		ck_assert(fr.finished);
		ck_assert_int_eq(fr_ready(1, 4), BARRIER_DUPLICATE);
		ck_assert_uint_eq(fr.gos[1][4], 0);
		ck_assert_uint_eq(fr.releases, 4);
		break;
	}
	fr_stop();
}
END_TEST

/* The wait for guests to boot restarts barrier 1's clock; the waiting list
 * says how many are awaited even when fewer fit. */
START_TEST(test_restart_clock_and_waiting_list)
{
	size_t w[1];

	fr_start(3, 1);
	testlib_clock_set(50 * SEC);
	barrier_restart_clock(fr.b, testlib_clock_now());
	ck_assert_int_eq(barrier_deadline(fr.b), 60 * SEC);
	fr_ready(1, 1);
	ck_assert_uint_eq(barrier_waiting_for(fr.b, w, 1), 2);
	ck_assert_uint_eq(w[0], 0);
	testlib_clock_set(60 * SEC);
	fr_tick();
	ck_assert(fr.failed[0] && !fr.failed[1] && fr.failed[2]);
	ck_assert_str_eq(fr_gos(1), "0 1 0");
	fr_stop();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("barrier");
	TCase *tc = tcase_create("rules");
	TCase *edges = tcase_create("edges");

	tcase_add_test(tc, test_release_when_all_ready);
	tcase_add_test(tc, test_duplicate_and_stale_ready);
	tcase_add_test(tc, test_drop_completes_barrier);
	tcase_add_test(tc, test_drop_of_ready_participant);
	tcase_add_test(tc, test_deadlines);
	tcase_add_test(tc, test_end_barrier);
	tcase_add_test(tc, test_no_timeout);
	suite_add_tcase(s, tc);
	tcase_add_loop_test(edges, test_lost_at_each_state, 0, 6);
	tcase_add_test(edges, test_all_lost);
	tcase_add_test(edges, test_late_ready);
	tcase_add_test(edges, test_step_never_ends);
	tcase_add_test(edges, test_resync_mid_barrier);
	tcase_add_loop_test(edges, test_ready_for_wrong_barrier, 0, 5);
	tcase_add_test(edges, test_restart_clock_and_waiting_list);
	suite_add_tcase(s, edges);
	return testlib_main(s);
}
