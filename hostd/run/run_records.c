// SPDX-License-Identifier: GPL-2.0-or-later
/* What a run writes as it goes: one samples.ndjson line per result, one
 * barriers.ndjson line per released step. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "run_cluster.h"
#include "run_cluster_records.h"
#include "run_priv.h"
#include "xalloc.h"

static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t s;
	return __builtin_add_overflow(a, b, &s) ? (b > 0 ? INT64_MAX : INT64_MIN) : s;
}

void run_record_init(struct run *r)
{
	struct step_record *rec = &r->rec;
	rec->ready_ns = xcalloc(r->n, sizeof(int64_t));
	rec->started_ns = xcalloc(r->n, sizeof(int64_t));
	rec->late_ns = xcalloc(r->n, sizeof(int64_t));
	rec->timing = xcalloc(r->n, sizeof(*rec->timing));
	rec->flags = xcalloc(r->n, sizeof(*rec->flags));
	rec->claimed_ns = xcalloc(r->n, sizeof(int64_t));
	rec->timing_warned = xcalloc(r->n, sizeof(bool));
}

void run_record_fini(struct run *r)
{
	struct step_record *rec = &r->rec;
	free(rec->ready_ns);
	free(rec->started_ns);
	free(rec->late_ns);
	free(rec->timing);
	free(rec->flags);
	free(rec->claimed_ns);
	free(rec->timing_warned);
}

bool run_record_flagged(const struct run *r, const struct participant *p, unsigned flag)
{
	return r->rec.flags && (r->rec.flags[p->node.index] & flag);
}

void run_record_reset(struct run *r, uint32_t step)
{
	struct step_record *rec = &r->rec;
	rec->step = step;
	rec->release_at_ns = 0;
	rec->go_first_ns = rec->go_last_ns = rec->last_ready_ns = 0;
	memset(rec->ready_ns, 0, r->n * sizeof(int64_t));
	memset(rec->started_ns, 0, r->n * sizeof(int64_t));
	memset(rec->late_ns, 0, r->n * sizeof(int64_t));
	memset(rec->timing, 0, r->n * sizeof(*rec->timing));
	/* a jump seen while waiting at this barrier belongs to this step */
	for (size_t i = 0; i < r->n; i++) {
		rec->flags[i] = part_clock_take_jump(r->p[i].clock) ? RUN_FLAG_OFFSET_JUMP : 0;
		rec->claimed_ns[i] = 0;
	}
}

void run_record_started(struct run *r, struct participant *p, int64_t host_ns, int64_t late_ns)
{
	uint32_t k = part_step_released(p->step);
	if (r->rec.step != k)
		return;
	/* It started after the go left and before we heard so: anything else
	 * is a clock that lies (or an offset that is wrong), not a skew. */
	int64_t bound = part_clock_bound_at(p->clock, p->node.rx_ns);
	int64_t lo = sat_add(r->rec.go_first_ns, -bound), hi = sat_add(p->node.rx_ns, bound);
	/* late after a scheduled instant: no later than the receipt allows
	 * (its lateness feeds the lead of every release after) */
	int64_t late_max = r->rec.release_at_ns ? sat_add(hi, -r->rec.release_at_ns) : INT64_MAX;
	if (host_ns < lo || host_ns > hi || (late_ns > 0 && late_ns > late_max)) {
		char what[300];
		r->rec.flags[p->node.index] |= RUN_FLAG_START_IMPLAUSIBLE;
		r->rec.claimed_ns[p->node.index] = host_ns;
		snprintf(what, sizeof(what),
			 "its start stamp (%lld ns on the host's clock, %lld ns "
			 "late) is outside the go's send and the receipt of started (%lld..%lld ns, "
			 "its offset bound included): implausible, left out of the skew",
			 (long long)host_ns, (long long)late_ns, (long long)lo, (long long)hi);
		log_warn("%s: %s (step %u)", p->node.name, what, k);
		run_add_event(r, p, k, what);
	} else {
		r->rec.started_ns[p->node.index] = host_ns;
		r->rec.late_ns[p->node.index] = late_ns;
	}
}

