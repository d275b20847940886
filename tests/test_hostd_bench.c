// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The benchmark library end to end on local guests: every spec of
 * benchmarks/ runs its real tool and yields the metrics it declares, with
 * their units and directions; different nodes run different benchmarks in
 * the same steps; and a benchmark that fails, prints what its parser does
 * not know or never ends leaves a failure record, never a number.
 */
#include <check.h>
#include <dirent.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hostd_testlib.h"
#include "testlib.h"

static void setup(void)
{
	hostd_test_setup();
	unsetenv("LOCKSTEP_BENCHMARKS_DIR");
}

static void teardown(void)
{
	hostd_test_teardown();
}

/* Small parameters for every shipped spec, so that all of them run in
 * seconds; a spec added without a line here runs with its defaults. */
static const char *const small_params =
	"HACKBENCH_MAX_GROUPS=1\nHACKBENCH_LOOPS=20\nHACKBENCH_ITERATIONS=1\n"
	"PERFMSG_MAX_GROUPS=1\nPERFMSG_LOOPS=5\nPERFMSG_ITERATIONS=1\n"
	"PERFPIPE_LOOPS=2000\nPERFPIPE_ITERATIONS=1\n"
	"SYSBENCHCPU_MAX_THREADS=1\nSYSBENCHCPU_EVENTS=100\nSYSBENCHCPU_ITERATIONS=1\n"
	"SYSBENCHTHREAD_MAX_THREADS=1\nSYSBENCHTHREAD_EVENTS=100\nSYSBENCHTHREAD_ITERATIONS=1\n"
	"SYSBENCHMUTEX_MAX_THREADS=1\nSYSBENCHMUTEX_LOCKS=1000\nSYSBENCHMUTEX_ITERATIONS=1\n"
	"STRESSNG_CONTEXT_WORKERS=1\nSTRESSNG_CONTEXT_SECONDS=1\nSTRESSNG_CONTEXT_ITERATIONS=1\n"
	"STRESSNG_CPU_WORKERS=1\nSTRESSNG_CPU_SECONDS=1\nSTRESSNG_CPU_ITERATIONS=1\n"
	/* 30 ms of histogram: a loaded CI machine has seen wake-ups over 10 ms,
	 * whose p99.9 the parser then rightly refuses to make up */
	"CYCLICTEST_DURATION=1\nCYCLICTEST_ITERATIONS=1\nCYCLICTEST_HISTOGRAM=30000\n"
	"FIO_SIZE=4m\nFIO_RUNTIME=1\nFIO_ITERATIONS=1\n"
	"STRESSNG_MAX_THREADS=1\nSTRESSNG_RUNTIME=1\nSTRESSNG_ITERATIONS=1\n"
	"PMQTEST_PAIRS=1\nPMQTEST_DURATION=1\n"
	/* pi_stress reports whole seconds: 2 so that its rate has a time */
	"PISTRESS_MAX_INVGROUPS=1\nPISTRESS_RUNTIME=2\nRTMIGRATION_LOOPS=2\n"
	"FUTEXBENCH_MAX_THREADS=1\nFUTEXBENCH_RUNTIME=1\n"
	"PERFFUTEXWAKE_ITERATIONS=2\nPERFFUTEXWAKE_MAX_THREADS=1\n"
	"PERFSYSCALL_LOOPS=10000\nPERFSYSCALL_ITERATIONS=1\n"
	"NAP_DURATION=1\nMONITOR_DURATION=1\n"
	"IPERF3_MAX_STREAMS=1\nIPERF3_DURATION=1\nIPERF3_ITERATIONS=1\n"
	/* fewer requests may end a test within a millisecond: "inf" requests/s */
	"REDIS_MAX_CLIENTS=1\nREDIS_REQUESTS=50000\nREDIS_ITERATIONS=1\n"
	"APACHEBENCH_MAX_CLIENTS=1\nAPACHEBENCH_LOADS=300\nAPACHEBENCH_ITERATIONS=1\n"
	"PGBENCH_MAX_CLIENTS=1\nPGBENCH_MAX_TIME=1\n"
	/* one object of a tinyconfig kernel; the tarball is extracted once per
	 * machine (about 18 s, into /var/tmp/lockstep-kernbench) */
	"KERNBENCH_MAX_THREADS=1\nKERNBENCH_ITERATIONS=1\nKERNBENCH_CONFIG=tinyconfig\n"
	"KERNBENCH_TARGETS=init/main.o\n"
	"DBENCH_MAX_CLIENTS=1\nDBENCH_DURATION_BASE=1\n"
	"TBENCH_MAX_CLIENTS=1\nTBENCH_DURATION=2\n"
	"PERFNUMA_WORKLOADS=standard_converge\nPERFNUMA_PROCESS_WSS=8388608\nPERFNUMA_ITERATIONS=1\n"
	"BONNIE_DATASET_SIZE=8388608\n"
	"FSMARK_NR_FILES_PER_ITERATION=200\nFSMARK_NR_SUB_DIRECTORIES=10\nFSMARK_ITERATIONS=2\n"
	"FSMARK_FILESIZE=4096\n"
	"STOCKFISH_MAX_THREADS=1\nSTOCKFISH_ITERATIONS=1\nSTOCKFISH_HASH=16\nSTOCKFISH_DEPTH=6\n"
	"SQLITE_SIZE=200\nSQLITE_ITERATIONS=1\n"
	"TRUNC_NR_FILES=2\nTRUNC_FILESIZE=16777216\nTRUNC_ITERATIONS=1\n";

