// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Steps of benchmark specs: the raw output a guest streams is kept (up to
 * RUN_PARSE_INPUT_MAX) and parsed here, on the host, when the step is done.
 * A step that fails, or whose output the parser does not recognise, leaves a
 * failure record where its samples would have been: never a made-up number,
 * never a silent gap.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_parse.h"
#include "log.h"
#include "results.h"
#include "run_priv.h"
#include "xalloc.h"

static const struct plan_step *spec_step(struct run *r, struct participant *p, uint32_t step)
{
	const struct node_plan *plan = r->exp->node_plan[p->guest_index];
	if (step == 0 || step > plan->nsteps || !plan->info[step - 1].spec)
		return NULL;
	return &plan->info[step - 1];
}

void run_bench_output(struct run *r, struct participant *p, uint32_t step, const char *data, size_t len)
{
	if (spec_step(r, p, step))
		part_step_buffer(p->step, data, len);
}

/* The common fields of a sample or failure record of a step. */
static json_object *step_record(struct run *r, struct participant *p, uint32_t step)
{
	const struct node_plan *plan = r->exp->node_plan[p->guest_index];
	const struct proto_step *s = &plan->steps[step - 1];
	char variant[BENCH_VARIANT_MAX];
	json_object *o = json_object_new_object();
	json_object_object_add(o, "node", json_object_new_string(p->node.name));
	json_object_object_add(o, "benchmark", json_object_new_string(s->benchmark));
	if (*plan_step_variant(plan, step, variant, sizeof(variant)))
		json_object_object_add(o, "variant", json_object_new_string(variant));
	json_object_object_add(o, "iteration", json_object_new_int64(s->iteration));
	json_object_object_add(o, "step", json_object_new_int64(step));
	if (plan->info[step - 1].warmup)
		json_object_object_add(o, "warmup", json_object_new_boolean(true));
	return o;
}

void run_write_failure(struct run *r, struct participant *p, uint32_t step, int exit_status,
		       const char *reason)
{
	json_object *o = step_record(r, p, step);
	json_object_object_add(o, "failed", json_object_new_boolean(true));
	if (exit_status >= 0)
		json_object_object_add(o, "exit_status", json_object_new_int(exit_status));
	else
		json_object_object_add(o, "exit_status", NULL);
	json_object_object_add(o, "reason", json_object_new_string(reason));
	char *log = xasprintf("nodes/%s/step-%u.out", p->node.name, step);
	json_object_object_add(o, "log", json_object_new_string(log));
	free(log);
	results_append_sample(r->results, o);
	json_object_put(o);
	r->samples_written++;
	r->step_failures++;
	if (r->autoit)
		run_auto_failed(r->autoit, p->node.index, step);
}

/* A value for adaptive iterations' series: benchmark and sweep point. */
static void auto_value(struct run *r, struct participant *p, const struct proto_msg *m)
{
	const struct node_plan *plan = r->exp->node_plan[p->guest_index];
	uint32_t step = m->u.result.step;
	char variant[96], series[PROTO_NAME_MAX + 100];
	if (!r->autoit || plan->info[step - 1].warmup)
		return;
	plan_step_variant(plan, step, variant, sizeof(variant));
	snprintf(series, sizeof(series), "%s%s%s", plan->steps[step - 1].benchmark,
		 variant[0] ? " " : "", variant);
	run_auto_value(r->autoit, p->node.index, step, series, m->u.result.metric, m->u.result.value);
}

static void write_metric(struct run *r, struct participant *p, uint32_t step,
			 const struct bench_metric_decl *decl, double value)
{
	struct proto_msg m = { .type = PROTO_RESULT };
	m.u.result.step = step;
	m.u.result.value = value;
	m.u.result.higher_is_better = decl->higher_is_better;
	snprintf(m.u.result.metric, sizeof(m.u.result.metric), "%s", decl->name);
	snprintf(m.u.result.unit, sizeof(m.u.result.unit), "%s", decl->unit);
	run_write_sample(r, p, &m);
}

