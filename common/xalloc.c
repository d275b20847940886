// SPDX-License-Identifier: GPL-2.0-or-later
/* Allocation that aborts on out-of-memory (see xalloc.h for why). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xalloc.h"

/* No stdio here: stdio may itself need memory to print. */
static void __attribute__((noreturn)) oom(size_t n)
{
	char msg[96];
	int len = snprintf(msg, sizeof(msg), "lockstep: out of memory allocating %zu bytes\n", n);

	if (len > 0 && write(STDERR_FILENO, msg, (size_t)len) < 0) {
		/* nothing left to tell anyone */
	}
	abort();
}

void *xmalloc(size_t n)
{
	/* malloc(0) may legitimately return NULL; callers never want that. */
	void *p = malloc(n ? n : 1);

	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t count, size_t n)
{
	void *p = calloc(count ? count : 1, n ? n : 1);

	if (!p)
		oom(count * n);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	/* realloc(p, 0) frees p on some libcs: never what a caller means. */
	void *q = realloc(p, n ? n : 1);

	if (!q)
		oom(n);
	return q;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = xmalloc(len + 1);

	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *xvasprintf(const char *fmt, va_list ap)
{
	char *s;

	if (vasprintf(&s, fmt, ap) < 0)
		oom(strlen(fmt));
	return s;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}
