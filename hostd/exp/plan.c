// SPDX-License-Identifier: GPL-2.0-or-later
#include "plan.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auto_settings.h"
#include "config_files.h"
#include "mmtests_names.h"
#include "xalloc.h"

#define ITERATIONS_MAX 1000
#define CPU_PROBE_UNITS_DEFAULT 2000000

const char *const plan_keys[] = {
	"MMTESTS",	    "BENCHMARKS", "MMTEST_ITERATIONS", "ITERATIONS", "CPU_PROBE_UNITS",
	AUTO_SETTINGS_KEYS, NULL,
};
const char *const plan_prefixes[] = { "COMMAND_", NULL };
static const char *const benchmark_names[] = { "MMTESTS", "BENCHMARKS", NULL };
static const char *const iteration_names[] = { "MMTEST_ITERATIONS", "ITERATIONS", NULL };

void plan_set_facts(struct config *c, const struct sysfacts *f)
{
	char v[32];
	snprintf(v, sizeof(v), "%d", f->num_logical_cpus);
	config_set_fact(c, "NUM_LOGICAL_CPUS", v);
	snprintf(v, sizeof(v), "%d", f->num_nodes);
	config_set_fact(c, "NUM_NODES", v);
	snprintf(v, sizeof(v), "%d", f->num_llcs);
	config_set_fact(c, "NUM_LLCS", v);
	snprintf(v, sizeof(v), "%" PRIu64, f->memtotal_bytes);
	config_set_fact(c, "MEMTOTAL_BYTES", v);
	config_set_include_sizes(c, f->memtotal_bytes, f->huge_pagesize, f->node_mem_bytes,
				 f->num_nodes < SYSFACTS_NODES_MAX ? (size_t)f->num_nodes
								   : SYSFACTS_NODES_MAX);
	config_set_node_elsewhere(c, f->elsewhere);
}

/* COMMAND_<NAME>: the benchmark name upper-cased, '-' and '.' as '_'. */
static char *command_key(const char *benchmark)
{
	char *k = xasprintf("COMMAND_%s", benchmark);
	for (char *p = k + 8; *p; p++)
		*p = (*p == '-' || *p == '.') ? '_' : (char)toupper((unsigned char)*p);
	return k;
}

/* Appends n steps to the plan, or fails when it would exceed the limit.  On
 * success the plan takes the steps' commands over (the caller frees only
 * its array); on failure the caller still owns them. */
static int append(struct node_plan *p, const struct proto_step *steps, const struct plan_step *info,
		  size_t n, const char *list_name, struct config_diag *d)
{
	if (p->nsteps + n > PROTO_STEPS_MAX) {
		config_diag_at(d, p->gconf, list_name, p->gconf_path,
			       "the plan would have more than %d steps: use fewer benchmarks, iterations "
			       "or sweep points",
			       PROTO_STEPS_MAX);
		return -EINVAL;
	}
	p->steps = xrealloc(p->steps, (p->nsteps + n) * sizeof(*p->steps));
	p->info = xrealloc(p->info, (p->nsteps + n) * sizeof(*p->info));
	memcpy(p->steps + p->nsteps, steps, n * sizeof(*steps));
	memcpy(p->info + p->nsteps, info, n * sizeof(*info));
	p->nsteps += (uint32_t)n;
	return 0;
}

static const struct bench_spec *find_spec(const struct node_plan *p, const char *word)
{
	for (size_t i = 0; i < p->nspecs; i++)
		if (bench_spec_answers_to(p->specs[i], word))
			return p->specs[i];
	return NULL;
}

/* Edit distance of two short names (a typo is one or two edits away). */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[PROTO_NAME_MAX + 1];
	if (la > PROTO_NAME_MAX || lb > PROTO_NAME_MAX)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* The name a spec (or cpu-probe) answers to that is nearest to word, when
 * it is near enough to be what was meant, or that word is the family of:
 * NULL otherwise. */
static const char *nearest_name(const struct node_plan *p, const char *word)
{
	const char *best = NULL;
	/* at most one edit away for a short name, two for a longer one */
	size_t bestd = (strlen(word) < 6 ? 1 : 2) + 1;
	if (distance(word, "cpu-probe") < bestd)
		best = "cpu-probe", bestd = distance(word, "cpu-probe");
	for (size_t i = 0; i < p->nspecs; i++) {
		const struct bench_spec *s = p->specs[i];
		for (size_t k = 0; k <= s->naliases; k++) {
			const char *name = k == 0 ? s->name : s->aliases[k - 1];
			size_t d = distance(word, name);
			if (d < bestd)
				best = name, bestd = d;
		}
	}
	/* a family's name without its variant ("hackbench" for
	 * hackbench-process-pipes): its first member, as the spec folder lists it */
	size_t n = strlen(word);
	for (size_t i = 0; !best && i < p->nspecs; i++)
		if (!strncmp(p->specs[i]->name, word, n) && p->specs[i]->name[n] == '-')
			best = p->specs[i]->name;
	return best;
}

