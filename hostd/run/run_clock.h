/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A participant's clock against the host's, owned by run_clock.c: the
 * ping/pong exchanges (RUN_CLOCK_EXCHANGES before its plan, one refresh at
 * each barrier it waits at), the KVM PTP readings its pongs carry, and the
 * offset in use with its bound.  Opaque: the run asks, never reaches in.
 *
 * No I/O and no log: a ping is built for the caller to send, and a pong
 * returns what happened (more pings wanted, the clock ready, a jump, a
 * refused reading) for the caller to say and act on.  The caller passes the
 * instants in (the ping's send, the pong's receipt), so a test can drive it
 * with made-up exchanges.
 */
#ifndef LOCKSTEP_RUN_CLOCK_H
#define LOCKSTEP_RUN_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "clock_offset.h"
#include "proto.h"

/* Ping/pong exchanges per guest before its plan: the best of them sets the
 * guest's clock offset (bench: 16 exchanges take ~5 ms on a TCG guest). */
#define RUN_CLOCK_EXCHANGES 16
/* PTP readings fitted: those whose window is within 1.5x the smallest plus
 * this (a cross-timestamp's window is tens of ns, a plain read's a few us) */
#define RUN_PTP_GOOD_SLACK_NS 2000

struct part_clock;

/* shared: the agent runs on the host and reads the host's own clock; it
 * needs no exchanges and its offset is 0. */
struct part_clock *part_clock_new(bool shared);
void part_clock_free(struct part_clock *c);

bool part_clock_shared(const struct part_clock *c);
/* Its first RUN_CLOCK_EXCHANGES pongs are in (never for a shared one). */
bool part_clock_ready(const struct part_clock *c);
/* The estimate in use: KVM PTP's once it had readings by the time the
 * clock was ready, else ping/pong's; and its method, as records name it. */
const struct clock_offset *part_clock_offset(const struct part_clock *c);
const char *part_clock_method(const struct part_clock *c);
/* An instant between the host's clock and the agent's (a shared clock:
 * unchanged), and how far off it may be there (a shared one: 0). */
int64_t part_clock_to_guest(const struct part_clock *c, int64_t host_ns);
int64_t part_clock_to_host(const struct part_clock *c, int64_t guest_ns);
int64_t part_clock_bound_at(const struct part_clock *c, int64_t host_ns);
/* The slowest recent round trip (a shared clock: 0), for the release lead. */
int64_t part_clock_max_delay_ns(const struct part_clock *c);

/* A refresh is worth a ping now: a guest's ready clock, no ping in flight. */
bool part_clock_refresh_due(const struct part_clock *c);
/* The next ping, its t1 now_ns, the host's realtime - monotonic rm as it
 * leaves (a PTP reading in the pong is taken after both). */
void part_clock_ping(struct part_clock *c, int64_t now_ns, const struct clock_realmono *rm,
		     struct proto_msg *m);
/* A pong now would measure the agent's sleep until a go's instant: the
 * ping in flight is forgotten (its pong ignored). */
void part_clock_forget_ping(struct part_clock *c);

enum part_clock_pong {
	PART_CLOCK_PONG_IGNORED, /* not the answer to the ping in flight */
	PART_CLOCK_PONG_MORE,	 /* fewer than RUN_CLOCK_EXCHANGES yet: ping again */
	PART_CLOCK_PONG_READY,	 /* that was the last one before the plan */
	PART_CLOCK_PONG_REFRESH, /* a refresh between steps */
};

/* What a pong showed besides its kind, each for the caller to say. */
struct part_clock_news {
	/* a refresh whose offset lies outside what the fit said, widened by
	 * both exchanges' bounds and the slew since, and none pending for the
	 * next record yet (part_clock_take_jump): the text says so */
	bool jumped;
	char jump[200];
	/* the exchange that completed the first RUN_CLOCK_EXCHANGES was
	 * impossible (t3 before t2, or a clock that lies): left out */
	bool impossible;
	/* its first refused KVM PTP reading (later ones are only counted) */
	bool ptp_refused;
	char ptp[320];
};

/* A pong received at rx_ns, the host's realtime - monotonic rm then. */
enum part_clock_pong part_clock_pong(struct part_clock *c, const struct proto_msg *m, int64_t rx_ns,
				     const struct clock_realmono *rm, struct part_clock_news *news);
/* A jump seen since the last call (the last barrier record): true once. */
bool part_clock_take_jump(struct part_clock *c);
/* A jump is pending for the next record (it was said then). */
bool part_clock_jump_pending(const struct part_clock *c);
/* The ready clock in words (offset, bound, method); false when none of its
 * exchanges was possible: a warning then, not news. */
bool part_clock_describe(const struct part_clock *c, char *buf, size_t len);

/* The manifest's "clock" of a node. */
json_object *part_clock_json(const struct part_clock *c);

/* A clocksource unfit for microsecond timing: a sentence for the log and
 * the manifest in buf, returned; NULL when fit (or the agent could not
 * tell). */
const char *part_clock_source_warning(const char *clocksource, char *buf, size_t len);

#endif
