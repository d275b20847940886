// SPDX-License-Identifier: GPL-2.0-or-later
#include "roadblock_msg.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

static const char *const command_names[RB_COMMAND_COUNT] = {
	[RB_GLOBAL_STREAM_CREATED] = "global-stream-created",
	[RB_LEADER_STREAM_CREATED] = "leader-stream-created",
	[RB_FOLLOWERS_STREAM_CREATED] = "followers-stream-created",
	[RB_PERSONAL_STREAM_CREATED] = "personal-stream-created",
	[RB_TIMEOUT_TS] = "timeout-ts",
	[RB_INITIALIZED] = "initialized",
	[RB_LEADER_ONLINE] = "leader-online",
	[RB_FOLLOWER_ONLINE] = "follower-online",
	[RB_ALL_ONLINE] = "all-online",
	[RB_INITIATOR_INFO] = "initiator-info",
	[RB_FOLLOWER_READY] = "follower-ready",
	[RB_FOLLOWER_READY_ABORT] = "follower-ready-abort",
	[RB_FOLLOWER_READY_WAITING] = "follower-ready-waiting",
	[RB_LEADER_HEARTBEAT] = "leader-heartbeat",
	[RB_FOLLOWER_HEARTBEAT] = "follower-heartbeat",
	[RB_FOLLOWER_WAITING_COMPLETE] = "follower-waiting-complete",
	[RB_FOLLOWER_WAITING_COMPLETE_FAILED] = "follower-waiting-complete-failed",
	[RB_HEARTBEAT_TIMEOUT] = "heartbeat-timeout",
	[RB_ALL_READY] = "all-ready",
	[RB_ALL_GO] = "all-go",
	[RB_ALL_ABORT] = "all-abort",
	[RB_ALL_WAIT] = "all-wait",
	[RB_FOLLOWER_GONE] = "follower-gone",
	[RB_ALL_GONE] = "all-gone",
	[RB_USER_STRING] = "user-string",
	[RB_USER_OBJECT] = "user-object",
};
static const char *const role_names[] = { "leader", "follower" };
static const char *const recipient_names[] = { "all", "leader", "follower" };

const char *rb_command_name(enum rb_command c)
{
	return (unsigned)c < RB_COMMAND_COUNT ? command_names[c] : NULL;
}

const char *rb_role_name(enum rb_role r)
{
	return (unsigned)r <= RB_ROLE_FOLLOWER ? role_names[r] : NULL;
}

static void copy_cut(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

void rb_uuid_format(char *out, const uint8_t base[16], uint64_t seq)
{
	uint8_t b[16];
	char *o = out;

	memcpy(b, base, sizeof(b));
	for (int i = 0; i < 8; i++)
		b[8 + i] ^= (uint8_t)(seq >> (8 * i));
	b[6] = (uint8_t)((b[6] & 0x0f) | 0x40); /* version 4 */
	b[8] = (uint8_t)((b[8] & 0x3f) | 0x80); /* the RFC 4122 variant */
	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*o++ = '-';
		o += sprintf(o, "%02x", b[i]);
	}
}

void rb_msg_init(struct rb_msg *m, const char *uuid, const char *roadblock, int64_t timestamp,
		 enum rb_role sender, const char *sender_id, enum rb_recipient to,
		 const char *recipient_id, enum rb_command command)
{
	memset(m, 0, sizeof(*m));
	copy_cut(m->uuid, sizeof(m->uuid), uuid);
	copy_cut(m->roadblock, sizeof(m->roadblock), roadblock);
	m->timestamp = timestamp;
	m->sender_type = sender;
	copy_cut(m->sender_id, sizeof(m->sender_id), sender_id);
	m->recipient_type = to;
	if (to != RB_TO_ALL)
		copy_cut(m->recipient_id, sizeof(m->recipient_id), recipient_id);
	m->command = command;
}

void rb_msg_clear(struct rb_msg *m)
{
	json_object_put(m->user_object);
	m->user_object = NULL;
}

bool rb_name_valid(const char *s, size_t max)
{
	size_t n = 0;
	if (!s)
		return false;
	for (; s[n]; n++)
		if (s[n] < 0x21 || s[n] > 0x7e || s[n] == '"' || s[n] == '\\')
			return false;
	return n > 0 && n < max;
}

/* ---- Python's compact JSON ------------------------------------------- */

