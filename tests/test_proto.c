// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * proto: the messages.  Round trips of every type and limit, what the
 * encoder refuses, what the decoder refuses and why, bombs.  The byte
 * stream (splits, resets, long lines) and the link are in
 * test_proto_stream.c, plans (in parts, their commands) in
 * test_proto_plan.c.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "proto_impl.h" /* proto__buf_append() */
#include "proto_testlib.h"
#include "testlib.h"

/* The last message type there is. */
#define PROTO_LAST PROTO_MONITOR_OUTPUT

START_TEST(test_roundtrip_every_type)
{
	struct proto_msg m;

	for (enum proto_type t = PROTO_HELLO; t <= PROTO_LAST; t++) {
		sample(t, &m);
		assert_roundtrip(&m);
		proto_msg_clear(&m);
		ck_assert_int_eq(m.type, 0);
	}
}
END_TEST

START_TEST(test_wire_names)
{
	static const char *const names[] = { "hello",	      "sync",  "sync-ack", "plan",
					     "ready",	      "go",    "started",  "result",
					     "output",	      "done",  "sample",   "ping",
					     "pong",	      "error", "bye",	   "monitor",
					     "monitor-output" };

	for (enum proto_type t = PROTO_HELLO; t <= PROTO_LAST; t++)
		ck_assert_str_eq(proto_type_name(t), names[t - PROTO_HELLO]);
	ck_assert_str_eq(proto_type_name(0), "unknown");
	ck_assert_str_eq(proto_type_name(PROTO_LAST + 1), "unknown");
}
END_TEST

START_TEST(test_wire_form)
{
	struct proto_msg m;
	struct proto_buf b = { 0 };
	const char *want = "{\"v\":1,\"type\":\"result\",\"step\":3,\"metric\":\"time\","
			   "\"value\":1.25,\"unit\":\"s\",\"better\":\"lower\"}\n";

	sample(PROTO_RESULT, &m);
	ck_assert_int_eq(proto_encode(&m, &b), 0);
	ck_assert_uint_eq(b.len, strlen(want));
	ck_assert_mem_eq(b.data, want, b.len);
	proto_buf_free(&b);

	sample(PROTO_PLAN, &m);
	ck_assert_int_eq(proto_encode(&m, &b), 0);
	proto_msg_clear(&m);
	ck_assert_ptr_nonnull(strstr(b.data,
				     "{\"index\":2,\"iteration\":1,\"benchmark\":"
				     "\"cpu-probe\",\"kind\":\"cpu-probe\",\"units\":1000000}"));
	ck_assert_ptr_nonnull(strstr(b.data, "\"command\":\"echo \\\"a/b\\\" \\\\\\t\xc3\xa9"));
	proto_buf_free(&b);

	ck_assert_int_eq(proto_encode_reset_sync(42, &b), 0);
	ck_assert_uint_eq(b.len, 1 + strlen("{\"v\":1,\"type\":\"sync\",\"nonce\":42}\n"));
	ck_assert_int_eq((unsigned char)b.data[0], PROTO_RESET_BYTE);
	ck_assert_mem_eq(b.data + 1, "{\"v\":1,\"type\":\"sync\",\"nonce\":42}\n", b.len - 1);
	proto_buf_free(&b);
}
END_TEST

START_TEST(test_roundtrip_limits)
{
	struct proto_msg m;
	static const double values[] = { 0.0,	  -0.0,	  0.1,
					 -1.5e-7, 1e-320, 1.7976931348623157e308,
					 5.0,	  1e21,	  123456789.123456789 };

	sample(PROTO_SYNC, &m);
	m.u.sync.nonce = UINT64_MAX;
	assert_roundtrip(&m);
	m.u.sync.nonce = 0;
	assert_roundtrip(&m);

	sample(PROTO_DONE, &m);
	m.u.done.step = PROTO_STEPS_MAX;
	m.u.done.mono_ns = INT64_MAX;
	m.u.done.exit_status = INT32_MIN;
	assert_roundtrip(&m);

	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		sample(PROTO_SAMPLE, &m);
		m.u.sample.value = values[i];
		assert_roundtrip(&m);
	}

	/* every string at its longest: 63-byte name, 1023 bytes of UTF-8 */
	sample(PROTO_HELLO, &m);
	memset(m.u.hello.node, 'n', PROTO_NAME_MAX - 1);
	m.u.hello.node[PROTO_NAME_MAX - 1] = '\0';
	for (int i = 0; i < 511; i++)
		memcpy(m.u.hello.hostkey + 2 * i, "\xc3\xa9", 2);
	strcpy(m.u.hello.hostkey + 1022, "x");
	memset(m.u.hello.boot_id, 'b', PROTO_SHORT_MAX - 1);
	m.u.hello.proto_max = UINT32_MAX;
	assert_roundtrip(&m);

	/* output: PROTO_OUTPUT_MAX plain bytes, or a chunk of control bytes */
	sample(PROTO_OUTPUT, &m);
	m.u.output.data = realloc(m.u.output.data, PROTO_OUTPUT_MAX + 1);
	memset(m.u.output.data, 'a', PROTO_OUTPUT_MAX);
	m.u.output.len = PROTO_OUTPUT_MAX;
	assert_roundtrip(&m);
	memset(m.u.output.data, '\x01', PROTO_OUTPUT_CHUNK);
	m.u.output.len = PROTO_OUTPUT_CHUNK;
	assert_roundtrip(&m);
	m.u.output.len = 0;
	assert_roundtrip(&m);
	proto_msg_clear(&m);

	/* a plan without steps */
	sample(PROTO_PLAN, &m);
	proto_steps_free(m.u.plan.steps, m.u.plan.nsteps);
	m.u.plan.steps = NULL;
	m.u.plan.nsteps = 0;
	assert_roundtrip(&m);
}
END_TEST

