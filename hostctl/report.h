/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hostctl report: one HTML page (index.html) and its SVG images in a
 * folder: the comparison table, per-guest box plots of each run side by
 * side, values per iteration, and a histogram of barrier skew, the plots
 * drawn by gnuplot.  Never logs: -errno with the message in e.
 */
#ifndef HOSTCTL_REPORT_H
#define HOSTCTL_REPORT_H

#include "compare.h"

/* The images of one (benchmark, metric) group, by its first row. */
struct report_group {
	size_t first, count;
	char box[32], iter[32], jain[32]; /* file names inside the folder */
	bool has_jain; /* some run has a fairness row: Jain per iteration drawn */
};

/* A benchmark swept over a parameter ("hackbench:groups=4", groups=8...):
 * one plot of a metric against the parameter, a line per run. */
struct report_sweep {
	char file[32];
	char *title; /* "hackbench time [s] against groups" */
};

struct report {
	const struct cmp_result *c;
	const char *dir;
	struct report_group *groups;
	size_t ngroups;
	bool has_skew; /* skew.svg and skew-steps.svg drawn: some run measured a skew */
	struct report_sweep *sweeps; /* filled by report_plot */
	size_t nsweeps;
};

int report_write(const struct cmp_result *c, const char *dir, const char *gnuplot, struct run_err *e);
/* report_plot.c: writes the data and the script into tmp, runs gnuplot. */
int report_plot(struct report *r, const char *tmp, const char *gnuplot, struct run_err *e);
/* report.c: index.html */
int report_html(const struct report *r, struct run_err *e);

#endif
