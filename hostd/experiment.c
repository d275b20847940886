/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "experiment.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sysfacts.h"
#include "xalloc.h"

#define GUEST_COUNT_MAX 1024
#define ITERATIONS_MAX 1000
#define CPU_PROBE_UNITS_DEFAULT 2000000
/* MMTests' monitor keys (docs/monitors.md), in h.conf and g.conf alike */
#define MONITOR_KEYS                                                                      \
	"MONITOR_UPDATE_FREQUENCY", "MONITORS", "MONITORS_GZIP", "MONITORS_WITH_LATENCY", \
		"MONITORS_TRACER", "MONITOR_PERF_EVENTS", "MONITOR_FTRACE_EVENTS"

static const char *const host_keys[] = {
	"GUEST_KIND", "GUEST_COUNT", "HOST_RUNS_BENCHMARKS", "BARRIER_TIMEOUT",
	"STEP_TIMEOUT", "ON_GUEST_FAILURE", "RELEASE_RT_PRIORITY", "GUEST_SSH_USER",
	"GUEST_SSH_KEY", "GUEST_HARNESS_DIR", "GUEST_SSH_TIMEOUT", "RELEASE", "RELEASE_LEAD", "LOCAL_GUEST_CLOCK_OFFSET_NS",
	"LOCAL_GUEST_CLOCK_DRIFT_PPM", "LOCAL_GUEST_CLOCK_JITTER_NS", MONITOR_KEYS,
	"CPUFREQ_GOVERNOR", "CPUFREQ_EPP", "CPUFREQ_NO_TURBO", NULL,
};
static const char *const guest_keys[] = {
	"MMTESTS", "BENCHMARKS", "MMTEST_ITERATIONS", "ITERATIONS", "CPU_PROBE_UNITS", MONITOR_KEYS,
	NULL,
};
static const char *const guest_prefixes[] = { "COMMAND_", NULL };
static const char *const benchmark_names[] = { "MMTESTS", "BENCHMARKS", NULL };
static const char *const iteration_names[] = { "MMTEST_ITERATIONS", "ITERATIONS", NULL };

static void diag_at(struct config_diag *d, const struct config *c, const char *name,
		    const char *fallback_file, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void diag_at(struct config_diag *d, const struct config *c, const char *name,
		    const char *fallback_file, const char *fmt, ...)
{
	const char *file = fallback_file;
	int line = 0;
	if (name)
		config_where(c, name, &file, &line);
	snprintf(d->file, sizeof(d->file), "%s", file);
	d->line = line;
	d->column = 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->text, sizeof(d->text), fmt, ap);
	va_end(ap);
}

static void set_facts(struct config *c, const struct sysfacts *f)
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
}

static int load_host(const struct config *c, const char *path, const char *default_template,
		     struct experiment *e, struct config_diag *d)
{
	static const char *const kinds[] = { "local", "libvirt", NULL };
	static const char *const policies[] = { "abort", "continue", NULL };
	static const char *const releases[] = { "scheduled", "immediate", NULL };
	int release = RELEASE_SCHEDULED;
	int64_t count = 1, rt = 1;
	int kind = GUEST_KIND_LOCAL, policy = ON_FAILURE_ABORT;