START_TEST(test_encode_refuses)
{
	struct proto_msg m;

	sample(PROTO_READY, &m);
	m.type = 0;
	assert_refused(&m, "type 0");
	sample(PROTO_READY, &m);
	m.type = PROTO_LAST + 1;
	assert_refused(&m, "type past the enum");
	sample(PROTO_READY, &m);
	m.u.ready.step = 0;
	assert_refused(&m, "ready step 0");
	sample(PROTO_READY, &m);
	m.u.ready.step = PROTO_STEPS_MAX + 1;
	assert_refused(&m, "ready step over the limit");
	sample(PROTO_GO, &m);
	m.u.go.at_ns = -1;
	assert_refused(&m, "negative instant");
	sample(PROTO_RESULT, &m);
	strcpy(m.u.result.metric, "a/b");
	assert_refused(&m, "metric a/b");
	sample(PROTO_RESULT, &m);
	m.u.result.value = NAN;
	assert_refused(&m, "NaN");
	sample(PROTO_RESULT, &m);
	m.u.result.value = -INFINITY;
	assert_refused(&m, "-inf");
	sample(PROTO_RESULT, &m);
	strcpy(m.u.result.unit, "\xff");
	assert_refused(&m, "unit not UTF-8 (0xFF)");
	sample(PROTO_RESULT, &m);
	memset(m.u.result.unit, 'u', sizeof(m.u.result.unit));
	assert_refused(&m, "unit without its NUL");
	sample(PROTO_HELLO, &m);
	m.u.hello.proto_min = 2;
	assert_refused(&m, "proto_min over proto_max");
	sample(PROTO_ERROR, &m);
	m.u.error.code[0] = '\0';
	assert_refused(&m, "empty error code");
	sample(PROTO_PLAN, &m);
	m.u.plan.steps[2].index = 2;
	assert_refused(&m, "step indices not increasing");
	sample(PROTO_PLAN, &m);
	m.u.plan.steps[1].units = 0;
	assert_refused(&m, "cpu-probe of 0 units");
	sample(PROTO_PLAN, &m);
	m.u.plan.steps[0].command[0] = '\0';
	assert_refused(&m, "empty command");
	sample(PROTO_PLAN, &m);
	proto_step_set_command(&m.u.plan.steps[2], NULL);
	assert_refused(&m, "command step without a command");
	sample(PROTO_PLAN, &m);
	m.u.plan.steps[0].kind = 0;
	assert_refused(&m, "step kind 0");
	sample(PROTO_PLAN, &m);
	strcpy(m.u.plan.steps[0].benchmark, ".hidden");
	assert_refused(&m, "benchmark .hidden");
	sample(PROTO_OUTPUT, &m);
	m.u.output.data = realloc(m.u.output.data, PROTO_OUTPUT_MAX + 2);
	memset(m.u.output.data, 'a', PROTO_OUTPUT_MAX + 1);
	m.u.output.len = PROTO_OUTPUT_MAX + 1;
	assert_refused(&m, "output over PROTO_OUTPUT_MAX");
	sample(PROTO_OUTPUT, &m);
	m.u.output.data = realloc(m.u.output.data, PROTO_OUTPUT_MAX + 1);
	memset(m.u.output.data, '\x02', PROTO_OUTPUT_MAX);
	m.u.output.len = PROTO_OUTPUT_MAX;
	assert_refused(&m, "output whose escapes overflow the line");
	sample(PROTO_OUTPUT, &m);
	m.u.output.data[3] = (char)0xC0;
	assert_refused(&m, "output not UTF-8");
}
END_TEST

