// SPDX-License-Identifier: GPL-2.0-or-later
#include "virt_template.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "xalloc.h"

struct sbuf {
	char *s;
	size_t len, cap;
};

static void sbuf_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n + 1)
			cap *= 2;
		b->s = xrealloc(b->s, cap);
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void sbuf_add_escaped(struct sbuf *b, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': sbuf_add(b, "&amp;", 5); break;
		case '<': sbuf_add(b, "&lt;", 4); break;
		case '>': sbuf_add(b, "&gt;", 4); break;
		case '"': sbuf_add(b, "&quot;", 6); break;
		case '\'': sbuf_add(b, "&apos;", 6); break;
		default: sbuf_add(b, s, 1); break;
		}
	}
}

char *virt_xml_escape(const char *s)
{
	struct sbuf b = { 0 };
	sbuf_add(&b, "", 0);
	sbuf_add_escaped(&b, s);
	return b.s;
}

size_t virt_xml_bad_char(const char *s)
{
	for (size_t i = 0; s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
			return i + 1;
	}
	return 0;
}

static bool is_upper(char c)
{
	return c >= 'A' && c <= 'Z';
}

static bool is_name_char(char c)
{
	return is_upper(c) || (c >= '0' && c <= '9') || c == '_';
}

/* Length of the placeholder name after the '@' at p, or 0 when p does not
 * start one. */
static size_t placeholder_len(const char *p)
{
	size_t n = 0;
	if (!is_upper(p[1]))
		return 0;
	while (is_name_char(p[1 + n]))
		n++;
	return p[1 + n] == '@' ? n : 0;
}

static unsigned line_of(const char *text, const char *p)
{
	unsigned line = 1;
	for (const char *q = text; q < p; q++)
		line += *q == '\n';
	return line;
}

static const struct virt_template_var *find_var(const struct virt_template_var *vars, size_t n,
						const char *name, size_t len, size_t *index)
{
	for (size_t i = 0; i < n; i++) {
		if (strlen(vars[i].name) == len && memcmp(vars[i].name, name, len) == 0) {
			*index = i;
			return &vars[i];
		}
	}
	return NULL;
}

static int check_values(const struct virt_template_var *vars, size_t n, const char *origin,
			char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		size_t bad = virt_xml_bad_char(vars[i].value);
		if (bad) {
			return diag_set(err, errlen, -EINVAL,
					"%s: the value of @%s@ has the control character 0x%02x at "
					"offset %zu, which XML cannot carry",
					origin, vars[i].name, (unsigned char)vars[i].value[bad - 1],
					bad - 1);
		}
	}
	return 0;
}

int virt_template_fill(const char *text, const char *origin, const struct virt_template_var *vars,
		       size_t n, bool *used, char **out, char *err, size_t errlen)
{
	struct sbuf b = { 0 };
	const char *p = text, *lit = text;
	int r = check_values(vars, n, origin, err, errlen);

	*out = NULL;
	if (r < 0)
		return r;
	if (used)
		memset(used, 0, n * sizeof(*used));
	sbuf_add(&b, "", 0);
	while (*p) {
		if (strncmp(p, "<!--", 4) == 0) {
			const char *end = strstr(p + 4, "-->");
			if (!end) {
				diag_set(err, errlen, -EINVAL, "%s:%u: comment not closed with -->",
					 origin, line_of(text, p));
				goto fail;
			}
			p = end + 3;
			continue;
		}
		size_t len = *p == '@' ? placeholder_len(p) : 0;
		if (!len) {
			p++;
			continue;
		}
		size_t i;
		const struct virt_template_var *v = find_var(vars, n, p + 1, len, &i);
		if (!v) {
			if (len > VIRT_PLACEHOLDER_MAX)
				diag_set(err, errlen, -EINVAL, "%s:%u: unknown placeholder @%.*s...@",
					 origin, line_of(text, p), VIRT_PLACEHOLDER_MAX, p + 1);
			else
				diag_set(err, errlen, -EINVAL, "%s:%u: unknown placeholder @%.*s@",
					 origin, line_of(text, p), (int)len, p + 1);
			goto fail;
		}
		if (used)
			used[i] = true;
		sbuf_add(&b, lit, (size_t)(p - lit));
		sbuf_add_escaped(&b, v->value);
		p += len + 2;
		lit = p;
		if (b.len > VIRT_TEMPLATE_MAX)
			break;
	}
	sbuf_add(&b, lit, (size_t)(p - lit));
	if (b.len > VIRT_TEMPLATE_MAX) {
		diag_set(err, errlen, -EINVAL, "%s: the filled template is larger than %d bytes",
			 origin, VIRT_TEMPLATE_MAX);
		goto fail;
	}
	*out = b.s;
	return 0;
fail:
	free(b.s);
	return -EINVAL;
}

char *virt_base64(const void *data, size_t len)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *in = data;
	char *out = xmalloc((len + 2) / 3 * 4 + 1), *o = out;

	for (size_t i = 0; i < len; i += 3) {
		unsigned v = (unsigned)in[i] << 16;
		if (i + 1 < len)
			v |= (unsigned)in[i + 1] << 8;
		if (i + 2 < len)
			v |= in[i + 2];
		*o++ = tab[(v >> 18) & 63];
		*o++ = tab[(v >> 12) & 63];
		*o++ = i + 1 < len ? tab[(v >> 6) & 63] : '=';
		*o++ = i + 2 < len ? tab[v & 63] : '=';
	}
	*o = '\0';
	return out;
}
