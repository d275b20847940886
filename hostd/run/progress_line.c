// SPDX-License-Identifier: GPL-2.0-or-later
/* The words of hostd's progress line; see progress_line.h. */
#include "progress_line.h"

#include <stdarg.h>
#include <stdio.h>

void progress_duration(char *buf, size_t len, int64_t ns)
{
	long long s = ns > 0 ? (long long)((ns + 500000000) / 1000000000) : 0;

	if (s < 60)
		snprintf(buf, len, "%llds", s);
	else if (s < 3600)
		snprintf(buf, len, "%lldm%02llds", s / 60, s % 60);
	else
		snprintf(buf, len, "%lldh%02lldm", s / 3600, s % 3600 / 60);
}

/* Appends to buf at *pos, never past len. */
static void add(char *buf, size_t len, size_t *pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void add(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*pos >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *pos, len - *pos, fmt, ap);
	va_end(ap);
	*pos = n < 0 ? len : *pos + (size_t)n;
}

void progress_line(char *buf, size_t len, const struct progress_in *in)
{
	char t[32], left[32];
	size_t pos = 0;

	if (!len)
		return;
	buf[0] = '\0';
	progress_duration(t, sizeof(t), in->now_ns - in->started_ns);
	add(buf, len, &pos, "%s  ", t);
	if (!in->launched || in->step == 0) {
		add(buf, len, &pos, "%s",
		    in->launched ? "starting: waiting at the first barrier for"
				 : "starting the guests");
		if (in->launched)
			for (size_t i = 0; i < in->nwaiting_shown; i++)
				add(buf, len, &pos, "%s %s", i ? "," : "", in->waiting[i]);
		return;
	}
	if (in->step > in->nsteps) {
		add(buf, len, &pos, "finishing");
		return;
	}
	add(buf, len, &pos, "step %u/%u %s%s%s #%u: ", in->step, in->nsteps, in->benchmark,
	    in->variant && *in->variant ? " " : "", in->variant ? in->variant : "", in->iteration);
	if (!in->nready) {
		add(buf, len, &pos, "running");
	} else {
		add(buf, len, &pos, "%zu done, waiting at the barrier for", in->nready);
		for (size_t i = 0; i < in->nwaiting_shown; i++)
			add(buf, len, &pos, "%s %s", i ? "," : "", in->waiting[i]);
		if (in->nwaiting > in->nwaiting_shown)
			add(buf, len, &pos, " (+%zu more)", in->nwaiting - in->nwaiting_shown);
	}
	/* the steps done so far, on average, times those left (this one too) */
	if (in->step > 1 && in->first_release_ns && in->now_ns > in->first_release_ns) {
		int64_t per = (in->now_ns - in->first_release_ns) / (int64_t)(in->step - 1);

		progress_duration(left, sizeof(left), per * (int64_t)(in->nsteps - in->step + 1));
		add(buf, len, &pos, "; about %s left", left);
	}
}
