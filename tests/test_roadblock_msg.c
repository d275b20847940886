// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * roadblock_msg: roadblock's messages as its Python writes them (the
 * vectors below are json.dumps(separators=(",", ":")) and hashlib.sha256
 * output), and every field of a received one checked as untrusted.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roadblock_msg.h"
#include "testlib.h"

/* A message a roadblock leader (Python) sent, with non-ASCII, an emoji
 * (a surrogate pair), a slash, quotes and a float in its user-object. */
static const char python_msg[] =
	"{\"payload\":{\"uuid\":\"1b4e28ba-2fa1-11d2-883f-0016d3cca427\",\"roadblock\":\"run-1:"
	"step-1\",\"sender\":{\"timestamp\":1700000000,\"type\":\"leader\",\"id\":\"hostA\"},"
	"\"recipient\":{\"type\":\"all\"},\"message\":{\"command\":\"user-object\",\"user-object\":"
	"{\"note\":\"caf\\u00e9 \\ud83d\\ude00 a/b \\\"q\\\"\\n\",\"n\":[1,2.5,true,null]}}},"
	"\"tx_checksum\":\"b74feb014948b94aa98a29abccca1c503aedc02610dba4c75ea3bcff673345e4\"}";

static int decode(const char *text, struct rb_msg *m, char *err)
{
	return rb_msg_decode(text, strlen(text), m, err, 256);
}

START_TEST(test_decodes_python_message)
{
	struct rb_msg m;
	char err[256] = "";
	ck_assert_int_eq(decode(python_msg, &m, err), 0);
	ck_assert_str_eq(m.roadblock, "run-1:step-1");
	ck_assert_str_eq(m.sender_id, "hostA");
	ck_assert_int_eq(m.sender_type, RB_ROLE_LEADER);
	ck_assert_int_eq(m.recipient_type, RB_TO_ALL);
	ck_assert_int_eq(m.command, RB_USER_OBJECT);
	ck_assert_int_eq(m.timestamp, 1700000000);
	ck_assert_ptr_nonnull(m.user_object);
	/* the payload compacts back to exactly what Python wrote */
	json_object *o = json_tokener_parse(python_msg), *p = NULL;
	ck_assert(json_object_object_get_ex(o, "payload", &p));
	char *c = rb_json_compact(p);
	const char *start = strstr(python_msg, "{\"uuid\"");
	ck_assert_int_eq(strncmp(c, start, strlen(c)), 0);
	free(c);
	json_object_put(o);
	rb_msg_clear(&m);
}
END_TEST

START_TEST(test_round_trip_with_checksum)
{
	struct rb_msg m, back;
	char err[256] = "";
	rb_msg_init(&m, "u-1", "exp:step-3", 1700000001, RB_ROLE_FOLLOWER, "hostB", RB_TO_LEADER,
		    "hostA", RB_FOLLOWER_READY);
	char *text = rb_msg_encode(&m);
	ck_assert_ptr_nonnull(text);
	/* python3: hashlib.sha256(json.dumps(payload, separators=(",", ":"))) */
	ck_assert_str_eq(text,
			 "{\"payload\":{\"uuid\":\"u-1\",\"roadblock\":\"exp:step-3\",\"sender\":{\"timestamp\":"
			 "1700000001,\"type\":\"follower\",\"id\":\"hostB\"},\"recipient\":{\"type\":\"leader\","
			 "\"id\":\"hostA\"},\"message\":{\"command\":\"follower-ready\"}},\"tx_checksum\":"
			 "\"2e64fd04d34d1ab27cad217380c695a561201bd8d642f59bec2f8018cdf96cbb\"}");
	ck_assert_int_eq(decode(text, &back, err), 0);
	ck_assert_str_eq(back.recipient_id, "hostA");
	ck_assert_int_eq(back.command, RB_FOLLOWER_READY);
	ck_assert_int_eq(back.sender_type, RB_ROLE_FOLLOWER);
	free(text);

	rb_msg_init(&m, "u-2", "exp:step-1", 5, RB_ROLE_LEADER, "a", RB_TO_ALL, NULL, RB_TIMEOUT_TS);
	strcpy(m.value, "1700000100");
	text = rb_msg_encode(&m);
	ck_assert_ptr_nonnull(strstr(text, "\"recipient\":{\"type\":\"all\"},\"message\":{\"command\":"
					   "\"timeout-ts\",\"value\":\"1700000100\"}}"));
	ck_assert_ptr_nonnull(
		strstr(text, "18cd40704c301cdace31df2468724368f54bb311b182aa233b03e452daedf0ff"));
	ck_assert_int_eq(decode(text, &back, err), 0);
	ck_assert_str_eq(back.value, "1700000100");
	free(text);
}
END_TEST

