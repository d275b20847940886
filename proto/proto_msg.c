// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The messages: their schema (names, fields, limits), and what goes with a
 * message but neither encodes nor decodes it: clearing, comparing, names,
 * the byte buffer.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto_impl.h"

#define MSG_OFF(member) offsetof(struct proto_msg, u.member)
#define MSG_SIZE(member) sizeof(((struct proto_msg *)0)->u.member)
#define STEP_OFF(member) offsetof(struct proto_step, member)
#define STEP_SIZE(member) sizeof(((struct proto_step *)0)->member)

/* A string field; min is its shortest length in bytes. */
#define STR(name, member, minlen)                                                 \
	{                                                                         \
		name, PROTO__STR, MSG_OFF(member), MSG_SIZE(member), minlen, 0, 0 \
	}
#define NAME(name, member)                                                    \
	{                                                                     \
		name, PROTO__NAME, MSG_OFF(member), MSG_SIZE(member), 0, 0, 0 \
	}
#define U32(name, member, lo, hi)                               \
	{                                                       \
		name, PROTO__U32, MSG_OFF(member), 0, lo, hi, 0 \
	}
#define I32(name, member, lo, hi)                               \
	{                                                       \
		name, PROTO__I32, MSG_OFF(member), 0, lo, hi, 0 \
	}
#define I64(name, member, lo, hi)                               \
	{                                                       \
		name, PROTO__I64, MSG_OFF(member), 0, lo, hi, 0 \
	}
#define U64(name, member)                                     \
	{                                                     \
		name, PROTO__U64, MSG_OFF(member), 0, 0, 0, 0 \
	}
#define DBL(name, member)                                        \
	{                                                        \
		name, PROTO__DOUBLE, MSG_OFF(member), 0, 0, 0, 0 \
	}
/* The step a message is about: 1-based, or 0 too where "none" makes sense. */
#define STEP(member) U32("step", member, 1, PROTO_STEPS_MAX)
#define STEP_OR_0(member) U32("step", member, 0, PROTO_STEPS_MAX)
/* CLOCK_MONOTONIC instants and durations are never negative. */
#define NS(name, member) I64(name, member, 0, INT64_MAX)

static const struct proto__field hello_fields[] = {
	NAME("node", hello.node),
	STR("agent_version", hello.agent_version, 0),
	U32("proto_min", hello.proto_min, 1, UINT32_MAX),
	U32("proto_max", hello.proto_max, 1, UINT32_MAX),
	STR("boot_id", hello.boot_id, 0),
	STR("clocksource", hello.clocksource, 0),
	STR("hostkey", hello.hostkey, 0),
	STEP_OR_0(hello.step),
	{ "kernel", PROTO__OPT_STR, MSG_OFF(hello.kernel), MSG_SIZE(hello.kernel), 0, 0, 0 },
};

static const struct proto__field sync_fields[] = {
	U64("nonce", sync.nonce),
};

static const struct proto__field plan_fields[] = {
	NAME("node", plan.node),
	{ "steps", PROTO__STEPS, MSG_OFF(plan), 0, 0, PROTO_STEPS_MAX, 0 },
	{ "monitor_interval_ms", PROTO__OPT_U32, MSG_OFF(plan.monitor_interval_ms), 0, 0,
	  PROTO_MONITOR_INTERVAL_MAX_MS, 0 },
	{ "total", PROTO__OPT_U32, MSG_OFF(plan.total), 0, 0, PROTO_STEPS_MAX, 0 },
};

static const struct proto__field ready_fields[] = {
	STEP(ready.step),
};

static const struct proto__field go_fields[] = {
	STEP(go.step),
	NS("at_ns", go.at_ns),
};

static const struct proto__field started_fields[] = {
	STEP(started.step),
	NS("mono_ns", started.mono_ns),
	NS("late_ns", started.late_ns),
	/* the start's timing, added later: an older agent sends none */
	{ "agent_go_ns", PROTO__OPT_I64, MSG_OFF(started.agent_go_ns), 0, 1, INT64_MAX, 0 },
	{ "child_go_ns", PROTO__OPT_I64, MSG_OFF(started.child_go_ns), 0, 1, INT64_MAX, 0 },
	{ "runq_ns", PROTO__OPT_I64, MSG_OFF(started.runq_ns), 0, 0, INT64_MAX, 0 },
};

