// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The encoder: a message to one line of JSON.  It checks every field against
 * the same limits the decoder applies, so a message it writes is a message
 * the peer accepts; and since every string must be UTF-8 and json-c escapes
 * control characters, a line never holds 0xFF or a newline of its own.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "proto_impl.h"

static struct json_object *jnew(struct json_object *o)
{
	if (!o)
		abort(); /* json-c is out of memory */
	return o;
}

static void jadd(struct json_object *obj, const char *key, struct json_object *v)
{
	/* keys are string constants and each is added once */
	if (json_object_object_add_ex(obj, key, jnew(v),
				      JSON_C_OBJECT_ADD_KEY_IS_NEW | JSON_C_OBJECT_KEY_IS_CONSTANT))
		abort();
}

/*
 * The shortest of %.15g..%.17g that reads back as the same double, spelled
 * as a JSON double (never "5" or "-0", which would read back as integers
 * and lose -0.0).  Formatted here rather than by json-c, whose format is a
 * process-wide setting that other code may change.
 */
static struct json_object *new_double(double v)
{
	char buf[40];
	char *comma;

	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	comma = strchr(buf, ','); /* a locale's decimal comma */
	if (comma)
		*comma = '.';
	if (!strpbrk(buf, ".e"))
		strcat(buf, ".0");
	return json_object_new_double_s(v, buf);
}

static bool str_ok(const char *s, size_t size, int64_t minlen, size_t *len)
{
	*len = strnlen(s, size);
	return *len < size && *len >= (size_t)minlen && proto__utf8_valid(s, *len, NULL);
}

static int encode_fields(struct json_object *obj, const void *base,
			 const struct proto__field *fields, size_t n, enum proto_step_kind kind);

static int encode_steps(struct json_object *obj, const struct proto_msg *m,
			const struct proto__field *f)
{
	struct json_object *arr;
	int r = 0;

	if (m->u.plan.nsteps > (uint64_t)f->max || (m->u.plan.nsteps && !m->u.plan.steps))
		return -EINVAL;
	arr = jnew(json_object_new_array_ext((int)m->u.plan.nsteps));
	jadd(obj, f->name, arr);
	for (uint32_t i = 0; i < m->u.plan.nsteps && !r; i++) {
		const struct proto_step *s = &m->u.plan.steps[i];
		struct json_object *so = jnew(json_object_new_object());

		if (json_object_array_add(arr, so))
			abort();
		r = encode_fields(so, s, proto__step_fields, proto__nstep_fields, s->kind);
	}
	return r;
}

static int encode_field(struct json_object *obj, const void *base, const struct proto__field *f)
{
	const void *p = PROTO__FIELD_CPTR(base, f);
	int64_t i;
	size_t len;

	switch (f->kind) {
	case PROTO__OPT_U32:
		if (*(const uint32_t *)p == 0)
			return 0; /* what an older peer reads as missing */
				  /* fall through */
	case PROTO__U32: i = *(const uint32_t *)p; goto integer;
	case PROTO__I32: i = *(const int32_t *)p; goto integer;
	case PROTO__OPT_I64:
		if (*(const int64_t *)p == 0)
			return 0; /* what an older peer reads as missing */
				  /* fall through */
	case PROTO__I64:
		i = *(const int64_t *)p;
integer:
		if (i < f->min || i > f->max)
			return -EINVAL;
		jadd(obj, f->name, json_object_new_int64(i));
		return 0;
	case PROTO__U64:
		if (*(const uint64_t *)p < (uint64_t)f->min)
			return -EINVAL;
		jadd(obj, f->name, json_object_new_uint64(*(const uint64_t *)p));
		return 0;
	case PROTO__DOUBLE:
		if (!isfinite(*(const double *)p))
			return -EINVAL;
		jadd(obj, f->name, new_double(*(const double *)p));
		return 0;
	case PROTO__OPT_STR:
		if (!*(const char *)p)
			return 0; /* what an older peer reads as missing */
				  /* fall through */
	case PROTO__NAME:
	case PROTO__STR:
		if (f->kind == PROTO__NAME && !proto_name_valid(p))
			return -EINVAL;
		if (!str_ok(p, f->size, f->min, &len))
			return -EINVAL;
		jadd(obj, f->name, json_object_new_string_len(p, (int)len));
		return 0;
	case PROTO__HSTR: {
		const char *s = *(const char *const *)p;

		if (!s || !str_ok(s, f->size, f->min, &len))
			return -EINVAL;
		jadd(obj, f->name, json_object_new_string_len(s, (int)len));
		return 0;
	}
	case PROTO__BETTER:
		jadd(obj, f->name, json_object_new_string(*(const bool *)p ? "higher" : "lower"));
		return 0;
	case PROTO__KIND:
		switch (*(const enum proto_step_kind *)p) {
		case PROTO_STEP_CPU_PROBE:
			jadd(obj, f->name, json_object_new_string("cpu-probe"));
			return 0;
		case PROTO_STEP_COMMAND:
			jadd(obj, f->name, json_object_new_string("command"));
			return 0;
		}
		return -EINVAL;
	case PROTO__OUTPUT: {
		const struct proto_msg *m = base;

		len = m->u.output.len;
		if (len > (uint64_t)f->max || (len && !m->u.output.data) ||
		    !proto__utf8_valid(m->u.output.data, len, NULL))
			return -EINVAL;
		jadd(obj, f->name, json_object_new_string_len(len ? m->u.output.data : "", (int)len));
		return 0;
	}
	case PROTO__STEPS: return encode_steps(obj, base, f);
	}
	return -EINVAL;
}

