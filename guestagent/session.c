// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "session.h"
#include "aclock.h"
#include "xalloc.h"

void sess_init(struct session *s, struct outq *q, const struct sess_identity *id, uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	s->nonce_seq = seed;
	s->q = q;
	s->id = *id;
	s->phase = SESS_NO_PLAN;
}

void sess_free(struct session *s)
{
	proto_steps_free(s->steps, s->nsteps);
	proto_steps_free(s->part_steps, s->part_n);
	s->part_steps = NULL;
	s->part_n = s->part_total = 0;
	proto_buf_free(&s->scratch);
	s->steps = NULL;
	s->nsteps = 0;
}

/* splitmix64 over the seed; kept below 2^53 so
 * that any JSON reader holds it exactly, and never 0. */
static uint64_t sess_nonce(struct session *s)
{
	uint64_t z = (s->nonce_seq += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	z ^= z >> 31;
	z &= (1ULL << 53) - 1;
	return z ? z : 1;
}

/* Link bytes the proto_link wrote into scratch go to the prio lane. */
static void sess_flush_scratch_prio(struct session *s, bool front)
{
	if (!s->scratch.len)
		return;
	if (front)
		outq_push_front(s->q, OUTQ_PRIO, s->scratch.data, s->scratch.len);
	else
		outq_push(s->q, OUTQ_PRIO, s->scratch.data, s->scratch.len);
	proto_buf_consume(&s->scratch, s->scratch.len);
}

static void sess_send(struct session *s, struct proto_msg *m, enum outq_class cls, bool front)
{
	int r;

	m->version = PROTO_VERSION;
	r = proto_encode(m, &s->scratch);
	if (r < 0) {
		/* Our own message: a bug, or a field we failed to bound. */
		log_error("cannot encode %s message: %s", proto_type_name(m->type), strerror(-r));
		proto_buf_consume(&s->scratch, s->scratch.len);
		return;
	}
	if (front)
		outq_push_front(s->q, cls, s->scratch.data, s->scratch.len);
	else
		outq_push(s->q, cls, s->scratch.data, s->scratch.len);
	proto_buf_consume(&s->scratch, s->scratch.len);
}

static void sess_restart(struct session *s)
{
	s->sync_resent = false;
	proto_link_restart(&s->link, sess_nonce(s), &s->scratch);
	/* 0xFF makes the host drop a line we had half written: start it over. */
	outq_rewind(s->q);
	sess_flush_scratch_prio(s, true);
	s->q->gate_open = s->link.synced;
}

void sess_connected(struct session *s)
{
	outq_drop_prio(s->q);
	sess_restart(s);
}

void sess_peer_reset(struct session *s)
{
	/* A host that resets while we wait for our ack may never have seen our
	 * sync: send it again, same nonce, so an ack already on its way still
	 * counts.  Once per restart: 0xFF costs the host one byte, our answer
	 * fifty. */
	if (s->link.synced || s->sync_resent)
		return;
	s->sync_resent = true;
	proto_link_restart(&s->link, s->link.nonce, &s->scratch);
	outq_rewind(s->q);
	sess_flush_scratch_prio(s, true);
}

static void sess_error(struct session *s, uint32_t step, const char *code, const char *text)
{
	struct proto_msg m = { .type = PROTO_ERROR };

	m.u.error.step = step;
	snprintf(m.u.error.code, sizeof(m.u.error.code), "%s", code);
	snprintf(m.u.error.text, sizeof(m.u.error.text), "%s", text);
	sess_send(s, &m, OUTQ_DROP, false);
}

void sess_bad_input(struct session *s, int err, const char *detail)
{
	char text[PROTO_TEXT_MAX];

	/* While resyncing, garbage is what we expect to skip. */
	if (!s->link.synced)
		return;
	log_warn("host sent a bad line (%s: %s); resyncing", strerror(-err), detail ? detail : "");
	snprintf(text, sizeof(text), "bad line from host: %s: %s", strerror(-err),
		 detail ? detail : "");
	sess_error(s, 0, "bad-input", text);
	sess_restart(s);
}

uint32_t sess_current_step(const struct session *s)
{
	if (!s->nsteps)
		return 0;
	if (s->cur >= s->nsteps)
		return s->steps[s->nsteps - 1].index;
	return s->steps[s->cur].index;
}

static void sess_hello(struct session *s)
{
	struct proto_msg m = { .type = PROTO_HELLO };

	memcpy(m.u.hello.node, s->id.node, sizeof(m.u.hello.node));
	snprintf(m.u.hello.agent_version, sizeof(m.u.hello.agent_version), "%s", LOCKSTEP_VERSION);
	m.u.hello.proto_min = PROTO_VERSION;
	m.u.hello.proto_max = PROTO_VERSION;
	memcpy(m.u.hello.boot_id, s->id.boot_id, sizeof(m.u.hello.boot_id));
	memcpy(m.u.hello.clocksource, s->id.clocksource, sizeof(m.u.hello.clocksource));
	memcpy(m.u.hello.hostkey, s->id.hostkey, sizeof(m.u.hello.hostkey));
	memcpy(m.u.hello.kernel, s->id.kernel, sizeof(m.u.hello.kernel));
	m.u.hello.step = sess_current_step(s);
	/* In front of anything held during the resync: the host hears who we
	 * are before it hears results. */
	sess_send(s, &m, OUTQ_KEEP, true);
}

static void sess_ready(struct session *s)
{
	struct proto_msg m = { .type = PROTO_READY };

	m.u.ready.step = s->steps[s->cur].index;
	sess_send(s, &m, OUTQ_KEEP, false);
}

/* Takes the first step not done; empty plan or past the end: finished. */
static void sess_enter_step(struct session *s)
{
	if (s->cur < s->nsteps) {
		s->phase = SESS_WAITING;
		sess_ready(s);
		log_debug("waiting at step %" PRIu32, s->steps[s->cur].index);
	} else {
		s->phase = SESS_FINISHED;
		log_info("all %" PRIu32 " steps done; waiting for the host's bye", s->nsteps);
	}
}

static bool sess_step_equal(const struct proto_step *a, const struct proto_step *b)
{
	return a->index == b->index && a->iteration == b->iteration && a->kind == b->kind &&
	       a->units == b->units && !strcmp(a->benchmark, b->benchmark) &&
	       (a->command == b->command ||
		(a->command && b->command && !strcmp(a->command, b->command)));
}

static bool sess_plan_equal(const struct session *s, const struct proto_msg *m)
{
	if (s->phase == SESS_NO_PLAN || m->u.plan.nsteps != s->nsteps ||
	    m->u.plan.monitor_interval_ms != s->monitor_interval_ms)
		return false;
	for (uint32_t i = 0; i < s->nsteps; i++)
		if (!sess_step_equal(&s->steps[i], &m->u.plan.steps[i]))
			return false;
	return true;
}

/* 0, or -EINVAL with text saying which step and value is wrong. */
static int sess_plan_check(const struct proto_msg *m, char *text, size_t len)
{
	uint32_t prev = 0;

	for (uint32_t i = 0; i < m->u.plan.nsteps; i++) {
		const struct proto_step *st = &m->u.plan.steps[i];

		if (st->index <= prev) {
			snprintf(text, len,
				 "plan entry %" PRIu32 ": step index %" PRIu32
				 " is not above the previous one (%" PRIu32 ")",
				 i + 1, st->index, prev);
			return -EINVAL;
		}
		prev = st->index;
		if (st->kind != PROTO_STEP_CPU_PROBE && st->kind != PROTO_STEP_COMMAND) {
			snprintf(text, len, "step %" PRIu32 ": unknown kind %d", st->index,
				 (int)st->kind);
			return -EINVAL;
		}
		if (st->kind == PROTO_STEP_COMMAND && (!st->command || !st->command[0])) {
			snprintf(text, len, "step %" PRIu32 ": empty command", st->index);
			return -EINVAL;
		}
	}
	return 0;
}

/* Collects a plan that arrives in parts (consecutive, the first starting at
 * step 1, bounded by "total", which the decoder bounds).  Returns true when
 * m now holds the whole plan; false while parts are missing or when a part
 * does not follow (reported; the next part from step 1 starts over, which is
 * what the host sends after a resync). */
static bool sess_plan_part(struct session *s, struct proto_msg *m)
{
	uint32_t first = m->u.plan.steps[0].index, n = m->u.plan.nsteps;

	if (first == 1) {
		proto_steps_free(s->part_steps, s->part_n);
		s->part_steps = xcalloc(m->u.plan.total, sizeof(*s->part_steps));
		s->part_total = m->u.plan.total;
		s->part_n = 0;
	}
	if (!s->part_steps || m->u.plan.total != s->part_total || first != s->part_n + 1) {
		char text[PROTO_TEXT_MAX];

		snprintf(text, sizeof(text),
			 "plan part from step %" PRIu32 " of %" PRIu32 " does not follow the %" PRIu32
			 " steps received; waiting for a plan from step 1",
			 first, m->u.plan.total, s->part_n);
		log_warn("%s", text);
		sess_error(s, 0, "bad-plan", text);
		proto_steps_free(s->part_steps, s->part_n);
		s->part_steps = NULL;
		s->part_n = s->part_total = 0;
		return false;
	}
	/* The commands move to part_steps: the message keeps its array, but no
	 * longer owns them. */
	memcpy(&s->part_steps[s->part_n], m->u.plan.steps, n * sizeof(*m->u.plan.steps));
	for (uint32_t i = 0; i < n; i++)
		m->u.plan.steps[i].command = NULL;
	s->part_n += n;
	if (s->part_n < s->part_total)
		return false;
	proto_steps_free(m->u.plan.steps, n);
	m->u.plan.steps = s->part_steps;
	m->u.plan.nsteps = s->part_total;
	m->u.plan.total = 0;
	s->part_steps = NULL;
	s->part_n = s->part_total = 0;
	return true;
}

static void sess_plan(struct session *s, struct proto_msg *m)
{
	char text[PROTO_TEXT_MAX];

	if (m->u.plan.total && !sess_plan_part(s, m))
		return;

	if (strcmp(m->u.plan.node, s->id.node)) {
		snprintf(text, sizeof(text), "plan is for node '%s', this is node '%s'",
			 m->u.plan.node, s->id.node);
		log_warn("%s; ignored", text);
		sess_error(s, 0, "wrong-node", text);
		return;
	}
	if (sess_plan_equal(s, m)) {
		log_debug("the host sent the same plan again; ignored");
		return;
	}
	if (s->started_any) {
		snprintf(text, sizeof(text),
			 "a different plan (%" PRIu32 " steps) arrived after"
			 " steps ran (now at step %" PRIu32 "); keeping the current plan (%" PRIu32
			 " steps)",
			 m->u.plan.nsteps, sess_current_step(s), s->nsteps);
		log_warn("%s", text);
		sess_error(s, 0, "plan-conflict", text);
		return;
	}
	if (sess_plan_check(m, text, sizeof(text)) < 0) {
		log_warn("host sent a bad plan: %s", text);
		sess_error(s, 0, "bad-plan", text);
		return;
	}
	/* Take the steps and their commands over from the message (see
	 * PROTO_EV_MSG). */
	proto_steps_free(s->steps, s->nsteps);
	s->steps = m->u.plan.steps;
	s->nsteps = m->u.plan.nsteps;
	m->u.plan.steps = NULL;
	m->u.plan.nsteps = 0;
	s->cur = 0;
	s->monitor_interval_ms = m->u.plan.monitor_interval_ms;
	log_info("plan of %" PRIu32 " steps", s->nsteps);
	sess_enter_step(s);
}

/* What a phase is doing to its step, for messages. */
static const char *sess_phase_doing(enum sess_phase phase)
{
	switch (phase) {
	case SESS_NO_PLAN: return "without a plan at";
	case SESS_WAITING: return "waiting for the go of";
	case SESS_RUNNING: return "running";
	case SESS_FINISHED: return "finished after";
	}
	return "in an unknown phase at";
}

static struct sess_action sess_go(struct session *s, const struct proto_msg *m)
{
	struct sess_action act = { .kind = SESS_ACT_NONE };
	int64_t at = m->u.go.at_ns;

	if (s->started_any && s->phase != SESS_NO_PLAN && m->u.go.step > 0 &&
	    (m->u.go.step < sess_current_step(s) ||
	     (m->u.go.step == sess_current_step(s) && s->phase != SESS_WAITING))) {
		char text[PROTO_TEXT_MAX];

		/* hostd sent it again (no started heard in time): say that the
		 * first one got here, so that a late start is not taken for a
		 * lost go (issue 19) */
		snprintf(text, sizeof(text),
			 "go for step %" PRIu32 " received again; the first one "
			 "got here",
			 m->u.go.step);
		log_info("%s", text);
		sess_error(s, m->u.go.step, "go-again", text);
		return act;
	}
	if (s->phase == SESS_NO_PLAN) {
		/* A go re-sent across a reconnect: the plan comes first. */
		log_debug("go for step %" PRIu32 " ignored: no plan yet", m->u.go.step);
		return act;
	}
	if (s->phase != SESS_WAITING || m->u.go.step != s->steps[s->cur].index) {
		char text[PROTO_TEXT_MAX];

		/* A go this node did not ask for (hostd sends go k only after
		 * ready k): said, not dropped in silence, so that a barrier
		 * that times out on this node shows what its go met (issue
		 * 19: the one path where a go left no trace). */
		snprintf(text, sizeof(text),
			 "go for step %" PRIu32 " ignored: this node is %s step %" PRIu32,
			 m->u.go.step, sess_phase_doing(s->phase), sess_current_step(s));
		log_warn("%s", text);
		sess_error(s, m->u.go.step, "go-ignored", text);
		return act;
	}
	if (at > 0 && at - aclock_now() > SESS_GO_AHEAD_MAX) {
		char text[PROTO_TEXT_MAX];

		snprintf(text, sizeof(text),
			 "go for step %" PRIu32 " at %" PRId64
			 " ns is more than %lld s ahead of this node's CLOCK_MONOTONIC; refused",
			 m->u.go.step, at, SESS_GO_AHEAD_MAX / NSEC_PER_SEC);
		log_warn("%s", text);
		sess_error(s, m->u.go.step, "bad-go", text);
		return act;
	}
	s->phase = SESS_RUNNING;
	s->started_any = true;
	act.kind = SESS_ACT_RUN;
	act.step = &s->steps[s->cur];
	act.at_ns = at > 0 ? at : 0;
	return act;
}

static void sess_pong(struct session *s, const struct proto_msg *ping, int64_t rx_ns)
{
	struct proto_msg m = { .type = PROTO_PONG };

	m.u.ping.seq = ping->u.ping.seq;
	m.u.ping.t1 = ping->u.ping.t1;
	m.u.ping.t2 = rx_ns;
	/* between t2 and t3: hostd checks that the reading lies inside the
	 * exchange it came with */
	if (s->ptp) {
		struct ptp_reading rd;
		int r = ptp_read(s->ptp, &rd);

		if (r == 0) {
			m.u.ping.ptp_mono_ns = rd.mono_ns;
			m.u.ping.ptp_real_ns = rd.real_ns;
			m.u.ping.ptp_host_real_ns = rd.host_real_ns;
			m.u.ping.ptp_window_ns = rd.window_ns;
		} else if (s->ptp->failures == 1) {
			log_warn("cannot read the KVM PTP clock %s: %s; pongs go without its "
				 "reading while it fails (said once)",
				 s->ptp->path, strerror(-r));
		}
	}
	m.u.ping.t3 = aclock_now();
	sess_send(s, &m, OUTQ_PRIO, false);
}

/* One of the host's external monitors; the set is re-sent whole after each
 * hello, so an unchanged monitor changes nothing. */
static void sess_monitor(struct session *s, const struct proto_msg *m)
{
	uint32_t i = m->u.monitor.index - 1; /* the decoder checked 1..count */

	if (s->mon_count == m->u.monitor.count && !strcmp(s->mon_name[i], m->u.monitor.name) &&
	    !strcmp(s->mon_command[i], m->u.monitor.command))
		return;
	s->mon_count = m->u.monitor.count;
	snprintf(s->mon_name[i], sizeof(s->mon_name[i]), "%s", m->u.monitor.name);
	snprintf(s->mon_command[i], sizeof(s->mon_command[i]), "%s", m->u.monitor.command);
	s->mon_gen++;
}

static struct sess_action sess_deliver(struct session *s, struct proto_msg *m, int64_t rx_ns)
{
	struct sess_action none = { .kind = SESS_ACT_NONE };

	switch (m->type) {
	case PROTO_PLAN: sess_plan(s, m); return none;
	case PROTO_GO: return sess_go(s, m);
	case PROTO_PING: sess_pong(s, m, rx_ns); return none;
	case PROTO_MONITOR: sess_monitor(s, m); return none;
	case PROTO_BYE:
		log_info("host said bye: %s", m->u.bye.reason);
		return (struct sess_action){ .kind = SESS_ACT_EXIT };
	case PROTO_ERROR:
		log_warn("host reports an error (step %" PRIu32 ", %s): %s", m->u.error.step,
			 m->u.error.code, m->u.error.text);
		return none;
	default:
		log_debug("ignored a %s message from the host", proto_type_name(m->type));
		return none;
	}
}

/* Where we are, again: the host may have lost a ready (or sent a go that we
 * dropped while resyncing). */
static void sess_announce(struct session *s)
{
	sess_hello(s);
	if (s->phase == SESS_WAITING)
		sess_ready(s);
}

struct sess_action sess_input(struct session *s, struct proto_msg *m, int64_t rx_ns)
{
	struct sess_action none = { .kind = SESS_ACT_NONE };
	enum proto_link_verdict v = proto_link_input(&s->link, m, &s->scratch);

	sess_flush_scratch_prio(s, false);
	s->q->gate_open = s->link.synced;
	switch (v) {
	case PROTO_LINK_DELIVER: return sess_deliver(s, m, rx_ns);
	case PROTO_LINK_SYNCED:
		log_info("link synced with the host");
		sess_announce(s);
		return none;
	case PROTO_LINK_CONSUMED:
		/* The host restarted its link and dropped what we sent before
		 * its sync; if ours is synced, nothing else will tell it again. */
		if (m->type == PROTO_SYNC && s->link.synced)
			sess_announce(s);
		return none;
	case PROTO_LINK_DROPPED:
	default: return none;
	}
}

void sess_step_started(struct session *s, int64_t mono_ns, int64_t late_ns,
		       const struct sess_start_timing *timing)
{
	struct proto_msg m = { .type = PROTO_STARTED };

	m.u.started.step = s->steps[s->cur].index;
	m.u.started.mono_ns = mono_ns;
	m.u.started.late_ns = late_ns;
	/* the agent read the go, then its child did, then it started */
	if (timing && timing->agent_go_ns > 0 && timing->agent_go_ns <= timing->child_go_ns &&
	    timing->child_go_ns <= mono_ns) {
		m.u.started.agent_go_ns = timing->agent_go_ns;
		m.u.started.child_go_ns = timing->child_go_ns;
		m.u.started.runq_ns = timing->runq_ns > 0 ? timing->runq_ns : 0;
	}
	sess_send(s, &m, OUTQ_KEEP, false);
}

void sess_sample(struct session *s, uint32_t step, int64_t mono_ns, const char *metric,
		 double value, const char *unit)
{
	struct proto_msg m = { .type = PROTO_SAMPLE };

	m.u.sample.step = step;
	m.u.sample.mono_ns = mono_ns;
	snprintf(m.u.sample.metric, sizeof(m.u.sample.metric), "%s", metric);
	m.u.sample.value = value;
	snprintf(m.u.sample.unit, sizeof(m.u.sample.unit), "%s", unit);
	sess_send(s, &m, OUTQ_DROP, false);
}

void sess_step_output(struct session *s, const char *data, size_t len)
{
	struct proto_msg m = { .type = PROTO_OUTPUT };

	m.u.output.step = s->steps[s->cur].index;
	m.u.output.data = (char *)data;
	m.u.output.len = len;
	sess_send(s, &m, OUTQ_DROP, false);
}

void sess_step_result(struct session *s, const char *metric, double value, const char *unit,
		      bool higher_is_better)
{
	struct proto_msg m = { .type = PROTO_RESULT };

	m.u.result.step = s->steps[s->cur].index;
	snprintf(m.u.result.metric, sizeof(m.u.result.metric), "%s", metric);
	m.u.result.value = value;
	snprintf(m.u.result.unit, sizeof(m.u.result.unit), "%s", unit);
	m.u.result.higher_is_better = higher_is_better;
	sess_send(s, &m, OUTQ_KEEP, false);
}

void sess_step_error(struct session *s, const char *code, const char *text)
{
	sess_error(s, s->steps[s->cur].index, code, text);
}

void sess_step_done(struct session *s, int64_t mono_ns, int32_t exit_status)
{
	struct proto_msg m = { .type = PROTO_DONE };

	m.u.done.step = s->steps[s->cur].index;
	m.u.done.mono_ns = mono_ns;
	m.u.done.exit_status = exit_status;
	sess_send(s, &m, OUTQ_KEEP, false);
	s->cur++;
	sess_enter_step(s);
}

void sess_monitor_output(struct session *s, uint32_t step, const char *monitor, const char *data,
			 size_t len)
{
	struct proto_msg m = { .type = PROTO_MONITOR_OUTPUT };

	m.u.monitor_output.step = step;
	snprintf(m.u.monitor_output.monitor, sizeof(m.u.monitor_output.monitor), "%s", monitor);
	m.u.monitor_output.data = (char *)data;
	m.u.monitor_output.len = len;
	sess_send(s, &m, OUTQ_DROP, false);
}

void sess_monitor_error(struct session *s, uint32_t step, const char *text)
{
	sess_error(s, step, "monitor", text);
}

void sess_bye(struct session *s, const char *reason)
{
	struct proto_msg m = { .type = PROTO_BYE };

	snprintf(m.u.bye.reason, sizeof(m.u.bye.reason), "%s", reason);
	sess_send(s, &m, OUTQ_KEEP, false);
}
