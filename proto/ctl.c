// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The control protocol's framing and field checks.  The line splitter is
 * proto_decoder's (the same 0xFF reset, the same "an over-long line is
 * skipped to its end"), with a larger line limit and messages left as JSON
 * objects: a control message is a handful of fields read once, where the
 * agent protocol's schema tables would be ceremony.
 */
#include "ctl.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto_impl.h"

#define DETAIL_MAX 256

static const char *const ctl_types[] = {
	"submit",     "status", "list", "cancel", "logs", "wait", /* requests */
	"experiment", "log",	"ok",	"error",		  /* answers */
	NULL,
};

bool ctl_type_known(const char *type)
{
	for (size_t i = 0; ctl_types[i]; i++)
		if (!strcmp(type, ctl_types[i]))
			return true;
	return false;
}

void ctl_decoder_free(struct ctl_decoder *d)
{
	if (!d)
		return;
	free(d->line);
	memset(d, 0, sizeof(*d));
}

static int parse(const char *line, size_t len, json_object **out, const char **type, char *detail)
{
	size_t bad;
	if (!proto__utf8_valid(line, len, &bad)) {
		snprintf(detail, DETAIL_MAX, "line: not UTF-8 at byte %zu", bad);
		return -EILSEQ;
	}
	if (memchr(line, '\0', len)) {
		snprintf(detail, DETAIL_MAX, "line: a NUL byte");
		return -EBADMSG;
	}
	struct json_tokener *tok = json_tokener_new_ex(PROTO_DEPTH_MAX);
	if (!tok)
		abort();
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	json_object *obj = json_tokener_parse_ex(tok, line, (int)len + 1);
	enum json_tokener_error jerr = json_tokener_get_error(tok);
	json_tokener_free(tok);
	int r = -EBADMSG;
	/* strict: a second value after the first is an error too */
	if (jerr != json_tokener_success) {
		snprintf(detail, DETAIL_MAX, "line: not JSON: %s", json_tokener_error_desc(jerr));
		goto fail;
	}
	if (!json_object_is_type(obj, json_type_object) ||
	    json_object_object_length(obj) > PROTO_FIELDS_MAX) {
		snprintf(detail, DETAIL_MAX, "line: not an object of at most %d fields",
			 PROTO_FIELDS_MAX);
		goto fail;
	}
	json_object *v, *t;
	if (!json_object_object_get_ex(obj, "v", &v) || !json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) != CTL_VERSION) {
		snprintf(detail, DETAIL_MAX, "field 'v': not %d", CTL_VERSION);
		r = -EPROTONOSUPPORT;
		goto fail;
	}
	if (!json_object_object_get_ex(obj, "type", &t) ||
	    !json_object_is_type(t, json_type_string) || !ctl_type_known(json_object_get_string(t))) {
		char q[64];
		const char *s = t ? json_object_get_string(t) : "";
		proto__quote(q, sizeof(q), s, strlen(s));
		snprintf(detail, DETAIL_MAX, "field 'type': unknown %s", q);
		r = -ENOMSG;
		goto fail;
	}
	*out = obj;
	*type = json_object_get_string(t);
	return 0;
fail:
	json_object_put(obj);
	return r;
}

static bool line_done(struct ctl_decoder *d, ctl_event_fn fn, void *ctx)
{
	size_t len = d->len;
	char detail[DETAIL_MAX] = "";
	json_object *m = NULL;
	const char *type = NULL;

	d->len = 0;
	if (len && d->line[len - 1] == '\r')
		len--;
	size_t i = 0;
	while (i < len && (d->line[i] == ' ' || d->line[i] == '\t'))
		i++;
	if (i == len)
		return true;
	d->line[len] = '\0';
	int r = parse(d->line, len, &m, &type, detail);
	bool go_on = r ? fn(ctx, CTL_EV_ERROR, NULL, NULL, r, detail)
		       : fn(ctx, CTL_EV_MSG, m, type, 0, NULL);
	json_object_put(m);
	return go_on;
}

static void grow(struct ctl_decoder *d, size_t len)
{
	size_t cap = d->cap ? d->cap : 256;
	if (len + 1 <= d->cap)
		return;
	while (cap < len + 1)
		cap *= 2;
	if (cap > CTL_LINE_MAX + 1)
		cap = CTL_LINE_MAX + 1;
	d->line = proto__xrealloc(d->line, cap);
	d->cap = cap;
}

bool ctl_decoder_feed(struct ctl_decoder *d, const void *data, size_t len, ctl_event_fn fn, void *ctx)
{
	const char *p = data, *end = p + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *q = memchr(p, PROTO_RESET_BYTE, (size_t)((nl ? nl : end) - p));
		if (!q)
			q = nl;
		size_t n = (size_t)((q ? q : end) - p);

		if (d->skipping) {
			/* the rest of an over-long line */
		} else if (n > CTL_LINE_MAX - d->len) {
			char detail[64];
			d->len = 0;
			d->skipping = true;
			snprintf(detail, sizeof(detail), "line: over %d bytes", CTL_LINE_MAX);
			if (!fn(ctx, CTL_EV_ERROR, NULL, NULL, -EMSGSIZE, detail))
				return false;
		} else if (n) {
			grow(d, d->len + n);
			memcpy(d->line + d->len, p, n);
			d->len += n;
		}
		if (!q)
			return true;
		p = q + 1;
		if ((unsigned char)*q == PROTO_RESET_BYTE) {
			d->len = 0;
			d->skipping = false;
			if (!fn(ctx, CTL_EV_RESET, NULL, NULL, 0, NULL))
				return false;
		} else if (d->skipping) {
			d->skipping = false;
		} else if (!line_done(d, fn, ctx)) {
			return false;
		}
	}
	return true;
}