/* The pattern parser reads one number, "value": the spec names it. */
static const char *metric_in_parse(const struct bench_spec *spec, size_t i)
{
	return strcmp(spec->parser, "pattern") == 0 ? "value" : spec->metrics[i].name;
}

/* Every declared metric must be in the parse, or the step has failed: a
 * spec that promises lat_p99 and an output without it is not a result.  An
 * optional one may be absent (a job file that only reads has no write.*),
 * but a parse with none of the declared metrics is no result either. */
static void parse_and_write(struct run *r, struct participant *p, uint32_t step,
			    const struct bench_spec *spec)
{
	char why[512];
	const struct bench_parser *parser = bench_parser_find(spec->parser);
	struct bench_metrics *m = xmalloc(sizeof(*m));
	size_t len;
	bool cut;
	const char *out = part_step_buffered(p->step, &len, &cut);
	int e = bench_parse(parser, out, len, spec->parser_arg, m, why, sizeof(why));
	size_t found = 0;
	for (size_t i = 0; i < spec->nmetrics && e == 0; i++) {
		const struct bench_metric *got = bench_metrics_get(m, metric_in_parse(spec, i));
		if (got && isfinite(got->value)) {
			found++;
		} else if (!spec->metrics[i].optional) {
			snprintf(why, sizeof(why), "the %s parser found no %s in the output",
				 spec->parser, spec->metrics[i].name);
			e = -EBADMSG;
		}
	}
	if (e == 0 && found == 0) {
		snprintf(why, sizeof(why), "the %s parser found none of the %zu metrics %s declares",
			 spec->parser, spec->nmetrics, spec->name);
		e = -EBADMSG;
	}
	if (e == 0) {
		for (size_t i = 0; i < spec->nmetrics; i++) {
			const struct bench_metric *got =
				bench_metrics_get(m, metric_in_parse(spec, i));
			if (got && isfinite(got->value))
				write_metric(r, p, step, &spec->metrics[i], got->value);
		}
	} else {
		char reason[700];
		snprintf(reason, sizeof(reason), "output not recognised by the %s parser: %s",
			 spec->parser, why);
		run_write_failure(r, p, step, 0, reason);
		run_add_event(r, p, step, reason);
	}
	free(m);
}

void run_bench_done(struct run *r, struct participant *p, uint32_t step, int exit_status)
{
	const struct plan_step *info = spec_step(r, p, step);
	if (!info)
		return;
	if (exit_status != 0) {
		char reason[128];
		snprintf(reason, sizeof(reason), "%s exited with status %d", info->spec->name,
			 exit_status);
		run_write_failure(r, p, step, exit_status, reason);
	} else if (part_step_buffer_cut(p->step)) {
		char reason[128];
		snprintf(reason, sizeof(reason), "output over %d bytes: too much to parse",
			 RUN_PARSE_INPUT_MAX);
		run_write_failure(r, p, step, exit_status, reason);
		run_add_event(r, p, step, reason);
	} else {
		parse_and_write(r, p, step, info->spec);
	}
	part_step_buffer_drop(p->step);
}

void run_bench_lost(struct run *r, struct participant *p, uint32_t step, const char *why)
{
	/* every kind of step: a step without done leaves its record */
	run_write_failure(r, p, step, -1, why);
	part_step_buffer_drop(p->step);
}

void run_write_sample(struct run *r, struct participant *p, const struct proto_msg *m)
{
	json_object *o = step_record(r, p, m->u.result.step);
	json_object_object_add(o, "metric", json_object_new_string(m->u.result.metric));
	json_object_object_add(o, "value", json_object_new_double(m->u.result.value));
	json_object_object_add(o, "unit", json_object_new_string(m->u.result.unit));
	json_object_object_add(o, "better",
			       json_object_new_string(m->u.result.higher_is_better ? "higher"
										   : "lower"));
	results_append_sample(r->results, o);
	json_object_put(o);
	r->samples_written++;
	auto_value(r, p, m);
}
