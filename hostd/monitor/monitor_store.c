// SPDX-License-Identifier: GPL-2.0-or-later
#include "monitor_store.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monitor_settings.h"
#include "results.h"
#include "xalloc.h"

#define MS_NODES_MAX 4096

/* The files a node's samples may go to; the last catches the rest. */
static const char *const ms_groups[] = {
	"stat", "schedstat", "loadavg", "psi", "vmstat", "vcpu", "other",
};
#define MS_NGROUPS (sizeof(ms_groups) / sizeof(ms_groups[0]))

/* Per-step summaries: the time-weighted mean of a metric's samples stamped
 * with the step (each sample weighs the interval it covers, so the short
 * last interval at the step's end counts for what it is). */
static const struct {
	const char *metric, *name, *unit;
	bool higher;
} ms_sums[] = {
	{ "stat.cpu.steal", "steal_pct", "%", false },
	{ "schedstat.cpu.run_delay", "run_delay", "ms/s", false },
	{ "psi.cpu.some", "cpu_pressure", "%", false },
	{ "vcpu.all.time", "vcpu_time_pct", "%", true },
	/* delay (the thread's run delay, /proc/<tid>/schedstat) rather than
	 * wait, which stays 0 unless kernel.sched_schedstats is on */
	{ "vcpu.all.delay", "vcpu_delay_pct", "%", false },
};
#define MS_NSUMS (sizeof(ms_sums) / sizeof(ms_sums[0]))

struct ms_acc {
	uint32_t step;
	double wsum, w;
	int64_t last_ns; /* of the metric's previous sample, any step */
};

struct ms_node {
	char name[PROTO_NAME_MAX];
	int dir; /* nodes/<node>/monitors: 0 not made yet, 1 made, else -errno */
	uint64_t bytes, dropped;
	struct ms_acc acc[MS_NSUMS];
};

struct monitor_store {
	struct results *results;
	struct ms_node *nodes;
	size_t n, cap;
	int error;
};

struct monitor_store *monitor_store_new(struct results *r)
{
	struct monitor_store *ms = xcalloc(1, sizeof(*ms));

	ms->results = r;
	return ms;
}

static void ms_note(struct monitor_store *ms, int err)
{
	if (err < 0 && !ms->error)
		ms->error = err;
}

int monitor_store_close(struct monitor_store *ms)
{
	int err;

	if (!ms)
		return 0;
	err = ms->error;
	free(ms->nodes);
	free(ms);
	return err;
}

static struct ms_node *ms_node(struct monitor_store *ms, const char *name)
{
	struct ms_node *nd;

	for (size_t i = 0; i < ms->n; i++)
		if (!strcmp(ms->nodes[i].name, name))
			return &ms->nodes[i];
	if (!proto_name_valid(name) || ms->n >= MS_NODES_MAX)
		return NULL;
	if (ms->n == ms->cap) {
		ms->cap = ms->cap ? 2 * ms->cap : 8;
		ms->nodes = xrealloc(ms->nodes, ms->cap * sizeof(*ms->nodes));
	}
	nd = &ms->nodes[ms->n++];
	memset(nd, 0, sizeof(*nd));
	snprintf(nd->name, sizeof(nd->name), "%s", name);
	return nd;
}

/* The group of a metric: its first component if known, else "other". */
static size_t ms_group(const char *metric)
{
	size_t len = strcspn(metric, ".");

	for (size_t g = 0; g < MS_NGROUPS - 1; g++)
		if (strlen(ms_groups[g]) == len && !memcmp(ms_groups[g], metric, len))
			return g;
	return MS_NGROUPS - 1;
}

/* The folder is made once, on the loop (one mkdir per node and run), so
 * that a folder that cannot be made is an error the caller sees at once;
 * the lines themselves go through the results writer. */
static int ms_dir(struct monitor_store *ms, struct ms_node *nd)
{
	if (!nd->dir) {
		int r = results_monitor_dir(ms->results, nd->name);

		nd->dir = r < 0 ? r : 1;
		ms_note(ms, r);
	}
	return nd->dir < 0 ? nd->dir : 0;
}

/* Counts len against the node's limit and queues it; the caller checked
 * the node and made the line. */
static int ms_append(struct monitor_store *ms, struct ms_node *nd, const char *file,
		     const char *data, size_t len)
{
	int r = ms_dir(ms, nd);

	if (r < 0)
		return r;
	if (nd->bytes >= MONITOR_STORE_NODE_MAX) {
		nd->dropped++;
		return -EFBIG;
	}
	r = results_append_monitor(ms->results, nd->name, file, data, len);
	if (r == -ENOBUFS) {
		nd->dropped++;
		return r;
	}
	if (r == 0)
		nd->bytes += len;
	return r;
}