	e->barrier_timeout_s = 60;
	e->step_timeout_s = 3600;
	if (config_get_choice(c, "GUEST_KIND", kinds, &kind, d) < 0 ||
	    config_get_int(c, "GUEST_COUNT", 0, GUEST_COUNT_MAX, &count, d) < 0 ||
	    config_get_bool(c, "HOST_RUNS_BENCHMARKS", &e->host_runs_benchmarks, d) < 0 ||
	    config_get_seconds(c, "BARRIER_TIMEOUT", 0.001, 86400 * 7, &e->barrier_timeout_s, d) < 0 ||
	    config_get_seconds(c, "STEP_TIMEOUT", 0.001, 86400 * 7, &e->step_timeout_s, d) < 0 ||
	    config_get_choice(c, "ON_GUEST_FAILURE", policies, &policy, d) < 0 ||
	    config_get_int(c, "RELEASE_RT_PRIORITY", 0, 99, &rt, d) < 0 ||
	    config_get_choice(c, "RELEASE", releases, &release, d) < 0 ||
	    config_get_seconds(c, "RELEASE_LEAD", 0, 10, &e->release_lead_s, d) < 0)
		return -EINVAL;
	e->release = (enum release_mode)release;
	if (config_get_int(c, "LOCAL_GUEST_CLOCK_OFFSET_NS", -INT64_MAX / 4, INT64_MAX / 4,
			   &e->local_clock_offset_ns, d) < 0 ||
	    config_get_int(c, "LOCAL_GUEST_CLOCK_JITTER_NS", 0, 1000000000, &e->local_clock_jitter_ns,
			   d) < 0 ||
	    config_get_seconds(c, "LOCAL_GUEST_CLOCK_DRIFT_PPM", -100000, 100000,
			       &e->local_clock_drift_ppm, d) < 0)
		return -EINVAL;
	e->release_rt_priority = (int)rt;
	e->guest_kind = (enum guest_kind)kind;
	e->on_failure = (enum failure_policy)policy;
	e->guest_count = (unsigned)count;
	if (e->guest_kind == GUEST_KIND_LIBVIRT) {
		/* with a list of domains, GUEST_COUNT may be left out */
		unsigned asked = config_get(c, "GUEST_COUNT") ? e->guest_count : VIRT_COUNT_UNSET;
		if (virt_settings_load(c, path, asked, default_template, &e->virt, d) < 0)
			return -EINVAL;
		e->guest_count = (unsigned)e->virt.count; /* GUEST_DOMAINS may set it */
		for (size_t i = 0; i < e->virt.count; i++) {
			if (!proto_name_valid(e->virt.names[i]) || strcmp(e->virt.names[i], "host") == 0) {
				diag_at(d, c, NULL, path,
					"the guest \"%s\" cannot name a node: use a domain name of "
					"A-Z a-z 0-9 . _ - other than \"host\"",
					e->virt.names[i]);
				return -EINVAL;
			}
		}
		const char *user = config_get(c, "GUEST_SSH_USER");
		const char *key = config_get(c, "GUEST_SSH_KEY");
		const char *dir = config_get(c, "GUEST_HARNESS_DIR");
		e->ssh_user = xstrdup(user && *user ? user : "root");
		e->ssh_key = key && *key ? xstrdup(key) : NULL;
		e->harness_dir = xstrdup(dir && *dir ? dir : "/run/lockstep");
		e->ssh_timeout_s = 30;
		if (dir && dir[0] != '/') {
			diag_at(d, c, "GUEST_HARNESS_DIR", path,
				"GUEST_HARNESS_DIR=\"%s\" is not an absolute path", dir);
			return -EINVAL;
		}
		if (config_get_seconds(c, "GUEST_SSH_TIMEOUT", 0.1, 3600, &e->ssh_timeout_s, d) < 0)
			return -EINVAL;
	}
	if (e->guest_count == 0 && !e->host_runs_benchmarks) {
		diag_at(d, c, "GUEST_COUNT", path,
			"GUEST_COUNT=0 and HOST_RUNS_BENCHMARKS is not yes: nobody would run anything; "
			"set GUEST_COUNT to 1 or more");
		return -EINVAL;
	}
	return 0;
}

const char *experiment_guest_name(const struct experiment *e, unsigned i, char *buf, size_t len)
{
	if (e->guest_kind == GUEST_KIND_LIBVIRT)
		return e->virt.names[i];
	snprintf(buf, len, "guest-%u", i + 1);
	return buf;
}

