// SPDX-License-Identifier: GPL-2.0-or-later
#include "run_cluster.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "clock.h"
#include "cluster.h"
#include "log.h"
#include "roadblock_msg.h"
#include "run_priv.h"
#include "xalloc.h"

struct run_cluster {
	struct cluster *c;
	uint32_t asked, decided;
	int64_t at_real;     /* the decided step's common instant; 0: none */
	json_object *next;   /* the decided step's facts, until it is released */
	json_object *record; /* those of the step released last */
	uint32_t record_step;
	int64_t real_minus_mono; /* at that release */
	bool warned_unsync;
};

static void decided(void *data, const struct cluster_result *res)
{
	struct run *r = data;
	struct run_cluster *rc = r->cluster;
	if (res->clock_unsync && !rc->warned_unsync) {
		rc->warned_unsync = true;
		log_warn("cluster: this host's (member %s) clock is not synchronised (adjtimex): "
			 "the release instant shared with the other hosts is only as good as its "
			 "clock; run chrony or PTP (barriers.ndjson: cluster.host_clock)",
			 r->exp->cluster.member);
	}
	if (res->outcome == CLUSTER_MEMBER_LOST) {
		log_warn("%s", res->why);
		return;
	}
	if (res->outcome != CLUSTER_RELEASED) {
		log_error("%s", res->why);
		run_cluster_decided(r, res->why);
		return;
	}
	json_object_put(rc->next);
	rc->next = json_object_get(res->record);
	rc->decided = res->step;
	rc->at_real = res->at_realtime_ns;
	run_cluster_decided(r, NULL);
}

/* What every member must run alike: each step's benchmark, iteration,
 * kind, units and command, as the first node's plan has them. */
static void plan_digest(const struct experiment *e, char *hex)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	if (!f)
		abort();
	for (uint32_t k = 0; k < e->nsteps; k++) {
		const struct proto_step *s = &e->steps[k];
		fprintf(f, "%" PRIu32 " %" PRIu32 " %s %d %" PRIu64 " %s\n", s->index, s->iteration,
			s->benchmark, (int)s->kind, s->units, s->command ? s->command : "");
	}
	fclose(f);
	rb_sha256_hex(buf, size, hex);
	free(buf);
}

int run_cluster_start(struct run *r)
{
	char plan[RB_SHA256_HEX + 1], err[600];
	if (!r->exp->cluster.enabled)
		return 0;
	if (cluster_probe(&r->exp->cluster, err, sizeof(err)) < 0) {
		log_error("%s", err);
		return -1;
	}
	plan_digest(r->exp, plan);
	r->cluster = xcalloc(1, sizeof(*r->cluster));
	r->cluster->c = cluster_new(r->loop, &r->exp->cluster, plan, r->exp->nsteps, decided, r);
	log_info("cluster %s: %s %s of %zu members, Redis at %s:%d", r->exp->cluster.id,
		 r->exp->cluster.role == CLUSTER_LEADER ? "leader" : "follower", r->exp->cluster.member,
		 r->exp->cluster.nmembers, r->exp->cluster.redis_host, r->exp->cluster.redis_port);
	return 0;
}

bool run_cluster_hold(struct run *r, uint32_t k)
{
	struct run_cluster *rc = r->cluster;
	if (!rc || rc->decided == k)
		return false;
	/* every participant is ready: no local deadline while the hosts meet
	 * (CLUSTER_TIMEOUT is the cluster's) */
	uv_timer_stop(&r->deadline_timer);
	if (rc->asked != k) {
		rc->asked = k;
		cluster_step_ready(rc->c, k);
	}
	return true;
}

int64_t run_cluster_instant(struct run *r, uint32_t k, int64_t local_at)
{
	struct run_cluster *rc = r->cluster;
	if (!rc || rc->decided != k)
		return local_at;
	json_object_put(rc->record);
	rc->record = rc->next;
	rc->next = NULL;
	rc->record_step = k;
	int64_t mono = clock_mono_ns(), real = clock_real_ns();
	rc->real_minus_mono = real - mono;
	/* against a plain roadblock leader: no instant, release at its all-go */
	return rc->at_real ? mono + (rc->at_real - real) : local_at;
}

void run_cluster_record(struct run *r, json_object *o)
{
	struct run_cluster *rc = r->cluster;
	if (!rc || !rc->record || rc->record_step != r->rec.step)
		return;
	json_object *c = json_object_get(rc->record), *starts = json_object_new_object();
	json_object_object_add(c, "realtime_minus_monotonic_ns",
			       json_object_new_int64(rc->real_minus_mono));
	for (size_t i = 0; i < r->n; i++)
		if (r->rec.started_ns[i])
			json_object_object_add(starts, r->p[i].node.name,
					       json_object_new_int64(r->rec.started_ns[i] +
								     rc->real_minus_mono));
	json_object_object_add(c, "started_realtime_ns", starts);
	json_object_object_add(o, "cluster", c);
}

void run_cluster_close(struct run *r)
{
	if (!r->cluster)
		return;
	/* ended before its last step: the others need not wait for us */
	if (r->status == RUN_ABORTED || r->status == RUN_INTERRUPTED)
		cluster_abort(r->cluster->c);
	cluster_close(r->cluster->c);
	r->cluster->c = NULL;
}

void run_cluster_free(struct run *r)
{
	if (!r->cluster)
		return;
	json_object_put(r->cluster->next);
	json_object_put(r->cluster->record);
	free(r->cluster);
	r->cluster = NULL;
}
