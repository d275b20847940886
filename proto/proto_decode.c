// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The decoder: bytes in pieces of any size to lines, lines to messages.
 *
 * Everything here comes from the peer and is not trusted: the line buffer
 * never grows past PROTO_LINE_MAX (the rest of a longer line is dropped
 * unread), the text is checked for UTF-8 before json-c sees it, json-c's
 * nesting is bounded by its tokener, member and element counts are checked
 * before a field is read, and every field is checked against the limits of
 * the schema (the encoder applies the same ones).  A refused line is
 * reported with a detail that names the field and its value.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "proto_impl.h"

#define DETAIL_MAX 256

struct where {
	char *detail;
	const char *type; /* "ready", "plan: steps[3]" */
};

__attribute__((format(printf, 2, 3))) static int bad(const struct where *w, const char *fmt, ...)
{
	size_t n = (size_t)snprintf(w->detail, DETAIL_MAX, "%s: ", w->type);
	va_list ap;

	va_start(ap, fmt);
	if (n < DETAIL_MAX)
		vsnprintf(w->detail + n, DETAIL_MAX - n, fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

/* What a JSON value is, for an error text: "a string", "null". */
static const char *jtype(struct json_object *j)
{
	switch (json_object_get_type(j)) {
	case json_type_null: return "null";
	case json_type_boolean: return "a boolean";
	case json_type_double: return "a float";
	case json_type_int: return "an integer";
	case json_type_object: return "an object";
	case json_type_array: return "an array";
	case json_type_string: return "a string";
	}
	return "a value";
}

/*
 * An integer field as int64, refusing what json-c would clamp: a value past
 * INT64_MAX is kept as uint64 inside json-c and reads back as INT64_MAX.
 */
static int get_int(const struct where *w, const struct proto__field *f, struct json_object *j,
		   int64_t *v)
{
	if (!json_object_is_type(j, json_type_int))
		return bad(w, "\"%s\" is %s, not an integer", f->name, jtype(j));
	*v = json_object_get_int64(j);
	if (*v == INT64_MAX && json_object_get_uint64(j) != (uint64_t)INT64_MAX)
		return bad(w, "\"%s\" is %" PRIu64 ", not in %" PRId64 "..%" PRId64, f->name,
			   json_object_get_uint64(j), f->min, f->max);
	if (*v < f->min || *v > f->max)
		return bad(w, "\"%s\" is %" PRId64 ", not in %" PRId64 "..%" PRId64, f->name, *v,
			   f->min, f->max);
	return 0;
}

static int get_u64(const struct where *w, const struct proto__field *f, struct json_object *j,
		   uint64_t *v)
{
	if (!json_object_is_type(j, json_type_int))
		return bad(w, "\"%s\" is %s, not an integer", f->name, jtype(j));
	if (json_object_get_int64(j) < 0)
		return bad(w, "\"%s\" is %" PRId64 ", not in %" PRId64 "..%" PRIu64, f->name,
			   json_object_get_int64(j), f->min, UINT64_MAX);
	*v = json_object_get_uint64(j);
	if (*v < (uint64_t)f->min)
		return bad(w, "\"%s\" is %" PRIu64 ", not in %" PRId64 "..%" PRIu64, f->name, *v,
			   f->min, UINT64_MAX);
	return 0;
}

/* A string field's value; U+0000 only where allow_nul (raw output). */
static int get_str(const struct where *w, const struct proto__field *f, struct json_object *j,
		   size_t max, bool allow_nul, const char **s, size_t *len)
{
	size_t bad_at;

	if (!json_object_is_type(j, json_type_string))
		return bad(w, "\"%s\" is %s, not a string", f->name, jtype(j));
	*s = json_object_get_string(j);
	*len = (size_t)json_object_get_string_len(j);
	if (*len > max)
		return bad(w, "\"%s\" is %zu bytes, over the limit of %zu", f->name, *len, max);
	if (!allow_nul && memchr(*s, '\0', *len))
		return bad(w, "\"%s\" holds U+0000 at byte %zu", f->name,
			   (size_t)((const char *)memchr(*s, '\0', *len) - *s));
	/* json-c turns a lone surrogate escape into U+FFFD; this is a guard
	 * against a json-c that would not. */
	if (!proto__utf8_valid(*s, *len, &bad_at))
		return bad(w, "\"%s\" is not UTF-8 at byte %zu", f->name, bad_at);
	return 0;
}

static int get_enum(const struct where *w, const struct proto__field *f, struct json_object *j,
		    const char *a, const char *b, int *which)
{
	const char *s;
	size_t len;
	char q[64];
	int r = get_str(w, f, j, 64, false, &s, &len);

	if (r)
		return r;
	if (!strcmp(s, a) || !strcmp(s, b)) {
		*which = !strcmp(s, a) ? 0 : 1;
		return 0;
	}
	proto__quote(q, sizeof(q), s, len);
	return bad(w, "\"%s\" is %s, not \"%s\" or \"%s\"", f->name, q, a, b);
}

static int decode_fields(const struct where *w, struct json_object *obj, void *base,
			 const struct proto__field *fields, size_t n);

static int decode_steps(const struct where *w, const struct proto__field *f, struct json_object *j,
			struct proto_msg *m)
{
	size_t n;

	if (!json_object_is_type(j, json_type_array))
		return bad(w, "\"%s\" is %s, not an array", f->name, jtype(j));
	n = json_object_array_length(j);
	if (n > (size_t)f->max)
		return bad(w, "\"%s\" has %zu entries, over the limit of %" PRId64, f->name, n, f->max);
	/* calloc(0) may return NULL or not: keep "no steps" one thing */
	m->u.plan.steps = n ? calloc(n, sizeof(*m->u.plan.steps)) : NULL;
	if (n && !m->u.plan.steps)
		abort();
	m->u.plan.nsteps = (uint32_t)n;
	for (size_t i = 0; i < n; i++) {
		struct json_object *sj = json_object_array_get_idx(j, i);
		char type[48];
		struct where sw = { w->detail, type };
		int r;

		snprintf(type, sizeof(type), "%s: %s[%zu]", w->type, f->name, i);
		if (!json_object_is_type(sj, json_type_object))
			return bad(&sw, "%s, not an object", jtype(sj));
		r = decode_fields(&sw, sj, &m->u.plan.steps[i], proto__step_fields,
				  proto__nstep_fields);
		if (r)
			return r;
	}
	return 0;
}

static int decode_field(const struct where *w, const struct proto__field *f, struct json_object *j,
			void *base)
{
	void *p = PROTO__FIELD_PTR(base, f);
	const char *s;
	size_t len;
	int64_t i = 0;
	int which = 0, r;

	switch (f->kind) {
	case PROTO__U32:
	case PROTO__OPT_U32:
	case PROTO__I32:
	case PROTO__I64:
	case PROTO__OPT_I64:
		r = get_int(w, f, j, &i);
		if (r)
			return r;
		if (f->kind == PROTO__U32 || f->kind == PROTO__OPT_U32)
			*(uint32_t *)p = (uint32_t)i;
		else if (f->kind == PROTO__I32)
			*(int32_t *)p = (int32_t)i;
		else
			*(int64_t *)p = i;
		return 0;
	case PROTO__U64: return get_u64(w, f, j, p);
	case PROTO__DOUBLE:
		if (!json_object_is_type(j, json_type_double) && !json_object_is_type(j, json_type_int))
			return bad(w, "\"%s\" is %s, not a number", f->name, jtype(j));
		*(double *)p = json_object_get_double(j);
		if (!isfinite(*(double *)p))
			return bad(w, "\"%s\" is not a finite number", f->name);
		return 0;
	case PROTO__STR:
	case PROTO__OPT_STR:
	case PROTO__NAME:
		r = get_str(w, f, j, f->size - 1, false, &s, &len);
		if (r)
			return r;
		if (len < (size_t)f->min)
			return bad(w, "\"%s\" is empty", f->name);
		memcpy(p, s, len);
		((char *)p)[len] = '\0';
		if (f->kind == PROTO__NAME && !proto_name_valid(p)) {
			char q[64];

			proto__quote(q, sizeof(q), s, len);
			return bad(w,
				   "\"%s\" is %s, not a name (1 to %d of A-Z a-z 0-9 . _ -, "
				   "not starting with '.')",
				   f->name, q, PROTO_NAME_MAX - 1);
		}
		return 0;
	case PROTO__HSTR:
		r = get_str(w, f, j, f->size - 1, false, &s, &len);
		if (r)
			return r;
		if (len < (size_t)f->min)
			return bad(w, "\"%s\" is empty", f->name);
		/* exactly its length: a plan holds thousands of these */
		free(*(char **)p);
		*(char **)p = proto__xrealloc(NULL, len + 1);
		memcpy(*(char **)p, s, len);
		(*(char **)p)[len] = '\0';
		return 0;
	case PROTO__BETTER:
		r = get_enum(w, f, j, "higher", "lower", &which);
		*(bool *)p = !r && which == 0;
		return r;
	case PROTO__KIND:
		r = get_enum(w, f, j, "cpu-probe", "command", &which);
		*(enum proto_step_kind *)p = which ? PROTO_STEP_COMMAND : PROTO_STEP_CPU_PROBE;
		return r;
	case PROTO__OUTPUT: {
		struct proto_msg *m = base;

		r = get_str(w, f, j, (size_t)f->max, true, &s, &len);
		if (r)
			return r;
		m->u.output.data = proto__xrealloc(NULL, len + 1);
		memcpy(m->u.output.data, s, len);
		m->u.output.data[len] = '\0';
		m->u.output.len = len;
		return 0;
	}
	case PROTO__STEPS: return decode_steps(w, f, j, base);
	}
	return bad(w, "\"%s\" has no decoder", f->name);
}

static int decode_fields(const struct where *w, struct json_object *obj, void *base,
			 const struct proto__field *fields, size_t n)
{
	/* In a step the kind is read first (the table's order): it says which
	 * of the later fields the step has. */
	const struct proto_step *step = base;
	bool is_step = fields == proto__step_fields;

	for (size_t i = 0; i < n; i++) {
		const struct proto__field *f = &fields[i];
		struct json_object *j;
		int r;

		if (is_step && f->only_kind && f->only_kind != step->kind)
			continue;
		if (!json_object_object_get_ex(obj, f->name, &j)) {
			if (f->kind == PROTO__OPT_U32 || f->kind == PROTO__OPT_I64 ||
			    f->kind == PROTO__OPT_STR)
				continue; /* added later: an older peer does not send it */
			return bad(w, "missing \"%s\"", f->name);
		}
		r = decode_field(w, f, j, base);
		if (r)
			return r;
	}
	return 0;
}

/* The member and element limits, everywhere (unknown fields included). */
static int check_sizes(const struct where *w, struct json_object *j)
{
	size_t n;

	if (json_object_is_type(j, json_type_object)) {
		n = (size_t)json_object_object_length(j);
		if (n > PROTO_FIELDS_MAX)
			return bad(w, "an object has %zu members, over the limit of %d", n,
				   PROTO_FIELDS_MAX);
		json_object_object_foreach(j, key, val)
		{
			int r = check_sizes(w, val);

			(void)key;
			if (r)
				return r;
		}
	} else if (json_object_is_type(j, json_type_array)) {
		n = json_object_array_length(j);
		if (n > PROTO_STEPS_MAX)
			return bad(w, "an array has %zu entries, over the limit of %d", n,
				   PROTO_STEPS_MAX);
		for (size_t i = 0; i < n; i++) {
			int r = check_sizes(w, json_object_array_get_idx(j, i));

			if (r)
				return r;
		}
	}
	return 0;
}

/* The envelope: "v", then "type", then the type's fields. */
static int decode_object(struct json_object *obj, struct proto_msg *m, char *detail)
{
	struct where w = { detail, "message" };
	struct json_object *v, *t;
	const struct proto__type *ty;
	char q[64];
	int64_t version;
	int r;

	r = check_sizes(&w, obj);
	if (r)
		return r;
	if (!json_object_object_get_ex(obj, "v", &v))
		return bad(&w, "missing \"v\"");
	if (!json_object_is_type(v, json_type_int))
		return bad(&w, "\"v\" is %s, not an integer", jtype(v));
	version = json_object_get_int64(v);
	if (version != PROTO_VERSION) {
		snprintf(detail, DETAIL_MAX, "message: \"v\" is %" PRId64 ", this side speaks %d",
			 version, PROTO_VERSION);
		return -EPROTONOSUPPORT;
	}
	if (!json_object_object_get_ex(obj, "type", &t))
		return bad(&w, "missing \"type\"");
	if (!json_object_is_type(t, json_type_string))
		return bad(&w, "\"type\" is %s, not a string", jtype(t));
	/* "ready\u0000x" is not "ready" */
	if (strlen(json_object_get_string(t)) == (size_t)json_object_get_string_len(t))
		m->type = proto__type_by_name(json_object_get_string(t));
	ty = proto__type(m->type);
	if (!ty) {
		proto__quote(q, sizeof(q), json_object_get_string(t),
			     (size_t)json_object_get_string_len(t));
		snprintf(detail, DETAIL_MAX, "message: unknown type %s", q);
		return -ENOMSG;
	}
	m->version = PROTO_VERSION;
	w.type = ty->name;
	r = decode_fields(&w, obj, m, ty->fields, ty->nfields);
	if (r)
		return r;
	return proto__msg_check(m, detail, DETAIL_MAX);
}

/* Whether the string that ended before s[i] is a member name (a ':' follows). */
static bool is_member_name(const char *s, size_t len, size_t i)
{
	while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
		i++;
	return i < len && s[i] == ':';
}

/*
 * What json-c would take but should not: bytes that are not UTF-8, NUL,
 * U+0000 in a member name (json-c cuts the name there), single-quoted
 * strings (a json-c extension), and integers past 64 bits, which json-c
 * clamps to INT64_MIN or UINT64_MAX without a word.
 */
static int check_text(const char *s, size_t len, char *detail)
{
	const char *nul = memchr(s, '\0', len);
	bool in_string = false;
	size_t at, nul_escape = SIZE_MAX;

	if (!proto__utf8_valid(s, len, &at)) {
		snprintf(detail, DETAIL_MAX, "line: invalid UTF-8 at byte %zu", at);
		return -EILSEQ;
	}
	if (nul) {
		snprintf(detail, DETAIL_MAX, "line: a NUL byte at byte %zu", (size_t)(nul - s));
		return -EBADMSG;
	}
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		uint64_t mag = 0;
		bool neg, over = false;
		size_t j;

		if (in_string) {
			if (c == '\\') {
				if (len - i > 5 && !memcmp(s + i + 1, "u0000", 5))
					nul_escape = i;
				i++;
			} else if (c == '"') {
				in_string = false;
				if (nul_escape != SIZE_MAX && is_member_name(s, len, i + 1)) {
					/* json-c would cut the name there: "step\u0000x" is "step" */
					snprintf(detail, DETAIL_MAX,
						 "line: a member name holds U+0000 at byte %zu",
						 nul_escape);
					return -EBADMSG;
				}
				nul_escape = SIZE_MAX;
			}
			continue;
		}
		if (c == '"') {
			in_string = true;
			continue;
		}
		if (c == '\'') {
			snprintf(detail, DETAIL_MAX, "line: not JSON: a quote ' at byte %zu", i);
			return -EBADMSG;
		}
		if (c != '-' && (c < '0' || c > '9'))
			continue;
		neg = c == '-';
		for (j = i + neg; j < len && s[j] >= '0' && s[j] <= '9'; j++) {
			over |= mag > (UINT64_MAX - (uint64_t)(s[j] - '0')) / 10;
			mag = mag * 10 + (uint64_t)(s[j] - '0');
		}
		if (j < len && (s[j] == '.' || s[j] == 'e' || s[j] == 'E')) {
			/* a double: json-c keeps its text; the field checks it */
			while (j < len && strchr("0123456789.eE+-", s[j]))
				j++;
		} else if (over || (neg && mag > (uint64_t)INT64_MAX + 1)) {
			snprintf(detail, DETAIL_MAX,
				 "line: the integer at byte %zu is out of 64-bit range", i);
			return -EBADMSG;
		}
		i = j - 1;
	}
	return 0;
}

static int parse_line(const char *line, size_t len, struct proto_msg *m, char *detail)
{
	struct json_tokener *tok;
	struct json_object *obj;
	enum json_tokener_error jerr;
	size_t end;
	int r;

	r = check_text(line, len, detail);
	if (r)
		return r;
	tok = json_tokener_new_ex(PROTO_DEPTH_MAX);
	if (!tok)
		abort();
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	/* the NUL after the line tells json-c that the text ends there (so
	 * that "12" is a number, not the start of one) */
	assert(line[len] == '\0');
	obj = json_tokener_parse_ex(tok, line, (int)len + 1);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	while (end < len && (line[end] == ' ' || line[end] == '\t' || line[end] == '\r'))
		end++;
	if (jerr != json_tokener_success || end < len) {
		if (jerr == json_tokener_success)
			snprintf(detail, DETAIL_MAX,
				 "line: not JSON: more after the value at byte %zu", end);
		else
			snprintf(detail, DETAIL_MAX, "line: not JSON: %s at byte %zu",
				 json_tokener_error_desc(jerr), end);
		r = -EBADMSG;
	} else if (!json_object_is_type(obj, json_type_object)) {
		snprintf(detail, DETAIL_MAX, "line: %s, not an object", jtype(obj));
		r = -EBADMSG;
	} else {
		r = decode_object(obj, m, detail);
	}
	json_object_put(obj);
	return r;
}

static bool blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t')
			return false;
	return true;
}

