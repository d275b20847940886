/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The comparison options shared by compare and report. */
#ifndef HOSTCTL_CMP_OPTS_H
#define HOSTCTL_CMP_OPTS_H

#include "compare.h"

enum {
	CMP_OPT_TEST = 1000,
	CMP_OPT_ALPHA,
	CMP_OPT_CORRECTION,
	CMP_OPT_FAIL,
	CMP_OPT_FORCE,
	CMP_OPT_VARY,
	CMP_OPT_FAMILY,
	CMP_OPT_NOISE,
};

#define CMP_OPTS_DEFAULT                                                          \
	{                                                                         \
		.test = CMP_TEST_MWU, .alpha = 0.05, .holm = true, .noise_pct = 5 \
	}

#define CMP_OPTS_LONG                                                            \
	{ "test", required_argument, NULL, CMP_OPT_TEST },                       \
		{ "alpha", required_argument, NULL, CMP_OPT_ALPHA },             \
		{ "correction", required_argument, NULL, CMP_OPT_CORRECTION },   \
		{ "fail-on-regression", required_argument, NULL, CMP_OPT_FAIL }, \
		{ "force", no_argument, NULL, CMP_OPT_FORCE },                   \
		{ "vary", required_argument, NULL, CMP_OPT_VARY },               \
		{ "family", required_argument, NULL, CMP_OPT_FAMILY },           \
	{                                                                        \
		"noise-pct", required_argument, NULL, CMP_OPT_NOISE              \
	}

#define CMP_OPTS_HELP                                                                        \
	"  --test mann-whitney|welch Mann-Whitney U (default; exact below 50 per side\n"     \
	"                            without ties, else normal with tie and continuity\n"    \
	"                            correction) or Welch's t\n"                             \
	"  --alpha A                 significance level, 0 < A <= 0.5 (default 0.05)\n"      \
	"  --correction holm|none    Holm-Bonferroni over the primary rows of each pair\n"   \
	"                            (default holm)\n"                                       \
	"  --family primary|all      the rows Holm corrects over: primary (default: each\n"  \
	"                            benchmark's own metrics for the guests together,\n"     \
	"                            fairness and the host; guests' own rows, the agent's\n" \
	"                            elapsed and monitor summaries are secondary, on\n"      \
	"                            their raw p) or all\n"                                  \
	"  --vary NAME               a setting the comparison is about (h.conf/g.conf\n"     \
	"                            name, e.g. GUEST_COUNT): its difference is expected\n"  \
	"                            (repeatable; kernels always are)\n"                     \
	"  --force                   compare runs whose plan or guests differ, with a\n"     \
	"                            warning in every output (else refused, exit 1)\n"       \
	"  --noise-pct P             a step is noisy when some node's steal time, CPU\n"     \
	"                            pressure or vCPU delay over it exceeds P%% (default\n"  \
	"                            5); n says how many values came from noisy steps\n"     \
	"  --fail-on-regression PCT  exit 3 when a significant change for the worse\n"       \
	"                            exceeds PCT percent on any primary row\n"

/* 0 when opt was one of the above and arg was good; -EINVAL (said on
 * stderr) when bad; -ENOENT when opt is not one of these. */
int cmp_opts_parse(int opt, const char *arg, struct cmp_opts *o);

#endif
