// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * member_records: what a follower's records are worth on the leader.
 * Node names and control characters refused, a sample renamed
 * "<member>/<node>" only when it is one hostctl reads, a barrier record
 * summarised, and the skew across hosts with its bound: the ends' clock
 * bounds, plus both hosts' maxerror only when the ends are on two hosts.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "member_records.h"
#include "testlib.h"

static json_object *parse(const char *text)
{
	char err[200];
	json_object *o = mrec_parse(text, strlen(text), err, sizeof(err));
	ck_assert_msg(o, "%s: %s", text, err);
	return o;
}

static json_object *nodes_of(const char *facts)
{
	json_object *f = parse(facts), *nodes;
	char err[200];
	ck_assert_msg(mrec_facts(f, &nodes, err, sizeof(err)) == 0, "%s", err);
	json_object_put(f);
	return nodes;
}

START_TEST(test_names)
{
	ck_assert(mrec_name_ok("guest-1"));
	ck_assert(mrec_name_ok("a.b_c"));
	const char *bad[] = { "", ".x", "../x", "a/guest-1", "x y", "g\x1b", NULL };
	for (int i = 0; bad[i]; i++)
		ck_assert_msg(!mrec_name_ok(bad[i]), "%s", bad[i]);
	char long_name[65];
	memset(long_name, 'a', 64);
	long_name[64] = 0;
	ck_assert(!mrec_name_ok(long_name));
	long_name[63] = 0;
	ck_assert(mrec_name_ok(long_name));
}
END_TEST

/* A follower's lines cut into entries: whole lines, at most
 * MREC_LINES_MAX each, a line over MREC_LINE_MAX left out, nothing lost
 * before or after it. */
START_TEST(test_chunks)
{
	size_t line = 1000, big = MREC_LINE_MAX + 10, len = 300 * line + big + 2 * line, n;
	char *buf = malloc(len);
	memset(buf, 'x', len);
	for (size_t i = 0; i < 300; i++)
		buf[i * line + line - 1] = '\n';
	buf[300 * line + big - 1] = '\n';
	buf[300 * line + big + line - 1] = '\n';
	buf[len - 1] = '\n';
	ck_assert_uint_eq(mrec_skip_long(buf, len, &n), 0);
	ck_assert_uint_eq(n, 0);
	size_t first = mrec_take_lines(buf, len);
	ck_assert_uint_eq(first, (MREC_LINES_MAX / line) * line);
	size_t second = mrec_take_lines(buf + first, len - first);
	ck_assert_uint_eq(first + second, 300 * line); /* stops before the long one */
	size_t at = first + second;
	ck_assert_uint_eq(mrec_skip_long(buf + at, len - at, &n), big);
	ck_assert_uint_eq(n, 1);
	at += big;
	ck_assert_uint_eq(mrec_take_lines(buf + at, len - at), 2 * line);
	/* a last line without its newline is still one */
	ck_assert_uint_eq(mrec_take_lines("ab\ncd", 5), 5);
	free(buf);
}
END_TEST

START_TEST(test_parse_refuses)
{
	char err[200];
	const char *bad[] = { "[1]",
			      "{\"a\":1} x",
			      "{\"a\":\"\\u001b[2J\"}",
			      "{\"\\u0007\":1}",
			      "{\"a\":\"\\u009b\"}",
			      "{\"a\":",
			      NULL };
	for (int i = 0; bad[i]; i++)
		ck_assert_msg(!mrec_parse(bad[i], strlen(bad[i]), err, sizeof(err)), "%s", bad[i]);
	/* deeper than 16 */
	char deep[64] = "";
	for (int i = 0; i < 20; i++)
		strcat(deep, "[");
	ck_assert(!mrec_parse(deep, strlen(deep), err, sizeof(err)));
}
END_TEST

