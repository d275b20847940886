// SPDX-License-Identifier: GPL-2.0-or-later
/* The go watch's bound, looks and verdicts, without any I/O. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "go_watch.h"
#include "testlib.h"

#define MS 1000000LL

/* Releases step at from with every participant watched. */
static int64_t release_all(struct go_watch *w, size_t n, uint32_t step, int64_t from)
{
	int64_t due = go_watch_release(w, step, from);
	for (size_t i = 0; i < n; i++)
		go_watch_expect(w, i);
	return due;
}

START_TEST(test_bound_before_any_start_is_the_ceiling)
{
	struct go_watch *w = go_watch_new(2);
	ck_assert_int_eq(release_all(w, 2, 1, 1000 * MS), 1000 * MS + GO_WATCH_MAX_NS);
	ck_assert_int_eq(go_watch_bound_ns(w), GO_WATCH_MAX_NS);
	go_watch_free(w);
}
END_TEST

START_TEST(test_bound_learnt_from_starts)
{
	struct go_watch *w = go_watch_new(2);
	int64_t t = 1000 * MS;
	release_all(w, 2, 1, t);
	/* fast starts: the floor */
	ck_assert_int_eq(go_watch_started(w, 0, t + 10000, t + 50000), GO_WATCH_IN_TIME);
	ck_assert_int_eq(go_watch_started(w, 1, t + 20000, t + 90000), GO_WATCH_IN_TIME);
	t += 100 * MS;
	ck_assert_int_eq(release_all(w, 2, 2, t), t + GO_WATCH_MIN_NS);
	/* a 5 ms start: 8 times that */
	go_watch_started(w, 0, t + MS, t + 5 * MS);
	go_watch_started(w, 1, t + MS, t + MS);
	t += 100 * MS;
	ck_assert_int_eq(release_all(w, 2, 3, t), t + 5 * MS * GO_WATCH_FACTOR);
	/* it stays for the window, then the floor comes back */
	for (uint32_t s = 4; s < 4 + GO_WATCH_WINDOW - 1; s++) {
		go_watch_started(w, 0, t, t + 10000);
		go_watch_started(w, 1, t, t + 10000);
		t += 100 * MS;
		ck_assert_int_eq(release_all(w, 2, s, t), t + 5 * MS * GO_WATCH_FACTOR);
	}
	go_watch_started(w, 0, t, t + 10000);
	go_watch_started(w, 1, t, t + 10000);
	t += 100 * MS;
	ck_assert_int_eq(release_all(w, 2, 4 + GO_WATCH_WINDOW, t), t + GO_WATCH_MIN_NS);
	/* a start slower than the ceiling allows for: the ceiling */
	go_watch_started(w, 0, t, t + GO_WATCH_MAX_NS / GO_WATCH_FACTOR + 1);
	t += 1000 * MS;
	ck_assert_int_eq(release_all(w, 2, 5 + GO_WATCH_WINDOW, t), t + GO_WATCH_MAX_NS);
	go_watch_free(w);
}
END_TEST

/* A go lost on its way to participant 1: re-sent once, it starts after
 * the re-send and never says go-again: one lost go. */
START_TEST(test_lost_go_resent_and_counted)
{
	struct go_watch *w = go_watch_new(3);
	int64_t t = 1000 * MS;
	int64_t due = release_all(w, 3, 7, t);
	go_watch_started(w, 0, t + 1, t + 100);
	go_watch_started(w, 2, t + 1, t + 100);
	ck_assert(!go_watch_overdue(w, 1, due - 1));
	/* an early wake-up looks again at the same instant */
	ck_assert_int_eq(go_watch_looked(w, due - 1), due);
	ck_assert(go_watch_overdue(w, 1, due));
	ck_assert(!go_watch_overdue(w, 0, due)); /* it started */
	go_watch_resent(w, 1, due);
	ck_assert_uint_eq(go_watch_resends(w, 1), 1);
	ck_assert_uint_eq(go_watch_resends(w, 0), 0);
	/* the next look doubles the bound, from now */
	int64_t next = go_watch_looked(w, due);
	ck_assert_int_eq(next, due + 2 * GO_WATCH_MAX_NS);
	ck_assert_int_eq(go_watch_bound_ns(w), 2 * GO_WATCH_MAX_NS);
	ck_assert_int_eq(go_watch_started(w, 1, due + 30000, due + 40000), GO_WATCH_AFTER_RESEND);
	/* nobody left to wait for: no look */
	ck_assert_int_eq(go_watch_looked(w, next), 0);
	struct go_watch_counts c = go_watch_counts(w);
	ck_assert_uint_eq(c.resent, 1);
	ck_assert_uint_eq(c.after_resend, 1);
	ck_assert_uint_eq(c.again, 0);
	ck_assert_uint_eq(c.lost, 1);
	go_watch_free(w);
}
END_TEST

/* The first go got there, the agent ran late: it says go-again, which
 * takes the verdict back; a start stamped before the re-send was only
 * heard late and is no suspect at all. */