static int encode_fields(struct json_object *obj, const void *base,
			 const struct proto__field *fields, size_t n, enum proto_step_kind kind)
{
	for (size_t i = 0; i < n; i++) {
		int r;

		if (fields[i].only_kind && fields[i].only_kind != kind)
			continue;
		r = encode_field(obj, base, &fields[i]);
		if (r)
			return r;
	}
	return 0;
}

int proto_encode(const struct proto_msg *m, struct proto_buf *out)
{
	const struct proto__type *ty = proto__type(m->type);
	struct json_object *obj;
	const char *text;
	char detail[160];
	size_t len;
	int r;

	if (!ty)
		return -EINVAL;
	obj = jnew(json_object_new_object());
	jadd(obj, "v", json_object_new_int(PROTO_VERSION));
	jadd(obj, "type", json_object_new_string(ty->name));
	r = encode_fields(obj, m, ty->fields, ty->nfields, 0);
	if (!r && proto__msg_check(m, detail, sizeof(detail)))
		r = -EINVAL;
	if (!r) {
		text = json_object_to_json_string_length(obj,
							 JSON_C_TO_STRING_PLAIN |
								 JSON_C_TO_STRING_NOSLASHESCAPE,
							 &len);
		if (!text)
			abort();
		if (len > PROTO_LINE_MAX) {
			r = -EINVAL;
		} else {
			proto__buf_append(out, text, len);
			proto__buf_append(out, "\n", 1);
		}
	}
	json_object_put(obj);
	return r;
}

int proto_encode_reset_sync(uint64_t nonce, struct proto_buf *out)
{
	const unsigned char reset = PROTO_RESET_BYTE;
	struct proto_msg m = { .type = PROTO_SYNC, .version = PROTO_VERSION };
	int r;

	m.u.sync.nonce = nonce;
	proto__buf_append(out, &reset, 1);
	r = proto_encode(&m, out);
	if (r)
		out->len--;
	return r;
}

int proto_encode_plan(const struct proto_msg *plan, struct proto_buf *out)
{
	size_t start_len = out->len;
	struct proto_msg part;
	uint32_t n = plan->u.plan.nsteps, done = 0, chunk;
	int r;

	if (plan->type != PROTO_PLAN || plan->u.plan.total)
		return -EINVAL;
	r = proto_encode(plan, out);
	if (r == 0 || n < 2)
		return r;
	/* Too long for one line: parts as large as fit, found by halving.  A
	 * step alone always fits (a command is at most 4 KiB), so a part that
	 * still fails with one step is an error of the step itself. */
	part = *plan;
	part.u.plan.total = n;
	chunk = n / 2;
	while (done < n) {
		part.u.plan.steps = plan->u.plan.steps + done;
		part.u.plan.nsteps = chunk < n - done ? chunk : n - done;
		r = proto_encode(&part, out);
		if (r == 0) {
			done += part.u.plan.nsteps;
		} else if (part.u.plan.nsteps > 1) {
			chunk = part.u.plan.nsteps / 2;
		} else {
			out->len = start_len;
			return r;
		}
	}
	return 0;
}
