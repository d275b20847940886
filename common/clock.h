/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef LOCKSTEP_CLOCK_H
#define LOCKSTEP_CLOCK_H

#include <stdint.h>

#define NSEC_PER_SEC 1000000000LL

int64_t clock_mono_ns(void); /* CLOCK_MONOTONIC */
int64_t clock_real_ns(void); /* CLOCK_REALTIME */
/* "2026-12-03T08:23:51.123456Z" into buf (at least 32 bytes) */
void clock_format_utc(int64_t real_ns, char *buf, unsigned len);

#endif