START_TEST(test_facts)
{
	char err[200];
	json_object *nodes, *f = parse("{\"participants\":[{\"node\":\"g1\"},{\"node\":\"g1\"}]}");
	ck_assert_int_eq(mrec_facts(f, &nodes, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "participants[1]: node \"g1\" is declared twice");
	json_object_put(f);
	f = parse("{\"participants\":[{\"node\":\"g1\",\"kind\":\"local\"}]}");
	json_object *p = mrec_facts_participants(f, "b");
	ck_assert_str_eq(json_object_to_json_string_ext(p, JSON_C_TO_STRING_PLAIN |
								   JSON_C_TO_STRING_NOSLASHESCAPE),
			 "[{\"node\":\"b/g1\",\"kind\":\"local\",\"member\":\"b\"}]");
	json_object_put(p);
	json_object_put(f);
}
END_TEST

START_TEST(test_sample)
{
	struct mrec_units u;
	char err[300];
	json_object *nodes = nodes_of("{\"participants\":[{\"node\":\"g1\"}]}");
	mrec_units_init(&u);
	/* the leader's own line fixes the unit */
	const char *own = "{\"node\":\"g1\",\"benchmark\":\"cpu-probe\",\"iteration\":1,"
			  "\"metric\":\"ops\",\"value\":1,\"unit\":\"ops/s\",\"better\":\"higher\"}\n";
	mrec_units_note(&u, own, strlen(own));
	json_object *o =
		parse("{\"node\":\"g1\",\"benchmark\":\"cpu-probe\",\"iteration\":1,"
		      "\"metric\":\"ops\",\"value\":2.5,\"unit\":\"ops/s\",\"better\":\"higher\"}");
	ck_assert_int_eq(mrec_sample(o, "b", nodes, &u, err, sizeof(err)), 0);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(o, "node")), "b/g1");
	json_object_put(o);
	struct {
		const char *line, *why;
	} bad[] = {
		{ "{\"node\":\"g2\",\"benchmark\":\"x\",\"iteration\":1,\"failed\":true}",
		  "node \"g2\" is not one of the member's own nodes" },
		{ "{\"node\":\"g1\",\"benchmark\":\"cpu-probe\",\"iteration\":1,\"metric\":\"ops\","
		  "\"value\":1,\"unit\":\"furlongs\",\"better\":\"higher\"}",
		  "cpu-probe ops in \"furlongs\", better higher, but earlier lines say \"ops/s\"" },
		{ "{\"node\":\"g1\",\"benchmark\":\"c\",\"iteration\":1,\"metric\":\"m\","
		  "\"value\":\"1\",\"better\":\"higher\"}",
		  "no finite numeric \"value\"" },
		{ "{\"node\":\"g1\",\"benchmark\":\"c\",\"iteration\":1.5,\"metric\":\"m\","
		  "\"value\":1,\"better\":\"higher\"}",
		  "no integer \"iteration\"" },
		{ "{\"node\":\"g1\",\"benchmark\":\"c\",\"iteration\":1,\"metric\":\"m\","
		  "\"value\":1,\"better\":\"up\"}",
		  "\"better\" is not \"higher\" or \"lower\"" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o = parse(bad[i].line);
		ck_assert_int_eq(mrec_sample(o, "b", nodes, &u, err, sizeof(err)), -1);
		ck_assert_str_eq(err, bad[i].why);
		json_object_put(o);
	}
	/* a failure record's log is a file of the member's own folder */
	o = parse("{\"node\":\"g1\",\"benchmark\":\"x\",\"iteration\":1,\"failed\":true,"
		  "\"log\":\"nodes/g1/step-1.out\"}");
	ck_assert_int_eq(mrec_sample(o, "b", nodes, &u, err, sizeof(err)), 0);
	ck_assert(!json_object_object_get_ex(o, "log", NULL));
	ck_assert_str_eq(json_object_get_string(json_object_object_get(o, "member_log")),
			 "nodes/g1/step-1.out");
	json_object_put(o);
	mrec_units_fini(&u);
	json_object_put(nodes);
}
END_TEST

