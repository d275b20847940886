// SPDX-License-Identifier: GPL-2.0-or-later
/* manifest.json: what ran, where, with what; its status and failures.
 * Rewritten atomically whenever it changes, so that it is whole even when
 * hostd is killed. */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "run_cluster_records.h"
#include "run_priv.h"
#include "xalloc.h"

const char *run_status_name(enum run_status s)
{
	switch (s) {
	case RUN_RUNNING: return "running";
	case RUN_COMPLETE: return "complete";
	case RUN_DEGRADED: return "degraded";
	case RUN_ABORTED: return "aborted";
	case RUN_INTERRUPTED: return "interrupted";
	}
	return "unknown";
}

static json_object *stamped(struct participant *p, uint32_t step, const char *key, const char *text)
{
	char now[40];
	clock_format_utc(clock_real_ns(), now, sizeof(now));
	json_object *o = json_object_new_object();
	json_object_object_add(o, "node", json_object_new_string(p ? p->node.name : "hostd"));
	json_object_object_add(o, "step", json_object_new_int64(step));
	/* a reason or an event may quote a guest (its error, an SSH command's
	 * output): no control character reaches the manifest or hostctl */
	size_t len = strlen(text), need = log_escape(text, len, NULL, 0);
	char *safe = xmalloc(need + 1);
	log_escape(text, len, safe, need + 1);
	json_object_object_add(o, key, json_object_new_string(safe));
	free(safe);
	json_object_object_add(o, "at", json_object_new_string(now));
	return o;
}

void run_add_failure(struct run *r, struct participant *p, uint32_t step, const char *reason)
{
	json_object_array_add(r->failures, stamped(p, step, "reason", reason));
}

void run_add_event(struct run *r, struct participant *p, uint32_t step, const char *what)
{
	/* events come from peers: bounded, the count of the rest is kept */
	if (json_object_array_length(r->events) >= RUN_EVENTS_MAX) {
		r->events_dropped++;
		return;
	}
	json_object_array_add(r->events, stamped(p, step, "what", what));
}

static json_object *host_facts(const struct sysfacts *f)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "hostname", json_object_new_string(f->hostname));
	json_object_object_add(o, "kernel", json_object_new_string(f->kernel));
	json_object_object_add(o, "cpu_model", json_object_new_string(f->cpu_model));
	json_object_object_add(o, "num_logical_cpus", json_object_new_int(f->num_logical_cpus));
	json_object_object_add(o, "num_nodes", json_object_new_int(f->num_nodes));
	json_object_object_add(o, "num_llcs", json_object_new_int(f->num_llcs));
	json_object_object_add(o, "memtotal_bytes", json_object_new_uint64(f->memtotal_bytes));
	json_object_object_add(o, "clocksource", json_object_new_string(f->clocksource));
	json_object_object_add(o, "boot_id", json_object_new_string(f->boot_id));
	json_object_object_add(o, "hw_virt", json_object_new_boolean(f->has_hw_virt));
	return o;
}

static json_object *settings(const struct experiment *e)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "guest_kind",
			       json_object_new_string(
				       e->guest_kind == GUEST_KIND_LIBVIRT ? "libvirt" : "local"));
	json_object_object_add(o, "guest_count", json_object_new_int(e->guest_count));
	json_object_object_add(o, "host_runs_benchmarks",
			       json_object_new_boolean(e->host_runs_benchmarks));
	json_object_object_add(o, "barrier_timeout_s", json_object_new_double(e->barrier_timeout_s));
	json_object_object_add(o, "step_timeout_s", json_object_new_double(e->step_timeout_s));
	json_object_object_add(o, "on_guest_failure",
			       json_object_new_string(
				       e->on_failure == ON_FAILURE_ABORT ? "abort" : "continue"));
	json_object_object_add(o, "iterations", json_object_new_int64(e->iterations));
	json_object_object_add(o, "release_rt_priority", json_object_new_int(e->release_rt_priority));
	/* what hostctl's header shows and checks two runs share (issue 15) */
	json_object_object_add(o, "release",
			       json_object_new_string(e->release == RELEASE_SCHEDULED ? "scheduled"
										      : "immediate"));
	if (e->guest_kind == GUEST_KIND_LIBVIRT && e->virt.vcpus)
		json_object_object_add(o, "guest_vcpus", json_object_new_int64(e->virt.vcpus));
	if (e->guest_kind == GUEST_KIND_LIBVIRT && e->virt.memory_mib)
		json_object_object_add(o, "guest_memory_mib",
				       json_object_new_int64(e->virt.memory_mib));
	for (size_t i = 0; e->guest_kind == GUEST_KIND_LIBVIRT && i < e->virt.nvars; i++)
		if (!strcmp(e->virt.vars[i].name, "KERNEL"))
			json_object_object_add(o, "guest_kernel",
					       json_object_new_string(e->virt.vars[i].value));
	return o;
}

