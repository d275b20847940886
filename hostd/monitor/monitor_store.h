/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where monitor samples go: every sample, as it comes, to
 * results/<run>/nodes/<node>/monitors/<group>.ndjson, and at the end of
 * each step a few summaries of the step per node into samples.ndjson
 * (steal, run delay, CPU pressure, vCPU time and run delay), so that
 * `hostctl compare` shows them like any other metric.
 *
 * The file a sample goes to is one of a fixed set (the metric's first
 * component when it is a group this module knows, else "other"): nothing a
 * guest sends picks a path.  A node writes at most MONITOR_STORE_NODE_MAX
 * bytes; then its samples are counted and dropped.
 *
 * Lines go to the results writer (results_append_monitor): the loop
 * never waits for a disk; the writer appends each line with one write(2)
 * and syncs each file once per batch, as it does samples.  Only the
 * node's monitors folder is made on the caller's thread, once, so that a
 * folder that cannot be made is an error at once.  Functions return 0 or
 * -errno.
 */
#ifndef LOCKSTEP_MONITOR_STORE_H
#define LOCKSTEP_MONITOR_STORE_H

#include <stdint.h>

#include "proto.h"

#define MONITOR_STORE_NODE_MAX (256ull << 20)

struct results;
struct monitor_store;

/* The store of a run whose folder r has open. */
struct monitor_store *monitor_store_new(struct results *r);
/* Syncs and closes every file; returns the first error met (0 if none).
 * Accepts NULL. */
int monitor_store_close(struct monitor_store *ms);

/*
 * One sample of node: m is a PROTO_SAMPLE (metric already a proto name),
 * host_ns its instant on hostd's clock (the caller converts the node's
 * mono_ns with its clock offset; equal for local guests).  -EINVAL for a
 * node name that is not a name or a value that is not finite, -EFBIG once
 * the node is over its limit, -ENOBUFS while the writer is behind by
 * RESULTS_MONITOR_QUEUED_MAX (both count as dropped), -errno when the
 * node's monitors folder cannot be made.  Write errors are the writer's
 * (results_error).
 */
int monitor_store_sample(struct monitor_store *ms, const char *node, const struct proto_msg *m,
			 int64_t host_ns);

/* The same for what hostd measures itself (host_sampler): no proto_msg. */
int monitor_store_put(struct monitor_store *ms, const char *node, uint32_t step, int64_t mono_ns,
		      int64_t host_ns, const char *metric, double value, const char *unit);

/* A piece of an external monitor's output for step of node, appended to
 * nodes/<node>/monitors/<monitor>-step-<step>.log.  monitor must be one of
 * monitor_ext_names (-EINVAL otherwise: a peer's string never names a
 * file); it counts against the node's limit like samples. */
int monitor_store_output(struct monitor_store *ms, const char *node, uint32_t step,
			 const char *monitor, const char *data, size_t len);

/* Step `step` of node ended: its summaries go to samples.ndjson (through
 * results_append_sample).  Returns how many lines it queued. */
unsigned monitor_store_step_done(struct monitor_store *ms, const char *node, uint32_t step,
				 const char *benchmark, uint32_t iteration);

/* Samples dropped for node (over its limit), for the manifest. */
uint64_t monitor_store_dropped(const struct monitor_store *ms, const char *node);

/* Names hostd measures itself (the vCPU threads' libvirt stats, vcpu.*)
 * and the names of the step summaries: a guest may not send them. */
bool monitor_store_name_reserved(const char *metric);

#endif