/* Lines that must be refused, with the error and a part of the detail. */
static const struct {
	const char *line;
	int err;
	const char *detail;
} refused[] = {
	{ "{\"v\":1,\"type\":\"ready\"}", -EBADMSG, "ready: missing \"step\"" },
	{ "{\"type\":\"ready\",\"step\":1}", -EBADMSG, "message: missing \"v\"" },
	{ "{\"v\":\"1\",\"type\":\"ready\",\"step\":1}", -EBADMSG, "\"v\" is a string" },
	{ "{\"v\":2,\"type\":\"ready\",\"step\":1}", -EPROTONOSUPPORT, "\"v\" is 2, this side speaks 1" },
	{ "{\"v\":0,\"type\":\"ready\",\"step\":1}", -EPROTONOSUPPORT, "\"v\" is 0" },
	{ "{\"v\":1,\"step\":1}", -EBADMSG, "message: missing \"type\"" },
	{ "{\"v\":1,\"type\":7}", -EBADMSG, "\"type\" is an integer, not a string" },
	{ "{\"v\":1,\"type\":\"frobnicate\",\"step\":1}", -ENOMSG, "unknown type \"frobnicate\"" },
	{ "{\"v\":1,\"type\":\"READY\",\"step\":1}", -ENOMSG, "unknown type \"READY\"" },
	{ "{\"v\":1,\"type\":\"ready\\u0000x\",\"step\":1}", -ENOMSG, "unknown type \"ready\\x00x\"" },
	{ "{\"v\":1,\"type\":\"ready\",\"step\":\"3\"}", -EBADMSG,
	  "ready: \"step\" is a string, not an integer" },
	{ "{\"v\":1,\"type\":\"ready\",\"step\":3.0}", -EBADMSG, "\"step\" is a float, not an integer" },
	{ "{\"v\":1,\"type\":\"ready\",\"step\":null}", -EBADMSG, "\"step\" is null, not an integer" },
	{ "{\"v\":1,\"type\":\"ready\",\"step\":true}", -EBADMSG, "\"step\" is a boolean" },
	{ "{\"v\":1,\"type\":\"ready\",\"step\":-1}", -EBADMSG, "ready: \"step\" is -1, not in 1..4096" },
	{ "{\"v\":1,\"type\":\"ready\",\"step\":0}", -EBADMSG, "\"step\" is 0, not in 1..4096" },
	{ "{\"v\":1,\"type\":\"ready\",\"step\":4097}", -EBADMSG, "\"step\" is 4097, not in 1..4096" },
	{ "{\"v\":1,\"type\":\"ready\",\"step\":9223372036854775808}", -EBADMSG,
	  "\"step\" is 9223372036854775808" },
	{ "{\"v\":1,\"type\":\"ready\",\"step\":18446744073709551616}", -EBADMSG,
	  "integer at byte 29 is out of 64-bit range" },
	{ "{\"v\":1,\"type\":\"ready\",\"step\":-9223372036854775809}", -EBADMSG, "out of 64-bit range" },
	{ "{\"v\":1,\"type\":\"go\",\"step\":1,\"at_ns\":9223372036854775808}", -EBADMSG,
	  "\"at_ns\" is 9223372036854775808" },
	{ "{\"v\":1,\"type\":\"go\",\"step\":1,\"at_ns\":-5}", -EBADMSG, "go: \"at_ns\" is -5" },
	{ "{\"v\":1,\"type\":\"sync\",\"nonce\":-1}", -EBADMSG, "sync: \"nonce\" is -1" },
	{ "{\"v\":1,\"type\":\"sync\",\"nonce\":1.5}", -EBADMSG, "\"nonce\" is a float" },
	{ "{\"v\":1,\"type\":\"done\",\"step\":1,\"mono_ns\":1,\"exit_status\":2147483648}",
	  -EBADMSG, "\"exit_status\" is 2147483648" },
	{ "{\"v\":1,\"type\":\"result\",\"step\":1,\"metric\":\"t\",\"value\":\"x\",\"unit\":\"s\",\"better\":\"lower\"}",
	  -EBADMSG, "\"value\" is a string, not a number" },
	{ "{\"v\":1,\"type\":\"result\",\"step\":1,\"metric\":\"t\",\"value\":1e400,\"unit\":\"s\",\"better\":\"lower\"}",
	  -EBADMSG, "\"value\" is not a finite number" },
	{ "{\"v\":1,\"type\":\"result\",\"step\":1,\"metric\":\"t\",\"value\":NaN,\"unit\":\"s\",\"better\":\"lower\"}",
	  -EBADMSG, "\"value\" is not a finite number" },
	{ "{\"v\":1,\"type\":\"result\",\"step\":1,\"metric\":\"t\",\"value\":1,\"unit\":\"s\",\"better\":\"maybe\"}",
	  -EBADMSG, "\"better\" is \"maybe\", not \"higher\" or \"lower\"" },
	{ "{\"v\":1,\"type\":\"result\",\"step\":1,\"metric\":\"a/b\",\"value\":1,\"unit\":\"s\",\"better\":\"lower\"}",
	  -EBADMSG, "\"metric\" is \"a/b\", not a name" },
	{ "{\"v\":1,\"type\":\"result\",\"step\":1,\"metric\":\".x\",\"value\":1,\"unit\":\"s\",\"better\":\"lower\"}",
	  -EBADMSG, "not a name" },
	{ "{\"v\":1,\"type\":\"result\",\"step\":1,\"metric\":\"\",\"value\":1,\"unit\":\"s\",\"better\":\"lower\"}",
	  -EBADMSG, "not a name" },
	{ "{\"v\":1,\"type\":\"result\",\"step\":1,\"metric\":\"t\",\"value\":1,\"unit\":\"s\\u0000x\",\"better\":\"lower\"}",
	  -EBADMSG, "\"unit\" holds U+0000 at byte 1" },
	{ "{\"v\":1,\"type\":\"result\",\"step\":1,\"metric\":\"t\",\"value\":1,\"unit\":\"123456789012345678901234567890123456789012345678\",\"better\":\"lower\"}",
	  -EBADMSG, "\"unit\" is 48 bytes, over the limit of 47" },
	{ "{\"v\":1,\"type\":\"hello\",\"node\":\"n\",\"agent_version\":\"1\",\"proto_min\":2,\"proto_max\":1,\"boot_id\":\"\",\"clocksource\":\"tsc\",\"hostkey\":\"\",\"step\":0}",
	  -EBADMSG, "hello: \"proto_min\" 2 is over \"proto_max\" 1" },
	{ "{\"v\":1,\"type\":\"plan\",\"node\":\"n\",\"steps\":\"x\"}", -EBADMSG,
	  "plan: \"steps\" is a string, not an array" },
	{ "{\"v\":1,\"type\":\"plan\",\"node\":\"n\",\"steps\":[1]}", -EBADMSG,
	  "plan: steps[0]: an integer, not an object" },
	{ "{\"v\":1,\"type\":\"plan\",\"node\":\"n\",\"steps\":[{\"index\":1,\"iteration\":1,\"kind\":\"command\",\"command\":\"true\"}]}",
	  -EBADMSG, "plan: steps[0]: missing \"benchmark\"" },
	{ "{\"v\":1,\"type\":\"plan\",\"node\":\"n\",\"steps\":[{\"index\":1,\"iteration\":1,\"benchmark\":\"b\",\"kind\":\"shell\"}]}",
	  -EBADMSG, "steps[0]: \"kind\" is \"shell\", not \"cpu-probe\" or \"command\"" },
	{ "{\"v\":1,\"type\":\"plan\",\"node\":\"n\",\"steps\":[{\"index\":1,\"iteration\":1,\"benchmark\":\"b\",\"kind\":\"command\",\"units\":5}]}",
	  -EBADMSG, "steps[0]: missing \"command\"" },
	{ "{\"v\":1,\"type\":\"plan\",\"node\":\"n\",\"steps\":[{\"index\":1,\"iteration\":1,\"benchmark\":\"b\",\"kind\":\"cpu-probe\"}]}",
	  -EBADMSG, "steps[0]: missing \"units\"" },
	{ "{\"v\":1,\"type\":\"plan\",\"node\":\"n\",\"steps\":[{\"index\":1,\"iteration\":1,\"benchmark\":\"b\",\"kind\":\"cpu-probe\",\"units\":0}]}",
	  -EBADMSG, "\"units\" is 0" },
	{ "{\"v\":1,\"type\":\"plan\",\"node\":\"n\",\"steps\":[{\"index\":1,\"iteration\":1,\"benchmark\":\"b\",\"kind\":\"command\",\"command\":\"\"}]}",
	  -EBADMSG, "\"command\" is empty" },
	{ "{\"v\":1,\"type\":\"plan\",\"node\":\"n\",\"steps\":[{\"index\":2,\"iteration\":1,\"benchmark\":\"b\",\"kind\":\"cpu-probe\",\"units\":1},{\"index\":2,\"iteration\":1,\"benchmark\":\"b\",\"kind\":\"cpu-probe\",\"units\":1}]}",
	  -EBADMSG, "plan: steps[1]: \"index\" 2 does not follow 2" },
	{ "{\"v\":1,\"type\":\"error\",\"step\":0,\"code\":\"\",\"text\":\"\"}", -EBADMSG,
	  "error: \"code\" is empty" },
	{ "hello", -EBADMSG, "line: not JSON" },
	{ "[1,2]", -EBADMSG, "line: an array, not an object" },
	{ "null", -EBADMSG, "line: null, not an object" },
	{ "{\"v\":1,\"type\":\"ready\",\"step\\u0000x\" :1}", -EBADMSG,
	  "line: a member name holds U+0000 at byte 27" },
	{ "null x", -EBADMSG, "line: not JSON" },
	{ "12 ", -EBADMSG, "line: an integer, not an object" },
	{ "\"str\"", -EBADMSG, "line: a string, not an object" },
	{ "{\"v\":1", -EBADMSG, "line: not JSON: unexpected end of data at byte 6" },
	{ "{\"v\":1}x", -EBADMSG, "line: not JSON" },
	{ "{\"v\":1,}", -EBADMSG, "line: not JSON" },
	{ "{'v':1,'type':'ready','step':1}", -EBADMSG, "line: not JSON: a quote ' at byte 1" },
	{ "{\"v\":1,\"type\":\"ready\",\"step\":1,\"x\":[[[[[[1]]]]]]}", -EBADMSG,
	  "line: not JSON: nesting too deep" },
};