/* The value of KEY="..." (or KEY=...) in a spec file, in buf. */
static const char *spec_value(const char *text, const char *key, char *buf, size_t len)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "\n%s=", key);
	const char *p = strstr(text, pat);
	ck_assert_msg(p != NULL, "no %s", key);
	p += strlen(pat);
	size_t n = strcspn(p, "\n");
	if (*p == '"' && n >= 2)
		p++, n -= 2;
	snprintf(buf, len, "%.*s", (int)n, p);
	return buf;
}

static json_object *find_sample(json_object **v, size_t n, const char *bench, const char *metric)
{
	for (size_t i = 0; i < n; i++) {
		json_object *m;
		if (json_object_object_get_ex(v[i], "metric", &m) &&
		    !strcmp(jstr(v[i], "benchmark"), bench) &&
		    !strcmp(json_object_get_string(m), metric))
			return v[i];
	}
	return NULL;
}

/* The metrics, units and directions a spec (its text) declares, checked
 * in the samples of benchmark name, all from guest-1. */
static void check_declared(json_object **s, size_t n, const char *name, const char *spec)
{
	char metrics[1024], *save;
	spec_value(spec, "BENCH_METRICS", metrics, sizeof(metrics));
	for (char *w = strtok_r(metrics, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		/* name:unit:higher|lower[:optional]; fio's default job does both
		 * reads and writes, so even its optional metrics are there;
		 * bonnie++ prints +++++ for what a small data set makes too
		 * quick to time, so its are checked when they are there */
		char *unit = strchr(w, ':'), *better = strchr(unit + 1, ':');
		*unit++ = '\0';
		*better++ = '\0';
		char *opt = strchr(better, ':');
		if (opt)
			*opt = '\0';
		json_object *o = find_sample(s, n, name, w);
		if (!o && opt && !strcmp(name, "bonniepp"))
			continue;
		ck_assert_msg(o != NULL, "%s: no %s in samples.ndjson", name, w);
		ck_assert_str_eq(jstr(o, "unit"), unit);
		ck_assert_str_eq(jstr(o, "better"), better);
		ck_assert_str_eq(jstr(o, "node"), "guest-1");
	}
}

/* No failure record, or the first one with the step's output. */
static void assert_no_failure(json_object **s, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++) {
		if (!json_object_object_get_ex(s[i], "failed", NULL))
			continue;
		char text[4096];
		describe_failure(s[i], text, sizeof(text));
		ck_abort_msg("%s: %s", what, text);
	}
}

