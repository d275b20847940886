// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ctl: the control protocol of hostd --service, what any local user who may
 * connect sends it.  The framing (splits, 0xFF, over-long lines, the exact
 * limit, UTF-8, NUL), what a line must be (version, type, an object, depth,
 * members), the field getters' bounds, ctl_utf8_prefix() on cut characters,
 * encode over the limit, and the fuzzer's checks over tests/fuzz/ctl/.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "proto_impl.h" /* proto__utf8_valid() */
#include "testlib.h"

/* LLVMFuzzerTestOneInput() */
#include "../proto/fuzz_ctl_decoder.c"

/* ---- a recorder of events --------------------------------------------- */

struct ev {
	enum ctl_event ev;
	int err;
	char type[32];
	char text[512]; /* the detail, or the message as JSON */
};

struct rec {
	struct ev e[64];
	size_t n;
	size_t stop_after; /* 0: never stop */
};

static bool rec_fn(void *ctx, enum ctl_event ev, json_object *m, const char *type, int err,
		   const char *detail)
{
	struct rec *r = ctx;
	ck_assert_uint_lt(r->n, 64);
	struct ev *e = &r->e[r->n++];
	e->ev = ev;
	e->err = err;
	snprintf(e->type, sizeof(e->type), "%s", type ? type : "");
	if (ev == CTL_EV_MSG)
		snprintf(e->text, sizeof(e->text), "%s",
			 json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN));
	else
		snprintf(e->text, sizeof(e->text), "%s", detail ? detail : "");
	return !r->stop_after || r->n < r->stop_after;
}

static void decode(const void *data, size_t len, struct rec *r)
{
	struct ctl_decoder d = { 0 };
	ctl_decoder_feed(&d, data, len, rec_fn, r);
	ck_assert_uint_le(d.len, CTL_LINE_MAX);
	ck_assert_uint_le(d.cap, CTL_LINE_MAX + 1);
	ctl_decoder_free(&d);
}

static void decode_str(const char *s, struct rec *r)
{
	decode(s, strlen(s), r);
}

static void rec_assert_equal(const struct rec *a, const struct rec *b)
{
	ck_assert_uint_eq(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		ck_assert_int_eq(a->e[i].ev, b->e[i].ev);
		ck_assert_int_eq(a->e[i].err, b->e[i].err);
		ck_assert_str_eq(a->e[i].type, b->e[i].type);
		ck_assert_str_eq(a->e[i].text, b->e[i].text);
	}
}

/* One line; the single event it makes must be an error err with detail
 * holding want. */
static void assert_refused(const char *line, int err, const char *want)
{
	struct rec r = { 0 };
	decode_str(line, &r);
	ck_assert_uint_eq(r.n, 1);
	ck_assert_int_eq(r.e[0].ev, CTL_EV_ERROR);
	ck_assert_msg(r.e[0].err == err, "%s: error %d, not %d (%s)", line, r.e[0].err, err,
		      r.e[0].text);
	ck_assert_msg(strstr(r.e[0].text, want), "%s: detail '%s' has no '%s'", line, r.e[0].text,
		      want);
}

static void assert_msg(const char *line, const char *type)
{
	struct rec r = { 0 };
	decode_str(line, &r);
	ck_assert_uint_eq(r.n, 1);
	ck_assert_msg(r.e[0].ev == CTL_EV_MSG, "%s: refused: %s", line, r.e[0].text);
	ck_assert_str_eq(r.e[0].type, type);
}

/* A stream with every kind of event: messages, a reset mid-line, an
 * over-long line, bad lines, blank lines and CRLF. */
static char *build_stream(size_t *len)
{
	static const char head[] =
		"{\"v\":1,\"type\":\"status\"}\n"
		"{\"v\":1,\"type\":\"sub\xff"
		"{\"v\":1,\"type\":\"cancel\",\"id\":7}\r\n"
		"\n  \n"
		"{\"v\":2,\"type\":\"list\"}\n"
		"{\"v\":1,\"type\":\"nope\"}\n"
		"[1,2]\n"
		"{\"v\":1,\"type\":\"logs\",\"id\":3,\"follow\":true,\"x\":\"\xc3\xa9\"}\n"
		"{\"v\":1,\"type\":\"list\",\"bad\":\"\xc3\"}\n";
	static const char tail[] = "\n{\"v\":1,\"type\":\"wait\",\"id\":1}\n";
	size_t big = CTL_LINE_MAX + 10;
	char *s = malloc(sizeof(head) + big + sizeof(tail));
	ck_assert_ptr_nonnull(s);
	memcpy(s, head, sizeof(head) - 1);
	memset(s + sizeof(head) - 1, 'x', big);
	memcpy(s + sizeof(head) - 1 + big, tail, sizeof(tail));
	*len = sizeof(head) - 1 + big + sizeof(tail) - 1;
	return s;
}

