// SPDX-License-Identifier: GPL-2.0-or-later
#include "virt_xml.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

struct scan {
	const char *xml;
	char path[VIRT_XML_PATH_MAX];
	size_t plen[VIRT_XML_DEPTH_MAX + 1]; /* path length at each depth */
	unsigned depth;
	int (*cb)(const struct virt_xml_elem *e, void *data);
	void *data;
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_name_start(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == ':' ||
	       (unsigned char)c >= 0x80;
}

static bool is_name_char(char c)
{
	return is_name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

static size_t name_len(const char *p)
{
	size_t n = 0;
	if (!is_name_start(*p))
		return 0;
	while (is_name_char(p[n]))
		n++;
	return n;
}

/* Skips one attribute (name = 'value'); returns the text after it or NULL. */
static const char *skip_attr(const char *p, const char **name, size_t *nlen, const char **val,
			     size_t *vlen)
{
	size_t n = name_len(p);
	if (!n)
		return NULL;
	*name = p;
	*nlen = n;
	p += n;
	while (is_space(*p))
		p++;
	if (*p++ != '=')
		return NULL;
	while (is_space(*p))
		p++;
	char q = *p++;
	if (q != '\'' && q != '"')
		return NULL;
	const char *end = p;
	while (*end && *end != q && *end != '<')
		end++;
	if (*end != q)
		return NULL;
	*val = p;
	*vlen = (size_t)(end - p);
	end++;
	/* attributes are separated by white space */
	if (!is_space(*end) && *end != '/' && *end != '>' && *end != '?')
		return NULL;
	return end;
}

static int emit(struct scan *s, bool end, const char *name, const char *attrs, size_t alen,
		size_t tag_start, size_t tag_end)
{
	struct virt_xml_elem e = {
		.end = end,
		.path = s->path,
		.name = name,
		.depth = s->depth,
		.attrs = attrs,
		.attrs_len = alen,
		.tag_start = tag_start,
		.tag_end = tag_end,
	};
	return s->cb(&e, s->data);
}

static int push(struct scan *s, const char *name, size_t n)
{
	size_t at = s->plen[s->depth];
	if (s->depth >= VIRT_XML_DEPTH_MAX || at + n + 2 > sizeof(s->path))
		return -EINVAL;
	if (s->depth)
		s->path[at++] = '/';
	memcpy(s->path + at, name, n);
	s->path[at + n] = '\0';
	s->depth++;
	s->plen[s->depth] = at + n;
	return 0;
}

static void pop(struct scan *s)
{
	s->depth--;
	s->path[s->plen[s->depth]] = '\0';
}

static const char *top_name(const struct scan *s)
{
	const char *slash = strrchr(s->path, '/');
	return slash ? slash + 1 : s->path;
}

/* A start tag at p ('<' name ...); returns the text after it or NULL. */
static const char *start_tag(struct scan *s, const char *p, int *stop)
{
	const char *lt = p++;
	size_t n = name_len(p);
	if (!n || push(s, p, n) < 0)
		return NULL;
	p += n;
	const char *attrs = p;
	for (;;) {
		while (is_space(*p))
			p++;
		if (*p == '>' || (p[0] == '/' && p[1] == '>'))
			break;
		const char *an, *av;
		size_t anl, avl;
		if (p == attrs || !(p = skip_attr(p, &an, &anl, &av, &avl)))
			return NULL;
	}
	bool empty = *p == '/';
	size_t alen = (size_t)(p - attrs);
	p += empty ? 2 : 1;
	size_t off = (size_t)(lt - s->xml), end = (size_t)(p - s->xml);
	*stop = emit(s, false, top_name(s), attrs, alen, off, end);
	if (!*stop && empty) {
		*stop = emit(s, true, top_name(s), NULL, 0, off, end);
		pop(s);
	} else if (empty) {
		pop(s);
	}
	return p;
}

static const char *end_tag(struct scan *s, const char *p, int *stop)
{
	const char *lt = p;
	p += 2;
	size_t n = name_len(p);
	if (!n || !s->depth || strlen(top_name(s)) != n || memcmp(top_name(s), p, n) != 0)
		return NULL;
	p += n;
	while (is_space(*p))
		p++;
	if (*p++ != '>')
		return NULL;
	*stop = emit(s, true, top_name(s), NULL, 0, (size_t)(lt - s->xml), (size_t)(p - s->xml));
	pop(s);
	return p;
}

static const char *skip_to(const char *p, const char *end)
{
	const char *e = strstr(p, end);
	return e ? e + strlen(end) : NULL;
}

int virt_xml_scan(const char *xml, int (*cb)(const struct virt_xml_elem *e, void *data), void *data)
{
	struct scan s = { .xml = xml, .cb = cb, .data = data };
	const char *p = xml;
	bool root_seen = false;
	int stop = 0;

	if (strnlen(xml, VIRT_XML_MAX + 1) > VIRT_XML_MAX)
		return -EINVAL;
	while (*p && !stop) {
		if (*p != '<') {
			/* nothing but white space outside the root */
			if (!s.depth && !is_space(*p))
				return -EINVAL;
			p++;
			continue;
		}
		if (strncmp(p, "<!--", 4) == 0)
			p = skip_to(p + 4, "-->");
		else if (strncmp(p, "<![CDATA[", 9) == 0)
			p = s.depth ? skip_to(p + 9, "]]>") : NULL;
		else if (strncmp(p, "<?", 2) == 0)
			p = skip_to(p + 2, "?>");
		else if (strncmp(p, "<!", 2) == 0)
			p = s.depth ? NULL : skip_to(p + 2, ">");
		else if (p[1] == '/')
			p = end_tag(&s, p, &stop);
		else if (!s.depth && root_seen)
			p = NULL; /* a second root */
		else {
			root_seen = true;
			p = start_tag(&s, p, &stop);
		}
		if (!p)
			return -EINVAL;
	}
	if (stop)
		return stop;
	return root_seen && !s.depth ? 0 : -EINVAL;
}

static void put_utf8(char **o, uint32_t cp)
{
	char *q = *o;
	if (cp < 0x80) {
		*q++ = (char)cp;
	} else if (cp < 0x800) {
		*q++ = (char)(0xc0 | (cp >> 6));
		*q++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*q++ = (char)(0xe0 | (cp >> 12));
		*q++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*q++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*q++ = (char)(0xf0 | (cp >> 18));
		*q++ = (char)(0x80 | ((cp >> 12) & 0x3f));
		*q++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*q++ = (char)(0x80 | (cp & 0x3f));
	}
	*o = q;
}

/* One entity at p ('&'...';'); its decoded form is never longer. */
static int decode_entity(const char *p, size_t left, size_t *used, char **o)
{
	static const struct {
		const char *name;
		char c;
	} named[] = {
		{ "lt;", '<' },	  { "gt;", '>' },    { "amp;", '&' },
		{ "quot;", '"' }, { "apos;", '\'' },
	};
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		size_t n = strlen(named[i].name);
		if (left > n && memcmp(p + 1, named[i].name, n) == 0) {
			*(*o)++ = named[i].c;
			*used = n + 1;
			return 0;
		}
	}
	if (left < 4 || p[1] != '#')
		return -EINVAL;
	bool hex = p[2] == 'x';
	uint32_t cp = 0;
	size_t i = hex ? 3 : 2, digits = 0;
	for (; i < left && p[i] != ';'; i++, digits++) {
		char c = p[i];
		unsigned d;
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (hex && c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (hex && c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return -EINVAL;
		cp = cp * (hex ? 16 : 10) + d;
		if (cp > 0x10ffff)
			return -EINVAL;
	}
	if (i >= left || !digits || cp == 0 || (cp >= 0xd800 && cp <= 0xdfff))
		return -EINVAL;
	put_utf8(o, cp);
	*used = i + 1;
	return 0;
}

static int decode(const char *v, size_t n, char **value)
{
	char *out = xmalloc(n + 1), *o = out;
	for (size_t i = 0; i < n;) {
		if (v[i] != '&') {
			*o++ = v[i++];
			continue;
		}
		size_t used;
		if (decode_entity(v + i, n - i, &used, &o) < 0) {
			free(out);
			return -EINVAL;
		}
		i += used;
	}
	*o = '\0';
	*value = out;
	return 0;
}

/* Finds attribute name in a start tag's text: 0 with the raw value. */
static int find_attr(const char *attrs, size_t alen, const char *name, const char **val, size_t *vlen)
{
	const char *p = attrs, *end = attrs + alen;
	size_t want = strlen(name);
	while (p < end) {
		while (p < end && is_space(*p))
			p++;
		if (p >= end)
			break;
		const char *an;
		size_t anl;
		if (!(p = skip_attr(p, &an, &anl, val, vlen)))
			return -EINVAL;
		if (anl == want && memcmp(an, name, want) == 0)
			return 0;
	}
	return 1;
}

int virt_xml_attr(const struct virt_xml_elem *e, const char *name, char **value)
{
	const char *v;
	size_t vl;
	int r = find_attr(e->attrs, e->attrs_len, name, &v, &vl);
	return r ? r : decode(v, vl, value);
}

/* ---- questions about a domain ---- */

struct channel_find {
	const char *want;
	bool in_channel;
	char *type, *source, *target;
	int result;
	char *path;
};

static void channel_reset(struct channel_find *f)
{
	free(f->type);
	free(f->source);
	free(f->target);
	f->type = f->source = f->target = NULL;
}

/* Stores attribute name of e into *slot unless already set. */
static int take_attr(const struct virt_xml_elem *e, const char *name, char **slot)
{
	if (*slot)
		return 0;
	int r = virt_xml_attr(e, name, slot);
	return r < 0 ? r : 0;
}

static int channel_cb(const struct virt_xml_elem *e, void *data)
{
	struct channel_find *f = data;
	if (!e->end) {
		if (strcmp(e->path, "domain/devices/channel") == 0) {
			f->in_channel = true;
			return take_attr(e, "type", &f->type);
		}
		if (f->in_channel && strcmp(e->path, "domain/devices/channel/source") == 0)
			return take_attr(e, "path", &f->source);
		if (f->in_channel && strcmp(e->path, "domain/devices/channel/target") == 0)
			return take_attr(e, "name", &f->target);
		return 0;
	}
	if (strcmp(e->path, "domain/devices/channel") != 0)
		return 0;
	f->in_channel = false;
	if (f->target && strcmp(f->target, f->want) == 0) {
		if (!f->type || strcmp(f->type, "unix") != 0 || !f->source || !*f->source) {
			f->result = -EPROTO;
		} else {
			f->result = 0;
			f->path = f->source;
			f->source = NULL;
		}
		return 1;
	}
	channel_reset(f);
	return 0;
}

int virt_xml_channel_path(const char *xml, const char *target_name, char **path)
{
	struct channel_find f = { .want = target_name, .result = -ENOENT };
	int r = virt_xml_scan(xml, channel_cb, &f);
	channel_reset(&f);
	if (r < 0) {
		free(f.path);
		return r;
	}
	*path = f.path;
	return f.result;
}

struct console_find {
	int state; /* 0 before the first serial, 1 in it, 2 after it */
	char *type, *source, *log;
	char *source_append, *log_append;
};

static int console_cb(const struct virt_xml_elem *e, void *data)
{
	struct console_find *f = data;
	if (strcmp(e->path, "domain/devices/serial") == 0) {
		if (!e->end && f->state == 0) {
			f->state = 1;
			return take_attr(e, "type", &f->type);
		}
		if (e->end && f->state == 1)
			return 1; /* only the first serial port is the console */
		return 0;
	}
	if (e->end || f->state != 1)
		return 0;
	if (strcmp(e->path, "domain/devices/serial/source") == 0)
		return take_attr(e, "path", &f->source) < 0
			       ? -EINVAL
			       : take_attr(e, "append", &f->source_append);
	/* <log file=...>: a copy of any serial's output (pty, unix, ...) */
	if (strcmp(e->path, "domain/devices/serial/log") == 0)
		return take_attr(e, "file", &f->log) < 0 ? -EINVAL
							 : take_attr(e, "append", &f->log_append);
	return 0;
}

static bool is_on(const char *v)
{
	return v && strcmp(v, "on") == 0;
}

int virt_xml_console_file(const char *xml, char **path, bool *append)
{
	struct console_find f = { 0 };
	int r = virt_xml_scan(xml, console_cb, &f);
	char *found = NULL;
	bool app = false;

	if (r >= 0) {
		if (f.type && strcmp(f.type, "file") == 0 && f.source && *f.source) {
			found = xstrdup(f.source);
			app = is_on(f.source_append);
		} else if (f.log && *f.log) {
			found = xstrdup(f.log);
			app = is_on(f.log_append);
		}
	}
	if (append)
		*append = app;
	free(f.type);
	free(f.source);
	free(f.log);
	free(f.source_append);
	free(f.log_append);
	if (r < 0)
		return r;
	*path = found;
	return found ? 0 : -ENOENT;
}

struct root_find {
	char *type;
	int err;
	size_t tag_start, tag_end, end_start;
	const char *attrs;
	size_t attrs_len;
	const char *child; /* a depth-2 element name to look for */
	bool child_seen;
	bool root_is_domain;
};

static int root_cb(const struct virt_xml_elem *e, void *data)
{
	struct root_find *f = data;
	if (e->depth == 1 && !e->end) {
		f->root_is_domain = strcmp(e->name, "domain") == 0;
		f->tag_start = e->tag_start;
		f->tag_end = e->tag_end;
		f->attrs = e->attrs;
		f->attrs_len = e->attrs_len;
		int r = virt_xml_attr(e, "type", &f->type);
		if (r < 0)
			f->err = r;
	} else if (e->depth == 1) {
		f->end_start = e->tag_start;
	} else if (e->depth == 2 && !e->end && f->child && strcmp(e->name, f->child) == 0) {
		f->child_seen = true;
	}
	return 0;
}

int virt_xml_domain_type(const char *xml, char **type)
{
	struct root_find f = { 0 };
	int r = virt_xml_scan(xml, root_cb, &f);
	if (r < 0 || f.err < 0 || !f.root_is_domain) {
		free(f.type);
		return r < 0 ? r : -EINVAL;
	}
	*type = f.type;
	return f.type ? 0 : -ENOENT;
}

static void append(char **o, const char *s, size_t n)
{
	memcpy(*o, s, n);
	*o += n;
}

int virt_xml_edit_domain(const char *xml, const char *type, const char *block, char **out)
{
	char child[64] = "";
	struct root_find f = { .child = child };
	int r;

	if (block) {
		size_t n = block[0] == '<' ? name_len(block + 1) : 0;
		if (!n || n >= sizeof(child))
			return -EINVAL;
		memcpy(child, block + 1, n);
		child[n] = '\0';
	}
	r = virt_xml_scan(xml, root_cb, &f);
	free(f.type);
	if (r < 0 || f.err < 0 || !f.root_is_domain || f.end_start <= f.tag_start)
		return r < 0 ? r : -EINVAL;
	if (block && f.child_seen)
		return -EEXIST;
	if (type && (strchr(type, '\'') || strchr(type, '<') || strchr(type, '&')))
		return -EINVAL;

	size_t len = strlen(xml);
	char *buf = xmalloc(len + (type ? strlen(type) + 16 : 0) + (block ? strlen(block) + 4 : 0) + 1);
	char *o = buf;
	const char *v = NULL;
	size_t vl = 0;
	const char *rest = xml;
	if (type && find_attr(f.attrs, f.attrs_len, "type", &v, &vl) == 0) {
		append(&o, xml, (size_t)(v - xml));
		append(&o, type, strlen(type));
		rest = v + vl;
	} else if (type) {
		append(&o, xml, (size_t)(f.attrs - xml));
		append(&o, " type='", 7);
		append(&o, type, strlen(type));
		append(&o, "'", 1);
		rest = f.attrs;
	}
	const char *end_tag_at = xml + f.end_start;
	append(&o, rest, (size_t)(end_tag_at - rest));
	if (block) {
		append(&o, "  ", 2);
		append(&o, block, strlen(block));
		append(&o, "\n", 1);
	}
	append(&o, end_tag_at, strlen(end_tag_at));
	*o = '\0';
	*out = buf;
	return 0;
}