/* b's barrier record of step 2: g1 started at 1000, g2 at 1300 */
static json_object *b_summary(json_object *nodes, const char *host_clock)
{
	char text[600], err[300];
	json_object *s;
	uint32_t step;
	snprintf(text, sizeof(text),
		 "{\"step\":2,\"skew_ns\":300,\"skew_bound_ns\":0,\"clock_offsets\":{\"g1\":"
		 "{\"bound_ns\":10},\"g2\":{\"bound_ns\":20}},\"cluster\":{\"started_realtime_ns\":"
		 "{\"g1\":1000,\"g2\":1300},\"host_clock\":%s}}",
		 host_clock);
	json_object *o = parse(text);
	ck_assert_int_eq(mrec_barrier(o, "b", nodes, 5, &step, &s, err, sizeof(err)), 0);
	ck_assert_uint_eq(step, 2);
	json_object_put(o);
	return s;
}

/* The skew across the leader a (its g0 started at own_start, bound 5,
 * maxerror 7 us) and b (b_summary with b_clock). */
static json_object *across_of(json_object *nodes, int own_start, const char *b_clock)
{
	char text[300];
	snprintf(text, sizeof(text),
		 "{\"clock_offsets\":{\"g0\":{\"bound_ns\":5}},\"cluster\":{\"started_realtime_ns\":"
		 "{\"g0\":%d},\"host_clock\":{\"maxerror_us\":7}}}",
		 own_start);
	json_object *o = parse(text), *hosts = json_object_new_object();
	json_object_object_add(hosts, "a", mrec_own_summary(o));
	json_object_object_add(hosts, "b", b_summary(nodes, b_clock));
	json_object *x = mrec_across(hosts);
	json_object_put(hosts);
	json_object_put(o);
	return x;
}

START_TEST(test_barrier_and_across)
{
	char err[300];
	uint32_t step;
	json_object *s, *nodes = nodes_of("{\"participants\":[{\"node\":\"g1\"},{\"node\":\"g2\"}]}");
	json_object *o = parse("{\"step\":6,\"cluster\":{\"started_realtime_ns\":{}}}");
	ck_assert_int_eq(mrec_barrier(o, "b", nodes, 5, &step, &s, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "no \"step\" from 1 to 5");
	json_object_put(o);
	o = parse("{\"step\":1,\"cluster\":{\"started_realtime_ns\":{\"c/g1\":5}}}");
	ck_assert_int_eq(mrec_barrier(o, "b", nodes, 5, &step, &s, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "node \"c/g1\" is not a node name ([A-Za-z0-9._-], not starting with "
			      "'.', at most 63 bytes)");
	json_object_put(o);

	json_object *bs = b_summary(nodes, "{\"maxerror_us\":50,\"unsynchronised\":true}");
	ck_assert(mrec_unsynchronised(bs));
	ck_assert_int_eq(json_object_get_int64(
				 json_object_object_get(json_object_object_get(bs, "started_realtime_ns"),
							"b/g2")),
			 1300);
	json_object_put(bs);

	/* both ends on b: its own clock error cancels */
	json_object *x = across_of(nodes, 1100, "{\"maxerror_us\":50}");
	ck_assert_int_eq(json_object_get_int64(json_object_object_get(x, "skew_ns")), 300);
	ck_assert_int_eq(json_object_get_int64(json_object_object_get(x, "skew_bound_ns")), 30);
	json_object_put(x);

	/* the leader's node last: two hosts, both maxerrors added */
	x = across_of(nodes, 1400, "{\"maxerror_us\":50}");
	ck_assert_int_eq(json_object_get_int64(json_object_object_get(x, "skew_ns")), 400);
	ck_assert_int_eq(json_object_get_int64(json_object_object_get(x, "skew_bound_ns")),
			 10 + 5 + 50000 + 7000);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(x, "first")), "b/g1");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(x, "last")), "g0");
	json_object_put(x);

	/* a host whose clock error is unknown counts the kernel's largest */
	x = across_of(nodes, 1400, "{}");
	ck_assert_int_eq(json_object_get_int64(json_object_object_get(x, "skew_bound_ns")),
			 10 + 5 + MREC_MAXERROR_UNKNOWN_US * 1000LL + 7000);
	json_object_put(x);
	json_object_put(nodes);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("member-records");
	TCase *tc = tcase_create("member-records");
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_parse_refuses);
	tcase_add_test(tc, test_chunks);
	tcase_add_test(tc, test_facts);
	tcase_add_test(tc, test_sample);
	tcase_add_test(tc, test_barrier_and_across);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