START_TEST(test_every_spec_yields_its_metrics)
{
	char dir[512], list[4096] = "", g[16384];
	snprintf(dir, sizeof(dir), "%s/benchmarks", getenv("LOCKSTEP_SOURCE_ROOT"));
	DIR *d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	char *texts[64];
	size_t nspecs = 0;
	for (struct dirent *e; (e = readdir(d)) && nspecs < 64;) {
		size_t l = strlen(e->d_name);
		if (l < 7 || strcmp(e->d_name + l - 6, ".bench"))
			continue;
		char path[1024], name[128];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		texts[nspecs] = strdup(read_text(path));
		spec_value(texts[nspecs], "BENCH_NAME", name, sizeof(name));
		strncat(list, name, sizeof(list) - strlen(list) - 2);
		strcat(list, " ");
		nspecs++;
	}
	closedir(d);
	ck_assert_uint_ge(nspecs, 13);
	snprintf(g, sizeof(g), "MMTESTS=\"%s\"\n%s", list, small_params);
	write_file("h.conf", "GUEST_KIND=local\nGUEST_COUNT=1\nBARRIER_TIMEOUT=60\n", 0644);
	write_file("g.conf", g, 0644);
	ck_assert_msg(hostd_test_run(NULL, NULL) == 0, "%s", run_diagnosis());

	size_t n;
	json_object **s = read_ndjson("samples.ndjson", &n);
	assert_no_failure(s, n, "every spec");
	for (size_t k = 0; k < nspecs; k++) {
		char name[128];
		spec_value(texts[k], "BENCH_NAME", name, sizeof(name));
		check_declared(s, n, name, texts[k]);
		free(texts[k]);
	}
	free_ndjson(s, n);
}
END_TEST

/* guest-1 runs hackbench while guest-2 and guest-3 run the CPU probe: the
 * barrier is per step, not per benchmark. */
START_TEST(test_noisy_neighbour)
{
	write_file("h.conf", "GUEST_KIND=local\nGUEST_COUNT=3\nGUEST_CONFIG_GUEST_1=noisy.conf\n",
		   0644);
	write_file("noisy.conf",
		   "MMTESTS=hackbench-process-pipes\nHACKBENCH_MAX_GROUPS=2\n"
		   "HACKBENCH_LOOPS=20\nHACKBENCH_ITERATIONS=1\n",
		   0644);
	write_file("g.conf", "MMTESTS=cpu-probe\nMMTEST_ITERATIONS=2\nCPU_PROBE_UNITS=20000\n", 0644);
	ck_assert_msg(hostd_test_run(NULL, NULL) == 0, "%s", run_diagnosis());
	size_t n;
	json_object **s = read_ndjson("samples.ndjson", &n);
	for (int step = 1; step <= 2; step++) {
		ck_assert_int_eq(count_sample(s, n, "guest-1", step, "time"), 1);
		ck_assert_int_eq(count_sample(s, n, "guest-2", step, "ops_per_sec"), 1);
		ck_assert_int_eq(count_sample(s, n, "guest-3", step, "ops_per_sec"), 1);
	}
	free_ndjson(s, n);
	json_object **b = read_ndjson("barriers.ndjson", &n);
	ck_assert_uint_eq(n, 2);
	free_ndjson(b, n);
	/* the manifest says who ran which plan */
	json_object *m = manifest(), *plans = json_object_object_get(m, "node_plans");
	ck_assert_int_eq(json_object_array_length(plans), 2);
	json_object *noisy = json_object_array_get_idx(plans, 0);
	ck_assert_ptr_nonnull(strstr(jstr(noisy, "g_conf"), "noisy.conf"));
	json_object *nodes = json_object_object_get(noisy, "nodes");
	ck_assert_int_eq(json_object_array_length(nodes), 1);
	ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(nodes, 0)), "guest-1");
	json_object_put(m);
}
END_TEST

START_TEST(test_step_counts_must_match)
{
	write_file("h.conf", "GUEST_KIND=local\nGUEST_COUNT=2\nGUEST_CONFIG_GUEST_2=other.conf\n",
		   0644);
	write_file("other.conf", "MMTESTS=cpu-probe\nMMTEST_ITERATIONS=3\n", 0644);
	write_file("g.conf", "MMTESTS=cpu-probe\nMMTEST_ITERATIONS=2\n", 0644);
	ck_assert_int_eq(hostd_test_run(NULL, NULL), 1); /* usage: nothing ran */
	char path[512];
	snprintf(path, sizeof(path), "%s/stderr", tmpdir);
	const char *err = read_text(path);
	ck_assert_msg(strstr(err, "the plan of guest-2 has 3 steps, that of guest-1") &&
			      strstr(err, "every node must run as many steps"),
		      "%s", err);
}
END_TEST

