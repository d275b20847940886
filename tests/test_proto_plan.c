// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * proto: plans.  The optional monitor interval, a plan in parts, and a
 * step's command: allocated to its length, at most PROTO_COMMAND_MAX - 1
 * bytes each way, owned by its step.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "proto_testlib.h"
#include "testlib.h"

/* plan.monitor_interval_ms came after version 1 was out: optional, 0 is
 * "off" and is not written, so that an older agent sees the plan it knew. */
START_TEST(test_plan_monitor_interval)
{
	struct proto_buf b = { 0 };
	struct proto_msg m;
	struct rec r;

	sample(PROTO_PLAN, &m);
	ck_assert_int_eq(proto_encode(&m, &b), 0);
	ck_assert_ptr_null(strstr(text(&b), "monitor_interval_ms"));
	r = decode_line(text(&b));
	ck_assert_int_eq(r.e[0].ev, PROTO_EV_MSG);
	ck_assert_uint_eq(r.e[0].msg.u.plan.monitor_interval_ms, 0);
	rec_free(&r);
	proto_buf_free(&b);

	m.u.plan.monitor_interval_ms = 100;
	assert_roundtrip(&m);
	ck_assert_int_eq(proto_encode(&m, &b), 0);
	ck_assert_ptr_nonnull(strstr(text(&b), "\"monitor_interval_ms\":100"));
	proto_buf_free(&b);
	m.u.plan.monitor_interval_ms = PROTO_MONITOR_INTERVAL_MAX_MS;
	assert_roundtrip(&m);
	m.u.plan.monitor_interval_ms = PROTO_MONITOR_INTERVAL_MAX_MS + 1;
	ck_assert_int_eq(proto_encode(&m, &b), -EINVAL);
	ck_assert_uint_eq(b.len, 0);
	proto_msg_clear(&m);

	r = decode_line("{\"v\":1,\"type\":\"plan\",\"node\":\"n\",\"steps\":[],"
			"\"monitor_interval_ms\":3600001}\n");
	ck_assert_int_eq(r.e[0].ev, PROTO_EV_ERROR);
	ck_assert_str_eq(r.e[0].detail, "plan: \"monitor_interval_ms\" is 3600001, not in 0..3600000");
	rec_free(&r);
	r = decode_line("{\"v\":1,\"type\":\"plan\",\"node\":\"n\",\"steps\":[],"
			"\"monitor_interval_ms\":\"1s\"}\n");
	ck_assert_int_eq(r.e[0].ev, PROTO_EV_ERROR);
	ck_assert_int_eq(r.e[0].err, -EBADMSG);
	rec_free(&r);
}
END_TEST

/* A plan too long for one line goes as parts that put it back together;
 * a short plan stays one line without "total"; a part outside its plan is
 * refused. */
START_TEST(test_plan_in_parts)
{
	struct proto_msg m = { .type = PROTO_PLAN, .version = PROTO_VERSION };
	struct proto_buf b = { 0 };
	struct rec r = { 0 };
	const uint32_t n = 2000;

	snprintf(m.u.plan.node, sizeof(m.u.plan.node), "guest-1");
	m.u.plan.nsteps = n;
	m.u.plan.steps = calloc(n, sizeof(*m.u.plan.steps));
	for (uint32_t i = 0; i < n; i++) {
		struct proto_step *st = &m.u.plan.steps[i];
		st->index = i + 1;
		st->iteration = 1;
		snprintf(st->benchmark, sizeof(st->benchmark), "hackbench-process-pipes");
		st->kind = PROTO_STEP_COMMAND;
		char cmd[64];

		snprintf(cmd, sizeof(cmd), "hackbench -g %u -l 1000 --pipe", i);
		ck_assert_int_eq(proto_step_set_command(st, cmd), 0);
	}
	ck_assert_int_eq(proto_encode(&m, &b), -EINVAL); /* not in one line */
	ck_assert_int_eq(proto_encode_plan(&m, &b), 0);
	decode(b.data, b.len, &r);
	ck_assert_uint_gt(r.n, 1);
	uint32_t next = 1;
	for (size_t i = 0; i < r.n; i++) {
		const struct proto_msg *part = &r.e[i].msg;
		ck_assert_int_eq(r.e[i].ev, PROTO_EV_MSG);
		ck_assert_uint_eq(part->u.plan.total, n);
		ck_assert_uint_eq(part->u.plan.steps[0].index, next);
		for (uint32_t k = 0; k < part->u.plan.nsteps; k++)
			ck_assert_str_eq(part->u.plan.steps[k].command,
					 m.u.plan.steps[next - 1 + k].command);
		next += part->u.plan.nsteps;
	}
	ck_assert_uint_eq(next, n + 1);
	rec_free(&r);
	proto_buf_free(&b);

	m.u.plan.nsteps = 3; /* fits: one line, no "total" */
	ck_assert_int_eq(proto_encode_plan(&m, &b), 0);
	ck_assert_ptr_null(strstr(text(&b), "total"));
	proto_buf_free(&b);
	m.u.plan.nsteps = n; /* so that every command is freed */
	proto_msg_clear(&m);

	r = decode_line(
		"{\"v\":1,\"type\":\"plan\",\"node\":\"n\",\"total\":2,\"steps\":["
		"{\"index\":2,\"iteration\":1,\"benchmark\":\"b\",\"kind\":\"cpu-probe\",\"units\":1},"
		"{\"index\":3,\"iteration\":1,\"benchmark\":\"b\",\"kind\":\"cpu-probe\",\"units\":1}]}\n");
	ck_assert_int_eq(r.e[0].ev, PROTO_EV_ERROR);
	ck_assert_str_eq(r.e[0].detail,
			 "plan: a part of 2 steps from step 2 does not fit in \"total\" 2");
	rec_free(&r);
}
END_TEST

