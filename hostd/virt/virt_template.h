/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Filling a libvirt domain XML template.  A placeholder is @NAME@ with NAME
 * an upper-case identifier ([A-Z][A-Z0-9_]*); an '@' that does not start one
 * is kept as it is.  Placeholders inside XML comments are documentation and
 * are left alone.  Every value is XML-escaped: a value can never add markup.
 * Pure code: no I/O, never logs.
 */
#ifndef LOCKSTEP_VIRT_TEMPLATE_H
#define LOCKSTEP_VIRT_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>

#define VIRT_TEMPLATE_MAX (1 << 20) /* bytes in a template, and in what it becomes */
#define VIRT_PLACEHOLDER_MAX 64	    /* characters in a placeholder's name */

struct virt_template_var {
	const char *name; /* without the @s */
	const char *value;
};

/*
 * Fills text into *out (a new string).  origin names the template in
 * messages.  used (may be NULL) has n entries; used[i] is set when vars[i]
 * occurs at least once.  Errors (-EINVAL) name origin:line and the
 * placeholder: "demo.xml.in:12: unknown placeholder @FOO@", an unterminated
 * comment, a value that XML cannot carry (a control character), or a result
 * larger than VIRT_TEMPLATE_MAX.
 */
int virt_template_fill(const char *text, const char *origin, const struct virt_template_var *vars,
		       size_t n, bool *used, char **out, char *err, size_t errlen);

/* s with & < > " ' as entities; a new string. */
char *virt_xml_escape(const char *s);

/* 0 when s holds only characters XML 1.0 can carry (no C0 control other
 * than tab, newline, carriage return); else the offending byte's offset + 1. */
size_t virt_xml_bad_char(const char *s);

/* Standard base64 (RFC 4648, with padding) of len bytes; a new string. */
char *virt_base64(const void *data, size_t len);

#endif
