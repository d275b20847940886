/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A comparison of runs: the first is the base, each other one is compared
 * with it.  One row per (benchmark, metric, node), one for the guests taken
 * together (their mean per iteration) and one for fairness across guests
 * (Jain's index per iteration).  Holm's correction runs over the tested
 * rows of each (base, new) pair.  The output modules only print this.
 */
#ifndef HOSTCTL_COMPARE_H
#define HOSTCTL_COMPARE_H

#include "run.h"
#include "stats.h"

enum cmp_test_kind { CMP_TEST_MWU, CMP_TEST_WELCH };

#define CMP_VARY_MAX 16

struct cmp_opts {
	enum cmp_test_kind test;
	double alpha;
	bool holm;
	bool fail_set;
	double fail_pct;
	/* runs that differ in what must match are compared anyway, warned */
	bool force;
	/* every row in the Holm family, as before issue 15 */
	bool family_all;
	/* a step is noisy when some node's steal_pct, cpu_pressure or
	 * vcpu_delay_pct over it exceeds this (percent) */
	double noise_pct;
	/* settings (config names) the comparison is about: differences
	 * expected; the strings are the caller's and must outlive the result */
	const char *vary[CMP_VARY_MAX];
	size_t nvary;
};

enum cmp_kind { CMP_ROW_NODE, CMP_ROW_GUESTS, CMP_ROW_FAIRNESS };

enum cmp_verdict {
	CMP_BASE,	/* the base run's own cell */
	CMP_BETTER,	/* significant, in the metric's good direction */
	CMP_WORSE,	/* significant, in the bad direction */
	CMP_NO_CHANGE,	/* not significant: "~" */
	CMP_DIFFERENT,	/* significant, but the centre did not move */
	CMP_TOO_FEW,	/* the test cannot decide with these sizes */
	CMP_MISSING,	/* no samples in this run or in the base */
	CMP_UNTESTABLE, /* e.g. Welch with two different constants */
};

const char *cmp_verdict_name(enum cmp_verdict v);

struct cmp_cell {
	bool present;
	double *values; /* the row's values in this run (fairness: Jain per iteration) */
	size_t n;
	struct stats_desc d;
	double fair_cv, fair_maxmin; /* fairness rows: medians over iterations, NAN if none */
	size_t noisy; /* values from noisy steps (node rows) or iterations (guests, fairness) */
	/* against the base (cells of runs 1..): */
	enum cmp_verdict verdict;
	bool tested, significant, regression;
	struct stats_test t;
	double change_pct, p_adj;
	char why[200]; /* in words, for too few, missing, untestable */
};

struct cmp_row {
	enum cmp_kind kind;
	uint32_t bench, metric, node; /* node: CMP_ROW_NODE only */
	const char *unit;
	enum run_better better;
	/* in the Holm family; a secondary row (a guest's own row, the agent's
	 * elapsed beside a benchmark's metrics) is decided on its raw p */
	bool primary;
	struct cmp_cell *cells; /* one per run */
};

/* How a run differs from the base in what makes runs comparable. */
enum cmp_diff_kind {
	CMP_DIFF_EXPECTED, /* what the comparison is about: kernels, --vary NAME */
	CMP_DIFF_REFUSED,  /* plan, guests: refused unless --force */
	CMP_DIFF_SHOWN,	   /* other settings: shown, not refused */
};

struct cmp_diff {
	size_t run; /* the run that differs from the base */
	enum cmp_diff_kind kind;
	char *what; /* "guest_count: a 2, b 4" */
};

struct cmp_skew {
	size_t steps, measured, unstarted;
	size_t failed_steps;			/* failure records in samples.ndjson */
	double median_ns, max_ns, bound_max_ns; /* NAN when nothing measured */
	/* across hosts (a cluster leader's folder): hosts_measured 0 else */
	size_t hosts_measured;
	double hosts_median_ns, hosts_max_ns, hosts_bound_max_ns;
};

struct cmp_result {
	const struct run_dict *dict;
	const struct run *runs;
	size_t nruns;
	struct cmp_opts opts;
	struct cmp_row *rows;
	size_t nrows;
	struct cmp_skew *skew; /* per run */
	size_t *family;	       /* per run: tests in its Holm family */
	size_t *left_out;      /* per run: iterations of guests (mean)/fairness left out */
	size_t *noisy_steps;   /* per run: steps flagged noisy */
	bool **noisy;	       /* per run: noisy[step], for steps below nnoisy[run] */
	size_t *nnoisy;
	struct cmp_diff *diffs;
	size_t ndiffs;
	bool forced; /* some difference was refused, and --force compares anyway */
	char **notes;
	size_t nnotes;
	bool regression;
};

/* -EINVAL with a message in e when the runs cannot be compared. */
int cmp_build(struct cmp_result *c, const struct run *runs, size_t nruns, const struct run_dict *d,
	      const struct cmp_opts *o, struct run_err *e);
void cmp_free(struct cmp_result *c);
/* A monitor's step summary (steal_pct, run_delay, ...): a secondary row. */
bool cmp_monitor_metric(const char *metric);
/* compare_fit.c: fills c->diffs; -EINVAL with the differences in e when
 * some would be refused and o->force is not set. */
int cmp_fit(struct cmp_result *c, struct run_err *e);
/* The words for a kind of difference: "expected", "REFUSED", "differs". */
const char *cmp_diff_kind_name(enum cmp_diff_kind k);
const char *cmp_name(const struct cmp_result *c, uint32_t i);
/* "guest-1", "guests", "fairness" */
const char *cmp_row_label(const struct cmp_result *c, const struct cmp_row *r);

#endif
