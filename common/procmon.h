/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Built-in monitors: /proc/stat per CPU, /proc/schedstat (run delay),
 * /proc/loadavg, /proc/pressure/cpu and chosen /proc/vmstat fields, read as
 * snapshots, by the agent (guestagent/sampler.c) and by hostd for a host
 * that runs no agent (hostd/monitor/host_proc.c); two snapshots make one set of
 * samples (rates over the interval between them, or the value now for
 * gauges).  No logging, no clocks: the
 * caller stamps snapshots and sends what mon_emit hands it.
 *
 * The parsers take what a kernel may give (fewer fields on old kernels,
 * CPUs missing because offline, a file cut by a short buffer): a last line
 * without its newline is ignored, and a line whose numbers do not read
 * refuses the whole file (-EINVAL), so that a garbled file never turns
 * into wrong numbers.
 */
#ifndef LOCKSTEP_PROCMON_H
#define LOCKSTEP_PROCMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MON_CPUS_MAX 256 /* per-CPU lines kept; more are summed in "cpu" only */

enum mon_stat_field {
	MON_USER,
	MON_NICE,
	MON_SYSTEM,
	MON_IDLE,
	MON_IOWAIT,
	MON_IRQ,
	MON_SOFTIRQ,
	MON_STEAL,
	MON_GUEST,
	MON_GUEST_NICE,
	MON_NSTAT
};

enum mon_source {
	MON_SRC_STAT,
	MON_SRC_SCHEDSTAT,
	MON_SRC_LOADAVG,
	MON_SRC_PRESSURE,
	MON_SRC_VMSTAT,
	MON_NSRC
};

#define MON_VM_FIELDS 12

struct mon_snap {
	int64_t ns;    /* when it was read */
	unsigned have; /* 1 << enum mon_source for each source read */
	/* /proc/stat, in USER_HZ ticks */
	uint64_t all[MON_NSTAT];
	unsigned ncpu;
	int cpu_id[MON_CPUS_MAX];
	uint64_t cpu[MON_CPUS_MAX][MON_NSTAT];
	/* /proc/schedstat: ns waiting on a runqueue, per CPU and in total */
	unsigned nsched;
	int sched_id[MON_CPUS_MAX];
	uint64_t sched_delay[MON_CPUS_MAX];
	uint64_t sched_delay_all;
	/* /proc/loadavg */
	double load[3];
	uint32_t runnable, tasks;
	/* /proc/pressure/cpu: total stall in us */
	uint64_t psi_some_us, psi_full_us;
	bool psi_full;
	/* /proc/vmstat: mon_vm_names[i] when vm_have has bit i */
	uint64_t vm[MON_VM_FIELDS];
	uint32_t vm_have;
};

extern const char *const mon_source_path[MON_NSRC]; /* "proc/stat", ... */

/* Each fills its part of s and sets its bit in s->have: 0, or -EINVAL. */
int mon_parse_stat(const char *text, struct mon_snap *s);
int mon_parse_schedstat(const char *text, struct mon_snap *s);
int mon_parse_loadavg(const char *text, struct mon_snap *s);
int mon_parse_pressure(const char *text, struct mon_snap *s);
int mon_parse_vmstat(const char *text, struct mon_snap *s);
int mon_parse(enum mon_source src, const char *text, struct mon_snap *s);

/* metric: a proto name ("stat.cpu1.steal"); unit: "%", "ms/s", "1/s", ... */
typedef void (*mon_emit_fn)(void *ctx, const char *metric, double value, const char *unit);
/* The samples for the interval prev..cur: rates where both have the source,
 * gauges from cur.  Returns how many it emitted. */
unsigned mon_emit(const struct mon_snap *prev, const struct mon_snap *cur, mon_emit_fn fn, void *ctx);

/* Reading the files.  A source that is missing (no /proc/pressure, a
 * kernel without schedstats) is left out; mon_reader_missing says which. */
struct mon_reader {
	char root[256];	  /* prepended to "proc/..."; "" is "/" */
	int fd[MON_NSRC]; /* -1: not open (missing) */
	unsigned bad;	  /* 1 << source that was garbled at the last read */
};

void mon_reader_open(struct mon_reader *r, const char *root);
/* Reads every open source into s (stamped now_ns) using buf as scratch. */
void mon_reader_read(struct mon_reader *r, int64_t now_ns, struct mon_snap *s, char *buf, size_t size);
unsigned mon_reader_missing(const struct mon_reader *r);
void mon_reader_close(struct mon_reader *r);

#endif
