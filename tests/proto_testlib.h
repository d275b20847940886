/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the proto tests share: a recorder of decoder events, typical
 * messages of every type, and a stream with every kind of trouble. */
#ifndef LOCKSTEP_PROTO_TESTLIB_H
#define LOCKSTEP_PROTO_TESTLIB_H

#include <stdbool.h>
#include <stddef.h>

#include "proto.h"

/* Every event the decoder reported, messages kept whole. */
struct rec_event {
	enum proto_event ev;
	int err;
	char detail[256];
	struct proto_msg msg;
};

struct rec {
	struct rec_event *e;
	size_t n, cap;
};

/* a proto_event_fn that appends to a struct rec, taking messages over */
void rec_fn(void *ctx, enum proto_event ev, struct proto_msg *msg, int err, const char *detail);
void rec_free(struct rec *r);
void rec_assert_equal(const struct rec *a, const struct rec *b);
/* Decodes data with a fresh decoder, in one piece. */
void decode(const void *data, size_t len, struct rec *r);
/* The one event a line gives. */
struct rec decode_line(const char *line);

void append(struct proto_buf *b, const char *s);
/* b's text as a C string */
const char *text(struct proto_buf *b);

/* the data of sample(PROTO_OUTPUT), a NUL inside */
extern const char output_data[];
extern const size_t output_data_len;
/* A typical message of every type. */
void sample(enum proto_type t, struct proto_msg *m);
/* Encodes m, checks the line's shape, decodes it and checks it is m again. */
void assert_roundtrip(const struct proto_msg *m);
/* proto_encode(m) must refuse (what says what was wrong) and leave its
 * buffer as it was; clears m. */
void assert_refused(struct proto_msg *m, const char *what);
/* line must decode to an error whose detail holds part (NULL: any error). */
void assert_decode_error(const char *line, const char *part);
/* m must encode to a line that holds part (has) or does not (!has). */
void assert_encoded(const struct proto_msg *m, const char *part, bool has);
/* A stream with every message type and every kind of trouble; decoded at
 * once it gives STREAM_EVENTS events. */
void build_stream(struct proto_buf *b);
#define STREAM_EVENTS 26

#endif
