// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostd --check: what a run of these configs would do, found without
 * starting anything.  The configs are read exactly as a run reads them
 * (experiment_load_set), so a config that --check accepts is one that a
 * run accepts; then the plan of each node, the files shipped with its
 * steps, the host state, what is ignored, the binaries to push and the
 * pre-flight checks that need no guest are printed.
 */
#include "checkmode.h"

#include <errno.h>
#include <inttypes.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle.h"
#include "cluster.h"
#include "config.h"
#include "experiment.h"
#include "fileio.h"
#include "harness.h"
#include "plan.h"
#include "xalloc.h"

static void print_warning(void *out, const char *line)
{
	fprintf(out, "  %s\n", line);
}

static void print_plan(FILE *out, const struct node_plan *p, const char *nodes)
{
	fprintf(out, "plan of %s (%s; %d CPUs, %d nodes, %" PRIu64 " MiB):\n", nodes, p->gconf_path,
		p->facts.num_logical_cpus, p->facts.num_nodes, p->facts.memtotal_bytes >> 20);
	if (p->auto_iter)
		fprintf(out,
			"  at most %" PRIu32 " steps, MMTEST_ITERATIONS=auto: %" PRIu32 " to %" PRIu32
			" rounds, until every series' 95%% interval of the median is within "
			"%g%%\n",
			p->nsteps, p->auto_rule.min, p->auto_rule.max, p->auto_rule.target_ci_pct);
	else
		fprintf(out, "  %" PRIu32 " steps, MMTEST_ITERATIONS=%" PRIu32 "\n", p->nsteps,
			p->iterations);
	for (uint32_t k = 0; k < p->nsteps; k++) {
		const struct proto_step *st = &p->steps[k];
		char variant[BENCH_VARIANT_MAX];

		plan_step_variant(p, k + 1, variant, sizeof(variant));
		/* a spec's command line is long and shown by the spec; a
		 * COMMAND_<NAME> of the config's own is worth seeing here */
		bool own = st->kind != PROTO_STEP_CPU_PROBE && !p->info[k].spec;
		fprintf(out, "  step %" PRIu32 ": %s%s%s iteration %" PRIu32 "%s%s%s%s%s\n",
			st->index, st->benchmark, variant[0] ? " " : "", variant, st->iteration,
			p->info[k].warmup ? " (warm-up)" : "",
			st->kind == PROTO_STEP_CPU_PROBE ? " (built in)" : "",
			own ? " (the config's command: " : "", own ? st->command : "", own ? ")" : "");
	}
	const struct config_shipped *f;
	size_t n = config_shipped(p->gconf, &f);
	for (size_t i = 0; i < n; i++)
		fprintf(out,
			"  shipped file %s (%zu bytes, %s:%d), pushed to the work folder as "
			"./%s\n",
			f[i].path, f[i].len, f[i].file, f[i].line, f[i].name);
}

/* The smallest two-sided p of Mann-Whitney's U with n samples on each
 * side, no ties: 2 / C(2n, n).  hostctl compare's default test (U, alpha
 * 0.05) can call a change significant only when this is below alpha. */
static double mwu_min_p(uint32_t n)
{
	double c = 1;

	for (uint32_t i = 1; i <= n; i++)
		c = c * (n + i) / i;
	return 2 / c < 1 ? 2 / c : 1;
}

/*
 * Each series (benchmark and sweep point) of a plan: how many measured
 * samples a run gives it, and whether comparing two such runs can reach
 * significance.  Steps of a series have the same metrics, so one count
 * per series says it; the metrics' own variance is not known before a run.
 */
static void print_samples(FILE *out, const struct node_plan *p)
{
	const double alpha = 0.05;
	uint32_t need = 1;

	while (mwu_min_p(need) >= alpha)
		need++;
	fprintf(out,
		"  samples per series in one run (hostctl compare's U test reaches p < "
		"%.2f with %u per run or more):\n",
		alpha, need);
	for (uint32_t k = 0; k < p->nsteps; k++) {
		uint32_t n = 0;
		bool first = true;
		char variant[BENCH_VARIANT_MAX];

		for (uint32_t j = 0; j < k && first; j++)
			first = !plan_same_series(p, j + 1, k + 1);
		if (!first)
			continue;
		for (uint32_t j = k; j < p->nsteps; j++)
			n += !p->info[j].warmup && plan_same_series(p, j + 1, k + 1);
		plan_step_variant(p, k + 1, variant, sizeof(variant));
		/* adaptive: AUTO_MIN rounds at least, AUTO_MAX at most */
		uint32_t least = p->auto_iter ? n / p->iterations * p->auto_rule.min : n;
		char range[32] = "";
		if (p->auto_iter)
			snprintf(range, sizeof(range), "%u to ", least);
		fprintf(out, "    %s%s%s: %s%u%s%s\n", p->steps[k].benchmark, variant[0] ? " " : "",
			variant, range, n,
			least >= need ? ""
				      : ": too few to tell a change from noise; "
					"raise ",
			least >= need  ? ""
			: p->auto_iter ? "AUTO_MIN or the benchmark's "
					 "iterations"
				       : "MMTEST_ITERATIONS or the benchmark's iterations");
	}
}

