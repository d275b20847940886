// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The agent's built-in monitors on captured /proc files (tests/data/monitor/):
 * whole, from old and future kernels, cut short and garbled; and the
 * samples two snapshots make.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "procmon.h"
#include "proto.h"
#include "testlib.h"

static char *fixture(const char *name)
{
	const char *src = getenv("LOCKSTEP_SOURCE_ROOT");
	char path[512], *text = NULL;
	size_t len;
	int r;

	snprintf(path, sizeof(path), "%s/tests/data/monitor/%s", src ? src : "..", name);
	r = fileio_read_all(path, 1 << 20, &text, &len);
	ck_assert_msg(r == 0, "%s: %s", path, strerror(-r));
	return text;
}

static int parse(enum mon_source src, const char *name, struct mon_snap *s)
{
	char *text = fixture(name);
	int r = mon_parse(src, text, s);

	free(text);
	return r;
}

/* What mon_emit handed over, by name. */
struct got {
	char metric[64][PROTO_NAME_MAX];
	char unit[64][PROTO_SHORT_MAX];
	double value[64];
	unsigned n;
};

static void collect(void *ctx, const char *metric, double value, const char *unit)
{
	struct got *g = ctx;

	ck_assert_msg(proto_name_valid(metric), "metric \"%s\" is not a name", metric);
	ck_assert_uint_lt(strlen(unit), PROTO_SHORT_MAX);
	ck_assert(isfinite(value));
	ck_assert_uint_lt(g->n, 64);
	snprintf(g->metric[g->n], PROTO_NAME_MAX, "%s", metric);
	snprintf(g->unit[g->n], PROTO_SHORT_MAX, "%s", unit);
	g->value[g->n++] = value;
}

static int find(const struct got *g, const char *metric)
{
	for (unsigned i = 0; i < g->n; i++)
		if (!strcmp(g->metric[i], metric))
			return (int)i;
	return -1;
}

static void expect(const struct got *g, const char *metric, double value, const char *unit)
{
	int i = find(g, metric);

	ck_assert_msg(i >= 0, "no sample %s", metric);
	ck_assert_msg(fabs(g->value[i] - value) < 1e-9 * (1 + fabs(value)),
		      "%s is %.12g, not %.12g", metric, g->value[i], value);
	ck_assert_str_eq(g->unit[i], unit);
}

static struct mon_snap a, b;

START_TEST(test_stat)
{
	struct got g = { .n = 0 };

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	ck_assert_int_eq(parse(MON_SRC_STAT, "stat-a", &a), 0);
	ck_assert_int_eq(parse(MON_SRC_STAT, "stat-b", &b), 0);
	ck_assert_uint_eq(a.ncpu, 2);
	ck_assert_int_eq(a.cpu_id[1], 1);
	ck_assert_uint_eq(a.all[MON_GUEST], 200);
	a.ns = 0;
	b.ns = 1000000000;
	mon_emit(&a, &b, collect, &g);
	/* all: 920 ticks passed (guest time is inside user) */
	expect(&g, "stat.cpu.user", 100.0 * 300 / 920, "%");
	expect(&g, "stat.cpu.steal", 100.0 * 120 / 920, "%");
	expect(&g, "stat.cpu.guest", 100.0 * 60 / 920, "%");
	expect(&g, "stat.cpu.idle", 100.0 * 400 / 920, "%");
	expect(&g, "stat.cpu.iowait", 0, "%");
	expect(&g, "stat.cpu0.steal", 100.0 * 20 / 420, "%");
	expect(&g, "stat.cpu1.steal", 100.0 * 100 / 500, "%");
	expect(&g, "stat.cpu1.system", 100.0 * 50 / 500, "%");
	ck_assert_int_lt(find(&g, "stat.cpu1.iowait"), 0); /* per CPU: the five that matter */
	ck_assert_int_lt(find(&g, "stat.cpu.guest_nice"), 0);
}
END_TEST

