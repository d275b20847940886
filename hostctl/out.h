/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Printing a comparison: text, markdown, CSV and JSON (docs/hostctl.md). */
#ifndef HOSTCTL_OUT_H
#define HOSTCTL_OUT_H

#include <stdio.h>

#include "compare.h"

#define OUT_JSON_SCHEMA_VERSION 1

enum out_format { OUT_TEXT, OUT_JSON, OUT_CSV, OUT_MARKDOWN };

int out_parse_format(const char *s, enum out_format *f);
void out_print(FILE *f, enum out_format fmt, const struct cmp_result *c);
void out_text(FILE *f, const struct cmp_result *c);
void out_markdown(FILE *f, const struct cmp_result *c);

/* A table of strings, one per (benchmark, metric), shared by the text,
 * markdown and HTML printers. */
struct out_table {
	size_t ncols, nrows;
	char **cell; /* nrows * ncols, row-major; NULL prints empty */
};

#define OUT_COLS 10
extern const char *const out_headers[OUT_COLS];
/* Rows [first, first + *count) of c that share rows[first]'s metric. */
void out_group_table(const struct cmp_result *c, size_t first, size_t *count, struct out_table *t);
void out_table_free(struct out_table *t);
/* "benchmark metric [unit, higher is better]" */
char *out_group_title(const struct cmp_result *c, const struct cmp_row *r);
/* Fairness figures of a group in words, or NULL when it has no fairness row. */
char *out_fairness_words(const struct cmp_result *c, size_t first, size_t count);
char *out_test_words(const struct cmp_result *c);
/* 4 significant digits, SI prefix for large and tiny values */
void out_num(char *buf, size_t len, double v);
void out_ns(char *buf, size_t len, double ns);

/* Lines of words above the tables (out_summary.c). */
struct out_lines {
	char **line;
	size_t n;
};

void out_lines_free(struct out_lines *l);
/* The verdict of run (1..) against the base, primary rows only. */
void out_verdict(const struct cmp_result *c, size_t run, struct out_lines *l);
/* The run's failed steps by node, benchmark and reason; its manifest's failures. */
void out_failures(const struct cmp_result *c, size_t run, struct out_lines *l);
/* The run's header: kernels, machine, dates, hostd, release, skew, failures. */
void out_header(const struct cmp_result *c, size_t run, struct out_lines *l);
/* "expected|REFUSED|differs  what" per difference from the base. */
void out_diffs(const struct cmp_result *c, struct out_lines *l);
/* The warning of a --force comparison of runs that differ, or NULL. */
const char *out_forced_warning(const struct cmp_result *c);

#endif