/* A word no spec answers to: an MMTests benchmark lockstep lacks, or a typo
 * of one it has.  One line; never "define a command", which misleads a
 * user who meant MMTests' benchmark. */
static void unknown_word(const struct node_plan *p, const char *list_name, const char *word,
			 struct config_diag *d)
{
	int mmtests = mmtests_benchmark_match(word);
	const char *near = mmtests == 2 ? NULL : nearest_name(p, word);
	const char *doc = "docs/benchmarks.md lists lockstep's benchmarks and MMTests' it lacks";
	if (!p->nspecs)
		config_diag_at(d, p->gconf, list_name, p->gconf_path,
			       "%s names \"%s\", but the benchmark spec folder is empty (%s)",
			       list_name, word, doc);
	else if (near)
		config_diag_at(d, p->gconf, list_name, p->gconf_path,
			       "%s names \"%s\", which no benchmark answers to: did you mean \"%s\"? (%s)",
			       list_name, word, near, doc);
	else if (mmtests && mmtests_benchmark_why(word))
		config_diag_at(d, p->gconf, list_name, p->gconf_path,
			       "%s names \"%s\", an MMTests benchmark that is not in lockstep's "
			       "library: %s (%s)",
			       list_name, word, mmtests_benchmark_why(word), doc);
	else if (mmtests) /* one lockstep has, but the spec folder lacks */
		config_diag_at(d, p->gconf, list_name, p->gconf_path,
			       "%s names \"%s\", an MMTests benchmark whose spec is not in the "
			       "benchmark spec folder (%s)",
			       list_name, word, doc);
	else
		config_diag_at(d, p->gconf, list_name, p->gconf_path,
			       "%s names \"%s\", which is neither a benchmark of lockstep's library "
			       "nor of MMTests (%s)",
			       list_name, word, doc);
}

/* One word of the benchmark list: cpu-probe, COMMAND_<NAME> (which wins over
 * a spec of the same name, so a lab can replace one), or a spec. */
static int add_word(struct node_plan *p, const char *list_name, const char *word, int64_t units,
		    struct config_diag *d)
{
	const struct config *c = p->gconf;
	struct proto_step s = { 0 };
	struct plan_step info = { 0 };

	if (!proto_name_valid(word)) {
		config_diag_at(d, c, list_name, p->gconf_path,
			       "%s names \"%s\": a benchmark name is 1 to %d of A-Z a-z 0-9 . _ - "
			       "and does not start with '.'",
			       list_name, word, PROTO_NAME_MAX - 1);
		return -EINVAL;
	}
	snprintf(s.benchmark, sizeof(s.benchmark), "%s", word);
	if (strcmp(word, "cpu-probe") == 0) {
		s.kind = PROTO_STEP_CPU_PROBE;
		s.units = (uint64_t)units;
		return append(p, &s, &info, 1, list_name, d);
	}
	char *key = command_key(word);
	const char *cmd = config_get(c, key);
	if (cmd && *cmd) {
		int r = 0;
		if (proto_step_set_command(&s, cmd) < 0) {
			config_diag_at(d, c, key, p->gconf_path,
				       "%s is %zu bytes long; the limit is %d", key, strlen(cmd),
				       PROTO_COMMAND_MAX - 1);
			r = -EINVAL;
		} else {
			s.kind = PROTO_STEP_COMMAND;
			r = append(p, &s, &info, 1, list_name, d);
			if (r < 0)
				free(s.command);
		}
		free(key);
		return r;
	}
	const struct bench_spec *spec = find_spec(p, word);
	if (!spec) {
		unknown_word(p, list_name, word, d);
		free(key);
		return -EINVAL;
	}
	free(key);

	struct proto_step *steps;
	struct bench_step *binfo;
	size_t n;
	if (bench_spec_expand(spec, c, &steps, &binfo, &n, d) < 0)
		return -EINVAL;
	struct plan_step *pinfo = xcalloc(n, sizeof(*pinfo));
	for (size_t i = 0; i < n; i++) {
		pinfo[i] = (struct plan_step){ .spec = spec,
					       .sweep_value = binfo[i].sweep_value,
					       .warmup = binfo[i].warmup };
		memcpy(pinfo[i].variant, binfo[i].variant, sizeof(pinfo[i].variant));
	}
	int r = append(p, steps, pinfo, n, list_name, d);
	if (r < 0)
		proto_steps_free(steps, n);
	else
		free(steps); /* the commands are the plan's now */
	free(binfo);
	free(pinfo);
	return r;
}

/* Steps are numbered 1..n and, per benchmark and sweep point, iterations
 * count every run of it (warm-ups included) in plan order. */
static void number_steps(struct node_plan *p)
{
	for (uint32_t k = 0; k < p->nsteps; k++) {
		uint32_t it = 1;
		for (uint32_t j = 0; j < k; j++)
			if (plan_same_series(p, j + 1, k + 1))
				it++;
		p->steps[k].index = k + 1;
		p->steps[k].iteration = it;
	}
}