/* COMMAND_<NAME>: the benchmark name upper-cased, '-' and '.' as '_'. */
static char *command_key(const char *benchmark)
{
	char *k = xasprintf("COMMAND_%s", benchmark);
	for (char *p = k + 8; *p; p++)
		*p = (*p == '-' || *p == '.') ? '_' : (char)toupper((unsigned char)*p);
	return k;
}

static int fill_step(const struct config *c, const char *path, const char *list_name,
		     const char *name, int64_t units, struct proto_step *s, struct config_diag *d)
{
	if (!proto_name_valid(name)) {
		diag_at(d, c, list_name, path,
			"%s names \"%s\": a benchmark name is 1 to %d of A-Z a-z 0-9 . _ - "
			"and does not start with '.'",
			list_name, name, PROTO_NAME_MAX - 1);
		return -EINVAL;
	}
	snprintf(s->benchmark, sizeof(s->benchmark), "%s", name);
	if (strcmp(name, "cpu-probe") == 0) {
		s->kind = PROTO_STEP_CPU_PROBE;
		s->units = (uint64_t)units;
		return 0;
	}
	char *key = command_key(name);
	const char *cmd = config_get(c, key);
	if (!cmd || !*cmd) {
		diag_at(d, c, list_name, path,
			"%s names \"%s\", which is neither the built-in cpu-probe nor a command: "
			"define it with %s=\"command line\"",
			list_name, name, key);
		free(key);
		return -EINVAL;
	}
	if (strlen(cmd) >= sizeof(s->command)) {
		diag_at(d, c, key, path, "%s is %zu bytes long; the limit is %d", key, strlen(cmd),
			PROTO_COMMAND_MAX - 1);
		free(key);
		return -EINVAL;
	}
	free(key);
	s->kind = PROTO_STEP_COMMAND;
	snprintf(s->command, sizeof(s->command), "%s", cmd);
	return 0;
}

/* A plan travels as one protocol line: find out now, not at the first
 * guest, that it is too long (the longest node name makes the longest line). */
static int plan_fits(const struct config *c, const char *path, const char *name,
		     const struct experiment *e, struct config_diag *d)
{
	struct proto_msg m = { .type = PROTO_PLAN, .version = PROTO_VERSION };
	memset(m.u.plan.node, 'n', PROTO_NAME_MAX - 1);
	m.u.plan.nsteps = e->nsteps;
	m.u.plan.steps = e->steps;
	struct proto_buf buf = { 0 };
	int r = proto_encode(&m, &buf);
	proto_buf_free(&buf);
	if (r == 0)
		return 0;
	diag_at(d, c, name, path,
		"the plan of %" PRIu32 " steps does not fit in one protocol message (%d KiB): "
		"use fewer iterations or shorter commands",
		e->nsteps, PROTO_LINE_MAX / 1024);
	return -EINVAL;
}

static int load_guest(const struct config *c, const char *path, struct experiment *e,
		      struct config_diag *d)
{
	int64_t iterations = 1, units = CPU_PROBE_UNITS_DEFAULT;
	const char *iter_name = config_first_set(c, iteration_names);
	if (iter_name &&
	    config_get_int(c, iter_name, 1, ITERATIONS_MAX, &iterations, d) < 0)
		return -EINVAL;
	if (config_get_int(c, "CPU_PROBE_UNITS", 1, INT64_MAX / 2, &units, d) < 0)
		return -EINVAL;

