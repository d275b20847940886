/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The agent's built-in monitors on a timer: while the plan asks for them
 * (plan.monitor_interval_ms > 0) a timerfd in the agent's poll wakes it
 * every interval, and at each step's start and end it samples too, so that
 * the samples stamped with a step cover exactly that step.  Off, there is
 * no timer and no fd: the agent still sleeps in one poll(2) at a barrier.
 */
#ifndef GUESTAGENT_SAMPLER_H
#define GUESTAGENT_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>

#include "procmon.h"
#include "session.h"

struct sampler {
	struct mon_reader rd;
	char root[256];
	int tfd;	      /* the timer while on; -1 off */
	uint32_t interval_ms; /* 0: off */
	unsigned cur;	      /* snap[cur] is the newest */
	bool have_prev;
	unsigned warned_bad; /* sources said to be garbled, once each */
};

void sampler_init(struct sampler *s, const char *proc_root);
/* Turns monitors on at this interval, or off for 0.  Logs what it cannot
 * read; -errno only when the timer cannot be made. */
int sampler_set(struct sampler *s, uint32_t interval_ms);
/* The fd to poll for the timer, -1 when off. */
int sampler_fd(const struct sampler *s);
/* Samples now: the interval since the last sample, stamped with step (0:
 * none ran).  Drains the timer; rearm restarts its period from now (a step
 * edge).  Does nothing while off. */
void sampler_take(struct sampler *s, struct session *sess, uint32_t step, bool rearm);
void sampler_fini(struct sampler *s);

#endif