START_TEST(test_refused)
{
	struct rec r;
	char line[1024];

	snprintf(line, sizeof(line), "%s\n", refused[_i].line);
	r = decode_line(line);
	ck_assert_int_eq(r.e[0].ev, PROTO_EV_ERROR);
	ck_assert_msg(r.e[0].err == refused[_i].err, "%s: err %d (%s), want %d", refused[_i].line,
		      r.e[0].err, r.e[0].detail, refused[_i].err);
	ck_assert_msg(strstr(r.e[0].detail, refused[_i].detail), "%s: detail \"%s\", want \"%s\"",
		      refused[_i].line, r.e[0].detail, refused[_i].detail);
	rec_free(&r);
}
END_TEST

START_TEST(test_missing_field_detail)
{
	struct rec r = decode_line("{\"v\":1,\"type\":\"ready\"}\n");

	ck_assert_str_eq(r.e[0].detail, "ready: missing \"step\"");
	rec_free(&r);
}
END_TEST

START_TEST(test_nul_byte)
{
	static const char in[] = "{\"v\":1,\"type\":\"ready\",\"step\":1}\0\n";
	struct rec r = { 0 };

	decode(in, sizeof(in) - 1, &r);
	ck_assert_uint_eq(r.n, 1);
	ck_assert_int_eq(r.e[0].err, -EBADMSG);
	ck_assert_str_eq(r.e[0].detail, "line: a NUL byte at byte 31");
	rec_free(&r);
}
END_TEST

