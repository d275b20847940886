/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proto internals: the schema that the encoder, the decoder and
 * proto_msg_equal() all walk, so that what one side writes the other side
 * accepts, field for field.
 */
#ifndef LOCKSTEP_PROTO_IMPL_H
#define LOCKSTEP_PROTO_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto.h"

enum proto__kind {
	PROTO__U32,	/* uint32_t in min..max */
	PROTO__OPT_U32, /* uint32_t in min..max; missing reads as 0, 0 is not written */
	PROTO__I32,	/* int32_t in min..max */
	PROTO__I64,	/* int64_t in min..max */
	PROTO__OPT_I64, /* int64_t in min..max; missing reads as 0, 0 is not written */
	PROTO__U64,	/* uint64_t, any value (at least min) */
	PROTO__DOUBLE,	/* double, finite */
	PROTO__STR,	/* char[size]: UTF-8 without U+0000, < size bytes */
	PROTO__OPT_STR, /* as STR; missing reads as "", "" is not written */
	PROTO__NAME,	/* char[size]: proto_name_valid() */
	PROTO__HSTR,	/* char *, malloc'ed to fit: as STR, < size bytes; NULL
			  is never written */
	PROTO__BETTER,	/* bool: "higher" (true) or "lower" */
	PROTO__KIND,	/* enum proto_step_kind: "cpu-probe" or "command" */
	PROTO__OUTPUT,	/* output.data + output.len: UTF-8, <= PROTO_OUTPUT_MAX */
	PROTO__STEPS,	/* plan.steps + plan.nsteps: an array of step objects */
};

struct proto__field {
	const char *name;
	enum proto__kind kind;
	size_t off;  /* in struct proto_msg, or in struct proto_step */
	size_t size; /* STR, NAME: the array's size, NUL included; HSTR: the
			  same bound */
	int64_t min, max;
	/* In a step: only for this kind (0: every kind).  For another kind the
	 * field is neither written nor read, and stays zero. */
	enum proto_step_kind only_kind;
};

struct proto__type {
	const char *name; /* NULL: not a type */
	const struct proto__field *fields;
	size_t nfields;
};

/* Indexed by enum proto_type; NULL for a value outside it. */
const struct proto__type *proto__type(enum proto_type t);
/* 0 when name is not a type. */
enum proto_type proto__type_by_name(const char *name);
extern const struct proto__field proto__step_fields[];
extern const size_t proto__nstep_fields;

/* Whether s[0..len) is UTF-8 (no overlongs, surrogates or values past
 * U+10FFFF).  On false, *bad is the offset of the first bad byte. */
bool proto__utf8_valid(const char *s, size_t len, size_t *bad);
/* Checks across fields (hello's version range, plan's step order): 0 or
 * -EBADMSG with detail. */
int proto__msg_check(const struct proto_msg *m, char *detail, size_t size);
/* Writes s as a short, printable, quoted excerpt for an error text. */
void proto__quote(char *dst, size_t size, const char *s, size_t len);

/* The library aborts on out-of-memory like the rest of lockstep, but may not
 * use common/xalloc.h (proto depends on nothing of ours). */
void *proto__xrealloc(void *p, size_t n);
void proto__buf_append(struct proto_buf *b, const void *data, size_t n);

#define PROTO__FIELD_PTR(base, f) ((void *)((char *)(base) + (f)->off))
#define PROTO__FIELD_CPTR(base, f) ((const void *)((const char *)(base) + (f)->off))

#endif