/* Roadblock's schema takes a uuid of exactly 36 characters (its
 * --message-validation refused our earlier "lockstep-<pid>-<n>-<seq>"):
 * the RFC 4122 version-4 form, a different one for each seq. */
START_TEST(test_uuid_form)
{
	const uint8_t base[16] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
	char a[RB_UUID_LEN + 1], b[RB_UUID_LEN + 1];

	rb_uuid_format(a, base, 1);
	rb_uuid_format(b, base, 2);
	ck_assert_uint_eq(strlen(a), RB_UUID_LEN);
	for (int i = 0; i < RB_UUID_LEN; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23)
			ck_assert_msg(a[i] == '-', "%s: no '-' at %d", a, i);
		else
			ck_assert_msg(strchr("0123456789abcdef", a[i]) && a[i],
				      "%s: '%c' at %d is not lower-case hex", a, a[i], i);
	}
	ck_assert_msg(a[14] == '4', "%s: not version 4", a);
	ck_assert_msg(strchr("89ab", a[19]) != NULL, "%s: not the RFC 4122 variant", a);
	ck_assert_msg(strncmp(a, "deadbeef-0102-4", 15) == 0, "%s: base not kept", a);
	ck_assert_msg(strcmp(a, b) != 0, "seq 1 and 2 made the same uuid %s", a);
}
END_TEST