/* A ready line with n members in all (v, type and step among them), or n
 * members in an unknown nested object. */
static char *wide_line(int n, bool nested)
{
	struct proto_buf b = { 0 };
	char m[32];

	append(&b, "{\"v\":1,\"type\":\"ready\",\"step\":1");
	if (nested)
		append(&b, ",\"x\":{\"a\":0");
	for (int i = nested ? 1 : 3; i < n; i++) {
		snprintf(m, sizeof(m), ",\"m%d\":%d", i, i);
		append(&b, m);
	}
	append(&b, nested ? "}}\n" : "}\n");
	text(&b);
	return b.data;
}

START_TEST(test_bombs)
{
	struct rec r;
	char *line;
	struct proto_buf b = { 0 };

	line = wide_line(PROTO_FIELDS_MAX, false);
	r = decode_line(line);
	ck_assert_int_eq(r.e[0].ev, PROTO_EV_MSG);
	rec_free(&r);
	free(line);
	line = wide_line(PROTO_FIELDS_MAX + 1, false);
	r = decode_line(line);
	ck_assert_int_eq(r.e[0].err, -EBADMSG);
	ck_assert_str_eq(r.e[0].detail, "message: an object has 65 members, over the limit of 64");
	rec_free(&r);
	free(line);
	line = wide_line(PROTO_FIELDS_MAX + 1, true);
	r = decode_line(line);
	ck_assert_str_eq(r.e[0].detail, "message: an object has 65 members, over the limit of 64");
	rec_free(&r);
	free(line);

	/* an array past PROTO_STEPS_MAX, in an unknown field or as the steps */
	append(&b, "{\"v\":1,\"type\":\"plan\",\"node\":\"n\",\"steps\":[{}");
	for (int i = 0; i < PROTO_STEPS_MAX; i++)
		append(&b, ",{}");
	append(&b, "]}\n");
	r = decode_line(text(&b));
	ck_assert_str_eq(r.e[0].detail, "message: an array has 4097 entries, over the limit of 4096");
	rec_free(&r);
	proto_buf_free(&b);

	/* deep nesting, within the line limit */
	append(&b, "{\"v\":1,\"type\":\"ready\",\"step\":1,\"x\":");
	for (int i = 0; i < 20000; i++)
		append(&b, "[");
	append(&b, "\n");
	r = decode_line(text(&b));
	ck_assert_int_eq(r.e[0].err, -EBADMSG);
	ck_assert_ptr_nonnull(strstr(r.e[0].detail, "nesting too deep"));
	rec_free(&r);
	proto_buf_free(&b);
}
END_TEST

START_TEST(test_unknown_fields_ignored)
{
	struct rec r = decode_line("{\"type\":\"ready\",\"future\":{\"a\":[1,2,{\"b\":null}]},"
				   "\"step\":7,\"v\":1,\"z\":\"\\u00e9\\u0000\", \"\\\\u0000\":1}\n");

	ck_assert_int_eq(r.e[0].ev, PROTO_EV_MSG);
	ck_assert_int_eq(r.e[0].msg.type, PROTO_READY);
	ck_assert_uint_eq(r.e[0].msg.u.ready.step, 7);
	rec_free(&r);
}
END_TEST

START_TEST(test_duplicate_ready)
{
	static const char in[] = "{\"v\":1,\"type\":\"ready\",\"step\":5}\n"
				 "{\"v\":1,\"type\":\"ready\",\"step\":5}\n";
	struct rec r = { 0 };

	decode(in, sizeof(in) - 1, &r);
	ck_assert_uint_eq(r.n, 2);
	ck_assert_int_eq(r.e[0].ev, PROTO_EV_MSG);
	ck_assert_int_eq(r.e[1].ev, PROTO_EV_MSG);
	ck_assert(proto_msg_equal(&r.e[0].msg, &r.e[1].msg));
	ck_assert_uint_eq(r.e[1].msg.u.ready.step, 5);
	rec_free(&r);
}
END_TEST

/* The callback keeps the steps of a plan and the data of an output. */
START_TEST(test_take_ownership)
{
	struct proto_buf b = { 0 };
	struct proto_msg m;
	struct rec r = { 0 };

	sample(PROTO_PLAN, &m);
	proto_encode(&m, &b);
	proto_msg_clear(&m);
	sample(PROTO_OUTPUT, &m);
	proto_encode(&m, &b);
	proto_msg_clear(&m);
	decode(b.data, b.len, &r);
	ck_assert_uint_eq(r.n, 2);
	ck_assert_uint_eq(r.e[0].msg.u.plan.nsteps, 3);
	ck_assert_str_eq(r.e[0].msg.u.plan.steps[2].benchmark, "hackbench");
	ck_assert_uint_eq(r.e[0].msg.u.plan.steps[1].units, 1000000);
	ck_assert_str_eq(r.e[0].msg.u.plan.steps[0].command, "hackbench -g 4 -l 1000");
	ck_assert_ptr_null(r.e[0].msg.u.plan.steps[1].command);
	ck_assert_uint_eq(r.e[1].msg.u.output.len, output_data_len);
	ck_assert_mem_eq(r.e[1].msg.u.output.data, output_data, output_data_len + 1);
	rec_free(&r);
	proto_buf_free(&b);
}
END_TEST

