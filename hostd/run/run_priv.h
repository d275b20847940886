/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The state of a run, shared by the seven run*.c files that include it:
 * run.c (the loop and the coordinator), run_messages.c (the agents'
 * messages), run_launch.c (participants up and down), run_records.c
 * (barriers.ndjson), run_bench.c (samples and failure records),
 * run_manifest.c and run_status.c.  A participant's clock and step are not
 * shared: run_clock.c and run_step.c own them (run_clock.h, run_step.h),
 * and its launch is run_launch.c's (struct part_launch); each is reached
 * through functions, never through its fields. */
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
#include "run_clock.h"
#include "run_step.h"
#include "sysfacts.h"
#include "virt_conn.h"
#include "virt_guest.h"

#define RUN_EVENTS_MAX 1000
/* Flags of a node in a barrier record (barriers.ndjson "flags"). */
#define RUN_FLAG_START_IMPLAUSIBLE 1u /* its start stamp is outside what the host saw */
#define RUN_FLAG_OFFSET_JUMP 2u	      /* its clock offset jumped beyond its bounds */
/* How long agents get to leave after bye before SIGKILL. */
#define RUN_BYE_GRACE_MS 3000
/* A scheduled release needs every clock known this well; else that barrier
 * is released immediately, with a warning. */
#define RUN_CLOCK_BOUND_MAX_NS (5 * 1000 * 1000LL)
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
	/* its agent process or libvirt guest, push and fetch (run_launch.c) */
	struct part_launch *launch;

	/* the agent's clock: shared for processes on the host, estimated by
	 * ping/pong (or KVM PTP) for guests before they get their plan */
	struct part_clock *clock; /* run_clock.h */

	bool hello_seen;
	bool failed;
	/* where it is in its steps: released, started, done, what it sent */
	struct part_step *step; /* run_step.h */
	char agent_version[PROTO_SHORT_MAX];
	char boot_id[PROTO_SHORT_MAX];
	char clocksource[PROTO_SHORT_MAX];
	char kernel[PROTO_KERNEL_MAX]; /* the agent's uname -r; "" from an older agent */
};

/* The barrier record of the step released last, written once every
 * participant released into it has started (or left). */
struct step_record {
	uint32_t step;	       /* 0: none pending */
	int64_t release_at_ns; /* scheduled: the common instant; 0: immediate */
	int64_t go_first_ns, go_last_ns, last_ready_ns;
	int64_t *ready_ns;   /* per participant, 0: not released */
	int64_t *started_ns; /* per participant, 0: not yet */
	int64_t *late_ns;
	struct start_timing *timing; /* per participant, start_ns 0: none or not believed */
	unsigned *flags;	     /* per participant, RUN_FLAG_* */
	int64_t *claimed_ns; /* per participant, an implausible start stamp on the host's clock */
	bool *timing_warned; /* per participant, for the run: said once that its start
			      * timing is not believed */
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

	/* libvirt, hostd's SSH key, guests coming up (run_launch.c) */
	struct run_launch *launch;
	bool launch_done; /* every participant was started (or failed) */

	enum run_status status;
	bool finishing;
	char reason[512];
	json_object *failures, *events;
	bool warned_big_monitors; /* said once that a node's samples hit their limit */
	bool warned_immediate;	  /* said once why a scheduled release fell back */
	int64_t lead_ns;	  /* the lead of scheduled releases, learnt */
	unsigned events_dropped;
	uint64_t samples_written;
	uint64_t step_failures; /* failure records written: the run is degraded */
	int64_t started_mono_ns, first_release_ns; /* for the progress line's times */
	int rtprio_held;	   /* the SCHED_FIFO priority a release ran at; 0: none */
	bool warned_rtprio;	   /* said once that the kernel refused it */
	uv_timer_t go_timer;	   /* the go re-send of the step released last */
	bool go_confirm;	   /* the bound passed: look once more after pending input */
	struct go_watch *go_watch; /* who got a go and has not started (go_watch.h) */
	/* MMTEST_ITERATIONS=auto: the series and the stopping rule; NULL
	 * otherwise */
	struct run_auto *autoit;
	uint32_t last_step;	     /* the plan's last, or where adaptive iterations stopped */
	struct run_cluster *cluster; /* CLUSTER_*: the other hosts (run_cluster.h); NULL: none */
	struct run_crec *crec; /* CLUSTER_*: the records to or from them (run_cluster_records.h) */
};

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
/* The run's and every participant's launch (struct run_launch, struct
 * part_launch: run_launch.c's alone), after r->p[] is made;
 * run_launch_fini lets them go. */
void run_launch_init(struct run *r);
/* The run opened libvirt (it has libvirt guests). */
bool run_launch_uses_libvirt(const struct run *r);
/* The manifest's "libvirt" (connection, accelerator): a new reference, or
 * NULL without libvirt. */
json_object *run_launch_libvirt_json(struct run *r);
/* Its agent process on the host, killed (SIGKILL); whether it still runs. */
void run_launch_kill(struct participant *p);
bool run_launch_agent_running(const struct participant *p);
/* A libvirt guest's domain once it exists, else NULL. */
virDomainPtr run_launch_domain(const struct participant *p);
/* How its agent process ended ("exited with status 1"), else NULL. */
const char *run_launch_exit(const struct participant *p);
/* The manifest's "libvirt" and "harness" of a libvirt guest, into o. */
void run_launch_json(json_object *o, const struct participant *p);
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

/* run_records.c */
/* The pending record's arrays, for r->n participants; and let go. */
void run_record_init(struct run *r);
void run_record_fini(struct run *r);
void run_record_reset(struct run *r, uint32_t step);
/* p's start or clock is flagged (RUN_FLAG_*) in the pending record. */
bool run_record_flagged(const struct run *r, const struct participant *p, unsigned flag);
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

/* run_bench.c: steps of benchmark specs, parsed on the host */
void run_bench_output(struct run *r, struct participant *p, uint32_t step, const char *data,
		      size_t len);
/* The step ended with exit_status: its metrics, or a failure record. */
void run_bench_done(struct run *r, struct participant *p, uint32_t step, int exit_status);
/* The step will never end (timeout, the participant failed, the run
 * ended): its failure record, whatever kind of step it was. */
void run_bench_lost(struct run *r, struct participant *p, uint32_t step, const char *why);
/* A result's sample in samples.ndjson (and its value for adaptive
 * iterations). */
void run_write_sample(struct run *r, struct participant *p, const struct proto_msg *m);
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
