/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The state of a run, shared by run.c (the loop and the coordinator),
 * run_records.c (what goes into the results) and run_manifest.c. */
#ifndef LOCKSTEP_RUN_PRIV_H
#define LOCKSTEP_RUN_PRIV_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "barrier.h"
#include "clock_offset.h"
#include "experiment.h"
#include "go_watch.h"
#include "harness.h"
#include "host_monitor.h"
#include "host_proc.h"
#include "hoststate.h"
#include "local_guest.h"
#include "monitor_ext.h"
#include "monitor_store.h"
#include "node.h"
#include "release_lead.h"
#include "results.h"
#include "rtprio.h"
#include "run.h"
#include "start_timing.h"
#include "run_auto.h"
#include "sysfacts.h"
#include "virt_conn.h"
#include "virt_guest.h"

/* What one participant may push at us in one step before it counts as a
 * protocol violation (results) or gets cut (raw output). */
#define RUN_RESULTS_PER_STEP_MAX 256
#define RUN_OUTPUT_PER_STEP_MAX (8u << 20)
#define RUN_EVENTS_MAX 1000
/* Agent error text hostd shows (log and manifest) per node: per step and
 * per run.  An agent says a few lines when something goes wrong; past
 * these the rest is counted, and said in one "suppressed N bytes" line. */
#define RUN_GUEST_TEXT_PER_STEP_MAX (16 * 1024)
#define RUN_GUEST_TEXT_PER_RUN_MAX (256 * 1024)
/* Flags of a node in a barrier record (barriers.ndjson "flags"). */
#define RUN_FLAG_START_IMPLAUSIBLE 1u /* its start stamp is outside what the host saw */
#define RUN_FLAG_OFFSET_JUMP 2u       /* its clock offset jumped beyond its bounds */
/* How long agents get to leave after bye before SIGKILL. */
#define RUN_BYE_GRACE_MS 3000
/* Ping/pong exchanges per guest before its plan: the best of them sets the
 * guest's clock offset (bench: 16 exchanges take ~5 ms on a TCG guest). */
#define RUN_CLOCK_EXCHANGES 16
/* A scheduled release needs every clock known this well; else that barrier
 * is released immediately, with a warning. */
#define RUN_CLOCK_BOUND_MAX_NS (5 * 1000 * 1000LL)
/* PTP readings fitted: those whose window is within 1.5x the smallest plus
 * this (a cross-timestamp's window is tens of ns, a plain read's a few us) */
#define RUN_PTP_GOOD_SLACK_NS 2000
/* Automatic lead of a scheduled go: the writes and wake-ups on the host
 * (base + per participant), or a few of the slowest recent round trips to
 * a guest, whichever is longer; never more than the cap. */
#define RUN_LEAD_BASE_NS (300 * 1000LL)
#define RUN_LEAD_PER_NODE_NS (10 * 1000LL)
#define RUN_LEAD_RTTS 3
#define RUN_LEAD_MAX_NS (100 * 1000 * 1000LL)
/* learning it: release_lead.h */

enum run_status { RUN_RUNNING, RUN_COMPLETE, RUN_DEGRADED, RUN_ABORTED, RUN_INTERRUPTED };

enum part_kind {
	PART_LOCAL,   /* an agent process standing in for a guest */
	PART_HOST,    /* the host itself takes part */
	PART_LIBVIRT, /* a libvirt guest */
};

struct participant {
	struct node node;
	enum part_kind kind;
	size_t guest_index;
	struct run *run;
	bool launched;          /* its agent was started */

	/* PART_LOCAL and PART_HOST */
	struct local_guest proc;

	/* the agent's clock: shared for processes on the host, estimated by
	 * ping/pong for guests before they get their plan */
	bool clock_shared;
	bool clock_ready;       /* the first RUN_CLOCK_EXCHANGES are in */
	unsigned clock_attempts; /* pongs that answered our ping, possible or not */
	bool ping_inflight;
	struct clock_offset clock;
	uint64_t ping_seq;
	int64_t ping_t1;
	/* the guest's KVM PTP clock, read on each pong when it has one: the
	 * offset in use (method "ptp-kvm") once clock_ptp is set */
	struct clock_offset ptp;
	struct clock_realmono ping_realmono; /* the host's realtime - mono as the ping left */
	bool clock_ptp;
	unsigned ptp_refused;   /* readings outside the exchange they came with */
	int64_t ptp_real_behind_ns; /* the guest's realtime behind the host's, last reading */

	/* PART_LIBVIRT */
	struct virt_guest vm;
	bool vm_stopped;        /* nothing more to undo for it */
	struct harness_job push;
	bool push_busy;
	char *known_hosts;
	struct harness_job fetch; /* agent.log back, before it is stopped */
	bool fetch_busy, log_fetched;
	char *log_path;