START_TEST(test_name_valid)
{
	char longest[PROTO_NAME_MAX], over[PROTO_NAME_MAX + 1];

	memset(longest, 'a', sizeof(longest) - 1);
	longest[sizeof(longest) - 1] = '\0';
	memset(over, 'a', sizeof(over) - 1);
	over[sizeof(over) - 1] = '\0';
	ck_assert(proto_name_valid("guest-1"));
	ck_assert(proto_name_valid("cpu.user_time-2"));
	ck_assert(proto_name_valid("a..b"));
	ck_assert(proto_name_valid(longest));
	ck_assert(!proto_name_valid(over));
	ck_assert(!proto_name_valid(""));
	ck_assert(!proto_name_valid(NULL));
	ck_assert(!proto_name_valid("."));
	ck_assert(!proto_name_valid(".."));
	ck_assert(!proto_name_valid(".hidden"));
	ck_assert(!proto_name_valid("a/b"));
	ck_assert(!proto_name_valid("a b"));
	ck_assert(!proto_name_valid("\xc3\xa9"));
}
END_TEST

START_TEST(test_buf)
{
	struct proto_buf b = { 0 };

	proto_buf_consume(&b, 0);
	for (int i = 0; i < 1000; i++)
		proto__buf_append(&b, "0123456789", 10);
	ck_assert_uint_eq(b.len, 10000);
	ck_assert_uint_ge(b.cap, b.len);
	proto_buf_consume(&b, 9995);
	ck_assert_uint_eq(b.len, 5);
	ck_assert_mem_eq(b.data, "56789", 5);
	proto_buf_consume(&b, 5);
	ck_assert_uint_eq(b.len, 0);
	proto_buf_free(&b);
	ck_assert_ptr_null(b.data);
	proto_buf_free(NULL);
}
END_TEST

/* The external monitors' two messages: the host's "monitor" (one per
 * monitor, index within count) and the agent's "monitor-output". */
START_TEST(test_monitor_messages)
{
	struct proto_msg m;
	struct proto_buf b = { 0 };
	struct rec r;

	sample(PROTO_MONITOR, &m);
	ck_assert_int_eq(proto_encode(&m, &b), 0);
	ck_assert_str_eq(text(&b), "{\"v\":1,\"type\":\"monitor\",\"index\":2,\"count\":3,"
				   "\"name\":\"vmstat\",\"command\":\"vmstat -n -t 1\"}\n");
	proto_buf_free(&b);
	/* the limits */
	m.u.monitor.index = m.u.monitor.count = PROTO_MONITORS_MAX;
	memset(m.u.monitor.command, 'c', PROTO_TEXT_MAX - 1);
	m.u.monitor.command[PROTO_TEXT_MAX - 1] = '\0';
	assert_roundtrip(&m);
	m.u.monitor.count = PROTO_MONITORS_MAX + 1;
	assert_refused(&m, "more monitors than PROTO_MONITORS_MAX");
	sample(PROTO_MONITOR, &m);
	m.u.monitor.index = 4;
	assert_refused(&m, "index over count");
	sample(PROTO_MONITOR, &m);
	m.u.monitor.index = 0;
	assert_refused(&m, "index 0");
	sample(PROTO_MONITOR, &m);
	strcpy(m.u.monitor.name, "../x");
	assert_refused(&m, "monitor name ../x");
	sample(PROTO_MONITOR, &m);
	m.u.monitor.command[0] = '\0';
	assert_refused(&m, "empty command");

	sample(PROTO_MONITOR_OUTPUT, &m);
	assert_encoded(&m,
		       "\"type\":\"monitor-output\",\"step\":3,"
		       "\"monitor\":\"vmstat\",\"data\":",
		       true);
	m.u.monitor_output.data = realloc(m.u.monitor_output.data, PROTO_OUTPUT_MAX + 2);
	memset(m.u.monitor_output.data, 'a', PROTO_OUTPUT_MAX + 1);
	m.u.monitor_output.len = PROTO_OUTPUT_MAX;
	assert_roundtrip(&m);
	m.u.monitor_output.len = PROTO_OUTPUT_MAX + 1;
	ck_assert_int_eq(proto_encode(&m, &b), -EINVAL);
	m.u.monitor_output.len = 1;
	m.u.monitor_output.step = 0;
	ck_assert_int_eq(proto_encode(&m, &b), -EINVAL);
	m.u.monitor_output.step = 1;
	strcpy(m.u.monitor_output.monitor, "a/b");
	ck_assert_int_eq(proto_encode(&m, &b), -EINVAL);
	ck_assert_uint_eq(b.len, 0);
	proto_msg_clear(&m);

	/* what a peer may send: refused with the field named */
	r = decode_line("{\"v\":1,\"type\":\"monitor\",\"index\":3,\"count\":2,"
			"\"name\":\"vmstat\",\"command\":\"vmstat\"}\n");
	ck_assert_int_eq(r.e[0].ev, PROTO_EV_ERROR);
	ck_assert_int_eq(r.e[0].err, -EBADMSG);
	ck_assert_ptr_nonnull(strstr(r.e[0].detail, "index"));
	rec_free(&r);
	assert_decode_error("{\"v\":1,\"type\":\"monitor\",\"index\":1,\"count\":9,"
			    "\"name\":\"vmstat\",\"command\":\"vmstat\"}\n",
			    "count");
	assert_decode_error("{\"v\":1,\"type\":\"monitor-output\",\"step\":1,"
			    "\"monitor\":\"../../etc\",\"data\":\"x\"}\n",
			    "monitor");
	r = decode_line("{\"v\":1,\"type\":\"monitor-output\",\"step\":2,"
			"\"monitor\":\"mpstat\",\"data\":\"a\\u0000b\"}\n");
	ck_assert_int_eq(r.e[0].ev, PROTO_EV_MSG);
	ck_assert_uint_eq(r.e[0].msg.u.monitor_output.step, 2);
	ck_assert_str_eq(r.e[0].msg.u.monitor_output.monitor, "mpstat");
	ck_assert_uint_eq(r.e[0].msg.u.monitor_output.len, 3);
	ck_assert_mem_eq(r.e[0].msg.u.monitor_output.data, "a\0b", 3);
	rec_free(&r);
}
END_TEST