	const char *list_name = config_first_set(c, benchmark_names);
	const char *list = list_name ? config_get(c, list_name) : NULL;
	char *copy = xstrdup(list ? list : "");
	char *words[PROTO_STEPS_MAX];
	size_t nwords = 0;
	for (char *save, *w = strtok_r(copy, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
		if (nwords == PROTO_STEPS_MAX)
			break;
		words[nwords++] = w;
	}
	int ret = -EINVAL;
	if (nwords == 0) {
		diag_at(d, c, list_name, path,
			"no benchmarks: set MMTESTS=\"cpu-probe\" (or BENCHMARKS) to the steps to run");
		goto out;
	}
	if (nwords * (uint64_t)iterations > PROTO_STEPS_MAX) {
		diag_at(d, c, iter_name ? iter_name : list_name, path,
			"%zu benchmarks x %" PRId64 " iterations is more than %d steps", nwords,
			iterations, PROTO_STEPS_MAX);
		goto out;
	}
	e->iterations = (uint32_t)iterations;
	e->nsteps = (uint32_t)(nwords * (size_t)iterations);
	e->steps = xcalloc(e->nsteps, sizeof(*e->steps));
	/* Iterations outermost, as MMTests runs them: every benchmark once,
	 * then again, so slow drift spreads over all of them. */
	for (uint32_t it = 0, k = 0; it < e->iterations; it++) {
		for (size_t w = 0; w < nwords; w++, k++) {
			struct proto_step *s = &e->steps[k];
			s->index = k + 1;
			s->iteration = it + 1;
			if (fill_step(c, path, list_name, words[w], units, s, d) < 0)
				goto out;
		}
	}
	ret = plan_fits(c, path, iter_name ? iter_name : list_name, e, d);
out:
	free(copy);
	return ret;
}

static int load_file(const char *path, const struct sysfacts *facts, struct config **out,
		     struct config_diag *d)
{
	struct config *c = config_new();
	set_facts(c, facts);
	int r = config_load_file(c, path, d);
	if (r < 0) {
		config_free(c);
		return r;
	}
	*out = c;
	return 0;
}

int experiment_load(const char *host_config, const char *guest_config,
		    const char *default_template, struct experiment *exp, struct config **hconf_out,
		    struct config **gconf_out, struct config_diag *diag)
{
	struct sysfacts facts;
	struct config *h = NULL, *g = NULL;
	int r;

	memset(exp, 0, sizeof(*exp));
	memset(diag, 0, sizeof(*diag));
	if (sysfacts_read(&facts, "/") < 0)
		facts = (struct sysfacts){ .num_logical_cpus = 1, .num_nodes = 1, .num_llcs = 1 };

	r = load_file(host_config, &facts, &h, diag);
	if (r == 0)
		r = load_file(guest_config, &facts, &g, diag);
	if (r == 0)
		r = load_host(h, host_config, default_template, exp, diag);
	if (r == 0)
		r = load_guest(g, guest_config, exp, diag);
	if (r == 0)
		r = hoststate_settings_load(h, &exp->hoststate, diag);
	if (r == 0)
		r = monitor_settings_load(h, &exp->host_mon, diag);
	if (r == 0)
		r = monitor_settings_load(g, &exp->guest_mon, diag);
	if (r < 0) {
		experiment_fini(exp);
		config_free(h);
		config_free(g);
		return r;
	}
	if (exp->guest_kind == GUEST_KIND_LIBVIRT) {
		/* both lists count as known: merge them for one check */
		const char *known[64];
		size_t k = 0;
		for (size_t i = 0; host_keys[i] && k < 63; i++)
			known[k++] = host_keys[i];
		for (size_t i = 0; virt_settings_keys[i] && k < 63; i++)
			known[k++] = virt_settings_keys[i];
		known[k] = NULL;
		config_check_known(h, known, virt_settings_prefixes);
	} else {
		config_check_known(h, host_keys, NULL);
	}
	config_check_known(g, guest_keys, guest_prefixes);
	*hconf_out = h;
	*gconf_out = g;
	return 0;
}

void experiment_fini(struct experiment *exp)
{
	if (exp->guest_kind == GUEST_KIND_LIBVIRT)
		virt_settings_fini(&exp->virt);
	free(exp->ssh_user);
	free(exp->ssh_key);
	free(exp->harness_dir);
	exp->ssh_user = exp->ssh_key = exp->harness_dir = NULL;
	free(exp->steps);
	exp->steps = NULL;
	exp->nsteps = 0;
}
