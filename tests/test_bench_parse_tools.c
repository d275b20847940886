// SPDX-License-Identifier: GPL-2.0-or-later
/* The parsers on what the real tools print here and now: each tool runs
 * with tiny parameters (tools/install-deps installs them) and its output
 * must parse into the metrics its parser promises.  A missing tool is a
 * failure that says so.  Nothing is timed: values are only checked to be
 * there and consistent with each other. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_parse.h"
#include "testlib.h"
#include "xalloc.h"

static char tmpdir[256]; /* the tools run here: a folder per case */

static void setup(void)
{
	testlib_tmpdir(tmpdir, sizeof(tmpdir), "lockstep-bench");
}

/* The end of a tool's output for a failure's message: within Check's cap
 * (testlib_main), and the end is where a tool says what went wrong.  out
 * must have room for its NUL (run() leaves it). */
static const char *output_tail(char *out, size_t len)
{
	const size_t keep = TESTLIB_MAX_MSG / 2;

	out[len] = 0;
	return len > keep ? out + len - keep : out;
}

/* runs cmd in the temp dir with stderr joined to stdout (stress-ng reports
 * on stderr) and returns all it printed */
static char *run(const char *cmd, size_t *len)
{
	char *sh = xasprintf("cd %s && %s 2>&1", tmpdir, cmd);
	FILE *f = popen(sh, "r");
	size_t cap = 1 << 16, n = 0, got;
	char *buf = xmalloc(cap);

	ck_assert_msg(f != NULL, "popen '%s': %s", sh, strerror(errno));
	while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
	}
	int st = pclose(f);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) != 127,
		      "'%s': not found (run tools/install-deps)", cmd);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "'%s' failed (status %#x):\n%s", cmd,
		      st, output_tail(buf, n));
	free(sh);
	*len = n;
	return buf;
}

static struct bench_metrics m;

static void run_parse(const char *parser, const char *arg, const char *cmd)
{
	size_t len;
	char why[512], *out = run(cmd, &len);
	int r = bench_parse(bench_parser_find(parser), out, len, arg, &m, why, sizeof(why));

	ck_assert_msg(r == 0, "%s on the output of '%s': %s\n--- output:\n%s", parser, cmd, why,
		      output_tail(out, len));
	free(out);
}

static double metric(const char *name)
{
	const struct bench_metric *x = bench_metrics_get(&m, name);

	ck_assert_msg(x != NULL, "no metric '%s' (%zu metrics)", name, m.n);
	return x->value;
}

START_TEST(hackbench)
{
	run_parse("hackbench", NULL, "hackbench -g 1 -l 20");
	ck_assert_uint_eq(m.n, 1);
	ck_assert_double_ge(metric("time"), 0);
	run_parse("hackbench", NULL, "hackbench -g 1 -l 20 -T -p");
	ck_assert_double_ge(metric("time"), 0);
}
END_TEST

START_TEST(perf_sched)
{
	run_parse("perf-sched-pipe", NULL, "perf bench sched pipe -l 2000");
	ck_assert_uint_eq(m.n, 3);
	/* perf derives ops/sec from the same run as usecs/op */
	double usecs = metric("usecs_per_op"), ops = metric("ops_per_sec");
	ck_assert_double_gt(usecs, 0);
	ck_assert_double_le(fabs(ops * usecs / 1e6 - 1), 0.01);
	run_parse("perf-sched-pipe", NULL, "perf bench -f simple sched pipe -l 2000");
	ck_assert_uint_eq(m.n, 1);
	run_parse("perf-sched-messaging", NULL, "perf bench sched messaging -g 1 -l 20");
	ck_assert_uint_eq(m.n, 1);
	ck_assert_double_ge(metric("time"), 0);
}
END_TEST

