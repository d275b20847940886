// SPDX-License-Identifier: GPL-2.0-or-later
#include "monitor_settings.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bundle.h"
#include "bundle_settings.h"
#include "config.h"
#include "log.h"

const char *const monitor_ext_names[MONITOR_EXT_COUNT] = {
	"vmstat", "mpstat", "iostat", "top", "perf-event-stat", "trace-cmd",
};

/* MMTests monitors that the built-in ones stand for. */
static const char *const monitor_builtin_names[] = {
	"proc-vmstat", "proc-stat", "proc-schedstat", "proc-loadavg", "proc-pressure", NULL,
};

/* MMTests monitors lockstep does not run, and why.  A monitor is never a
 * reason to refuse a config: the benchmark's numbers do not depend on it. */
static const char *const monitor_ignored[][2] = {
	{ "turbostat", "it reads MSRs through linux-cpupower's turbostat, which lockstep does not "
		       "run yet; inside a guest it would see no real MSRs" },
	{ "perf-time-stat", "use perf-event-stat with MONITOR_PERF_EVENTS" },
	{ "iotop", "it needs the kernel's task I/O accounting and python; use iostat" },
	{ "numa-numastat", "not a lockstep monitor; proc-vmstat carries the numa_* counters" },
	{ "numa-meminfo", "not a lockstep monitor" },
	{ "numa-convergence", "not a lockstep monitor" },
	{ "numa-scheduling", "not a lockstep monitor" },
	{ "proc-interrupts", "not a built-in monitor yet" },
	{ "proc-buddyinfo", "not a built-in monitor yet" },
	{ "proc-pagetypeinfo", "not a built-in monitor yet" },
	{ "proc-meminfo", "not a built-in monitor yet" },
	{ "proc-timer_list", "not a built-in monitor yet" },
	{ "proc-latency_stats", "not a built-in monitor yet" },
	{ "slabinfo", "not a lockstep monitor" },
	{ "ftrace", "use trace-cmd with MONITOR_FTRACE_EVENTS" },
};

/* One warning per unknown name: the same name in MONITORS and
 * MONITORS_GZIP is said twice, each at its own line. */
static void monitor_ignore(const struct config *c, const char *key, const char *word)
{
	for (size_t i = 0; i < sizeof(monitor_ignored) / sizeof(monitor_ignored[0]); i++)
		if (!strcmp(word, monitor_ignored[i][0])) {
			config_warn_at(c, key, "%s: monitor %s ignored: %s", key, word,
				       monitor_ignored[i][1]);
			return;
		}
	config_warn_at(c, key,
		       "%s: monitor \"%s\" ignored: not a monitor lockstep has (vmstat "
		       "mpstat iostat top perf-event-stat trace-cmd, or the built-in proc-vmstat "
		       "proc-stat proc-schedstat proc-loadavg proc-pressure)",
		       key, word);
}

static void monitor_names(const struct config *c, const char *key, struct monitor_settings *s)
{
	const char *v = config_get(c, key);
	char word[64];

	while (v && *v) {
		size_t len;
		int k;

		while (isspace((unsigned char)*v))
			v++;
		len = strcspn(v, " \t\n");
		if (!len)
			break;
		snprintf(word, sizeof(word), "%.*s", (int)(len < 63 ? len : 63), v);
		v += len;
		for (k = 0; k < MONITOR_EXT_COUNT; k++)
			if (!strcmp(word, monitor_ext_names[k]))
				break;
		if (k < MONITOR_EXT_COUNT) {
			s->external |= 1u << k;
			continue;
		}
		for (k = 0; monitor_builtin_names[k]; k++)
			if (!strcmp(word, monitor_builtin_names[k]))
				break;
		if (!monitor_builtin_names[k])
			monitor_ignore(c, key, word);
	}
}

/* Event names go on a command line as arguments (never through a shell);
 * still, only what such names are made of is taken. */
