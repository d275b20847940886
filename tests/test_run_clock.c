// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * run_clock.h: a participant's clock driven by made-up exchanges, no
 * agent and no loop: the pings before the plan, the answer to the ping in
 * flight only, a jump said once per record, impossible exchanges, KVM PTP
 * readings taken and refused, the manifest's view, clocksources judged.
 */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "run_clock.h"
#include "testlib.h"

#define US 1000LL
#define MS 1000000LL
/* the host's CLOCK_REALTIME - CLOCK_MONOTONIC in these tests */
#define REAL_DIFF (1700000000LL * TESTLIB_SEC)

static const struct clock_realmono rm = { .diff_ns = REAL_DIFF, .window_ns = 100 };

/* One exchange at the fake clock's now: the guest's clock offset_ns ahead,
 * delay_ns each way; ptp: its pong carries a KVM PTP reading taken at the
 * host's instant ptp_at_ns (0: none). */
static enum part_clock_pong exchange(struct part_clock *c, int64_t offset_ns, int64_t delay_ns,
				     int64_t ptp_at_ns, struct part_clock_news *news)
{
	struct proto_msg ping, pong = { .type = PROTO_PONG, .version = PROTO_VERSION };
	int64_t t1 = testlib_clock_advance(10 * MS);
	part_clock_ping(c, t1, &rm, &ping);
	ck_assert_int_eq(ping.type, PROTO_PING);
	ck_assert_int_eq(ping.u.ping.t1, t1);
	pong.u.ping.seq = ping.u.ping.seq;
	pong.u.ping.t1 = t1;
	pong.u.ping.t2 = t1 + delay_ns + offset_ns;
	pong.u.ping.t3 = pong.u.ping.t2 + 10 * US;
	if (ptp_at_ns) {
		pong.u.ping.ptp_mono_ns = ptp_at_ns + offset_ns;
		pong.u.ping.ptp_real_ns = ptp_at_ns + REAL_DIFF;
		pong.u.ping.ptp_host_real_ns = ptp_at_ns + REAL_DIFF;
		pong.u.ping.ptp_window_ns = 40;
	}
	int64_t t4 = t1 + 2 * delay_ns + 10 * US;
	testlib_clock_set(t4);
	return part_clock_pong(c, &pong, t4, &rm, news);
}

static void make_ready(struct part_clock *c, int64_t offset_ns)
{
	struct part_clock_news news;
	for (int i = 1; i < RUN_CLOCK_EXCHANGES; i++)
		ck_assert_int_eq(exchange(c, offset_ns, 50 * US, 0, &news), PART_CLOCK_PONG_MORE);
	ck_assert(!part_clock_ready(c));
	ck_assert_int_eq(exchange(c, offset_ns, 50 * US, 0, &news), PART_CLOCK_PONG_READY);
	ck_assert(part_clock_ready(c));
}

START_TEST(test_shared_needs_no_exchange)
{
	struct part_clock *c = part_clock_new(true);
	struct part_clock_news news;
	ck_assert(part_clock_shared(c));
	ck_assert_str_eq(part_clock_method(c), "shared");
	ck_assert_int_eq(part_clock_to_guest(c, 123456), 123456);
	ck_assert_int_eq(part_clock_to_host(c, 123456), 123456);
	ck_assert_int_eq(part_clock_bound_at(c, 123456), 0);
	ck_assert_int_eq(part_clock_max_delay_ns(c), 0);
	ck_assert(!part_clock_refresh_due(c));
	/* a pong to a shared clock answers nothing */
	ck_assert_int_eq(exchange(c, 5 * MS, 50 * US, 0, &news), PART_CLOCK_PONG_IGNORED);
	part_clock_free(c);
}
END_TEST

START_TEST(test_exchanges_make_it_ready)
{
	struct part_clock *c = part_clock_new(false);
	char said[300];
	testlib_clock_set(TESTLIB_SEC);
	ck_assert(!part_clock_refresh_due(c)); /* not before it is ready */
	make_ready(c, 5 * MS);
	ck_assert_str_eq(part_clock_method(c), "ping");
	/* symmetric delays: the offset is exact, the bound half a round trip */
	ck_assert_int_eq(part_clock_offset(c)->offset_ns, 5 * MS);
	ck_assert_int_le(part_clock_offset(c)->bound_ns, 50 * US);
	int64_t now = testlib_clock_now();
	ck_assert_int_eq(part_clock_to_guest(c, now), now + 5 * MS);
	ck_assert_int_eq(part_clock_to_host(c, now + 5 * MS), now);
	ck_assert_int_eq(part_clock_max_delay_ns(c), 100 * US);
	ck_assert(part_clock_describe(c, said, sizeof(said)));
	ck_assert_msg(strstr(said, "clock offset +5.000 ms") && strstr(said, "16 exchanges"),
		      "said: %s", said);
	ck_assert(part_clock_refresh_due(c));
	ck_assert_int_eq(exchange(c, 5 * MS, 50 * US, 0, &(struct part_clock_news){ 0 }),
			 PART_CLOCK_PONG_REFRESH);
	json_object *j = part_clock_json(c);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(j, "method")), "ping");
	ck_assert_int_eq(json_object_get_int64(json_object_object_get(j, "exchanges")),
			 RUN_CLOCK_EXCHANGES + 1);
	ck_assert_ptr_null(json_object_object_get(j, "ptp_readings"));
	json_object_put(j);
	part_clock_free(c);
}
END_TEST

