// SPDX-License-Identifier: GPL-2.0-or-later
#include "procmon.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const mon_source_path[MON_NSRC] = {
	"proc/stat", "proc/schedstat", "proc/loadavg", "proc/pressure/cpu", "proc/vmstat",
};

/* The vmstat fields worth a line each: reclaim, swap, faults, NUMA
 * balancing and compaction are what disturbs a scheduler benchmark. */
static const char *const mon_vm_names[MON_VM_FIELDS] = {
	"nr_free_pages",  "pgfault",	      "pgmajfault",	     "pswpin",
	"pswpout",	  "pgscan_kswapd",    "pgscan_direct",	     "pgsteal_kswapd",
	"pgsteal_direct", "numa_hint_faults", "numa_pages_migrated", "compact_stall",
};

static const char *const mon_stat_names[MON_NSTAT] = {
	"user", "nice",	   "system", "idle",  "iowait",
	"irq",	"softirq", "steal",  "guest", "guest_nice",
};

/* ---- parsing ----------------------------------------------------------- */

/* The next complete line of *text (without its '\n'), or NULL at the end
 * or before a last line that was cut off. */
static const char *mon_line(const char **text, size_t *len)
{
	const char *s = *text, *nl = strchr(s, '\n');

	if (!nl)
		return NULL;
	*len = (size_t)(nl - s);
	*text = nl + 1;
	return s;
}

