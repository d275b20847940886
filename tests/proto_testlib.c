// SPDX-License-Identifier: GPL-2.0-or-later
/* Shared by the proto tests: see proto_testlib.h. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "proto_impl.h" /* proto__buf_append() */
#include "proto_testlib.h"

void rec_fn(void *ctx, enum proto_event ev, struct proto_msg *msg, int err, const char *detail)
{
	struct rec *r = ctx;
	struct rec_event *e;

	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 16;
		r->e = realloc(r->e, r->cap * sizeof(*r->e));
		ck_assert_ptr_nonnull(r->e);
	}
	e = &r->e[r->n++];
	memset(e, 0, sizeof(*e));
	e->ev = ev;
	e->err = err;
	if (detail)
		snprintf(e->detail, sizeof(e->detail), "%s", detail);
	if (msg) {
		e->msg = *msg; /* take ownership, as the header says */
		if (msg->type == PROTO_PLAN)
			msg->u.plan.steps = NULL;
		else if (msg->type == PROTO_OUTPUT || msg->type == PROTO_MONITOR_OUTPUT)
			msg->u.output.data = NULL;
	}
}

void rec_free(struct rec *r)
{
	for (size_t i = 0; i < r->n; i++)
		proto_msg_clear(&r->e[i].msg);
	free(r->e);
	memset(r, 0, sizeof(*r));
}

void rec_assert_equal(const struct rec *a, const struct rec *b)
{
	ck_assert_uint_eq(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		ck_assert_int_eq(a->e[i].ev, b->e[i].ev);
		ck_assert_int_eq(a->e[i].err, b->e[i].err);
		ck_assert_str_eq(a->e[i].detail, b->e[i].detail);
		if (a->e[i].ev == PROTO_EV_MSG)
			ck_assert_msg(proto_msg_equal(&a->e[i].msg, &b->e[i].msg),
				      "event %zu: messages differ", i);
	}
}

void append(struct proto_buf *b, const char *s)
{
	proto__buf_append(b, s, strlen(s));
}

/* b's text as a C string */
const char *text(struct proto_buf *b)
{
	proto__buf_append(b, "", 1);
	b->len--;
	return b->data;
}

void decode(const void *data, size_t len, struct rec *r)
{
	struct proto_decoder d;

	proto_decoder_init(&d);
	proto_decoder_feed(&d, data, len, rec_fn, r);
	proto_decoder_free(&d);
}

/* The one event a line gives. */
struct rec decode_line(const char *line)
{
	struct rec r = { 0 };

	decode(line, strlen(line), &r);
	ck_assert_msg(r.n == 1, "%zu events from %s", r.n, line);
	return r;
}

const char output_data[] = "line 1\nline 2\ttab \"q\" \\ nul:\0 \xc3\xa9 \xf0\x9f\x98\x80 \x01\x7f";
const size_t output_data_len = sizeof(output_data) - 1;

/* A typical message of every type. */
void sample(enum proto_type t, struct proto_msg *m)
{
	struct proto_step *s;

	memset(m, 0, sizeof(*m));
	m->type = t;
	m->version = PROTO_VERSION;
	switch (t) {
	case PROTO_HELLO:
		strcpy(m->u.hello.node, "guest-1");
		strcpy(m->u.hello.agent_version, "0.1.0");
		m->u.hello.proto_min = m->u.hello.proto_max = 1;
		strcpy(m->u.hello.boot_id, "6f1c2a7e-0b4d-4c1e-9a55-3f0a1b2c3d4e");
		strcpy(m->u.hello.clocksource, "tsc");
		strcpy(m->u.hello.hostkey, "SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8/+=");
		break;
	case PROTO_SYNC:
	case PROTO_SYNC_ACK: m->u.sync.nonce = 0x123456789abcdef0ULL; break;
	case PROTO_PLAN:
		strcpy(m->u.plan.node, "guest-1");
		m->u.plan.nsteps = 3;
		s = m->u.plan.steps = calloc(3, sizeof(*s));
		ck_assert_ptr_nonnull(s);
		s[0] = (struct proto_step){ .index = 1, .iteration = 1, .kind = PROTO_STEP_COMMAND };
		strcpy(s[0].benchmark, "hackbench");
		ck_assert_int_eq(proto_step_set_command(&s[0], "hackbench -g 4 -l 1000"), 0);
		s[1] = (struct proto_step){
			.index = 2, .iteration = 1, .kind = PROTO_STEP_CPU_PROBE, .units = 1000000
		};
		strcpy(s[1].benchmark, "cpu-probe");
		s[2] = (struct proto_step){ .index = 4, .iteration = 2, .kind = PROTO_STEP_COMMAND };
		strcpy(s[2].benchmark, "hackbench");
		ck_assert_int_eq(proto_step_set_command(&s[2], "echo \"a/b\" \\\t\xc3\xa9 > /dev/null"),
				 0);
		break;
	case PROTO_READY: m->u.ready.step = 3; break;
	case PROTO_GO:
		m->u.go.step = 3;
		m->u.go.at_ns = 123456789012345;
		break;
	case PROTO_STARTED:
		m->u.started.step = 3;
		m->u.started.mono_ns = 1000;
		m->u.started.late_ns = 25;
		break;
	case PROTO_RESULT:
		m->u.result.step = 3;
		strcpy(m->u.result.metric, "time");
		m->u.result.value = 1.25;
		strcpy(m->u.result.unit, "s");
		break;
	case PROTO_OUTPUT:
		m->u.output.step = 3;
		m->u.output.len = output_data_len;
		m->u.output.data = malloc(output_data_len + 1);
		memcpy(m->u.output.data, output_data, output_data_len + 1);
		break;
	case PROTO_DONE:
		m->u.done.step = 3;
		m->u.done.mono_ns = 2000;
		m->u.done.exit_status = -1;
		break;
	case PROTO_SAMPLE:
		m->u.sample.mono_ns = 5;
		strcpy(m->u.sample.metric, "cpu.user");
		m->u.sample.value = 12.5;
		strcpy(m->u.sample.unit, "%");
		break;
	case PROTO_PING:
	case PROTO_PONG:
		m->u.ping.seq = 7;
		m->u.ping.t1 = 100;
		if (t == PROTO_PONG) {
			m->u.ping.t2 = 150;
			m->u.ping.t3 = 160;
		}
		break;
	case PROTO_ERROR:
		m->u.error.step = 2;
		strcpy(m->u.error.code, "ENOENT");
		strcpy(m->u.error.text, "no such file: /x");
		break;
	case PROTO_BYE: strcpy(m->u.bye.reason, "plan finished"); break;
	case PROTO_MONITOR:
		m->u.monitor.index = 2;
		m->u.monitor.count = 3;
		strcpy(m->u.monitor.name, "vmstat");
		strcpy(m->u.monitor.command, "vmstat -n -t 1");
		break;
	case PROTO_MONITOR_OUTPUT:
		m->u.monitor_output.step = 3;
		strcpy(m->u.monitor_output.monitor, "vmstat");
		m->u.monitor_output.len = output_data_len;
		m->u.monitor_output.data = malloc(output_data_len + 1);
		memcpy(m->u.monitor_output.data, output_data, output_data_len + 1);
		break;
	}
}

