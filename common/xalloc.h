/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Allocation that aborts on out-of-memory, so callers never carry NULL checks
 * for malloc (chrony's Malloc): a daemon that cannot allocate a few bytes
 * cannot report anything useful either. */
#ifndef LOCKSTEP_XALLOC_H
#define LOCKSTEP_XALLOC_H

#include <stdarg.h>
#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t n);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* printf into a new string */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

#endif
