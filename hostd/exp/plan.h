/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The plan of a node: the steps its g.conf asks for (MMTESTS / BENCHMARKS),
 * read with the node's own facts, each word being the built-in cpu-probe,
 * a COMMAND_<NAME> of the g.conf, or a benchmark spec of benchmarks/.
 * Nodes with the same g.conf and facts share one plan.
 */
#ifndef LOCKSTEP_PLAN_H
#define LOCKSTEP_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "auto_iter.h"
#include "bench_spec.h"
#include "config.h"
#include "proto.h"
#include "sysfacts.h"

/* What hostd knows of a step beside what goes on the wire. */
struct plan_step {
	const struct bench_spec *spec;	 /* NULL: cpu-probe or COMMAND_<NAME> */
	uint32_t sweep_value;		 /* 0: no sweep */
	bool warmup;			 /* its samples are kept but marked */
	char variant[BENCH_VARIANT_MAX]; /* its series: "groups=4"; "" for none */
};

struct node_plan {
	char *gconf_path;
	struct sysfacts facts; /* the node's, as the plan was read with them */
	struct config *gconf;  /* the g.conf read with those facts */
	uint32_t iterations;   /* MMTEST_ITERATIONS: how often the list runs */
	/* MMTEST_ITERATIONS=auto: iterations is auto_rule.max, and the run
	 * stops after a round once the rule says (run_auto.c) */
	bool auto_iter;
	struct auto_iter_rule auto_rule;
	uint32_t nsteps;
	struct proto_step *steps;  /* owns their commands; plan_fini frees */
	struct plan_step *info;	   /* nsteps entries */
	struct bench_spec **specs; /* every spec, read with these facts */
	size_t nspecs;
};

/* The g.conf keys and prefixes this module reads (for unknown names). */
extern const char *const plan_keys[];
extern const char *const plan_prefixes[];

/* Sets MMTests' facts (NUM_LOGICAL_CPUS, NUM_NODES, NUM_LLCS, MEMTOTAL_BYTES;
 * the config reader adds MMTests' shell names NUMCPUS, NUMNODES, NUMLLCS) in a config before it is read. */
void plan_set_facts(struct config *c, const struct sysfacts *f);

/* Reads gconf_path with facts and builds the plan; spec_dir holds the
 * benchmark specs.  0, or -EINVAL (-errno) with d naming file:line and the
 * value; warnings stay in out->gconf. */
int plan_build(const char *gconf_path, const struct sysfacts *facts, const char *spec_dir,
	       struct node_plan *out, struct config_diag *d);
/* The same, with sets (NULL-terminated "NAME=VALUE", may be NULL: hostd
 * --set) applied after the file is read, so they win over it. */
int plan_build_set(const char *gconf_path, const struct sysfacts *facts, const char *spec_dir,
		   const char *const *sets, struct node_plan *out, struct config_diag *d);
void plan_fini(struct node_plan *p);

/* Checks names a g.conf sets that are neither keys nor parameters of a spec
 * (one warning each, kept in p->gconf). */
void plan_check_known(struct node_plan *p, const char *const *more_keys);

/* The label of a step in records: "hackbench-process-pipes" or, on a
 * sweep, "hackbench-process-pipes" with variant "groups=4" (with swept
 * lists "size=200,bitrate=0,streams=1") in buf ("" when none).  The
 * benchmark and its variant name a series. */
const char *plan_step_variant(const struct node_plan *p, uint32_t step, char *buf, size_t len);

/* Whether steps a and b (1-based) are of one series: same benchmark and
 * variant. */
bool plan_same_series(const struct node_plan *p, uint32_t a, uint32_t b);

#endif
