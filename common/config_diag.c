// SPDX-License-Identifier: GPL-2.0-or-later
/* Diagnostics about a key's value, for the readers of typed settings. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "config.h"

int config_diag_at(struct config_diag *d, const struct config *c, const char *name,
		   const char *fallback_file, const char *fmt, ...)
{
	const char *file = fallback_file;
	int line = 0;
	va_list ap;

	if (c && name)
		config_where(c, name, &file, &line);
	snprintf(d->file, sizeof(d->file), "%s", file ? file : "");
	d->line = line;
	d->column = 0;
	va_start(ap, fmt);
	vsnprintf(d->text, sizeof(d->text), fmt, ap);
	va_end(ap);
	return -EINVAL;
}
