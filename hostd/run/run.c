// SPDX-License-Identifier: GPL-2.0-or-later
#include "run.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "config_files.h"
#include "fileio.h"
#include "log.h"
#include "progress_line.h"
#include "run_cluster.h"
#include "run_cluster_records.h"
#include "run_priv.h"
#include "xalloc.h"

static void release(struct run *r);
static void deadline_cb(uv_timer_t *t);
static void finish(struct run *r, enum run_status st, const char *reason);
static void arm_go_resend(struct run *r, int64_t due_ns);
static void record_flush(struct run *r, bool force);

static int64_t s_to_ns(double s)
{
	return (int64_t)llround(s * 1e9);
}

/* ---- progress -------------------------------------------------------- */

/* The barrier open is that of the step after the one running: who has
 * said ready for it is done with the step, the others still run it. */
static void progress(struct run *r)
{
	if (!r->finishing)
		run_status_publish(r);
	if (!r->opt->progress || r->finishing)
		return;
	size_t idx[4];
	const char *names[4];
	char variant[BENCH_VARIANT_MAX] = "", line[512];
	size_t waiting = barrier_waiting_for(r->barrier, idx, 4);
	struct progress_in in = {
		.now_ns = clock_mono_ns(),
		.started_ns = r->started_mono_ns,
		.first_release_ns = r->first_release_ns,
		.launched = r->launch_done,
		.step = barrier_step(r->barrier) - 1,
		.nsteps = barrier_nsteps(r->barrier),
		.nready = barrier_in_run_count(r->barrier) - waiting,
		.waiting = names,
		.nwaiting_shown = waiting < 4 ? waiting : 4,
		.nwaiting = waiting,
	};
	for (size_t i = 0; i < in.nwaiting_shown; i++)
		names[i] = r->p[idx[i]].node.name;
	if (in.step >= 1 && in.step <= in.nsteps) {
		in.benchmark = r->exp->steps[in.step - 1].benchmark;
		in.iteration = r->exp->steps[in.step - 1].iteration;
		in.variant =
			plan_step_variant(r->exp->node_plan[0], in.step, variant, sizeof(variant));
	}
	progress_line(line, sizeof(line), &in);
	log_status(line); /* cleared by the next message (log.h) */
}

/* ---- deadlines -------------------------------------------------------- */

static void arm_deadline(struct run *r)
{
	/* while guests boot, their own deadlines apply (GUEST_BOOT_TIMEOUT) */
	if (r->finishing || !r->launch_done)
		return;
	int64_t d = barrier_deadline(r->barrier);
	if (d == INT64_MAX) {
		uv_timer_stop(&r->deadline_timer);
		return;
	}
	int64_t left = d - clock_mono_ns();
	uint64_t ms = left <= 0 ? 0 : (uint64_t)(left / 1000000 + 1);
	uv_timer_start(&r->deadline_timer, deadline_cb, ms, 0);
}

static void deadline_cb(uv_timer_t *t)
{
	struct run *r = t->data;
	if (r->finishing || !r->launch_done)
		return;
	if (clock_mono_ns() < barrier_deadline(r->barrier)) {
		arm_deadline(r); /* woke a little early */
		return;
	}
	uint32_t k = barrier_step(r->barrier), n = barrier_nsteps(r->barrier);
	size_t *late = xcalloc(r->n, sizeof(*late));
	size_t nlate = barrier_waiting_for(r->barrier, late, r->n);
	bool anyone_ready = nlate < barrier_in_run_count(r->barrier);
	for (size_t i = 0; i < nlate && !r->finishing; i++) {
		struct participant *p = &r->p[late[i]];
		char paused[200];
		if (run_launch_paused_why(r, p, paused, sizeof(paused)))
			run_fail(r, p,
				 "%s: it did not reach the barrier of step %u within "
				 "BARRIER_TIMEOUT=%gs",
				 paused, k > n ? n : k, r->exp->barrier_timeout_s);
		else if (anyone_ready && k > n)
			run_fail(r, p,
				 "did not finish the last step within BARRIER_TIMEOUT=%gs of the "
				 "first participant that did",
				 r->exp->barrier_timeout_s);
		else if (anyone_ready)
			run_fail(r, p,
				 "did not reach the barrier of step %u within BARRIER_TIMEOUT=%gs of "
				 "the first participant that did",
				 k, r->exp->barrier_timeout_s);
		else if (k == 1)
			run_fail(r, p,
				 "did not say ready for the first step within BARRIER_TIMEOUT=%gs of "
				 "every agent being started",
				 r->exp->barrier_timeout_s);
		else
			run_fail(r, p, "step %u did not finish within STEP_TIMEOUT=%gs", k - 1,
				 r->exp->step_timeout_s);
	}
	free(late);
	arm_deadline(r);
}

/* ---- participants leaving -------------------------------------------- */

