// SPDX-License-Identifier: GPL-2.0-or-later
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "clock_offset.h"
#include "testlib.h"

#define MS 1000000LL
#define SEC 1000000000LL

START_TEST(test_symmetric_exchange)
{
	struct clock_offset c = { 0 };
	/* guest runs 1000 ns ahead; 100 ns each way, 50 ns inside the guest */
	ck_assert(clock_offset_add(&c, 0, 1100, 1150, 250));
	ck_assert_int_eq(c.offset_ns, 1000);
	ck_assert_int_eq(c.bound_ns, 100);
	ck_assert_int_eq(clock_offset_to_host(&c, 5000), 4000);
	ck_assert_int_eq(clock_offset_to_guest(&c, 4000), 5000);
}
END_TEST

START_TEST(test_good_exchanges_only)
{
	struct clock_offset c = { 0 };
	/* an asymmetric slow exchange: 900 us out, 100 us back; true offset 0 */
	ck_assert(clock_offset_add(&c, 0, 900000, 900000, 1000000));
	ck_assert_int_eq(c.offset_ns, 400000);
	ck_assert_int_eq(c.bound_ns, 500000);
	/* fast ones push it out: the estimate comes from them alone */
	ck_assert(clock_offset_add(&c, 2 * MS, 2 * MS + 10000, 2 * MS + 10000, 2 * MS + 30000));
	ck_assert(clock_offset_add(&c, 3 * MS, 3 * MS + 10000, 3 * MS + 10000, 3 * MS + 20000));
	ck_assert_int_le(llabs(c.offset_ns), 10000);
	ck_assert_int_le(c.bound_ns, 20000);
	/* the true offset (0) is within the bound */
	ck_assert_int_le(llabs(clock_offset_at(&c, 3 * MS)), c.bound_ns);
	ck_assert_uint_eq(c.samples, 3);
}
END_TEST

/* A guest clock 5 ms ahead and drifting +100 ppm, seen through 200 us
 * exchanges with jitter: the fit finds the drift, and converting an instant
 * minutes later stays within the stated bound. */
START_TEST(test_drift_followed)
{
	struct clock_offset c = { 0 };
	const int64_t off0 = 5 * MS;
	const double ppm = 100e-6;
	unsigned seed = 7;
	for (int i = 0; i < 40; i++) {
		int64_t t1 = (int64_t)i * 3 * SEC;
		int64_t out = 100000 + rand_r(&seed) % 30000, back = 100000 + rand_r(&seed) % 30000;
		int64_t t2_host = t1 + out, t3_host = t2_host + 5000;
		int64_t t2 = t2_host + off0 + (int64_t)(ppm * (double)t2_host);
		int64_t t3 = t3_host + off0 + (int64_t)(ppm * (double)t3_host);
		ck_assert(clock_offset_add(&c, t1, t2, t3, t3_host + back));
	}
	ck_assert_double_eq_tol(c.drift, ppm, 2e-6);
	int64_t when = 130 * SEC;
	int64_t truth = off0 + (int64_t)(ppm * (double)when);
	ck_assert_int_le(llabs(clock_offset_at(&c, when) - truth), c.bound_ns);
	ck_assert_int_lt(c.bound_ns, 200000);
	/* round trip of an instant */
	int64_t g = clock_offset_to_guest(&c, when);
	ck_assert_int_le(llabs(clock_offset_to_host(&c, g) - when), 1);
}
END_TEST

START_TEST(test_impossible_stamps_refused)
{
	struct clock_offset c = { 0 };
	ck_assert(!clock_offset_add(&c, 100, 0, 0, 50)); /* t4 before t1 */
	ck_assert(!clock_offset_add(&c, 0, 10, 5, 50));	 /* t3 before t2 */
	ck_assert(!clock_offset_add(&c, 0, 0, 100, 50)); /* held longer than the trip */
	ck_assert_uint_eq(c.samples, 0);
}
END_TEST

START_TEST(test_large_instants)
{
	struct clock_offset c = { 0 };
	int64_t big = INT64_MAX / 2;
	ck_assert(clock_offset_add(&c, big, big + 10, big + 20, big + 30));
	ck_assert_int_eq(c.offset_ns, 0);
	ck_assert_int_eq(c.bound_ns, 10);
}
END_TEST

/* Issue 14: a guest's stamps near 2^63, or an offset no clock can have,
 * are refused; conversions of any instant saturate, never overflow (run
 * under UBSan in tools/test). */
