// SPDX-License-Identifier: GPL-2.0-or-later
#include "diag.h"

#include <stdio.h>

int diag_vset(char *err, size_t errlen, int r, const char *prefix, const char *fmt, va_list ap)
{
	int n = 0;

	if (!errlen)
		return r;
	if (prefix)
		n = snprintf(err, errlen, "%s: ", prefix);
	if (n >= 0 && (size_t)n < errlen)
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	return r;
}

int diag_set(char *err, size_t errlen, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_vset(err, errlen, r, NULL, fmt, ap);
	va_end(ap);
	return r;
}