/* A server on a fixed port (tbench_srv's 7003) serves one node of a
 * network: local guests and the host share the host's, and all but one of
 * them would fail each step of it.  Once per spec. */
static void print_shared_ports(FILE *out, const struct experiment *e)
{
	unsigned sharing = (e->guest_kind == GUEST_KIND_LOCAL ? e->guest_count : 0) +
			   (e->host_runs_benchmarks ? 1 : 0);
	if (sharing < 2)
		return;
	for (size_t k = 0; k < e->nplans; k++)
		for (size_t i = 0; i < e->plans[k].nspecs; i++) {
			const struct bench_spec *s = e->plans[k].specs[i];
			bool used = false, before = false;
			for (uint32_t j = 0; j < e->plans[k].nsteps && !used; j++)
				used = e->plans[k].info[j].spec == s;
			for (size_t q = 0; q < k && used && !before; q++)
				for (uint32_t j = 0; j < e->plans[q].nsteps && !before; j++)
					before = !strcmp(e->plans[q].steps[j].benchmark, s->name);
			if (used && !before && s->server_port_fixed)
				fprintf(out,
					"  %s: its server listens on the fixed port %u, and %u "
					"nodes share this host's network (local guests, the host): "
					"each step of it would fail on all but one; run it on one "
					"local guest or on libvirt guests\n",
					s->name, (unsigned)s->server_port_fixed, sharing);
		}
}

/* The participants that share plan p, as "guest-1 guest-2". */
static char *nodes_of(const struct experiment *e, const struct node_plan *p)
{
	size_t n = e->guest_count + (e->host_runs_benchmarks ? 1 : 0), len = 0;
	char *s = xstrdup("");

	for (size_t i = 0; i < n; i++) {
		char buf[PROTO_NAME_MAX];
		const char *name = i < e->guest_count
					   ? experiment_guest_name(e, (unsigned)i, buf, sizeof(buf))
					   : "host";

		if (e->node_plan[i] != p)
			continue;
		s = xrealloc(s, len + strlen(name) + 2);
		len += (size_t)sprintf(s + len, "%s%s", len ? " " : "", name);
	}
	return s;
}

static void print_hoststate(FILE *out, const struct hoststate_settings *s)
{
	fprintf(out, "host state it would set (saved before, always put back):\n");
	if (hoststate_settings_empty(s))
		fprintf(out, "  nothing\n");
	if (s->governor[0])
		fprintf(out, "  cpufreq governor of every CPU: %s\n", s->governor);
	if (s->epp[0])
		fprintf(out, "  energy_performance_preference of every CPU: %s\n", s->epp);
	if (s->no_turbo >= 0)
		fprintf(out, "  intel_pstate no_turbo: %d\n", s->no_turbo);
	if (s->thp[0])
		fprintf(out, "  transparent huge pages: %s\n", s->thp);
	if (s->thp_defrag[0])
		fprintf(out, "  transparent huge pages' defrag: %s\n", s->thp_defrag);
}

static void print_binaries(FILE *out, const struct experiment *e, const char *guest_agent)
{
	struct stat st;

	fprintf(out, "binaries pushed into each guest:\n");
	if (e->guest_kind != GUEST_KIND_LIBVIRT) {
		fprintf(out, "  none: local guests run the host's own binaries\n");
		return;
	}
	if (guest_agent && stat(guest_agent, &st) == 0)
		fprintf(out, "  guestagent %s (%lld bytes)\n", guest_agent, (long long)st.st_size);
	if (!e->bundles.bundle)
		return;
	for (size_t i = 0; i < e->bundles.bundle->nfiles; i++) {
		const struct ssh_push_file *f = &e->bundles.bundle->files[i];
		long long size = f->local_path ? (stat(f->local_path, &st) == 0 ? st.st_size : -1)
					       : (long long)f->len;

		fprintf(out, "  %s (%lld bytes%s%s)\n", f->name_in_tar, size,
			f->local_path ? ", from " : "", f->local_path ? f->local_path : "");
	}
	fprintf(out, "  %zu binaries, %zu libraries, %" PRIu64 " bytes in all\n",
		e->bundles.bundle->nbinaries, e->bundles.bundle->nlibs, e->bundles.bundle->bytes);
}

/* A folder that exists and is writable, or could be made. */
static const char *folder_state(const char *path, char *why, size_t size)
{
	char *copy = xstrdup(path), *slash;
	const char *state = NULL;

	if (access(path, W_OK | X_OK) == 0) {
		state = "writable";
		goto out;
	}
	if (errno != ENOENT) {
		snprintf(why, size, "not writable: %s", strerror(errno));
		goto out;
	}
	/* the nearest parent that exists decides whether it can be made */
	while ((slash = strrchr(copy, '/')) && slash != copy) {
		*slash = '\0';
		if (access(copy, F_OK) == 0)
			break;
	}
	if (slash == copy)
		copy[1] = '\0';
	if (!slash)
		snprintf(copy, 2, ".");
	if (access(copy, W_OK | X_OK) == 0)
		state = "does not exist yet; can be made";
	else
		snprintf(why, size, "cannot be made: %s is not writable", copy);
out:
	free(copy);
	return state;
}