static const struct proto__field result_fields[] = {
	STEP(result.step),
	NAME("metric", result.metric),
	DBL("value", result.value),
	STR("unit", result.unit, 0),
	{ "better", PROTO__BETTER, MSG_OFF(result.higher_is_better), 0, 0, 0, 0 },
};

static const struct proto__field output_fields[] = {
	STEP(output.step),
	{ "data", PROTO__OUTPUT, MSG_OFF(output), 0, 0, PROTO_OUTPUT_MAX, 0 },
};

static const struct proto__field done_fields[] = {
	STEP(done.step),
	NS("mono_ns", done.mono_ns),
	I32("exit_status", done.exit_status, INT32_MIN, INT32_MAX),
};

static const struct proto__field sample_fields[] = {
	STEP_OR_0(sample.step),	    NS("mono_ns", sample.mono_ns), NAME("metric", sample.metric),
	DBL("value", sample.value), STR("unit", sample.unit, 0),
};

static const struct proto__field ping_fields[] = {
	U64("seq", ping.seq),
	NS("t1", ping.t1),
};

static const struct proto__field pong_fields[] = {
	U64("seq", ping.seq),
	NS("t1", ping.t1),
	NS("t2", ping.t2),
	NS("t3", ping.t3),
	/* the guest's KVM PTP clock, when it has one: all four or none */
	{ "ptp_mono_ns", PROTO__OPT_I64, MSG_OFF(ping.ptp_mono_ns), 0, 1, INT64_MAX, 0 },
	{ "ptp_real_ns", PROTO__OPT_I64, MSG_OFF(ping.ptp_real_ns), 0, 1, INT64_MAX, 0 },
	{ "ptp_host_real_ns", PROTO__OPT_I64, MSG_OFF(ping.ptp_host_real_ns), 0, 1, INT64_MAX, 0 },
	{ "ptp_window_ns", PROTO__OPT_I64, MSG_OFF(ping.ptp_window_ns), 0, 1,
	  PROTO_PTP_WINDOW_MAX_NS, 0 },
};

static const struct proto__field error_fields[] = {
	STEP_OR_0(error.step),
	STR("code", error.code, 1),
	STR("text", error.text, 0),
};

static const struct proto__field bye_fields[] = {
	STR("reason", bye.reason, 0),
};

static const struct proto__field monitor_fields[] = {
	U32("index", monitor.index, 1, PROTO_MONITORS_MAX),
	U32("count", monitor.count, 1, PROTO_MONITORS_MAX),
	NAME("name", monitor.name),
	STR("command", monitor.command, 1),
};

/* The output code reads and writes u.output: the layouts must agree. */
_Static_assert(offsetof(struct proto_msg, u.monitor_output.step) ==
			       offsetof(struct proto_msg, u.output.step) &&
		       offsetof(struct proto_msg, u.monitor_output.len) ==
			       offsetof(struct proto_msg, u.output.len) &&
		       offsetof(struct proto_msg, u.monitor_output.data) ==
			       offsetof(struct proto_msg, u.output.data),
	       "monitor_output must start as output does");

static const struct proto__field monitor_output_fields[] = {
	STEP(monitor_output.step),
	NAME("monitor", monitor_output.monitor),
	{ "data", PROTO__OUTPUT, MSG_OFF(monitor_output), 0, 0, PROTO_OUTPUT_MAX, 0 },
};

/* kind comes before the fields that depend on it: the decoder reads in order. */
const struct proto__field proto__step_fields[] = {
	{ "index", PROTO__U32, STEP_OFF(index), 0, 1, PROTO_STEPS_MAX, 0 },
	{ "iteration", PROTO__U32, STEP_OFF(iteration), 0, 1, PROTO_STEPS_MAX, 0 },
	{ "benchmark", PROTO__NAME, STEP_OFF(benchmark), STEP_SIZE(benchmark), 0, 0, 0 },
	{ "kind", PROTO__KIND, STEP_OFF(kind), 0, 0, 0, 0 },
	{ "units", PROTO__U64, STEP_OFF(units), 0, 1, 0, PROTO_STEP_CPU_PROBE },
	{ "command", PROTO__HSTR, STEP_OFF(command), PROTO_COMMAND_MAX, 1, 0, PROTO_STEP_COMMAND },
};
const size_t proto__nstep_fields = sizeof(proto__step_fields) / sizeof(proto__step_fields[0]);

