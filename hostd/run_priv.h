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
#include "experiment.h"
#include "local_guest.h"
#include "node.h"
#include "results.h"
#include "rtprio.h"
#include "run.h"
#include "sysfacts.h"

/* What one participant may push at us in one step before it counts as a
 * protocol violation (results) or gets cut (raw output). */
#define RUN_RESULTS_PER_STEP_MAX 256
#define RUN_OUTPUT_PER_STEP_MAX (8u << 20)
#define RUN_EVENTS_MAX 1000
/* How long agents get to leave after bye before SIGKILL. */
#define RUN_BYE_GRACE_MS 3000

enum run_status { RUN_RUNNING, RUN_COMPLETE, RUN_DEGRADED, RUN_ABORTED, RUN_INTERRUPTED };

struct participant {
	struct node node;
	struct local_guest proc;
	const char *kind; /* "local" or "host" */
	struct run *run;
	bool hello_seen;
	bool failed;
	uint32_t running_step;  /* released into it (0: none yet) */
	bool started;           /* sent started for running_step */
	bool done;              /* sent done for running_step */
	uint32_t results_in_step;
	uint64_t output_in_step;
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
	int64_t go_first_ns, go_last_ns, last_ready_ns;
	int64_t *ready_ns;   /* per participant, 0: not released */
	int64_t *started_ns; /* per participant, 0: not yet */
	int64_t *late_ns;
};

struct run {
	const struct experiment *exp;
	const struct run_options *opt;
	uv_loop_t *loop;
	uv_timer_t deadline_timer, grace_timer;
	uv_signal_t sigint, sigterm;
	struct results *results;
	struct sysfacts facts;
	char name[PROTO_NAME_MAX];
	char started_utc[40];

	size_t n;
	struct participant *p;
	struct barrier *barrier;
	struct step_record rec;
	struct proto_buf go_buf;
	struct rtprio rtprio;

	enum run_status status;
	bool finishing;
	char reason[512];
	json_object *failures, *events;
	unsigned events_dropped;
	uint64_t samples_written;
};

/* run_records.c */
void run_record_reset(struct run *r, uint32_t step);
void run_record_started(struct run *r, struct participant *p, int64_t host_ns, int64_t late_ns);
/* Writes the pending barrier record when nobody released into it is still
 * to start (force: write it anyway, with who is missing). */
void run_record_flush(struct run *r, bool force);
void run_write_sample(struct run *r, struct participant *p, const struct proto_msg *m);

/* run_manifest.c */
void run_manifest_write(struct run *r);
void run_add_failure(struct run *r, struct participant *p, uint32_t step, const char *reason);
void run_add_event(struct run *r, struct participant *p, uint32_t step, const char *what);
const char *run_status_name(enum run_status s);

#endif
