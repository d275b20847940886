/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The barrier coordinator: who has said ready for which step, who is
 * released, who is late.  Pure state, no I/O and no clock of its own (the
 * caller passes instants), so that every rule is testable on its own.
 *
 * Steps are numbered 1..nsteps.  Barrier k opens when step k-1 was released
 * (barrier 1 at the start).  It releases when every participant still in the
 * run has said ready(k).  Barrier nsteps+1 is the end of the run: a
 * participant reaches it when it finished the last step.  Its deadline is armed by the first ready(k) and
 * lasts barrier_timeout_ns; until then a longer step deadline covers a step
 * that runs on every node and never ends.
 */
#ifndef LOCKSTEP_BARRIER_H
#define LOCKSTEP_BARRIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct barrier;

enum barrier_verdict {
	BARRIER_WAIT,	   /* nothing to do yet */
	BARRIER_RELEASE,   /* every participant in the run is ready: send go */
	BARRIER_RESEND_GO, /* a ready for the step just released, from one not ready for
			       the next: its go was lost, send it again */
	BARRIER_DUPLICATE, /* a ready already counted (the end barrier's too, after it
			       completed): ignore */
	BARRIER_INVALID,   /* a ready for a step that cannot be next: protocol violation */
};

struct barrier *barrier_new(size_t participants, uint32_t nsteps, int64_t barrier_timeout_ns,
			    int64_t step_timeout_ns, int64_t now_ns);
void barrier_free(struct barrier *b);

/* Restarts the open barrier's clock at now_ns: the run waited for
 * something else (guests booting) that has deadlines of its own. */
void barrier_restart_clock(struct barrier *b, int64_t now_ns);
/* Participant p said ready(step) at now_ns. */
enum barrier_verdict barrier_ready(struct barrier *b, size_t p, uint32_t step, int64_t now_ns);
/* Participant p left the run (died, timed out, sent garbage).  Returns
 * BARRIER_RELEASE when its leaving completes the current barrier. */
enum barrier_verdict barrier_drop(struct barrier *b, size_t p);
/* The caller sent go for the current step at now_ns: the next barrier opens. */
void barrier_released(struct barrier *b, int64_t now_ns);

/* The step whose barrier is open (nsteps+1: the end barrier; nsteps+2 once
 * that one completed too). */
uint32_t barrier_step(const struct barrier *b);
uint32_t barrier_nsteps(const struct barrier *b);
/* When the open barrier expires (INT64_MAX when no deadline is armed). */
int64_t barrier_deadline(const struct barrier *b);
/* Participants still in the run that have not said ready for the open
 * barrier; writes up to max indexes into out and returns the count. */
size_t barrier_waiting_for(const struct barrier *b, size_t *out, size_t max);
bool barrier_is_ready(const struct barrier *b, size_t p);
bool barrier_in_run(const struct barrier *b, size_t p);
size_t barrier_in_run_count(const struct barrier *b);
/* The instant p said ready for the open barrier (0 when it has not). */
int64_t barrier_ready_ns(const struct barrier *b, size_t p);
/* The last ready that completed the open barrier (for release latency). */
int64_t barrier_last_ready_ns(const struct barrier *b);

#endif
