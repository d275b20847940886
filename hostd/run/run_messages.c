// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What a participant's agent says, and what hostd answers: hello, plan,
 * clock pings, ready, started, results, output, done, errors; and the
 * channel's own events (resync, refused lines, close, flood).  Every message
 * is checked against the step the participant was released into before it
 * touches a record.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "run_priv.h"
#include "xalloc.h"

/* g.conf's MONITORS, run by a guest's agent at each step (the host's own
 * run in hostd: monitor_ext); again after every hello, which the agent
 * takes as the same set. */
static int send_monitors(struct run *r, struct participant *p)
{
	struct proto_msg m[PROTO_MONITORS_MAX];
	unsigned skipped, n;
	int e = 0;
	if (p->kind == PART_HOST || !r->exp->guest_mon.external)
		return 0;
	n = monitor_ext_guest_set(&r->exp->guest_mon, m, &skipped);
	for (unsigned i = 0; i < n && e == 0; i++)
		e = node_send(&p->node, &m[i]);
	return e;
}

static void send_plan(struct run *r, struct participant *p)
{
	const struct node_plan *plan = r->exp->node_plan[p->guest_index];
	if (send_monitors(r, p) < 0)
		run_add_event(r, p, 0, "its external monitors could not be sent: it runs none");
	struct proto_msg m = { .type = PROTO_PLAN, .version = PROTO_VERSION };
	snprintf(m.u.plan.node, sizeof(m.u.plan.node), "%s", p->node.name);
	m.u.plan.nsteps = plan->nsteps;
	m.u.plan.steps = plan->steps; /* borrowed with their commands: not cleared */
	m.u.plan.monitor_interval_ms = p->kind == PART_HOST ? r->exp->host_mon.interval_ms
							    : r->exp->guest_mon.interval_ms;
	/* a long plan goes as parts, one line each */
	struct proto_buf buf = { 0 };
	int e = proto_encode_plan(&m, &buf);
	if (e == 0)
		e = node_send_bytes(&p->node, buf.data, buf.len);
	proto_buf_free(&buf);
	if (e < 0)
		run_fail(r, p, "cannot send the plan: %s", strerror(-e));
}

static void on_hello(struct run *r, struct participant *p, const struct proto_msg *m)
{
	if (strcmp(m->u.hello.node, p->node.name) != 0) {
		run_fail(r, p, "its agent says it is \"%s\"", m->u.hello.node);
		return;
	}
	if (m->u.hello.proto_min > PROTO_VERSION || m->u.hello.proto_max < PROTO_VERSION) {
		run_fail(r, p, "its agent speaks protocol %u..%u, hostd speaks %d: install a matching agent",
		     m->u.hello.proto_min, m->u.hello.proto_max, PROTO_VERSION);
		return;
	}
	bool first = !p->hello_seen;
	p->hello_seen = true;
	/* shown in the manifest and in warnings: escaped */
	log_escape(m->u.hello.agent_version, strlen(m->u.hello.agent_version), p->agent_version,
		   sizeof(p->agent_version));
	log_escape(m->u.hello.boot_id, strlen(m->u.hello.boot_id), p->boot_id, sizeof(p->boot_id));
	log_escape(m->u.hello.clocksource, strlen(m->u.hello.clocksource), p->clocksource,
		   sizeof(p->clocksource));
	if (first)
		run_clock_judge_source(r, p);
	if (first)
		run_manifest_write(r);
	/* An agent says hello again after a resync, which it can only have
	 * finished by reading our ack, queued behind what the last hello got:
	 * a hello while that is still unwritten asks for copies it never reads. */
	if (node_reply_unwritten(&p->node, NODE_REPLY_HELLO)) {
		run_fail(r, p, "flooded its channel: hello again before it read the %s the last "
			 "one got", p->clock_shared || p->clock_ready ? "plan" : "clock ping");
		return;
	}
	/* A guest's start instants mean something only on the host's clock:
	 * measure its offset before it can reach the first barrier. */
	if (p->clock_shared || p->clock_ready)
		send_plan(r, p);
	else
		run_send_ping(r, p); /* a ping in flight may have died in a resync */
	node_reply_sent(&p->node, NODE_REPLY_HELLO);
}

void run_send_ping(struct run *r, struct participant *p)
{
	struct proto_msg m = { .type = PROTO_PING, .version = PROTO_VERSION };
	m.u.ping.seq = ++p->ping_seq;
	/* before t1: a PTP reading in the pong was taken after both */
	clock_realmono_read(&p->ping_realmono);
	p->ping_t1 = m.u.ping.t1 = clock_mono_ns();
	p->ping_inflight = true;
	int e = node_send(&p->node, &m);
	if (e < 0)
		run_fail(r, p, "cannot send a ping: %s", strerror(-e));
}

