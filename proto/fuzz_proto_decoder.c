// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the decoder (built with -Dfuzzers=true, run by
 * tools/fuzz).  For every input (a byte stream, see fuzz_expand()) it checks:
 *  - fed at once or in pieces (split points derived from the input), the
 *    decoder reports the same events, with the same details;
 *  - the line buffer never holds more than PROTO_LINE_MAX bytes;
 *  - every decoded message encodes (a decoded message is a valid one), into
 *    one line without 0xFF or an inner newline, which decodes to an equal
 *    message and encodes to the same bytes again;
 *  - a decoded plan's steps hold a command exactly when they are command
 *    steps, each within PROTO_COMMAND_MAX, and proto_step_copy() makes
 *    equal steps that proto_steps_free() frees.
 * A broken check aborts, which libFuzzer reports as a crash.  tests/
 * test_proto.c also runs this over the seed corpus.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

#define FUZZ_CHECK(cond)                                                                         \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                                 \
		}                                                                                \
	} while (0)

/* One event, reduced to what must not depend on the split points: the
 * detail of an error, the canonical encoding of a message. */
struct fuzz_event {
	enum proto_event ev;
	int err;
	char *text;
};

struct fuzz_log {
	struct fuzz_event *ev;
	size_t n, cap;
};

struct fuzz_one {
	int nmsg, nother;
	struct proto_msg msg;
};

static void fuzz_one_fn(void *ctx, enum proto_event ev, struct proto_msg *msg, int err,
			const char *detail)
{
	struct fuzz_one *one = ctx;

	(void)err;
	(void)detail;
	if (ev != PROTO_EV_MSG) {
		one->nother++;
		return;
	}
	one->nmsg++;
	one->msg = *msg; /* take what it owns */
	if (msg->type == PROTO_PLAN)
		msg->u.plan.steps = NULL;
	else if (msg->type == PROTO_OUTPUT || msg->type == PROTO_MONITOR_OUTPUT)
		msg->u.output.data = NULL;
}

/* The commands of a decoded plan, and copies of its steps. */
static void fuzz_check_steps(const struct proto_msg *m)
{
	struct proto_msg copy = *m;
	struct proto_step *steps;
	uint32_t n = m->u.plan.nsteps;

	for (uint32_t i = 0; i < n; i++) {
		const struct proto_step *st = &m->u.plan.steps[i];

		FUZZ_CHECK((st->kind == PROTO_STEP_COMMAND) == (st->command != NULL));
		FUZZ_CHECK(!st->command || (*st->command && strlen(st->command) < PROTO_COMMAND_MAX));
	}
	steps = calloc(n ? n : 1, sizeof(*steps));
	FUZZ_CHECK(steps);
	for (uint32_t i = 0; i < n; i++)
		proto_step_copy(&steps[i], &m->u.plan.steps[i]);
	copy.u.plan.steps = steps;
	FUZZ_CHECK(proto_msg_equal(m, &copy));
	proto_steps_free(steps, n);
}

/* Encodes m; the line must decode back to an equal message. */
static char *fuzz_roundtrip(const struct proto_msg *m)
{
	struct proto_buf a = { 0 }, b = { 0 };
	struct proto_decoder d;
	struct fuzz_one one = { 0 };
	char *text;

	FUZZ_CHECK(proto_encode(m, &a) == 0);
	FUZZ_CHECK(a.len >= 2 && a.len <= PROTO_LINE_MAX + 1);
	FUZZ_CHECK(memchr(a.data, '\n', a.len) == a.data + a.len - 1);
	FUZZ_CHECK(!memchr(a.data, PROTO_RESET_BYTE, a.len));

	proto_decoder_init(&d);
	proto_decoder_feed(&d, a.data, a.len, fuzz_one_fn, &one);
	proto_decoder_free(&d);
	FUZZ_CHECK(one.nmsg == 1 && one.nother == 0);
	FUZZ_CHECK(proto_msg_equal(m, &one.msg));
	FUZZ_CHECK(proto_encode(&one.msg, &b) == 0);
	FUZZ_CHECK(a.len == b.len && !memcmp(a.data, b.data, a.len));
	proto_msg_clear(&one.msg);
	proto_buf_free(&b);

	text = malloc(a.len + 1);
	FUZZ_CHECK(text);
	memcpy(text, a.data, a.len);
	text[a.len] = '\0';
	proto_buf_free(&a);
	return text;
}