START_TEST(test_overflow_refused)
{
	struct clock_offset c = { 0 };
	struct clock_exchange e;
	ck_assert_int_eq(clock_offset_exchange(100, INT64_MAX - 5, INT64_MAX - 1, 200, &e), -ERANGE);
	ck_assert_int_eq(clock_offset_exchange(INT64_MIN + 5, 1000, 1000, INT64_MIN + 10, &e), -ERANGE);
	ck_assert_int_eq(clock_offset_exchange(INT64_MIN, 0, 1, INT64_MAX, &e), -ERANGE);
	ck_assert_int_eq(clock_offset_exchange(0, 10, 5, 50, &e), -EINVAL);
	/* 2^62 ahead: past CLOCK_OFFSET_MAX_NS */
	ck_assert(!clock_offset_add(&c, SEC, SEC + (1LL << 62), SEC + (1LL << 62), SEC + 100));
	ck_assert(!clock_offset_add_sample(&c, SEC, 1LL << 62, 10));
	ck_assert_uint_eq(c.samples, 0);
	/* the largest offset allowed, with a drift: conversions of the ends of
	 * the range saturate */
	ck_assert(clock_offset_add(&c, SEC, SEC + CLOCK_OFFSET_MAX_NS, SEC + CLOCK_OFFSET_MAX_NS,
				   SEC + 100));
	c.drift = 1e-3;
	ck_assert_int_eq(clock_offset_to_guest(&c, INT64_MAX), INT64_MAX);
	ck_assert_int_eq(clock_offset_to_host(&c, INT64_MIN), INT64_MIN);
	ck_assert_int_eq(clock_offset_to_host(&c, 0) < 0, 1);
	c.offset_ns = -CLOCK_OFFSET_MAX_NS;
	ck_assert_int_eq(clock_offset_to_host(&c, INT64_MAX), INT64_MAX);
	ck_assert_int_eq(clock_offset_to_guest(&c, INT64_MIN), INT64_MIN);
}
END_TEST

/* An offset that moves by more than both bounds plus the slew an honest
 * clock may have is a jump; within them it is not. */
START_TEST(test_jump)
{
	struct clock_offset c = { 0 };
	struct clock_exchange e;
	int64_t off_by, allowed;
	for (int i = 0; i < 16; i++) /* 1 ms ahead, 100 ns trips */
		ck_assert(clock_offset_add(&c, i * 1000, i * 1000 + MS + 50, i * 1000 + MS + 50,
					   i * 1000 + 100));
	ck_assert_int_eq(c.offset_ns, MS);
	/* 10 ms later, 3 us further: within 500 ppm of 10 ms (5 us) */
	ck_assert_int_eq(clock_offset_exchange(10 * MS, 11 * MS + 3050, 11 * MS + 3050,
					       10 * MS + 100, &e),
			 0);
	ck_assert(!clock_offset_jumped(&c, &e, &off_by, &allowed));
	/* 10 s ahead instead: a jump */
	ck_assert_int_eq(clock_offset_exchange(10 * MS, 10 * SEC + 10 * MS, 10 * SEC + 10 * MS,
					       10 * MS + 100, &e),
			 0);
	ck_assert(clock_offset_jumped(&c, &e, &off_by, &allowed));
	ck_assert_int_gt(off_by, 9 * SEC);
	ck_assert_int_lt(allowed, 10 * 1000 * 1000);
	/* the bound grows by 500 ppm of the time since the line's newest
	 * exchange: 10 s on, 5 ms */
	ck_assert_int_eq(clock_offset_bound_at(&c, 15050), c.bound_ns);
	ck_assert_int_eq(clock_offset_bound_at(&c, 15050 + 10 * SEC), c.bound_ns + 5 * MS);
	ck_assert_int_eq(clock_offset_bound_at(&c, INT64_MAX) > 4 * SEC * 1000000, 1);
	/* no estimate yet: nothing to jump from */
	struct clock_offset none = { 0 };
	ck_assert(!clock_offset_jumped(&none, &e, &off_by, &allowed));
}
END_TEST

START_TEST(test_window_forgets)
{
	struct clock_offset c = { 0 };
	/* one excellent exchange long ago, then a clock step of +1 ms: once
	 * the old exchange left the window, only the new offset counts */
	ck_assert(clock_offset_add(&c, 0, 5, 5, 10));
	for (int i = 1; i <= CLOCK_OFFSET_WINDOW; i++) {
		int64_t t1 = i * MS;
		ck_assert(clock_offset_add(&c, t1, t1 + MS + 50000, t1 + MS + 50000, t1 + 100000));
	}
	ck_assert_int_le(llabs(c.offset_ns - MS), 1000);
}
END_TEST

/* A KVM PTP reading turned into a host-monotonic offset: the host's
 * realtime - monotonic moved by 40 ns (NTP slewing) between the ping and the
 * pong; the reading's host instant is where realtime says, the bound
 * covers both samples' windows and the move. */