/* Only the answer to the ping in flight counts: a stale one, a forged t1,
 * or any after the ping was forgotten (a release) is ignored. */
START_TEST(test_only_the_ping_in_flight)
{
	struct part_clock *c = part_clock_new(false);
	struct part_clock_news news;
	struct proto_msg ping, pong = { .type = PROTO_PONG, .version = PROTO_VERSION };
	part_clock_ping(c, 1000 * MS, &rm, &ping);
	pong.u.ping = ping.u.ping;
	pong.u.ping.t2 = pong.u.ping.t3 = 1001 * MS;
	pong.u.ping.seq = ping.u.ping.seq + 1;
	ck_assert_int_eq(part_clock_pong(c, &pong, 1002 * MS, &rm, &news), PART_CLOCK_PONG_IGNORED);
	pong.u.ping.seq = ping.u.ping.seq;
	pong.u.ping.t1 = ping.u.ping.t1 + 1;
	ck_assert_int_eq(part_clock_pong(c, &pong, 1002 * MS, &rm, &news), PART_CLOCK_PONG_IGNORED);
	pong.u.ping.t1 = ping.u.ping.t1;
	part_clock_forget_ping(c);
	ck_assert_int_eq(part_clock_pong(c, &pong, 1002 * MS, &rm, &news), PART_CLOCK_PONG_IGNORED);
	/* and the right one, once */
	part_clock_ping(c, 1000 * MS, &rm, &ping);
	pong.u.ping.seq = ping.u.ping.seq;
	ck_assert_int_eq(part_clock_pong(c, &pong, 1002 * MS, &rm, &news), PART_CLOCK_PONG_MORE);
	ck_assert_int_eq(part_clock_pong(c, &pong, 1002 * MS, &rm, &news), PART_CLOCK_PONG_IGNORED);
	part_clock_free(c);
}
END_TEST

/* A refresh far off the fit is a jump: news once until the record takes
 * it, then again. */
START_TEST(test_jump_said_once_per_record)
{
	struct part_clock *c = part_clock_new(false);
	struct part_clock_news news;
	testlib_clock_set(TESTLIB_SEC);
	make_ready(c, 5 * MS);
	ck_assert(!part_clock_take_jump(c));
	ck_assert_int_eq(exchange(c, 5 * MS, 50 * US, 0, &news), PART_CLOCK_PONG_REFRESH);
	ck_assert(!news.jumped);
	ck_assert_int_eq(exchange(c, 55 * MS, 50 * US, 0, &news), PART_CLOCK_PONG_REFRESH);
	ck_assert_msg(news.jumped && strstr(news.jump, "jumped by"), "jump: %d %s", news.jumped,
		      news.jump);
	ck_assert(part_clock_jump_pending(c));
	ck_assert_int_eq(exchange(c, 105 * MS, 50 * US, 0, &news), PART_CLOCK_PONG_REFRESH);
	ck_assert(!news.jumped); /* pending already */
	ck_assert(part_clock_take_jump(c));
	ck_assert(!part_clock_take_jump(c));
	ck_assert(!part_clock_jump_pending(c));
	ck_assert_int_eq(exchange(c, 305 * MS, 50 * US, 0, &news), PART_CLOCK_PONG_REFRESH);
	ck_assert(news.jumped);
	part_clock_free(c);
}
END_TEST

/* Answers that cannot be (t3 before t2) are left out: said with the last
 * exchange before the plan, and the clock is not described as known. */