static void ms_summary_add(struct ms_node *nd, uint32_t step, int64_t mono_ns, const char *metric,
			   double value)
{
	for (size_t i = 0; i < MS_NSUMS; i++) {
		struct ms_acc *a = &nd->acc[i];

		if (strcmp(metric, ms_sums[i].metric))
			continue;
		if (step && a->last_ns && mono_ns > a->last_ns) {
			double w = (double)(mono_ns - a->last_ns);

			if (a->step != step) {
				a->step = step;
				a->wsum = a->w = 0;
			}
			a->wsum += w * value;
			a->w += w;
		}
		a->last_ns = mono_ns;
	}
}

int monitor_store_put(struct monitor_store *ms, const char *node, uint32_t step, int64_t mono_ns,
		      int64_t host_ns, const char *metric, double value, const char *unit)
{
	struct ms_node *nd = ms_node(ms, node);
	json_object *o;
	const char *text;
	char file[32];
	size_t len;
	int r;

	if (!nd || !isfinite(value) || !proto_name_valid(metric))
		return -EINVAL;
	if ((r = ms_dir(ms, nd)) < 0)
		return r;
	if (nd->bytes >= MONITOR_STORE_NODE_MAX) {
		nd->dropped++;
		return -EFBIG;
	}
	ms_summary_add(nd, step, mono_ns, metric, value);
	o = json_object_new_object();
	json_object_object_add(o, "step", json_object_new_int64(step));
	json_object_object_add(o, "mono_ns", json_object_new_int64(mono_ns));
	json_object_object_add(o, "host_ns", json_object_new_int64(host_ns));
	json_object_object_add(o, "metric", json_object_new_string(metric));
	json_object_object_add(o, "value", json_object_new_double(value));
	json_object_object_add(o, "unit", json_object_new_string(unit));
	text = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);
	/* the line and its newline in one item: one write(2), whole or absent */
	char *line = xmalloc(len + 1);
	memcpy(line, text, len);
	line[len++] = '\n';
	json_object_put(o);
	snprintf(file, sizeof(file), "%s.ndjson", ms_groups[ms_group(metric)]);
	r = ms_append(ms, nd, file, line, len);
	free(line);
	return r;
}

int monitor_store_output(struct monitor_store *ms, const char *node, uint32_t step,
			 const char *monitor, const char *data, size_t len)
{
	struct ms_node *nd = ms_node(ms, node);
	char file[64];
	int k;

	/* the file name comes from our own table, never from the sender */
	for (k = 0; k < MONITOR_EXT_COUNT; k++)
		if (!strcmp(monitor, monitor_ext_names[k]))
			break;
	if (!nd || k == MONITOR_EXT_COUNT || !step)
		return -EINVAL;
	snprintf(file, sizeof(file), "%s-step-%u.log", monitor_ext_names[k], step);
	return ms_append(ms, nd, file, data, len);
}

int monitor_store_sample(struct monitor_store *ms, const char *node, const struct proto_msg *m,
			 int64_t host_ns)
{
	if (m->type != PROTO_SAMPLE)
		return -EINVAL;
	return monitor_store_put(ms, node, m->u.sample.step, m->u.sample.mono_ns, host_ns,
				 m->u.sample.metric, m->u.sample.value, m->u.sample.unit);
}

unsigned monitor_store_step_done(struct monitor_store *ms, const char *node, uint32_t step,
				 const char *benchmark, uint32_t iteration)
{
	struct ms_node *nd = ms_node(ms, node);
	unsigned n = 0;

	if (!nd)
		return 0;
	for (size_t i = 0; i < MS_NSUMS; i++) {
		struct ms_acc *a = &nd->acc[i];
		json_object *o;

		if (a->step != step || a->w <= 0)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "node", json_object_new_string(node));
		json_object_object_add(o, "benchmark", json_object_new_string(benchmark));
		json_object_object_add(o, "iteration", json_object_new_int64(iteration));
		json_object_object_add(o, "step", json_object_new_int64(step));
		json_object_object_add(o, "metric", json_object_new_string(ms_sums[i].name));
		json_object_object_add(o, "value", json_object_new_double(a->wsum / a->w));
		json_object_object_add(o, "unit", json_object_new_string(ms_sums[i].unit));
		json_object_object_add(o, "better",
				       json_object_new_string(ms_sums[i].higher ? "higher" : "lower"));
		results_append_sample(ms->results, o);
		json_object_put(o);
		a->step = 0;
		a->wsum = a->w = 0;
		n++;
	}
	return n;
}

uint64_t monitor_store_dropped(const struct monitor_store *ms, const char *node)
{
	for (size_t i = 0; i < ms->n; i++)
		if (!strcmp(ms->nodes[i].name, node))
			return ms->nodes[i].dropped;
	return 0;
}

bool monitor_store_name_reserved(const char *metric)
{
	if (!strncmp(metric, "vcpu.", 5))
		return true;
	for (size_t i = 0; i < MS_NSUMS; i++)
		if (!strcmp(metric, ms_sums[i].name))
			return true;
	return false;
}
