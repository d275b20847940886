// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What a kernel engineer reads before any table (issue 15): the verdict in
 * words per pair, the failed steps by node, benchmark and reason, a header
 * per run (kernels, machine, dates, hostd, release, skew, failures) and how
 * the runs' settings differ.  Lines of plain text, shared by the text,
 * markdown and HTML printers.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out.h"
#include "xalloc.h"

static void push(struct out_lines *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void push(struct out_lines *l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	l->line = xrealloc(l->line, (l->n + 1) * sizeof(*l->line));
	l->line[l->n++] = xvasprintf(fmt, ap);
	va_end(ap);
}

void out_lines_free(struct out_lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->line[i]);
	free(l->line);
	memset(l, 0, sizeof(*l));
}

/* "a; b" grown by one item */
static void append(char **s, const char *item)
{
	char *t = xasprintf("%s%s%s", *s ? *s : "", *s ? "; " : "", item);

	free(*s);
	*s = t;
}

static const char *row_words(const struct cmp_row *r)
{
	return r->kind == CMP_ROW_GUESTS     ? "guests together"
	       : r->kind == CMP_ROW_FAIRNESS ? "fairness (Jain)"
					     : NULL;
}

static char *row_name(const struct cmp_result *c, const struct cmp_row *r)
{
	const char *w = row_words(r);

	return xasprintf("%s %s, %s", cmp_name(c, r->bench), cmp_name(c, r->metric),
			 w ? w : cmp_name(c, r->node));
}

void out_verdict(const struct cmp_result *c, size_t run, struct out_lines *l)
{
	char *better = NULL, *worse = NULL, *diff = NULL, *few = NULL, *missing = NULL;
	size_t same = 0, primary = 0;

	for (size_t i = 0; i < c->nrows; i++) {
		const struct cmp_row *r = &c->rows[i];
		const struct cmp_cell *x = &r->cells[run];
		char *name, *item;

		if (!r->primary)
			continue;
		primary++;
		name = row_name(c, r);
		switch (x->verdict) {
		case CMP_BETTER:
		case CMP_WORSE:
			/* a tiny significant change keeps its digits */
			item = xasprintf(fabs(x->change_pct) >= 0.01 ? "%s %+.2f%% (p %.2g)"
								     : "%s %+.2g%% (p %.2g)",
					 name, x->change_pct, x->p_adj);
			append(x->verdict == CMP_BETTER ? &better : &worse, item);
			free(item);
			break;
		case CMP_DIFFERENT:
			item = xasprintf("%s (p %.2g)", name, x->p_adj);
			append(&diff, item);
			free(item);
			break;
		case CMP_TOO_FEW: append(&few, name); break;
		case CMP_MISSING:
		case CMP_UNTESTABLE: append(&missing, name); break;
		default: same++;
		}
		free(name);
	}
	push(l, "%s against %s:", c->runs[run].name, c->runs[0].name);
	if (c->forced)
		push(l, "NOT COMPARABLE as they are: compared only because of --force (see the "
			"settings that differ)");
	if (worse)
		push(l, "significantly worse: %s", worse);
	if (better)
		push(l, "significantly better: %s", better);
	if (diff)
		push(l, "different, centre unchanged: %s", diff);
	if (!worse && !better && !diff && same)
		push(l, "no significant change in any of the %zu primary row%s tested", same,
		     same == 1 ? "" : "s");
	else if (!worse && !better && !diff)
		push(l, "no primary row could be tested (%zu primary row%s)", primary,
		     primary == 1 ? "" : "s");
	else if (same)
		push(l, "no significant change elsewhere (%zu other primary row%s)", same,
		     same == 1 ? "" : "s");
	if (few)
		push(l, "too few samples to decide: %s", few);
	if (missing)
		push(l, "not tested (missing from a run, or untestable): %s", missing);
	for (size_t j = 0; j < c->nruns; j++)
		if ((j == 0 || j == run) && c->noisy_steps[j])
			push(l,
			     "run %s has %zu noisy step%s (some node's steal time, CPU pressure or vCPU "
			     "delay over %g%%): n says how many values came from them",
			     c->runs[j].name, c->noisy_steps[j], c->noisy_steps[j] == 1 ? "" : "s",
			     c->opts.noise_pct);
	for (size_t j = 0; j < c->nruns; j++)
		if ((j == 0 || j == run) &&
		    (c->runs[j].failed_steps || c->runs[j].meta.nmanifest_failures))
			push(l,
			     "run %s had failures (listed below): the failed steps' nodes give no "
			     "number for them",
			     c->runs[j].name);
	free(better);
	free(worse);
	free(diff);
	free(few);
	free(missing);
}

