/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The monitor keys of a config (h.conf for the host, g.conf for guests):
 *
 *   MONITOR_UPDATE_FREQUENCY=0.1   seconds between samples (fractions
 *                                  allowed); setting it turns the built-in
 *                                  monitors on
 *   MONITORS="vmstat mpstat iostat top perf-event-stat trace-cmd"
 *                                  external monitors (MMTests' names; its
 *                                  MONITORS_GZIP, MONITORS_WITH_LATENCY and
 *                                  MONITORS_TRACER are read too); proc-*
 *                                  names stand for the built-in monitors
 *   MONITOR_PERF_EVENTS=cpu-migrations,context-switches   for perf-event-stat
 *   MONITOR_FTRACE_EVENTS="sched:sched_switch sched:sched_wakeup"  for trace-cmd
 *
 * Parsing only; CPUFREQ_* belong to hoststate.h.
 */
#ifndef LOCKSTEP_MONITOR_SETTINGS_H
#define LOCKSTEP_MONITOR_SETTINGS_H

#include <stdbool.h>
#include <stdint.h>

struct bundle_list;
struct config;
struct config_diag;

enum monitor_ext_kind {
	MONITOR_EXT_VMSTAT,
	MONITOR_EXT_MPSTAT,
	MONITOR_EXT_IOSTAT,
	MONITOR_EXT_TOP,
	MONITOR_EXT_PERF_EVENT_STAT,
	MONITOR_EXT_TRACE_CMD,
	MONITOR_EXT_COUNT
};

/* MMTests' name of each kind ("perf-event-stat"). */
extern const char *const monitor_ext_names[MONITOR_EXT_COUNT];

/* Default when only MONITORS is set: MMTests' MONITOR_UPDATE_FREQUENCY. */
#define MONITOR_DEFAULT_INTERVAL_MS 10000

struct monitor_settings {
	uint32_t interval_ms;	  /* built-in monitors: 0 off */
	unsigned external;	  /* 1 << enum monitor_ext_kind */
	char perf_events[512];	  /* comma-separated, for perf stat -e */
	char ftrace_events[1024]; /* space-separated, each for trace-cmd -e */
};

/* 0, or -EINVAL with err naming file:line, the key and the value (an
 * unknown monitor name, an event name with characters perf or trace-cmd
 * would not take, a frequency outside 0.01 s .. 1 h). */
int monitor_settings_load(const struct config *c, struct monitor_settings *s, struct config_diag *err);

/*
 * For libvirt guests (whose harness goes into harness_dir; NULL: nothing
 * to do): the binaries of guest_mon's external monitors (vmstat, mpstat,
 * iostat, top, perf; not trace-cmd, which runs on the host only) join l
 * like HARNESS_BINARIES, unless listed in GUEST_INSTALLED_BINARIES.  One
 * that cannot be pushed (missing on this host, not an ELF program) is
 * logged and left to the guest's own PATH; the agent reports it at each
 * step if the guest has none.  0, or bundle_settings_resolve's errors.
 */
int monitor_settings_push(const struct monitor_settings *guest_mon, const char *harness_dir,
			  struct bundle_list *l, const struct config *g, const char *path,
			  struct config_diag *d);

#endif
