/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Benchmark specs: one declarative file per benchmark under benchmarks/
 * (docs/benchmarks.md), read with common/'s config reader and the system
 * facts of the node it will run on, so that a default such as
 * HACKBENCH_MAX_GROUPS=$((NUM_LOGICAL_CPUS*2)) means the guest's CPUs.
 *
 * A spec turns into steps in two stages: bench_spec_load() reads the file
 * for one set of facts; bench_spec_expand() takes the user's g.conf
 * (whose values of the spec's parameters win over the spec's defaults) and
 * yields one step per sweep point and iteration, warm-ups first.
 */
#ifndef LOCKSTEP_BENCH_SPEC_H
#define LOCKSTEP_BENCH_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "proto.h"
#include "sysfacts.h"

#define BENCH_SPEC_METRICS_MAX 32
#define BENCH_SPEC_PARAMS_MAX 32
#define BENCH_SPEC_LIST_MAX 16 /* aliases, binaries */
#define BENCH_SPECS_MAX 256    /* spec files in one folder */
#define BENCH_SWEEP_POINTS_MAX 64
#define BENCH_ITERATIONS_MAX 1000
#define BENCH_WARMUP_MAX 100
#define BENCH_SWEEP_LISTS_MAX 4 /* list parameters swept in one spec */
#define BENCH_LABEL_MAX 16	/* "size" of size:IPERF3_BUFFER_SIZES */
#define BENCH_VARIANT_MAX 96	/* "size=200,bitrate=0,streams=1" */

struct bench_metric_decl {
	char name[PROTO_NAME_MAX];
	char unit[PROTO_SHORT_MAX];
	bool higher_is_better;
	bool optional; /* ":optional": a run may lack it (a job file that only reads) */
};

enum bench_sweep_scale {
	BENCH_SWEEP_DOUBLE, /* min, 2*min, 4*min, ... below max, then max */
	BENCH_SWEEP_LINEAR, /* min, min+1, ..., max */
};

/* A parameter MMTests sweeps as a list (IPERF3_BUFFER_SIZES=200,1420):
 * BENCH_SWEEP_LISTS="size:IPERF3_BUFFER_SIZES ...". */
struct bench_sweep_list {
	char label[BENCH_LABEL_MAX]; /* the series' name for it: size=200 */
	char *param;		     /* one of BENCH_PARAMS */
};

struct bench_spec {
	char *path;
	struct config *cfg;	   /* the file as read, for parameter defaults */
	char name[PROTO_NAME_MAX]; /* BENCH_NAME */
	char *summary;		   /* BENCH_SUMMARY */
	char **aliases;		   /* BENCH_ALIASES: MMTests' names */
	size_t naliases;
	char **binaries; /* BENCH_BINARIES: pushed to guests */
	size_t nbinaries;
	char **params; /* BENCH_PARAMS: names g.conf may set */
	size_t nparams;
	char **one_value; /* BENCH_ONE_VALUE: params that may not list values */
	size_t none_value;
	char **words; /* BENCH_WORDS: params whose value is blank-separated words */
	size_t nwords;
	char *command;	    /* BENCH_COMMAND, with ${NAME} templates */
	char *server;	    /* BENCH_SERVER: started before the command, stopped after; NULL */
	char *server_ready; /* BENCH_SERVER_READY: text the server prints when it serves; NULL */
	/* BENCH_SERVER_PORT: ready when the port listens (/proc/net/tcp, tcp6):
	 * "pick" (the step's $LOCKSTEP_PORT) or the server's fixed port */
	bool server_port_wait;
	uint16_t server_port_fixed;  /* 0: picked by the step */
	char *sweep_var;	     /* BENCH_SWEEP: NULL when there is none */
	char *sweep_min, *sweep_max; /* BENCH_SWEEP_MIN/MAX templates */
	enum bench_sweep_scale sweep_scale;
	struct bench_sweep_list sweep_lists[BENCH_SWEEP_LISTS_MAX]; /* outermost first */
	size_t nsweep_lists;
	char *iterations, *warmup; /* BENCH_ITERATIONS, BENCH_WARMUP templates */
	char *parser, *parser_arg; /* BENCH_PARSER, BENCH_PARSER_ARG */
	struct bench_metric_decl metrics[BENCH_SPEC_METRICS_MAX];
	size_t nmetrics; /* BENCH_METRICS="name:unit:higher|lower[:optional] ..." */
};

/* What one step of a spec is, beside its proto_step. */
struct bench_step {
	uint32_t sweep_value; /* 0 without a sweep */
	bool warmup;
	/* its series beside the benchmark's name: "groups=4", or with
	 * BENCH_SWEEP_LISTS "size=200,bitrate=0,streams=1"; "" for none */
	char variant[BENCH_VARIANT_MAX];
};

/* How long a step waits for its server to be ready. */
#define BENCH_SERVER_READY_TENTHS 300
/* Ports a step with a picked port tries when its server exits before it is
 * ready: a port taken by a listener of something else. */
#define BENCH_SERVER_PORT_TRIES 3

/* The spec keys, for the check of unknown names in spec files. */
extern const char *const bench_spec_keys[];

/* Reads one spec with the node's facts.  0, or -EINVAL (-errno) with d
 * naming file:line and the value. */
int bench_spec_load(const char *path, const struct sysfacts *facts, struct bench_spec **out,
		    struct config_diag *d);
void bench_spec_free(struct bench_spec *s);

/* Whether word is the spec's name or one of its aliases. */
bool bench_spec_answers_to(const struct bench_spec *s, const char *word);

/*
 * The steps of one run of the spec for a g.conf: commands with every
 * ${NAME} replaced, the sweep points, iterations and warm-ups.  *steps and
 * *info are allocated (n entries each; the steps own their commands, see
 * proto_steps_free()); the caller numbers the steps.
 * Errors name the parameter, its value and where it was set.
 */
int bench_spec_expand(const struct bench_spec *s, const struct config *gconf, struct proto_step **steps,
		      struct bench_step **info, size_t *n, struct config_diag *d);

/* All *.bench files of a folder, read with the facts; names and aliases
 * must be unique.  *n specs in *out (sorted by name). */
int bench_specs_load_dir(const char *dir, const struct sysfacts *facts, struct bench_spec ***out,
			 size_t *n, struct config_diag *d);
void bench_specs_free(struct bench_spec **specs, size_t n);

/* The folder of specs: $LOCKSTEP_BENCHMARKS_DIR, else the source tree's
 * benchmarks/ when hostd runs from its build tree, else the installed one. */
const char *bench_specs_dir(void);

#endif
