// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * proto: the byte stream and the link.  Split invariance, 0xFF, over-long
 * lines, UTF-8, the resync between two links, and the fuzzer's checks
 * (split invariance, round trips) over the seed corpus in tests/fuzz/proto/.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "proto_impl.h" /* proto__buf_append(), proto__utf8_valid() */
#include "proto_testlib.h"
#include "testlib.h"

/* LLVMFuzzerTestOneInput(), fuzz_expand(), fuzz_next() */
#include "../proto/fuzz_proto_decoder.c"

START_TEST(test_split_byte_at_a_time)
{
	struct proto_buf b = { 0 };
	struct rec whole = { 0 }, bytes = { 0 };
	struct proto_decoder d;

	build_stream(&b);
	decode(b.data, b.len, &whole);
	ck_assert_uint_eq(whole.n, STREAM_EVENTS);

	proto_decoder_init(&d);
	for (size_t i = 0; i < b.len; i++) {
		proto_decoder_feed(&d, b.data + i, 1, rec_fn, &bytes);
		ck_assert_uint_le(d.len, d.cap);
		ck_assert_uint_le(d.cap, PROTO_LINE_MAX + 1);
	}
	proto_decoder_free(&d);
	rec_assert_equal(&whole, &bytes);
	rec_free(&whole);
	rec_free(&bytes);
	proto_buf_free(&b);
}
END_TEST

START_TEST(test_split_random)
{
	struct proto_buf b = { 0 };
	struct rec whole = { 0 };
	uint64_t seed = 0x9e3779b97f4a7c15ULL; /* fixed: a failure replays */

	build_stream(&b);
	decode(b.data, b.len, &whole);
	for (int round = 0; round < 200; round++) {
		struct rec pieces = { 0 };
		struct proto_decoder d;
		size_t off = 0;

		proto_decoder_init(&d);
		while (off < b.len) {
			uint64_t r = fuzz_next(&seed);
			size_t n = 1 + (r >> 16) % (r & 1 ? 64 : 8192);

			n = n > b.len - off ? b.len - off : n;
			proto_decoder_feed(&d, b.data + off, n, rec_fn, &pieces);
			off += n;
		}
		proto_decoder_free(&d);
		rec_assert_equal(&whole, &pieces);
		rec_free(&pieces);
	}
	rec_free(&whole);
	proto_buf_free(&b);
}
END_TEST

START_TEST(test_reset_mid_object)
{
	static const char in[] = "{\"v\":1,\"type\":\"ready\",\"st\xff"
				 "{\"v\":1,\"type\":\"ready\",\"step\":3}\n"
				 "{\"v\":1,\"type\":\"bye\",\"reason\":\"a\xff"
				 "b\"}\n";
	struct rec r = { 0 };

	decode(in, sizeof(in) - 1, &r);
	ck_assert_uint_eq(r.n, 4);
	ck_assert_int_eq(r.e[0].ev, PROTO_EV_RESET);
	ck_assert_int_eq(r.e[1].ev, PROTO_EV_MSG);
	ck_assert_int_eq(r.e[1].msg.type, PROTO_READY);
	ck_assert_uint_eq(r.e[1].msg.u.ready.step, 3);
	/* inside a string too: what follows is a new (broken) line */
	ck_assert_int_eq(r.e[2].ev, PROTO_EV_RESET);
	ck_assert_int_eq(r.e[3].ev, PROTO_EV_ERROR);
	ck_assert_int_eq(r.e[3].err, -EBADMSG);
	rec_free(&r);
}
END_TEST