START_TEST(test_release_object_round_trip)
{
	struct rb_msg m, back;
	char err[256] = "";
	rb_msg_init(&m, "u-3", "exp:step-2", 9, RB_ROLE_LEADER, "a", RB_TO_ALL, NULL, RB_USER_OBJECT);
	struct rb_release out = { 0 }, in = { .step = 2,
					      .at_realtime_ns = 1700000000123456789LL,
					      .lead_ns = 4000000 };
	m.user_object = rb_release_object(&in);
	char *text = rb_msg_encode(&m);
	rb_msg_clear(&m);
	ck_assert_int_eq(decode(text, &back, err), 0);
	free(text);
	ck_assert_int_eq(rb_release_parse(back.user_object, &out, err, sizeof(err)), 1);
	ck_assert_uint_eq(out.step, 2);
	ck_assert_int_eq(out.at_realtime_ns, 1700000000123456789LL);
	ck_assert_int_eq(out.lead_ns, 4000000);
	ck_assert(!out.next_early);
	rb_msg_clear(&back);

	/* next_early said only when true, and read back */
	in.next_early = true;
	json_object *early = rb_release_object(&in);
	ck_assert_str_eq(json_object_to_json_string_ext(early, JSON_C_TO_STRING_PLAIN),
			 "{\"lockstep-release\":{\"step\":2,\"at_realtime_ns\":1700000000123456789,"
			 "\"lead_ns\":4000000,\"next_early\":true}}");
	ck_assert_int_eq(rb_release_parse(early, &out, err, sizeof(err)), 1);
	ck_assert(out.next_early);
	json_object_put(early);
	json_object *notbool =
		json_tokener_parse("{\"lockstep-release\":{\"step\":3,"
				   "\"at_realtime_ns\":5,\"lead_ns\":1,\"next_early\":1}}");
	ck_assert_int_eq(rb_release_parse(notbool, &out, err, sizeof(err)), -EBADMSG);
	ck_assert_str_eq(err, "payload.message.user-object.lockstep-release.next_early: 1 is not "
			      "true or false");
	json_object_put(notbool);

	/* a roadblock user's own object is not ours */
	json_object *other = json_tokener_parse("{\"foo\":1}");
	ck_assert_int_eq(rb_release_parse(other, &out, err, sizeof(err)), 0);
	json_object_put(other);
	json_object *wrong = json_tokener_parse("{\"lockstep-release\":{\"step\":0,"
						"\"at_realtime_ns\":5,\"lead_ns\":1}}");
	ck_assert_int_eq(rb_release_parse(wrong, &out, err, sizeof(err)), -EBADMSG);
	ck_assert_str_eq(err, "payload.message.user-object.lockstep-release.step: 0 is not a whole "
			      "number in 1..4294967295");
	json_object_put(wrong);

	int64_t rtt = 0;
	char plan[RB_SHA256_HEX + 1];
	rb_sha256_hex("plan", 4, plan);
	json_object *r = rb_member_object("hostB", 250000, plan);
	char got[RB_SHA256_HEX + 1] = "";
	ck_assert_int_eq(rb_member_parse(r, &rtt, got, err, sizeof(err)), 1);
	ck_assert_int_eq(rtt, 250000);
	ck_assert_str_eq(got, plan);
	json_object_put(r);
	r = json_tokener_parse("{\"lockstep-member\":{\"member\":\"b\",\"rtt_ns\":1,"
			       "\"plan_sha256\":\"XYZ\"}}");
	ck_assert_int_eq(rb_member_parse(r, &rtt, got, err, sizeof(err)), -EBADMSG);
	ck_assert_str_eq(err, "payload.message.user-object.lockstep-member.plan_sha256: \"XYZ\" is "
			      "not 64 lowercase hex digits");
	json_object_put(r);
}
END_TEST

/* A message with a good checksum over the payload text given. */
static char *seal(const char *payload)
{
	json_object *p = json_tokener_parse(payload);
	ck_assert_msg(p != NULL, "test payload is not JSON: %s", payload);
	char *c = rb_json_compact(p), hex[RB_SHA256_HEX + 1];
	rb_sha256_hex(c, strlen(c), hex);
	char *out = NULL;
	ck_assert_int_ge(asprintf(&out, "{\"payload\":%s,\"tx_checksum\":\"%s\"}", c, hex), 0);
	free(c);
	json_object_put(p);
	return out;
}

static void expect_bad(const char *payload, int rc, const char *text)
{
	struct rb_msg m;
	char err[256] = "";
	char *msg = seal(payload);
	ck_assert_int_eq(decode(msg, &m, err), rc);
	ck_assert_str_eq(err, text);
	free(msg);
}

#define GOOD_HEAD "{\"uuid\":\"u\",\"roadblock\":\"r:step-1\","
#define GOOD_SENDER "\"sender\":{\"timestamp\":1,\"type\":\"leader\",\"id\":\"a\"},"
#define GOOD_TO "\"recipient\":{\"type\":\"all\"},"