/* The step a participant is in, as failures and events name it: the one it
 * was released into until it is done, then the barrier it waits at. */
uint32_t run_part_step(struct run *r, const struct participant *p)
{
	uint32_t step = part_step_running(p->step) ? part_step_running(p->step)
						   : barrier_step(r->barrier);
	return step > barrier_nsteps(r->barrier) ? barrier_nsteps(r->barrier) : step;
}

void run_fail(struct run *r, struct participant *p, const char *fmt, ...)
{
	if (p->failed || r->finishing)
		return;
	char reason[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);

	uint32_t step = run_part_step(r, p);
	p->failed = true;
	log_error("%s: %s (step %u)", p->node.name, reason, step);
	run_add_failure(r, p, step, reason);
	if (part_step_running(p->step))
		run_bench_lost(r, p, part_step_running(p->step), reason);
	node_close(&p->node);
	run_launch_kill(p);
	run_launch_drop(r, p); /* a guest out of the run stops now */

	if (r->exp->on_failure == ON_FAILURE_ABORT) {
		char why[512];
		snprintf(why, sizeof(why), "%s failed and ON_GUEST_FAILURE=abort", p->node.name);
		finish(r, RUN_ABORTED, why);
		return;
	}
	enum barrier_verdict v = barrier_drop(r->barrier, p->node.index);
	go_watch_drop(r->go_watch, p->node.index);
	if (barrier_in_run_count(r->barrier) == 0) {
		finish(r, RUN_ABORTED, "no participant is left in the run");
		return;
	}
	run_manifest_write(r);
	record_flush(r, false);
	if (v == BARRIER_RELEASE)
		release(r);
	else
		progress(r);
}

/* ---- the coordinator ------------------------------------------------- */

/* The smallest lead a scheduled go may have: the writes and wake-ups on the
 * host, or a few of the slowest recent round trips to a guest. */
static int64_t lead_floor(const struct run *r)
{
	int64_t lead =
		RUN_LEAD_BASE_NS + (int64_t)barrier_in_run_count(r->barrier) * RUN_LEAD_PER_NODE_NS;
	for (size_t i = 0; i < r->n; i++) {
		const struct participant *p = &r->p[i];
		int64_t rtts = part_clock_max_delay_ns(p->clock) * RUN_LEAD_RTTS;
		if (barrier_in_run(r->barrier, i) && rtts > lead)
			lead = rtts;
	}
	return lead < RUN_LEAD_MAX_NS ? lead : RUN_LEAD_MAX_NS;
}

/* How far ahead a scheduled go goes out: RELEASE_LEAD, or learnt: a
 * barrier where a go arrived after its instant grows it by that lateness and
 * a margin; barriers where none did let it shrink back slowly to the floor. */
static int64_t release_lead(struct run *r)
{
	if (r->exp->release_lead_s > 0)
		return s_to_ns(r->exp->release_lead_s);
	int64_t floor = lead_floor(r);
	if (r->lead_ns < floor)
		r->lead_ns = floor;
	return r->lead_ns;
}

/* The pending barrier record written when complete (or forced): a
 * scheduled release's lateness in it teaches the lead of the next. */
static void record_flush(struct run *r, bool force)
{
	struct record_lateness late;
	if (run_record_flush(r, force, &late) && late.scheduled)
		r->lead_ns = release_lead_learn(r->lead_ns, late.max_late_ns, late.need_ns);
}

/* The common instant of a scheduled release on the host's clock, or 0 to
 * release immediately (asked for, or a clock not known well enough). */
static int64_t scheduled_instant(struct run *r)
{
	if (r->exp->release != RELEASE_SCHEDULED)
		return 0;
	for (size_t i = 0; i < r->n; i++) {
		const struct participant *p = &r->p[i];
		if (!barrier_in_run(r->barrier, i))
			continue;
		/* a tick-based clock wakes the sleep up to a tick late, and
		 * stamps in ticks: immediate is better (on_hello said so) */
		if (clock_source_fitness(p->clocksource) == CLOCK_SOURCE_COARSE)
			return 0;
		if (part_clock_shared(p->clock))
			continue;
		const struct clock_offset *c = part_clock_offset(p->clock);
		bool ready = part_clock_ready(p->clock);
		if (!ready || c->samples == 0 || c->bound_ns > RUN_CLOCK_BOUND_MAX_NS) {
			if (!r->warned_immediate) {
				log_warn("%s: its clock offset is %s: releasing immediately instead "
					 "of at a common instant",
					 p->node.name,
					 ready && c->samples ? "too uncertain" : "unknown");
				r->warned_immediate = true;
			}
			return 0;
		}
	}
	return clock_mono_ns() + release_lead(r);
}

/* One go for everybody, encoded once. */
/* A go that could not even be queued is never silent: the channel is
 * closing (its end of file names the node) or full (node.c fails it). */
