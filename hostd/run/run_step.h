/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where a participant is in its steps, owned by run_step.c: the step it
 * was released into, started and done, what it sent in it (results, raw
 * output, the raw output kept for a spec's parser), the budget of agent
 * error text it may show, and the steps it finished.  Opaque.
 *
 * No I/O, no log, no clock: each call returns what happened (a message out
 * of order, a result said twice, the output's limit crossed, text over its
 * budget) and the caller says it and decides.
 */
#ifndef LOCKSTEP_RUN_STEP_H
#define LOCKSTEP_RUN_STEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What one participant may push at us in one step before it counts as a
 * protocol violation (results) or gets cut (raw output). */
#define RUN_RESULTS_PER_STEP_MAX 256
#define RUN_OUTPUT_PER_STEP_MAX (8u << 20)
/* Agent error text hostd shows (log and manifest) per node: per step and
 * per run.  An agent says a few lines when something goes wrong; past
 * these the rest is counted, and said in one "suppressed N bytes" line. */
#define RUN_GUEST_TEXT_PER_STEP_MAX (16 * 1024)
#define RUN_GUEST_TEXT_PER_RUN_MAX (256 * 1024)
/* Bytes of one step's output a spec's parser reads (run_bench.c). */
#define RUN_PARSE_INPUT_MAX (1 << 20)

struct part_step;

struct part_step *part_step_new(void);
void part_step_free(struct part_step *s);

/* Released into step k: nothing started, sent or done in it yet. */
void part_step_release(struct part_step *s, uint32_t k);
/* The step it was released into last (0: none yet), done or not. */
uint32_t part_step_released(const struct part_step *s);
/* The step it runs: released into and not done (0: none). */
uint32_t part_step_running(const struct part_step *s);
/* Whether it said started for the step it was released into. */
bool part_step_has_started(const struct part_step *s);
/* Steps it said done for, in the whole run. */
uint32_t part_step_done_count(const struct part_step *s);

/* A message about step (started, result, output, done) must be about the
 * step it runs: true, else false (out of order or of step). */
bool part_step_matches(const struct part_step *s, uint32_t step);
/* It said started: 0, or -EALREADY when it did already in this step. */
int part_step_started(struct part_step *s);
/* It said done for the step it runs (part_step_matches first). */
void part_step_done(struct part_step *s);
/* The run ends with the step running: it counts as done, not as finished. */
void part_step_cut(struct part_step *s);

/* One more result in the step: 0, or -E2BIG past RUN_RESULTS_PER_STEP_MAX. */
int part_step_count_result(struct part_step *s);
/* Its metric's name, after part_step_count_result: 0, or -EEXIST when the
 * step had a result of that name. */
int part_step_result_name(struct part_step *s, const char *metric);

enum part_step_output {
	PART_STEP_OUTPUT_KEEP, /* store it */
	PART_STEP_OUTPUT_LAST, /* store it; the step's limit is reached with it */
	PART_STEP_OUTPUT_DROP, /* over RUN_OUTPUT_PER_STEP_MAX already */
};
/* len bytes of raw output in the step: whether they are stored. */
enum part_step_output part_step_output(struct part_step *s, size_t len);

/* Raw output kept for the step's parser, up to RUN_PARSE_INPUT_MAX; past
 * it the buffer is cut (and keeps what it had). */
void part_step_buffer(struct part_step *s, const char *data, size_t len);
/* What was kept ("" when nothing), its length, and whether it was cut. */
const char *part_step_buffered(const struct part_step *s, size_t *len, bool *cut);
bool part_step_buffer_cut(const struct part_step *s);
void part_step_buffer_drop(struct part_step *s);

/* Agent error text held back over a budget, to be said in one line:
 * bytes since step (bytes 0: nothing to say). */
struct part_step_held {
	uint64_t bytes;
	uint32_t step;
};
/* len bytes of agent error text at step (the step it is in): true when they
 * may be shown, false when over a budget (counted, held back).  At a new
 * step, *held is what was held back before it, to be said first (not while
 * the run's budget is spent: that waits for the end). */
bool part_step_text(struct part_step *s, uint32_t step, size_t len, struct part_step_held *held);
/* The run ends: what is still held back, to be said. */
struct part_step_held part_step_text_final(struct part_step *s);

#endif
