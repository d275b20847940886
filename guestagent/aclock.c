// SPDX-License-Identifier: GPL-2.0-or-later
#include "aclock.h"

#include <stdbool.h>
#include <stdlib.h>

#include "clock.h"

static bool synthetic;
static int64_t offset, jitter, epoch;
static double drift; /* fraction, e.g. 1e-4 for 100 ppm */
static unsigned seed = 1;

void aclock_set_synthetic(int64_t offset_ns, double drift_ppm, int64_t jitter_ns)
{
	synthetic = true;
	offset = offset_ns;
	drift = drift_ppm * 1e-6;
	jitter = jitter_ns > 0 ? jitter_ns : 0;
	epoch = clock_mono_ns();
}

int64_t aclock_now(void)
{
	int64_t now = clock_mono_ns();
	if (!synthetic)
		return now;
	int64_t noise = jitter ? (int64_t)(rand_r(&seed) % (2 * jitter + 1)) - jitter : 0;
	return now + offset + (int64_t)(drift * (double)(now - epoch)) + noise;
}

int64_t aclock_to_mono(int64_t agent_ns)
{
	if (!synthetic)
		return agent_ns;
	/* invert now + offset + drift*(now - epoch), ignoring the jitter */
	return epoch + (int64_t)((double)(agent_ns - offset - epoch) / (1.0 + drift));
}
