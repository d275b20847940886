// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * monitor_store: samples into nodes/<node>/monitors/<group>.ndjson, with
 * file names that nothing a guest sends can choose, and the per-step
 * summaries in samples.ndjson.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "monitor_store.h"
#include "results.h"
#include "testlib.h"

static char top[64];
static struct results *res;
static struct monitor_store *ms;

static void open_run(void)
{
	testlib_tmpdir(top, sizeof(top), "monstore");
	ck_assert_int_eq(results_open(top, "run", &res), 0);
	ms = monitor_store_new(res);
}

static void close_run(void)
{
	ck_assert_int_eq(monitor_store_close(ms), 0);
	ck_assert_int_eq(results_close(res), 0);
}

static struct proto_msg sample(uint32_t step, int64_t ns, const char *metric, double v)
{
	struct proto_msg m = { .type = PROTO_SAMPLE };

	m.u.sample.step = step;
	m.u.sample.mono_ns = ns;
	snprintf(m.u.sample.metric, sizeof(m.u.sample.metric), "%s", metric);
	m.u.sample.value = v;
	snprintf(m.u.sample.unit, sizeof(m.u.sample.unit), "%%");
	return m;
}

static int put(const char *node, uint32_t step, int64_t ns, const char *metric, double v)
{
	struct proto_msg m = sample(step, ns, metric, v);

	return monitor_store_sample(ms, node, &m, ns + 7);
}

/* The lines of a file under the run, as JSON objects. */
static size_t read_lines(const char *rel, json_object **out, size_t max)
{
	char path[256], *text = NULL, *save = NULL;
	size_t len, n = 0;

	snprintf(path, sizeof(path), "%s/run/%s", top, rel);
	ck_assert_msg(fileio_read_all(path, 1 << 20, &text, &len) == 0, "%s", path);
	/* ck_abort on a failure only: a passing ck_assert writes to Check's
	 * pipe, 60,000 lines of them took minutes under valgrind */
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (n >= max)
			ck_abort_msg("%s: over %zu lines", rel, max);
		out[n] = json_tokener_parse(l);
		if (!out[n])
			ck_abort_msg("%s: not JSON: %s", rel, l);
		n++;
	}
	free(text);
	return n;
}

static const char *str(json_object *o, const char *key)
{
	json_object *v;

	ck_assert_msg(json_object_object_get_ex(o, key, &v), "no %s", key);
	return json_object_get_string(v);
}

static double num(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		ck_abort_msg("no %s", key);
	return json_object_get_double(v);
}