static void write_specs(void)
{
	char dir[512];
	snprintf(dir, sizeof(dir), "%s/specs", tmpdir);
	setenv("LOCKSTEP_BENCHMARKS_DIR", dir, 1);
	write_file("specs/garbled.bench",
		   "BENCH_NAME=garbled\nBENCH_COMMAND='echo Time: soon'\n"
		   "BENCH_PARSER=hackbench\nBENCH_METRICS=time:s:lower\n",
		   0644);
	write_file("specs/exits.bench",
		   "BENCH_NAME=exits\nBENCH_COMMAND='echo Time: 1; exit 3'\n"
		   "BENCH_PARSER=hackbench\nBENCH_METRICS=time:s:lower\n",
		   0644);
	write_file("specs/missing.bench",
		   "BENCH_NAME=missing\nBENCH_COMMAND='echo Time: 0.5'\n"
		   "BENCH_PARSER=hackbench\n"
		   "BENCH_METRICS=\"time:s:lower lat:us:lower\"\n",
		   0644);
	write_file("specs/pat.bench",
		   "BENCH_NAME=pat\nBENCH_COMMAND='echo took 12.5 ms'\n"
		   "BENCH_PARSER=pattern\nBENCH_PARSER_ARG='took {} ms'\n"
		   "BENCH_METRICS=latency:ms:lower\n",
		   0644);
	write_file("specs/endless.bench",
		   "BENCH_NAME=endless\nBENCH_COMMAND='sleep 60'\n"
		   "BENCH_PARSER=hackbench\nBENCH_METRICS=time:s:lower\n",
		   0644);
}

static json_object *failure_of(json_object **v, size_t n, int step)
{
	for (size_t i = 0; i < n; i++)
		if (jint(v[i], "step") == step && json_object_object_get_ex(v[i], "failed", NULL))
			return v[i];
	return NULL;
}

START_TEST(test_failures_are_records)
{
	char dir[512];
	snprintf(dir, sizeof(dir), "%s/specs", tmpdir);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	write_specs();
	write_file("h.conf", "GUEST_KIND=local\nGUEST_COUNT=1\n", 0644);
	write_file("g.conf",
		   "MMTESTS=\"garbled exits missing cpu-probe pat\"\nCPU_PROBE_UNITS=1000\n", 0644);
	/* a step that gave no numbers makes the run degraded, exit 2 (issue 15) */
	ck_assert_msg(hostd_test_run(NULL, NULL) == 2, "%s", run_diagnosis());
	json_object *m = manifest();
	ck_assert_str_eq(jstr(m, "status"), "degraded");
	ck_assert_str_eq(jstr(m, "reason"),
			 "3 failed benchmark steps (failure records in samples.ndjson)");
	ck_assert_int_eq(jint(m, "failed_steps"), 3);
	size_t n;
	json_object **s = read_ndjson("samples.ndjson", &n);
	json_object *f1 = failure_of(s, n, 1), *f2 = failure_of(s, n, 2), *f3 = failure_of(s, n, 3);
	ck_assert_ptr_nonnull(f1);
	ck_assert_ptr_nonnull(f2);
	ck_assert_ptr_nonnull(f3);
	ck_assert_int_eq(count_sample(s, n, "guest-1", 1, "time"), 0);
	ck_assert_int_eq(count_sample(s, n, "guest-1", 3, "time"), 0); /* all or nothing */
	ck_assert_int_eq(count_sample(s, n, "guest-1", 4, "ops_per_sec"), 1);
	/* a one-number pattern, named by the spec */
	ck_assert_int_eq(count_sample(s, n, "guest-1", 5, "latency"), 1);
	ck_assert_ptr_null(failure_of(s, n, 5));
	ck_assert_msg(strstr(jstr(f1, "reason"), "not recognised by the hackbench parser"), "%s",
		      jstr(f1, "reason"));
	ck_assert_int_eq(jint(f1, "exit_status"), 0);
	ck_assert_int_eq(jint(f2, "exit_status"), 3);
	ck_assert_str_eq(jstr(f2, "benchmark"), "exits");
	ck_assert_str_eq(jstr(f2, "node"), "guest-1");
	ck_assert_str_eq(jstr(f2, "log"), "nodes/guest-1/step-2.out");
	ck_assert_msg(strstr(jstr(f3, "reason"), "found no lat"), "%s", jstr(f3, "reason"));
	/* the raw log the record points at is there */
	char path[512];
	snprintf(path, sizeof(path), "%s/results/t/%s", tmpdir, jstr(f1, "log"));
	ck_assert_ptr_nonnull(strstr(read_text(path), "Time: soon"));
	free_ndjson(s, n);
	json_object_put(m);
}
END_TEST

