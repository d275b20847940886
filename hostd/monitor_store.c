// SPDX-License-Identifier: GPL-2.0-or-later
#include "monitor_store.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
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
	int dirfd; /* nodes/<node>/monitors, -1 until the first sample */
	int fd[MS_NGROUPS];
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
	for (size_t i = 0; i < ms->n; i++) {
		struct ms_node *nd = &ms->nodes[i];

		for (size_t g = 0; g < MS_NGROUPS; g++) {
			if (nd->fd[g] < 0)
				continue;
			if (fdatasync(nd->fd[g]) < 0)
				ms_note(ms, -errno);
			close(nd->fd[g]);
		}
		if (nd->dirfd >= 0)
			close(nd->dirfd);
	}
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
	nd->dirfd = -1;
	for (size_t g = 0; g < MS_NGROUPS; g++)
		nd->fd[g] = -1;
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

static int ms_fd(struct monitor_store *ms, struct ms_node *nd, size_t g)
{
	char name[32];

	if (nd->fd[g] >= 0)
		return nd->fd[g];
	if (nd->dirfd < 0) {
		char *dir, *mon;
		int r = results_node_dir(ms->results, nd->name, &dir);

		if (r < 0)
			return r;
		mon = xasprintf("%s/monitors", dir);
		free(dir);
		if (mkdir(mon, 0755) < 0 && errno != EEXIST) {
			r = -errno;
			free(mon);
			return r;
		}
		nd->dirfd = open(mon, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		r = -errno;
		free(mon);
		if (nd->dirfd < 0)
			return r;
	}
	snprintf(name, sizeof(name), "%s.ndjson", ms_groups[g]);
	nd->fd[g] = openat(nd->dirfd, name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW,
			   0644);
	return nd->fd[g] < 0 ? -errno : nd->fd[g];
}

static void ms_summary_add(struct ms_node *nd, uint32_t step, int64_t mono_ns,
			   const char *metric, double value)
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
	char *line;
	size_t len;
	int fd, r;

	if (!nd || !isfinite(value) || !proto_name_valid(metric))
		return -EINVAL;
	if (nd->bytes >= MONITOR_STORE_NODE_MAX) {
		nd->dropped++;
		return -EFBIG;
	}
	ms_summary_add(nd, step, mono_ns, metric, value);
	fd = ms_fd(ms, nd, ms_group(metric));
	if (fd < 0) {
		ms_note(ms, fd);
		return fd;
	}
	o = json_object_new_object();
	json_object_object_add(o, "step", json_object_new_int64(step));
	json_object_object_add(o, "mono_ns", json_object_new_int64(mono_ns));
	json_object_object_add(o, "host_ns", json_object_new_int64(host_ns));
	json_object_object_add(o, "metric", json_object_new_string(metric));
	json_object_object_add(o, "value", json_object_new_double(value));
	json_object_object_add(o, "unit", json_object_new_string(unit));
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	line = xasprintf("%s\n", text);
	len = strlen(line);
	/* one write(2) per line: a line is whole or absent */
	r = fileio_write_all(fd, line, len);
	free(line);
	json_object_put(o);
	nd->bytes += len;
	ms_note(ms, r);
	return r;
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