#define STREAM_EVENTS 10

/* ---- framing ---------------------------------------------------------- */

START_TEST(test_stream_events)
{
	size_t len;
	char *s = build_stream(&len);
	struct rec r = { 0 };
	decode(s, len, &r);
	ck_assert_uint_eq(r.n, STREAM_EVENTS);
	ck_assert_str_eq(r.e[0].type, "status");
	ck_assert_int_eq(r.e[1].ev, CTL_EV_RESET);
	ck_assert_str_eq(r.e[2].type, "cancel"); /* CRLF is a line end */
	ck_assert_int_eq(r.e[3].err, -EPROTONOSUPPORT);
	ck_assert_int_eq(r.e[4].err, -ENOMSG);
	ck_assert_int_eq(r.e[5].err, -EBADMSG);
	ck_assert_str_eq(r.e[6].type, "logs");
	ck_assert_int_eq(r.e[7].err, -EILSEQ);
	ck_assert_int_eq(r.e[8].err, -EMSGSIZE);
	ck_assert_str_eq(r.e[9].type, "wait");
	free(s);
}
END_TEST

START_TEST(test_split_byte_at_a_time)
{
	size_t len;
	char *s = build_stream(&len);
	struct rec whole = { 0 }, bytes = { 0 };
	struct ctl_decoder d = { 0 };
	decode(s, len, &whole);
	/* plain checks in the loop, asserted once after it: every ck_assert
	 * writes to Check's pipe, and 300,000 of them took minutes under
	 * valgrind */
	size_t refused_at = len, max_len = 0, max_cap = 0;
	for (size_t i = 0; i < len; i++) {
		if (!ctl_decoder_feed(&d, s + i, 1, rec_fn, &bytes) && refused_at == len)
			refused_at = i;
		max_len = d.len > max_len ? d.len : max_len;
		max_cap = d.cap > max_cap ? d.cap : max_cap;
	}
	ck_assert_msg(refused_at == len, "feed stopped at byte %zu of %zu", refused_at, len);
	ck_assert_uint_le(max_len, CTL_LINE_MAX);
	ck_assert_uint_le(max_cap, CTL_LINE_MAX + 1);
	ctl_decoder_free(&d);
	rec_assert_equal(&whole, &bytes);
	free(s);
}
END_TEST

START_TEST(test_split_random)
{
	size_t len;
	char *s = build_stream(&len);
	struct rec whole = { 0 };
	decode(s, len, &whole);
	srand(7);
	for (int round = 0; round < 50; round++) {
		struct rec r = { 0 };
		struct ctl_decoder d = { 0 };
		for (size_t off = 0; off < len;) {
			size_t n = 1 + (size_t)rand() % (round < 25 ? 64 : 70000);
			if (n > len - off)
				n = len - off;
			ctl_decoder_feed(&d, s + off, n, rec_fn, &r);
			off += n;
		}
		ctl_decoder_free(&d);
		rec_assert_equal(&whole, &r);
	}
	free(s);
}
END_TEST

START_TEST(test_reset_mid_line)
{
	struct rec r = { 0 };
	/* 0xFF drops the partial line and nothing else; the next line is whole */
	decode_str("{\"v\":1,\"type\":\"list\"\xff{\"v\":1,\"type\":\"list\"}\n\xff\xff", &r);
	ck_assert_uint_eq(r.n, 4);
	ck_assert_int_eq(r.e[0].ev, CTL_EV_RESET);
	ck_assert_int_eq(r.e[1].ev, CTL_EV_MSG);
	ck_assert_int_eq(r.e[2].ev, CTL_EV_RESET);
	ck_assert_int_eq(r.e[3].ev, CTL_EV_RESET);
}
END_TEST