START_TEST(test_ptp_conversion)
{
	const int64_t d = 1700000000 * SEC; /* realtime - monotonic */
	const struct clock_realmono before = { d, 100 }, after = { d + 40, 60 };
	/* truly: at host monotonic 10 s, realtime - mono was d + 20, and the
	 * guest's clock read 13 s */
	const struct clock_ptp_reading rd = {
		.guest_ns = 13 * SEC,
		.guest_real_ns = 5,
		.host_real_ns = 10 * SEC + d + 20,
		.window_ns = 30,
	};
	struct clock_ptp_sample smp;
	ck_assert_int_eq(clock_offset_from_ptp(&rd, &before, &after, 10 * SEC - 1000,
					       10 * SEC + 1000, &smp),
			 0);
	/* the difference is taken as the middle of d - 50 .. d + 70 */
	ck_assert_int_eq(smp.at_ns, 10 * SEC + 10);
	ck_assert_int_eq(smp.offset_ns, 3 * SEC - 10);
	ck_assert_int_eq(smp.bound_ns, 15 + 60);
	ck_assert_int_le(llabs(smp.offset_ns - 3 * SEC), smp.bound_ns);

	/* an exchange that ended before the reading: not this host's realtime */
	ck_assert_int_eq(clock_offset_from_ptp(&rd, &before, &after, 9 * SEC, 9 * SEC + 1000, &smp),
			 -EDOM);
	ck_assert_int_eq(smp.at_ns, 10 * SEC + 10);
	/* just inside, by the bound */
	ck_assert_int_eq(clock_offset_from_ptp(&rd, &before, &after, 9 * SEC, 10 * SEC - 65, &smp), 0);
	/* numbers a peer may send that would overflow */
	struct clock_ptp_reading bad = rd;
	bad.host_real_ns = INT64_MIN + 5;
	ck_assert_int_eq(clock_offset_from_ptp(&bad, &before, &after, 0, INT64_MAX, &smp), -ERANGE);
	bad = rd;
	bad.guest_ns = INT64_MAX;
	bad.host_real_ns = 1;
	ck_assert_int_eq(clock_offset_from_ptp(&bad, &before, &after, INT64_MIN / 2, INT64_MAX, &smp),
			 -ERANGE);
}
END_TEST

/* Readings 100 ns wide from a clock 5 ms ahead drifting 100 ppm, and one
 * 50 us wide: the fit keeps the narrow ones and finds the drift. */
START_TEST(test_ptp_samples_fitted)
{
	struct clock_offset c = { .good_slack_ns = 2000 };
	const double ppm = 100e-6;
	for (int i = 0; i < 40; i++) {
		int64_t at = (int64_t)i * SEC;
		int64_t off = 5 * MS + (int64_t)(ppm * (double)at) + (i % 3) * 30 - 30;
		ck_assert(clock_offset_add_sample(&c, at, off, 50));
	}
	ck_assert(clock_offset_add_sample(&c, 40 * SEC, 5 * MS + 4 * MS, 50000));
	ck_assert_double_eq_tol(c.drift, ppm, 1e-8);
	ck_assert_int_le(c.bound_ns, 200);
	int64_t truth = 5 * MS + (int64_t)(ppm * (double)(41 * SEC));
	ck_assert_int_le(llabs(clock_offset_at(&c, 41 * SEC) - truth), c.bound_ns);
	ck_assert(!clock_offset_add_sample(&c, 0, 0, -1));
	ck_assert_uint_eq(c.samples, 41);
}
END_TEST

static int64_t ns(clockid_t id)
{
	struct timespec t;
	clock_gettime(id, &t);
	return t.tv_sec * SEC + t.tv_nsec;
}

START_TEST(test_realmono_read)
{
	int64_t r0 = ns(CLOCK_REALTIME), m0 = ns(CLOCK_MONOTONIC);
	struct clock_realmono rm;
	clock_realmono_read(&rm);
	int64_t m1 = ns(CLOCK_MONOTONIC), r1 = ns(CLOCK_REALTIME);
	ck_assert_int_ge(rm.window_ns, 0);
	ck_assert_int_ge(rm.diff_ns, r0 - m1);
	ck_assert_int_le(rm.diff_ns, r1 - m0);
}
END_TEST

START_TEST(test_clocksource_fitness)
{
	ck_assert_int_eq(clock_source_fitness("tsc"), CLOCK_SOURCE_FIT);
	ck_assert_int_eq(clock_source_fitness("kvm-clock"), CLOCK_SOURCE_FIT);
	ck_assert_int_eq(clock_source_fitness("hpet"), CLOCK_SOURCE_SLOW);
	ck_assert_int_eq(clock_source_fitness("acpi_pm"), CLOCK_SOURCE_SLOW);
	ck_assert_int_eq(clock_source_fitness("jiffies"), CLOCK_SOURCE_COARSE);
	ck_assert_int_eq(clock_source_fitness("refined-jiffies"), CLOCK_SOURCE_COARSE);
	ck_assert_int_eq(clock_source_fitness("tsc-early"), CLOCK_SOURCE_UNKNOWN);
	ck_assert_int_eq(clock_source_fitness(""), CLOCK_SOURCE_UNKNOWN);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("clock-offset");
	TCase *tc = tcase_create("cristian");
	tcase_add_test(tc, test_symmetric_exchange);
	tcase_add_test(tc, test_good_exchanges_only);
	tcase_add_test(tc, test_drift_followed);
	tcase_add_test(tc, test_impossible_stamps_refused);
	tcase_add_test(tc, test_large_instants);
	tcase_add_test(tc, test_window_forgets);
	tcase_add_test(tc, test_overflow_refused);
	tcase_add_test(tc, test_jump);
	tcase_add_test(tc, test_ptp_conversion);
	tcase_add_test(tc, test_ptp_samples_fitted);
	tcase_add_test(tc, test_realmono_read);
	tcase_add_test(tc, test_clocksource_fitness);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