/* Failure records grouped by (node, benchmark, reason), with their count. */
void out_failures(const struct cmp_result *c, size_t run, struct out_lines *l)
{
	const struct run *r = &c->runs[run];
	bool *done = xcalloc(r->failed_steps + 1, sizeof(*done));

	for (size_t i = 0; i < r->failed_steps; i++) {
		const struct run_failure *f = &r->failures[i];
		size_t n = 0;

		if (done[i])
			continue;
		for (size_t k = i; k < r->failed_steps; k++) {
			const struct run_failure *g = &r->failures[k];

			if (!done[k] && g->node == f->node && g->bench == f->bench &&
			    !strcmp(g->reason, f->reason)) {
				done[k] = true;
				n++;
			}
		}
		push(l, "%s: %s %s: %zu failed step%s%s: %s", r->name, cmp_name(c, f->node),
		     cmp_name(c, f->bench), n, n == 1 ? "" : "s", f->warmup ? " (warm-up)" : "",
		     f->reason);
	}
	for (size_t i = 0; i < r->meta.nmanifest_failures; i++)
		push(l, "%s: participant failure: %s", r->name, r->meta.manifest_failures[i]);
	free(done);
}

static const char *known(const char *s)
{
	return s ? s : "not recorded";
}

void out_header(const struct cmp_result *c, size_t run, struct out_lines *l)
{
	const struct run *r = &c->runs[run];
	const struct run_meta *m = &r->meta;
	const struct cmp_skew *s = &c->skew[run];
	char med[32], max[32];

	out_ns(med, sizeof(med), s->median_ns);
	out_ns(max, sizeof(max), s->max_ns);
	push(l, "%s (%s): %s%s%s, %s", r->name, run ? "new" : "base", r->status,
	     m->reason ? ": " : "", m->reason ? m->reason : "", r->path);
	if (m->guest_kernels)
		/* what the guests said they run, and the image they booted */
		push(l, "host kernel %s; guest kernel %s%s%s%s", known(m->kernel), m->guest_kernels,
		     m->guest_kernel ? " (booted from " : "",
		     m->guest_kernel ? m->guest_kernel : "", m->guest_kernel ? ")" : "");
	else
		push(l, "host kernel %s; guest kernel %s", known(m->kernel),
		     m->guest_kernel					? m->guest_kernel
		     : m->guest_kind && !strcmp(m->guest_kind, "local") ? "the host's (local guests)"
									: "not recorded");
	push(l, "host %s, CPU %s", known(m->hostname), known(m->cpu_model));
	if (m->guest_kind) {
		char count[24] = "?", vcpus[64] = "", mem[64] = "";

		if (m->guest_count >= 0)
			snprintf(count, sizeof(count), "%lld", (long long)m->guest_count);
		if (m->guest_vcpus > 0)
			snprintf(vcpus, sizeof(vcpus), ", %lld vCPUs each", (long long)m->guest_vcpus);
		if (m->guest_memory_mib > 0)
			snprintf(mem, sizeof(mem), ", %lld MiB each", (long long)m->guest_memory_mib);
		char iters[96];
		run_iterations_text(r, iters, sizeof(iters));
		push(l, "guests: %s %s%s%s; %s iterations", count, m->guest_kind, vcpus, mem, iters);
	}
	push(l, "from %s to %s; hostd %s; release %s", known(m->started), known(m->ended),
	     known(m->hostd_version), known(m->release));
	if (m->cluster_hosts)
		push(l, "cluster of hosts %s: every host's guests, a member's named <member>/<node>",
		     m->cluster_hosts);
	push(l, "barrier skew median %s, max %s over %zu steps", med, max, s->steps);
	if (s->hosts_measured) {
		char bound[32];

		out_ns(med, sizeof(med), s->hosts_median_ns);
		out_ns(max, sizeof(max), s->hosts_max_ns);
		out_ns(bound, sizeof(bound), s->hosts_bound_max_ns);
		push(l, "skew across hosts median %s, max %s over %zu steps, bound up to %s", med,
		     max, s->hosts_measured, bound);
	}
	if (!r->failed_steps && !m->nmanifest_failures)
		push(l, "failures: none");
	else
		push(l, "failures: %zu failed step%s, %zu participant failure%s%s", r->failed_steps,
		     r->failed_steps == 1 ? "" : "s", m->nmanifest_failures,
		     m->nmanifest_failures == 1 ? "" : "s",
		     r->dropped_samples ? "; their other samples (elapsed) left out" : "");
}

void out_diffs(const struct cmp_result *c, struct out_lines *l)
{
	for (size_t i = 0; i < c->ndiffs; i++)
		push(l, "%-8s %s", cmp_diff_kind_name(c->diffs[i].kind), c->diffs[i].what);
}

const char *out_forced_warning(const struct cmp_result *c)
{
	return c->forced ? "WARNING: these runs differ in their plan or guests (REFUSED lines "
			   "below); compared only because of --force: a change may be the "
			   "settings', not the kernel's"
			 : NULL;
}