START_TEST(test_timeout_is_a_record)
{
	char dir[512];
	snprintf(dir, sizeof(dir), "%s/specs", tmpdir);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	write_specs();
	write_file("h.conf",
		   "GUEST_KIND=local\nGUEST_COUNT=2\nSTEP_TIMEOUT=1\nBARRIER_TIMEOUT=1\n"
		   "ON_GUEST_FAILURE=continue\nGUEST_CONFIG_GUEST_2=quick.conf\n",
		   0644);
	write_file("quick.conf", "MMTESTS=\"cpu-probe cpu-probe\"\nCPU_PROBE_UNITS=1000\n", 0644);
	write_file("g.conf", "MMTESTS=\"cpu-probe endless\"\nCPU_PROBE_UNITS=1000\n", 0644);
	hostd_test_run(NULL, NULL);
	size_t n;
	json_object **s = read_ndjson("samples.ndjson", &n);
	json_object *f = failure_of(s, n, 2);
	ck_assert_msg(f != NULL, "%s", run_diagnosis());
	ck_assert_str_eq(jstr(f, "node"), "guest-1");
	ck_assert_str_eq(jstr(f, "benchmark"), "endless");
	ck_assert(json_object_is_type(json_object_object_get(f, "exit_status"), json_type_null));
	ck_assert_int_eq(count_sample(s, n, "guest-2", 2, "ops_per_sec"), 1);
	free_ndjson(s, n);
}
END_TEST

/* One of MMTests' scheduler configs, as it is (two lines appended to keep
 * the run short): its names, parameters and if-clamps are understood, its
 * monitor settings taken or listed once as ignored. */
START_TEST(test_mmtests_config_as_is)
{
	char path[512], g[16384];
	snprintf(path, sizeof(path), "%s/tests/data/mmtests/config-scheduler-hackbench",
		 getenv("LOCKSTEP_SOURCE_ROOT"));
	const char *text = read_text(path);
	ck_assert_ptr_nonnull(text);
	snprintf(g, sizeof(g), "%s\nHACKBENCH_LOOPS=20\nHACKBENCH_MAX_GROUPS=2\n", text);
	write_file("g.conf", g, 0644);
	write_file("h.conf", "GUEST_KIND=local\nGUEST_COUNT=2\n", 0644);
	ck_assert_msg(hostd_test_run(NULL, NULL) == 0, "%s", run_diagnosis());
	snprintf(path, sizeof(path), "%s/stderr", tmpdir);
	const char *err = read_text(path);
	ck_assert_msg(strstr(err, "ignored MMTests settings") && strstr(err, "RUN_MONITOR"), "%s", err);
	ck_assert_msg(!strstr(err, "unknown name HACKBENCH"), "%s", err);
	size_t n;
	json_object **s = read_ndjson("samples.ndjson", &n);
	/* 4 variants x groups 1, 2 x 3 iterations, on both guests */
	static const char *const v[] = { "hackbench-process-pipes", "hackbench-process-sockets",
					 "hackbench-thread-pipes", "hackbench-thread-sockets" };
	for (int k = 0; k < 4; k++)
		ck_assert_ptr_nonnull(find_sample(s, n, v[k], "time"));
	ck_assert_int_eq(count_sample(s, n, "guest-2", 24, "time"), 1);
	free_ndjson(s, n);
}
END_TEST

