/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The leader's roster for one step's roadblock: which followers said
 * online, ready, gone, their round trips through Redis, and who was left
 * out for good (ON_HOST_FAILURE=continue); from it, the release lead.
 * Member 0 is the leader itself.  Pure state: no I/O, no clock, no log.
 */
#ifndef LOCKSTEP_CLUSTER_ROSTER_H
#define LOCKSTEP_CLUSTER_ROSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster_settings.h"

/* What the leader adds to twice the slowest round trip: the followers'
 * XREAD wake-up and their own go to their guests. */
#define CLUSTER_MARGIN_NS 3000000LL
/* Added to the first step's lead: every member does things for the first
 * time then (measured: all-go read up to 8 ms after a 12 ms lead with 4
 * hostds on 2 cores, on the first step only). */
#define CLUSTER_FIRST_LEAD_NS 20000000LL
/* A round trip longer than this is Redis stalled (stopped, swapped out),
 * not the network: the lead counts it as this much, so that one stall
 * does not slow the steps after it by seconds while its sample decays. */
#define CLUSTER_RTT_MAX_NS 500000000LL

enum roster_mark { ROSTER_ONLINE, ROSTER_READY, ROSTER_GONE, ROSTER_MARKS };

struct roster {
	size_t n; /* members, the leader included */
	bool mark[ROSTER_MARKS][CLUSTER_MEMBERS_MAX];
	bool dropped[CLUSTER_MEMBERS_MAX];   /* for the rest of the run */
	int64_t rtt_ns[CLUSTER_MEMBERS_MAX]; /* -1: not told */
};

void roster_init(struct roster *r, size_t n);
/* A new step: marks and round trips forgotten, the dropped stay so. */
void roster_step(struct roster *r);
/* Every follower still in the run has mark m. */
bool roster_all(const struct roster *r, enum roster_mark m);
/* The followers still in the run without mark m, their names joined by
 * ", " into buf (size bytes); how many. */
size_t roster_missing(const struct roster *r, enum roster_mark m, const char *const *names,
		      char *buf, size_t size);
/* Leaves those followers out for good; how many. */
size_t roster_drop_missing(struct roster *r, enum roster_mark m);
/* How far ahead step's release goes: twice the slowest round trip of the
 * members still in (the leader's own_rtt_ns among them) plus the margin,
 * and more on the first step. */
int64_t roster_lead(const struct roster *r, int64_t own_rtt_ns, uint32_t step);

#endif