#define TYPE(t, n, f) [t] = { n, f, sizeof(f) / sizeof(f[0]) }
static const struct proto__type types[] = {
	TYPE(PROTO_HELLO, "hello", hello_fields),
	TYPE(PROTO_SYNC, "sync", sync_fields),
	TYPE(PROTO_SYNC_ACK, "sync-ack", sync_fields),
	TYPE(PROTO_PLAN, "plan", plan_fields),
	TYPE(PROTO_READY, "ready", ready_fields),
	TYPE(PROTO_GO, "go", go_fields),
	TYPE(PROTO_STARTED, "started", started_fields),
	TYPE(PROTO_RESULT, "result", result_fields),
	TYPE(PROTO_OUTPUT, "output", output_fields),
	TYPE(PROTO_DONE, "done", done_fields),
	TYPE(PROTO_SAMPLE, "sample", sample_fields),
	TYPE(PROTO_PING, "ping", ping_fields),
	TYPE(PROTO_PONG, "pong", pong_fields),
	TYPE(PROTO_ERROR, "error", error_fields),
	TYPE(PROTO_BYE, "bye", bye_fields),
	TYPE(PROTO_MONITOR, "monitor", monitor_fields),
	TYPE(PROTO_MONITOR_OUTPUT, "monitor-output", monitor_output_fields),
};
#define NTYPES (sizeof(types) / sizeof(types[0]))

const struct proto__type *proto__type(enum proto_type t)
{
	if ((unsigned)t >= NTYPES || !types[t].name)
		return NULL;
	return &types[t];
}

enum proto_type proto__type_by_name(const char *name)
{
	for (size_t t = 0; t < NTYPES; t++)
		if (types[t].name && !strcmp(types[t].name, name))
			return (enum proto_type)t;
	return 0;
}

const char *proto_type_name(enum proto_type t)
{
	const struct proto__type *ty = proto__type(t);

	return ty ? ty->name : "unknown";
}

int proto_step_set_command(struct proto_step *st, const char *command)
{
	char *copy = NULL;

	if (command) {
		size_t len = strnlen(command, PROTO_COMMAND_MAX);

		if (len == PROTO_COMMAND_MAX)
			return -EINVAL;
		copy = proto__xrealloc(NULL, len + 1);
		memcpy(copy, command, len + 1);
	}
	free(st->command);
	st->command = copy;
	return 0;
}

void proto_step_copy(struct proto_step *dst, const struct proto_step *src)
{
	*dst = *src;
	dst->command = NULL;
	if (src->command) {
		size_t len = strlen(src->command);

		/* not set_command: a copy keeps what it copies, even a
		 * command too long to encode */
		dst->command = proto__xrealloc(NULL, len + 1);
		memcpy(dst->command, src->command, len + 1);
	}
}

void proto_steps_free(struct proto_step *steps, size_t n)
{
	if (!steps)
		return;
	for (size_t i = 0; i < n; i++)
		free(steps[i].command);
	free(steps);
}

void proto_msg_clear(struct proto_msg *m)
{
	if (m->type == PROTO_PLAN)
		proto_steps_free(m->u.plan.steps, m->u.plan.nsteps);
	else if (m->type == PROTO_OUTPUT || m->type == PROTO_MONITOR_OUTPUT)
		free(m->u.output.data);
	memset(m, 0, sizeof(*m));
}

static bool fields_equal(const void *a, const void *b, const struct proto__field *fields, size_t n,
			 enum proto_step_kind kind);