START_TEST(test_every_field_checked)
{
	expect_bad(GOOD_HEAD "\"sender\":{\"timestamp\":1,\"type\":\"boss\",\"id\":\"a\"}," GOOD_TO
			     "\"message\":{\"command\":\"all-go\"}}",
		   -EBADMSG,
		   "payload.sender.type: \"boss\" is not one of roadblock's (leader, follower)");
	expect_bad(GOOD_HEAD "\"sender\":{\"timestamp\":\"1\",\"type\":\"leader\",\"id\":\"a\"}," GOOD_TO
			     "\"message\":{\"command\":\"all-go\"}}",
		   -EBADMSG, "payload.sender.timestamp: \"1\" is not whole seconds since 1970");
	expect_bad(GOOD_HEAD GOOD_SENDER "\"recipient\":{\"type\":\"follower\"},"
					 "\"message\":{\"command\":\"all-go\"}}",
		   -EBADMSG, "payload.recipient.id: (absent) is not a string");
	expect_bad(GOOD_HEAD GOOD_SENDER GOOD_TO "\"message\":{\"command\":\"all-stop\"}}", -EBADMSG,
		   "payload.message.command: \"all-stop\" is not one of roadblock's "
		   "(global-stream-created, leader-stream-created, ...)");
	expect_bad(GOOD_HEAD GOOD_SENDER GOOD_TO "\"message\":{\"command\":\"timeout-ts\","
						 "\"value\":\"soon\"}}",
		   -EBADMSG,
		   "payload.message.value: \"soon\" of timeout-ts is not whole seconds "
		   "since 1970");
	expect_bad(GOOD_HEAD GOOD_SENDER GOOD_TO "\"message\":{\"command\":\"user-object\"}}",
		   -EBADMSG, "payload.message.user-object: absent for the command user-object");
	expect_bad("{\"uuid\":\"u\",\"roadblock\":\"r step\"," GOOD_SENDER GOOD_TO
		   "\"message\":{\"command\":\"all-go\"}}",
		   -EBADMSG,
		   "payload.roadblock: \"r step\" holds a space, quote or non-ASCII "
		   "character");
	expect_bad(GOOD_HEAD GOOD_SENDER GOOD_TO "\"message\":[]}", -EBADMSG,
		   "payload.message: [] is not an object");
}
END_TEST

START_TEST(test_checksum_and_framing)
{
	struct rb_msg m;
	char err[256] = "";
	/* one byte of the payload changed after the checksum */
	char *msg = strdup(python_msg);
	*strstr(msg, "hostA") = 'g';
	ck_assert_int_eq(decode(msg, &m, err), -EPROTO);
	ck_assert_str_eq(err, "tx_checksum: \"b74feb014948b94aa98a29abccca1c503aedc02610dba4c75ea3bc"
			      "ff673345e4\" is not the payload's sha256 (739466ecc6c00eef1faba52c1a"
			      "6893c12fac7e3630ca0c3faf158f053e7bd2cc)");
	free(msg);

	ck_assert_int_eq(decode("{\"payload\":{}}", &m, err), -EBADMSG);
	ck_assert_str_eq(err, "tx_checksum: (absent) is not 64 lowercase hex digits");
	ck_assert_int_eq(decode("not json", &m, err), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(err, "message: not one JSON object"));
	ck_assert_int_eq(decode("{} {}", &m, err), -EBADMSG);
	ck_assert_str_eq(err, "message: not one JSON object (text after it): \"{} {}\"");

	char *big = malloc(RB_MSG_MAX + 2);
	memset(big, ' ', RB_MSG_MAX + 1);
	big[RB_MSG_MAX + 1] = 0;
	ck_assert_int_eq(decode(big, &m, err), -EMSGSIZE);
	ck_assert_str_eq(err, "message: 65537 bytes, more than 65536");
	free(big);

	/* a string that is not UTF-8 cannot have been sent by roadblock */
	json_object *o = json_object_new_string("\xc3(");
	ck_assert_ptr_null(rb_json_compact(o));
	json_object_put(o);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("roadblock_msg");
	TCase *tc = tcase_create("msg");
	tcase_add_test(tc, test_decodes_python_message);
	tcase_add_test(tc, test_round_trip_with_checksum);
	tcase_add_test(tc, test_uuid_form);
	tcase_add_test(tc, test_release_object_round_trip);
	tcase_add_test(tc, test_every_field_checked);
	tcase_add_test(tc, test_checksum_and_framing);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testlib_main(suite());
}