START_TEST(sysbench)
{
	run_parse("sysbench-cpu", NULL, "sysbench cpu --time=0 --events=200 --cpu-max-prime=2000 run");
	ck_assert_double_eq(metric("events"), 200);
	ck_assert_double_gt(metric("events_per_sec"), 0);
	ck_assert_double_le(metric("lat_min"), metric("lat_p95"));
	ck_assert_double_le(metric("lat_p95"), metric("lat_max"));
	run_parse("sysbench-cpu", NULL,
		  "sysbench cpu --time=0 --events=100 --cpu-max-prime=2000 --percentile=0 run");
	ck_assert_ptr_null(bench_metrics_get(&m, "lat_p95"));
	run_parse("sysbench-threads", NULL, "sysbench threads --time=0 --events=200 --threads=2 run");
	ck_assert_double_eq(metric("events"), 200);
	run_parse("sysbench-mutex", NULL,
		  "sysbench mutex --threads=2 --mutex-num=64 --mutex-locks=1000 run");
	ck_assert_double_eq(metric("events"), 2);
	ck_assert_double_le(metric("lat_min"), metric("lat_max"));
}
END_TEST

START_TEST(stress_ng)
{
	run_parse("stress-ng", "cpu", "stress-ng --cpu 1 --timeout 1 --metrics-brief");
	ck_assert_uint_eq(m.n, 3);
	ck_assert_double_gt(metric("bogo_ops"), 0);
	ck_assert_double_gt(metric("bogo_ops_s"), 0);
	run_parse("stress-ng", NULL, "stress-ng --cpu 1 --switch 1 --timeout 1 --metrics");
	ck_assert_uint_eq(m.n, 6);
	ck_assert_double_gt(metric("switch.bogo_ops_s_usr_sys"), 0);
}
END_TEST

/* MMTests' stressng: whichever one stressor ran */
START_TEST(stressng_any)
{
	run_parse("stress-ng", "*", "stress-ng --context 1 --timeout 1 --metrics-brief");
	ck_assert_uint_eq(m.n, 3);
	ck_assert_double_gt(metric("bogo_ops_s"), 0);
	run_parse("stress-ng", "*",
		  "stress-ng --sock-domain ipv4 --sock 1 --timeout 1 --metrics-brief");
	ck_assert_double_gt(metric("bogo_ops"), 0);
}
END_TEST

START_TEST(perf_futex_syscall)
{
	static const char *const rate[] = { "hash", "lock-pi" };
	static const char *const time[][2] = {
		{ "wake", "wake" },
		{ "wake-parallel", "wake-parallel" },
		{ "requeue", "requeue" },
		{ "requeue-pi", "requeue --pi" },
	};
	char cmd[128];
	for (size_t i = 0; i < 2; i++) {
		snprintf(cmd, sizeof(cmd), "perf bench futex %s -t 2 -r 1", rate[i]);
		run_parse("perf-futex", rate[i], cmd);
		ck_assert_uint_eq(m.n, 1);
		ck_assert_double_gt(metric("ops_per_sec"), 0);
	}
	for (size_t i = 0; i < 4; i++) {
		snprintf(cmd, sizeof(cmd), "perf bench futex %s -t 2", time[i][1]);
		run_parse("perf-futex", time[i][0], cmd);
		ck_assert_uint_eq(m.n, 1);
		ck_assert_double_gt(metric("time"), 0);
	}
	run_parse("perf-futex", "wake", "perf bench -r 3 futex wake -t 2 -w 1");
	ck_assert_double_gt(metric("time"), 0);
	run_parse("perf-syscall", NULL, "perf bench syscall basic -l 20000");
	double usecs = metric("usecs_per_op"), ops = metric("ops_per_sec");
	ck_assert_double_le(fabs(ops * usecs / 1e6 - 1), 0.01);
	/* perfnuma's form; one node converges at once, or within its 1 s */
	run_parse("perf-numa", NULL, "perf bench numa mem -m -p 1 -t 2 -P 8 -s 1");
	ck_assert_double_gt(metric("total_speed"), 0);
	ck_assert_double_le(metric("runtime_min"), metric("runtime_max"));
	ck_assert_double_le(fabs(metric("thread_speed") * 2 / metric("total_speed") - 1), 0.05);
}
END_TEST