START_TEST(test_long_line)
{
	const char *ok = "{\"v\":1,\"type\":\"ready\",\"step\":1}";
	size_t big = 3 * PROTO_LINE_MAX;
	char *in = malloc(big + 200);

	ck_assert_ptr_nonnull(in);
	struct proto_decoder d;
	struct rec r = { 0 };
	size_t n;

	/* exactly PROTO_LINE_MAX bytes (leading blanks are JSON whitespace) */
	n = PROTO_LINE_MAX - strlen(ok);
	memset(in, ' ', n);
	strcpy(in + n, ok);
	strcat(in, "\n");
	r = decode_line(in);
	ck_assert_int_eq(r.e[0].ev, PROTO_EV_MSG);
	rec_free(&r);

	/* one byte more */
	memmove(in + 1, in, PROTO_LINE_MAX + 2);
	in[0] = ' ';
	r = decode_line(in);
	ck_assert_int_eq(r.e[0].err, -EMSGSIZE);
	rec_free(&r);

	/* three times the limit, fed in 1000-byte pieces, then a valid line:
	 * one error, nothing buffered past the limit, the next line decodes */
	memset(in, 'x', big);
	in[big] = '\n';
	strcpy(in + big + 1, ok);
	strcat(in, "\n");
	n = strlen(in);
	proto_decoder_init(&d);
	for (size_t off = 0; off < n; off += 1000) {
		proto_decoder_feed(&d, in + off, n - off < 1000 ? n - off : 1000, rec_fn, &r);
		ck_assert_uint_le(d.len, d.cap);
		ck_assert_uint_le(d.cap, PROTO_LINE_MAX + 1);
	}
	proto_decoder_free(&d);
	ck_assert_uint_eq(r.n, 2);
	ck_assert_int_eq(r.e[0].ev, PROTO_EV_ERROR);
	ck_assert_int_eq(r.e[0].err, -EMSGSIZE);
	ck_assert_str_eq(r.e[0].detail, "line: over 65536 bytes");
	ck_assert_int_eq(r.e[1].ev, PROTO_EV_MSG);
	rec_free(&r);

	/* an over-long line cut by 0xFF: the reset ends the skipping */
	in[big] = (char)0xFF;
	decode(in, strlen(in), &r);
	ck_assert_uint_eq(r.n, 3);
	ck_assert_int_eq(r.e[0].err, -EMSGSIZE);
	ck_assert_int_eq(r.e[1].ev, PROTO_EV_RESET);
	ck_assert_int_eq(r.e[2].ev, PROTO_EV_MSG);
	rec_free(&r);
	free(in);
}
END_TEST

START_TEST(test_invalid_utf8)
{
	static const char *const bad[] = {
		"\xc0\x80",	    /* overlong NUL */
		"\xe0\x80\xaf",	    /* overlong '/' */
		"\xed\xa0\x80",	    /* a surrogate */
		"\xf4\x90\x80\x80", /* past U+10FFFF */
		"\x80",		    /* a lone continuation byte */
		"\xc3",		    /* cut short before the quote */
		"\xfe",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char line[128];
		struct rec r;

		snprintf(line, sizeof(line), "{\"v\":1,\"type\":\"bye\",\"reason\":\"%s\"}\n", bad[i]);
		r = decode_line(line);
		ck_assert_int_eq(r.e[0].ev, PROTO_EV_ERROR);
		ck_assert_int_eq(r.e[0].err, -EILSEQ);
		ck_assert_str_eq(r.e[0].detail, "line: invalid UTF-8 at byte 30");
		rec_free(&r);
	}
}
END_TEST

/* The validator itself, a bad sequence at every offset of a longer text. */
START_TEST(test_utf8_offsets)
{
	static const char *const bad[] = {
		"\xff", "\xc3", "\xc0\xaf", "\xed\xbf\xbf", "\xf4\x90\x80\x80", "\xe2\x82"
	};
	char text[64];
	size_t at;

	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		for (size_t off = 0; off + strlen(bad[k]) < 40; off++) {
			for (size_t len = off + strlen(bad[k]); len <= 40; len++) {
				memset(text, 'a', 40);
				memcpy(text + off, bad[k], strlen(bad[k]));
				ck_assert_msg(!proto__utf8_valid(text, len, &at),
					      "%zu at %zu of %zu", k, off, len);
				ck_assert_uint_eq(at, off);
			}
			ck_assert(proto__utf8_valid(text, off, NULL));
		}
	}
	memset(text, 'a', 40);
	memcpy(text + 17, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf\xee\x80\x80", 16);
	ck_assert(proto__utf8_valid(text, 40, NULL));
}
END_TEST

START_TEST(test_blank_lines_and_crlf)
{
	static const char in[] = "\n\r\n  \t \n{\"v\":1,\"type\":\"ready\",\"step\":2}\r\n\n";
	struct rec r = { 0 };

	decode(in, sizeof(in) - 1, &r);
	ck_assert_uint_eq(r.n, 1);
	ck_assert_int_eq(r.e[0].ev, PROTO_EV_MSG);
	ck_assert_uint_eq(r.e[0].msg.u.ready.step, 2);
	rec_free(&r);
}
END_TEST

/* One side of a link: a decoder and a link fed from the peer's out. */
struct side {
	struct proto_link link;
	struct proto_decoder dec;
	struct proto_buf out;
	int resets, delivered, dropped, consumed, synced;
	enum proto_type last;
};

