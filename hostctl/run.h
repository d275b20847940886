/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A results folder read back (docs/results.md, schema version 1): the
 * manifest's identity, every sample and every barrier's skew.  Names
 * (benchmarks, metrics, nodes) are interned in a dictionary shared by all
 * the runs of one comparison, so that an index means the same thing in
 * every run.  Never logs: errors come back as -errno with a message that
 * names the file, the line and the value.
 */
#ifndef HOSTCTL_RUN_H
#define HOSTCTL_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "results_format.h" /* RESULTS_SCHEMA_VERSION, what it reads */

/* Bounds on what a results folder may make us allocate. */
#define RUN_MANIFEST_MAX (16u << 20)
#define RUN_NDJSON_MAX (512u << 20)
#define RUN_LINE_MAX (1u << 20)
#define RUN_NAMES_MAX 100000u

struct run_err {
	char msg[4096]; /* a refusal lists every setting that differs */
};

void run_err_set(struct run_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

struct run_dict {
	char **names;
	size_t n, cap;
	/* open hash of indices + 1 into names, 0 = empty */
	uint32_t *slots;
	size_t nslots;
};

void run_dict_init(struct run_dict *d);
void run_dict_free(struct run_dict *d);
/* Index of name, interning it when new; -E2BIG past RUN_NAMES_MAX. */
int run_dict_intern(struct run_dict *d, const char *name);
/* Index of name or -1. */
int run_dict_find(const struct run_dict *d, const char *name);

enum run_better { RUN_BETTER_HIGHER = 1, RUN_BETTER_LOWER = -1 };

struct run_sample {
	uint32_t bench, metric, node;
	int64_t iteration;
	double value;
	int64_t step; /* the step that made it; -1 when the line has none */
};

/* A failure record of samples.ndjson: that node's step gave no numbers. */
struct run_failure {
	uint32_t node, bench; /* bench with its variant, as samples name it */
	int64_t iteration, step;
	bool warmup;
	char *reason;
};

/* Unit and direction of one (benchmark, metric), as the samples say. */
struct run_metric {
	uint32_t bench, metric;
	char *unit;
	enum run_better better;
	char *where; /* file:line of its first sample, for messages */
};

/* What the manifest and the saved configs say about a run: its header
 * (docs/hostctl.md) and what must match for two runs to compare.  Strings
 * are NULL and numbers -1 when the manifest lacks them. */
struct run_kv {
	char *key, *value; /* key: "g.conf HACKBENCH_LOOPS" */
};

struct run_meta {
	char *hostname, *kernel, *cpu_model, *started, *ended, *hostd_version, *release, *reason,
		*guest_kind, *guest_kernel;
	/* the kernel the guests' agents said they run on (participants[].kernel):
	 * "6.1.0-18-amd64" when all agree, else "guest-1 A, guest-2 B"; NULL
	 * when none said (an older hostd or agent) */
	char *guest_kernels;
	int64_t guest_count, guest_vcpus, guest_memory_mib;
	char **plan; /* distinct steps, iteration left out: "benchmark [variant] kind what" */
	size_t nplan;
	/* a cluster leader's folder: "a (leader), b, c", the hosts whose nodes
	 * it holds (manifest cluster.hosts); NULL otherwise */
	char *cluster_hosts;
	struct run_kv *conf; /* NAME=VALUE lines of config/h.conf and config/g.conf */
	size_t nconf;
	char **manifest_failures; /* failures[] in words: "guest-2 at step 3: ..." */
	size_t nmanifest_failures;
};

struct json_object;
/* Reads the header fields, plan and saved configs of run folder dir. */
void run_meta_load(struct run_meta *m, struct json_object *manifest, const char *dir);
void run_meta_free(struct run_meta *m);
/* The value of "h.conf NAME" or "g.conf NAME", or NULL. */
const char *run_meta_conf(const struct run_meta *m, const char *key);

struct run {
	char *name, *path, *status;
	int64_t iterations; /* the plan's: AUTO_MAX under MMTEST_ITERATIONS=auto */
	/* MMTEST_ITERATIONS=auto: rounds run and why they stopped (NULL
	 * otherwise) */
	int64_t auto_rounds;
	char *auto_stopped;
	/* node indices (dictionary) in the manifest's participant order */
	uint32_t *nodes;
	bool *node_is_host;
	size_t nnodes;
	struct run_sample *samples; /* sorted by bench, metric, node, iteration */
	size_t nsamples;
	struct run_metric *metrics; /* in order of first appearance */
	size_t nmetrics;
	/* barrier skew: every non-null skew_ns, in step order */
	double *skew_ns;
	size_t nskew, nsteps, steps_unstarted;
	double skew_bound_max_ns;
	/* a cluster leader's folder: each step's skew across every host's
	 * nodes (cluster.across_hosts of barriers.ndjson, docs/cluster.md) */
	double *hosts_skew_ns;
	size_t nhosts_skew;
	double hosts_skew_bound_max_ns;
	/* samples.ndjson lines that are not numbers to compare: failure
	 * records of steps (where their samples would be), and warm-ups */
	size_t failed_steps, warmup_samples;
	struct run_failure *failures; /* failed_steps of them, in file order */
	/* samples of a step that has a failure record for their node (the
	 * agent's elapsed of a benchmark that never ran): dropped, counted */
	size_t dropped_samples;
	struct run_meta meta;
};

/* "8" or, for an adaptive run, "6 (auto: converged, at most 30)". */
void run_iterations_text(const struct run *r, char *buf, size_t size);

/*
 * Finds a run: arg itself when it is a folder holding manifest.json, else
 * results_dir/arg.  The path found is stored in *path (new string).
 */
int run_locate(const char *arg, const char *results_dir, char **path, struct run_err *e);
int run_load(struct run *r, const char *path, struct run_dict *d, struct run_err *e);
void run_free(struct run *r);

bool run_is_host(const struct run *r, uint32_t node);
/* The (benchmark, metric) entry or NULL. */
const struct run_metric *run_metric_find(const struct run *r, uint32_t bench, uint32_t metric);
/* Samples of one (benchmark, metric, node) as a range [*first, *first + return). */
size_t run_samples_of(const struct run *r, uint32_t bench, uint32_t metric, uint32_t node,
		      size_t *first);
/* Samples of one (benchmark, metric), every node. */
size_t run_samples_metric(const struct run *r, uint32_t bench, uint32_t metric, size_t *first);
/* Whether a guest (not the host) has a failure record for this benchmark
 * and iteration (warm-ups aside): the iteration has no whole set of guests. */
bool run_guest_failed_in(const struct run *r, uint32_t bench, int64_t iteration);

#endif
