/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The agent's clock: the instants it reports (a ping's t2 and t3, when a
 * step started and ended) and the instant a scheduled go names.  Normally
 * CLOCK_MONOTONIC.  For tests, a synthetic clock shifted, drifting and
 * jittering by known amounts stands in for a guest's own clock, so that
 * hostd's offset estimation can be checked against the truth on one host
 * (--clock-offset-ns, --clock-drift-ppm, --clock-jitter-ns).
 */
#ifndef LOCKSTEP_ACLOCK_H
#define LOCKSTEP_ACLOCK_H

#include <stdint.h>

void aclock_set_synthetic(int64_t offset_ns, double drift_ppm, int64_t jitter_ns);
int64_t aclock_now(void);
/* A CLOCK_MONOTONIC instant for an instant of the agent's clock. */
int64_t aclock_to_mono(int64_t agent_ns);

#endif