static void line_done(struct proto_decoder *d, proto_event_fn fn, void *ctx)
{
	struct proto_msg m;
	char detail[DETAIL_MAX];
	size_t len = d->len;
	int r;

	/* the line is consumed before fn runs, so fn may reset the decoder */
	d->len = 0;
	if (len && d->line[len - 1] == '\r')
		len--;
	if (blank(d->line, len))
		return;
	d->line[len] = '\0';
	memset(&m, 0, sizeof(m));
	detail[0] = '\0';
	r = parse_line(d->line, len, &m, detail);
	if (r)
		fn(ctx, PROTO_EV_ERROR, NULL, r, detail);
	else
		fn(ctx, PROTO_EV_MSG, &m, 0, NULL);
	proto_msg_clear(&m);
}

void proto_decoder_init(struct proto_decoder *d)
{
	memset(d, 0, sizeof(*d));
}

void proto_decoder_free(struct proto_decoder *d)
{
	if (!d)
		return;
	free(d->line);
	memset(d, 0, sizeof(*d));
}

void proto_decoder_reset(struct proto_decoder *d)
{
	d->len = 0;
	d->skipping = false;
}

/* Room for a line of len <= PROTO_LINE_MAX bytes and a NUL, doubling from
 * 256: a decoder costs what its longest line did, never more. */