/* A refresh between steps whose offset lies outside what the line said,
 * widened by both exchanges' bounds and by how far a clock may be slewed
 * since: the guest's clock (or its answers) jumped.  Flagged in the next
 * barrier record, and said once per node. */
static void check_jump(struct run *r, struct participant *p, const struct proto_msg *m)
{
	struct clock_exchange e;
	int64_t off_by, allowed;
	if (clock_offset_exchange(p->ping_t1, m->u.ping.t2, m->u.ping.t3, p->node.rx_ns, &e) < 0 ||
	    !clock_offset_jumped(&p->clock, &e, &off_by, &allowed))
		return;
	bool first = !p->clock_jumped && !(p->rec_flags & RUN_FLAG_OFFSET_JUMP);
	p->clock_jumped = true;
	if (!first)
		return;
	char what[200];
	snprintf(what, sizeof(what), "its clock offset jumped by %lld ns between exchanges, beyond "
		 "the %lld ns their bounds allow: flagged in barriers.ndjson",
		 (long long)off_by, (long long)allowed);
	log_warn("%s: %s", p->node.name, what);
	run_add_event(r, p, run_part_step(r, p), what);
}

static void on_pong(struct run *r, struct participant *p, const struct proto_msg *m)
{
	/* Only the answer to the ping in flight counts: a late one would pair
	 * the wrong t4 with it. */
	if (p->clock_shared || !p->ping_inflight || m->u.ping.seq != p->ping_seq ||
	    m->u.ping.t1 != p->ping_t1)
		return;
	p->ping_inflight = false;
	p->clock_attempts++;
	if (p->clock_ready && !p->clock_ptp)
		check_jump(r, p, m);
	/* An impossible exchange (a clock that ran backwards, or lies) is left
	 * out; a clock with no possible exchange at all is not used for a
	 * common instant. */
	if (!clock_offset_add(&p->clock, p->ping_t1, m->u.ping.t2, m->u.ping.t3, p->node.rx_ns) &&
	    p->clock_attempts == RUN_CLOCK_EXCHANGES)
		run_add_event(r, p, 0, "its clock answers to pings are impossible (t3 before t2)");
	if (m->u.ping.ptp_window_ns)
		run_clock_ptp_reading(r, p, m);
	if (p->clock_ready)
		return; /* a refresh between steps */
	if (p->clock_attempts < RUN_CLOCK_EXCHANGES) {
		run_send_ping(r, p);
		return;
	}
	p->clock_ready = true;
	/* the guest's PTP clock reads the host's: far tighter than any trip */
	p->clock_ptp = p->ptp.samples > 0;
	if (p->clock_ptp)
		log_info("%s: clock offset %+.3f ms, bound %.3f us (KVM PTP clock, %u readings; "
			 "ping/pong said %+.3f ms, bound %.1f us)", p->node.name,
			 (double)p->ptp.offset_ns / 1e6, (double)p->ptp.bound_ns / 1e3,
			 p->ptp.samples, (double)p->clock.offset_ns / 1e6,
			 (double)p->clock.bound_ns / 1e3);
	else if (p->clock.samples)
		log_info("%s: clock offset %+.3f ms, bound %.1f us (%u exchanges)", p->node.name,
			 (double)p->clock.offset_ns / 1e6, (double)p->clock.bound_ns / 1e3,
			 p->clock.samples);
	else
		log_warn("%s: none of %u clock exchanges was possible: its start instants "
			 "cannot be put on the host's clock", p->node.name, p->clock_attempts);
	run_manifest_write(r);
	send_plan(r, p);
}

/* A message about a step must be about the one the participant was
 * released into, and arrive in order: started, results/output, done. */
static bool step_matches(struct run *r, struct participant *p, const struct proto_msg *m,
			 uint32_t step)
{
	if (step == p->running_step && p->running_step != 0 && !p->done)
		return true;
	run_fail(r, p, "sent %s for step %u while it runs step %u", proto_type_name(m->type), step,
	     p->done ? 0 : p->running_step);
	return false;
}

/* For the host's own /proc a step ends when its last participant is done. */
static void host_proc_check_end(struct run *r, uint32_t step)
{
	for (size_t i = 0; r->hproc && i < r->n; i++) {
		const struct participant *q = &r->p[i];
		if (barrier_in_run(r->barrier, i) && !q->failed && q->running_step == step &&
		    !q->done)
			return;
	}
	host_proc_step_end(r->hproc, step);
}