static int monitor_events(const struct config *c, const char *key, const char *extra, char *out,
			  size_t size, struct config_diag *err)
{
	const char *v = config_get(c, key);

	if (!v)
		return 0;
	if (strlen(v) >= size)
		return config_diag_at(err, c, key, NULL, "%s is longer than %zu bytes", key, size - 1);
	/* MMTests spreads MONITOR_FTRACE_EVENTS over lines: any blank separates */
	bool spaces = strchr(extra, ' ') != NULL;
	size_t n = 0;
	for (const char *p = v; *p; p++) {
		if (spaces && isspace((unsigned char)*p)) {
			if (n > 0 && out[n - 1] != ' ')
				out[n++] = ' ';
			continue;
		}
		if (!isalnum((unsigned char)*p) && !strchr("_-:./", *p) && !strchr(extra, *p))
			return config_diag_at(err, c, key, NULL,
					      "%s holds \"%.64s\": only event names (A-Z a-z "
					      "0-9 _ - : . /) and their separators",
					      key, v);
		out[n++] = *p;
	}
	while (n > 0 && out[n - 1] == ' ')
		n--;
	out[n] = '\0';
	return 0;
}

int monitor_settings_load(const struct config *c, struct monitor_settings *s, struct config_diag *err)
{
	static const char *const keys[] = {
		"MONITORS",
		"MONITORS_GZIP",
		"MONITORS_WITH_LATENCY",
		"MONITORS_TRACER",
	};
	double secs;
	bool any = false;
	int r;

	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		monitor_names(c, keys[i], s);
		any |= config_get(c, keys[i]) != NULL;
	}
	r = config_get_seconds(c, "MONITOR_UPDATE_FREQUENCY", 0.01, 3600, &secs, err);
	if (r < 0)
		return r;
	if (r == 0)
		s->interval_ms = (uint32_t)lround(secs * 1000);
	else if (any)
		s->interval_ms = MONITOR_DEFAULT_INTERVAL_MS;
	if ((r = monitor_events(c, "MONITOR_PERF_EVENTS", ",", s->perf_events,
				sizeof(s->perf_events), err)) < 0 ||
	    (r = monitor_events(c, "MONITOR_FTRACE_EVENTS", " ", s->ftrace_events,
				sizeof(s->ftrace_events), err)) < 0)
		return r;
	return 0;
}

/* The host binary each kind runs; trace-cmd stays on the host. */
static const char *const monitor_binaries[MONITOR_EXT_COUNT] = {
	"vmstat", "mpstat", "iostat", "top", "perf", NULL,
};

int monitor_settings_push(const struct monitor_settings *guest_mon, const char *harness_dir,
			  struct bundle_list *l, const struct config *g, const char *path,
			  struct config_diag *d)
{
	bool added = false;

	if (!harness_dir)
		return 0;
	for (int k = 0; k < MONITOR_EXT_COUNT; k++) {
		const char *bin = monitor_binaries[k];
		struct bundle *b = NULL;
		char err[512];
		bool installed = false;

		if (!(guest_mon->external & (1u << k)) || !bin)
			continue;
		for (size_t i = 0; i < l->nguest_binaries; i++)
			installed |= !strcmp(l->guest_binaries[i], bin);
		if (installed)
			continue;
		/* a monitor that cannot go is reported, not fatal: the guest
		 * may have its own, and the run goes on without it */
		if (bundle_build(&bin, 1, harness_dir, NULL, NULL, &b, err, sizeof(err)) < 0) {
			log_warn("%s: MONITORS: %s cannot be pushed into the guests (%s); they run "
				 "their own if they have one",
				 path ? path : "g.conf", bin, err);
			continue;
		}
		bundle_free(b);
		bundle_settings_add(l, bin);
		added = true;
	}
	return added ? bundle_settings_resolve(l, harness_dir, g, path, d) : 0;
}