/* One code point of UTF-8 at s (n bytes left): its length, 0 when invalid. */
static size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t len;
	uint32_t min;
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	} else if ((s[0] & 0xe0) == 0xc0) {
		len = 2, min = 0x80, *cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3, min = 0x800, *cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4, min = 0x10000, *cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		*cp = (*cp << 6) | (s[i] & 0x3f);
	}
	if (*cp < min || *cp > 0x10ffff || (*cp >= 0xd800 && *cp <= 0xdfff))
		return 0;
	return len;
}

/* json.dumps's ensure_ascii: only space..~ stay as they are. */
static int put_string(FILE *f, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	fputc('"', f);
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t len = utf8_next(u + i, n - i, &cp);
		if (len == 0)
			return -EILSEQ;
		i += len;
		switch (cp) {
		case '"': fputs("\\\"", f); continue;
		case '\\': fputs("\\\\", f); continue;
		case '\n': fputs("\\n", f); continue;
		case '\r': fputs("\\r", f); continue;
		case '\t': fputs("\\t", f); continue;
		case '\b': fputs("\\b", f); continue;
		case '\f': fputs("\\f", f); continue;
		}
		if (cp >= 0x20 && cp <= 0x7e) {
			fputc((int)cp, f);
		} else if (cp < 0x10000) {
			fprintf(f, "\\u%04" PRIx32, cp);
		} else {
			cp -= 0x10000;
			fprintf(f, "\\u%04" PRIx32 "\\u%04" PRIx32, 0xd800 + (cp >> 10),
				0xdc00 + (cp & 0x3ff));
		}
	}
	fputc('"', f);
	return 0;
}

static int put_value(FILE *f, json_object *o, int depth)
{
	if (depth > 64)
		return -ELOOP;
	switch (json_object_get_type(o)) {
	case json_type_null: fputs("null", f); return 0;
	case json_type_boolean: fputs(json_object_get_boolean(o) ? "true" : "false", f); return 0;
	case json_type_int: fprintf(f, "%" PRId64, json_object_get_int64(o)); return 0;
	case json_type_double:
		/* a parsed number keeps its text (json-c), which is what the
		 * sender's repr() wrote */
		fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), f);
		return 0;
	case json_type_string:
		return put_string(f, json_object_get_string(o), (size_t)json_object_get_string_len(o));
	case json_type_array: {
		size_t n = json_object_array_length(o);
		fputc('[', f);
		for (size_t i = 0; i < n; i++) {
			if (i)
				fputc(',', f);
			int r = put_value(f, json_object_array_get_idx(o, i), depth + 1);
			if (r < 0)
				return r;
		}
		fputc(']', f);
		return 0;
	}
	case json_type_object: {
		bool first = true;
		fputc('{', f);
		json_object_object_foreach(o, k, v)
		{
			if (!first)
				fputc(',', f);
			first = false;
			int r = put_string(f, k, strlen(k));
			if (r < 0)
				return r;
			fputc(':', f);
			r = put_value(f, v, depth + 1);
			if (r < 0)
				return r;
		}
		fputc('}', f);
		return 0;
	}
	}
	return -EINVAL;
}