void run_record_timing(struct run *r, struct participant *p, const struct start_timing *t)
{
	uint32_t k = part_step_released(p->step);
	if (r->rec.step != k)
		return;
	int64_t bound = part_clock_bound_at(p->clock, p->node.rx_ns);
	int e = start_timing_check(t, r->rec.go_first_ns, bound);
	if (e == -ERANGE && !r->rec.timing_warned[p->node.index]) {
		r->rec.timing_warned[p->node.index] = true;
		log_warn("%s: its start timing for step %u cannot be true (agent read the go at %lld, "
			 "its child at %lld, started at %lld, %lld ns queued; the go left at %lld, "
			 "clock bound %lld ns): left out of barriers.ndjson (said once)",
			 p->node.name, k, (long long)t->agent_go_ns, (long long)t->child_go_ns,
			 (long long)t->start_ns, (long long)t->runq_ns,
			 (long long)r->rec.go_first_ns, (long long)bound);
	}
	r->rec.timing[p->node.index] = e == 0 ? *t : (struct start_timing){ 0 };
}

/* {node: {agent_go_ns, child_go_ns, runq_ns}} for the nodes whose start
 * counts and whose agent said how it came about; NULL when none did. */
static json_object *timing_json(struct run *r)
{
	json_object *o = NULL;
	for (size_t i = 0; i < r->n; i++) {
		const struct start_timing *t = &r->rec.timing[i];
		if (!r->rec.ready_ns[i] || !r->rec.started_ns[i] || !t->start_ns)
			continue;
		json_object *n = json_object_new_object();
		json_object_object_add(n, "agent_go_ns", json_object_new_int64(t->agent_go_ns));
		json_object_object_add(n, "child_go_ns", json_object_new_int64(t->child_go_ns));
		json_object_object_add(n, "runq_ns", json_object_new_int64(t->runq_ns));
		if (!o)
			o = json_object_new_object();
		json_object_object_add(o, r->p[i].node.name, n);
	}
	return o;
}

/* {node: value} for the participants released into the step that have a
 * value. */
static json_object *node_map(struct run *r, const int64_t *values)
{
	json_object *o = json_object_new_object();
	for (size_t i = 0; i < r->n; i++)
		if (r->rec.ready_ns[i] && values[i])
			json_object_object_add(o, r->p[i].node.name, json_object_new_int64(values[i]));
	return o;
}

/* {node: ["start-implausible", "offset-jump"]} for the flagged nodes
 * released into the step; with claimed: {node: the implausible stamp}. */
static json_object *flags_json(struct run *r, bool claimed)
{
	json_object *o = json_object_new_object();
	for (size_t i = 0; i < r->n; i++) {
		const struct participant *p = &r->p[i];
		unsigned flags = r->rec.flags[i];
		if (!r->rec.ready_ns[i] || !flags)
			continue;
		if (claimed) {
			if (flags & RUN_FLAG_START_IMPLAUSIBLE)
				json_object_object_add(o, p->node.name,
						       json_object_new_int64(r->rec.claimed_ns[i]));
			continue;
		}
		json_object *a = json_object_new_array();
		if (flags & RUN_FLAG_START_IMPLAUSIBLE)
			json_object_array_add(a, json_object_new_string("start-implausible"));
		if (flags & RUN_FLAG_OFFSET_JUMP)
			json_object_array_add(a, json_object_new_string("offset-jump"));
		json_object_object_add(o, p->node.name, a);
	}
	return o;
}

