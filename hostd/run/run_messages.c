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

/* The clock is known: its own (shared) or measured before the plan. */
static bool clock_known(const struct participant *p)
{
	return part_clock_shared(p->clock) || part_clock_ready(p->clock);
}

static void on_hello(struct run *r, struct participant *p, const struct proto_msg *m)
{
	if (strcmp(m->u.hello.node, p->node.name) != 0) {
		run_fail(r, p, "its agent says it is \"%s\"", m->u.hello.node);
		return;
	}
	if (m->u.hello.proto_min > PROTO_VERSION || m->u.hello.proto_max < PROTO_VERSION) {
		run_fail(r, p,
			 "its agent speaks protocol %u..%u, hostd speaks %d: install a matching agent",
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
	log_escape(m->u.hello.kernel, strlen(m->u.hello.kernel), p->kernel, sizeof(p->kernel));
	char why[320];
	/* a jiffies one also makes every release immediate: said before the
	 * first step */
	if (first && part_clock_source_warning(p->clocksource, why, sizeof(why))) {
		log_warn("%s: %s", p->node.name, why);
		run_add_event(r, p, 0, why);
	}
	if (first)
		run_manifest_write(r);
	/* An agent says hello again after a resync, which it can only have
	 * finished by reading our ack, queued behind what the last hello got:
	 * a hello while that is still unwritten asks for copies it never reads. */
	if (node_reply_unwritten(&p->node, NODE_REPLY_HELLO)) {
		run_fail(r, p,
			 "flooded its channel: hello again before it read the %s the last "
			 "one got",
			 clock_known(p) ? "plan" : "clock ping");
		return;
	}
	/* A guest's start instants mean something only on the host's clock:
	 * measure its offset before it can reach the first barrier. */
	if (clock_known(p))
		send_plan(r, p);
	else
		run_send_ping(r, p); /* a ping in flight may have died in a resync */
	node_reply_sent(&p->node, NODE_REPLY_HELLO);
}

void run_send_ping(struct run *r, struct participant *p)
{
	struct proto_msg m;
	struct clock_realmono rm;
	/* before t1: a PTP reading in the pong was taken after both */
	clock_realmono_read(&rm);
	part_clock_ping(p->clock, clock_mono_ns(), &rm, &m);
	int e = node_send(&p->node, &m);
	if (e < 0)
		run_fail(r, p, "cannot send a ping: %s", strerror(-e));
}

/* A pong: the clock says what it showed, said here; more pings until the
 * clock is ready, then the plan. */
static void on_pong(struct run *r, struct participant *p, const struct proto_msg *m)
{
	struct clock_realmono now;
	struct part_clock_news news;
	clock_realmono_read(&now);
	bool flagged = run_record_flagged(r, p, RUN_FLAG_OFFSET_JUMP);
	enum part_clock_pong got = part_clock_pong(p->clock, m, p->node.rx_ns, &now, &news);
	if (got == PART_CLOCK_PONG_IGNORED)
		return;
	/* a jump is said once per node until the records flag it */
	if (news.jumped && !flagged) {
		log_warn("%s: %s", p->node.name, news.jump);
		run_add_event(r, p, run_part_step(r, p), news.jump);
	}
	if (news.impossible)
		run_add_event(r, p, 0, "its clock answers to pings are impossible (t3 before t2)");
	if (news.ptp_refused) {
		log_warn("%s: %s", p->node.name, news.ptp);
		run_add_event(r, p, 0, news.ptp);
	}
	if (got == PART_CLOCK_PONG_REFRESH)
		return;
	if (got == PART_CLOCK_PONG_MORE) {
		run_send_ping(r, p);
		return;
	}
	char said[300];
	if (part_clock_describe(p->clock, said, sizeof(said)))
		log_info("%s: %s", p->node.name, said);
	else
		log_warn("%s: %s", p->node.name, said);
	run_manifest_write(r);
	send_plan(r, p);
}

/* A message about a step must be about the one the participant was
 * released into, and arrive in order: started, results/output, done. */
static bool step_matches(struct run *r, struct participant *p, const struct proto_msg *m, uint32_t step)
{
	if (part_step_matches(p->step, step))
		return true;
	run_fail(r, p, "sent %s for step %u while it runs step %u", proto_type_name(m->type), step,
		 part_step_running(p->step));
	return false;
}

/* For the host's own /proc a step ends when its last participant is done. */
static void host_proc_check_end(struct run *r, uint32_t step)
{
	for (size_t i = 0; r->hproc && i < r->n; i++) {
		const struct participant *q = &r->p[i];
		if (barrier_in_run(r->barrier, i) && !q->failed && part_step_running(q->step) == step)
			return;
	}
	host_proc_step_end(r->hproc, step);
}

static void on_done(struct run *r, struct participant *p, const struct proto_msg *m)
{
	part_step_done(p->step);
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
		run_fail(r, p,
			 "sent a result %s for step %u, a benchmark spec's: its metrics come "
			 "from hostd's parser of the output",
			 metric, k);
		return true;
	}
	if (part_step_result_name(p->step, metric) == -EEXIST) {
		run_fail(r, p, "sent the result %s twice for step %u", metric, k);
		return true;
	}
	return false;
}

/* Text held back over the budget, said in one line (run_step.h says when). */
static void text_held_say(struct run *r, struct participant *p, struct part_step_held held)
{
	if (!held.bytes)
		return;
	char what[200];
	snprintf(what, sizeof(what),
		 "suppressed %llu bytes of agent error text (over %d bytes a "
		 "step or %d a run)",
		 (unsigned long long)held.bytes, RUN_GUEST_TEXT_PER_STEP_MAX,
		 RUN_GUEST_TEXT_PER_RUN_MAX);
	log_warn("%s: %s", p->node.name, what);
	run_add_event(r, p, held.step, what);
}

/* An agent's error: escaped, shown within the node's budget. */
static void on_error(struct run *r, struct participant *p, const struct proto_msg *m)
{
	uint32_t step = run_part_step(r, p);
	struct part_step_held held;
	size_t len = strlen(m->u.error.code) + strlen(m->u.error.text);
	bool shown = part_step_text(p->step, step, len, &held);
	text_held_say(r, p, held);
	if (!shown)
		return;
	char code[PROTO_SHORT_MAX * 4], text[PROTO_TEXT_MAX * 4],
		what[sizeof(code) + sizeof(text) + 32];
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
		text_held_say(r, p, part_step_text_final(p->step));
		uint32_t k = part_step_running(p->step);
		if (!p->failed && k) {
			char why[96];
			snprintf(why, sizeof(why), "step cut short: the run ended (%s) before its done",
				 run_status_name(r->status));
			/* not the node's failure: an event, and the step's record */
			run_add_event(r, p, k, why);
			run_bench_lost(r, p, k, why);
			part_step_cut(p->step);
		}
	}
}