static void go_sent(struct run *r, struct participant *p, uint32_t k, int rc)
{
	node_reply_sent(&p->node, NODE_REPLY_GO);
	if (rc < 0 && rc != -ENOBUFS) {
		char what[128];
		snprintf(what, sizeof(what), "the go of step %u could not be written: %s", k,
			 strerror(-rc));
		run_add_event(r, p, k, what);
	}
}

static void send_go_all(struct run *r, uint32_t k)
{
	struct proto_msg go = { .type = PROTO_GO, .version = PROTO_VERSION };
	go.u.go.step = k;
	r->go_buf.len = 0;
	proto_encode(&go, &r->go_buf);
	for (size_t i = 0; i < r->n; i++)
		if (barrier_in_run(r->barrier, i))
			go_sent(r, &r->p[i], k,
				node_send_bytes(&r->p[i].node, r->go_buf.data, r->go_buf.len));
}

/* Each go carries the instant on its agent's own clock. */
static void send_go_scheduled(struct run *r, uint32_t k, int64_t at)
{
	struct proto_msg go = { .type = PROTO_GO, .version = PROTO_VERSION };
	go.u.go.step = k;
	for (size_t i = 0; i < r->n; i++) {
		struct participant *p = &r->p[i];
		if (!barrier_in_run(r->barrier, i))
			continue;
		go.u.go.at_ns = part_clock_to_guest(p->clock, at);
		go_sent(r, p, k, node_send(&p->node, &go));
	}
}

/* Every step released: complete only when nothing failed.  A failure
 * record is a step that gave no numbers, so a run with one is degraded
 * (exit 2) even when every participant stayed. */
static void run_finish_status(struct run *r)
{
	char why[128];
	bool lost = r->failures && json_object_array_length(r->failures);
	if (!lost && !r->step_failures) {
		finish(r, RUN_COMPLETE, NULL);
		return;
	}
	snprintf(why, sizeof(why),
		 "%s%s%llu failed benchmark step%s (failure records in samples.ndjson)",
		 lost ? "a participant failed" : "", lost ? "; " : "",
		 (unsigned long long)r->step_failures, r->step_failures == 1 ? "" : "s");
	finish(r, RUN_DEGRADED, why);
}

/* The go of a step already released, to one participant again. */
static void send_go_again(struct run *r, struct participant *p, uint32_t step)
{
	struct proto_msg go = { .type = PROTO_GO, .version = PROTO_VERSION };
	go.u.go.step = step;
	/* the same instant as everybody's; if it passed, the agent starts at
	 * once and reports how late */
	if (r->rec.step == step && r->rec.release_at_ns)
		go.u.go.at_ns = part_clock_to_guest(p->clock, r->rec.release_at_ns);
	go_sent(r, p, step, node_send(&p->node, &go));
}

/* ---- a go that got no started: sent again (go_watch.h) ----------------- */

static void go_resend_cb(uv_timer_t *t)
{
	struct run *r = t->data;
	uint32_t k = barrier_step(r->barrier) - 1;
	if (r->finishing)
		return;
	/* libuv runs timers before it polls: a started already waiting in a
	 * socket (a loaded host that ran hostd late) is read first. */
	if (!r->go_confirm) {
		r->go_confirm = true;
		uv_timer_start(&r->go_timer, go_resend_cb, 1, 0);
		return;
	}
	r->go_confirm = false;
	int64_t now = clock_mono_ns();
	int64_t bound = go_watch_bound_ns(r->go_watch);
	unsigned round = go_watch_round(r->go_watch);
	for (size_t i = 0; i < r->n; i++) {
		struct participant *p = &r->p[i];
		if (!go_watch_overdue(r->go_watch, i, now) || !barrier_in_run(r->barrier, i) ||
		    p->failed || !p->node.open || part_step_running(p->step) != k ||
		    part_step_has_started(p->step) || node_reply_unwritten(&p->node, NODE_REPLY_GO))
			continue; /* a go still queued cannot have been lost */
		char what[160];
		snprintf(what, sizeof(what),
			 "no started %.1f ms after the go of step %u; "
			 "go sent again (%u of %d)",
			 (double)bound / 1e6, k, round + 1, GO_WATCH_RESENDS_MAX);
		log_warn("%s: %s", p->node.name, what);
		run_add_event(r, p, k, what);
		go_watch_resent(r->go_watch, i, clock_mono_ns());
		send_go_again(r, p, k);
	}
	arm_go_resend(r, go_watch_looked(r->go_watch, now));
}

void run_on_started(struct run *r, struct participant *p, int64_t host_ns, int64_t late_ns)
{
	run_record_started(r, p, host_ns, late_ns);
	record_flush(r, false);
	if (go_watch_started(r->go_watch, p->node.index, host_ns, p->node.rx_ns) != GO_WATCH_AFTER_RESEND)
		return; /* in time, or started before the re-send and heard late */
	char what[160];
	/* the first go was lost, unless the agent says it got it twice (an
	 * agent error go-again: it was not scheduled in time) */
	snprintf(what, sizeof(what), "started step %u only after its go was sent again",
		 part_step_released(p->step));
	log_warn("%s: %s", p->node.name, what);
	run_add_event(r, p, part_step_released(p->step), what);
}