json_object *ctl_msg_new(const char *type)
{
	json_object *m = json_object_new_object();
	json_object_object_add(m, "v", json_object_new_int(CTL_VERSION));
	json_object_object_add(m, "type", json_object_new_string(type));
	return m;
}

int ctl_encode(json_object *m, struct proto_buf *out)
{
	size_t len;
	const char *s = json_object_to_json_string_length(m,
							  JSON_C_TO_STRING_PLAIN |
								  JSON_C_TO_STRING_NOSLASHESCAPE,
							  &len);
	if (!s || len > CTL_LINE_MAX)
		return -EMSGSIZE;
	proto__buf_append(out, s, len);
	proto__buf_append(out, "\n", 1);
	return 0;
}

static json_object *field(json_object *m, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(m, key, &v) || json_object_is_type(v, json_type_null))
		return NULL;
	return v;
}

int ctl_get_str(json_object *m, const char *key, size_t max, const char **out, char *detail, size_t size)
{
	assert(max > 0);
	json_object *v = field(m, key);
	if (!v)
		return 1;
	if (!json_object_is_type(v, json_type_string)) {
		snprintf(detail, size, "field '%s': not a string", key);
		return -EBADMSG;
	}
	size_t len = (size_t)json_object_get_string_len(v);
	const char *s = json_object_get_string(v);
	if (len >= max) {
		snprintf(detail, size, "field '%s': %zu bytes, at most %zu", key, len, max - 1);
		return -EBADMSG;
	}
	if (memchr(s, '\0', len)) {
		snprintf(detail, size, "field '%s': holds a NUL", key);
		return -EBADMSG;
	}
	*out = s;
	return 0;
}

int ctl_get_files(json_object *m, const char *key, json_object **out, char *detail, size_t size)
{
	json_object *v = field(m, key);
	if (!v)
		return 1;
	if (!json_object_is_type(v, json_type_object)) {
		snprintf(detail, size, "field '%s': not an object", key);
		return -EBADMSG;
	}
	if (json_object_object_length(v) > CTL_FILES_MAX) {
		snprintf(detail, size, "field '%s': %d files, at most %d", key,
			 json_object_object_length(v), CTL_FILES_MAX);
		return -EBADMSG;
	}
	json_object_object_foreach(v, name, text)
	{
		const char *s;
		(void)text; /* ctl_get_str looks it up again, and checks it */
		if (!*name || strlen(name) >= CTL_PATH_MAX) {
			snprintf(detail, size, "field '%s': a file name empty or over %d bytes",
				 key, CTL_PATH_MAX - 1);
			return -EBADMSG;
		}
		for (const char *p = name; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f) {
				snprintf(detail, size,
					 "field '%s': a file name with a control "
					 "character (0x%02x)",
					 key, (unsigned char)*p);
				return -EBADMSG;
			}
		/* a config, so the same bound as host_config's */
		int r = ctl_get_str(v, name, CTL_CONFIG_MAX + 1, &s, detail, size);
		if (r != 0) {
			snprintf(detail, size,
				 "field '%s': file '%.200s': not a string without NUL of "
				 "at most %d bytes",
				 key, name, CTL_CONFIG_MAX);
			return -EBADMSG;
		}
	}
	*out = v;
	return 0;
}

int ctl_get_u64(json_object *m, const char *key, uint64_t max, uint64_t *out, char *detail, size_t size)
{
	json_object *v = field(m, key);
	if (!v)
		return 1;
	/* get_int64 clamps what is over INT64_MAX, get_uint64 what is under 0:
	 * the first says the sign, the second the value */
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0 ||
	    json_object_get_uint64(v) > max) {
		snprintf(detail, size, "field '%s': not an integer in 0..%llu", key,
			 (unsigned long long)max);
		return -EBADMSG;
	}
	*out = json_object_get_uint64(v);
	return 0;
}

int ctl_get_bool(json_object *m, const char *key, bool *out, char *detail, size_t size)
{
	json_object *v = field(m, key);
	if (!v)
		return 1;
	if (!json_object_is_type(v, json_type_boolean)) {
		snprintf(detail, size, "field '%s': not true or false", key);
		return -EBADMSG;
	}
	*out = json_object_get_boolean(v);
	return 0;
}

/* Length of the sequence a lead byte starts, 0 if it cannot start one. */
static size_t seq_len(unsigned char c)
{
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return 2;
	if (c >= 0xe0 && c <= 0xef)
		return 3;
	if (c >= 0xf0 && c <= 0xf4)
		return 4;
	return 0;
}

size_t ctl_utf8_prefix(char *s, size_t len)
{
	size_t i = 0, bad;
	while (i < len) {
		size_t n = seq_len((unsigned char)s[i]);
		if (n == 1 && s[i] != '\0') {
			i++;
			continue;
		}
		if (n > 1 && i + n > len) {
			/* cut by the chunk: whole next time, if its start is right */
			bool ok = true;
			for (size_t k = i + 1; k < len; k++)
				ok = ok && ((unsigned char)s[k] & 0xc0) == 0x80;
			if (ok)
				return i;
		}
		if (n > 1 && i + n <= len && proto__utf8_valid(s + i, n, &bad)) {
			i += n;
			continue;
		}
		s[i++] = '?';
	}
	return len;
}