static void fuzz_log_fn(void *ctx, enum proto_event ev, struct proto_msg *msg, int err,
			const char *detail)
{
	struct fuzz_log *log = ctx;
	struct fuzz_event *e;

	if (log->n == log->cap) {
		log->cap = log->cap ? 2 * log->cap : 64;
		log->ev = realloc(log->ev, log->cap * sizeof(*log->ev));
		FUZZ_CHECK(log->ev);
	}
	e = &log->ev[log->n++];
	e->ev = ev;
	e->err = err;
	e->text = NULL;
	switch (ev) {
	case PROTO_EV_MSG:
		FUZZ_CHECK(msg && err == 0 && msg->version == PROTO_VERSION);
		if (msg->type == PROTO_PLAN)
			fuzz_check_steps(msg);
		e->text = fuzz_roundtrip(msg);
		break;
	case PROTO_EV_ERROR:
		FUZZ_CHECK(!msg && err < 0 && detail && *detail);
		e->text = strdup(detail);
		FUZZ_CHECK(e->text);
		break;
	case PROTO_EV_RESET: FUZZ_CHECK(!msg && err == 0); break;
	}
}

static void fuzz_log_free(struct fuzz_log *log)
{
	for (size_t i = 0; i < log->n; i++)
		free(log->ev[i].text);
	free(log->ev);
}

/* Split points: a xorshift stream seeded with a hash of the input, so that
 * a saved crash replays with the same pieces. */
static uint64_t fuzz_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * 0xFE is never in UTF-8, so the decoder refuses it wherever it stands; in
 * the fuzzer's input it makes a marker instead: 0xFE 0xFE k stands for
 * (k + 1) * 512 spaces.  A small input can so build a line near or past
 * PROTO_LINE_MAX, which libFuzzer, mutating inputs of a few KiB, would never
 * reach.  (Two bytes, so that random mutations seldom make one: long lines
 * are slow to check.)
 */
#define FUZZ_MARK 0xFE
#define FUZZ_EXPAND_MAX (4 * PROTO_LINE_MAX)

static uint8_t *fuzz_expand(const uint8_t *data, size_t size, size_t *len)
{
	size_t n = 0;
	uint8_t *out = NULL;

	for (int pass = 0; pass < 2; pass++) {
		size_t spent = 0, i = 0;

		if (pass) {
			out = malloc(n ? n : 1);
			FUZZ_CHECK(out);
		}
		n = 0;
		while (i < size) {
			const uint8_t *m = memchr(data + i, FUZZ_MARK, size - i);
			size_t plain = m ? (size_t)(m - data) - i : size - i, run;

			if (out)
				memcpy(out + n, data + i, plain);
			n += plain;
			i += plain;
			if (!m)
				break;
			run = i + 2 < size && data[i + 1] == FUZZ_MARK ? (data[i + 2] + 1u) * 512 : 0;
			if (run && spent + run <= FUZZ_EXPAND_MAX) {
				if (out)
					memset(out + n, ' ', run);
				n += run;
				spent += run;
				i += 3;
			} else {
				if (out)
					out[n] = data[i];
				n++;
				i++;
			}
		}
	}
	*len = n;
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_log whole = { 0 }, pieces = { 0 };
	struct proto_decoder d;
	uint64_t seed = 1469598103934665603ULL;
	size_t off = 0;
	uint8_t *stream;

	for (size_t i = 0; i < size; i++)
		seed = (seed ^ data[i]) * 1099511628211ULL;
	seed |= 1;
	stream = fuzz_expand(data, size, &size);
	data = stream;

	proto_decoder_init(&d);
	proto_decoder_feed(&d, data, size, fuzz_log_fn, &whole);
	FUZZ_CHECK(d.len <= d.cap && d.cap <= PROTO_LINE_MAX + 1);
	proto_decoder_free(&d);

	proto_decoder_init(&d);
	while (off < size) {
		uint64_t r = fuzz_next(&seed);
		/* pieces of 1..4, 1..64, 1..1024 or 1..65536 bytes */
		size_t n = 1 + (r >> 8) % ((size_t)4 << (6 * (r & 3)));

		if (n > size - off)
			n = size - off;
		proto_decoder_feed(&d, data + off, n, fuzz_log_fn, &pieces);
		FUZZ_CHECK(d.len <= d.cap && d.cap <= PROTO_LINE_MAX + 1);
		off += n;
	}
	proto_decoder_free(&d);

	FUZZ_CHECK(whole.n == pieces.n);
	for (size_t i = 0; i < whole.n; i++) {
		const struct fuzz_event *a = &whole.ev[i], *b = &pieces.ev[i];

		FUZZ_CHECK(a->ev == b->ev && a->err == b->err);
		FUZZ_CHECK((!a->text && !b->text) || (a->text && b->text && !strcmp(a->text, b->text)));
	}
	fuzz_log_free(&whole);
	fuzz_log_free(&pieces);
	free(stream);
	return 0;
}