static json_object *plan(const struct node_plan *p)
{
	json_object *a = json_object_new_array();
	for (uint32_t i = 0; i < p->nsteps; i++) {
		const struct proto_step *s = &p->steps[i];
		char variant[BENCH_VARIANT_MAX];
		json_object *o = json_object_new_object();
		json_object_object_add(o, "step", json_object_new_int64(s->index));
		json_object_object_add(o, "benchmark", json_object_new_string(s->benchmark));
		json_object_object_add(o, "iteration", json_object_new_int64(s->iteration));
		if (s->kind == PROTO_STEP_CPU_PROBE) {
			json_object_object_add(o, "kind", json_object_new_string("cpu-probe"));
			json_object_object_add(o, "units", json_object_new_uint64(s->units));
		} else {
			json_object_object_add(o, "kind", json_object_new_string("command"));
			json_object_object_add(o, "command", json_object_new_string(s->command));
		}
		if (*plan_step_variant(p, s->index, variant, sizeof(variant)))
			json_object_object_add(o, "variant", json_object_new_string(variant));
		if (p->info[i].warmup)
			json_object_object_add(o, "warmup", json_object_new_boolean(true));
		json_object_array_add(a, o);
	}
	return a;
}

/* When nodes run different plans: each plan once, with its nodes. */
static json_object *node_plans(const struct run *r)
{
	const struct experiment *e = r->exp;
	json_object *a = json_object_new_array();
	for (size_t k = 0; k < e->nplans; k++) {
		json_object *o = json_object_new_object(), *nodes = json_object_new_array();
		json_object_object_add(o, "g_conf", json_object_new_string(e->plans[k].gconf_path));
		for (size_t i = 0; i < r->n; i++)
			if (e->node_plan[i] == &e->plans[k])
				json_object_array_add(nodes, json_object_new_string(r->p[i].node.name));
		json_object_object_add(o, "nodes", nodes);
		json_object_object_add(o, "plan", plan(&e->plans[k]));
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *participants(struct run *r)
{
	json_object *a = json_object_new_array();
	for (size_t i = 0; i < r->n; i++) {
		struct participant *p = &r->p[i];
		json_object *o = json_object_new_object();
		json_object_object_add(o, "node", json_object_new_string(p->node.name));
		json_object_object_add(o, "kind", json_object_new_string(run_part_kind_name(p->kind)));
		/* ok: every step of its plan done */
		const char *status = p->failed					     ? "failed"
				     : part_step_done_count(p->step) == r->last_step ? "ok"
				     : r->status == RUN_RUNNING			     ? "running"
										     : "incomplete";
		json_object_object_add(o, "status", json_object_new_string(status));
		json_object_object_add(o, "agent_version", json_object_new_string(p->agent_version));
		json_object_object_add(o, "boot_id", json_object_new_string(p->boot_id));
		json_object_object_add(o, "clocksource", json_object_new_string(p->clocksource));
		if (p->kernel[0])
			json_object_object_add(o, "kernel", json_object_new_string(p->kernel));
		json_object_object_add(o, "steps_done",
				       json_object_new_int64(part_step_done_count(p->step)));
		if (run_launch_exit(p))
			json_object_object_add(o, "exit", json_object_new_string(run_launch_exit(p)));
		json_object_object_add(o, "clock", part_clock_json(p->clock));
		run_launch_json(o, p);
		json_object_array_add(a, o);
	}
	return a;
}

static void add_warning(void *array, const char *line)
{
	json_object_array_add(array, json_object_new_string(line));
}

void run_manifest_write(struct run *r)
{
	json_object *m = json_object_new_object();
	char now[40];
	clock_format_utc(clock_real_ns(), now, sizeof(now));

	json_object_object_add(m, "schema_version", json_object_new_int(RESULTS_SCHEMA_VERSION));
	json_object_object_add(m, "run", json_object_new_string(r->name));
	json_object_object_add(m, "status", json_object_new_string(run_status_name(r->status)));
	if (r->reason[0])
		json_object_object_add(m, "reason", json_object_new_string(r->reason));
	json_object_object_add(m, "hostd_version", json_object_new_string(LOCKSTEP_VERSION));
	json_object_object_add(m, "started", json_object_new_string(r->started_utc));
	json_object_object_add(m, r->status == RUN_RUNNING ? "updated" : "ended",
			       json_object_new_string(now));
	json_object_object_add(m, "host", host_facts(&r->facts));
	json_object *cfg = json_object_new_object();
	json_object_object_add(cfg, "host", json_object_new_string(r->opt->host_config));
	json_object_object_add(cfg, "guest", json_object_new_string(r->opt->guest_config));
	/* hostd --set: what the g.conf of config/ does not say */
	json_object *sets = json_object_new_array();
	for (size_t i = 0; r->exp->overrides && r->exp->overrides[i]; i++)
		json_object_array_add(sets, json_object_new_string(r->exp->overrides[i]));
	json_object_object_add(cfg, "overrides", sets);
	/* what the configs say lockstep ignores, and why, as --check prints it */
	json_object *warnings = json_object_new_array();
	experiment_warnings(r->exp, add_warning, warnings);
	json_object_object_add(cfg, "warnings", warnings);
	json_object_object_add(m, "config_from", cfg);
	json_object_object_add(m, "settings", settings(r->exp));
	/* what the kernel granted of RELEASE_RT_PRIORITY (0: never boosted) */
	json_object_object_add(m, "release_rt_priority_held", json_object_new_int(r->rtprio_held));
	/* kept from the start: the connection is gone when the last manifest
	 * is written */
	json_object *libvirt = run_launch_libvirt_json(r);
	if (libvirt)
		json_object_object_add(m, "libvirt", libvirt);
	if (r->exp->cluster.enabled)
		json_object_object_add(m, "cluster", cluster_settings_json(&r->exp->cluster));
	json_object_object_add(m, "participants", participants(r));
	run_crec_manifest(r, m); /* the other hosts' nodes and parts, or ours for the leader */
	json_object_object_add(m, "plan", plan(r->exp->node_plan[0]));
	if (r->exp->nplans > 1)
		json_object_object_add(m, "node_plans", node_plans(r));
	if (r->autoit)
		json_object_object_add(m, "auto_iterations", run_auto_json(r->autoit));
	json_object_object_add(m, "steps_released",
			       json_object_new_int64(barrier_step(r->barrier) > r->exp->nsteps
							     ? r->exp->nsteps
							     : barrier_step(r->barrier) - 1));
	json_object_object_add(m, "samples", json_object_new_uint64(r->samples_written));
	json_object_object_add(m, "failed_steps", json_object_new_uint64(r->step_failures));
	/* the go watch's tallies (go_watch.h): what lost gos cost this run */
	if (r->go_watch) {
		struct go_watch_counts gc = go_watch_counts(r->go_watch);
		json_object *gos = json_object_new_object();
		json_object_object_add(gos, "resent", json_object_new_uint64(gc.resent));
		json_object_object_add(gos, "go_again", json_object_new_uint64(gc.again));
		json_object_object_add(gos, "started_after_resend",
				       json_object_new_uint64(gc.after_resend));
		json_object_object_add(gos, "lost", json_object_new_uint64(gc.lost));
		json_object_object_add(gos, "bound_ns",
				       json_object_new_int64(go_watch_bound_ns(r->go_watch)));
		json_object_object_add(m, "gos", gos);
	}
	json_object_object_add(m, "failures", json_object_get(r->failures));
	json_object_object_add(m, "events", json_object_get(r->events));
	if (r->events_dropped)
		json_object_object_add(m, "events_dropped", json_object_new_int(r->events_dropped));

	results_write_manifest(r->results, m);
	json_object_put(m);
}