static void side_fn(void *ctx, enum proto_event ev, struct proto_msg *m, int err, const char *detail)
{
	struct side *s = ctx;

	ck_assert_msg(ev != PROTO_EV_ERROR, "error %d: %s", err, detail);
	if (ev == PROTO_EV_RESET) {
		s->resets++;
		return;
	}
	switch (proto_link_input(&s->link, m, &s->out)) {
	case PROTO_LINK_DELIVER:
		s->delivered++;
		s->last = m->type;
		break;
	case PROTO_LINK_DROPPED: s->dropped++; break;
	case PROTO_LINK_CONSUMED: s->consumed++; break;
	case PROTO_LINK_SYNCED: s->synced++; break;
	}
}

static void pump(struct side *from, struct side *to)
{
	struct proto_buf b = from->out;

	from->out = (struct proto_buf){ 0 };
	proto_decoder_feed(&to->dec, b.data, b.len, side_fn, to);
	proto_buf_free(&b);
}

static void send_type(struct side *s, enum proto_type t)
{
	struct proto_msg m;

	sample(t, &m);
	ck_assert_int_eq(proto_encode(&m, &s->out), 0);
	proto_msg_clear(&m);
}

START_TEST(test_link_resync)
{
	struct side a = { 0 }, b = { 0 };

	/* a restarts and speaks at once; b has not synced yet: it acks the
	 * sync but drops the ready */
	proto_link_restart(&a.link, 0xa1, &a.out);
	ck_assert(!a.link.synced);
	send_type(&a, PROTO_READY);
	pump(&a, &b);
	ck_assert_int_eq(b.resets, 1);
	ck_assert_int_eq(b.consumed, 1);
	ck_assert_int_eq(b.dropped, 1);
	ck_assert_int_eq(b.delivered, 0);

	/* b restarts too, after its ack; a is synced by the ack, acks b's
	 * sync and takes b's hello */
	proto_link_restart(&b.link, 0xb1, &b.out);
	send_type(&b, PROTO_HELLO);
	pump(&b, &a);
	ck_assert_int_eq(a.synced, 1);
	ck_assert(a.link.synced);
	ck_assert_int_eq(a.resets, 1);
	ck_assert_int_eq(a.consumed, 1);
	ck_assert_int_eq(a.delivered, 1);
	ck_assert_int_eq(a.last, PROTO_HELLO);

	/* a's ack syncs b; from then on both deliver */
	send_type(&a, PROTO_GO);
	pump(&a, &b);
	ck_assert_int_eq(b.synced, 1);
	ck_assert(b.link.synced);
	ck_assert_int_eq(b.delivered, 1);
	ck_assert_int_eq(b.last, PROTO_GO);
	send_type(&b, PROTO_STARTED);
	pump(&b, &a);
	ck_assert_int_eq(a.delivered, 2);
	ck_assert_int_eq(a.last, PROTO_STARTED);
	ck_assert_int_eq(a.dropped + b.dropped, 1);
	ck_assert_uint_eq(a.out.len + b.out.len, 0);

	proto_decoder_free(&a.dec);
	proto_decoder_free(&b.dec);
}
END_TEST

static enum proto_link_verdict link_in(struct proto_link *l, enum proto_type t, uint64_t nonce,
				       struct proto_buf *out)
{
	struct proto_msg m;

	sample(t, &m);
	if (t == PROTO_SYNC || t == PROTO_SYNC_ACK)
		m.u.sync.nonce = nonce;
	return proto_link_input(l, &m, out);
}

START_TEST(test_link_rules)
{
	struct proto_link l = { 0 };
	struct proto_buf out = { 0 };
	struct rec r = { 0 };

	/* a zeroed link: no ack syncs it, nothing is delivered */
	ck_assert_int_eq(link_in(&l, PROTO_SYNC_ACK, 0, &out), PROTO_LINK_CONSUMED);
	ck_assert_int_eq(link_in(&l, PROTO_READY, 0, &out), PROTO_LINK_DROPPED);
	ck_assert(!l.synced);

	/* a sync is acked with its nonce, synced or not */
	ck_assert_int_eq(link_in(&l, PROTO_SYNC, 77, &out), PROTO_LINK_CONSUMED);
	decode(out.data, out.len, &r);
	ck_assert_uint_eq(r.n, 1);
	ck_assert_int_eq(r.e[0].msg.type, PROTO_SYNC_ACK);
	ck_assert_uint_eq(r.e[0].msg.u.sync.nonce, 77);
	rec_free(&r);
	proto_buf_free(&out);

	/* only the ack of the latest restart syncs, and only once */
	proto_link_restart(&l, 1, &out);
	proto_link_restart(&l, 2, &out);
	ck_assert_int_eq(link_in(&l, PROTO_SYNC_ACK, 1, &out), PROTO_LINK_CONSUMED);
	ck_assert_int_eq(link_in(&l, PROTO_READY, 0, &out), PROTO_LINK_DROPPED);
	ck_assert_int_eq(link_in(&l, PROTO_SYNC_ACK, 2, &out), PROTO_LINK_SYNCED);
	ck_assert_int_eq(link_in(&l, PROTO_SYNC_ACK, 2, &out), PROTO_LINK_CONSUMED);
	ck_assert_int_eq(link_in(&l, PROTO_READY, 0, &out), PROTO_LINK_DELIVER);
	ck_assert_int_eq(link_in(&l, PROTO_SYNC, 5, &out), PROTO_LINK_CONSUMED);
	ck_assert(l.synced);

	/* a restart while synced drops again until acked */
	proto_link_restart(&l, 3, &out);
	ck_assert_int_eq(link_in(&l, PROTO_READY, 0, &out), PROTO_LINK_DROPPED);
	ck_assert_int_eq(link_in(&l, PROTO_SYNC_ACK, 3, &out), PROTO_LINK_SYNCED);
	proto_buf_free(&out);
}
END_TEST