START_TEST(test_impossible_exchanges)
{
	struct part_clock *c = part_clock_new(false);
	struct part_clock_news news = { 0 };
	char said[300];
	for (int i = 1; i <= RUN_CLOCK_EXCHANGES; i++) {
		struct proto_msg ping, pong = { .type = PROTO_PONG, .version = PROTO_VERSION };
		part_clock_ping(c, i * 10 * MS, &rm, &ping);
		pong.u.ping = ping.u.ping;
		pong.u.ping.t2 = i * 10 * MS + 3 * MS;
		pong.u.ping.t3 = pong.u.ping.t2 - 1 * MS;
		enum part_clock_pong got = part_clock_pong(c, &pong, i * 10 * MS + 2 * MS, &rm, &news);
		ck_assert_int_eq(got, i < RUN_CLOCK_EXCHANGES ? PART_CLOCK_PONG_MORE
							      : PART_CLOCK_PONG_READY);
		ck_assert_int_eq(news.impossible, i == RUN_CLOCK_EXCHANGES);
	}
	ck_assert_uint_eq(part_clock_offset(c)->samples, 0);
	ck_assert(!part_clock_describe(c, said, sizeof(said)));
	ck_assert_msg(strstr(said, "none of 16 clock exchanges was possible"), "said: %s", said);
	part_clock_free(c);
}
END_TEST

/* KVM PTP readings within the exchange make the clock "ptp-kvm"; one that
 * puts the host's clock outside it is refused, said the first time only. */
START_TEST(test_ptp_taken_and_refused)
{
	struct part_clock *c = part_clock_new(false);
	struct part_clock_news news;
	testlib_clock_set(TESTLIB_SEC);
	for (int i = 1; i <= RUN_CLOCK_EXCHANGES; i++) {
		int64_t mid = testlib_clock_now() + 10 * MS + 55 * US;
		enum part_clock_pong got = exchange(c, 7 * MS, 50 * US, mid, &news);
		ck_assert(!news.ptp_refused);
		ck_assert_int_eq(got, i < RUN_CLOCK_EXCHANGES ? PART_CLOCK_PONG_MORE
							      : PART_CLOCK_PONG_READY);
	}
	ck_assert_str_eq(part_clock_method(c), "ptp-kvm");
	ck_assert_int_eq(part_clock_offset(c)->offset_ns, 7 * MS);
	ck_assert_int_le(part_clock_offset(c)->bound_ns, 1 * US);
	/* a reading a second away from the exchange: another host's realtime */
	int64_t off = testlib_clock_now() + TESTLIB_SEC;
	ck_assert_int_eq(exchange(c, 7 * MS, 50 * US, off, &news), PART_CLOCK_PONG_REFRESH);
	ck_assert_msg(news.ptp_refused && strstr(news.ptp, "outside the exchange"), "ptp: %s",
		      news.ptp);
	ck_assert_int_eq(exchange(c, 7 * MS, 50 * US, testlib_clock_now() + TESTLIB_SEC, &news),
			 PART_CLOCK_PONG_REFRESH);
	ck_assert(!news.ptp_refused);
	json_object *j = part_clock_json(c);
	ck_assert_int_eq(json_object_get_int64(json_object_object_get(j, "ptp_readings")),
			 RUN_CLOCK_EXCHANGES);
	ck_assert_int_eq(json_object_get_int64(json_object_object_get(j, "ptp_refused")), 2);
	ck_assert_int_eq(json_object_get_int64(json_object_object_get(j, "ping_offset_ns")), 7 * MS);
	json_object_put(j);
	part_clock_free(c);
}
END_TEST

START_TEST(test_clocksource_warning)
{
	char buf[320];
	ck_assert_ptr_null(part_clock_source_warning("tsc", buf, sizeof(buf)));
	ck_assert_ptr_null(part_clock_source_warning("kvm-clock", buf, sizeof(buf)));
	ck_assert_ptr_null(part_clock_source_warning("", buf, sizeof(buf)));
	ck_assert_ptr_eq(part_clock_source_warning("jiffies", buf, sizeof(buf)), buf);
	ck_assert_msg(strstr(buf, "clocksource jiffies counts timer ticks"), "%s", buf);
	ck_assert_ptr_eq(part_clock_source_warning("hpet", buf, sizeof(buf)), buf);
	ck_assert_msg(strstr(buf, "is slow to read"), "%s", buf);
	ck_assert_ptr_eq(part_clock_source_warning("sundial", buf, sizeof(buf)), buf);
	ck_assert_msg(strstr(buf, "not one lockstep knows"), "%s", buf);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("run_clock");
	TCase *tc = tcase_create("clock");
	tcase_add_test(tc, test_shared_needs_no_exchange);
	tcase_add_test(tc, test_exchanges_make_it_ready);
	tcase_add_test(tc, test_only_the_ping_in_flight);
	tcase_add_test(tc, test_jump_said_once_per_record);
	tcase_add_test(tc, test_impossible_exchanges);
	tcase_add_test(tc, test_ptp_taken_and_refused);
	tcase_add_test(tc, test_clocksource_warning);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