static int mon_u64(const char **p, const char *end, uint64_t *out)
{
	char *e;

	while (*p < end && (**p == ' ' || **p == '\t'))
		(*p)++;
	if (*p >= end || !isdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	*out = strtoull(*p, &e, 10);
	if (errno || e > end || (e != end && *e != ' ' && *e != '\t'))
		return -EINVAL;
	*p = e;
	return 0;
}

/* "cpuN" or "cpu": N, or -1 for the total; -2 when not a cpu label. */
static int mon_cpu_label(const char **p, const char *end)
{
	const char *s = *p;
	long id = 0;

	if (end - s < 4 || memcmp(s, "cpu", 3))
		return -2;
	s += 3;
	if (*s == ' ') {
		*p = s;
		return -1;
	}
	if (!isdigit((unsigned char)*s))
		return -2;
	while (s < end && isdigit((unsigned char)*s) && id < 1000000)
		id = id * 10 + (*s++ - '0');
	if (s >= end || *s != ' ')
		return -2;
	*p = s;
	return (int)id;
}

int mon_parse_stat(const char *text, struct mon_snap *s)
{
	const char *line;
	size_t len;
	bool total = false;

	s->ncpu = 0;
	while ((line = mon_line(&text, &len))) {
		const char *p = line, *end = line + len;
		uint64_t v[MON_NSTAT] = { 0 };
		int id = mon_cpu_label(&p, end), n = 0;

		if (id == -2)
			break; /* the cpu lines come first; the rest is not ours */
		/* 4 fields on the oldest kernels, 10 since 2.6.33; a later
		 * kernel's extra fields are not ours */
		for (;;) {
			while (p < end && *p == ' ')
				p++;
			if (p == end || n == MON_NSTAT)
				break;
			if (mon_u64(&p, end, &v[n++]) < 0)
				return -EINVAL;
		}
		if (n < 4)
			return -EINVAL;
		if (id == -1) {
			memcpy(s->all, v, sizeof(v));
			total = true;
		} else if (s->ncpu < MON_CPUS_MAX) {
			s->cpu_id[s->ncpu] = id;
			memcpy(s->cpu[s->ncpu++], v, sizeof(v));
		}
	}
	if (!total)
		return -EINVAL;
	s->have |= 1u << MON_SRC_STAT;
	return 0;
}

/* Versions 15 to 17: "cpuN" and nine numbers, the 8th the run delay. */
int mon_parse_schedstat(const char *text, struct mon_snap *s)
{
	const char *line;
	size_t len;
	unsigned long version = 0;

	s->nsched = 0;
	s->sched_delay_all = 0;
	while ((line = mon_line(&text, &len))) {
		const char *p = line, *end = line + len;
		uint64_t v[9];
		int id, n = 0;

		if (len > 8 && !memcmp(line, "version ", 8)) {
			version = strtoul(line + 8, NULL, 10);
			continue;
		}
		id = mon_cpu_label(&p, end);
		if (id < 0)
			continue; /* timestamp, domain lines */
		if (version < 15 || version > 17)
			return -EINVAL; /* another layout: do not guess at it */
		while (n < 9 && mon_u64(&p, end, &v[n]) == 0)
			n++;
		if (n < 9)
			return -EINVAL;
		s->sched_delay_all += v[7];
		if (s->nsched < MON_CPUS_MAX) {
			s->sched_id[s->nsched] = id;
			s->sched_delay[s->nsched++] = v[7];
		}
	}
	if (version == 0)
		return -EINVAL;
	s->have |= 1u << MON_SRC_SCHEDSTAT;
	return 0;
}

/* "0.65 0.61 1.06 1/141 3843" */
int mon_parse_loadavg(const char *text, struct mon_snap *s)
{
	double l[3];
	unsigned run, tasks;
	int used = 0;

	if (!strchr(text, '\n') ||
	    sscanf(text, "%lf %lf %lf %u/%u %*u%n", &l[0], &l[1], &l[2], &run, &tasks, &used) != 5 ||
	    used == 0 || text[used] != '\n')
		return -EINVAL;
	for (int i = 0; i < 3; i++)
		if (!(l[i] >= 0 && l[i] < 1e9))
			return -EINVAL;
	memcpy(s->load, l, sizeof(l));
	s->runnable = run;
	s->tasks = tasks;
	s->have |= 1u << MON_SRC_LOADAVG;
	return 0;
}

/* "some avg10=1.73 avg60=5.94 avg300=5.58 total=647009632" and "full ..."
 * (full since 5.13 for cpu) */
int mon_parse_pressure(const char *text, struct mon_snap *s)
{
	const char *line;
	size_t len;
	bool some = false;

	s->psi_full = false;
	while ((line = mon_line(&text, &len))) {
		const char *p = memmem(line, len, "total=", 6), *end = line + len;
		uint64_t v;
		bool is_full = len > 5 && !memcmp(line, "full ", 5);

		if (!(len > 5 && !memcmp(line, "some ", 5)) && !is_full)
			return -EINVAL;
		if (!p)
			return -EINVAL;
		p += 6;
		if (mon_u64(&p, end, &v) < 0 || p != end)
			return -EINVAL;
		if (is_full) {
			s->psi_full_us = v;
			s->psi_full = true;
		} else {
			s->psi_some_us = v;
			some = true;
		}
	}
	if (!some)
		return -EINVAL;
	s->have |= 1u << MON_SRC_PRESSURE;
	return 0;
}

int mon_parse_vmstat(const char *text, struct mon_snap *s)
{
	const char *line;
	size_t len;

	s->vm_have = 0;
	while ((line = mon_line(&text, &len))) {
		const char *sp = memchr(line, ' ', len), *p, *end = line + len;

		if (!sp)
			return -EINVAL;
		for (int i = 0; i < MON_VM_FIELDS; i++) {
			if (strlen(mon_vm_names[i]) != (size_t)(sp - line) ||
			    memcmp(line, mon_vm_names[i], (size_t)(sp - line)))
				continue;
			p = sp;
			if (mon_u64(&p, end, &s->vm[i]) < 0 || p != end)
				return -EINVAL;
			s->vm_have |= 1u << i;
		}
	}
	if (!s->vm_have)
		return -EINVAL;
	s->have |= 1u << MON_SRC_VMSTAT;
	return 0;
}

int mon_parse(enum mon_source src, const char *text, struct mon_snap *s)
{
	switch (src) {
	case MON_SRC_STAT: return mon_parse_stat(text, s);
	case MON_SRC_SCHEDSTAT: return mon_parse_schedstat(text, s);
	case MON_SRC_LOADAVG: return mon_parse_loadavg(text, s);
	case MON_SRC_PRESSURE: return mon_parse_pressure(text, s);
	case MON_SRC_VMSTAT: return mon_parse_vmstat(text, s);
	case MON_NSRC: break;
	}
	return -EINVAL;
}

/* ---- samples ----------------------------------------------------------- */

struct mon_out {
	mon_emit_fn fn;
	void *ctx;
	unsigned n;
};

static void mon_put(struct mon_out *o, const char *metric, double value, const char *unit)
{
	o->fn(o->ctx, metric, value, unit);
	o->n++;
}

/* Busy and idle ticks; guest time is already in user and nice. */
static uint64_t mon_ticks(const uint64_t *v)
{
	uint64_t t = 0;

	for (int i = MON_USER; i <= MON_STEAL; i++)
		t += v[i];
	return t;
}

/* Percent of each field over the interval; a counter that went back (a
 * CPU that went offline and came back) gives nothing. */
static void mon_emit_cpu(struct mon_out *o, const char *label, const uint64_t *a, const uint64_t *b,
			 bool all)
{
	static const int few[] = { MON_USER, MON_SYSTEM, MON_IDLE, MON_STEAL, MON_GUEST };
	uint64_t ta = mon_ticks(a), tb = mon_ticks(b);
	char name[64];
	int n = all ? MON_GUEST_NICE : (int)(sizeof(few) / sizeof(few[0]));

	if (tb <= ta)
		return;
	for (int i = 0; i < MON_NSTAT; i++)
		if (b[i] < a[i])
			return;
	for (int j = 0; j < n; j++) {
		int f = all ? j : few[j];

		snprintf(name, sizeof(name), "stat.%s.%s", label, mon_stat_names[f]);
		mon_put(o, name, 100.0 * (double)(b[f] - a[f]) / (double)(tb - ta), "%");
	}
}

static int mon_find(const int *ids, unsigned n, unsigned hint, int id)
{
	if (hint < n && ids[hint] == id)
		return (int)hint;
	for (unsigned i = 0; i < n; i++)
		if (ids[i] == id)
			return (int)i;
	return -1;
}

static void mon_emit_stat(struct mon_out *o, const struct mon_snap *a, const struct mon_snap *b)
{
	char label[16];

	mon_emit_cpu(o, "cpu", a->all, b->all, true);
	for (unsigned i = 0; i < b->ncpu; i++) {
		int j = mon_find(a->cpu_id, a->ncpu, i, b->cpu_id[i]);

		if (j < 0)
			continue;
		snprintf(label, sizeof(label), "cpu%d", b->cpu_id[i]);
		mon_emit_cpu(o, label, a->cpu[j], b->cpu[i], false);
	}
}

static void mon_emit_sched(struct mon_out *o, const struct mon_snap *a, const struct mon_snap *b,
			   double secs)
{
	char name[64];

	if (b->sched_delay_all >= a->sched_delay_all)
		mon_put(o, "schedstat.cpu.run_delay",
			(double)(b->sched_delay_all - a->sched_delay_all) / 1e6 / secs, "ms/s");
	for (unsigned i = 0; i < b->nsched; i++) {
		int j = mon_find(a->sched_id, a->nsched, i, b->sched_id[i]);

		if (j < 0 || b->sched_delay[i] < a->sched_delay[j])
			continue;
		snprintf(name, sizeof(name), "schedstat.cpu%d.run_delay", b->sched_id[i]);
		mon_put(o, name, (double)(b->sched_delay[i] - a->sched_delay[j]) / 1e6 / secs, "ms/s");
	}
}

static void mon_emit_psi(struct mon_out *o, const struct mon_snap *a, const struct mon_snap *b,
			 double secs)
{
	if (b->psi_some_us >= a->psi_some_us)
		mon_put(o, "psi.cpu.some", (double)(b->psi_some_us - a->psi_some_us) / 1e4 / secs, "%");
	if (a->psi_full && b->psi_full && b->psi_full_us >= a->psi_full_us)
		mon_put(o, "psi.cpu.full", (double)(b->psi_full_us - a->psi_full_us) / 1e4 / secs, "%");
}

static void mon_emit_vm(struct mon_out *o, const struct mon_snap *a, const struct mon_snap *b,
			double secs)
{
	char name[64];

	for (int i = 0; i < MON_VM_FIELDS; i++) {
		if (!(b->vm_have & (1u << i)))
			continue;
		snprintf(name, sizeof(name), "vmstat.%s", mon_vm_names[i]);
		if (!strncmp(mon_vm_names[i], "nr_", 3))
			mon_put(o, name, (double)b->vm[i], "pages");
		else if ((a->vm_have & (1u << i)) && b->vm[i] >= a->vm[i])
			mon_put(o, name, (double)(b->vm[i] - a->vm[i]) / secs, "1/s");
	}
}

unsigned mon_emit(const struct mon_snap *a, const struct mon_snap *b, mon_emit_fn fn, void *ctx)
{
	struct mon_out o = { fn, ctx, 0 };
	unsigned both = a->have & b->have;
	double secs = (double)(b->ns - a->ns) / 1e9;

	if (b->have & (1u << MON_SRC_LOADAVG)) {
		mon_put(&o, "loadavg.1", b->load[0], "");
		mon_put(&o, "loadavg.5", b->load[1], "");
		mon_put(&o, "loadavg.15", b->load[2], "");
		mon_put(&o, "loadavg.runnable", b->runnable, "tasks");
		mon_put(&o, "loadavg.tasks", b->tasks, "tasks");
	}
	if (b->ns <= a->ns)
		return o.n; /* no interval: gauges only */
	if (both & (1u << MON_SRC_STAT))
		mon_emit_stat(&o, a, b);
	if (both & (1u << MON_SRC_SCHEDSTAT))
		mon_emit_sched(&o, a, b, secs);
	if (both & (1u << MON_SRC_PRESSURE))
		mon_emit_psi(&o, a, b, secs);
	if (b->have & (1u << MON_SRC_VMSTAT))
		mon_emit_vm(&o, (both & (1u << MON_SRC_VMSTAT)) ? a : b, b, secs);
	return o.n;
}

/* ---- reading ----------------------------------------------------------- */

void mon_reader_open(struct mon_reader *r, const char *root)
{
	snprintf(r->root, sizeof(r->root), "%s", root ? root : "");
	r->bad = 0;
	for (int i = 0; i < MON_NSRC; i++) {
		char path[512];

		snprintf(path, sizeof(path), "%s/%s", r->root, mon_source_path[i]);
		r->fd[i] = open(path, O_RDONLY | O_CLOEXEC);
	}
}

/* A /proc file from its start: seq files restart at offset 0. */
static ssize_t mon_pread_all(int fd, char *buf, size_t size)
{
	size_t got = 0;

	while (got < size - 1) {
		ssize_t n = pread(fd, buf + got, size - 1 - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	return (ssize_t)got;
}

void mon_reader_read(struct mon_reader *r, int64_t now_ns, struct mon_snap *s, char *buf, size_t size)
{
	s->ns = now_ns;
	s->have = 0;
	r->bad = 0;
	for (int i = 0; i < MON_NSRC; i++) {
		if (r->fd[i] < 0)
			continue;
		if (mon_pread_all(r->fd[i], buf, size) < 0 || mon_parse((enum mon_source)i, buf, s) < 0)
			r->bad |= 1u << i;
	}
}

unsigned mon_reader_missing(const struct mon_reader *r)
{
	unsigned m = 0;

	for (int i = 0; i < MON_NSRC; i++)
		if (r->fd[i] < 0)
			m |= 1u << i;
	return m;
}

void mon_reader_close(struct mon_reader *r)
{
	for (int i = 0; i < MON_NSRC; i++) {
		if (r->fd[i] >= 0)
			close(r->fd[i]);
		r->fd[i] = -1;
	}
}