/* The fuzzer's 0xFE marker builds lines at and past the limit. */
START_TEST(test_fuzz_expand)
{
	static const char ready[] = "{\"v\":1,\"type\":\"ready\",\"step\":1}\n";
	static const uint8_t in[] = { 'a', FUZZ_MARK, FUZZ_MARK, 1, 'b', FUZZ_MARK, 1, FUZZ_MARK };
	uint8_t *out;
	size_t len, pad = PROTO_LINE_MAX - 127 * 512 - (sizeof(ready) - 2);
	struct proto_buf b = { 0 };
	struct rec r = { 0 };

	out = fuzz_expand(in, sizeof(in), &len);
	ck_assert_uint_eq(len, 1 + 1024 + 4);
	ck_assert_int_eq(out[0], 'a');
	ck_assert_int_eq(out[1024], ' ');
	ck_assert_int_eq(out[1025], 'b');
	ck_assert_mem_eq(out + 1026, "\xfe\x01\xfe", 3);
	free(out);

	/* 127 * 512 blanks and a ready: PROTO_LINE_MAX bytes, then one more */
	for (int extra = 0; extra < 2; extra++) {
		proto__buf_append(&b, "\xfe\xfe\x7e", 3);
		for (size_t i = 0; i < pad + (size_t)extra; i++)
			append(&b, " ");
		append(&b, ready);
	}
	out = fuzz_expand((const uint8_t *)b.data, b.len, &len);
	ck_assert_uint_eq(len, 2 * (PROTO_LINE_MAX + 1) + 1);
	decode(out, len, &r);
	ck_assert_uint_eq(r.n, 2);
	ck_assert_int_eq(r.e[0].ev, PROTO_EV_MSG);
	ck_assert_int_eq(r.e[1].err, -EMSGSIZE);
	rec_free(&r);
	free(out);
	proto_buf_free(&b);
}
END_TEST

/* The fuzzer's checks over every file of the seed corpus. */
START_TEST(test_seed_corpus)
{
	const char *root = getenv("LOCKSTEP_SOURCE_ROOT");
	char dir[4096], path[8192];
	struct dirent *de;
	int files = 0;
	DIR *dp;

	ck_assert_msg(root, "LOCKSTEP_SOURCE_ROOT is not set (run through meson test)");
	snprintf(dir, sizeof(dir), "%s/tests/fuzz/proto", root);
	dp = opendir(dir);
	ck_assert_msg(dp, "%s: %s", dir, strerror(errno));
	while ((de = readdir(dp))) {
		static char data[1 << 20];
		size_t n;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "rb");
		ck_assert_msg(f, "%s: %s", path, strerror(errno));
		n = fread(data, 1, sizeof(data), f);
		fclose(f);
		LLVMFuzzerTestOneInput((const uint8_t *)data, n);
		files++;
	}
	closedir(dp);
	ck_assert_int_ge(files, 20);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("proto-stream");
	TCase *tc = tcase_create("proto-stream");

	tcase_add_test(tc, test_split_byte_at_a_time);
	tcase_add_test(tc, test_split_random);
	tcase_add_test(tc, test_reset_mid_object);
	tcase_add_test(tc, test_long_line);
	tcase_add_test(tc, test_invalid_utf8);
	tcase_add_test(tc, test_utf8_offsets);
	tcase_add_test(tc, test_blank_lines_and_crlf);
	tcase_add_test(tc, test_link_resync);
	tcase_add_test(tc, test_link_rules);
	tcase_add_test(tc, test_fuzz_expand);
	tcase_add_test(tc, test_seed_corpus);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