static bool steps_equal(const struct proto_msg *a, const struct proto_msg *b)
{
	if (a->u.plan.nsteps != b->u.plan.nsteps)
		return false;
	for (uint32_t i = 0; i < a->u.plan.nsteps; i++) {
		const struct proto_step *sa = &a->u.plan.steps[i], *sb = &b->u.plan.steps[i];

		if (sa->kind != sb->kind ||
		    !fields_equal(sa, sb, proto__step_fields, proto__nstep_fields, sa->kind))
			return false;
	}
	return true;
}

static bool field_equal(const void *a, const void *b, const struct proto__field *f)
{
	const void *pa = PROTO__FIELD_CPTR(a, f), *pb = PROTO__FIELD_CPTR(b, f);

	switch (f->kind) {
	case PROTO__U32:
	case PROTO__OPT_U32: return *(const uint32_t *)pa == *(const uint32_t *)pb;
	case PROTO__I32: return *(const int32_t *)pa == *(const int32_t *)pb;
	case PROTO__I64:
	case PROTO__OPT_I64: return *(const int64_t *)pa == *(const int64_t *)pb;
	case PROTO__U64: return *(const uint64_t *)pa == *(const uint64_t *)pb;
	case PROTO__DOUBLE: {
		double x = *(const double *)pa, y = *(const double *)pb;

		/* the wire tells -0.0 from 0.0 */
		return x == y && !signbit(x) == !signbit(y);
	}
	case PROTO__STR:
	case PROTO__OPT_STR:
	case PROTO__NAME: return !strncmp(pa, pb, f->size);
	case PROTO__HSTR: {
		const char *sa = *(char *const *)pa, *sb = *(char *const *)pb;

		return sa == sb || (sa && sb && !strcmp(sa, sb));
	}
	case PROTO__BETTER: return *(const bool *)pa == *(const bool *)pb;
	case PROTO__KIND:
		return *(const enum proto_step_kind *)pa == *(const enum proto_step_kind *)pb;
	case PROTO__OUTPUT: {
		const struct proto_msg *ma = a, *mb = b;

		return ma->u.output.len == mb->u.output.len &&
		       (!ma->u.output.len ||
			!memcmp(ma->u.output.data, mb->u.output.data, ma->u.output.len));
	}
	case PROTO__STEPS: return steps_equal(a, b);
	}
	return false;
}

static bool fields_equal(const void *a, const void *b, const struct proto__field *fields, size_t n,
			 enum proto_step_kind kind)
{
	for (size_t i = 0; i < n; i++) {
		if (fields[i].only_kind && fields[i].only_kind != kind)
			continue;
		if (!field_equal(a, b, &fields[i]))
			return false;
	}
	return true;
}

bool proto_msg_equal(const struct proto_msg *a, const struct proto_msg *b)
{
	const struct proto__type *ty = proto__type(a->type);

	return ty && a->type == b->type && fields_equal(a, b, ty->fields, ty->nfields, 0);
}

int proto__msg_check(const struct proto_msg *m, char *detail, size_t size)
{
	if (m->type == PROTO_MONITOR && m->u.monitor.index > m->u.monitor.count) {
		snprintf(detail, size, "monitor: \"index\" %" PRIu32 " is over \"count\" %" PRIu32,
			 m->u.monitor.index, m->u.monitor.count);
		return -EBADMSG;
	}
	if (m->type == PROTO_PONG) {
		int set = !!m->u.ping.ptp_mono_ns + !!m->u.ping.ptp_real_ns +
			  !!m->u.ping.ptp_host_real_ns + !!m->u.ping.ptp_window_ns;

		/* a reading is four numbers about one instant: a part of one
		 * cannot be converted */
		if (set && set < 4) {
			snprintf(detail, size,
				 "pong: %d of the 4 \"ptp_*\" fields are set: all or none", set);
			return -EBADMSG;
		}
	}
	if (m->type == PROTO_HELLO && m->u.hello.proto_min > m->u.hello.proto_max) {
		snprintf(detail, size,
			 "hello: \"proto_min\" %" PRIu32 " is over \"proto_max\" %" PRIu32,
			 m->u.hello.proto_min, m->u.hello.proto_max);
		return -EBADMSG;
	}
	/* The agent runs the steps in plan order and the barrier numbers them:
	 * a repeated or backwards index would make two steps one. */
	if (m->type == PROTO_PLAN) {
		const struct proto_step *st = m->u.plan.steps;
		uint32_t n = m->u.plan.nsteps, total = m->u.plan.total;

		/* a part must lie inside the plan it is a part of */
		if (total && (n == 0 || st[0].index == 0 || st[0].index - 1 > total - n)) {
			snprintf(detail, size,
				 "plan: a part of %" PRIu32 " steps from step %" PRIu32
				 " does not fit in \"total\" %" PRIu32,
				 n, n ? st[0].index : 0, total);
			return -EBADMSG;
		}
		for (uint32_t i = 1; i < m->u.plan.nsteps; i++) {
			uint32_t prev = m->u.plan.steps[i - 1].index, cur = m->u.plan.steps[i].index;

			if (cur <= prev) {
				snprintf(detail, size,
					 "plan: steps[%" PRIu32 "]: \"index\" %" PRIu32
					 " does not follow %" PRIu32 " (indices must increase)",
					 i, cur, prev);
				return -EBADMSG;
			}
		}
	}
	return 0;
}