static void on_done(struct run *r, struct participant *p, const struct proto_msg *m)
{
	p->done = true;
	p->steps_done++;
	const struct proto_step *st = &r->exp->node_plan[p->guest_index]->steps[m->u.done.step - 1];
	r->samples_written += monitor_store_step_done(r->mon, p->node.name, m->u.done.step,
						      st->benchmark, st->iteration);
	host_proc_check_end(r, m->u.done.step);
	run_bench_done(r, p, m->u.done.step, m->u.done.exit_status);
	if (m->u.done.exit_status != 0) {
		char what[128];
		snprintf(what, sizeof(what), "step exited with status %d", m->u.done.exit_status);
		run_add_event(r, p, m->u.done.step, what);
		/* a COMMAND_ step's elapsed of a failed run judges nothing */
		if (r->autoit)
			run_auto_failed(r->autoit, p->node.index, m->u.done.step);
	}
	if (m->u.done.step == barrier_nsteps(r->barrier))
		run_on_ready(r, p, m->u.done.step + 1); /* the end barrier */
}

/* A peer's short string (a unit, a reason), escaped where it lies: cut to
 * size rather than grown. */
static void escape_in_place(char *s, size_t size)
{
	char buf[PROTO_TEXT_MAX];
	size_t len = strnlen(s, size);
	if (size > sizeof(buf))
		size = sizeof(buf);
	log_escape(s, len, buf, size);
	memcpy(s, buf, strlen(buf) + 1);
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 14695981039346656037ULL; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* A result is the agent's own measure of a step it ran: a command's or a
 * cpu-probe's.  A spec's metrics come from hostd's parser of the raw
 * output; the agent adds only its elapsed.  Names hostd measures are not
 * a guest's to send, and a metric is said once per step.  true: refused
 * (and p failed). */
static bool result_refused(struct run *r, struct participant *p, const struct proto_msg *m)
{
	const struct node_plan *plan = r->exp->node_plan[p->guest_index];
	uint32_t k = m->u.result.step;
	const char *metric = m->u.result.metric;
	if (monitor_store_name_reserved(metric)) {
		run_fail(r, p, "sent a result named %s, which hostd measures itself", metric);
		return true;
	}
	if (k <= plan->nsteps && plan->info[k - 1].spec && strcmp(metric, "elapsed") != 0) {
		run_fail(r, p, "sent a result %s for step %u, a benchmark spec's: its metrics come "
			 "from hostd's parser of the output", metric, k);
		return true;
	}
	uint64_t h = name_hash(metric);
	for (uint32_t i = 0; i + 1 < p->results_in_step; i++) {
		if (p->result_names[i] == h) {
			run_fail(r, p, "sent the result %s twice for step %u", metric, k);
			return true;
		}
	}
	p->result_names[p->results_in_step - 1] = h;
	return false;
}

/* Text held back over the budget, said in one line: at the end of its
 * step, or once the run's budget is spent, at the end of the run. */
static void text_suppressed_say(struct run *r, struct participant *p, bool final)
{
	if (!p->text_suppressed || (!final && p->text_run_bytes >= RUN_GUEST_TEXT_PER_RUN_MAX))
		return;
	char what[200];
	snprintf(what, sizeof(what), "suppressed %llu bytes of agent error text (over %d bytes a "
		 "step or %d a run)", (unsigned long long)p->text_suppressed,
		 RUN_GUEST_TEXT_PER_STEP_MAX, RUN_GUEST_TEXT_PER_RUN_MAX);
	log_warn("%s: %s", p->node.name, what);
	run_add_event(r, p, p->text_suppressed_step, what);
	p->text_suppressed = 0;
}

/* An agent's error: escaped, shown within the node's budget. */
static void on_error(struct run *r, struct participant *p, const struct proto_msg *m)
{
	uint32_t step = run_part_step(r, p);
	if (step != p->text_step) {
		text_suppressed_say(r, p, false);
		p->text_step = step;
		p->text_step_bytes = 0;
	}
	size_t len = strlen(m->u.error.code) + strlen(m->u.error.text);
	if (p->text_step_bytes + len > RUN_GUEST_TEXT_PER_STEP_MAX ||
	    p->text_run_bytes + len > RUN_GUEST_TEXT_PER_RUN_MAX) {
		if (!p->text_suppressed)
			p->text_suppressed_step = step;
		p->text_suppressed += len;
		if (p->text_run_bytes + len > RUN_GUEST_TEXT_PER_RUN_MAX)
			p->text_run_bytes = RUN_GUEST_TEXT_PER_RUN_MAX; /* spent: no more */
		return;
	}
	p->text_step_bytes += len;
	p->text_run_bytes += len;
	char code[PROTO_SHORT_MAX * 4], text[PROTO_TEXT_MAX * 4], what[sizeof(code) + sizeof(text) + 32];
	log_escape(m->u.error.code, strlen(m->u.error.code), code, sizeof(code));
	log_escape(m->u.error.text, strlen(m->u.error.text), text, sizeof(text));
	if (!strcmp(m->u.error.code, "go-again"))
		go_watch_again(r->go_watch, p->node.index, m->u.error.step);
	snprintf(what, sizeof(what), "agent error %s: %s", code, text);
	log_warn("%s: %s", p->node.name, what);
	run_add_event(r, p, m->u.error.step <= barrier_nsteps(r->barrier) ? m->u.error.step : step,
		      what);
}

void run_agents_finish(struct run *r)
{
	for (size_t i = 0; i < r->n; i++) {
		struct participant *p = &r->p[i];
		text_suppressed_say(r, p, true);
		if (!p->failed && p->running_step && !p->done) {
			char why[96];
			snprintf(why, sizeof(why), "step cut short: the run ended (%s) before its done",
				 run_status_name(r->status));
			/* not the node's failure: an event, and the step's record */
			run_add_event(r, p, p->running_step, why);
			run_bench_lost(r, p, p->running_step, why);
			p->done = true;
		}
	}
}

/* started's optional timing, its agent instants put on the host's clock
 * (0 stays 0: not sent). */
static void started_timing(struct run *r, struct participant *p, const struct proto_msg *m)
{
	const struct clock_offset *c = part_clock(p);
	struct start_timing t = {
		.agent_go_ns = m->u.started.agent_go_ns ?
				       clock_offset_to_host(c, m->u.started.agent_go_ns) : 0,
		.child_go_ns = m->u.started.child_go_ns ?
				       clock_offset_to_host(c, m->u.started.child_go_ns) : 0,
		.start_ns = clock_offset_to_host(c, m->u.started.mono_ns),
		.runq_ns = m->u.started.runq_ns,
	};
	run_record_timing(r, p, &t);
}

static void on_message(struct node *n, struct proto_msg *m)
{
	struct participant *p = n->owner;
	struct run *r = p->run;

	if (r->finishing || p->failed)
		return;
	if (!p->hello_seen && m->type != PROTO_HELLO && m->type != PROTO_ERROR) {
		run_fail(r, p, "sent %s before hello", proto_type_name(m->type));
		return;
	}
	switch (m->type) {
	case PROTO_HELLO:
		on_hello(r, p, m);
		break;
	case PROTO_READY:
		/* a step ends with done (or a failure): never skipped */
		if (p->running_step && !p->done && m->u.ready.step > p->running_step) {
			run_fail(r, p, "said ready for step %u before done for step %u",
				 m->u.ready.step, p->running_step);
			break;
		}
		run_on_ready(r, p, m->u.ready.step);
		break;
	case PROTO_STARTED:
		if (!step_matches(r, p, m, m->u.started.step))
			break;
		if (p->started) {
			run_fail(r, p, "sent started twice for step %u", m->u.started.step);
			break;
		}
		p->started = true;
		/* the timing first: the start may complete the record */
		started_timing(r, p, m);
		run_on_started(r, p, clock_offset_to_host(part_clock(p), m->u.started.mono_ns),
			       m->u.started.late_ns);
		break;
	case PROTO_RESULT:
		if (!step_matches(r, p, m, m->u.result.step))
			break;
		if (++p->results_in_step > RUN_RESULTS_PER_STEP_MAX) {
			run_fail(r, p, "sent more than %d results for step %u", RUN_RESULTS_PER_STEP_MAX,
			     m->u.result.step);
			break;
		}
		if (!isfinite(m->u.result.value) || !proto_name_valid(m->u.result.metric)) {
			run_fail(r, p, "sent an invalid result for step %u (metric \"%.64s\")",
			     m->u.result.step, m->u.result.metric);
			break;
		}
		if (result_refused(r, p, m))
			break;
		escape_in_place(m->u.result.unit, sizeof(m->u.result.unit));
		run_write_sample(r, p, m);
		break;
	case PROTO_OUTPUT:
		if (!step_matches(r, p, m, m->u.output.step))
			break;
		run_bench_output(r, p, m->u.output.step, m->u.output.data, m->u.output.len);
		if (p->output_in_step >= RUN_OUTPUT_PER_STEP_MAX)
			break;
		p->output_in_step += m->u.output.len;
		results_append_output(r->results, n->name, m->u.output.step, m->u.output.data,
				      m->u.output.len);
		if (p->output_in_step >= RUN_OUTPUT_PER_STEP_MAX)
			run_add_event(r, p, m->u.output.step, "raw output over 8 MiB: the rest was dropped");
		break;
	case PROTO_DONE:
		if (step_matches(r, p, m, m->u.done.step))
			on_done(r, p, m);
		break;
	case PROTO_ERROR:
		on_error(r, p, m);
		break;
	case PROTO_BYE:
		escape_in_place(m->u.bye.reason, 256); /* a failure's reason holds 400 */
		run_fail(r, p, "its agent left the run: %s", m->u.bye.reason);
		break;
	case PROTO_PONG:
		on_pong(r, p, m);
		break;
	case PROTO_MONITOR_OUTPUT: {
		uint32_t k = m->u.monitor_output.step;
		int e = k <= barrier_nsteps(r->barrier)
				? monitor_store_output(r->mon, n->name, k, m->u.monitor_output.monitor,
						       m->u.monitor_output.data, m->u.monitor_output.len)
				: -EINVAL;
		if (e == -EFBIG && !r->warned_big_monitors) {
			r->warned_big_monitors = true;
			run_add_event(r, p, k, "monitor data over its limit: the rest is dropped");
		} else if (e == -EINVAL) {
			run_add_event(r, p, k, "monitor output of an unknown monitor or step was dropped");
		}
		break;
	}
	case PROTO_SAMPLE: {
		if (monitor_store_name_reserved(m->u.sample.metric)) {
			run_fail(r, p, "sent a monitor sample named %s, which hostd measures itself",
				 m->u.sample.metric);
			break;
		}
		escape_in_place(m->u.sample.unit, sizeof(m->u.sample.unit));
		int e = monitor_store_sample(r->mon, n->name, m,
					     clock_offset_to_host(part_clock(p), m->u.sample.mono_ns));
		if (e == -EFBIG && !r->warned_big_monitors) {
			r->warned_big_monitors = true;
			run_add_event(r, p, m->u.sample.step,
				      "monitor samples over their limit: the rest are dropped");
		} else if (e == -EINVAL) {
			run_add_event(r, p, m->u.sample.step, "an invalid monitor sample was dropped");
		}
		break;
	}
	default:
		run_fail(r, p, "sent %s, which only hostd sends", proto_type_name(m->type));
		break;
	}
}

static void on_resynced(struct node *n)
{
	(void)n; /* the agent re-announces itself with hello and ready */
}

static void on_protocol_error(struct node *n, int err, const char *detail)
{
	struct participant *p = n->owner;
	struct run *r = p->run;
	if (r->finishing || p->failed)
		return;
	char what[300];
	snprintf(what, sizeof(what), "protocol error: %s (%s)", detail, strerror(-err));
	log_warn("%s: %s; resynchronising", n->name, what);
	run_add_event(r, p, run_part_step(r, p), what);
	if (n->protocol_errors >= NODE_PROTOCOL_ERROR_LIMIT)
		run_fail(r, p, "sent garbage: %u protocol errors, the last: %s", n->protocol_errors,
		     detail);
}

static void on_closed(struct node *n, int err)
{
	struct participant *p = n->owner;
	struct run *r = p->run;
	if (r->finishing) {
		run_gone_check(r);
		return;
	}
	const char *why = run_launch_closed_why(r, p);
	if (why)
		run_fail(r, p, "%s", why);
	else if (err)
		run_fail(r, p, "its channel failed: %s", uv_strerror(err));
	else
		run_fail(r, p, "closed its channel");
}

/* An agent that restarts its side after hello lost its channel for a while
 * or met garbage: worth a line in the manifest, not a failure. */
static void on_peer_reset(struct node *n)
{
	struct participant *p = n->owner;
	struct run *r = p->run;
	if (r->finishing || p->failed || !p->hello_seen)
		return;
	run_add_event(r, p, run_part_step(r, p),
		      "its agent restarted the link (0xFF): a reconnect or a resync of its own");
}

static void on_flooding(struct node *n, const char *why)
{
	struct participant *p = n->owner;
	run_fail(p->run, p, "%s", why);
}

const struct node_ops run_participant_ops = {
	.message = on_message,
	.resynced = on_resynced,
	.protocol_error = on_protocol_error,
	.closed = on_closed,
	.peer_reset = on_peer_reset,
	.flooding = on_flooding,
};

