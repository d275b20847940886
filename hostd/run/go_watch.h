/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The go watch (issue 19): a participant released into a step that has
 * not said `started` within a bound gets its go again, until a barrier can
 * no longer lose one.  Pure state, no I/O and no clock of its own (the
 * caller passes instants and sends the gos), so that the bound and the
 * tallies are testable on their own.
 *
 * The bound is learnt: GO_WATCH_FACTOR times the slowest start seen in
 * the last GO_WATCH_WINDOW steps (from the step's instant, or the go's
 * send for an immediate release, to the receipt of `started`), never
 * below GO_WATCH_MIN_NS and never above GO_WATCH_MAX_NS; GO_WATCH_MAX_NS
 * until a start was measured.  Each re-send of the same step doubles it,
 * at most GO_WATCH_RESENDS_MAX times.
 *
 * Verdicts: a participant that starts (its own stamp, on the host's
 * clock) after its go was re-sent, and whose agent never answered the
 * re-sent go with `go-again` (it had the first one), before or after its
 * started, lost its first go.
 */
#ifndef LOCKSTEP_GO_WATCH_H
#define LOCKSTEP_GO_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The floor: a go is a socket write and a read by an agent waiting in
 * epoll (tens of us on a quiet host, the release latency was 48
 * us), but on a busy host a runnable agent may wait one scheduler period
 * for a CPU (sched_latency: 6 ms times 1 + log2(CPUs), up to 24 ms):
 * below that every preemption would cost a re-send. */
#define GO_WATCH_MIN_NS (20 * 1000 * 1000LL)
/* The ceiling, and the bound before any start was measured (the first
 * step's fork and exec are cold): what a lost go costs at most. */
#define GO_WATCH_MAX_NS (250 * 1000 * 1000LL)
/* Headroom over the slowest recent start: a start 8 times slower than
 * any of the last 64 steps is rare enough to check on. */
#define GO_WATCH_FACTOR 8
#define GO_WATCH_WINDOW 64
#define GO_WATCH_RESENDS_MAX 4
/* Starts after a re-send not yet answered by go-again, kept for the
 * verdict; more are counted as lost without a chance to be answered. */
#define GO_WATCH_SUSPECTS_MAX 1024

struct go_watch;

enum go_watch_start {
	GO_WATCH_IN_TIME,	/* started without a re-send */
	GO_WATCH_BEFORE_RESEND, /* a re-send went out, but its stamp is earlier: heard late */
	GO_WATCH_AFTER_RESEND,	/* started only after its go was sent again */
};

struct go_watch_counts {
	uint64_t resent;       /* gos sent again */
	uint64_t again;	       /* re-sent gos the agent answered with go-again */
	uint64_t after_resend; /* starts stamped after a re-send of their go */
	uint64_t lost;	       /* of those, without a go-again: the first go was lost */
};

struct go_watch *go_watch_new(size_t participants);
void go_watch_free(struct go_watch *w);

/* Step was released at from_ns (its instant, or the last go's send for an
 * immediate release); the participants the caller marks as released with
 * go_watch_expect are watched.  Returns the instant to look. */
int64_t go_watch_release(struct go_watch *w, uint32_t step, int64_t from_ns);
void go_watch_expect(struct go_watch *w, size_t p);
/* When the caller should look next (0: nothing to look for). */
int64_t go_watch_due_ns(const struct go_watch *w);
/* The bound that applies to the next look (for messages). */
int64_t go_watch_bound_ns(const struct go_watch *w);
/* Whether p is still waited for at now_ns (released, no started yet, the
 * bound passed, re-sends left). */
bool go_watch_overdue(const struct go_watch *w, size_t p, int64_t now_ns);
/* The caller sent p its go again at now_ns. */
void go_watch_resent(struct go_watch *w, size_t p, int64_t now_ns);
/* The caller finished a look at now_ns: arms the next one while someone
 * is still waited for and re-sends are left. Returns go_watch_due_ns. */
int64_t go_watch_looked(struct go_watch *w, int64_t now_ns);
/* Re-sends so far to p for the current step. */
unsigned go_watch_resends(const struct go_watch *w, size_t p);
/* The re-sends of the step's look so far (0 before the first). */
unsigned go_watch_round(const struct go_watch *w);

/* p said started for the current step, stamped started_ns (host clock),
 * received at rx_ns. */
enum go_watch_start go_watch_started(struct go_watch *w, size_t p, int64_t started_ns, int64_t rx_ns);
/* p's agent answered a re-sent go for step with go-again (before its
 * started, or after it). */
void go_watch_again(struct go_watch *w, size_t p, uint32_t step);
/* p left the run: nothing more is waited for from it. */
void go_watch_drop(struct go_watch *w, size_t p);

struct go_watch_counts go_watch_counts(const struct go_watch *w);

#endif