/* A line of exactly n bytes that is a valid "list" (padded with spaces
 * inside the object), then '\n'. */
static char *line_of(size_t n, size_t *len)
{
	static const char a[] = "{\"v\":1,\"type\":\"list\"", b[] = "}\n";
	char *s = malloc(n + 2);
	ck_assert_ptr_nonnull(s);
	memcpy(s, a, sizeof(a) - 1);
	memset(s + sizeof(a) - 1, ' ', n - (sizeof(a) - 1) - 1);
	memcpy(s + n - 1, b, sizeof(b) - 1);
	*len = n + 1;
	return s;
}

START_TEST(test_line_max_exactly)
{
	size_t len;
	char *s = line_of(CTL_LINE_MAX, &len);
	struct rec r = { 0 }, bytes = { 0 };
	decode(s, len, &r);
	ck_assert_uint_eq(r.n, 1);
	ck_assert_int_eq(r.e[0].ev, CTL_EV_MSG);
	struct ctl_decoder d = { 0 };
	for (size_t i = 0; i < len; i++)
		ctl_decoder_feed(&d, s + i, 1, rec_fn, &bytes);
	ck_assert_uint_le(d.cap, CTL_LINE_MAX + 1);
	ctl_decoder_free(&d);
	rec_assert_equal(&r, &bytes);
	free(s);
}
END_TEST

START_TEST(test_line_over_max_skipped)
{
	size_t len;
	char *s = line_of(CTL_LINE_MAX + 1, &len);
	struct rec r = { 0 };
	/* the rest of the line goes, and only one error is said for it */
	struct ctl_decoder d = { 0 };
	ctl_decoder_feed(&d, s, len - 1, rec_fn, &r);
	ctl_decoder_feed(&d, "more of it", 10, rec_fn, &r);
	ctl_decoder_feed(&d, "\n{\"v\":1,\"type\":\"list\"}\n", 24, rec_fn, &r);
	ck_assert_uint_le(d.cap, CTL_LINE_MAX + 1);
	ctl_decoder_free(&d);
	ck_assert_uint_eq(r.n, 2);
	ck_assert_int_eq(r.e[0].err, -EMSGSIZE);
	ck_assert_ptr_nonnull(strstr(r.e[0].text, "over 262144 bytes"));
	ck_assert_int_eq(r.e[1].ev, CTL_EV_MSG);
	/* a 0xFF ends the skipping too */
	memset(&r, 0, sizeof(r));
	s[len - 1] = (char)0xff;
	decode(s, len, &r);
	ck_assert_uint_eq(r.n, 2);
	ck_assert_int_eq(r.e[0].err, -EMSGSIZE);
	ck_assert_int_eq(r.e[1].ev, CTL_EV_RESET);
	free(s);
}
END_TEST

START_TEST(test_text_refused)
{
	assert_refused("{\"v\":1,\"type\":\"list\",\"x\":\"\xc3(\"}\n", -EILSEQ,
		       "not UTF-8 at byte 26");
	assert_refused("{\"v\":1,\"type\":\"list\",\"x\":\"\xed\xa0\x80\"}\n", -EILSEQ, "not UTF-8");
	assert_refused("{\"v\":1,\"type\":\"list\",\"x\":\"\xc0\x80\"}\n", -EILSEQ, "not UTF-8");
	assert_refused("{\"v\":1,\"type\":\"list\",\"x\":\"\xfe\"}\n", -EILSEQ, "not UTF-8");
	static const char nul[] = "{\"v\":1,\"type\":\"list\",\"x\":\"a\0b\"}\n";
	struct rec r = { 0 };
	decode(nul, sizeof(nul) - 1, &r);
	ck_assert_uint_eq(r.n, 1);
	ck_assert_int_eq(r.e[0].err, -EBADMSG);
	ck_assert_ptr_nonnull(strstr(r.e[0].text, "NUL"));
}
END_TEST

