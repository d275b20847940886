// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the control protocol's decoder, what hostd --service
 * reads from any local user that may connect (built with -Dfuzzers=true, run
 * by tools/fuzz as target "ctl").  For every input (a byte stream, see
 * fuzz_expand()) it checks:
 *  - fed at once or in pieces (split points derived from the input), the
 *    decoder reports the same events, with the same details;
 *  - the line buffer never holds more than CTL_LINE_MAX bytes;
 *  - every decoded message has "v" == CTL_VERSION and a known "type", and
 *    encodes into one line without 0xFF or an inner newline that decodes to
 *    an equal message and encodes to the same bytes again;
 *  - the field getters keep their bounds on whatever the message holds;
 *  - ctl_utf8_prefix() of the raw bytes is whole UTF-8 without NUL, and what
 *    it leaves is the start of one cut character.
 * A broken check aborts, which libFuzzer reports as a crash.  tests/
 * test_ctl.c also runs this over the seed corpus in tests/fuzz/ctl/.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "proto_impl.h" /* proto__utf8_valid() */

#define FUZZ_CHECK(cond)                                                                         \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                                 \
		}                                                                                \
	} while (0)

/* One event, reduced to what must not depend on the split points. */
struct fuzz_event {
	enum ctl_event ev;
	int err;
	char *text;
};

struct fuzz_log {
	struct fuzz_event *ev;
	size_t n, cap;
};

static bool fuzz_one_fn(void *ctx, enum ctl_event ev, json_object *msg, const char *type, int err,
			const char *detail)
{
	json_object **one = ctx;
	(void)type;
	(void)err;
	(void)detail;
	FUZZ_CHECK(ev == CTL_EV_MSG && !*one);
	*one = json_object_get(msg);
	return true;
}

/* The getters on the fields the service reads, and on every member. */
static void fuzz_getters(json_object *m)
{
	static const char *const keys[] = { "id",     "host_config", "run_name", "results",
					    "follow", "v",	     "type",	 "nope" };
	char detail[256];
	const char *s;
	uint64_t u;
	bool b;

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		int r = ctl_get_str(m, keys[i], 17, &s, detail, sizeof(detail));
		FUZZ_CHECK(r == 0 || r == 1 || (r == -EBADMSG && strstr(detail, keys[i])));
		FUZZ_CHECK(r || (strlen(s) < 17 &&
				 strlen(s) == (size_t)json_object_get_string_len(
						      json_object_object_get(m, keys[i]))));
		r = ctl_get_u64(m, keys[i], 1000, &u, detail, sizeof(detail));
		FUZZ_CHECK(r == 0 || r == 1 || (r == -EBADMSG && strstr(detail, keys[i])));
		FUZZ_CHECK(r || u <= 1000);
		r = ctl_get_u64(m, keys[i], UINT64_MAX, &u, detail, sizeof(detail));
		FUZZ_CHECK(r == 0 || r == 1 || r == -EBADMSG);
		r = ctl_get_bool(m, keys[i], &b, detail, sizeof(detail));
		FUZZ_CHECK(r == 0 || r == 1 || (r == -EBADMSG && strstr(detail, keys[i])));
	}
	json_object_object_foreach(m, key, val)
	{
		(void)val;
		int r = ctl_get_str(m, key, CTL_PATH_MAX, &s, detail, sizeof(detail));
		FUZZ_CHECK(r == 0 || r == 1 || r == -EBADMSG);
		FUZZ_CHECK(r || strlen(s) < CTL_PATH_MAX);
		/* a submit's files: every one a bounded text without NUL */
		json_object *files;
		r = ctl_get_files(m, key, &files, detail, sizeof(detail));
		FUZZ_CHECK(r == 0 || r == 1 || r == -EBADMSG);
		if (r == 0) {
			FUZZ_CHECK(json_object_object_length(files) <= CTL_FILES_MAX);
			json_object_object_foreach(files, name, text)
			{
				FUZZ_CHECK(*name && strlen(name) < CTL_PATH_MAX);
				FUZZ_CHECK(json_object_is_type(text, json_type_string));
				size_t len = (size_t)json_object_get_string_len(text);
				FUZZ_CHECK(len <= CTL_CONFIG_MAX &&
					   strlen(json_object_get_string(text)) == len);
			}
		}
	}
}

