// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Whether runs may be compared at all (issue 15): 200 loops against 400
 * loops, or two TCG guests against four local ones, is not a kernel's
 * doing.  Each run is set beside the base: what the comparison is about
 * (the host's and the guests' kernels, settings named with --vary) is
 * expected; the plan and the guests (kind, count, vCPUs, memory) must match
 * or the comparison is refused unless --force; every other setting that
 * differs in the saved configs is shown.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "xalloc.h"

const char *cmp_diff_kind_name(enum cmp_diff_kind k)
{
	return k == CMP_DIFF_EXPECTED ? "expected" : k == CMP_DIFF_REFUSED ? "REFUSED" : "differs";
}

static void add(struct cmp_result *c, size_t run, enum cmp_diff_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void add(struct cmp_result *c, size_t run, enum cmp_diff_kind kind, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	c->diffs = xrealloc(c->diffs, (c->ndiffs + 1) * sizeof(*c->diffs));
	c->diffs[c->ndiffs++] = (struct cmp_diff){ run, kind, xvasprintf(fmt, ap) };
	va_end(ap);
}

static bool varied(const struct cmp_opts *o, const char *name)
{
	for (size_t i = 0; i < o->nvary; i++)
		if (!strcasecmp(o->vary[i], name))
			return true;
	return false;
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static const char *or_unset(const char *s)
{
	return s ? s : "(not recorded)";
}

static void fmt_int(char *buf, size_t len, int64_t v)
{
	if (v < 0)
		snprintf(buf, len, "(not recorded)");
	else
		snprintf(buf, len, "%lld", (long long)v);
}

/* A guest setting that must match: refused unless the user varies it
 * (by its config name or by the manifest's). */
static void must_match(struct cmp_result *c, size_t j, const char *field, const char *conf_name,
		       int64_t a, int64_t b)
{
	char sa[32], sb[32];

	if (a == b)
		return;
	fmt_int(sa, sizeof(sa), a);
	fmt_int(sb, sizeof(sb), b);
	/* a manifest from before the field was written: not known to differ */
	add(c, j,
	    varied(&c->opts, conf_name) || varied(&c->opts, field) ? CMP_DIFF_EXPECTED
	    : a < 0 || b < 0					   ? CMP_DIFF_SHOWN
								   : CMP_DIFF_REFUSED,
	    "%s (%s): %s %s, %s %s", field, conf_name, c->runs[0].name, sa, c->runs[j].name, sb);
}

static bool in_plan(const struct run_meta *m, const char *sig)
{
	for (size_t i = 0; i < m->nplan; i++)
		if (!strcmp(m->plan[i], sig))
			return true;
	return false;
}

/* Steps of a that b lacks, "; "-separated, or NULL. */
static char *plan_only(const struct run_meta *a, const struct run_meta *b)
{
	char *s = NULL;

	for (size_t i = 0; i < a->nplan; i++) {
		if (in_plan(b, a->plan[i]))
			continue;
		char *t = xasprintf("%s%s%s", s ? s : "", s ? "; " : "", a->plan[i]);

		free(s);
		s = t;
	}
	return s;
}

/* Config lines that differ; whether one of them is varied. */
static bool conf_diff(struct cmp_result *c, size_t j)
{
	const struct run_meta *a = &c->runs[0].meta, *b = &c->runs[j].meta;
	bool any_varied = false;

	for (int pass = 0; pass < 2; pass++) {
		const struct run_meta *x = pass ? b : a, *y = pass ? a : b;

		for (size_t i = 0; i < x->nconf; i++) {
			const char *key = x->conf[i].key, *name = strchr(key, ' ') + 1;
			const char *vx = run_meta_conf(x, key), *vy = run_meta_conf(y, key);
			bool v = varied(&c->opts, name);

			/* each key once: at its last line, and from b only when a lacks it */
			if (vx != x->conf[i].value || same_str(vx, vy) || (pass && vy))
				continue;
			any_varied |= v;
			add(c, j, v ? CMP_DIFF_EXPECTED : CMP_DIFF_SHOWN, "%s: %s %s, %s %s", key,
			    c->runs[0].name, pass ? "(unset)" : vx, c->runs[j].name,
			    pass ? vx
			    : vy ? vy
				 : "(unset)");
		}
	}
	return any_varied;
}

static void fit_one(struct cmp_result *c, size_t j)
{
	const struct run_meta *a = &c->runs[0].meta, *b = &c->runs[j].meta;
	const char *na = c->runs[0].name, *nb = c->runs[j].name;
	char *only_a, *only_b;
	bool conf_varied;

	if (!same_str(a->kernel, b->kernel))
		add(c, j, CMP_DIFF_EXPECTED, "host kernel: %s %s, %s %s", na, or_unset(a->kernel),
		    nb, or_unset(b->kernel));
	if (!same_str(a->guest_kernel, b->guest_kernel))
		add(c, j, CMP_DIFF_EXPECTED, "guest kernel: %s %s, %s %s", na,
		    or_unset(a->guest_kernel), nb, or_unset(b->guest_kernel));
	if (!same_str(a->guest_kernels, b->guest_kernels))
		add(c, j, a->guest_kernels && b->guest_kernels ? CMP_DIFF_EXPECTED : CMP_DIFF_SHOWN,
		    "guest kernel (running): %s %s, %s %s", na, or_unset(a->guest_kernels), nb,
		    or_unset(b->guest_kernels));
	if (!same_str(a->guest_kind, b->guest_kind))
		add(c, j,
		    varied(&c->opts, "GUEST_KIND") || varied(&c->opts, "guest_kind") ? CMP_DIFF_EXPECTED
		    : !a->guest_kind || !b->guest_kind ? CMP_DIFF_SHOWN
						       : CMP_DIFF_REFUSED,
		    "guest_kind (GUEST_KIND): %s %s, %s %s", na, or_unset(a->guest_kind), nb,
		    or_unset(b->guest_kind));
	must_match(c, j, "guest_count", "GUEST_COUNT", a->guest_count, b->guest_count);
	must_match(c, j, "guest_vcpus", "GUEST_VCPUS", a->guest_vcpus, b->guest_vcpus);
	must_match(c, j, "guest_memory_mib", "GUEST_MEMORY_MIB", a->guest_memory_mib,
		   b->guest_memory_mib);
	conf_varied = conf_diff(c, j);
	only_a = plan_only(a, b);
	only_b = plan_only(b, a);
	if (only_a || only_b) {
		char *pa = only_a ? xasprintf("only in %s: %s", na, only_a) : NULL;
		char *pb = only_b ? xasprintf("only in %s: %s", nb, only_b) : NULL;

		/* a varied setting that differs explains a plan that differs */
		add(c, j, conf_varied ? CMP_DIFF_EXPECTED : CMP_DIFF_REFUSED, "plan: %s%s%s",
		    pa ? pa : "", pa && pb ? "; " : "", pb ? pb : "");
		free(pa);
		free(pb);
	}
	free(only_a);
	free(only_b);
	if (c->runs[0].iterations != c->runs[j].iterations)
		add(c, j, CMP_DIFF_SHOWN, "iterations: %s %lld, %s %lld", na,
		    (long long)c->runs[0].iterations, nb, (long long)c->runs[j].iterations);
	if (!same_str(a->hostname, b->hostname))
		add(c, j, CMP_DIFF_SHOWN, "hostname: %s %s, %s %s", na, or_unset(a->hostname), nb,
		    or_unset(b->hostname));
	if (!same_str(a->cpu_model, b->cpu_model))
		add(c, j, CMP_DIFF_SHOWN, "CPU model: %s %s, %s %s", na, or_unset(a->cpu_model), nb,
		    or_unset(b->cpu_model));
}

int cmp_fit(struct cmp_result *c, struct run_err *e)
{
	char *msg = NULL;
	bool refused = false;

	for (size_t j = 1; j < c->nruns; j++)
		fit_one(c, j);
	for (size_t i = 0; i < c->ndiffs; i++)
		refused |= c->diffs[i].kind == CMP_DIFF_REFUSED;
	if (!refused)
		return 0;
	if (c->opts.force) {
		c->forced = true;
		return 0;
	}
	/* every difference, so that the config diff explains the refusal */
	for (size_t i = 0; i < c->ndiffs; i++) {
		char *t = xasprintf("%s\n  %s against %s: %-8s %s", msg ? msg : "",
				    c->runs[c->diffs[i].run].name, c->runs[0].name,
				    cmp_diff_kind_name(c->diffs[i].kind), c->diffs[i].what);

		free(msg);
		msg = t;
	}
	run_err_set(e,
		    "these runs differ in what must match for a comparison to mean anything "
		    "(REFUSED below; compare anyway with --force, or name the setting the "
		    "comparison is about with --vary NAME):%s",
		    msg);
	free(msg);
	return -EINVAL;
}
