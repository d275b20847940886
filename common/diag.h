/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one way a function below the edge says why it failed: it returns
 * -errno and writes its message into the caller's buffer (err, errlen),
 * for the caller to log or pass on; it never logs.  A config value's
 * message is a struct config_diag instead (config.h, config_diag_at),
 * which names the file and line as well.
 */
#ifndef LOCKSTEP_DIAG_H
#define LOCKSTEP_DIAG_H

#include <stdarg.h>
#include <stddef.h>

/* Writes the message into err (nothing when errlen is 0; cut to fit) and
 * returns r, for `return diag_set(err, errlen, -EINVAL, ...)`. */
int diag_set(char *err, size_t errlen, int r, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The same with "prefix: " in front (prefix NULL: none), from a va_list,
 * for a module's own wrapper that names what failed ("guest g1: ..."). */
int diag_vset(char *err, size_t errlen, int r, const char *prefix, const char *fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));

#endif