START_TEST(rt_tests)
{
	run_parse("pmqtest", NULL, "pmqtest -p99 --threads=2 -a --distance=0 --duration=1 --quiet");
	ck_assert_uint_eq(m.n, 9);
	ck_assert_double_le(metric("lat_min"), metric("lat_avg"));
	ck_assert_double_le(metric("lat_avg"), metric("lat_max"));
	ck_assert_double_le(metric("p1.lat_max"), metric("lat_max"));
	/* a run of 1 s may finish no operation inside its timed window */
	run_parse("dbench", NULL, "dbench -t 3 -D . 1");
	ck_assert_double_gt(metric("throughput"), 0);
	/* bonnie++ wants -u as root; a data set this small is too quick to
	 * time (+++++), so only its latencies are sure to be there */
	run_parse("bonnie", NULL,
		  "mkdir -p bd && bonnie++ -q -f -r 0 -s 8 -n 0 -d bd -m t "
		  "$([ $(id -u) = 0 ] && echo -u root)");
	ck_assert_double_gt(metric("random_seeks_lat"), 0);
	ck_assert_ptr_null(bench_metrics_get(&m, "seqout_char"));
	/* stockfish.bench's: its bench search, read by the pattern parser */
	run_parse("pattern", "Nodes/second : {}", "/usr/games/stockfish bench 16 1 4 default depth");
	ck_assert_double_gt(metric("value"), 0);
	/* sqlite.bench's timing: sqlite's own clock around the inserts (enough
	 * of them to take more than its millisecond) */
	run_parse("pattern", "txn_per_sec = {}",
		  "printf 'CREATE TABLE t (t REAL);\\n"
		  "INSERT INTO t VALUES (julianday());\\nCREATE TABLE m (a INT);\\n"
		  "INSERT INTO m WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
		  "WHERE x < 200000) SELECT x FROM c;\\n.mode line\\n"
		  "SELECT 200000 / ((julianday() - t) * 86400.0) AS txn_per_sec FROM t;\\n' | "
		  "sqlite3 -bail s.db");
	ck_assert_double_gt(metric("value"), 0);
	/* fsmark's form: two top folders, a row per iteration */
	run_parse("fsmark", NULL,
		  "mkdir -p fm/1 fm/2 && fs_mark -D 10 -S0 -n 50 -s 4096 -L 3 -t 1 "
		  "-d fm/1 -d fm/2");
	ck_assert_uint_eq(m.n, 3);
	ck_assert_double_gt(metric("files_sec_min"), 0);
	ck_assert_double_le(metric("files_sec_min"), metric("files_sec"));
	run_parse("pi-stress", NULL, "pi_stress --groups=1 --duration=2");
	ck_assert_double_gt(metric("inversions"), 0);
	ck_assert_double_gt(metric("inversions_per_sec"), 0);
	run_parse("rt-migrate-test", NULL, "rt-migrate-test -c -l 2");
	ck_assert_double_le(metric("lat_avg"), metric("lat_max"));
	ck_assert_double_eq(metric("t0.lat_max") <= metric("lat_max"), 1);
}
END_TEST