/* Encodes m, checks the line's shape, decodes it and checks it is m again. */
void assert_roundtrip(const struct proto_msg *m)
{
	struct proto_buf b = { 0 };
	struct rec r = { 0 };
	char head[64];

	ck_assert_int_eq(proto_encode(m, &b), 0);
	ck_assert_uint_ge(b.len, 2);
	ck_assert_uint_le(b.len, PROTO_LINE_MAX + 1);
	ck_assert_ptr_eq(memchr(b.data, '\n', b.len), b.data + b.len - 1);
	ck_assert_ptr_null(memchr(b.data, PROTO_RESET_BYTE, b.len));
	snprintf(head, sizeof(head), "{\"v\":1,\"type\":\"%s\"", proto_type_name(m->type));
	ck_assert_int_eq(strncmp(b.data, head, strlen(head)), 0);

	decode(b.data, b.len, &r);
	ck_assert_uint_eq(r.n, 1);
	ck_assert_int_eq(r.e[0].ev, PROTO_EV_MSG);
	ck_assert_uint_eq(r.e[0].msg.version, PROTO_VERSION);
	ck_assert_msg(proto_msg_equal(m, &r.e[0].msg), "round trip of %.*s", (int)b.len, b.data);
	rec_free(&r);
	proto_buf_free(&b);
}

/* A stream with every message type and every kind of trouble. */
void build_stream(struct proto_buf *b)
{
	struct proto_msg m;
	char *longline = malloc(PROTO_LINE_MAX + 100);

	for (enum proto_type t = PROTO_HELLO; t <= PROTO_BYE; t++) {
		sample(t, &m);
		ck_assert_int_eq(proto_encode(&m, b), 0);
		proto_msg_clear(&m);
	}
	append(b, "\n\n \t\ngarbage\n{\"v\":1,\"type\":\"ready\",\"step\":1}\r\n");
	append(b, "{\"v\":1,\"type\":\"rea\xff{\"v\":1,\"type\":\"ready\",\"step\":2}\n");
	append(b, "{\"v\":1,\"type\":\"bye\",\"reason\":\"\xc3\x28\"}\n");
	memset(longline, ' ', PROTO_LINE_MAX + 100);
	proto__buf_append(b, longline, PROTO_LINE_MAX + 100);
	proto__buf_append(b, "\n", 1);
	proto_encode_reset_sync(99, b);
	append(b, "{\"v\":2,\"type\":\"ready\",\"step\":1}\n{\"v\":1,\"type\":\"x\"}\n");
	sample(PROTO_PLAN, &m);
	ck_assert_int_eq(proto_encode(&m, b), 0);
	proto_msg_clear(&m);
	free(longline);
}

void assert_refused(struct proto_msg *m, const char *what)
{
	struct proto_buf b = { 0 };

	append(&b, "kept");
	ck_assert_msg(proto_encode(m, &b) == -EINVAL, "encoded: %s", what);
	ck_assert_uint_eq(b.len, 4);
	proto_buf_free(&b);
	proto_msg_clear(m);
}

void assert_decode_error(const char *line, const char *part)
{
	struct rec r = decode_line(line);

	ck_assert_msg(r.e[0].ev == PROTO_EV_ERROR, "%s decoded without an error", line);
	ck_assert_msg(!part || strstr(r.e[0].detail, part),
		      "%s: the error \"%s\" does not say \"%s\"", line, r.e[0].detail, part);
	rec_free(&r);
}

void assert_encoded(const struct proto_msg *m, const char *part, bool has)
{
	struct proto_buf b = { 0 };

	ck_assert_int_eq(proto_encode(m, &b), 0);
	ck_assert_msg(!strstr(text(&b), part) == !has, "%s %s \"%s\"", text(&b),
		      has ? "lacks" : "has", part);
	proto_buf_free(&b);
}
