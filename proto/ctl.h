/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl: the control protocol between hostctl and hostd --service, on proto's
 * framing: newline-delimited JSON objects, 0xFF resets the line, every line
 * bounded, every field checked before use.  Pure code, no I/O, no logging.
 *
 * A request ("submit", "status", "list", "cancel", "logs", "wait") is
 * answered by zero or more data lines ("experiment", "log") and exactly one
 * final line, "ok" or "error".  The messages and their fields are in
 * docs/service.md.
 */
#ifndef LOCKSTEP_CTL_H
#define LOCKSTEP_CTL_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto.h"

#define CTL_VERSION 1
/* A submit carries both configs, so a control line may be longer than an
 * agent's; still bounded, and the decoder never holds more. */
#define CTL_LINE_MAX (256 * 1024)
#define CTL_CONFIG_MAX (64 * 1024) /* bytes of one config file in a submit */
#define CTL_PATH_MAX 1024	   /* a results folder, incl. NUL */
#define CTL_LOG_CHUNK (8 * 1024)   /* bytes of log in one "log" line */
#define CTL_FILES_MAX 16	   /* files a submit carries beside h.conf and g.conf */

/* Message types a peer may send; anything else is refused by the decoder. */
bool ctl_type_known(const char *type);

struct ctl_decoder {
	char *line;
	size_t len, cap;
	bool skipping;
};

enum ctl_event {
	CTL_EV_MSG,   /* msg: an object with "v" == CTL_VERSION and a known "type" */
	CTL_EV_RESET, /* 0xFF: a partial line was dropped */
	CTL_EV_ERROR, /* a line was refused; err (-EMSGSIZE, -EILSEQ, -EBADMSG,
			 -EPROTONOSUPPORT, -ENOMSG) and detail say why */
};

/* Returns false to stop: the rest of the bytes fed are dropped (the caller
 * closed the peer, for instance).  msg is the decoder's; take a reference
 * (json_object_get) to keep it. */
typedef bool (*ctl_event_fn)(void *ctx, enum ctl_event ev, json_object *msg, const char *type,
			     int err, const char *detail);

/* A zeroed decoder is initialised. */
void ctl_decoder_free(struct ctl_decoder *d);
/* false when fn stopped it. */
bool ctl_decoder_feed(struct ctl_decoder *d, const void *data, size_t len, ctl_event_fn fn, void *ctx);

/* A new message {"v":1,"type":type}. */
json_object *ctl_msg_new(const char *type);
/* Appends m as one line; 0, or -EMSGSIZE when it is over CTL_LINE_MAX (out
 * is left as it was). */
int ctl_encode(json_object *m, struct proto_buf *out);

/*
 * Field getters.  0 with *out set; 1 when the field is missing (out
 * untouched); -EBADMSG with detail ("field 'id': ...") when it has the wrong
 * type or is out of its bounds.
 */
/* A string of at most max - 1 bytes with no U+0000; *out points into m. */
int ctl_get_str(json_object *m, const char *key, size_t max, const char **out, char *detail,
		size_t size);
int ctl_get_u64(json_object *m, const char *key, uint64_t max, uint64_t *out, char *detail,
		size_t size);
/* An object of at most CTL_FILES_MAX files: name (no control character,
 * under CTL_PATH_MAX) -> text (a string without NUL of at most
 * CTL_CONFIG_MAX bytes); *out points into m. */
int ctl_get_files(json_object *m, const char *key, json_object **out, char *detail, size_t size);
int ctl_get_bool(json_object *m, const char *key, bool *out, char *detail, size_t size);

/* The longest prefix of s[0..len) that is whole UTF-8, with every byte that
 * can never start a valid sequence replaced by '?' in place: so that a log
 * read in chunks goes out as JSON text and a character cut by the chunk
 * comes whole with the next one. */
size_t ctl_utf8_prefix(char *s, size_t len);

#endif
