// SPDX-License-Identifier: GPL-2.0-or-later
#include "experiment.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle_settings.h"
#include "config_files.h"
#include "sysfacts.h"
#include "xalloc.h"

#define GUEST_COUNT_MAX 1024
/* MMTests' monitor keys (docs/monitors.md), in h.conf and g.conf alike */
#define MONITOR_KEYS                                                                      \
	"MONITOR_UPDATE_FREQUENCY", "MONITORS", "MONITORS_GZIP", "MONITORS_WITH_LATENCY", \
		"MONITORS_TRACER", "MONITOR_PERF_EVENTS", "MONITOR_FTRACE_EVENTS"

static const char *const host_keys[] = {
	"GUEST_KIND",
	"GUEST_COUNT",
	"HOST_RUNS_BENCHMARKS",
	"BARRIER_TIMEOUT",
	"STEP_TIMEOUT",
	"ON_GUEST_FAILURE",
	"RELEASE_RT_PRIORITY",
	"GUEST_SSH_USER",
	"GUEST_SSH_KEY",
	"GUEST_HARNESS_DIR",
	"GUEST_SSH_TIMEOUT",
	"RELEASE",
	"RELEASE_LEAD",
	"LOCAL_GUEST_CLOCK_OFFSET_NS",
	"LOCAL_GUEST_CLOCK_DRIFT_PPM",
	"LOCAL_GUEST_CLOCK_JITTER_NS",
	MONITOR_KEYS,
	HOSTSTATE_KEYS,
	"RUN_TIMEOUT",
	CLUSTER_KEYS,
	NULL,
};
/* g.conf keys beside the plan's (plan_keys) and the specs' parameters */
static const char *const guest_keys[] = { MONITOR_KEYS, "HARNESS_BINARIES",
					  "GUEST_INSTALLED_BINARIES", HOSTSTATE_KEYS, NULL };