static void arm_go_resend(struct run *r, int64_t due_ns)
{
	if (!due_ns) {
		uv_timer_stop(&r->go_timer);
		return;
	}
	int64_t now = clock_mono_ns();
	uint64_t ms = due_ns > now ? (uint64_t)((due_ns - now) / 1000000 + 1) : 0;
	uv_timer_start(&r->go_timer, go_resend_cb, ms, 0);
}

/* Adaptive iterations: at the first step of a round, the rounds before it
 * are judged; true when the run ends there (as complete as a run that ran
 * every step of its plan). */
static bool auto_stop(struct run *r, uint32_t k)
{
	uint32_t rounds = run_auto_rounds(r->autoit);
	bool *in_run = xcalloc(r->n, sizeof(*in_run));
	for (size_t i = 0; i < r->n; i++)
		in_run[i] = barrier_in_run(r->barrier, i) && !r->p[i].failed;
	bool stop = run_auto_stop_before(r->autoit, k, in_run);
	free(in_run);
	if (run_auto_rounds(r->autoit) == rounds)
		return false; /* not a round's end */
	if (!stop) {
		log_info("adaptive iterations: %s: one more round", run_auto_summary(r->autoit));
		return false;
	}
	log_info("adaptive iterations: %s: the run ends after step %u of %u",
		 run_auto_summary(r->autoit), k - 1, barrier_nsteps(r->barrier));
	r->last_step = k - 1;
	run_finish_status(r);
	return true;
}

static void release(struct run *r)
{
	uint32_t k = barrier_step(r->barrier), n = barrier_nsteps(r->barrier);
	if (k > n) {
		barrier_released(r->barrier, clock_mono_ns());
		if (r->autoit)
			auto_stop(r, k); /* the last round is judged too, for the manifest */
		if (!r->finishing)
			run_finish_status(r);
		return;
	}
	if (r->autoit && auto_stop(r, k))
		return;
	if (run_cluster_hold(r, k)) /* the other hosts first */
		return;
	/* The previous step's record is complete by now unless someone never
	 * said started: write it with the gap rather than hold it. */
	record_flush(r, true);
	run_record_reset(r, k);
	for (size_t i = 0; i < r->n; i++)
		r->rec.ready_ns[i] = barrier_in_run(r->barrier, i) ? barrier_ready_ns(r->barrier, i)
								   : 0;
	r->rec.last_ready_ns = barrier_last_ready_ns(r->barrier);

	for (size_t i = 0; i < r->n; i++) {
		if (!barrier_in_run(r->barrier, i))
			continue;
		struct participant *p = &r->p[i];
		part_step_release(p->step, k);
		/* a pong now would come back after the agent's sleep until the
		 * instant, and measure that: forget the ping in flight */
		part_clock_forget_ping(p->clock);
	}
	int64_t at = run_cluster_instant(r, k, scheduled_instant(r));
	r->rec.release_at_ns = at;
	/* Only writes between the two stamps: this is the release. */
	bool boosted = rtprio_boost(&r->rtprio);
	if (boosted)
		r->rtprio_held = r->rtprio.priority;
	int64_t first = clock_mono_ns();
	if (at == 0)
		send_go_all(r, k);
	else
		send_go_scheduled(r, k, at);
	int64_t last = clock_mono_ns();
	if (boosted)
		rtprio_restore(&r->rtprio);
	if (r->rtprio.denied && !r->warned_rtprio) {
		/* after the release, not between its stamps */
		r->warned_rtprio = true;
		log_warn("RELEASE_RT_PRIORITY=%d: the kernel refused SCHED_FIFO (hostd needs "
			 "CAP_SYS_NICE or root): barriers are released without it; the manifest "
			 "says release_rt_priority_held %d",
			 r->rtprio.priority, r->rtprio_held);
	}
	monitor_ext_step_start(r->ext, k);
	host_proc_step_start(r->hproc, k);
	r->rec.go_first_ns = first;
	r->rec.go_last_ns = last;
	barrier_released(r->barrier, last);
	if (k == 1)
		r->first_release_ns = last;
	arm_deadline(r);
	r->go_confirm = false;
	/* watched from the step's instant, or from the last go's send */
	go_watch_release(r->go_watch, k, at > last ? at : last);
	for (size_t i = 0; i < r->n; i++)
		if (barrier_in_run(r->barrier, i))
			go_watch_expect(r->go_watch, i);
	arm_go_resend(r, go_watch_due_ns(r->go_watch));
	if (!r->opt->progress)
		log_info("step %u/%u %s #%u released to %zu participants", k, n,
			 r->exp->steps[k - 1].benchmark, r->exp->steps[k - 1].iteration,
			 barrier_in_run_count(r->barrier));
	progress(r);
}