START_TEST(test_stat_variants)
{
	struct got g = { .n = 0 };

	memset(&a, 0, sizeof(a));
	ck_assert_int_eq(parse(MON_SRC_STAT, "stat-old", &a), 0);
	ck_assert_uint_eq(a.all[MON_IDLE], 850);
	ck_assert_uint_eq(a.all[MON_STEAL], 0);
	memset(&a, 0, sizeof(a));
	ck_assert_int_eq(parse(MON_SRC_STAT, "stat-future", &a), 0);
	ck_assert_uint_eq(a.all[MON_GUEST], 200);
	/* cut off inside cpu1: cpu0 and the total read */
	memset(&a, 0, sizeof(a));
	ck_assert_int_eq(parse(MON_SRC_STAT, "stat-truncated", &a), 0);
	ck_assert_uint_eq(a.ncpu, 1);
	memset(&b, 0, sizeof(b));
	ck_assert_int_eq(parse(MON_SRC_STAT, "stat-b", &b), 0);
	b.ns = 1000000000;
	mon_emit(&a, &b, collect, &g);
	ck_assert_int_ge(find(&g, "stat.cpu0.steal"), 0);
	ck_assert_int_lt(find(&g, "stat.cpu1.steal"), 0); /* not in both */
	/* garbled or without a total: refused, not guessed at */
	memset(&a, 0, sizeof(a));
	ck_assert_int_eq(parse(MON_SRC_STAT, "stat-garbled", &a), -EINVAL);
	ck_assert_int_eq(parse(MON_SRC_STAT, "stat-nocpu", &a), -EINVAL);
	ck_assert_uint_eq(a.have, 0);
	/* counters that went back give nothing for that CPU */
	g.n = 0;
	memset(&a, 0, sizeof(a));
	ck_assert_int_eq(parse(MON_SRC_STAT, "stat-b", &a), 0);
	ck_assert_int_eq(parse(MON_SRC_STAT, "stat-a", &b), 0);
	mon_emit(&a, &b, collect, &g);
	ck_assert_uint_eq(g.n, 0);
}
END_TEST

START_TEST(test_host_files)
{
	static const struct {
		enum mon_source src;
		const char *name;
	} files[] = {
		{ MON_SRC_STAT, "stat-host" },
		{ MON_SRC_LOADAVG, "loadavg-host" },
		{ MON_SRC_PRESSURE, "pressure-cpu-host" },
		{ MON_SRC_VMSTAT, "vmstat-host" },
	};

	memset(&a, 0, sizeof(a));
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		ck_assert_msg(parse(files[i].src, files[i].name, &a) == 0, "%s", files[i].name);
	ck_assert_uint_eq(a.have, (1u << MON_SRC_STAT) | (1u << MON_SRC_LOADAVG) |
					  (1u << MON_SRC_PRESSURE) | (1u << MON_SRC_VMSTAT));
	ck_assert_uint_eq(a.ncpu, 2);
	ck_assert(a.psi_full);
}
END_TEST

START_TEST(test_schedstat)
{
	struct got g = { .n = 0 };

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	ck_assert_int_eq(parse(MON_SRC_SCHEDSTAT, "schedstat-a", &a), 0);
	ck_assert_int_eq(parse(MON_SRC_SCHEDSTAT, "schedstat-b", &b), 0);
	ck_assert_uint_eq(a.nsched, 2);
	b.ns = 1000000000;
	mon_emit(&a, &b, collect, &g);
	expect(&g, "schedstat.cpu.run_delay", 150, "ms/s");
	expect(&g, "schedstat.cpu0.run_delay", 50, "ms/s");
	expect(&g, "schedstat.cpu1.run_delay", 100, "ms/s");
	memset(&a, 0, sizeof(a));
	ck_assert_int_eq(parse(MON_SRC_SCHEDSTAT, "schedstat-v14", &a), -EINVAL);
	ck_assert_int_eq(parse(MON_SRC_SCHEDSTAT, "schedstat-short", &a), -EINVAL);
	ck_assert_int_eq(mon_parse_schedstat("", &a), -EINVAL);
}
END_TEST