/* A step's command, at most PROTO_COMMAND_MAX - 1 bytes each way, is
 * allocated to its length and owned by its step. */
START_TEST(test_step_command)
{
	const size_t max = PROTO_COMMAND_MAX - 1;
	char *cmd = malloc(PROTO_COMMAND_MAX + 1), *line = malloc(PROTO_COMMAND_MAX + 256);
	struct proto_step st = { 0 }, copy;
	struct proto_msg m;
	struct rec r;

	ck_assert_ptr_nonnull(cmd);
	ck_assert_ptr_nonnull(line);
	memset(cmd, 'c', PROTO_COMMAND_MAX);
	cmd[PROTO_COMMAND_MAX] = '\0';

	/* set: a copy of at most max bytes, or nothing; the old one freed */
	ck_assert_int_eq(proto_step_set_command(&st, "true"), 0);
	ck_assert_str_eq(st.command, "true");
	ck_assert_int_eq(proto_step_set_command(&st, cmd), -EINVAL);
	ck_assert_str_eq(st.command, "true");
	cmd[max] = '\0';
	ck_assert_int_eq(proto_step_set_command(&st, cmd), 0);
	ck_assert_ptr_ne(st.command, cmd);
	ck_assert_uint_eq(strlen(st.command), max);
	proto_step_copy(&copy, &st);
	ck_assert_ptr_ne(copy.command, st.command);
	ck_assert_str_eq(copy.command, st.command);
	ck_assert_int_eq(proto_step_set_command(&st, NULL), 0);
	ck_assert_ptr_null(st.command);
	proto_step_copy(&st, &copy);
	free(copy.command);
	proto_step_copy(&copy, &(struct proto_step){ .kind = PROTO_STEP_CPU_PROBE });
	ck_assert_ptr_null(copy.command);

	/* the encoder takes max bytes, not one more */
	sample(PROTO_PLAN, &m);
	free(m.u.plan.steps[0].command);
	m.u.plan.steps[0].command = st.command;
	assert_roundtrip(&m);
	cmd[max] = 'c';
	free(m.u.plan.steps[0].command);
	m.u.plan.steps[0].command = strdup(cmd);
	ck_assert_ptr_nonnull(m.u.plan.steps[0].command);
	assert_refused(&m, "command of PROTO_COMMAND_MAX bytes");

	/* so does the decoder */
	for (size_t len = max; len <= max + 1; len++) {
		snprintf(line, PROTO_COMMAND_MAX + 256,
			 "{\"v\":1,\"type\":\"plan\",\"node\":\"n\",\"steps\":[{\"index\":1,"
			 "\"iteration\":1,\"benchmark\":\"b\",\"kind\":\"command\","
			 "\"command\":\"%.*s\"}]}\n",
			 (int)len, cmd);
		r = decode_line(line);
		if (len == max) {
			ck_assert_int_eq(r.e[0].ev, PROTO_EV_MSG);
			ck_assert_uint_eq(strlen(r.e[0].msg.u.plan.steps[0].command), max);
		} else {
			ck_assert_int_eq(r.e[0].ev, PROTO_EV_ERROR);
			ck_assert_str_eq(r.e[0].detail, "plan: steps[0]: \"command\" is 4096 bytes, "
							"over the limit of 4095");
		}
		rec_free(&r);
	}

	/* a cpu-probe carries none, even when the line has one */
	r = decode_line("{\"v\":1,\"type\":\"plan\",\"node\":\"n\",\"steps\":[{\"index\":1,"
			"\"iteration\":1,\"benchmark\":\"b\",\"kind\":\"cpu-probe\",\"units\":1,"
			"\"command\":\"true\"}]}\n");
	ck_assert_int_eq(r.e[0].ev, PROTO_EV_MSG);
	ck_assert_ptr_null(r.e[0].msg.u.plan.steps[0].command);
	rec_free(&r);

	/* a plan refused after some commands were read frees them (valgrind
	 * and ASan tell) */
	r = decode_line("{\"v\":1,\"type\":\"plan\",\"node\":\"n\",\"steps\":["
			"{\"index\":1,\"iteration\":1,\"benchmark\":\"b\",\"kind\":\"command\","
			"\"command\":\"true\"},"
			"{\"index\":2,\"iteration\":1,\"benchmark\":\"b\",\"kind\":\"command\","
			"\"command\":\"\"}]}\n");
	ck_assert_int_eq(r.e[0].ev, PROTO_EV_ERROR);
	rec_free(&r);

	free(cmd);
	free(line);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("proto-plan");
	TCase *tc = tcase_create("plan");

	tcase_add_test(tc, test_plan_monitor_interval);
	tcase_add_test(tc, test_plan_in_parts);
	tcase_add_test(tc, test_step_command);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