/* h.conf: GUEST_CONFIG_<NODE> gives one node a g.conf of its own */
static const char *const host_prefixes[] = { "GUEST_CONFIG_", NULL };

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
	/* the whole run's wall time, at most (0: no cap; the service has one) */
	if (config_get_seconds(c, "RUN_TIMEOUT", 1, 86400 * 30, &e->run_timeout_s, d) < 0)
		return -EINVAL;
	e->release = (enum release_mode)release;
	if (cluster_settings_load(c, path, &e->cluster, d) < 0)
		return -EINVAL;
	if (config_get_int(c, "LOCAL_GUEST_CLOCK_OFFSET_NS", -INT64_MAX / 4, INT64_MAX / 4,
			   &e->local_clock_offset_ns, d) < 0 ||
	    config_get_int(c, "LOCAL_GUEST_CLOCK_JITTER_NS", 0, 1000000000,
			   &e->local_clock_jitter_ns, d) < 0 ||
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
			if (!proto_name_valid(e->virt.names[i]) ||
			    strcmp(e->virt.names[i], "host") == 0) {
				config_diag_at(d, c, NULL, path,
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
			config_diag_at(d, c, "GUEST_HARNESS_DIR", path,
				       "GUEST_HARNESS_DIR=\"%s\" is not an absolute path", dir);
			return -EINVAL;
		}
		if (config_get_seconds(c, "GUEST_SSH_TIMEOUT", 0.1, 3600, &e->ssh_timeout_s, d) < 0)
			return -EINVAL;
	}
	if (e->guest_count == 0 && !e->host_runs_benchmarks) {
		config_diag_at(d, c, "GUEST_COUNT", path,
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

static int load_file(const char *path, const struct sysfacts *facts, const char *const *sets,
		     struct config **out, struct config_diag *d)
{
	struct config *c = config_new();
	plan_set_facts(c, facts);
	int r = config_files_load(c, path, d);
	for (size_t i = 0; r == 0 && sets && sets[i]; i++)
		r = config_override(c, sets[i], d);
	if (r < 0) {
		config_free(c);
		return r;
	}
	*out = c;
	return 0;
}

/* The facts a node's g.conf is read with: a template guest's vCPUs and
 * memory, else the host's (local guests run on it; an existing domain's
 * size is not known before it runs, docs/benchmarks.md). */
static struct sysfacts node_facts(const struct experiment *e, size_t i, const struct sysfacts *host)
{
	struct sysfacts f = *host;
	/* a libvirt guest's /proc and /sys are its own, not this machine's */
	f.elsewhere = i < e->guest_count && e->guest_kind == GUEST_KIND_LIBVIRT;
	if (i < e->guest_count && e->guest_kind == GUEST_KIND_LIBVIRT && e->virt.template_path &&
	    e->virt.vcpus > 0) {
		f.num_logical_cpus = (int)e->virt.vcpus;
		f.num_nodes = 1;
		f.num_llcs = 1;
		if (e->virt.memory_mib)
			f.memtotal_bytes = (uint64_t)e->virt.memory_mib << 20;
		memset(f.node_mem_bytes, 0, sizeof(f.node_mem_bytes));
		f.node_mem_bytes[0] = f.memtotal_bytes;
	}
	return f;
}

/* GUEST_CONFIG_<NODE> (the node name upper-cased, '-' and '.' as '_'),
 * relative to h.conf's folder; else the g.conf of the command line. */
static char *node_gconf(const struct config *h, const char *hpath, const char *gpath, const char *node)
{
	char *key = xasprintf("GUEST_CONFIG_%s", node);
	for (char *p = key + 13; *p; p++)
		*p = (*p == '-' || *p == '.') ? '_' : (char)toupper((unsigned char)*p);
	const char *v = config_get(h, key);
	free(key);
	if (!v || !*v)
		return xstrdup(gpath);
	if (v[0] == '/')
		return xstrdup(v);
	const char *slash = strrchr(hpath, '/');
	return slash ? xasprintf("%.*s/%s", (int)(slash - hpath), hpath, v) : xstrdup(v);
}

/* The files each plan's g.conf ships (cat >FILE <<END), as harness
 * members: they land in the work folder beside what the harness holds,
 * whose names they must not take. */
static int load_shipped(struct experiment *e, struct config_diag *d)
{
	static const char *const harness[] = { "guestagent", "agent.log", "agent.pid", "bin",
					       "lib",	     "libexec",	  NULL };
	e->shipped = xcalloc(e->nplans, sizeof(*e->shipped));
	e->nshipped = xcalloc(e->nplans, sizeof(*e->nshipped));
	for (size_t k = 0; k < e->nplans; k++) {
		const struct config_shipped *f;
		size_t m = config_shipped(e->plans[k].gconf, &f);
		e->shipped[k] = xcalloc(m ? m : 1, sizeof(**e->shipped));
		e->nshipped[k] = m;
		for (size_t j = 0; j < m; j++) {
			for (size_t h = 0; harness[h]; h++) {
				if (strcmp(f[j].name, harness[h]) != 0)
					continue;
				config_diag_at(d, NULL, NULL, f[j].file,
					       "cat >%s: %s is a name the "
					       "harness takes in the work folder; name the file "
					       "otherwise",
					       f[j].path, f[j].name);
				d->line = f[j].line;
				return -EINVAL;
			}
			e->shipped[k][j] = (struct ssh_push_file){ .name_in_tar = f[j].name,
								   .mode = 0644,
								   .data = f[j].text,
								   .len = f[j].len };
		}
	}
	return 0;
}

static int load_plans(struct experiment *e, const struct config *h, const char *hpath,
		      const char *gpath, const struct sysfacts *host, struct config_diag *d)
{
	size_t n = e->guest_count + (e->host_runs_benchmarks ? 1 : 0);
	const char *dir = bench_specs_dir();
	e->plans = xcalloc(n, sizeof(*e->plans));
	e->node_plan = xcalloc(n, sizeof(*e->node_plan));
	for (size_t i = 0; i < n; i++) {
		char buf[PROTO_NAME_MAX];
		const char *name = i < e->guest_count
					   ? experiment_guest_name(e, (unsigned)i, buf, sizeof(buf))
					   : "host";
		struct sysfacts f = node_facts(e, i, host);
		char *path = node_gconf(h, hpath, gpath, name);
		for (size_t k = 0; k < e->nplans && !e->node_plan[i]; k++)
			if (strcmp(e->plans[k].gconf_path, path) == 0 &&
			    memcmp(&e->plans[k].facts, &f, sizeof(f)) == 0)
				e->node_plan[i] = &e->plans[k];
		if (!e->node_plan[i]) {
			int r = plan_build_set(path, &f, dir, e->overrides, &e->plans[e->nplans], d);
			if (r < 0) {
				free(path);
				return r;
			}
			e->node_plan[i] = &e->plans[e->nplans++];
		}
		free(path);
		/* the barrier is per step: every node must reach the same count */
		const struct node_plan *first = e->node_plan[0], *mine = e->node_plan[i];
		if (mine->nsteps != first->nsteps) {
			char b0[PROTO_NAME_MAX];
			config_diag_at(d, h, NULL, mine->gconf_path,
				       "the plan of %s has %" PRIu32 " steps, that of %s (%s) %" PRIu32
				       ": every node must run as many steps, since all wait at each barrier",
				       name, mine->nsteps,
				       e->guest_count ? experiment_guest_name(e, 0, b0, sizeof(b0))
						      : "host",
				       first->gconf_path, first->nsteps);
			return -EINVAL;
		}
		/* the rounds of adaptive iterations end on every node together */
		if (mine->auto_iter != first->auto_iter ||
		    (mine->auto_iter &&
		     (mine->iterations != first->iterations ||
		      mine->auto_rule.min != first->auto_rule.min ||
		      mine->auto_rule.target_ci_pct != first->auto_rule.target_ci_pct))) {
			config_diag_at(d, mine->gconf, "MMTEST_ITERATIONS", mine->gconf_path,
				       "the plan of %s differs from that of the first node (%s) in "
				       "MMTEST_ITERATIONS=auto or its AUTO_* keys: adaptive iterations stop "
				       "every node at once, by one rule",
				       name, first->gconf_path);
			return -EINVAL;
		}
	}
	e->nsteps = e->plans[0].nsteps;
	e->steps = e->plans[0].steps;
	e->iterations = e->plans[0].iterations;
	for (size_t k = 0; k < e->nplans; k++)
		plan_check_known(&e->plans[k], guest_keys);
	return load_shipped(e, d);
}

size_t experiment_shipped(const struct experiment *e, size_t i, const struct ssh_push_file **out)
{
	size_t k = (size_t)(e->node_plan[i] - e->plans);
	*out = e->shipped ? e->shipped[k] : NULL;
	return e->shipped ? e->nshipped[k] : 0;
}

/* The binaries the guests' benchmark steps need go with the harness. */
static int add_spec_binaries(struct experiment *e, const struct config *g, const char *path,
			     struct config_diag *d)
{
	bool added = false;
	if (e->guest_kind != GUEST_KIND_LIBVIRT)
		return 0;
	for (size_t i = 0; i < e->guest_count; i++) {
		const struct node_plan *p = e->node_plan[i];
		for (uint32_t k = 0; k < p->nsteps; k++) {
			const struct bench_spec *spec = p->info[k].spec;
			for (size_t b = 0; spec && b < spec->nbinaries; b++) {
				bundle_settings_add(&e->bundles, spec->binaries[b]);
				added = true;
			}
		}
	}
	return added ? bundle_settings_resolve(&e->bundles, e->harness_dir, g, path, d) : 0;
}

int experiment_load(const char *host_config, const char *guest_config, const char *default_template,
		    struct experiment *exp, struct config **hconf_out, struct config **gconf_out,
		    struct config_diag *diag)
{
	return experiment_load_set(host_config, guest_config, default_template, NULL, 0, exp,
				   hconf_out, gconf_out, diag);
}

/* Host state a g.conf asks for (MMTests' cpupower frequency-set and
 * disable_transhuge lines become CPUFREQ_GOVERNOR and
 * TRANSPARENT_HUGEPAGES, echo never > .../transparent_hugepage/defrag
 * TRANSPARENT_HUGEPAGES_DEFRAG): the host's to set, since only hostd can; what
 * h.conf says wins. */
static int load_hoststate(const struct config *h, const struct config *g,
			  struct hoststate_settings *s, struct config_diag *d)
{
	struct hoststate_settings from_g;
	int r = hoststate_settings_load(h, s, d);
	if (r == 0)
		r = hoststate_settings_load(g, &from_g, d);
	if (r < 0)
		return r;
	if (!s->governor[0])
		memcpy(s->governor, from_g.governor, sizeof(s->governor));
	if (!s->epp[0])
		memcpy(s->epp, from_g.epp, sizeof(s->epp));
	if (s->no_turbo < 0)
		s->no_turbo = from_g.no_turbo;
	if (!s->thp[0])
		memcpy(s->thp, from_g.thp, sizeof(s->thp));
	if (!s->thp_defrag[0])
		memcpy(s->thp_defrag, from_g.thp_defrag, sizeof(s->thp_defrag));
	return 0;
}

/* h.conf is lockstep's own file, read by nothing else: a name no key is
 * is a typo that would silently leave a default in force.  The first is the
 * error (config_check_known_ex warns of each unknown name in order, before
 * the ignored ones); --lenient leaves them warnings. */
static int check_host_names(const struct experiment *exp, const struct config *h, const char *path,
			    unsigned flags, struct config_diag *d)
{
	const struct config_diag *w;
	size_t before = config_warnings(h, &w), unknown;
	if (exp->guest_kind == GUEST_KIND_LIBVIRT) {
		/* both lists count as known: merged for one check, sized to
		 * them (a fixed array cut the list short without a word) */
		size_t nh = 0, nv = 0;
		while (host_keys[nh])
			nh++;
		while (virt_settings_keys[nv])
			nv++;
		const char **known = xcalloc(nh + nv + 1, sizeof(*known));
		memcpy(known, host_keys, nh * sizeof(*known));
		memcpy(known + nh, virt_settings_keys, nv * sizeof(*known));
		const char *prefixes[] = { virt_settings_prefixes[0], host_prefixes[0], NULL };
		unknown = config_check_known_ex(h, known, prefixes, config_mmtests_ignored);
		free(known);
	} else {
		unknown = config_check_known_ex(h, host_keys, host_prefixes, config_mmtests_ignored);
	}
	if (!unknown || (flags & EXPERIMENT_LENIENT))
		return 0;
	if (config_warnings(h, &w) <= before) /* the warnings were full */
		return config_diag_at(d, NULL, NULL, path,
				      "%zu unknown name%s (hostd --lenient "
				      "to run anyway)",
				      unknown, unknown == 1 ? "" : "s");
	*d = w[before];
	size_t len = strlen(d->text);
	char more[64] = "";
	if (unknown > 1)
		snprintf(more, sizeof(more), "; %zu more unknown name%s in the file", unknown - 1,
			 unknown == 2 ? "" : "s");
	snprintf(d->text + len, sizeof(d->text) - len,
		 "%s (h.conf takes lockstep's keys only, "
		 "docs/config.md; hostd --lenient makes unknown names warnings)",
		 more);
	return -EINVAL;
}

int experiment_load_set(const char *host_config, const char *guest_config,
			const char *default_template, const char *const *sets, unsigned flags,
			struct experiment *exp, struct config **hconf_out,
			struct config **gconf_out, struct config_diag *diag)
{
	struct sysfacts facts;
	struct config *h = NULL, *g = NULL;
	int r;

	memset(exp, 0, sizeof(*exp));
	memset(diag, 0, sizeof(*diag));
	exp->overrides = sets;
	if (sysfacts_read(&facts, "/") < 0)
		facts = (struct sysfacts){ .num_logical_cpus = 1, .num_nodes = 1, .num_llcs = 1 };

	r = load_file(host_config, &facts, NULL, &h, diag);
	if (r == 0)
		r = load_file(guest_config, &facts, sets, &g, diag);
	if (r == 0)
		r = load_host(h, host_config, default_template, exp, diag);
	if (r == 0)
		r = load_plans(exp, h, host_config, guest_config, &facts, diag);
	if (r == 0)
		r = load_hoststate(h, g, &exp->hoststate, diag);
	if (r == 0)
		r = monitor_settings_load(h, &exp->host_mon, diag);
	if (r == 0)
		r = monitor_settings_load(g, &exp->guest_mon, diag);
	/* what each g.conf names and lockstep lacks is said where its
	 * warnings are shown: with its plan's */
	for (size_t k = 0; r == 0 && k < exp->nplans; k++) {
		struct monitor_settings unused;
		r = monitor_settings_load(exp->plans[k].gconf, &unused, diag);
	}
	if (r == 0)
		r = bundle_settings_load(g, guest_config, &exp->bundles, diag);
	if (exp->guest_kind == GUEST_KIND_LIBVIRT) {
		if (r == 0)
			r = bundle_settings_resolve(&exp->bundles, exp->harness_dir, g,
						    guest_config, diag);
		if (r == 0)
			r = add_spec_binaries(exp, g, guest_config, diag);
		if (r == 0)
			r = monitor_settings_push(&exp->guest_mon, exp->harness_dir, &exp->bundles,
						  g, guest_config, diag);
	}
	if (r == 0)
		r = check_host_names(exp, h, host_config, flags, diag);
	if (r < 0) {
		experiment_fini(exp);
		config_free(h);
		config_free(g);
		return r;
	}
	exp->hconf = h;
	*hconf_out = h;
	*gconf_out = g;
	return 0;
}

static void config_warnings_each(const struct config *c, void (*fn)(void *, const char *), void *ctx)
{
	const struct config_diag *d;
	size_t n = config_warnings(c, &d);

	for (size_t i = 0; i < n; i++) {
		char line[1024];

		config_diag_format(&d[i], line, sizeof(line));
		fn(ctx, line);
	}
}

void experiment_warnings(const struct experiment *exp, void (*fn)(void *ctx, const char *line),
			 void *ctx)
{
	if (exp->hconf)
		config_warnings_each(exp->hconf, fn, ctx);
	/* the g.conf a run reads with the host's facts is the same file as
	 * the plans': its warnings are theirs */
	for (size_t k = 0; k < exp->nplans; k++) {
		bool seen = false;

		for (size_t j = 0; j < k && !seen; j++)
			seen = strcmp(exp->plans[j].gconf_path, exp->plans[k].gconf_path) == 0;
		if (!seen)
			config_warnings_each(exp->plans[k].gconf, fn, ctx);
	}
}

void experiment_fini(struct experiment *exp)
{
	if (exp->guest_kind == GUEST_KIND_LIBVIRT)
		virt_settings_fini(&exp->virt);
	cluster_settings_fini(&exp->cluster);
	free(exp->ssh_user);
	free(exp->ssh_key);
	free(exp->harness_dir);
	exp->ssh_user = exp->ssh_key = exp->harness_dir = NULL;
	bundle_settings_fini(&exp->bundles);
	for (size_t i = 0; exp->shipped && i < exp->nplans; i++)
		free(exp->shipped[i]);
	free(exp->shipped);
	free(exp->nshipped);
	exp->shipped = NULL;
	exp->nshipped = NULL;
	for (size_t i = 0; i < exp->nplans; i++)
		plan_fini(&exp->plans[i]);
	free(exp->plans);
	free(exp->node_plan);
	exp->plans = NULL;
	exp->node_plan = NULL;
	exp->nplans = 0;
	exp->steps = NULL;
	exp->nsteps = 0;
}