START_TEST(test_loadavg_pressure_vmstat)
{
	struct got g = { .n = 0 };

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	ck_assert_int_eq(parse(MON_SRC_LOADAVG, "loadavg-a", &b), 0);
	ck_assert_int_eq(parse(MON_SRC_PRESSURE, "pressure-a", &a), 0);
	ck_assert_int_eq(parse(MON_SRC_PRESSURE, "pressure-b", &b), 0);
	ck_assert_int_eq(parse(MON_SRC_VMSTAT, "vmstat-a", &a), 0);
	ck_assert_int_eq(parse(MON_SRC_VMSTAT, "vmstat-b", &b), 0);
	b.ns = 2000000000;
	mon_emit(&a, &b, collect, &g);
	expect(&g, "loadavg.1", 0.65, "");
	expect(&g, "loadavg.15", 1.06, "");
	expect(&g, "loadavg.runnable", 1, "tasks");
	expect(&g, "loadavg.tasks", 141, "tasks");
	expect(&g, "psi.cpu.some", 12.5, "%"); /* 250 ms stalled in 2 s */
	expect(&g, "psi.cpu.full", 2.5, "%");
	expect(&g, "vmstat.pgfault", 1250, "1/s");
	expect(&g, "vmstat.pgmajfault", 0, "1/s");
	expect(&g, "vmstat.nr_free_pages", 900, "pages");
	ck_assert_int_lt(find(&g, "vmstat.nr_zone_active_anon"), 0);
	ck_assert_int_lt(find(&g, "stat.cpu.user"), 0); /* no stat in either */

	memset(&a, 0, sizeof(a));
	ck_assert_int_eq(parse(MON_SRC_LOADAVG, "loadavg-truncated", &a), -EINVAL);
	ck_assert_int_eq(parse(MON_SRC_LOADAVG, "loadavg-garbled", &a), -EINVAL);
	ck_assert_int_eq(parse(MON_SRC_PRESSURE, "pressure-garbled", &a), -EINVAL);
	ck_assert_int_eq(parse(MON_SRC_VMSTAT, "vmstat-garbled", &a), -EINVAL);
	ck_assert_uint_eq(a.have, 0);
	ck_assert_int_eq(parse(MON_SRC_PRESSURE, "pressure-nofull", &a), 0);
	ck_assert(!a.psi_full);
}
END_TEST

/* A whole reader over a tree without pressure or schedstat. */
START_TEST(test_reader_missing_sources)
{
	char dir[256], path[512], buf[4096];
	static const char *const names[][2] = {
		{ "stat-a", "proc/stat" },
		{ "loadavg-a", "proc/loadavg" },
		{ "vmstat-a", "proc/vmstat" },
	};
	struct mon_reader r;

	testlib_tmpdir(dir, sizeof(dir), "monitor");
	for (size_t i = 0; i < 3; i++) {
		char *text = fixture(names[i][0]);

		snprintf(path, sizeof(path), "%s/proc", dir);
		fileio_mkdir_p(path, 0755);
		snprintf(path, sizeof(path), "%s/%s", dir, names[i][1]);
		ck_assert_int_eq(fileio_write_atomic(path, text, strlen(text)), 0);
		free(text);
	}
	mon_reader_open(&r, dir);
	ck_assert_uint_eq(mon_reader_missing(&r), (1u << MON_SRC_SCHEDSTAT) | (1u << MON_SRC_PRESSURE));
	mon_reader_read(&r, 5, &a, buf, sizeof(buf));
	ck_assert_uint_eq(r.bad, 0);
	ck_assert_int_eq(a.ns, 5);
	ck_assert_uint_eq(a.have,
			  (1u << MON_SRC_STAT) | (1u << MON_SRC_LOADAVG) | (1u << MON_SRC_VMSTAT));
	/* a buffer too small for the file: cut, so the total alone reads */
	mon_reader_read(&r, 6, &a, buf, 48);
	ck_assert_uint_eq(a.ncpu, 0);
	ck_assert(a.have & (1u << MON_SRC_STAT));
	mon_reader_close(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("monitor");
	TCase *tc = tcase_create("monitor");

	tcase_add_test(tc, test_stat);
	tcase_add_test(tc, test_stat_variants);
	tcase_add_test(tc, test_host_files);
	tcase_add_test(tc, test_schedstat);
	tcase_add_test(tc, test_loadavg_pressure_vmstat);
	tcase_add_test(tc, test_reader_missing_sources);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