/* pong's KVM PTP reading came after version 1 was out: optional, all four
 * fields or none, absent from the line when not set, so that an older hostd
 * sees the pong it knew and an older agent's pong still decodes. */
START_TEST(test_pong_ptp_reading)
{
	struct proto_buf b = { 0 };
	struct proto_msg m;
	struct rec r;

	sample(PROTO_PONG, &m);
	ck_assert_int_eq(proto_encode(&m, &b), 0);
	ck_assert_ptr_null(strstr(text(&b), "ptp_"));
	r = decode_line(text(&b));
	ck_assert_int_eq(r.e[0].ev, PROTO_EV_MSG);
	ck_assert_int_eq(r.e[0].msg.u.ping.ptp_window_ns, 0);
	rec_free(&r);
	proto_buf_free(&b);

	m.u.ping.ptp_mono_ns = 155;
	m.u.ping.ptp_real_ns = 1700000000123456789LL;
	m.u.ping.ptp_host_real_ns = 1700000000123459999LL;
	m.u.ping.ptp_window_ns = 1;
	assert_roundtrip(&m);
	assert_encoded(&m,
		       "\"ptp_mono_ns\":155,\"ptp_real_ns\":"
		       "1700000000123456789,\"ptp_host_real_ns\":1700000000123459999,"
		       "\"ptp_window_ns\":1}",
		       true);
	m.u.ping.ptp_mono_ns = m.u.ping.ptp_real_ns = m.u.ping.ptp_host_real_ns = INT64_MAX;
	m.u.ping.ptp_window_ns = PROTO_PTP_WINDOW_MAX_NS;
	assert_roundtrip(&m);

	/* a part of a reading cannot be converted: refused both ways */
	m.u.ping.ptp_window_ns = 0;
	ck_assert_int_eq(proto_encode(&m, &b), -EINVAL);
	m.u.ping.ptp_window_ns = PROTO_PTP_WINDOW_MAX_NS + 1;
	ck_assert_int_eq(proto_encode(&m, &b), -EINVAL);
	m.u.ping.ptp_window_ns = 5;
	m.u.ping.ptp_host_real_ns = -1;
	ck_assert_int_eq(proto_encode(&m, &b), -EINVAL);
	ck_assert_uint_eq(b.len, 0);
	proto_msg_clear(&m);

	r = decode_line("{\"v\":1,\"type\":\"pong\",\"seq\":1,\"t1\":1,\"t2\":2,\"t3\":3,"
			"\"ptp_mono_ns\":2,\"ptp_real_ns\":5,\"ptp_host_real_ns\":6}\n");
	ck_assert_int_eq(r.e[0].ev, PROTO_EV_ERROR);
	ck_assert_int_eq(r.e[0].err, -EBADMSG);
	ck_assert_str_eq(r.e[0].detail, "pong: 3 of the 4 \"ptp_*\" fields are set: all or none");
	rec_free(&r);
	assert_decode_error("{\"v\":1,\"type\":\"pong\",\"seq\":1,\"t1\":1,\"t2\":2,\"t3\":3,"
			    "\"ptp_mono_ns\":2,\"ptp_real_ns\":5,\"ptp_host_real_ns\":6,"
			    "\"ptp_window_ns\":1000000001}\n",
			    "\"ptp_window_ns\" is 1000000001");
	assert_decode_error("{\"v\":1,\"type\":\"pong\",\"seq\":1,\"t1\":1,\"t2\":2,\"t3\":3,"
			    "\"ptp_mono_ns\":2,\"ptp_real_ns\":-5,\"ptp_host_real_ns\":6,"
			    "\"ptp_window_ns\":1}\n",
			    "\"ptp_real_ns\" is -5");
	/* a ping carries no reading: the fields are not read there */
	r = decode_line("{\"v\":1,\"type\":\"ping\",\"seq\":1,\"t1\":1,\"ptp_window_ns\":7}\n");
	ck_assert_int_eq(r.e[0].ev, PROTO_EV_MSG);
	ck_assert_int_eq(r.e[0].msg.u.ping.ptp_window_ns, 0);
	rec_free(&r);
}
END_TEST

/* started's timing: optional, so that an older agent's started decodes
 * (all zero) and a newer one's round-trips; out of range is refused. */