static int build(struct node_plan *p, struct config_diag *d)
{
	const struct config *c = p->gconf;
	int64_t iterations = 1, units = CPU_PROBE_UNITS_DEFAULT;
	const char *iter_name = config_first_set(c, iteration_names);
	const char *iter_value = iter_name ? config_get(c, iter_name) : NULL;
	if (iter_value && strcmp(iter_value, "auto") == 0) {
		/* adaptive: a plan of AUTO_MAX rounds, cut short when the rule
		 * says (run_auto.c) */
		if (auto_settings_load(c, p->gconf_path, ITERATIONS_MAX, &p->auto_rule, d) < 0)
			return -EINVAL;
		p->auto_iter = true;
		iterations = p->auto_rule.max;
	} else if (iter_name && config_get_int(c, iter_name, 1, ITERATIONS_MAX, &iterations, d) < 0) {
		return -EINVAL;
	}
	if (config_get_int(c, "CPU_PROBE_UNITS", 1, INT64_MAX / 2, &units, d) < 0)
		return -EINVAL;
	p->iterations = (uint32_t)iterations;

	const char *list_name = config_first_set(c, benchmark_names);
	const char *list = list_name ? config_get(c, list_name) : NULL;
	char *copy = xstrdup(list ? list : ""), *save;
	int r = 0;
	size_t nwords = 0;
	/* Iterations outermost, as MMTests runs them: every benchmark once,
	 * then again, so slow drift spreads over all of them. */
	for (uint32_t it = 0; it < p->iterations && r == 0; it++) {
		char *words = xstrdup(copy);
		nwords = 0;
		for (char *w = strtok_r(words, " \t\n", &save); w && r == 0;
		     w = strtok_r(NULL, " \t\n", &save), nwords++)
			r = add_word(p, list_name, w, units, d);
		free(words);
	}
	free(copy);
	if (r == 0 && nwords == 0) {
		config_diag_at(d, c, list_name, p->gconf_path,
			       "no benchmarks: set MMTESTS=\"cpu-probe\" (or BENCHMARKS) to the steps to run");
		r = -EINVAL;
	}
	if (r == 0)
		number_steps(p);
	return r;
}

int plan_build(const char *gconf_path, const struct sysfacts *facts, const char *spec_dir,
	       struct node_plan *out, struct config_diag *d)
{
	return plan_build_set(gconf_path, facts, spec_dir, NULL, out, d);
}

int plan_build_set(const char *gconf_path, const struct sysfacts *facts, const char *spec_dir,
		   const char *const *sets, struct node_plan *out, struct config_diag *d)
{
	memset(out, 0, sizeof(*out));
	out->gconf_path = xstrdup(gconf_path);
	out->facts = *facts;
	out->gconf = config_new();
	plan_set_facts(out->gconf, facts);
	int r = config_files_load(out->gconf, gconf_path, d);
	for (size_t i = 0; r == 0 && sets && sets[i]; i++)
		r = config_override(out->gconf, sets[i], d);
	if (r == 0 && spec_dir)
		r = bench_specs_load_dir(spec_dir, facts, &out->specs, &out->nspecs, d);
	if (r == 0)
		r = build(out, d);
	if (r < 0)
		plan_fini(out);
	return r;
}

void plan_fini(struct node_plan *p)
{
	config_free(p->gconf);
	bench_specs_free(p->specs, p->nspecs);
	proto_steps_free(p->steps, p->nsteps);
	free(p->info);
	free(p->gconf_path);
	memset(p, 0, sizeof(*p));
}

void plan_check_known(struct node_plan *p, const char *const *more_keys)
{
	size_t n = 0, cap = 16;
	const char **known = xmalloc(cap * sizeof(*known));
	const char *const *lists[] = { plan_keys, more_keys };
	for (size_t l = 0; l < 2; l++)
		for (size_t i = 0; lists[l] && lists[l][i]; i++) {
			if (n + 2 > cap)
				known = xrealloc(known, (cap *= 2) * sizeof(*known));
			known[n++] = lists[l][i];
		}
	for (size_t s = 0; s < p->nspecs; s++)
		for (size_t i = 0; i < p->specs[s]->nparams; i++) {
			if (n + 2 > cap)
				known = xrealloc(known, (cap *= 2) * sizeof(*known));
			known[n++] = p->specs[s]->params[i];
		}
	known[n] = NULL;
	config_check_known_ex(p->gconf, known, plan_prefixes, config_mmtests_ignored);
	free(known);
}

const char *plan_step_variant(const struct node_plan *p, uint32_t step, char *buf, size_t len)
{
	const struct plan_step *info = &p->info[step - 1];
	snprintf(buf, len, "%s", info->variant);
	return buf;
}

bool plan_same_series(const struct node_plan *p, uint32_t a, uint32_t b)
{
	return strcmp(p->info[a - 1].variant, p->info[b - 1].variant) == 0 &&
	       strcmp(p->steps[a - 1].benchmark, p->steps[b - 1].benchmark) == 0;
}