START_TEST(test_files_and_names)
{
	char dir[256];
	json_object *l[16];
	struct dirent *e;
	DIR *d;
	int files = 0;

	open_run();
	ck_assert_int_eq(put("guest-1", 1, 100, "stat.cpu0.steal", 1.5), 0);
	ck_assert_int_eq(put("guest-1", 1, 200, "loadavg.1", 0.5), 0);
	/* unknown groups go to other.ndjson, whatever they are called */
	ck_assert_int_eq(put("guest-1", 1, 300, "passwd", 1), 0);
	ck_assert_int_eq(put("guest-1", 1, 400, "statx.y", 1), 0);
	ck_assert_int_eq(put("guest-1", 1, 500, "stat", 1), 0);
	/* names are checked even if the decoder was bypassed */
	ck_assert_int_eq(put("../etc", 1, 100, "stat.x", 1), -EINVAL);
	ck_assert_int_eq(put(".hidden", 1, 100, "stat.x", 1), -EINVAL);
	ck_assert_int_eq(put("guest-1", 1, 100, "../../x", 1), -EINVAL);
	ck_assert_int_eq(put("guest-1", 1, 100, "a/b", 1), -EINVAL);
	ck_assert_int_eq(put("guest-1", 1, 100, "stat.x", NAN), -EINVAL);
	ck_assert_int_eq(put("guest-1", 1, 100, "stat.x", INFINITY), -EINVAL);
	close_run();

	snprintf(dir, sizeof(dir), "%s/run/nodes/guest-1/monitors", top);
	d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		ck_assert_msg(!strcmp(e->d_name, "stat.ndjson") ||
				      !strcmp(e->d_name, "loadavg.ndjson") ||
				      !strcmp(e->d_name, "other.ndjson"),
			      "unexpected file %s", e->d_name);
		files++;
	}
	closedir(d);
	ck_assert_int_eq(files, 3);
	/* nothing outside nodes/guest-1 */
	snprintf(dir, sizeof(dir), "%s/run/nodes", top);
	d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	files = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		ck_assert_str_eq(e->d_name, "guest-1");
		files++;
	}
	closedir(d);
	ck_assert_int_eq(files, 1);
	snprintf(dir, sizeof(dir), "%s/run/etc", top);
	ck_assert_int_ne(access(dir, F_OK), 0);
	snprintf(dir, sizeof(dir), "%s/etc", top);
	ck_assert_int_ne(access(dir, F_OK), 0);

	ck_assert_uint_eq(read_lines("nodes/guest-1/monitors/stat.ndjson", l, 16), 2);
	ck_assert_str_eq(str(l[0], "metric"), "stat.cpu0.steal");
	ck_assert_double_eq(num(l[0], "value"), 1.5);
	ck_assert_int_eq((int64_t)num(l[0], "step"), 1);
	ck_assert_int_eq((int64_t)num(l[0], "mono_ns"), 100);
	ck_assert_int_eq((int64_t)num(l[0], "host_ns"), 107);
	ck_assert_str_eq(str(l[0], "unit"), "%");
	ck_assert_str_eq(str(l[1], "metric"), "stat");
	json_object_put(l[0]);
	json_object_put(l[1]);
	ck_assert_uint_eq(read_lines("nodes/guest-1/monitors/other.ndjson", l, 16), 2);
	ck_assert_str_eq(str(l[0], "metric"), "passwd");
	ck_assert_str_eq(str(l[1], "metric"), "statx.y");
	json_object_put(l[0]);
	json_object_put(l[1]);
}
END_TEST

START_TEST(test_step_summaries)
{
	json_object *l[16];
	size_t n;

	open_run();
	/* waiting (step 0), then step 1: 1 s at 20 %, the last 0.5 s at 40 % */
	put("guest-1", 0, 1000000000, "stat.cpu.steal", 10);
	put("guest-1", 1, 2000000000, "stat.cpu.steal", 20);
	put("guest-1", 1, 2500000000, "stat.cpu.steal", 40);
	put("guest-1", 1, 2500000000, "psi.cpu.some", 3);    /* its first: no interval */
	put("guest-2", 1, 2000000000, "stat.cpu.steal", 99); /* its first: no interval */
	put("guest-2", 1, 3000000000, "stat.cpu.steal", 5);
	ck_assert_uint_eq(monitor_store_step_done(ms, "guest-1", 1, "hackbench", 2), 1);
	ck_assert_uint_eq(monitor_store_step_done(ms, "guest-2", 1, "hackbench", 2), 1);
	/* a step without samples, a node never seen, a bad name: nothing */
	ck_assert_uint_eq(monitor_store_step_done(ms, "guest-1", 2, "hackbench", 3), 0);
	ck_assert_uint_eq(monitor_store_step_done(ms, "guest-9", 1, "hackbench", 2), 0);
	ck_assert_uint_eq(monitor_store_step_done(ms, "../x", 1, "hackbench", 2), 0);
	close_run();

	n = read_lines("samples.ndjson", l, 16);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(str(l[0], "node"), "guest-1");
	ck_assert_str_eq(str(l[0], "metric"), "steal_pct");
	ck_assert_str_eq(str(l[0], "benchmark"), "hackbench");
	ck_assert_int_eq((int64_t)num(l[0], "iteration"), 2);
	ck_assert_int_eq((int64_t)num(l[0], "step"), 1);
	ck_assert_str_eq(str(l[0], "unit"), "%");
	ck_assert_str_eq(str(l[0], "better"), "lower");
	ck_assert_double_eq_tol(num(l[0], "value"), (20 * 1.0 + 40 * 0.5) / 1.5, 1e-9);
	ck_assert_str_eq(str(l[1], "node"), "guest-2");
	ck_assert_double_eq_tol(num(l[1], "value"), 5, 1e-9);
	for (size_t i = 0; i < n; i++)
		json_object_put(l[i]);
}
END_TEST