/* An MMTests-style fio config (written for this test): the g.conf's heredoc
 * job file is what fio runs, not fio.bench's own job.  The job does reads
 * and writes, since fio.bench promises both directions' metrics. */
START_TEST(test_mmtests_fio_jobfile)
{
	write_file("g.conf",
		   "export MMTESTS=\"fio\"\n"
		   "export FIO_TEST_TYPE=jobfile\n"
		   "JOBFILE=\"/tmp/fio-jobfile-$$\"\n"
		   "export FIO_CMD_OPTIONS=\"$JOBFILE\"\n"
		   "cat >$JOBFILE <<END\n"
		   "[global]\n"
		   "group_reporting=1\n"
		   "ioengine=psync\n"
		   "runtime=1\n"
		   "size=8m\n"
		   "[lockstep-jobfile]\n"
		   "rw=randread\n"
		   "bs=4k\n"
		   "END\n"
		   "FIO_ITERATIONS=1\n",
		   0644);
	write_file("h.conf", "GUEST_KIND=local\nGUEST_COUNT=1\nBARRIER_TIMEOUT=60\n", 0644);
	ck_assert_msg(hostd_test_run(NULL, NULL) == 0, "%s", run_diagnosis());
	size_t n;
	json_object **s = read_ndjson("samples.ndjson", &n);
	assert_no_failure(s, n, "fio job file");
	/* a job file that only reads: read metrics, no write ones, no failure */
	ck_assert_ptr_nonnull(find_sample(s, n, "fio", "read.iops"));
	ck_assert_ptr_nonnull(find_sample(s, n, "fio", "read.clat_p99"));
	ck_assert_ptr_null(find_sample(s, n, "fio", "write.iops"));
	free_ndjson(s, n);
	/* the report is of the job file's job, not of fio.bench's "lockstep" */
	char path[512];
	snprintf(path, sizeof(path), "%s/results/t/nodes/guest-1/step-1.out", tmpdir);
	const char *out = read_text(path);
	ck_assert_msg(out && strstr(out, "\"lockstep-jobfile\""), "%s: %.2000s", path,
		      out ? out : "(none)");
}
END_TEST

/* How many samples of metric of benchmark name carry variant (NULL: none). */
static int count_variant(json_object **s, size_t n, const char *name, const char *variant,
			 const char *metric)
{
	int k = 0;
	for (size_t i = 0; i < n; i++) {
		json_object *v, *mo;
		bool has = json_object_object_get_ex(s[i], "variant", &v);
		if (!strcmp(jstr(s[i], "benchmark"), name) &&
		    json_object_object_get_ex(s[i], "metric", &mo) &&
		    !strcmp(json_object_get_string(mo), metric) &&
		    (variant ? has && !strcmp(json_object_get_string(v), variant) : !has))
			k++;
	}
	return k;
}

/* One config per family of MMTests' scheduler and virtualization
 * benchmarks, in MMTests' form (tests/data/mmtests/bench/, written for
 * these tests), shortened by lines appended as a lab would with --set: each
 * runs on a local guest, sweeps as MMTests does, and yields every metric
 * its benchmarks' specs declare. */
static const struct {
	const char *config, *shorten;
} families[] = {
	{ "config-workload-stressng-context", "STRESSNG_RUNTIME=1\nSTRESSNG_ITERATIONS=1\n" },
	{ "config-rt-pmqtest", "PMQTEST_DURATION=1\n" },
	/* --check on a loaded CI host may see an inversion: a result, but
	 * not this test's */
	{ "config-rt-pistress-rtmigration",
	  "PISTRESS_RUNTIME=2\nRTMIGRATION_LOOPS=2\nRTMIGRATION_CHECK=no\n" },
	{ "config-workload-futexbench",
	  "FUTEXBENCH_MAX_THREADS=4\nFUTEXBENCH_RUNTIME=1\nPERFFUTEXWAKE_ITERATIONS=2\n"
	  "PERFSYSCALL_LOOPS=10000\nPERFSYSCALL_ITERATIONS=2\n" },
	{ "config-network-iperf3-loopback",
	  "IPERF3_MAX_STREAMS=2\nIPERF3_ITERATIONS=1\nIPERF3_DURATION=1\n" },
	{ "config-power-nap-monitor", "NAP_DURATION=1\nMONITOR_DURATION=1\n" },
	{ "config-memdb-redis-dbench", "REDIS_ITERATIONS=1\nREDIS_REQUESTS=50000\nREDIS_MAX_CLIENTS=2\n"
				       "DBENCH_DURATION_BASE=2\nDBENCH_MAX_CLIENTS=2\n" },
};