bool proto_name_valid(const char *s)
{
	size_t len;

	if (!s || s[0] == '.')
		return false;
	len = strnlen(s, PROTO_NAME_MAX);
	if (len == 0 || len >= PROTO_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

bool proto__utf8_valid(const char *s, size_t len, size_t *bad)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		unsigned char c = p[i];
		unsigned char lo = 0x80, hi = 0xBF;
		size_t more;

		if (c < 0x80) {
			uint64_t w;

			/* then ASCII, the common case, 8 bytes at a time */
			for (i++; len - i >= 8; i += 8) {
				memcpy(&w, p + i, 8);
				if (w & 0x8080808080808080ULL)
					break;
			}
			continue;
		}
		/* The ranges of RFC 3629, section 4: they exclude overlong forms,
		 * the surrogates (ED A0..BF) and everything past U+10FFFF. */
		if (c >= 0xC2 && c <= 0xDF) {
			more = 1;
		} else if (c >= 0xE0 && c <= 0xEF) {
			more = 2;
			if (c == 0xE0)
				lo = 0xA0;
			else if (c == 0xED)
				hi = 0x9F;
		} else if (c >= 0xF0 && c <= 0xF4) {
			more = 3;
			if (c == 0xF0)
				lo = 0x90;
			else if (c == 0xF4)
				hi = 0x8F;
		} else {
			goto fail;
		}
		if (len - i - 1 < more)
			goto fail;
		for (size_t k = 1; k <= more; k++) {
			if (p[i + k] < lo || p[i + k] > hi)
				goto fail;
			lo = 0x80;
			hi = 0xBF;
		}
		i += more + 1;
	}
	return true;
fail:
	if (bad)
		*bad = i;
	return false;
}

void proto__quote(char *dst, size_t size, const char *s, size_t len)
{
	const size_t shown = 40;
	size_t o = 0;

	assert(size >= 16);
	dst[o++] = '"';
	for (size_t i = 0; i < len && i < shown && o + 8 < size; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			o += (size_t)snprintf(dst + o, size - o, "\\%c", c);
		else if (c < 0x20 || c >= 0x7F)
			o += (size_t)snprintf(dst + o, size - o, "\\x%02x", c);
		else
			dst[o++] = (char)c;
	}
	dst[o++] = '"';
	dst[o] = '\0';
	if (len > shown && o + 4 < size)
		strcpy(dst + o, "...");
}

void *proto__xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		abort();
	return p;
}

void proto__buf_append(struct proto_buf *b, const void *data, size_t n)
{
	if (!n)
		return;
	if (n > b->cap - b->len) {
		size_t cap = b->cap ? b->cap : 256;

		while (cap - b->len < n) {
			if (cap > SIZE_MAX / 2)
				abort();
			cap *= 2;
		}
		b->data = proto__xrealloc(b->data, cap);
		b->cap = cap;
	}
	memcpy(b->data + b->len, data, n);
	b->len += n;
}

void proto_buf_consume(struct proto_buf *b, size_t n)
{
	assert(n <= b->len);
	if (!n)
		return;
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
}

void proto_buf_free(struct proto_buf *b)
{
	if (!b)
		return;
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}