static void grow(struct proto_decoder *d, size_t len)
{
	size_t cap = d->cap ? d->cap : 256;

	if (len + 1 <= d->cap)
		return;
	while (cap < len + 1)
		cap *= 2;
	if (cap > PROTO_LINE_MAX + 1)
		cap = PROTO_LINE_MAX + 1;
	d->line = proto__xrealloc(d->line, cap);
	d->cap = cap;
}

/* The first '\n' or 0xFF in [p, end), or NULL. */
static const char *find_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	const char *ff = memchr(p, PROTO_RESET_BYTE, (size_t)((nl ? nl : end) - p));

	return ff ? ff : nl;
}

void proto_decoder_feed(struct proto_decoder *d, const void *data, size_t len, proto_event_fn fn,
			void *ctx)
{
	const char *p = data, *end = p + len;

	assert(fn && (data || !len));
	while (p < end) {
		const char *q = find_end(p, end);
		size_t n = (size_t)((q ? q : end) - p);

		if (d->skipping) {
			/* the rest of an over-long line: dropped as it comes */
		} else if (n > PROTO_LINE_MAX - d->len) {
			char detail[64];

			/* said once, when the limit is crossed */
			d->len = 0;
			d->skipping = true;
			snprintf(detail, sizeof(detail), "line: over %d bytes", PROTO_LINE_MAX);
			fn(ctx, PROTO_EV_ERROR, NULL, -EMSGSIZE, detail);
		} else if (n) {
			grow(d, d->len + n);
			memcpy(d->line + d->len, p, n);
			d->len += n;
		}
		if (!q)
			return;
		p = q + 1;
		if ((unsigned char)*q == PROTO_RESET_BYTE) {
			d->len = 0;
			d->skipping = false;
			fn(ctx, PROTO_EV_RESET, NULL, 0, NULL);
		} else if (d->skipping) {
			d->skipping = false;
		} else {
			line_done(d, fn, ctx);
		}
	}
}