/* started's optional timing, its agent instants put on the host's clock
 * (0 stays 0: not sent). */
static void started_timing(struct run *r, struct participant *p, const struct proto_msg *m)
{
	const struct part_clock *c = p->clock;
	struct start_timing t = {
		.agent_go_ns =
			m->u.started.agent_go_ns ? part_clock_to_host(c, m->u.started.agent_go_ns) : 0,
		.child_go_ns =
			m->u.started.child_go_ns ? part_clock_to_host(c, m->u.started.child_go_ns) : 0,
		.start_ns = part_clock_to_host(c, m->u.started.mono_ns),
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
	case PROTO_HELLO: on_hello(r, p, m); break;
	case PROTO_READY:
		/* a step ends with done (or a failure): never skipped */
		if (part_step_running(p->step) && m->u.ready.step > part_step_running(p->step)) {
			run_fail(r, p, "said ready for step %u before done for step %u",
				 m->u.ready.step, part_step_running(p->step));
			break;
		}
		run_on_ready(r, p, m->u.ready.step);
		break;
	case PROTO_STARTED:
		if (!step_matches(r, p, m, m->u.started.step))
			break;
		if (part_step_started(p->step) == -EALREADY) {
			run_fail(r, p, "sent started twice for step %u", m->u.started.step);
			break;
		}
		/* the timing first: the start may complete the record */
		started_timing(r, p, m);
		run_on_started(r, p, part_clock_to_host(p->clock, m->u.started.mono_ns),
			       m->u.started.late_ns);
		break;
	case PROTO_RESULT:
		if (!step_matches(r, p, m, m->u.result.step))
			break;
		if (part_step_count_result(p->step) == -E2BIG) {
			run_fail(r, p, "sent more than %d results for step %u",
				 RUN_RESULTS_PER_STEP_MAX, m->u.result.step);
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
		enum part_step_output kept = part_step_output(p->step, m->u.output.len);
		if (kept == PART_STEP_OUTPUT_DROP)
			break;
		results_append_output(r->results, n->name, m->u.output.step, m->u.output.data,
				      m->u.output.len);
		if (kept == PART_STEP_OUTPUT_LAST)
			run_add_event(r, p, m->u.output.step,
				      "raw output over 8 MiB: the rest was dropped");
		break;
	case PROTO_DONE:
		if (step_matches(r, p, m, m->u.done.step))
			on_done(r, p, m);
		break;
	case PROTO_ERROR: on_error(r, p, m); break;
	case PROTO_BYE:
		escape_in_place(m->u.bye.reason, 256); /* a failure's reason holds 400 */
		run_fail(r, p, "its agent left the run: %s", m->u.bye.reason);
		break;
	case PROTO_PONG: on_pong(r, p, m); break;
	case PROTO_MONITOR_OUTPUT: {
		uint32_t k = m->u.monitor_output.step;
		int e = k <= barrier_nsteps(r->barrier)
				? monitor_store_output(r->mon, n->name, k, m->u.monitor_output.monitor,
						       m->u.monitor_output.data,
						       m->u.monitor_output.len)
				: -EINVAL;
		if (e == -EFBIG && !r->warned_big_monitors) {
			r->warned_big_monitors = true;
			run_add_event(r, p, k, "monitor data over its limit: the rest is dropped");
		} else if (e == -EINVAL) {
			run_add_event(r, p, k,
				      "monitor output of an unknown monitor or step was dropped");
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
					     part_clock_to_host(p->clock, m->u.sample.mono_ns));
		if (e == -EFBIG && !r->warned_big_monitors) {
			r->warned_big_monitors = true;
			run_add_event(r, p, m->u.sample.step,
				      "monitor samples over their limit: the rest are dropped");
		} else if (e == -EINVAL) {
			run_add_event(r, p, m->u.sample.step, "an invalid monitor sample was dropped");
		}
		break;
	}
	default: run_fail(r, p, "sent %s, which only hostd sends", proto_type_name(m->type)); break;
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
		run_fail(r, p, "its channel failed: %s", strerror(-err));
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
