// SPDX-License-Identifier: GPL-2.0-or-later
#include "host_proc.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "closer.h"
#include "log.h"
#include "monitor_store.h"
#include "procmon.h"
#include "proto.h"
#include "xalloc.h"

/* /proc/stat holds the CPU lines first: a larger file cut here loses only
 * its tail (interrupts), as in the agent. */
#define HP_BUF_SIZE (128 * 1024)
/* Edges waiting for the job in flight; a step's two edges and the next
 * start are three, so more means the jobs do not keep up at all. */
#define HP_EDGES_MAX 8

struct hp_edge {
	uint32_t stamp; /* the step that ran over the interval the sample closes */
	uint32_t ended; /* the step whose end this sample is, 0: none */
};

struct host_proc {
	uv_loop_t *loop;
	struct monitor_store *ms;
	char node[PROTO_NAME_MAX];
	struct mon_reader rd;
	char *buf;
	struct mon_snap snap[2]; /* [cur] the newest */
	unsigned cur;
	bool have_prev;
	unsigned warned_bad;
	uint32_t interval_ms;
	uint32_t running; /* the step the host's samples are stamped with now */
	uv_timer_t timer;
	uv_work_t work;
	bool busy;
	struct closer closer; /* the timer, the job in flight */
	struct hp_edge job;   /* of the job in flight */
	struct hp_edge edges[HP_EDGES_MAX];
	unsigned nedges;
	host_proc_step_done_fn step_done;
	void *ctx;
};

struct hp_emit {
	struct host_proc *hp;
	uint32_t step;
	int64_t ns;
};

static void hp_put(void *ctx, const char *metric, double value, const char *unit)
{
	struct hp_emit *e = ctx;

	monitor_store_put(e->hp->ms, e->hp->node, e->step, e->ns, e->ns, metric, value, unit);
}

/* In a worker thread: only the next snapshot and the reader are touched. */
static void hp_job(uv_work_t *w)
{
	struct host_proc *hp = w->data;

	mon_reader_read(&hp->rd, clock_mono_ns(), &hp->snap[hp->cur ^ 1], hp->buf, HP_BUF_SIZE);
}

static void hp_job_done(uv_work_t *w, int status);

static void hp_queue(struct host_proc *hp, struct hp_edge e)
{
	hp->job = e;
	if (uv_queue_work(hp->loop, &hp->work, hp_job, hp_job_done) < 0) {
		if (e.ended && hp->step_done)
			hp->step_done(hp->ctx, e.ended);
		return;
	}
	hp->busy = true;
	closer_hold(&hp->closer);
}

/* An edge now, or as soon as the job in flight is back. */
static void hp_edge(struct host_proc *hp, uint32_t stamp, uint32_t ended)
{
	struct hp_edge e = { stamp, ended };

	if (hp->closer.closing)
		return;
	if (!hp->busy) {
		hp_queue(hp, e);
		return;
	}
	if (hp->nedges == HP_EDGES_MAX) {
		/* the oldest loses its sample, not its summaries */
		if (hp->edges[0].ended && hp->step_done)
			hp->step_done(hp->ctx, hp->edges[0].ended);
		memmove(hp->edges, hp->edges + 1, (HP_EDGES_MAX - 1) * sizeof(hp->edges[0]));
		hp->nedges--;
	}
	hp->edges[hp->nedges++] = e;
}

static void hp_destroy(void *obj)
{
	struct host_proc *hp = obj;

	mon_reader_close(&hp->rd);
	free(hp->buf);
	free(hp);
}

static void hp_warn_bad(struct host_proc *hp)
{
	unsigned bad = hp->rd.bad & ~hp->warned_bad;

	for (int i = 0; i < MON_NSRC; i++)
		if (bad & (1u << i))
			log_warn("host monitors: %s/%s does not read as expected; left out while it "
				 "does not",
				 hp->rd.root, mon_source_path[i]);
	hp->warned_bad |= bad;
}

static void hp_job_done(uv_work_t *w, int status)
{
	struct host_proc *hp = w->data;
	struct hp_edge e = hp->job;

	hp->busy = false;
	/* also while closing: the last step's end edge comes just before
	 * the run closes, and its summaries belong to the run */
	if (status == 0) {
		struct hp_emit em = { hp, e.stamp, 0 };

		hp->cur ^= 1;
		em.ns = hp->snap[hp->cur].ns;
		hp_warn_bad(hp);
		if (hp->have_prev)
			mon_emit(&hp->snap[hp->cur ^ 1], &hp->snap[hp->cur], hp_put, &em);
		hp->have_prev = true;
	}
	if (e.ended && hp->step_done)
		hp->step_done(hp->ctx, e.ended);
	if (hp->nedges) {
		e = hp->edges[0];
		memmove(hp->edges, hp->edges + 1, (hp->nedges - 1) * sizeof(hp->edges[0]));
		hp->nedges--;
		hp_queue(hp, e);
	}
	closer_release(&hp->closer);
}

static void hp_tick(uv_timer_t *t)
{
	struct host_proc *hp = t->data;

	/* a tick while a job is out is skipped, not queued */
	if (hp->busy || hp->closer.closing)
		return;
	hp_queue(hp, (struct hp_edge){ hp->running, 0 });
}

struct host_proc *host_proc_new(uv_loop_t *loop, struct monitor_store *ms, const char *node,
				const char *proc_root, uint32_t interval_ms,
				host_proc_step_done_fn step_done, void *ctx)
{
	struct host_proc *hp = xcalloc(1, sizeof(*hp));
	unsigned missing;

	hp->loop = loop;
	hp->ms = ms;
	snprintf(hp->node, sizeof(hp->node), "%s", node);
	hp->buf = xmalloc(HP_BUF_SIZE);
	hp->interval_ms = interval_ms ? interval_ms : 1000;
	hp->step_done = step_done;
	hp->ctx = ctx;
	hp->work.data = hp;
	mon_reader_open(&hp->rd, proc_root);
	missing = mon_reader_missing(&hp->rd);
	for (int i = 0; i < MON_NSRC; i++)
		if (missing & (1u << i))
			log_info("host monitors: no %s/%s on this host; left out", hp->rd.root,
				 mon_source_path[i]);
	closer_init(&hp->closer, hp_destroy, hp);
	uv_timer_init(loop, &hp->timer);
	hp->timer.data = hp;
	closer_hold(&hp->closer);
	return hp;
}

void host_proc_start(struct host_proc *hp)
{
	uv_timer_start(&hp->timer, hp_tick, 0, hp->interval_ms);
}

void host_proc_step_end(struct host_proc *hp, uint32_t step)
{
	if (!hp || !step || step != hp->running)
		return;
	hp->running = 0;
	hp_edge(hp, step, step);
}

void host_proc_step_start(struct host_proc *hp, uint32_t step)
{
	if (!hp)
		return;
	if (hp->running && hp->running != step)
		host_proc_step_end(hp, hp->running);
	hp->running = step;
	/* what led up to a release was a barrier */
	hp_edge(hp, 0, 0);
}

uint32_t host_proc_step(const struct host_proc *hp)
{
	return hp ? hp->running : 0;
}

void host_proc_close(struct host_proc *hp, void (*done)(void *ctx), void *ctx)
{
	/* edges still waiting are sampled first (no new ones come) */
	closer_close(hp ? &hp->closer : NULL, done, ctx);
	if (hp)
		closer_close_handle(&hp->closer, (uv_handle_t *)&hp->timer);
}
