// SPDX-License-Identifier: GPL-2.0-or-later
#include "barrier.h"

#include <assert.h>
#include <stdlib.h>

#include "xalloc.h"

struct participant {
	bool in_run;
	bool ready; /* has said ready for the open barrier */
	int64_t ready_ns;
};

struct barrier {
	size_t n;
	uint32_t nsteps;
	uint32_t step; /* open barrier */
	size_t in_run, nready;
	int64_t barrier_timeout_ns, step_timeout_ns;
	int64_t deadline_ns;
	int64_t last_ready_ns;
	struct participant *p;
};

static int64_t deadline_after(int64_t now_ns, int64_t timeout_ns)
{
	if (timeout_ns <= 0 || now_ns > INT64_MAX - timeout_ns)
		return INT64_MAX;
	return now_ns + timeout_ns;
}

struct barrier *barrier_new(size_t participants, uint32_t nsteps, int64_t barrier_timeout_ns,
			    int64_t step_timeout_ns, int64_t now_ns)
{
	assert(participants > 0);
	struct barrier *b = xcalloc(1, sizeof(*b));
	b->n = participants;
	b->nsteps = nsteps;
	b->step = 1;
	b->in_run = participants;
	b->barrier_timeout_ns = barrier_timeout_ns;
	b->step_timeout_ns = step_timeout_ns;
	/* Barrier 1 has no step before it: the participants' start-up is bounded
	 * by the barrier timeout itself. */
	b->deadline_ns = deadline_after(now_ns, barrier_timeout_ns);
	b->p = xcalloc(participants, sizeof(*b->p));
	for (size_t i = 0; i < participants; i++)
		b->p[i].in_run = true;
	return b;
}

void barrier_free(struct barrier *b)
{
	if (!b)
		return;
	free(b->p);
	free(b);
}

void barrier_restart_clock(struct barrier *b, int64_t now_ns)
{
	b->deadline_ns = deadline_after(now_ns, b->barrier_timeout_ns);
}

static enum barrier_verdict complete_if_all_ready(const struct barrier *b)
{
	if (b->step > b->nsteps + 1 || b->in_run == 0)
		return BARRIER_WAIT;
	return b->nready == b->in_run ? BARRIER_RELEASE : BARRIER_WAIT;
}

enum barrier_verdict barrier_ready(struct barrier *b, size_t p, uint32_t step, int64_t now_ns)
{
	assert(p < b->n);
	struct participant *q = &b->p[p];

	if (!q->in_run || step == 0 || step > b->nsteps + 1)
		return BARRIER_INVALID;
	if (step + 1 == b->step)
		/* Its go was lost: a resync re-announces.  Not when it is ready
		 * for the open barrier already (it got that go), nor for the end
		 * barrier (no go ends it). */
		return q->ready || step > b->nsteps ? BARRIER_DUPLICATE : BARRIER_RESEND_GO;
	if (step != b->step)
		return BARRIER_INVALID;
	if (q->ready)
		return BARRIER_DUPLICATE;

	q->ready = true;
	q->ready_ns = now_ns;
	b->nready++;
	b->last_ready_ns = now_ns;
	if (b->nready == 1)
		b->deadline_ns = deadline_after(now_ns, b->barrier_timeout_ns);
	return complete_if_all_ready(b);
}

enum barrier_verdict barrier_drop(struct barrier *b, size_t p)
{
	assert(p < b->n);
	struct participant *q = &b->p[p];

	if (!q->in_run)
		return BARRIER_WAIT;
	q->in_run = false;
	b->in_run--;
	if (q->ready) {
		q->ready = false;
		b->nready--;
	}
	return complete_if_all_ready(b);
}

void barrier_released(struct barrier *b, int64_t now_ns)
{
	assert(b->step <= b->nsteps + 1);
	for (size_t i = 0; i < b->n; i++) {
		b->p[i].ready = false;
		b->p[i].ready_ns = 0;
	}
	b->nready = 0;
	b->step++;
	/* Nobody is ready yet: what bounds the wait is the step itself. */
	b->deadline_ns = deadline_after(now_ns, b->step_timeout_ns);
}

uint32_t barrier_step(const struct barrier *b)
{
	return b->step;
}

uint32_t barrier_nsteps(const struct barrier *b)
{
	return b->nsteps;
}

int64_t barrier_deadline(const struct barrier *b)
{
	return b->deadline_ns;
}

size_t barrier_waiting_for(const struct barrier *b, size_t *out, size_t max)
{
	size_t k = 0;
	for (size_t i = 0; i < b->n; i++) {
		const struct participant *q = &b->p[i];
		if (q->in_run && !q->ready) {
			if (k < max)
				out[k] = i;
			k++;
		}
	}
	return k;
}

bool barrier_is_ready(const struct barrier *b, size_t p)
{
	assert(p < b->n);
	return b->p[p].ready;
}

bool barrier_in_run(const struct barrier *b, size_t p)
{
	assert(p < b->n);
	return b->p[p].in_run;
}

size_t barrier_in_run_count(const struct barrier *b)
{
	return b->in_run;
}

int64_t barrier_ready_ns(const struct barrier *b, size_t p)
{
	assert(p < b->n);
	return b->p[p].ready_ns;
}

int64_t barrier_last_ready_ns(const struct barrier *b)
{
	return b->last_ready_ns;
}
