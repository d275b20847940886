// SPDX-License-Identifier: GPL-2.0-or-later
#include <stdio.h>
#include <time.h>

#include "clock.h"

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	/* Cannot fail for these clocks with a valid pointer. */
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

int64_t clock_mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

int64_t clock_real_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

void clock_format_utc(int64_t real_ns, char *buf, unsigned len)
{
	/* Floor division, so that instants before 1970 still format right. */
	int64_t sec = real_ns / NSEC_PER_SEC, ns = real_ns % NSEC_PER_SEC;
	time_t t;
	struct tm tm;

	if (ns < 0) {
		ns += NSEC_PER_SEC;
		sec--;
	}
	t = (time_t)sec;
	if (!gmtime_r(&t, &tm)) {
		snprintf(buf, len, "?");
		return;
	}
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ns / 1000));
}