void run_cluster_decided(struct run *r, const char *why)
{
	if (why)
		finish(r, RUN_ABORTED, why);
	else if (!r->finishing)
		release(r);
}

void run_on_ready(struct run *r, struct participant *p, uint32_t step)
{
	switch (barrier_ready(r->barrier, p->node.index, step, p->node.rx_ns)) {
	case BARRIER_RELEASE: release(r); return;
	case BARRIER_RESEND_GO:
		/* Its go was lost in a resync; the step is still its own.  Not
		 * while the last go is unwritten: it cannot have lost that one. */
		if (node_reply_unwritten(&p->node, NODE_REPLY_GO)) {
			run_fail(r, p,
				 "flooded its channel: ready for step %u again before it "
				 "read its go",
				 step);
			return;
		}
		send_go_again(r, p, step);
		return;
	case BARRIER_INVALID:
		/* A ready for a step long released changes nothing: messages
		 * are state, and a stale one is ignored, as a stale go is by
		 * the agent.  A ready ahead of the barrier is a lie. */
		if (step && step < barrier_step(r->barrier) && !p->failed) {
			char what[96];
			snprintf(what, sizeof(what),
				 "a ready for step %u, released already, ignored", step);
			run_add_event(r, p, run_part_step(r, p), what);
			return;
		}
		run_fail(r, p, "said ready for step %u while the barrier of step %u is open", step,
			 barrier_step(r->barrier));
		return;
	case BARRIER_WAIT:
		/* waiting for the others: a good moment to refresh its clock,
		 * between steps and never during one */
		if (part_clock_refresh_due(p->clock))
			run_send_ping(r, p);
		arm_deadline(r);
		progress(r);
		return;
	case BARRIER_DUPLICATE: return;
	}
}

/* ---- start and finish -------------------------------------------------- */

