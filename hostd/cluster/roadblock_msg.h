/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Roadblock's messages (perftool-incubator/roadblock), encoded and decoded:
 *
 *   {"payload":{"uuid":U,"roadblock":ID,
 *               "sender":{"timestamp":S,"type":"leader"|"follower","id":NAME},
 *               "recipient":{"type":"all"|"leader"|"follower"[,"id":NAME]},
 *               "message":{"command":C[,"value"|"user-string"|"user-object":V]}},
 *    "tx_checksum":sha256-hex of the payload's compact JSON}
 *
 * The compact JSON is Python's json.dumps(separators=(",", ":")): keys in
 * their order, no spaces, non-ASCII and control characters as \uXXXX, "/"
 * left alone.  A received message is untrusted: every field is checked and
 * the checksum recomputed over the payload as received; an error names the
 * field and its value.  Pure: no I/O, no clock (the caller passes them in).
 */
#ifndef LOCKSTEP_ROADBLOCK_MSG_H
#define LOCKSTEP_ROADBLOCK_MSG_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Limits on what a peer can make us hold. */
#define RB_MSG_MAX (64 * 1024) /* bytes of one message's JSON */
#define RB_ID_MAX 256	       /* bytes of a roadblock id, with its NUL */
#define RB_NAME_MAX 128	       /* a member's id, with its NUL */
#define RB_UUID_MAX 64
#define RB_VALUE_MAX 1024 /* a value or user-string */
#define RB_SHA256_HEX 64

enum rb_command {
	RB_GLOBAL_STREAM_CREATED,
	RB_LEADER_STREAM_CREATED,
	RB_FOLLOWERS_STREAM_CREATED,
	RB_PERSONAL_STREAM_CREATED,
	RB_TIMEOUT_TS,
	RB_INITIALIZED,
	RB_LEADER_ONLINE,
	RB_FOLLOWER_ONLINE,
	RB_ALL_ONLINE,
	RB_INITIATOR_INFO,
	RB_FOLLOWER_READY,
	RB_FOLLOWER_READY_ABORT,
	RB_FOLLOWER_READY_WAITING,
	RB_LEADER_HEARTBEAT,
	RB_FOLLOWER_HEARTBEAT,
	RB_FOLLOWER_WAITING_COMPLETE,
	RB_FOLLOWER_WAITING_COMPLETE_FAILED,
	RB_HEARTBEAT_TIMEOUT,
	RB_ALL_READY,
	RB_ALL_GO,
	RB_ALL_ABORT,
	RB_ALL_WAIT,
	RB_FOLLOWER_GONE,
	RB_ALL_GONE,
	RB_USER_STRING,
	RB_USER_OBJECT,
	RB_COMMAND_COUNT
};

enum rb_role { RB_ROLE_LEADER, RB_ROLE_FOLLOWER };
enum rb_recipient { RB_TO_ALL, RB_TO_LEADER, RB_TO_FOLLOWER };

/* Roadblock's exit codes, which a member's outcome maps to. */
#define RB_RC_TIMEOUT 3
#define RB_RC_ABORT 4
#define RB_RC_HEARTBEAT_TIMEOUT 5

struct rb_msg {
	char uuid[RB_UUID_MAX];
	char roadblock[RB_ID_MAX];
	int64_t timestamp; /* the sender's, whole seconds of the real-time clock */
	enum rb_role sender_type;
	char sender_id[RB_NAME_MAX];
	enum rb_recipient recipient_type;
	char recipient_id[RB_NAME_MAX]; /* "" for RB_TO_ALL */
	enum rb_command command;
	char value[RB_VALUE_MAX]; /* value or user-string; "" when absent */
	json_object *user_object; /* owned; NULL when absent */
};

/* "all-go" for RB_ALL_GO; NULL out of range. */
const char *rb_command_name(enum rb_command c);
const char *rb_role_name(enum rb_role r);

/* Fills m (user_object NULL, value "").  Names longer than their limits
 * are cut; the caller checks its own names with rb_name_valid. */
/* A message's uuid as roadblock's schema wants it (36 characters, which
 * its validation checks): an RFC 4122 version-4 form of the 16 random
 * bytes of base with seq mixed into the last 8, so each message of one
 * sender differs.  out holds RB_UUID_LEN + 1. */
#define RB_UUID_LEN 36
void rb_uuid_format(char *out, const uint8_t base[16], uint64_t seq);

void rb_msg_init(struct rb_msg *m, const char *uuid, const char *roadblock, int64_t timestamp,
		 enum rb_role sender, const char *sender_id, enum rb_recipient to,
		 const char *recipient_id, enum rb_command command);
void rb_msg_clear(struct rb_msg *m); /* drops user_object */

/* A member or roadblock id roadblock can carry: 1..max-1 bytes of printable
 * ASCII without quotes or backslashes. */
bool rb_name_valid(const char *s, size_t max);

/* The message as roadblock sends it, a NUL-terminated string to free(). */
char *rb_msg_encode(const struct rb_msg *m);

/* Parses and checks text (len bytes, no NUL needed) into m.  0, or
 * -EMSGSIZE, -EBADMSG (not JSON, a field missing, of the wrong type or
 * value) or -EPROTO (the checksum differs), with err saying which field
 * and value.  On success m->user_object is m's to rb_msg_clear. */
int rb_msg_decode(const char *text, size_t len, struct rb_msg *m, char *err, size_t errlen);

/* Python's json.dumps(o, separators=(",", ":")) of o, appended to a string
 * to free(); NULL when o holds a string that is not UTF-8. */
char *rb_json_compact(json_object *o);

/* sha256 of s in lowercase hex into hex (RB_SHA256_HEX + 1 bytes). */
void rb_sha256_hex(const char *s, size_t len, char *hex);

/* lockstep's release instant as a user-object:
 *   {"lockstep-release":{"step":N,"at_realtime_ns":T,"lead_ns":L[,"next_early":B]}}
 * next_early: every member speaks lockstep, so each may join step N+1's
 * roadblock as soon as step N is released (docs/cluster.md "Joining the
 * next step early"); absent is false.
 * rb_release_parse: 1 with the fields when o is one (checked), 0 when o is
 * some other user-object, -EBADMSG with err when it claims to be one but a
 * field is wrong. */
struct rb_release {
	uint32_t step;
	int64_t at_realtime_ns, lead_ns;
	bool next_early;
};
json_object *rb_release_object(const struct rb_release *r);
int rb_release_parse(json_object *o, struct rb_release *r, char *err, size_t errlen);

/* A follower about itself, to the leader before follower-ready: its
 * measured round trip through Redis and its plan's digest (sha256 hex):
 *   {"lockstep-member":{"member":NAME,"rtt_ns":R,"plan_sha256":HEX}}
 * rb_member_parse: as rb_release_parse; plan gets RB_SHA256_HEX + 1 bytes. */
json_object *rb_member_object(const char *member, int64_t rtt_ns, const char *plan_sha256);
int rb_member_parse(json_object *o, int64_t *rtt_ns, char *plan_sha256, char *err, size_t errlen);

#endif