START_TEST(test_version_and_type)
{
	assert_msg("{\"v\":1,\"type\":\"submit\"}\n", "submit");
	assert_refused("{\"v\":2,\"type\":\"list\"}\n", -EPROTONOSUPPORT, "field 'v': not 1");
	assert_refused("{\"v\":\"1\",\"type\":\"list\"}\n", -EPROTONOSUPPORT, "field 'v'");
	assert_refused("{\"v\":1.0,\"type\":\"list\"}\n", -EPROTONOSUPPORT, "field 'v'");
	assert_refused("{\"v\":null,\"type\":\"list\"}\n", -EPROTONOSUPPORT, "field 'v'");
	assert_refused("{\"type\":\"list\"}\n", -EPROTONOSUPPORT, "field 'v'");
	assert_refused("{\"v\":1,\"type\":\"reboot\"}\n", -ENOMSG, "unknown \"reboot\"");
	assert_refused("{\"v\":1,\"type\":\"LIST\"}\n", -ENOMSG, "unknown");
	assert_refused("{\"v\":1}\n", -ENOMSG, "field 'type'");
	assert_refused("{\"v\":1,\"type\":null}\n", -ENOMSG, "field 'type'");
	assert_refused("{\"v\":1,\"type\":7}\n", -ENOMSG, "field 'type'");
	/* an unknown type is quoted, bounded, whatever its length */
	char line[2048];
	snprintf(line, sizeof(line), "{\"v\":1,\"type\":\"%0900d\"}\n", 0);
	assert_refused(line, -ENOMSG, "field 'type': unknown");
	assert_refused("{\"v\":1,\"type\":{\"a\":[1,2,3]}}\n", -ENOMSG, "field 'type'");
}
END_TEST

START_TEST(test_not_an_object)
{
	assert_refused("[{\"v\":1,\"type\":\"list\"}]\n", -EBADMSG, "not an object");
	assert_refused("\"list\"\n", -EBADMSG, "not an object");
	assert_refused("12\n", -EBADMSG, "not an object");
	assert_refused("null\n", -EBADMSG, "not an object");
	assert_refused("{\"v\":1,\"type\":\"list\"\n", -EBADMSG, "not JSON");
	assert_refused("{\"v\":1 \"type\":\"list\"}\n", -EBADMSG, "not JSON");
	assert_refused("{\"v\":1,\"type\":\"list\",}\n", -EBADMSG, "not JSON");
	/* a second value on the line is not silently dropped */
	assert_refused("{\"v\":1,\"type\":\"list\"}{\"v\":1,\"type\":\"cancel\",\"id\":1}\n",
		       -EBADMSG, "not JSON");
	assert_refused("{\"v\":1,\"type\":\"list\"} x\n", -EBADMSG, "not JSON");
	assert_msg("  {\"v\":1,\"type\":\"list\"} \t\r\n", "list");
}
END_TEST

/* {"v":1,"type":"list","a": [[...[1]...]] }: the message object plus
 * `arrays` levels. */
static void nested(int arrays, char *buf, size_t size)
{
	size_t n = (size_t)snprintf(buf, size, "{\"v\":1,\"type\":\"list\",\"a\":");
	for (int i = 0; i < arrays; i++)
		buf[n++] = '[';
	buf[n++] = '1';
	for (int i = 0; i < arrays; i++)
		buf[n++] = ']';
	snprintf(buf + n, size - n, "}\n");
}

START_TEST(test_nesting)
{
	static char line[300000];
	/* json-c's depth counts one more than the containers: PROTO_DEPTH_MAX
	 * - 1 levels, the message object included */
	nested(PROTO_DEPTH_MAX - 2, line, sizeof(line));
	assert_msg(line, "list");
	nested(PROTO_DEPTH_MAX - 1, line, sizeof(line));
	assert_refused(line, -EBADMSG, "not JSON");
	/* deep enough to overflow a recursive parser's stack, were it one */
	nested(100000, line, sizeof(line));
	assert_refused(line, -EBADMSG, "not JSON");
}
END_TEST

START_TEST(test_members)
{
	char line[4096];
	size_t n = (size_t)snprintf(line, sizeof(line), "{\"v\":1,\"type\":\"list\"");
	for (int i = 2; i < PROTO_FIELDS_MAX; i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, ",\"f%d\":%d", i, i);
	snprintf(line + n, sizeof(line) - n, "}\n");
	assert_msg(line, "list");
	snprintf(line + n, sizeof(line) - n, ",\"one-more\":0}\n");
	assert_refused(line, -EBADMSG, "at most 64 fields");
}
END_TEST