bool run_record_flush(struct run *r, bool force, struct record_lateness *late)
{
	struct step_record *rec = &r->rec;
	*late = (struct record_lateness){ 0 };
	if (rec->step == 0)
		return false;

	int64_t first = INT64_MAX, last = INT64_MIN;
	size_t missing = 0, first_i = 0, last_i = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (!rec->ready_ns[i])
			continue;
		if (rec->started_ns[i]) {
			if (rec->started_ns[i] < first) {
				first = rec->started_ns[i];
				first_i = i;
			}
			if (rec->started_ns[i] > last) {
				last = rec->started_ns[i];
				last_i = i;
			}
		} else if (!r->p[i].failed && !(rec->flags[i] & RUN_FLAG_START_IMPLAUSIBLE)) {
			missing++;
		}
	}
	if (missing && !force)
		return false;

	const struct proto_step *s = &r->exp->steps[rec->step - 1];
	json_object *o = json_object_new_object();
	json_object_object_add(o, "step", json_object_new_int64(rec->step));
	json_object_object_add(o, "benchmark", json_object_new_string(s->benchmark));
	json_object_object_add(o, "iteration", json_object_new_int64(s->iteration));
	json_object_object_add(o, "clock", json_object_new_string("host-monotonic"));
	json_object_object_add(o, "release",
			       json_object_new_string(rec->release_at_ns ? "scheduled" : "immediate"));
	if (rec->release_at_ns)
		json_object_object_add(o, "release_at_ns", json_object_new_int64(rec->release_at_ns));
	json_object_object_add(o, "ready_ns", node_map(r, rec->ready_ns));
	json_object_object_add(o, "go_sent_ns", json_object_new_int64(rec->go_first_ns));
	json_object_object_add(o, "go_last_ns", json_object_new_int64(rec->go_last_ns));
	json_object_object_add(o, "release_latency_ns",
			       json_object_new_int64(rec->go_last_ns - rec->last_ready_ns));
	json_object_object_add(o, "started_ns", node_map(r, rec->started_ns));
	json_object_object_add(o, "late_ns", node_map(r, rec->late_ns));
	if (rec->release_at_ns) {
		int64_t max_late = 0, need = 0;
		for (size_t i = 0; i < r->n; i++) {
			if (rec->ready_ns[i] && rec->late_ns[i] > max_late)
				max_late = rec->late_ns[i];
			/* the start timing that made it into the record */
			if (rec->ready_ns[i] && rec->started_ns[i] && rec->timing[i].start_ns &&
			    rec->timing[i].child_go_ns - rec->go_first_ns > need)
				need = rec->timing[i].child_go_ns - rec->go_first_ns;
		}
		json_object_object_add(o, "lead_ns",
				       json_object_new_int64(rec->release_at_ns - rec->go_first_ns));
		*late = (struct record_lateness){ .scheduled = true,
						  .max_late_ns = max_late,
						  .need_ns = need };
	}
	json_object *offsets = json_object_new_object();
	for (size_t i = 0; i < r->n; i++) {
		const struct participant *p = &r->p[i];
		if (!rec->ready_ns[i])
			continue;
		json_object *c = json_object_new_object();
		const struct clock_offset *in_use = part_clock_offset(p->clock);
		json_object_object_add(c, "method",
				       json_object_new_string(part_clock_method(p->clock)));
		json_object_object_add(c, "offset_ns",
				       json_object_new_int64(
					       part_clock_shared(p->clock)
						       ? 0
						       : clock_offset_at(in_use, rec->go_first_ns)));
		json_object_object_add(c, "bound_ns", json_object_new_int64(in_use->bound_ns));
		json_object_object_add(offsets, p->node.name, c);
	}
	json_object_object_add(o, "clock_offsets", offsets);
	if (first <= last) {
		json_object_object_add(o, "skew_ns", json_object_new_int64(last - first));
		/* each end of the spread is only known to within its own bound */
		json_object_object_add(o, "skew_bound_ns",
				       json_object_new_int64(
					       part_clock_offset(r->p[first_i].clock)->bound_ns +
					       part_clock_offset(r->p[last_i].clock)->bound_ns));
	} else {
		json_object_object_add(o, "skew_ns", NULL);
		json_object_object_add(o, "skew_bound_ns", NULL);
	}
	json_object *gaps = json_object_new_array();
	for (size_t i = 0; i < r->n; i++)
		if (rec->ready_ns[i] && !rec->started_ns[i] &&
		    !(rec->flags[i] & RUN_FLAG_START_IMPLAUSIBLE))
			json_object_array_add(gaps, json_object_new_string(r->p[i].node.name));
	json_object_object_add(o, "not_started", gaps);
	run_cluster_record(r, o);
	/* gos sent again for the step (go_watch.h), {node: count}; the watch
	 * is still at this step: a forced write comes before the next release */
	json_object *resent = json_object_new_object();
	for (size_t i = 0; i < r->n; i++)
		if (rec->ready_ns[i] && go_watch_resends(r->go_watch, i))
			json_object_object_add(resent, r->p[i].node.name,
					       json_object_new_int64(go_watch_resends(r->go_watch, i)));
	json_object_object_add(o, "go_resent", resent);
	json_object_object_add(o, "flags", flags_json(r, false));
	json_object_object_add(o, "claimed_started_ns", flags_json(r, true));
	json_object *timing = timing_json(r);
	if (timing)
		json_object_object_add(o, "timing", timing);

	run_crec_barrier(r, o); /* the leader holds it for the other hosts' */
	json_object_put(o);
	rec->step = 0;
	return true;
}
