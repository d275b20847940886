// SPDX-License-Identifier: GPL-2.0-or-later
/* The agent's pure parts, compiled in: UTF-8 sanitizing and chunking, and
 * the bounded two-lane output queue. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "outq.h"
#include "testlib.h"
#include "utf8.h"
#include "write_fault.h"

static void check_sanitize(const char *in, size_t n, bool final, const char *want, size_t done)
{
	char buf[64];

	memcpy(buf, in, n);
	ck_assert_uint_eq(utf8_sanitize(buf, n, final), done);
	ck_assert_int_eq(memcmp(buf, want, n), 0);
}

START_TEST(test_utf8_sanitize)
{
	check_sanitize("abc", 3, true, "abc", 3);
	check_sanitize("a\xff"
		       "b",
		       3, true, "a?b", 3);
	check_sanitize("\xc0\xaf", 2, true, "??", 2);		/* overlong */
	check_sanitize("\xed\xa0\x80", 3, true, "???", 3);	/* surrogate */
	check_sanitize("\xf4\x90\x80\x80", 4, true, "????", 4); /* > U+10FFFF */
	check_sanitize("\xf0\x9f\x98\x80", 4, true, "\xf0\x9f\x98\x80", 4);
	check_sanitize("x\0y", 3, true, "x?y", 3);
	/* cut by the end of a read: kept for the next one, unless final */
	check_sanitize("ab\xe2\x82", 4, false, "ab\xe2\x82", 2);
	check_sanitize("ab\xe2\x82", 4, true, "ab??", 4);
	check_sanitize("ab\xe2\x28", 4, false, "ab?(", 4);
	check_sanitize("\x80", 1, false, "?", 1);
}
END_TEST

START_TEST(test_utf8_chunk_len)
{
	ck_assert_uint_eq(utf8_chunk_len("aaaa", 4, 3, 100), 3);
	ck_assert_uint_eq(utf8_chunk_len("\xc3\xa9", 2, 1, 100), 0); /* never splits */
	ck_assert_uint_eq(utf8_chunk_len("a\xc3\xa9", 3, 2, 100), 1);
	ck_assert_uint_eq(utf8_chunk_len("\x01\x01", 2, 100, 6), 1); /* \u0001 */
	ck_assert_uint_eq(utf8_chunk_len("\"\"\"", 3, 100, 4), 2);   /* \" */
	ck_assert_uint_eq(utf8_chunk_len("\n\n\n", 3, 100, 100), 3);
}
END_TEST

START_TEST(test_outq_lanes_and_bound)
{
	static char big[1024 * 1024];
	struct outq q;
	int p[2];
	char buf[64];

	outq_init(&q);
	ck_assert_int_eq(pipe2(p, O_NONBLOCK), 0);
	/* Gate closed: only the prio lane goes out. */
	outq_push(&q, OUTQ_KEEP, "keep\n", 5);
	outq_push(&q, OUTQ_PRIO, "prio\n", 5);
	ck_assert_int_eq(outq_flush(&q, p[1]), 0);
	ck_assert_int_eq(read(p[0], buf, sizeof(buf)), 5);
	ck_assert_int_eq(memcmp(buf, "prio\n", 5), 0);
	q.gate_open = true;
	outq_push_front(&q, OUTQ_KEEP, "hello\n", 6);
	ck_assert_int_eq(outq_flush(&q, p[1]), 0);
	ck_assert_int_eq(read(p[0], buf, sizeof(buf)), 11);
	ck_assert_int_eq(memcmp(buf, "hello\nkeep\n", 11), 0);
	ck_assert_uint_eq(q.bytes, 0);

	/* Full: droppable lines go first, kept ones never. */
	memset(big, 'x', sizeof(big));
	q.gate_open = false;
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(outq_push(&q, OUTQ_DROP, big, sizeof(big)), 0);
	ck_assert_int_eq(outq_push(&q, OUTQ_KEEP, big, sizeof(big)), 0);
	ck_assert_uint_le(q.bytes, OUTQ_SOFT_MAX);
	ck_assert_uint_eq(outq_take_dropped(&q), 1);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(outq_push(&q, OUTQ_KEEP, big, sizeof(big)), 0);
	ck_assert_uint_eq(q.bytes, 5 * sizeof(big));
	ck_assert_int_eq(outq_push(&q, OUTQ_DROP, "x\n", 2), -ENOBUFS);
	outq_free(&q);
	close(p[0]);
	close(p[1]);
}
END_TEST

/* The kernel out of socket buffer memory for a moment (ENOBUFS) is no
 * broken channel: the line stays queued and goes out at the next flush.
 * Before, the agent took it for the host gone and left (a local guest) or
 * reconnected, with its started or done in the queue. */
START_TEST(test_outq_flush_enobufs_transient)
{
	static const char line[] = "{\"v\":1,\"type\":\"started\",\"step\":88}\n";
	struct outq q;
	int p[2];
	char buf[128];
	int r;

	outq_init(&q);
	q.gate_open = true;
	ck_assert_int_eq(pipe2(p, O_NONBLOCK), 0);
	ck_assert_int_eq(outq_push(&q, OUTQ_KEEP, line, strlen(line)), 0);
	wf_arm(p[1], ENOBUFS, 1);
	r = outq_flush(&q, p[1]);
	ck_assert_uint_eq(wf_failed(), 1);
	wf_arm(-1, 0, 0);
	ck_assert_msg(r == 0, "outq_flush returned %d (%s) on ENOBUFS", r, strerror(-r));
	ck_assert_uint_eq(q.bytes, strlen(line));
	ck_assert(outq_writable(&q));
	ck_assert_int_eq(outq_flush(&q, p[1]), 0);
	ck_assert_uint_eq(q.bytes, 0);
	ck_assert_int_eq(read(p[0], buf, sizeof(buf)), (ssize_t)strlen(line));
	ck_assert_int_eq(memcmp(buf, line, strlen(line)), 0);
	outq_free(&q);
	close(p[0]);
	close(p[1]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("agent-units");
	TCase *tc = tcase_create("agent-units");

	tcase_add_test(tc, test_utf8_sanitize);
	tcase_add_test(tc, test_utf8_chunk_len);
	tcase_add_test(tc, test_outq_lanes_and_bound);
	tcase_add_test(tc, test_outq_flush_enobufs_transient);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
