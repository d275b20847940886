// SPDX-License-Identifier: GPL-2.0-or-later
/* Diagnostics about a key's value, for the readers of typed settings. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "config.h"
#include "diag.h"

int config_diag_vat(struct config_diag *d, const struct config *c, const char *name,
		    const char *fallback_file, const char *fmt, va_list ap)
{
	const char *file = fallback_file;
	int line = 0;

	if (c && name)
		config_where(c, name, &file, &line);
	snprintf(d->file, sizeof(d->file), "%s", file ? file : "");
	d->line = line;
	d->column = 0;
	return diag_vset(d->text, sizeof(d->text), -EINVAL, NULL, fmt, ap);
}

int config_diag_at(struct config_diag *d, const struct config *c, const char *name,
		   const char *fallback_file, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	config_diag_vat(d, c, name, fallback_file, fmt, ap);
	va_end(ap);
	return -EINVAL;
}