START_TEST(test_go_again_is_not_lost)
{
	struct go_watch *w = go_watch_new(2);
	int64_t t = 1000 * MS;
	int64_t due = release_all(w, 2, 3, t);
	go_watch_resent(w, 0, due);
	go_watch_resent(w, 1, due);
	go_watch_looked(w, due);
	ck_assert_int_eq(go_watch_started(w, 0, due + 5, due + 10), GO_WATCH_AFTER_RESEND);
	ck_assert_int_eq(go_watch_started(w, 1, due - 5, due + 10), GO_WATCH_BEFORE_RESEND);
	ck_assert_uint_eq(go_watch_counts(w).lost, 1);
	go_watch_again(w, 0, 3);
	go_watch_again(w, 1, 3);
	struct go_watch_counts c = go_watch_counts(w);
	ck_assert_uint_eq(c.resent, 2);
	ck_assert_uint_eq(c.again, 2);
	ck_assert_uint_eq(c.after_resend, 1);
	ck_assert_uint_eq(c.lost, 0);
	/* a go-again for another step takes nothing back */
	release_all(w, 2, 4, due + 100 * MS);
	due = go_watch_due_ns(w);
	go_watch_resent(w, 1, due);
	go_watch_looked(w, due);
	go_watch_started(w, 1, due + 1, due + 2);
	go_watch_again(w, 1, 3);
	ck_assert_uint_eq(go_watch_counts(w).lost, 1);
	go_watch_free(w);
}
END_TEST

/* The re-sent go reached an agent that had the first one and was still
 * waiting for the instant or its child: go-again comes before started
 * (seen in the 100,000-barrier soak, scheduled release): not lost. */
START_TEST(test_go_again_before_started)
{
	struct go_watch *w = go_watch_new(2);
	int64_t due = release_all(w, 2, 930, 0);
	go_watch_resent(w, 0, due);
	go_watch_resent(w, 1, due);
	go_watch_looked(w, due);
	go_watch_again(w, 0, 930);
	ck_assert_int_eq(go_watch_started(w, 0, due + 10, due + 20), GO_WATCH_AFTER_RESEND);
	ck_assert_int_eq(go_watch_started(w, 1, due + 10, due + 20), GO_WATCH_AFTER_RESEND);
	struct go_watch_counts c = go_watch_counts(w);
	ck_assert_uint_eq(c.after_resend, 2);
	ck_assert_uint_eq(c.again, 1);
	ck_assert_uint_eq(c.lost, 1); /* participant 1 said nothing yet */
	/* a go-again for the step before does not mark this one */
	release_all(w, 2, 931, due + 1000 * MS);
	due = go_watch_due_ns(w);
	go_watch_again(w, 0, 930);
	go_watch_resent(w, 0, due);
	go_watch_looked(w, due);
	go_watch_started(w, 0, due + 10, due + 20);
	ck_assert_uint_eq(go_watch_counts(w).lost, 2);
	go_watch_free(w);
}
END_TEST

START_TEST(test_resends_stop_at_the_limit)
{
	struct go_watch *w = go_watch_new(1);
	int64_t due = release_all(w, 1, 1, 0);
	unsigned sent = 0;
	while (due) {
		ck_assert(go_watch_overdue(w, 0, due));
		go_watch_resent(w, 0, due);
		sent++;
		int64_t next = go_watch_looked(w, due);
		ck_assert(next == 0 || next == due + go_watch_bound_ns(w));
		due = next;
	}
	ck_assert_uint_eq(sent, GO_WATCH_RESENDS_MAX);
	ck_assert_uint_eq(go_watch_resends(w, 0), GO_WATCH_RESENDS_MAX);
	ck_assert(!go_watch_overdue(w, 0, INT64_MAX));
	/* the next step starts afresh, at the ceiling (nothing measured) */
	ck_assert_int_eq(release_all(w, 1, 2, 10), 10 + GO_WATCH_MAX_NS);
	ck_assert_uint_eq(go_watch_resends(w, 0), 0);
	go_watch_free(w);
}
END_TEST

START_TEST(test_nobody_overdue_and_dropped)
{
	struct go_watch *w = go_watch_new(2);
	int64_t due = go_watch_release(w, 1, 0);
	go_watch_expect(w, 0); /* 1 is not in the step */
	ck_assert(!go_watch_overdue(w, 1, due));
	go_watch_drop(w, 0);
	ck_assert(!go_watch_overdue(w, 0, due));
	/* a look that re-sent nothing ends the step's watch */
	ck_assert_int_eq(go_watch_looked(w, due), 0);
	/* a started from a participant not watched changes nothing */
	ck_assert_int_eq(go_watch_started(w, 1, 1, 2), GO_WATCH_IN_TIME);
	ck_assert_uint_eq(go_watch_counts(w).resent, 0);
	go_watch_free(w);
}
END_TEST

START_TEST(test_suspects_past_the_limit_are_lost)
{
	struct go_watch *w = go_watch_new(1);
	for (uint32_t s = 1; s <= GO_WATCH_SUSPECTS_MAX + 5; s++) {
		int64_t due = release_all(w, 1, s, (int64_t)s * 1000 * MS);
		go_watch_resent(w, 0, due);
		go_watch_looked(w, due);
		ck_assert_int_eq(go_watch_started(w, 0, due + 1, due + 2), GO_WATCH_AFTER_RESEND);
	}
	go_watch_again(w, 0, 1);
	struct go_watch_counts c = go_watch_counts(w);
	ck_assert_uint_eq(c.after_resend, GO_WATCH_SUSPECTS_MAX + 5);
	ck_assert_uint_eq(c.lost, GO_WATCH_SUSPECTS_MAX + 4);
	go_watch_free(w);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("go_watch");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_bound_before_any_start_is_the_ceiling);
	tcase_add_test(tc, test_bound_learnt_from_starts);
	tcase_add_test(tc, test_lost_go_resent_and_counted);
	tcase_add_test(tc, test_go_again_is_not_lost);
	tcase_add_test(tc, test_go_again_before_started);
	tcase_add_test(tc, test_resends_stop_at_the_limit);
	tcase_add_test(tc, test_nobody_overdue_and_dropped);
	tcase_add_test(tc, test_suspects_past_the_limit_are_lost);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
