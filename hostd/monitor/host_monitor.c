// SPDX-License-Identifier: GPL-2.0-or-later
#include "host_monitor.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "closer.h"
#include "log.h"
#include "monitor_store.h"
#include "proto.h"
#include "xalloc.h"

struct hm_guest {
	char node[PROTO_NAME_MAX];
	virDomainPtr dom;
	void *guest;		       /* the caller's, for step_of */
	struct host_vcpu_snap snap[2]; /* [cur] newest */
	unsigned cur;
	bool have_prev;
	int err; /* of the last read, set by the job */
	char why[256];
	bool warned;
};

struct host_monitor {
	uv_loop_t *loop;
	struct monitor_store *ms;
	uint32_t interval_ms;
	host_monitor_step_fn step_of;
	host_monitor_read_fn read;
	struct hm_guest *g;
	size_t n;
	uv_timer_t timer;
	uv_work_t work;
	bool busy;
	struct closer closer; /* the timer, the job in flight */
};

struct hm_emit {
	struct host_monitor *hm;
	const char *node;
	uint32_t step;
	int64_t ns;
};

static void hm_put(void *ctx, const char *metric, double value, const char *unit)
{
	struct hm_emit *e = ctx;

	monitor_store_put(e->hm->ms, e->node, e->step, e->ns, e->ns, metric, value, unit);
}

/* In a worker thread: only the guests' next snapshots are touched. */
static void hm_job(uv_work_t *w)
{
	struct host_monitor *hm = w->data;

	for (size_t i = 0; i < hm->n; i++) {
		struct hm_guest *g = &hm->g[i];

		g->err = hm->read(g->dom, &g->snap[g->cur ^ 1], g->why, sizeof(g->why));
	}
}

static void hm_destroy(void *obj)
{
	struct host_monitor *hm = obj;

	for (size_t i = 0; i < hm->n; i++)
		virDomainFree(hm->g[i].dom);
	free(hm->g);
	free(hm);
}

static void hm_job_done(uv_work_t *w, int status)
{
	struct host_monitor *hm = w->data;

	hm->busy = false;
	for (size_t i = 0; i < hm->n && status == 0 && !hm->closer.closing; i++) {
		struct hm_guest *g = &hm->g[i];
		struct hm_emit e = { hm, g->node, 0, 0 };

		if (g->err < 0) {
			if (!g->warned)
				log_warn("%s: cannot read its vCPU stats: %s; trying again each interval",
					 g->node, g->why);
			g->warned = true;
			continue;
		}
		g->cur ^= 1;
		e.step = hm->step_of ? hm->step_of(g->guest) : 0;
		e.ns = g->snap[g->cur].ns;
		if (g->have_prev)
			host_sampler_emit(&g->snap[g->cur ^ 1], &g->snap[g->cur], hm_put, &e);
		g->have_prev = true;
	}
	closer_release(&hm->closer);
}

static void hm_tick(uv_timer_t *t)
{
	struct host_monitor *hm = t->data;

	if (hm->busy || hm->closer.closing)
		return;
	if (uv_queue_work(hm->loop, &hm->work, hm_job, hm_job_done) < 0)
		return;
	hm->busy = true;
	closer_hold(&hm->closer);
}

struct host_monitor *host_monitor_new(uv_loop_t *loop, struct monitor_store *ms,
				      uint32_t interval_ms, host_monitor_step_fn step_of)
{
	struct host_monitor *hm = xcalloc(1, sizeof(*hm));

	hm->loop = loop;
	hm->ms = ms;
	hm->interval_ms = interval_ms ? interval_ms : 1000;
	hm->step_of = step_of;
	hm->read = host_sampler_read;
	hm->work.data = hm;
	closer_init(&hm->closer, hm_destroy, hm);
	uv_timer_init(loop, &hm->timer);
	hm->timer.data = hm;
	closer_hold(&hm->closer);
	return hm;
}

void host_monitor_add(struct host_monitor *hm, const char *node, virDomainPtr dom, void *guest)
{
	struct hm_guest *g;

	hm->g = xrealloc(hm->g, (hm->n + 1) * sizeof(*hm->g));
	g = &hm->g[hm->n++];
	memset(g, 0, sizeof(*g));
	snprintf(g->node, sizeof(g->node), "%s", node);
	virDomainRef(dom);
	g->dom = dom;
	g->guest = guest;
}

void host_monitor_set_reader(struct host_monitor *hm, host_monitor_read_fn read)
{
	hm->read = read;
}

void host_monitor_start(struct host_monitor *hm)
{
	/* the first tick at once: it only takes the first snapshot */
	uv_timer_start(&hm->timer, hm_tick, 0, hm->interval_ms);
}

void host_monitor_close(struct host_monitor *hm, void (*done)(void *ctx), void *ctx)
{
	closer_close(hm ? &hm->closer : NULL, done, ctx);
	if (hm)
		closer_close_handle(&hm->closer, (uv_handle_t *)&hm->timer);
}