char *rb_json_compact(json_object *o)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	if (!f)
		abort(); /* out of memory, as xmalloc */
	int r = put_value(f, o, 0);
	fclose(f);
	if (r < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

void rb_sha256_hex(const char *s, size_t len, char *hex)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	if (!EVP_Digest(s, len, md, &n, EVP_sha256(), NULL) || n != 32)
		abort(); /* libcrypto without sha256: nothing to do here */
	for (unsigned i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

/* ---- encoding --------------------------------------------------------- */

static json_object *payload_object(const struct rb_msg *m)
{
	json_object *p = json_object_new_object(), *s = json_object_new_object(),
		    *r = json_object_new_object(), *c = json_object_new_object();
	json_object_object_add(p, "uuid", json_object_new_string(m->uuid));
	json_object_object_add(p, "roadblock", json_object_new_string(m->roadblock));
	json_object_object_add(s, "timestamp", json_object_new_int64(m->timestamp));
	json_object_object_add(s, "type", json_object_new_string(role_names[m->sender_type]));
	json_object_object_add(s, "id", json_object_new_string(m->sender_id));
	json_object_object_add(p, "sender", s);
	json_object_object_add(r, "type", json_object_new_string(recipient_names[m->recipient_type]));
	if (m->recipient_type != RB_TO_ALL)
		json_object_object_add(r, "id", json_object_new_string(m->recipient_id));
	json_object_object_add(p, "recipient", r);
	json_object_object_add(c, "command", json_object_new_string(command_names[m->command]));
	if (m->command == RB_USER_OBJECT)
		json_object_object_add(c, "user-object",
				       json_object_get(m->user_object ? m->user_object
								      : json_object_new_object()));
	else if (m->command == RB_USER_STRING)
		json_object_object_add(c, "user-string", json_object_new_string(m->value));
	else if (m->value[0])
		json_object_object_add(c, "value", json_object_new_string(m->value));
	json_object_object_add(p, "message", c);
	return p;
}

char *rb_msg_encode(const struct rb_msg *m)
{
	assert((unsigned)m->command < RB_COMMAND_COUNT && (unsigned)m->sender_type <= RB_ROLE_FOLLOWER &&
	       (unsigned)m->recipient_type <= RB_TO_FOLLOWER);
	json_object *p = payload_object(m);
	char *payload = rb_json_compact(p);
	json_object_put(p);
	if (!payload)
		return NULL; /* a user-object holding a string that is not UTF-8 */
	char hex[RB_SHA256_HEX + 1];
	rb_sha256_hex(payload, strlen(payload), hex);
	char *out = xasprintf("{\"payload\":%s,\"tx_checksum\":\"%s\"}", payload, hex);
	free(payload);
	return out;
}

/* ---- decoding ---------------------------------------------------------- */

static int bad(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int bad(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return rc;
}

/* A value quoted for an error: at most 60 characters of its JSON. */
static const char *shown(json_object *v, char *buf, size_t size)
{
	const char *s = v ? json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN) : "(absent)";
	if (strlen(s) > 60)
		snprintf(buf, size, "%.57s...", s);
	else
		snprintf(buf, size, "%s", s);
	return buf;
}

static json_object *member(json_object *o, const char *key)
{
	json_object *v = NULL;
	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* A string field of o into dst (size bytes); names_only: an id. */
static int get_str(json_object *o, const char *path, const char *key, char *dst, size_t size,
		   bool names_only, char *err, size_t errlen)
{
	char b[64];
	json_object *v = member(o, key);
	if (!json_object_is_type(v, json_type_string))
		return bad(err, errlen, -EBADMSG, "%s.%s: %s is not a string", path, key,
			   shown(v, b, sizeof(b)));
	const char *s = json_object_get_string(v);
	size_t n = (size_t)json_object_get_string_len(v);
	if (n == 0 || n >= size || strlen(s) != n)
		return bad(err, errlen, -EBADMSG,
			   "%s.%s: %s is empty, too long (at most %zu bytes) "
			   "or holds a NUL",
			   path, key, shown(v, b, sizeof(b)), size - 1);
	if (names_only && !rb_name_valid(s, size))
		return bad(err, errlen, -EBADMSG,
			   "%s.%s: %s holds a space, quote or non-ASCII "
			   "character",
			   path, key, shown(v, b, sizeof(b)));
	memcpy(dst, s, n + 1);
	return 0;
}

static int get_choice(json_object *o, const char *path, const char *key, const char *const *names,
		      size_t count, int *out, char *err, size_t errlen)
{
	char b[64];
	json_object *v = member(o, key);
	if (json_object_is_type(v, json_type_string)) {
		for (size_t i = 0; i < count; i++) {
			if (strcmp(json_object_get_string(v), names[i]) == 0) {
				*out = (int)i;
				return 0;
			}
		}
	}
	return bad(err, errlen, -EBADMSG, "%s.%s: %s is not one of roadblock's (%s, %s%s)", path,
		   key, shown(v, b, sizeof(b)), names[0], names[1], count > 2 ? ", ..." : "");
}

static json_object *get_obj(json_object *o, const char *path, const char *key, char *err, size_t errlen)
{
	char b[64];
	json_object *v = member(o, key);
	if (!json_object_is_type(v, json_type_object)) {
		bad(err, errlen, -EBADMSG, "%s%s%s: %s is not an object", path, *path ? "." : "",
		    key, shown(v, b, sizeof(b)));
		return NULL;
	}
	return v;
}

static int decode_message(json_object *c, struct rb_msg *m, char *err, size_t errlen)
{
	int cmd;
	int r = get_choice(c, "payload.message", "command", command_names, RB_COMMAND_COUNT, &cmd,
			   err, errlen);
	if (r < 0)
		return r;
	m->command = (enum rb_command)cmd;
	if (cmd == RB_USER_OBJECT) {
		json_object *u = member(c, "user-object");
		if (!u)
			return bad(err, errlen, -EBADMSG,
				   "payload.message.user-object: absent for "
				   "the command user-object");
		m->user_object = json_object_get(u);
	} else if (cmd == RB_USER_STRING) {
		r = get_str(c, "payload.message", "user-string", m->value, sizeof(m->value), false,
			    err, errlen);
	} else if (member(c, "value")) {
		r = get_str(c, "payload.message", "value", m->value, sizeof(m->value), false, err,
			    errlen);
	} else if (cmd == RB_TIMEOUT_TS) {
		return bad(err, errlen, -EBADMSG,
			   "payload.message.value: absent for the command "
			   "timeout-ts");
	}
	if (r == 0 && cmd == RB_TIMEOUT_TS) {
		char *end;
		errno = 0;
		long long t = strtoll(m->value, &end, 10);
		if (errno || *end || t < 0)
			return bad(err, errlen, -EBADMSG,
				   "payload.message.value: \"%s\" of timeout-ts "
				   "is not whole seconds since 1970",
				   m->value);
	}
	return r;
}

static int decode_payload(json_object *p, struct rb_msg *m, char *err, size_t errlen)
{
	char b[64];
	int r, t;
	json_object *s, *rc, *c;
	if ((r = get_str(p, "payload", "uuid", m->uuid, sizeof(m->uuid), true, err, errlen)) < 0 ||
	    (r = get_str(p, "payload", "roadblock", m->roadblock, sizeof(m->roadblock), true, err,
			 errlen)) < 0)
		return r;
	if (!(s = get_obj(p, "payload", "sender", err, errlen)) ||
	    !(rc = get_obj(p, "payload", "recipient", err, errlen)) ||
	    !(c = get_obj(p, "payload", "message", err, errlen)))
		return -EBADMSG;
	json_object *ts = member(s, "timestamp");
	if (!json_object_is_type(ts, json_type_int) || json_object_get_int64(ts) < 0 ||
	    json_object_get_int64(ts) == INT64_MAX)
		return bad(err, errlen, -EBADMSG,
			   "payload.sender.timestamp: %s is not whole seconds "
			   "since 1970",
			   shown(ts, b, sizeof(b)));
	m->timestamp = json_object_get_int64(ts);
	if ((r = get_choice(s, "payload.sender", "type", role_names, 2, &t, err, errlen)) < 0)
		return r;
	m->sender_type = (enum rb_role)t;
	if ((r = get_str(s, "payload.sender", "id", m->sender_id, sizeof(m->sender_id), true, err,
			 errlen)) < 0)
		return r;
	if ((r = get_choice(rc, "payload.recipient", "type", recipient_names, 3, &t, err, errlen)) < 0)
		return r;
	m->recipient_type = (enum rb_recipient)t;
	if (t != RB_TO_ALL && (r = get_str(rc, "payload.recipient", "id", m->recipient_id,
					   sizeof(m->recipient_id), true, err, errlen)) < 0)
		return r;
	return decode_message(c, m, err, errlen);
}

int rb_msg_decode(const char *text, size_t len, struct rb_msg *m, char *err, size_t errlen)
{
	char b[80];
	memset(m, 0, sizeof(*m));
	if (len > RB_MSG_MAX)
		return bad(err, errlen, -EMSGSIZE, "message: %zu bytes, more than %d", len, RB_MSG_MAX);
	json_tokener *tok = json_tokener_new();
	json_object *o = json_tokener_parse_ex(tok, text, (int)len);
	enum json_tokener_error je = json_tokener_get_error(tok);
	size_t used = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!o || je != json_tokener_success || used != len) {
		json_object_put(o);
		snprintf(b, sizeof(b), "%.*s", len > 60 ? 60 : (int)len, text);
		return bad(err, errlen, -EBADMSG, "message: not one JSON object (%s): \"%s\"",
			   je != json_tokener_success ? json_tokener_error_desc(je) : "text after it",
			   b);
	}
	int r = -EBADMSG;
	json_object *p = NULL, *sum;
	if (!json_object_is_type(o, json_type_object)) {
		bad(err, errlen, r, "message: %s is not an object", shown(o, b, sizeof(b)));
		goto out;
	}
	if (!(p = get_obj(o, "", "payload", err, errlen)))
		goto out;
	sum = member(o, "tx_checksum");
	if (!json_object_is_type(sum, json_type_string) ||
	    json_object_get_string_len(sum) != RB_SHA256_HEX ||
	    strspn(json_object_get_string(sum), "0123456789abcdef") != RB_SHA256_HEX) {
		bad(err, errlen, r, "tx_checksum: %s is not 64 lowercase hex digits",
		    shown(sum, b, sizeof(b)));
		goto out;
	}
	char *compact = rb_json_compact(p), hex[RB_SHA256_HEX + 1];
	if (!compact) {
		bad(err, errlen, r, "payload: a string in it is not UTF-8");
		goto out;
	}
	rb_sha256_hex(compact, strlen(compact), hex);
	free(compact);
	if (strcmp(hex, json_object_get_string(sum)) != 0) {
		bad(err, errlen, r = -EPROTO, "tx_checksum: \"%s\" is not the payload's sha256 (%s)",
		    json_object_get_string(sum), hex);
		goto out;
	}
	r = decode_payload(p, m, err, errlen);
out:
	json_object_put(o);
	if (r < 0)
		rb_msg_clear(m);
	return r;
}

/* ---- lockstep's own user-objects -------------------------------------- */

json_object *rb_release_object(const struct rb_release *r)
{
	json_object *o = json_object_new_object(), *v = json_object_new_object();
	json_object_object_add(v, "step", json_object_new_int64(r->step));
	json_object_object_add(v, "at_realtime_ns", json_object_new_int64(r->at_realtime_ns));
	json_object_object_add(v, "lead_ns", json_object_new_int64(r->lead_ns));
	if (r->next_early)
		json_object_object_add(v, "next_early", json_object_new_boolean(true));
	json_object_object_add(o, "lockstep-release", v);
	return o;
}

static int get_int(json_object *o, const char *path, const char *key, int64_t min, int64_t max,
		   int64_t *out, char *err, size_t errlen)
{
	char b[64];
	json_object *v = member(o, key);
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < min ||
	    json_object_get_int64(v) > max)
		return bad(err, errlen, -EBADMSG,
			   "%s.%s: %s is not a whole number in %" PRId64 "..%" PRId64, path, key,
			   shown(v, b, sizeof(b)), min, max);
	*out = json_object_get_int64(v);
	return 0;
}

#define PATH_RELEASE "payload.message.user-object.lockstep-release"
#define PATH_MEMBER "payload.message.user-object.lockstep-member"

int rb_release_parse(json_object *o, struct rb_release *out, char *err, size_t errlen)
{
	json_object *v = json_object_is_type(o, json_type_object) ? member(o, "lockstep-release")
								  : NULL;
	int64_t k;
	if (!v)
		return 0;
	if (!(v = get_obj(o, "payload.message.user-object", "lockstep-release", err, errlen)))
		return -EBADMSG;
	int r;
	if ((r = get_int(v, PATH_RELEASE, "step", 1, UINT32_MAX, &k, err, errlen)) < 0 ||
	    (r = get_int(v, PATH_RELEASE, "at_realtime_ns", 1, INT64_MAX / 2, &out->at_realtime_ns,
			 err, errlen)) < 0 ||
	    (r = get_int(v, PATH_RELEASE, "lead_ns", 0, 60 * 1000000000LL, &out->lead_ns, err,
			 errlen)) < 0)
		return r;
	json_object *early = member(v, "next_early");
	if (early && !json_object_is_type(early, json_type_boolean)) {
		char b[64];
		return bad(err, errlen, -EBADMSG, "%s.next_early: %s is not true or false",
			   PATH_RELEASE, shown(early, b, sizeof(b)));
	}
	out->next_early = early && json_object_get_boolean(early);
	out->step = (uint32_t)k;
	return 1;
}

json_object *rb_member_object(const char *member_id, int64_t rtt_ns, const char *plan_sha256)
{
	json_object *o = json_object_new_object(), *v = json_object_new_object();
	json_object_object_add(v, "member", json_object_new_string(member_id));
	json_object_object_add(v, "rtt_ns", json_object_new_int64(rtt_ns));
	json_object_object_add(v, "plan_sha256", json_object_new_string(plan_sha256));
	json_object_object_add(o, "lockstep-member", v);
	return o;
}

int rb_member_parse(json_object *o, int64_t *rtt_ns, char *plan_sha256, char *err, size_t errlen)
{
	json_object *v = json_object_is_type(o, json_type_object) ? member(o, "lockstep-member") : NULL;
	if (!v)
		return 0;
	if (!(v = get_obj(o, "payload.message.user-object", "lockstep-member", err, errlen)))
		return -EBADMSG;
	int r = get_int(v, PATH_MEMBER, "rtt_ns", 0, 60 * 1000000000LL, rtt_ns, err, errlen);
	if (r == 0)
		r = get_str(v, PATH_MEMBER, "plan_sha256", plan_sha256, RB_SHA256_HEX + 1, true,
			    err, errlen);
	if (r == 0 && strspn(plan_sha256, "0123456789abcdef") != RB_SHA256_HEX)
		r = bad(err, errlen, -EBADMSG,
			PATH_MEMBER ".plan_sha256: \"%s\" is not 64 lowercase "
				    "hex digits",
			plan_sha256);
	return r < 0 ? r : 1;
}