	bool hello_seen;
	bool failed;
	uint32_t running_step;  /* released into it (0: none yet) */
	bool started;           /* sent started for running_step */
	bool timing_warned;     /* said once that its start timing is not believed */
	bool done;              /* sent done for running_step */
	uint32_t results_in_step;
	uint64_t result_names[RUN_RESULTS_PER_STEP_MAX]; /* hashes of the step's metrics */
	uint64_t output_in_step;
	/* agent error text shown (RUN_GUEST_TEXT_*) and held back */
	uint32_t text_step;
	uint64_t text_step_bytes, text_run_bytes, text_suppressed;
	uint32_t text_suppressed_step;
	/* for the pending barrier record (run_records.c) */
	unsigned rec_flags;     /* RUN_FLAG_* */
	int64_t rec_claimed_ns; /* an implausible start stamp, on the host's clock */
	bool clock_jumped;      /* since the last record: flag it in the next */
	/* the step's raw output, kept for its parser (run_bench.c) */
	char *bench_out;
	size_t bench_out_len;
	bool bench_out_cut;     /* more came than RUN_PARSE_INPUT_MAX */
	uint32_t steps_done;
	char agent_version[PROTO_SHORT_MAX];
	char boot_id[PROTO_SHORT_MAX];
	char clocksource[PROTO_SHORT_MAX];
	char exit_desc[64];
};

/* The barrier record of the step released last, written once every
 * participant released into it has started (or left). */
struct step_record {
	uint32_t step; /* 0: none pending */
	int64_t release_at_ns; /* scheduled: the common instant; 0: immediate */
	int64_t go_first_ns, go_last_ns, last_ready_ns;
	int64_t *ready_ns;   /* per participant, 0: not released */
	int64_t *started_ns; /* per participant, 0: not yet */
	int64_t *late_ns;
	struct start_timing *timing; /* per participant, start_ns 0: none or not believed */
};

struct run {
	const struct experiment *exp;
	const struct run_options *opt;
	uv_loop_t *loop;
	uv_timer_t deadline_timer, grace_timer;
	uv_signal_t sigint, sigterm;
	uv_timer_t run_timer; /* RUN_TIMEOUT */
	struct results *results;
	struct monitor_store *mon;   /* monitor samples, per node */
	struct host_monitor *hmon;   /* libvirt's vCPU stats of the guests */
	struct monitor_ext *ext;     /* external monitors on the host */
	struct host_proc *hproc;     /* the host's /proc, when no agent runs there */
	struct hoststate *hoststate; /* what to put back at the end */
	struct sysfacts facts;
	char name[PROTO_NAME_MAX];
	char started_utc[40];

	size_t n;
	struct participant *p;
	struct barrier *barrier;
	struct step_record rec;
	struct proto_buf go_buf;
	struct rtprio rtprio;

	/* libvirt guests */
	struct virt_conn *conn;
	struct virt_accel accel;
	char *key_path, *pubkey;
	json_object *libvirt_info; /* for the manifest */
	size_t launching;       /* libvirt guests not up yet */
	bool launch_done;       /* every participant was started (or failed) */

	enum run_status status;
	bool finishing;
	char reason[512];
	json_object *failures, *events;
	bool warned_big_monitors; /* said once that a node's samples hit their limit */
	bool warned_immediate;  /* said once why a scheduled release fell back */
	int64_t lead_ns;        /* the lead of scheduled releases, learnt */
	unsigned events_dropped;
	uint64_t samples_written;
	uint64_t step_failures; /* failure records written: the run is degraded */
	int64_t started_mono_ns, first_release_ns; /* for the progress line's times */
	int rtprio_held;	/* the SCHED_FIFO priority a release ran at; 0: none */
	bool warned_rtprio;	/* said once that the kernel refused it */
	uv_timer_t go_timer;    /* the go re-send of the step released last */
	bool go_confirm;        /* the bound passed: look once more after pending input */
	struct go_watch *go_watch; /* who got a go and has not started (go_watch.h) */
	/* MMTEST_ITERATIONS=auto: the series and the stopping rule; NULL
	 * otherwise */
	struct run_auto *autoit;
	uint32_t last_step;     /* the plan's last, or where adaptive iterations stopped */
	struct run_cluster *cluster; /* CLUSTER_*: the other hosts (run_cluster.h); NULL: none */
};

/* The clock offset in use for a participant, and its method's name. */
static inline const struct clock_offset *part_clock(const struct participant *p)
{
	return p->clock_ptp ? &p->ptp : &p->clock;
}

static inline const char *part_clock_method(const struct participant *p)
{
	return p->clock_shared ? "shared" : p->clock_ptp ? "ptp-kvm" : "ping";
}