/* Encodes m; the line must decode back to an equal message. */
static char *fuzz_roundtrip(json_object *m)
{
	struct proto_buf a = { 0 }, b = { 0 };
	struct ctl_decoder d = { 0 };
	json_object *back = NULL;

	FUZZ_CHECK(ctl_encode(m, &a) == 0);
	FUZZ_CHECK(a.len >= 2 && a.len <= CTL_LINE_MAX + 1);
	FUZZ_CHECK(memchr(a.data, '\n', a.len) == a.data + a.len - 1);
	FUZZ_CHECK(!memchr(a.data, PROTO_RESET_BYTE, a.len));

	ctl_decoder_feed(&d, a.data, a.len, fuzz_one_fn, &back);
	ctl_decoder_free(&d);
	FUZZ_CHECK(back && json_object_equal(m, back));
	FUZZ_CHECK(ctl_encode(back, &b) == 0);
	FUZZ_CHECK(a.len == b.len && !memcmp(a.data, b.data, a.len));
	json_object_put(back);
	proto_buf_free(&b);

	char *text = malloc(a.len + 1);
	FUZZ_CHECK(text);
	memcpy(text, a.data, a.len);
	text[a.len] = '\0';
	proto_buf_free(&a);
	return text;
}

static bool fuzz_log_fn(void *ctx, enum ctl_event ev, json_object *msg, const char *type, int err,
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
	case CTL_EV_MSG: {
		json_object *v = json_object_object_get(msg, "v");
		FUZZ_CHECK(msg && err == 0 && type && ctl_type_known(type));
		FUZZ_CHECK(json_object_is_type(msg, json_type_object));
		FUZZ_CHECK(json_object_is_type(v, json_type_int) &&
			   json_object_get_int64(v) == CTL_VERSION);
		FUZZ_CHECK(!strcmp(json_object_get_string(json_object_object_get(msg, "type")), type));
		fuzz_getters(msg);
		e->text = fuzz_roundtrip(msg);
		break;
	}
	case CTL_EV_ERROR:
		FUZZ_CHECK(!msg && !type && err < 0 && detail && *detail);
		e->text = strdup(detail);
		FUZZ_CHECK(e->text);
		break;
	case CTL_EV_RESET: FUZZ_CHECK(!msg && !type && err == 0); break;
	}
	return true;
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
 * (k + 1) * 1024 spaces.  A small input can so build a line near or past
 * CTL_LINE_MAX, which libFuzzer, mutating inputs of a few KiB, would never
 * reach.  (Two bytes, so that random mutations seldom make one: long lines
 * are slow to check.)
 */
#define FUZZ_MARK 0xFE
#define FUZZ_EXPAND_MAX (2 * CTL_LINE_MAX)

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
			run = i + 2 < size && data[i + 1] == FUZZ_MARK ? (data[i + 2] + 1u) * 1024 : 0;
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

/* What ctl_utf8_prefix() promises, on the raw input as a log chunk. */
static void fuzz_utf8_prefix(const uint8_t *data, size_t size)
{
	size_t bad, n = size < 2 * CTL_LOG_CHUNK ? size : 2 * CTL_LOG_CHUNK;
	char *s = malloc(n ? n : 1);
	FUZZ_CHECK(s);
	memcpy(s, data, n);
	size_t ok = ctl_utf8_prefix(s, n);
	FUZZ_CHECK(ok <= n && n - ok < 4);
	FUZZ_CHECK(proto__utf8_valid(s, ok, &bad) && !memchr(s, '\0', ok));
	/* left over: a lead byte and the continuation bytes that came */
	if (ok < n) {
		unsigned char lead = (unsigned char)s[ok];
		FUZZ_CHECK(lead >= 0xc2 && lead <= 0xf4);
		for (size_t i = ok + 1; i < n; i++)
			FUZZ_CHECK(((unsigned char)s[i] & 0xc0) == 0x80);
		FUZZ_CHECK(!memcmp(s + ok, data + ok, n - ok));
	}
	/* only bytes that are not UTF-8 were touched, each into one '?' */
	for (size_t i = 0; i < ok; i++)
		FUZZ_CHECK(s[i] == (char)data[i] || s[i] == '?');
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_log whole = { 0 }, pieces = { 0 };
	struct ctl_decoder d = { 0 };
	uint64_t seed = 1469598103934665603ULL;
	size_t off = 0;
	uint8_t *stream;

	fuzz_utf8_prefix(data, size);
	for (size_t i = 0; i < size; i++)
		seed = (seed ^ data[i]) * 1099511628211ULL;
	seed |= 1;
	stream = fuzz_expand(data, size, &size);
	data = stream;

	ctl_decoder_feed(&d, data, size, fuzz_log_fn, &whole);
	FUZZ_CHECK(d.len <= CTL_LINE_MAX && d.cap <= CTL_LINE_MAX + 1);
	ctl_decoder_free(&d);

	while (off < size) {
		uint64_t r = fuzz_next(&seed);
		/* pieces of 1..4, 1..64, 1..1024 or 1..65536 bytes */
		size_t n = 1 + (r >> 8) % ((size_t)4 << (6 * (r & 3)));

		if (n > size - off)
			n = size - off;
		ctl_decoder_feed(&d, data + off, n, fuzz_log_fn, &pieces);
		FUZZ_CHECK(d.len <= CTL_LINE_MAX && d.cap <= CTL_LINE_MAX + 1);
		off += n;
	}
	ctl_decoder_free(&d);

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