/* nap's readings; iperf3, redis and ab with their own servers on loopback ports */
START_TEST(uptime_iperf3)
{
	run_parse("uptime", NULL, "cat /proc/uptime && sleep 1 && cat /proc/uptime");
	ck_assert_double_ge(metric("wall"), 0.9);
	ck_assert_double_ge(metric("idle_cpus"), 0);
	run_parse("iperf3-json", NULL,
		  "p=$((20000 + $$ % 40000)); iperf3 -s -1 -p $p --forceflush >srv.log 2>&1 & "
		  "until grep -q listening srv.log; do sleep 0.1; done; "
		  "iperf3 -c 127.0.0.1 -p $p -t 1 -u -b 10M -J; wait");
	ck_assert_uint_eq(m.n, 4);
	ck_assert_double_gt(metric("send"), 0);
	ck_assert_double_le(metric("lost_percent"), 100);
	run_parse("redis-benchmark", NULL,
		  "p=$((20000 + $$ % 40000)); redis-server --port $p --save '' --appendonly no "
		  ">redis.log 2>&1 & until grep -q 'Ready to accept' redis.log; do sleep 0.1; done; "
		  "redis-benchmark --csv -p $p -c 2 -n 1000 -t set,get; s=$?; kill $!; wait; exit $s");
	ck_assert_uint_eq(m.n, 6);
	ck_assert_double_gt(metric("get.rps"), 0);
	ck_assert_double_le(metric("set.lat_avg"), metric("set.lat_p99") + 0.001);
	/* ab against busybox httpd, the page and server of apachebench.bench */
	run_parse("apachebench", NULL,
		  "p=$((20000 + $$ % 40000)); dd if=/dev/zero of=page.html bs=4096 count=1 "
		  "2>/dev/null; busybox httpd -f -p 127.0.0.1:$p -h . & "
		  "until ab -n 1 http://127.0.0.1:$p/page.html >/dev/null 2>&1; do sleep 0.1; done; "
		  "ab -n 300 -c 2 http://127.0.0.1:$p/page.html; s=$?; kill $!; wait; exit $s");
	ck_assert_uint_eq(m.n, 13);
	ck_assert_double_gt(metric("rps"), 0);
	ck_assert_double_le(metric("lat_p50"), metric("lat_p100"));
}
END_TEST

START_TEST(cyclictest)
{
	/* SCHED_FIFO: in the normal class a loaded machine (CI beside other
	 * work) delayed a wake past the 20 ms histogram, and the parser
	 * rightly refuses a p99.9 among the overflows */
	run_parse("cyclictest", NULL, "cyclictest -q -p 80 -l 200 -i 500 -h 20000");
	ck_assert_double_le(metric("lat_min"), metric("lat_p50"));
	ck_assert_double_le(metric("lat_p50"), metric("lat_p99"));
	ck_assert_double_le(metric("lat_p99.9"), metric("lat_max"));
	ck_assert_double_eq(metric("t0.lat_max"), metric("lat_max"));
	run_parse("cyclictest", "overall", "cyclictest -q -l 100 -i 500 -t 2");
	ck_assert_uint_eq(m.n, 3);
	ck_assert_double_le(metric("lat_avg"), metric("lat_max"));
}
END_TEST

START_TEST(fio)
{
	run_parse("fio-json", NULL,
		  "fio --name=t --directory=. --size=1M --bs=4k --rw=randrw "
		  "--ioengine=psync --output-format=json");
	ck_assert_double_gt(metric("read.iops"), 0);
	ck_assert_double_gt(metric("write.bw"), 0);
	ck_assert_double_le(metric("read.clat_p50"), metric("read.clat_max") + 1);
	run_parse("fio-json", NULL,
		  "fio --name=t --directory=. --size=1M --bs=4k --rw=read "
		  "--numjobs=2 --group_reporting --ioengine=psync --output-format=json");
	ck_assert_ptr_null(bench_metrics_get(&m, "write.bw"));
	ck_assert_double_gt(metric("read.bw"), 0);
}
END_TEST

START_TEST(pattern)
{
	run_parse("pattern", "Time: {}", "hackbench -g 1 -l 20");
	ck_assert_double_ge(metric("value"), 0);
	run_parse("pattern", "{} ops/sec", "perf bench sched pipe -l 1000");
	ck_assert_double_gt(metric("value"), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bench-parse-tools");
	TCase *tc = tcase_create("tools");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, hackbench);
	tcase_add_test(tc, perf_sched);
	tcase_add_test(tc, sysbench);
	tcase_add_test(tc, stress_ng);
	tcase_add_test(tc, stressng_any);
	tcase_add_test(tc, perf_futex_syscall);
	tcase_add_test(tc, rt_tests);
	tcase_add_test(tc, uptime_iperf3);
	tcase_add_test(tc, cyclictest);
	tcase_add_test(tc, fio);
	tcase_add_test(tc, pattern);
	suite_add_tcase(s, tc);

	return testlib_main(s);
}