static void close_handle(uv_handle_t *h)
{
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

void run_gone_check(struct run *r)
{
	if (r->finishing && run_launch_gone(r)) {
		close_handle((uv_handle_t *)&r->grace_timer);
		run_launch_release(r);
	}
}

static uint32_t step_of(void *guest)
{
	const struct participant *p = guest;
	return part_step_running(p->step);
}

/* libvirt's per-vCPU times of the guests, sampled by hostd itself. */
static void start_host_monitor(struct run *r)
{
	if (!r->exp->host_mon.interval_ms || !run_launch_uses_libvirt(r))
		return;
	r->hmon = host_monitor_new(r->loop, r->mon, r->exp->host_mon.interval_ms, step_of);
	for (size_t i = 0; i < r->n; i++) {
		struct participant *p = &r->p[i];
		if (!p->failed && run_launch_domain(p))
			host_monitor_add(r->hmon, p->node.name, run_launch_domain(p), p);
	}
	host_monitor_start(r->hmon);
}

static void host_proc_step_done(void *ctx, uint32_t step)
{
	struct run *r = ctx;
	const struct proto_step *st = &r->exp->steps[step - 1];
	r->samples_written +=
		monitor_store_step_done(r->mon, "host", step, st->benchmark, st->iteration);
}

/* The host's own /proc, sampled by hostd when no agent of its own does. */
static void start_host_proc(struct run *r)
{
	if (!r->exp->host_mon.interval_ms || r->exp->host_runs_benchmarks)
		return;
	r->hproc = host_proc_new(r->loop, r->mon, "host", "", r->exp->host_mon.interval_ms,
				 host_proc_step_done, r);
	host_proc_start(r->hproc);
}

void run_launched(struct run *r)
{
	r->launch_done = true;
	start_host_monitor(r);
	start_host_proc(r);
	/* the first barrier counts from here, not from the first boot */
	barrier_restart_clock(r->barrier, clock_mono_ns());
	arm_deadline(r);
	progress(r);
}

static void grace_cb(uv_timer_t *t)
{
	struct run *r = t->data;
	for (size_t i = 0; i < r->n; i++)
		if (run_launch_agent_running(&r->p[i]))
			log_warn("%s: agent still running %d ms after bye; killing it",
				 r->p[i].node.name, RUN_BYE_GRACE_MS);
	run_launch_kill_all(r);
	/* guests may still be shutting down: they have deadlines of their own */
	if (run_launch_gone(r))
		run_gone_check(r);
	else
		uv_timer_start(t, grace_cb, 1000, 0);
}

static void finish(struct run *r, enum run_status st, const char *reason)
{
	if (r->finishing)
		return;
	r->finishing = true;
	r->status = st;
	snprintf(r->reason, sizeof(r->reason), "%s", reason ? reason : "");
	log_status(NULL);
	run_agents_finish(r);
	record_flush(r, true);

	struct proto_msg bye = { .type = PROTO_BYE, .version = PROTO_VERSION };
	snprintf(bye.u.bye.reason, sizeof(bye.u.bye.reason), "run %s", run_status_name(st));
	for (size_t i = 0; i < r->n; i++)
		if (r->p[i].node.open)
			node_send(&r->p[i].node, &bye);
	run_manifest_write(r);
	host_monitor_close(r->hmon, NULL, NULL);
	r->hmon = NULL;
	host_proc_close(r->hproc, NULL, NULL);
	r->hproc = NULL;
	monitor_ext_close(r->ext, NULL, NULL);
	r->ext = NULL;
	run_launch_stop_all(r);
	run_cluster_close(r);
	run_crec_close(r);

	uv_timer_stop(&r->deadline_timer);
	close_handle((uv_handle_t *)&r->deadline_timer);
	uv_timer_stop(&r->run_timer);
	close_handle((uv_handle_t *)&r->run_timer);
	uv_timer_stop(&r->go_timer);
	close_handle((uv_handle_t *)&r->go_timer);
	close_handle((uv_handle_t *)&r->sigint);
	close_handle((uv_handle_t *)&r->sigterm);
	uv_timer_start(&r->grace_timer, grace_cb, RUN_BYE_GRACE_MS, 0);
	run_gone_check(r);
}

static void signal_cb(uv_signal_t *s, int signum)
{
	struct run *r = s->data;
	char why[64];
	snprintf(why, sizeof(why), "interrupted by %s", signum == SIGINT ? "SIGINT" : "SIGTERM");
	/* on its own line, not after the terminal's ^C on the progress line */
	if (r->opt->progress)
		fputc('\n', stderr);
	log_warn("%s: stopping the agents and closing the run", why);
	finish(r, RUN_INTERRUPTED, why);
}

/* RUN_TIMEOUT: the run ends as aborted, its results so far kept. */
static void run_timeout_cb(uv_timer_t *t)
{
	struct run *r = t->data;
	char why[128];
	snprintf(why, sizeof(why), "RUN_TIMEOUT=%g s in %s reached", r->exp->run_timeout_s,
		 r->opt->host_config);
	log_error("%s: stopping the agents and closing the run", why);
	finish(r, RUN_ABORTED, why);
}

static void default_run_name(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(buf, len, "%Y%m%d-%H%M%S", &tm);
}

static void ext_report(void *ctx, const char *monitor, uint32_t step, const char *what)
{
	struct run *r = ctx;
	char text[400];
	snprintf(text, sizeof(text), "monitor %s: %s", monitor, what);
	log_warn("host: %s (step %u)", text, step);
	run_add_event(r, NULL, step, text);
}

/* MONITORS on the host, started and stopped at every step's edges; their
 * output goes to nodes/host/monitors/. */
static int start_external_monitors(struct run *r)
{
	struct proto_msg guest_set[PROTO_MONITORS_MAX];
	unsigned skipped = 0;
	if (r->exp->guest_mon.external)
		monitor_ext_guest_set(&r->exp->guest_mon, guest_set, &skipped);
	if (skipped)
		log_warn("g.conf: MONITORS: trace-cmd runs on the host only (its data file would "
			 "stay in the guests); set it in h.conf");
	if (!r->exp->host_mon.external)
		return 0;
	char *dir = NULL;
	int err = results_node_dir(r->results, "host", &dir);
	char *mdir = dir ? xasprintf("%s/monitors", dir) : NULL;
	int mfd = -1;
	if (err == 0)
		err = results_monitor_dir(r->results, "host");
	/* under the service the monitors run as the submitter and write their
	 * data there: they may (group, sticky), and hostd opens nothing in it
	 * but new files (O_EXCL) and files of its own (results.c) */
	if (err == 0 && r->opt->runas)
		err = results_share_dir(r->results, "nodes/host/monitors", r->opt->runas->gid);
	if (err == 0 && (mfd = results_open_file(r->results, "nodes/host/monitors",
						 O_RDONLY | O_DIRECTORY, 0)) < 0)
		err = mfd;
	if (err == 0) {
		r->ext = monitor_ext_new(r->loop, &r->exp->host_mon, mdir, ext_report, r);
		monitor_ext_run_as(r->ext, r->opt->runas, mfd);
	} else {
		log_error("cannot create the host's monitor folder: %s", strerror(-err));
	}
	free(dir);
	free(mdir);
	return err;
}

/* The config's text as read for the run (under the service: as sent). */
static int save_config(struct run *r, const char *path, const char *as)
{
	char *text;
	size_t len;
	int err = config_files_read(path, &text, &len);
	if (err == 0) {
		err = results_save_config(r->results, text, len, as);
		free(text);
	}
	return err;
}

/* The participants, in order: the guests, then the host when it takes part. */
static void make_participants(struct run *r)
{
	const struct experiment *e = r->exp;
	r->n = e->guest_count + (e->host_runs_benchmarks ? 1 : 0);
	r->p = xcalloc(r->n, sizeof(*r->p));
	for (size_t i = 0; i < r->n; i++) {
		struct participant *p = &r->p[i];
		char buf[PROTO_NAME_MAX];
		const char *name = "host";
		if (e->host_runs_benchmarks && i == r->n - 1)
			p->kind = PART_HOST;
		else if (e->guest_kind == GUEST_KIND_LIBVIRT)
			p->kind = PART_LIBVIRT;
		else
			p->kind = PART_LOCAL;
		if (p->kind != PART_HOST)
			name = experiment_guest_name(e, (unsigned)i, buf, sizeof(buf));
		node_init(&p->node, name, i, p, &run_participant_ops);
		p->run = r;
		p->guest_index = i;
		p->step = part_step_new();
		p->clock = part_clock_new(p->kind == PART_HOST ||
					  (p->kind == PART_LOCAL && !e->local_clock_offset_ns &&
					   !e->local_clock_drift_ppm && !e->local_clock_jitter_ns));
	}
	run_launch_init(r);
}

static int setup(struct run *r)
{
	const struct experiment *e = r->exp;
	int err;

	if (r->opt->run_name)
		snprintf(r->name, sizeof(r->name), "%s", r->opt->run_name);
	else
		default_run_name(r->name, sizeof(r->name));
	make_participants(r);
	/* what can fail before a guest starts fails before the run folder */
	if ((err = run_launch_preflight(r)) < 0)
		return err;
	err = results_open_as(r->opt->results_dir, r->name,
			      r->opt->runas ? r->opt->runas->gid : (gid_t)-1, &r->results);
	if (err < 0) {
		log_error("cannot create the results folder %s/%s: %s%s", r->opt->results_dir, r->name,
			  strerror(-err), err == -EEXIST ? " (choose another --run-name)" : "");
		return err;
	}
	if ((err = save_config(r, r->opt->host_config, "h.conf")) < 0 ||
	    (err = save_config(r, r->opt->guest_config, "g.conf")) < 0) {
		log_error("cannot copy the configs into %s/config: %s", results_path(r->results),
			  strerror(-err));
		return err;
	}
	sysfacts_read(&r->facts, "/");
	clock_format_utc(clock_real_ns(), r->started_utc, sizeof(r->started_utc));
	r->started_mono_ns = clock_mono_ns();
	r->failures = json_object_new_array();
	r->events = json_object_new_array();

	for (size_t i = 0; i < r->n; i++) {
		const char *name = r->p[i].node.name;
		if ((err = results_node_dir(r->results, name, NULL)) < 0) {
			log_error("cannot create %s/nodes/%s: %s", results_path(r->results), name,
				  strerror(-err));
			return err;
		}
	}
	r->mon = monitor_store_new(r->results);
	if ((err = start_external_monitors(r)) < 0)
		return err;
	/* last: from here the host is changed until teardown puts it back */
	err = hoststate_apply(r->opt->state_dir, r->opt->sysfs_root, &e->hoststate, &r->hoststate);
	if (err < 0) {
		log_error("cannot set the host state (CPUFREQ_*) : %s; nothing was changed",
			  strerror(-err));
		return err;
	}
	if (r->hoststate)
		log_info("host state set on %u knobs; saved in %s to be put back",
			 hoststate_count(r->hoststate), r->opt->state_dir);
	run_record_init(r);
	r->rtprio.priority = e->release_rt_priority;
	r->barrier = barrier_new(r->n, e->nsteps, s_to_ns(e->barrier_timeout_s),
				 s_to_ns(e->step_timeout_s), clock_mono_ns());
	r->go_watch = go_watch_new(r->n);
	r->last_step = e->nsteps;
	if (e->plans[0].auto_iter) {
		bool *is_host = xcalloc(r->n ? r->n : 1, sizeof(*is_host));
		for (size_t i = 0; i < r->n; i++)
			is_host[i] = r->p[i].kind == PART_HOST;
		r->autoit = run_auto_new(&e->plans[0].auto_rule, e->nsteps / e->iterations, r->n,
					 is_host);
		free(is_host);
	}
	run_manifest_write(r);
	return 0;
}

/* Returns the first error the results writer met; discard: the run folder
 * goes too (nothing ran). */
static int teardown(struct run *r, bool discard)
{
	int e = monitor_store_close(r->mon);
	if (e < 0)
		log_error("cannot write the monitor samples: %s", strerror(-e));
	e = hoststate_restore(r->hoststate);
	if (e < 0)
		log_error("cannot put the host state back: %s; it stays saved in %s for the next "
			  "start",
			  strerror(-e), r->opt->state_dir);
	r->hoststate = NULL;
	run_launch_fini(r);
	for (size_t i = 0; i < r->n; i++) {
		node_fini(&r->p[i].node);
		part_step_free(r->p[i].step);
		part_clock_free(r->p[i].clock);
	}
	free(r->p);
	run_record_fini(r);
	barrier_free(r->barrier);
	go_watch_free(r->go_watch);
	run_auto_free(r->autoit);
	run_cluster_free(r);
	run_crec_free(r);
	json_object_put(r->failures);
	json_object_put(r->events);
	proto_buf_free(&r->go_buf);
	if (!discard)
		return results_close(r->results);
	char *where = r->results ? xstrdup(results_path(r->results)) : NULL;
	e = results_discard(r->results);
	if (e < 0)
		log_error("cannot remove the run folder %s: %s", where, strerror(-e));
	else if (where)
		log_info("nothing ran: the run folder %s was removed", where);
	free(where);
	return 0;
}

int run_experiment(const struct experiment *exp, const struct run_options *opt)
{
	struct run r = { .exp = exp, .opt = opt, .status = RUN_RUNNING };
	r.loop = uv_default_loop();
	if (setup(&r) < 0) {
		/* nothing started: a usage or config error, no folder left */
		teardown(&r, true);
		return RUN_EXIT_USAGE;
	}
	log_info("run %s: %zu participants, %u steps, results in %s", r.name, r.n, exp->nsteps,
		 results_path(r.results));

	uv_timer_init(r.loop, &r.deadline_timer);
	uv_timer_init(r.loop, &r.grace_timer);
	uv_timer_init(r.loop, &r.go_timer);
	r.deadline_timer.data = r.grace_timer.data = r.go_timer.data = &r;
	uv_signal_init(r.loop, &r.sigint);
	uv_signal_init(r.loop, &r.sigterm);
	r.sigint.data = r.sigterm.data = &r;
	uv_signal_start(&r.sigint, signal_cb, SIGINT);
	uv_signal_start(&r.sigterm, signal_cb, SIGTERM);
	uv_timer_init(r.loop, &r.run_timer);
	r.run_timer.data = &r;
	if (exp->run_timeout_s > 0)
		uv_timer_start(&r.run_timer, run_timeout_cb, (uint64_t)(exp->run_timeout_s * 1000), 0);
	/* a vanished peer must show up as EPIPE on write, not kill us */
	signal(SIGPIPE, SIG_IGN);
	arm_deadline(&r);
	if (run_cluster_start(&r) < 0)
		finish(&r, RUN_ABORTED, "Redis (CLUSTER_REDIS) could not be used");
	else if (run_crec_start(&r), run_launch_all(&r) < 0)
		finish(&r, RUN_ABORTED, "the guests could not be started");
	progress(&r);
	uv_run(r.loop, UV_RUN_DEFAULT);

	log_status(NULL);
	if (!r.first_release_ns) {
		/* ended before its first step: no results to keep, and the name
		 * free for the next try; exit 1 unless a signal ended it */
		log_error("run %s %s before its first step%s%s", r.name, run_status_name(r.status),
			  r.reason[0] ? ": " : "", r.reason);
		teardown(&r, true);
		uv_loop_close(r.loop);
		return r.status == RUN_INTERRUPTED ? RUN_EXIT_FAILED : RUN_EXIT_USAGE;
	}
	int code = r.status == RUN_COMPLETE ? RUN_EXIT_COMPLETE : RUN_EXIT_FAILED;
	char *where = xstrdup(results_path(r.results));
	const char *what;
	results_flush(r.results);
	int werr = results_error(r.results, &what);
	if (werr) {
		log_error("cannot write %s/%s: %s: results are incomplete", where, what,
			  strerror(-werr));
		code = RUN_EXIT_FAILED;
	}
	log_info("run %s %s%s%s: %" PRIu64 " samples in %s", r.name, run_status_name(r.status),
		 r.reason[0] ? ": " : "", r.reason, r.samples_written, where);
	char took[32];
	progress_duration(took, sizeof(took), clock_mono_ns() - r.started_mono_ns);
	log_info("took %s; %" PRIu64 " failed step%s, %zu participant failure%s; next: "
		 "hostctl compare --results %s BASELINE %s",
		 took, r.step_failures, r.step_failures == 1 ? "" : "s",
		 r.failures ? json_object_array_length(r.failures) : 0,
		 r.failures && json_object_array_length(r.failures) == 1 ? "" : "s",
		 r.opt->results_dir, r.name);
	struct go_watch_counts gc = go_watch_counts(r.go_watch);
	if (gc.resent)
		log_warn("%" PRIu64 " go%s sent again (no started within the bound): %" PRIu64
			 " answered go-again (the first got there), %" PRIu64 " lost (manifest: gos)",
			 gc.resent, gc.resent == 1 ? "" : "s", gc.again, gc.lost);
	free(where);
	teardown(&r, false);
	uv_loop_close(r.loop);
	return code;
}