START_TEST(test_started_timing)
{
	struct proto_msg m;
	struct rec r;

	sample(PROTO_STARTED, &m);
	assert_encoded(&m, "_go_ns", false);
	assert_encoded(&m, "runq_ns", false);
	r = decode_line("{\"v\":1,\"type\":\"started\",\"step\":2,\"mono_ns\":900,"
			"\"late_ns\":0}\n");
	ck_assert_int_eq(r.e[0].ev, PROTO_EV_MSG);
	ck_assert_int_eq(r.e[0].msg.u.started.mono_ns, 900);
	ck_assert_int_eq(r.e[0].msg.u.started.agent_go_ns, 0);
	ck_assert_int_eq(r.e[0].msg.u.started.child_go_ns, 0);
	ck_assert_int_eq(r.e[0].msg.u.started.runq_ns, 0);
	rec_free(&r);

	m.u.started.agent_go_ns = 700;
	m.u.started.child_go_ns = 750;
	m.u.started.runq_ns = 42;
	assert_roundtrip(&m);
	assert_encoded(&m,
		       "\"agent_go_ns\":700,\"child_go_ns\":750,"
		       "\"runq_ns\":42}",
		       true);

	r = decode_line("{\"v\":1,\"type\":\"started\",\"step\":2,\"mono_ns\":900,"
			"\"late_ns\":0,\"agent_go_ns\":800,\"child_go_ns\":850,\"runq_ns\":0}\n");
	ck_assert_int_eq(r.e[0].ev, PROTO_EV_MSG);
	ck_assert_int_eq(r.e[0].msg.u.started.agent_go_ns, 800);
	ck_assert_int_eq(r.e[0].msg.u.started.child_go_ns, 850);
	rec_free(&r);
	assert_decode_error("{\"v\":1,\"type\":\"started\",\"step\":2,\"mono_ns\":900,"
			    "\"late_ns\":0,\"runq_ns\":-1}\n",
			    "\"runq_ns\" is -1");
	assert_decode_error("{\"v\":1,\"type\":\"started\",\"step\":2,\"mono_ns\":900,"
			    "\"late_ns\":0,\"agent_go_ns\":\"soon\"}\n",
			    "agent_go_ns");
	assert_decode_error("{\"v\":1,\"type\":\"started\",\"step\":2,\"mono_ns\":900,"
			    "\"late_ns\":0,\"child_go_ns\":1e30}\n",
			    NULL);
	proto_msg_clear(&m);
}
END_TEST

/* hello's kernel (issue 15) came after version 1: optional, absent from
 * the line when "", so that an older hostd sees the hello it knew and an
 * older agent's hello decodes with kernel "". */
START_TEST(test_hello_kernel)
{
	struct proto_msg m;
	struct rec r;

	sample(PROTO_HELLO, &m);
	m.u.hello.kernel[0] = '\0';
	assert_encoded(&m, "kernel", false);
	r = decode_line("{\"v\":1,\"type\":\"hello\",\"node\":\"n\",\"agent_version\":\"1\","
			"\"proto_min\":1,\"proto_max\":1,\"boot_id\":\"\",\"clocksource\":\"tsc\","
			"\"hostkey\":\"\",\"step\":0}\n");
	ck_assert_int_eq(r.e[0].ev, PROTO_EV_MSG);
	ck_assert_str_eq(r.e[0].msg.u.hello.kernel, "");
	rec_free(&r);
	strcpy(m.u.hello.kernel, "6.1.0-18-amd64");
	assert_roundtrip(&m);
	assert_encoded(&m, "\"kernel\":\"6.1.0-18-amd64\"}", true);
	memset(m.u.hello.kernel, 'k', PROTO_KERNEL_MAX - 1); /* uname's longest */
	m.u.hello.kernel[PROTO_KERNEL_MAX - 1] = '\0';
	assert_roundtrip(&m);
	assert_decode_error("{\"v\":1,\"type\":\"hello\",\"node\":\"n\",\"agent_version\":\"1\","
			    "\"proto_min\":1,\"proto_max\":1,\"boot_id\":\"\",\"clocksource\":\"tsc\","
			    "\"hostkey\":\"\",\"step\":0,\"kernel\":7}\n",
			    "kernel");
	proto_msg_clear(&m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("proto");
	TCase *tc = tcase_create("proto");

	tcase_add_test(tc, test_roundtrip_every_type);
	tcase_add_test(tc, test_wire_names);
	tcase_add_test(tc, test_wire_form);
	tcase_add_test(tc, test_roundtrip_limits);
	tcase_add_test(tc, test_encode_refuses);
	tcase_add_loop_test(tc, test_refused, 0, sizeof(refused) / sizeof(refused[0]));
	tcase_add_test(tc, test_missing_field_detail);
	tcase_add_test(tc, test_nul_byte);
	tcase_add_test(tc, test_bombs);
	tcase_add_test(tc, test_unknown_fields_ignored);
	tcase_add_test(tc, test_duplicate_ready);
	tcase_add_test(tc, test_take_ownership);
	tcase_add_test(tc, test_monitor_messages);
	tcase_add_test(tc, test_pong_ptp_reading);
	tcase_add_test(tc, test_started_timing);
	tcase_add_test(tc, test_hello_kernel);
	tcase_add_test(tc, test_name_valid);
	tcase_add_test(tc, test_buf);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