START_TEST(test_mmtests_family_config)
{
	char path[512], g[8192], list[1024], *save;
	snprintf(path, sizeof(path), "%s/tests/data/mmtests/bench/%s",
		 getenv("LOCKSTEP_SOURCE_ROOT"), families[_i].config);
	/* read_text's buffer is reused by what follows */
	const char *t = read_text(path);
	ck_assert_msg(t != NULL, "%s", path);
	char *text = strdup(t);
	snprintf(g, sizeof(g), "%s\n%s", text, families[_i].shorten);
	write_file("g.conf", g, 0644);
	write_file("h.conf", "GUEST_KIND=local\nGUEST_COUNT=1\nBARRIER_TIMEOUT=60\n", 0644);
	ck_assert_msg(hostd_test_run(NULL, NULL) == 0, "%s: %s", families[_i].config, run_diagnosis());
	size_t n;
	json_object **s = read_ndjson("samples.ndjson", &n);
	assert_no_failure(s, n, families[_i].config);
	const char *m = strstr(text, "MMTESTS=\"");
	ck_assert_ptr_nonnull(m);
	snprintf(list, sizeof(list), "%.*s", (int)strcspn(m + 9, "\""), m + 9);
	for (char *w = strtok_r(list, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		char spec[1024];
		snprintf(spec, sizeof(spec), "%s/benchmarks/%s.bench",
			 getenv("LOCKSTEP_SOURCE_ROOT"), w);
		const char *st = read_text(spec);
		ck_assert_msg(st != NULL, "no spec %s", spec);
		check_declared(s, n, w, st);
	}
	/* the sweeps MMTests makes, from the config's own bounds */
	if (_i == 0) { /* 1 to 2 x CPUs instances, doubling */
		ck_assert_int_eq(count_variant(s, n, "stressng", "threads=1", "bogo_ops_s"), 1);
		ck_assert_int_eq(count_variant(s, n, "stressng", "threads=2", "bogo_ops_s"), 1);
	} else if (_i == 3) { /* from 2 threads up */
		ck_assert_int_eq(count_variant(s, n, "futexbench-hash", "threads=1", "ops_per_sec"), 0);
		ck_assert_int_eq(count_variant(s, n, "futexbench-hash", "threads=2", "ops_per_sec"), 1);
		ck_assert_int_eq(count_variant(s, n, "futexbench-hash", "threads=4", "ops_per_sec"), 1);
		ck_assert_int_eq(count_variant(s, n, "perfsyscall", NULL, "usecs_per_op"), 2);
	} else if (_i == 4) {
		ck_assert_int_eq(count_variant(s, n, "iperf3-ipv6-udp",
					       "size=1420,bitrate=0,streams=1", "jitter"),
				 1);
		ck_assert_int_eq(count_variant(s, n, "iperf3-ipv6-udp",
					       "size=1420,bitrate=0,streams=2", "jitter"),
				 1);
	}
	free_ndjson(s, n);
	free(text);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hostd-bench");
	TCase *tc = tcase_create("bench");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_every_spec_yields_its_metrics);
	tcase_add_test(tc, test_noisy_neighbour);
	tcase_add_test(tc, test_step_counts_must_match);
	tcase_add_test(tc, test_failures_are_records);
	tcase_add_test(tc, test_timeout_is_a_record);
	tcase_add_test(tc, test_mmtests_config_as_is);
	tcase_add_test(tc, test_mmtests_fio_jobfile);
	tcase_add_loop_test(tc, test_mmtests_family_config, 0,
			    (int)(sizeof(families) / sizeof(families[0])));
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
