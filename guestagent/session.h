/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The agent's side of the protocol as a state machine, apart from the
 * channel's I/O: messages from the host go in, encoded lines go into an
 * outq, and what the caller must do (run a step, exit) comes back as an
 * action.  It reads CLOCK_MONOTONIC only to stamp pongs and to judge a go's
 * instant.  It logs (log.h, stderr) what it refuses or decides: the
 * agent's log.
 *
 *   no plan --plan--> waiting(k) --go(k)--> running(k) --done--> waiting(k+1)
 *                                                      ... --> finished
 *   bye from the host, at any time: exit.
 */
#ifndef GUESTAGENT_SESSION_H
#define GUESTAGENT_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "outq.h"
#include "proto.h"
#include "ptp.h"

/* A go more than this far ahead is refused: it would leave the agent deaf
 * for as long (it sleeps until the instant). */
#define SESS_GO_AHEAD_MAX (60 * 1000000000LL)

enum sess_phase {
	SESS_NO_PLAN,
	SESS_WAITING,  /* ready(k) sent, waiting for go(k) */
	SESS_RUNNING,  /* step k runs */
	SESS_FINISHED, /* every step done; waiting for bye */
};

struct sess_identity {
	char node[PROTO_NAME_MAX];
	char boot_id[PROTO_SHORT_MAX];
	char clocksource[PROTO_SHORT_MAX];
	char hostkey[PROTO_TEXT_MAX];
	char kernel[PROTO_KERNEL_MAX]; /* uname -r */
};

struct session {
	struct proto_link link;
	struct outq *q;
	struct proto_buf scratch;
	struct sess_identity id;
	enum sess_phase phase;
	struct proto_step *steps; /* the plan; owns the steps' commands */
	uint32_t nsteps;
	uint32_t cur; /* steps[cur] is waited for or runs */
	/* a plan arriving in parts: the first part_n of part_total steps
	 * (owning their commands) */
	struct proto_step *part_steps;
	uint32_t part_n, part_total;
	bool started_any; /* a step has run: the plan is fixed */
	uint64_t nonce_seq;
	bool sync_resent;	      /* our pending sync was sent again already */
	uint32_t monitor_interval_ms; /* the plan's; 0: monitors off */
	/* external monitors, from the host's monitor messages: the set is
	 * monitors 1..mon_count; mon_gen changes whenever it does */
	char mon_name[PROTO_MONITORS_MAX][PROTO_NAME_MAX];
	char mon_command[PROTO_MONITORS_MAX][PROTO_TEXT_MAX];
	uint32_t mon_count;
	uint32_t mon_gen;
	/* the guest's KVM PTP clock, or NULL: each pong carries a reading */
	struct ptp_clock *ptp;
};

enum sess_action_kind {
	SESS_ACT_NONE,
	SESS_ACT_RUN,  /* run step (at at_ns if not 0), then sess_step_started */
	SESS_ACT_EXIT, /* the host said bye: stop the step, exit 0 */
};

struct sess_action {
	enum sess_action_kind kind;
	const struct proto_step *step; /* RUN: valid until sess_step_done */
	int64_t at_ns;
};

/* seed: random bits for the sync nonces */
void sess_init(struct session *s, struct outq *q, const struct sess_identity *id, uint64_t seed);
void sess_free(struct session *s);

/* A new connection (or the first): restart the link. */
void sess_connected(struct session *s);
/* A message from the host; rx_ns is CLOCK_MONOTONIC when its bytes were read. */
struct sess_action sess_input(struct session *s, struct proto_msg *m, int64_t rx_ns);
/* The host sent 0xFF. */
void sess_peer_reset(struct session *s);
/* The host sent a line the decoder refused. */
void sess_bad_input(struct session *s, int err, const char *detail);

/* How the start came about, on the agent's clock (0 or -1: unknown, not
 * sent): when the agent read the go, when the step's child read it from
 * the agent, and the child's time runnable but not running from then to
 * its stamp. */
struct sess_start_timing {
	int64_t agent_go_ns, child_go_ns, runq_ns;
};

/* The step of the last RUN action began (mono_ns) how late after its go's
 * instant (late_ns, 0 if on time or none); timing: NULL, or what is known
 * of how (only an order that can be true is sent). */
void sess_step_started(struct session *s, int64_t mono_ns, int64_t late_ns,
		       const struct sess_start_timing *timing);
void sess_step_output(struct session *s, const char *data, size_t len);
void sess_step_result(struct session *s, const char *metric, double value, const char *unit,
		      bool higher_is_better);
/* A problem with the running step the host should see in its log. */
void sess_step_error(struct session *s, const char *code, const char *text);
/* The step ended; sends done, then ready for the next step if any. */
void sess_step_done(struct session *s, int64_t mono_ns, int32_t exit_status);

/* One monitor sample; step 0 when none ran over the sampled interval.
 * Dropped first when the host stops reading. */
void sess_sample(struct session *s, uint32_t step, int64_t mono_ns, const char *metric,
		 double value, const char *unit);

/* A piece of an external monitor's output (valid UTF-8, at most
 * PROTO_OUTPUT_MAX bytes) for step.  Dropped first, like samples. */
void sess_monitor_output(struct session *s, uint32_t step, const char *monitor, const char *data,
			 size_t len);
/* Something about an external monitor the host should see (it dies, it
 * cannot start); step 0 when not about one. */
void sess_monitor_error(struct session *s, uint32_t step, const char *text);

/* We are leaving (a signal): tell the host why. */
void sess_bye(struct session *s, const char *reason);

/* The step index to report in hello. */
uint32_t sess_current_step(const struct session *s);

#endif