START_TEST(test_stop)
{
	struct rec r = { .stop_after = 1 };
	struct ctl_decoder d = { 0 };
	const char *s = "{\"v\":1,\"type\":\"list\"}\n{\"v\":1,\"type\":\"list\"}\n";
	ck_assert(!ctl_decoder_feed(&d, s, strlen(s), rec_fn, &r));
	ck_assert_uint_eq(r.n, 1);
	ctl_decoder_free(&d);
	ctl_decoder_free(&d); /* twice, and on NULL: a destructor */
	ctl_decoder_free(NULL);
	ck_assert(ctl_type_known("wait"));
	ck_assert(ctl_type_known("error"));
	ck_assert(!ctl_type_known(""));
	ck_assert(!ctl_type_known("Submit"));
}
END_TEST

/* ---- getters ---------------------------------------------------------- */

static json_object *parse(const char *s)
{
	json_object *m = json_tokener_parse(s);
	ck_assert_msg(m, "test JSON: %s", s);
	return m;
}

START_TEST(test_get_str)
{
	json_object *m = parse("{\"s\":\"abc\",\"n\":1,\"z\":null,\"nul\":\"a\\u0000b\","
			       "\"o\":{},\"e\":\"\"}");
	const char *out = "untouched";
	char detail[128];
	ck_assert_int_eq(ctl_get_str(m, "missing", 8, &out, detail, sizeof(detail)), 1);
	ck_assert_str_eq(out, "untouched");
	ck_assert_int_eq(ctl_get_str(m, "z", 8, &out, detail, sizeof(detail)), 1);
	ck_assert_str_eq(out, "untouched");
	ck_assert_int_eq(ctl_get_str(m, "s", 4, &out, detail, sizeof(detail)), 0);
	ck_assert_str_eq(out, "abc");
	ck_assert_int_eq(ctl_get_str(m, "e", 1, &out, detail, sizeof(detail)), 0);
	ck_assert_str_eq(out, "");
	ck_assert_int_eq(ctl_get_str(m, "s", 3, &out, detail, sizeof(detail)), -EBADMSG);
	ck_assert_str_eq(detail, "field 's': 3 bytes, at most 2");
	ck_assert_int_eq(ctl_get_str(m, "n", 8, &out, detail, sizeof(detail)), -EBADMSG);
	ck_assert_str_eq(detail, "field 'n': not a string");
	ck_assert_int_eq(ctl_get_str(m, "o", 8, &out, detail, sizeof(detail)), -EBADMSG);
	ck_assert_int_eq(ctl_get_str(m, "nul", 8, &out, detail, sizeof(detail)), -EBADMSG);
	ck_assert_str_eq(detail, "field 'nul': holds a NUL");
	/* a small detail buffer is cut, not overrun */
	char tiny[8];
	ck_assert_int_eq(ctl_get_str(m, "n", 8, &out, tiny, sizeof(tiny)), -EBADMSG);
	ck_assert_str_eq(tiny, "field '");
	json_object_put(m);
}
END_TEST