/* run.c */
void run_fail(struct run *r, struct participant *p, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Every participant was started (or failed to): the barriers' clocks run. */
void run_launched(struct run *r);
/* While finishing: ends the loop once everything is down. */
void run_gone_check(struct run *r);
/* The cross-host barrier's answer for the step held (run_cluster.c): NULL
 * releases it, else why the run aborts. */
void run_cluster_decided(struct run *r, const char *why);

/* run.c, for run_messages.c */
/* p said started (its stamp on the host's clock, late_ns after a scheduled
 * instant): into the pending record, which may be complete then; if its go
 * was sent again before that, an event says so (its first go was lost,
 * unless the agent reports go-again for the step: then it only started
 * late). */
void run_on_started(struct run *r, struct participant *p, int64_t host_ns, int64_t late_ns);
/* The step a participant is in, or waits at, for failures and events. */
uint32_t run_part_step(struct run *r, const struct participant *p);
/* p waits at the barrier of step (the end barrier: nsteps + 1). */
void run_on_ready(struct run *r, struct participant *p, uint32_t step);

/* run_messages.c: the agents' messages and the channels' events */
extern const struct node_ops run_participant_ops;
void run_send_ping(struct run *r, struct participant *p);
/* The run ends: a step still running on a node gets its failure record,
 * and text held back is said. */
void run_agents_finish(struct run *r);

/* run_launch.c */
/* What can fail before any guest starts (hostd's SSH key, GUEST_SSH_KEY's
 * public key, the known-hosts folder), checked before the run folder is
 * made: 0, or -errno, said in the log.  r->p[].kind must be set. */
int run_launch_preflight(struct run *r);
int run_launch_all(struct run *r);
void run_launch_stop_all(struct run *r);
bool run_launch_gone(const struct run *r);
void run_launch_kill_all(struct run *r);
/* Everything is down: lets go of libvirt (the loop can end then). */
void run_launch_release(struct run *r);
void run_launch_fini(struct run *r);
const char *run_part_kind_name(enum part_kind k);
/* A participant failed: a libvirt guest is stopped now (its agent.log
 * fetched first when it can still answer), not at the end of the run. */
void run_launch_drop(struct run *r, struct participant *p);
/* Why a libvirt guest's channel closed, when something more is known than
 * the EOF (libvirt's connection was down), else NULL. */
const char *run_launch_closed_why(struct run *r, struct participant *p);
/* A libvirt guest that is paused: a sentence for the barrier deadline's
 * failure ("its domain was paused ..."), else false. */
bool run_launch_paused_why(struct run *r, struct participant *p, char *buf, size_t len);

/* run_clock.c */
/* Warns of a clocksource unfit for microsecond timing (a jiffies one also
 * makes every release immediate); run.c calls it at a participant's first
 * hello, before its first step. */
void run_clock_judge_source(struct run *r, struct participant *p);
/* A pong's KVM PTP reading: into p->ptp, or refused and said once. */
void run_clock_ptp_reading(struct run *r, struct participant *p, const struct proto_msg *m);

/* run_records.c */
void run_record_reset(struct run *r, uint32_t step);
/* p said started: host_ns is its stamp on the host's clock, checked
 * against the go's send and the receipt (p->node.rx_ns), widened by its
 * clock's bound; outside, it is flagged implausible and left out of skew.
 * The record may be complete then: the caller flushes it. */
void run_record_started(struct run *r, struct participant *p, int64_t host_ns, int64_t late_ns);
/* p's start timing (start_timing.h), its instants on the host's clock: kept
 * for the record when believable, else said once per node and dropped. */
void run_record_timing(struct run *r, struct participant *p, const struct start_timing *t);
/* What a barrier record written said of its release: a scheduled one's
 * latest go (max_late_ns after the instant) and the lead its start timing
 * needed (need_ns, 0: none told).  The writer only reports it; run.c learns
 * the lead of the releases after from it. */
struct record_lateness {
	bool scheduled;
	int64_t max_late_ns, need_ns;
};
/* Writes the pending barrier record when nobody released into it is still
 * to start (force: write it anyway, with who is missing): true, and *late
 * filled; false (nothing pending, or still waiting): *late is zero. */
bool run_record_flush(struct run *r, bool force, struct record_lateness *late);
void run_write_sample(struct run *r, struct participant *p, const struct proto_msg *m);

/* run_bench.c: steps of benchmark specs, parsed on the host */
#define RUN_PARSE_INPUT_MAX (1 << 20) /* bytes of one step's output a parser reads */
void run_bench_output(struct run *r, struct participant *p, uint32_t step, const char *data,
		      size_t len);
/* The step ended with exit_status: its metrics, or a failure record. */
void run_bench_done(struct run *r, struct participant *p, uint32_t step, int exit_status);
/* The step will never end (timeout, the participant failed, the run
 * ended): its failure record, whatever kind of step it was. */
void run_bench_lost(struct run *r, struct participant *p, uint32_t step, const char *why);
/* A failure record in samples.ndjson: where the numbers would have been. */
void run_write_failure(struct run *r, struct participant *p, uint32_t step, int exit_status,
		       const char *reason);

/* run_manifest.c */
void run_manifest_write(struct run *r);
void run_add_failure(struct run *r, struct participant *p, uint32_t step, const char *reason);
void run_add_event(struct run *r, struct participant *p, uint32_t step, const char *what);
const char *run_status_name(enum run_status s);

/* run_status.c: opt->status_file, when set */
void run_status_publish(struct run *r);

#endif