/* Lines go through the results writer (group commit): a burst of samples
 * from several nodes, queued far faster than a disk takes them, arrives
 * whole and in order, every one of them. */
START_TEST(test_every_sample_through_the_writer)
{
	static const char *const nodes[] = { "guest-1", "guest-2", "host" };
	enum { PER_NODE = 20000 };
	json_object **l = calloc(PER_NODE + 1, sizeof(*l));
	const char *what = NULL;

	ck_assert_ptr_nonnull(l);
	open_run();
	/* plain checks in the loops, asserted once: every ck_assert writes
	 * to Check's pipe, which under valgrind took minutes */
	int refused = 0, first_refused = -1;
	for (int i = 0; i < PER_NODE; i++)
		for (size_t k = 0; k < 3; k++)
			if (put(nodes[k], 1 + i / 1000, 1000 + i,
				i % 2 ? "stat.cpu.user" : "loadavg.1", i) != 0 &&
			    refused++ == 0)
				first_refused = i;
	ck_assert_msg(!refused, "%d samples refused, the first at %d", refused, first_refused);
	results_flush(res);
	ck_assert_int_eq(results_error(res, &what), 0);
	close_run();
	for (size_t k = 0; k < 3; k++) {
		char rel[128];
		size_t n;

		snprintf(rel, sizeof(rel), "nodes/%s/monitors/stat.ndjson", nodes[k]);
		n = read_lines(rel, l, PER_NODE + 1);
		ck_assert_uint_eq(n, PER_NODE / 2);
		size_t wrong = n;
		for (size_t i = 0; i < n; i++) {
			if (wrong == n && (int64_t)num(l[i], "value") != 2 * (int64_t)i + 1)
				wrong = i;
			json_object_put(l[i]);
		}
		ck_assert_msg(wrong == n, "%s: line %zu is not sample %zu", rel, wrong + 1,
			      2 * wrong + 1);
		snprintf(rel, sizeof(rel), "nodes/%s/monitors/loadavg.ndjson", nodes[k]);
		n = read_lines(rel, l, PER_NODE + 1);
		ck_assert_uint_eq(n, PER_NODE / 2);
		for (size_t i = 0; i < n; i++)
			json_object_put(l[i]);
	}
	free(l);
}
END_TEST

/* An external monitor's output per step, in a file whose name comes from
 * hostd's own table; anything else a peer sends is refused. */
START_TEST(test_monitor_output)
{
	char path[256], *text = NULL;
	size_t len;

	open_run();
	ck_assert_int_eq(monitor_store_output(ms, "guest-1", 2, "vmstat", "procs\n", 6), 0);
	ck_assert_int_eq(monitor_store_output(ms, "guest-1", 2, "vmstat", " r  b\n", 6), 0);
	ck_assert_int_eq(monitor_store_output(ms, "guest-1", 3, "perf-event-stat", "x", 1), 0);
	ck_assert_int_eq(monitor_store_output(ms, "guest-1", 2, "../../x", "x", 1), -EINVAL);
	ck_assert_int_eq(monitor_store_output(ms, "guest-1", 2, "stat", "x", 1), -EINVAL);
	ck_assert_int_eq(monitor_store_output(ms, "guest-1", 0, "vmstat", "x", 1), -EINVAL);
	ck_assert_int_eq(monitor_store_output(ms, "../x", 1, "vmstat", "x", 1), -EINVAL);
	close_run();
	snprintf(path, sizeof(path), "%s/run/nodes/guest-1/monitors/vmstat-step-2.log", top);
	ck_assert_int_eq(fileio_read_all(path, 1 << 20, &text, &len), 0);
	ck_assert_str_eq(text, "procs\n r  b\n");
	free(text);
	snprintf(path, sizeof(path), "%s/run/nodes/guest-1/monitors/perf-event-stat-step-3.log", top);
	ck_assert_int_eq(access(path, F_OK), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("monitor-store");
	TCase *tc = tcase_create("monitor-store");

	tcase_add_test(tc, test_files_and_names);
	tcase_add_test(tc, test_step_summaries);
	tcase_add_test(tc, test_every_sample_through_the_writer);
	tcase_add_test(tc, test_monitor_output);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