/* Pre-flight checks that need no guest; the count of failures. */
static int preflight(FILE *out, const struct experiment *e, const struct check_options *o)
{
	const char *const folders[][2] = { { "state dir", o->state_dir },
					   { "results folder", o->results_dir } };
	int failed = 0;
	char why[256];

	fprintf(out, "pre-flight checks:\n");
	for (size_t i = 0; i < 2; i++) {
		const char *state = folder_state(folders[i][1], why, sizeof(why));

		fprintf(out, "  %s %s: %s\n", folders[i][0], folders[i][1], state ? state : why);
		failed += !state;
	}
	if (e->guest_kind == GUEST_KIND_LIBVIRT) {
		int st = o->guest_agent ? harness_elf_is_static(o->guest_agent) : -ENOENT;

		/* the run refuses it too: a guest may have no libc of ours */
		fprintf(out, "  the agent for guests %s: %s\n", o->guest_agent ? o->guest_agent : "",
			st == 1	  ? "statically linked"
			: st == 0 ? "dynamically linked: use a "
				    "static one (--guest-agent, meson -Dstatic_agent=true)"
				  : "not an ELF "
				    "executable");
		failed += st != 1;
	}
	if (e->guest_kind == GUEST_KIND_LIBVIRT) {
		const char *uri = e->virt.uri;
		virConnectPtr conn = virConnectOpenReadOnly(uri);

		if (conn) {
			fprintf(out, "  libvirt %s: reachable\n", uri ? uri : "(default)");
			virConnectClose(conn);
		} else {
			virErrorPtr err = virGetLastError();

			fprintf(out, "  libvirt %s: not reachable: %s\n", uri ? uri : "(default)",
				err && err->message ? err->message : "unknown error");
			failed++;
		}
	}
	if (e->cluster.enabled) {
		/* connect, AUTH, PING: what the run does first */
		char err[600];
		int r = cluster_probe(&e->cluster, err, sizeof(err));

		fprintf(out, "  Redis %s:%d (CLUSTER_REDIS): %s\n", e->cluster.redis_host,
			e->cluster.redis_port, r == 0 ? "reachable" : err);
		failed += r < 0;
	}
	if (e->release_rt_priority > 0) {
		struct rlimit rl;
		bool root = geteuid() == 0;
		bool ok = root || (getrlimit(RLIMIT_RTPRIO, &rl) == 0 &&
				   rl.rlim_cur >= (rlim_t)e->release_rt_priority);

		/* not a failure: the release then runs unboosted (rtprio.h) */
		fprintf(out, "  real-time priority %d for the release: %s\n", e->release_rt_priority,
			ok ? "available"
			   : "not available (no CAP_SYS_NICE or RLIMIT_RTPRIO): the "
			     "release runs unboosted");
	}
	return failed;
}

int check_main(const struct check_options *o, FILE *out)
{
	struct experiment exp;
	struct config *h = NULL, *g = NULL;
	struct config_diag d;
	int r = experiment_load_set(o->host_config, o->guest_config, o->default_template, o->sets,
				    o->load_flags, &exp, &h, &g, &d);

	if (r < 0) {
		char line[1024];

		config_diag_format(&d, line, sizeof(line));
		fprintf(out, "error: %s\n", line);
		return 1;
	}
	fprintf(out, "%s and %s: read; %u guest%s (%s)%s\n", o->host_config, o->guest_config,
		exp.guest_count, exp.guest_count == 1 ? "" : "s",
		exp.guest_kind == GUEST_KIND_LIBVIRT ? "libvirt" : "local",
		exp.host_runs_benchmarks ? " and the host" : "");
	for (size_t i = 0; o->sets && o->sets[i]; i++)
		fprintf(out, "--set %s\n", o->sets[i]);
	for (size_t k = 0; k < exp.nplans; k++) {
		char *nodes = nodes_of(&exp, &exp.plans[k]);

		print_plan(out, &exp.plans[k], nodes);
		print_samples(out, &exp.plans[k]);
		free(nodes);
	}
	print_hoststate(out, &exp.hoststate);
	if (exp.cluster.enabled)
		cluster_settings_print(out, &exp.cluster);
	fprintf(out, "ignored, with why, and other warnings:\n");
	experiment_warnings(&exp, print_warning, out);
	print_shared_ports(out, &exp);
	print_binaries(out, &exp, o->guest_agent);
	int failed = preflight(out, &exp, o);
	fprintf(out, "%s\n", failed ? "check failed" : "check passed: nothing was started");
	experiment_fini(&exp);
	config_free(h);
	config_free(g);
	return failed ? 1 : 0;
}
