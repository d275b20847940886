// SPDX-License-Identifier: GPL-2.0-or-later
/* The go watch: see go_watch.h for the contract. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "go_watch.h"
#include "xalloc.h"

struct go_part {
	bool watched; /* released into the current step, still in the run */
	bool started;
	bool again;	   /* its agent said go-again for the current step */
	unsigned resends;  /* for the current step */
	int64_t resent_ns; /* the last re-send */
};

struct go_suspect {
	size_t p;
	uint32_t step;
};

struct go_watch {
	size_t n;
	struct go_part *p;
	uint32_t step;
	int64_t from_ns;
	int64_t base_ns; /* the bound of the step's first look */
	int64_t due_ns;	 /* 0: nothing to look for */
	unsigned round;	 /* looks that re-sent something, this step */
	bool resent_now; /* the look under way re-sent something */
	/* the slowest start of each of the last steps, a ring */
	int64_t slowest[GO_WATCH_WINDOW];
	unsigned slot;
	uint64_t measured; /* starts measured in all */
	struct go_suspect suspects[GO_WATCH_SUSPECTS_MAX];
	size_t nsuspects;
	uint64_t suspects_over;
	struct go_watch_counts counts;
};

struct go_watch *go_watch_new(size_t participants)
{
	struct go_watch *w = xcalloc(1, sizeof(*w));
	w->n = participants;
	w->p = xcalloc(participants ? participants : 1, sizeof(*w->p));
	return w;
}

void go_watch_free(struct go_watch *w)
{
	if (!w)
		return;
	free(w->p);
	free(w);
}

static int64_t learnt_bound(const struct go_watch *w)
{
	if (!w->measured)
		return GO_WATCH_MAX_NS;
	int64_t slowest = 0;
	for (size_t i = 0; i < GO_WATCH_WINDOW; i++)
		if (w->slowest[i] > slowest)
			slowest = w->slowest[i];
	if (slowest > GO_WATCH_MAX_NS / GO_WATCH_FACTOR)
		return GO_WATCH_MAX_NS;
	int64_t b = slowest * GO_WATCH_FACTOR;
	return b < GO_WATCH_MIN_NS ? GO_WATCH_MIN_NS : b;
}

static void learn(struct go_watch *w, int64_t latency_ns)
{
	if (latency_ns < 0)
		latency_ns = 0;
	if (latency_ns > w->slowest[w->slot])
		w->slowest[w->slot] = latency_ns;
	w->measured++;
}

int64_t go_watch_release(struct go_watch *w, uint32_t step, int64_t from_ns)
{
	w->base_ns = learnt_bound(w);
	w->slot = (w->slot + 1) % GO_WATCH_WINDOW;
	w->slowest[w->slot] = 0;
	w->step = step;
	w->from_ns = from_ns;
	w->round = 0;
	w->resent_now = false;
	memset(w->p, 0, w->n * sizeof(*w->p));
	w->due_ns = from_ns + w->base_ns;
	return w->due_ns;
}

void go_watch_expect(struct go_watch *w, size_t p)
{
	assert(p < w->n);
	w->p[p].watched = true;
}

int64_t go_watch_due_ns(const struct go_watch *w)
{
	return w->due_ns;
}

int64_t go_watch_bound_ns(const struct go_watch *w)
{
	return w->base_ns << w->round;
}

bool go_watch_overdue(const struct go_watch *w, size_t p, int64_t now_ns)
{
	assert(p < w->n);
	const struct go_part *g = &w->p[p];
	return w->due_ns && now_ns >= w->due_ns && g->watched && !g->started &&
	       w->round < GO_WATCH_RESENDS_MAX;
}

void go_watch_resent(struct go_watch *w, size_t p, int64_t now_ns)
{
	assert(p < w->n);
	w->p[p].resends++;
	w->p[p].resent_ns = now_ns;
	w->resent_now = true;
	w->counts.resent++;
}

int64_t go_watch_looked(struct go_watch *w, int64_t now_ns)
{
	if (!w->due_ns || now_ns < w->due_ns)
		return w->due_ns; /* early: the same look stays armed */
	if (w->resent_now) {
		w->resent_now = false;
		w->round++;
	}
	bool waiting = false;
	for (size_t i = 0; i < w->n; i++)
		waiting |= w->p[i].watched && !w->p[i].started;
	if (!waiting || w->round == 0 || w->round >= GO_WATCH_RESENDS_MAX)
		w->due_ns = 0; /* round 0: nobody was overdue, nobody re-sent to */
	else
		w->due_ns = now_ns + go_watch_bound_ns(w);
	return w->due_ns;
}

unsigned go_watch_resends(const struct go_watch *w, size_t p)
{
	assert(p < w->n);
	return w->p[p].resends;
}

unsigned go_watch_round(const struct go_watch *w)
{
	return w->round;
}

enum go_watch_start go_watch_started(struct go_watch *w, size_t p, int64_t started_ns, int64_t rx_ns)
{
	assert(p < w->n);
	struct go_part *g = &w->p[p];
	if (!g->watched || g->started)
		return GO_WATCH_IN_TIME; /* not waited for: nothing to say */
	g->started = true;
	/* a start heard after a re-send is slower than the bound, whatever
	 * the cause: the next steps look later */
	learn(w, rx_ns - w->from_ns);
	if (!g->resends)
		return GO_WATCH_IN_TIME;
	if (started_ns < g->resent_ns)
		return GO_WATCH_BEFORE_RESEND;
	w->counts.after_resend++;
	if (g->again)
		return GO_WATCH_AFTER_RESEND; /* it said it had the first one already */
	if (w->nsuspects < GO_WATCH_SUSPECTS_MAX)
		w->suspects[w->nsuspects++] = (struct go_suspect){ .p = p, .step = w->step };
	else
		w->suspects_over++;
	return GO_WATCH_AFTER_RESEND;
}

void go_watch_again(struct go_watch *w, size_t p, uint32_t step)
{
	assert(p < w->n);
	w->counts.again++;
	/* before its started, when the re-sent go came while the first one
	 * waited for its instant or its child; after it, otherwise */
	if (step == w->step)
		w->p[p].again = true;
	for (size_t i = 0; i < w->nsuspects; i++) {
		if (w->suspects[i].p == p && w->suspects[i].step == step) {
			w->suspects[i] = w->suspects[--w->nsuspects];
			return;
		}
	}
}

void go_watch_drop(struct go_watch *w, size_t p)
{
	assert(p < w->n);
	w->p[p].watched = false;
}

struct go_watch_counts go_watch_counts(const struct go_watch *w)
{
	struct go_watch_counts c = w->counts;
	c.lost = w->nsuspects + w->suspects_over;
	return c;
}