START_TEST(test_get_files)
{
	json_object *m = parse("{\"f\":{\"/a/h.conf\":\"X=1\\n\",\"g2.conf\":\"\"},"
			       "\"arr\":[],\"null\":{\"/x\":null},\"nul\":{\"/x\":\"a\\u0000\"},"
			       "\"ctl\":{\"/a\\nb\":\"x\"},\"empty\":{\"\":\"x\"},\"num\":{\"/x\":1}}");
	json_object *out = NULL;
	char detail[256];
	ck_assert_int_eq(ctl_get_files(m, "missing", &out, detail, sizeof(detail)), 1);
	ck_assert_ptr_null(out);
	ck_assert_int_eq(ctl_get_files(m, "f", &out, detail, sizeof(detail)), 0);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(out, "/a/h.conf")), "X=1\n");
	ck_assert_int_eq(ctl_get_files(m, "arr", &out, detail, sizeof(detail)), -EBADMSG);
	ck_assert_str_eq(detail, "field 'arr': not an object");
	/* a name without its text, a NUL, a number: each refused, named */
	ck_assert_int_eq(ctl_get_files(m, "null", &out, detail, sizeof(detail)), -EBADMSG);
	ck_assert_msg(strstr(detail, "file '/x'"), "%s", detail);
	ck_assert_int_eq(ctl_get_files(m, "nul", &out, detail, sizeof(detail)), -EBADMSG);
	ck_assert_int_eq(ctl_get_files(m, "num", &out, detail, sizeof(detail)), -EBADMSG);
	ck_assert_int_eq(ctl_get_files(m, "ctl", &out, detail, sizeof(detail)), -EBADMSG);
	ck_assert_msg(strstr(detail, "control character (0x0a)"), "%s", detail);
	ck_assert_int_eq(ctl_get_files(m, "empty", &out, detail, sizeof(detail)), -EBADMSG);
	json_object_put(m);

	/* at most CTL_FILES_MAX, each at most CTL_CONFIG_MAX bytes */
	m = json_object_new_object();
	json_object *f = json_object_new_object();
	for (int i = 0; i <= CTL_FILES_MAX; i++) {
		char name[32];
		snprintf(name, sizeof(name), "/f%d", i);
		json_object_object_add(f, name, json_object_new_string("x"));
	}
	json_object_object_add(m, "f", f);
	ck_assert_int_eq(ctl_get_files(m, "f", &out, detail, sizeof(detail)), -EBADMSG);
	ck_assert_msg(strstr(detail, "at most 16"), "%s", detail);
	json_object_object_del(f, "/f0");
	ck_assert_int_eq(ctl_get_files(m, "f", &out, detail, sizeof(detail)), 0);
	static char big[CTL_CONFIG_MAX + 2];
	memset(big, 'x', CTL_CONFIG_MAX + 1);
	json_object_object_add(f, "/f1", json_object_new_string(big));
	ck_assert_int_eq(ctl_get_files(m, "f", &out, detail, sizeof(detail)), -EBADMSG);
	json_object_put(m);
}
END_TEST

