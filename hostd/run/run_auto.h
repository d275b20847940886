/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Adaptive iterations on the loop: the values of each series as they are
 * written, and after each round whether the run stops (auto_iter.c's rule).
 * Values come per node, metric, benchmark and sweep point, warm-ups left
 * out; a step with a failure record on a node gives that node no value for
 * it; the agent's "elapsed" is judged only where the step has no metric of
 * its own (a COMMAND_ step).  The series judged are the primary ones of
 * hostctl compare: per benchmark, sweep point and metric, the guests taken
 * together (each step's mean over the guests that ran it), their fairness
 * (each step's Jain index, with two guests or more) and the host's own.  Knows nothing of struct run: run.c and
 * run_bench.c feed it and act on its answer.
 */
#ifndef LOCKSTEP_RUN_AUTO_H
#define LOCKSTEP_RUN_AUTO_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auto_iter.h"

struct run_auto;

/* steps_per_round: the plan's steps in one pass over its benchmarks. */
/* is_host[node]: the node is the host (copied). */
struct run_auto *run_auto_new(const struct auto_iter_rule *rule, uint32_t steps_per_round,
			      size_t nodes, const bool *is_host);
void run_auto_free(struct run_auto *a); /* accepts NULL */

/* A value of node's metric in step; series names the benchmark and its
 * sweep point ("hackbench-process-pipes groups=4"). */
void run_auto_value(struct run_auto *a, size_t node, uint32_t step, const char *series,
		    const char *metric, double value);
/* node's step left a failure record: none of its values of it count. */
void run_auto_failed(struct run_auto *a, size_t node, uint32_t step);

/* The barrier of step is complete: true when the run ends here instead of
 * releasing it (step is the first of a round, and the rounds before it
 * satisfy the rule).  in_run[node]: the node is still in the run (a node
 * gone is not waited for). */
bool run_auto_stop_before(struct run_auto *a, uint32_t step, const bool *in_run);
/* Rounds done, as of the last judgement. */
uint32_t run_auto_rounds(const struct run_auto *a);
/* A line for the log: "after 7 rounds: every series within 3%" */
const char *run_auto_summary(const struct run_auto *a);
/* The manifest's auto_iterations: the rule, the rounds, why it stopped,
 * and per primary series ("of": guests, fairness or host) the count of
 * values, the median and the interval reached. */
json_object *run_auto_json(const struct run_auto *a);

#endif