START_TEST(test_get_u64)
{
	json_object *m = parse("{\"zero\":0,\"ten\":10,\"neg\":-1,\"dbl\":1.0,\"str\":\"1\","
			       "\"t\":true,\"i63\":9223372036854775807,"
			       "\"u63\":9223372036854775808,\"u64\":18446744073709551615,"
			       "\"over\":18446744073709551616}");
	uint64_t v = 42;
	char detail[128];
	ck_assert_int_eq(ctl_get_u64(m, "missing", 10, &v, detail, sizeof(detail)), 1);
	ck_assert_uint_eq(v, 42);
	ck_assert_int_eq(ctl_get_u64(m, "zero", 10, &v, detail, sizeof(detail)), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(ctl_get_u64(m, "ten", 10, &v, detail, sizeof(detail)), 0);
	ck_assert_uint_eq(v, 10);
	ck_assert_int_eq(ctl_get_u64(m, "ten", 9, &v, detail, sizeof(detail)), -EBADMSG);
	ck_assert_str_eq(detail, "field 'ten': not an integer in 0..9");
	ck_assert_int_eq(ctl_get_u64(m, "neg", UINT64_MAX, &v, detail, sizeof(detail)), -EBADMSG);
	ck_assert_int_eq(ctl_get_u64(m, "dbl", 10, &v, detail, sizeof(detail)), -EBADMSG);
	ck_assert_int_eq(ctl_get_u64(m, "str", 10, &v, detail, sizeof(detail)), -EBADMSG);
	ck_assert_int_eq(ctl_get_u64(m, "t", 10, &v, detail, sizeof(detail)), -EBADMSG);
	ck_assert_int_eq(ctl_get_u64(m, "i63", INT64_MAX, &v, detail, sizeof(detail)), 0);
	ck_assert_uint_eq(v, INT64_MAX);
	/* over INT64_MAX: the value itself, not INT64_MAX */
	ck_assert_int_eq(ctl_get_u64(m, "u63", INT64_MAX, &v, detail, sizeof(detail)), -EBADMSG);
	ck_assert_int_eq(ctl_get_u64(m, "u63", UINT64_MAX, &v, detail, sizeof(detail)), 0);
	ck_assert_uint_eq(v, (uint64_t)INT64_MAX + 1);
	ck_assert_int_eq(ctl_get_u64(m, "u64", UINT64_MAX, &v, detail, sizeof(detail)), 0);
	ck_assert_uint_eq(v, UINT64_MAX);
	/* json-c clamps what is over UINT64_MAX to it: still over any id */
	ck_assert_int_eq(ctl_get_u64(m, "over", INT64_MAX, &v, detail, sizeof(detail)), -EBADMSG);
	json_object_put(m);
}
END_TEST

START_TEST(test_get_bool)
{
	json_object *m = parse("{\"t\":true,\"f\":false,\"one\":1,\"s\":\"true\",\"z\":null}");
	bool b = true;
	char detail[128];
	ck_assert_int_eq(ctl_get_bool(m, "missing", &b, detail, sizeof(detail)), 1);
	ck_assert(b);
	ck_assert_int_eq(ctl_get_bool(m, "z", &b, detail, sizeof(detail)), 1);
	ck_assert_int_eq(ctl_get_bool(m, "f", &b, detail, sizeof(detail)), 0);
	ck_assert(!b);
	ck_assert_int_eq(ctl_get_bool(m, "t", &b, detail, sizeof(detail)), 0);
	ck_assert(b);
	ck_assert_int_eq(ctl_get_bool(m, "one", &b, detail, sizeof(detail)), -EBADMSG);
	ck_assert_str_eq(detail, "field 'one': not true or false");
	ck_assert_int_eq(ctl_get_bool(m, "s", &b, detail, sizeof(detail)), -EBADMSG);
	json_object_put(m);
}
END_TEST

/* ---- ctl_utf8_prefix --------------------------------------------------- */

/* ctl_utf8_prefix of in (n bytes): the prefix length, and the bytes after. */
static size_t prefix(const char *in, size_t n, char *out)
{
	size_t bad;
	memcpy(out, in, n);
	size_t ok = ctl_utf8_prefix(out, n);
	ck_assert_uint_le(ok, n);
	ck_assert(proto__utf8_valid(out, ok, &bad));
	return ok;
}

START_TEST(test_utf8_prefix)
{
	/* U+00E9, U+20AC, U+1F600: cut after every byte but the last */
	static const char *const chars[] = { "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80" };
	char in[16], out[16];
	for (size_t c = 0; c < 3; c++) {
		size_t len = strlen(chars[c]);
		for (size_t cut = 1; cut <= len; cut++) {
			in[0] = 'a';
			memcpy(in + 1, chars[c], cut);
			size_t ok = prefix(in, cut + 1, out);
			ck_assert_uint_eq(ok, cut == len ? cut + 1 : 1);
			ck_assert(!memcmp(out, in, cut + 1)); /* nothing replaced */
		}
	}
	ck_assert_uint_eq(prefix("", 0, out), 0);
	ck_assert_uint_eq(prefix("\xe2", 1, out), 0);
	/* a lead byte followed by what cannot continue it: not a cut */
	ck_assert_uint_eq(prefix("\xe2"
				 "A",
				 2, out),
			  2);
	ck_assert(!memcmp(out, "?A", 2));
	ck_assert_uint_eq(prefix("\xe2\x82"
				 "A",
				 3, out),
			  3);
	ck_assert(!memcmp(out, "??A", 3));
	/* never valid anywhere: a lone continuation, overlong, F5, surrogate */
	ck_assert_uint_eq(prefix("\x80x", 2, out), 2);
	ck_assert(!memcmp(out, "?x", 2));
	ck_assert_uint_eq(prefix("\xc0\x80", 2, out), 2);
	ck_assert(!memcmp(out, "??", 2));
	ck_assert_uint_eq(prefix("\xf5\x80\x80\x80", 4, out), 4);
	ck_assert_uint_eq(prefix("\xed\xa0\x80", 3, out), 3);
	ck_assert(!memcmp(out, "???", 3));
	ck_assert_uint_eq(prefix("\xff\xfe", 2, out), 2);
	ck_assert(!memcmp(out, "??", 2));
	/* a NUL would end the text for a C reader: it goes too */
	ck_assert_uint_eq(prefix("a\0b", 3, out), 3);
	ck_assert(!memcmp(out, "a?b", 3));
	/* bad bytes before a cut character: replaced, and the cut one waits */
	ck_assert_uint_eq(prefix("\x80\xf0\x9f", 3, out), 1);
	ck_assert_int_eq(out[0], '?');
}
END_TEST

/* ---- encode ----------------------------------------------------------- */

START_TEST(test_encode)
{
	struct proto_buf b = { 0 };
	json_object *m = ctl_msg_new("ok");
	ck_assert_int_eq(ctl_encode(m, &b), 0);
	const size_t first = strlen("{\"v\":1,\"type\":\"ok\"}\n");
	ck_assert_uint_eq(b.len, first);
	ck_assert(!memcmp(b.data, "{\"v\":1,\"type\":\"ok\"}\n", b.len));
	json_object_put(m);

	/* a line of exactly CTL_LINE_MAX bytes goes; one more byte does not,
	 * and leaves the buffer as it was */
	size_t base = strlen("{\"v\":1,\"type\":\"log\",\"data\":\"\"}");
	char *text = malloc(CTL_LINE_MAX);
	ck_assert_ptr_nonnull(text);
	memset(text, 'x', CTL_LINE_MAX);
	m = ctl_msg_new("log");
	json_object_object_add(m, "data", json_object_new_string_len(text, (int)(CTL_LINE_MAX - base)));
	ck_assert_int_eq(ctl_encode(m, &b), 0);
	ck_assert_uint_eq(b.len, first + CTL_LINE_MAX + 1);
	json_object_put(m);
	struct rec r = { 0 };
	decode(b.data + first, b.len - first, &r);
	ck_assert_uint_eq(r.n, 1);
	ck_assert_int_eq(r.e[0].ev, CTL_EV_MSG);

	m = ctl_msg_new("log");
	json_object_object_add(m, "data",
			       json_object_new_string_len(text, (int)(CTL_LINE_MAX - base + 1)));
	size_t before = b.len;
	ck_assert_int_eq(ctl_encode(m, &b), -EMSGSIZE);
	ck_assert_uint_eq(b.len, before);
	json_object_put(m);
	/* escapes count: 0x01 is six bytes on the wire */
	memset(text, 1, CTL_LINE_MAX / 6 + 1);
	m = ctl_msg_new("log");
	json_object_object_add(m, "data", json_object_new_string_len(text, CTL_LINE_MAX / 6 + 1));
	ck_assert_int_eq(ctl_encode(m, &b), -EMSGSIZE);
	json_object_put(m);
	free(text);
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

	ck_assert_msg(root, "LOCKSTEP_SOURCE_ROOT is not set (run through meson test)");
	snprintf(dir, sizeof(dir), "%s/tests/fuzz/ctl", root);
	DIR *dp = opendir(dir);
	ck_assert_msg(dp, "%s: %s", dir, strerror(errno));
	while ((de = readdir(dp))) {
		static char data[1 << 20];
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		FILE *f = fopen(path, "rb");
		ck_assert_msg(f, "%s: %s", path, strerror(errno));
		size_t n = fread(data, 1, sizeof(data), f);
		fclose(f);
		LLVMFuzzerTestOneInput((const uint8_t *)data, n);
		files++;
	}
	closedir(dp);
	ck_assert_int_ge(files, 10);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ctl");
	TCase *tc = tcase_create("ctl");
	tcase_add_test(tc, test_stream_events);
	tcase_add_test(tc, test_split_byte_at_a_time);
	tcase_add_test(tc, test_split_random);
	tcase_add_test(tc, test_reset_mid_line);
	tcase_add_test(tc, test_line_max_exactly);
	tcase_add_test(tc, test_line_over_max_skipped);
	tcase_add_test(tc, test_text_refused);
	tcase_add_test(tc, test_version_and_type);
	tcase_add_test(tc, test_not_an_object);
	tcase_add_test(tc, test_nesting);
	tcase_add_test(tc, test_members);
	tcase_add_test(tc, test_stop);
	tcase_add_test(tc, test_get_str);
	tcase_add_test(tc, test_get_u64);
	tcase_add_test(tc, test_get_files);
	tcase_add_test(tc, test_get_bool);
	tcase_add_test(tc, test_utf8_prefix);
	tcase_add_test(tc, test_encode);
	tcase_add_test(tc, test_seed_corpus);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
