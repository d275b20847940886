// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Benchmark specs and plans: a spec read with a node's facts, the user's
 * g.conf winning over its defaults, sweeps, warm-ups, and every error naming
 * the file, the line and the value.  The real specs of benchmarks/ are
 * loaded too.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_spec.h"
#include "mmtests_names.h"
#include "plan.h"
#include "testlib.h"

static char dir[256];

static void setup(void)
{
	testlib_tmpdir(dir, sizeof(dir), "lockstep-spec");
}

static void teardown(void)
{
	ck_assert_int_eq(testlib_rmtree(dir), 0);
}

static const char *put(const char *name, const char *text)
{
	static char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static struct sysfacts facts(int cpus)
{
	return (struct sysfacts){
		.num_logical_cpus = cpus, .num_nodes = 1, .num_llcs = 1, .memtotal_bytes = 1 << 30
	};
}

#define SPEC_HEAD                                                                          \
	"BENCH_NAME=hb\nBENCH_ALIASES=\"hb-alias\"\nBENCH_BINARIES=hackbench\n"            \
	"BENCH_PARAMS=\"HB_MIN HB_MAX HB_LOOPS HB_ITER HB_WARM\"\n"                        \
	"HB_MIN=1\nHB_MAX=$((NUM_LOGICAL_CPUS * 2))\nHB_LOOPS=100\nHB_ITER=2\nHB_WARM=1\n" \
	"BENCH_SWEEP=GROUPS\nBENCH_SWEEP_MIN='${HB_MIN}'\nBENCH_SWEEP_MAX='${HB_MAX}'\n"   \
	"BENCH_ITERATIONS='${HB_ITER}'\nBENCH_WARMUP='${HB_WARM}'\n"                       \
	"BENCH_PARSER=hackbench\nBENCH_METRICS=\"time:s:lower\"\n"

static const char *const spec_text = SPEC_HEAD
	"BENCH_COMMAND='hackbench -g ${GROUPS} -l ${HB_LOOPS}'\n";

/* Builds the plan of g.conf text with the spec folder dir. */
static int plan_of(const char *gconf, int cpus, struct node_plan *p, struct config_diag *d)
{
	struct sysfacts f = facts(cpus);
	return plan_build(put("g.conf", gconf), &f, dir, p, d);
}

START_TEST(test_sweep_uses_node_facts_and_user_values)
{
	put("hb.bench", spec_text);
	struct node_plan p;
	struct config_diag d = { 0 };
	/* 3 CPUs: groups 1, 2, 4, 6; 1 warm-up + 2 iterations each */
	ck_assert_msg(plan_of("MMTESTS=hb\nHB_LOOPS=7\n", 3, &p, &d) == 0, "%s:%d: %s", d.file,
		      d.line, d.text);
	ck_assert_uint_eq(p.nsteps, 12);
	static const unsigned groups[] = { 1, 2, 4, 6 };
	for (uint32_t k = 0; k < p.nsteps; k++) {
		char want[128];
		snprintf(want, sizeof(want), "hackbench -g %u -l 7", groups[k / 3]);
		ck_assert_str_eq(p.steps[k].command, want);
		ck_assert_str_eq(p.steps[k].benchmark, "hb");
		ck_assert_uint_eq(p.steps[k].index, k + 1);
		ck_assert_uint_eq(p.steps[k].iteration, k % 3 + 1);
		ck_assert_int_eq(p.info[k].warmup, k % 3 == 0);
		ck_assert_uint_eq(p.info[k].sweep_value, groups[k / 3]);
	}
	char v[64];
	ck_assert_str_eq(plan_step_variant(&p, 4, v, sizeof(v)), "groups=2");
	plan_fini(&p);
}
END_TEST

START_TEST(test_alias_iterations_and_command_override)
{
	put("hb.bench", spec_text);
	struct node_plan p;
	struct config_diag d = { 0 };
	/* an MMTests alias, the outer iterations, a COMMAND_ that replaces a spec */
	ck_assert_msg(plan_of("MMTESTS=\"hb-alias cpu-probe\"\nMMTEST_ITERATIONS=2\nHB_MAX=1\n"
			      "HB_WARM=0\nHB_ITER=1\n",
			      2, &p, &d) == 0,
		      "%s", d.text);
	ck_assert_uint_eq(p.nsteps, 4);
	ck_assert_str_eq(p.steps[0].benchmark, "hb");
	ck_assert_str_eq(p.steps[1].benchmark, "cpu-probe");
	ck_assert_uint_eq(p.steps[2].iteration, 2);
	ck_assert_uint_eq(p.steps[3].iteration, 2);
	ck_assert_ptr_nonnull(p.info[0].spec);
	ck_assert_ptr_null(p.info[1].spec);
	ck_assert_ptr_null(p.steps[1].command); /* a cpu-probe has none */
	plan_fini(&p);

	ck_assert_int_eq(plan_of("MMTESTS=hb\nCOMMAND_HB=\"echo mine\"\n", 2, &p, &d), 0);
	ck_assert_uint_eq(p.nsteps, 1);
	ck_assert_str_eq(p.steps[0].command, "echo mine");
	ck_assert_ptr_null(p.info[0].spec);
	plan_fini(&p);
}
END_TEST

/* Each bad input fails with a message naming what and where. */
static void expect_error(const char *spec, const char *gconf, const char *file_part, int line,
			 const char *text_part)
{
	put("hb.bench", spec);
	struct node_plan p;
	struct config_diag d = { 0 };
	ck_assert_int_lt(plan_of(gconf, 2, &p, &d), 0);
	ck_assert_msg(strstr(d.file, file_part) != NULL, "file %s, want %s (%s)", d.file, file_part,
		      d.text);
	ck_assert_msg(d.line == line, "line %d, want %d (%s)", d.line, line, d.text);
	ck_assert_msg(strstr(d.text, text_part) != NULL, "\"%s\" lacks \"%s\"", d.text, text_part);
}

START_TEST(test_errors_name_place_and_value)
{
	/* a value that would change the shell command */
	expect_error(spec_text, "MMTESTS=hb\nHB_LOOPS=\"1;reboot\"\n", "g.conf", 2,
		     "HB_LOOPS=\"1;reboot\" cannot go into the command of hb");
	/* not an integer where one is needed */
	expect_error(spec_text, "MMTESTS=hb\nHB_ITER=many\n", "g.conf", 2,
		     "HB_ITER of hb is \"many\", not an integer between 1 and 1000");
	/* an empty sweep */
	expect_error(spec_text, "MMTESTS=hb\nHB_MIN=9\nHB_MAX=3\n", "g.conf", 3,
		     "the maximum HB_MAX is below the minimum");
	/* a word that is nothing known, an MMTests benchmark lockstep lacks,
	 * a typo: one line each, naming the word and the documentation */
	expect_error(spec_text, "MMTESTS=\"hb hackbnch\"\n", "g.conf", 1,
		     "MMTESTS names \"hackbnch\", which is neither a benchmark of lockstep's library "
		     "nor of MMTests (docs/benchmarks.md lists lockstep's benchmarks and MMTests' "
		     "it lacks)");
	expect_error(spec_text, "MMTESTS=\"hb schbench\"\n", "g.conf", 1,
		     "MMTESTS names \"schbench\", an MMTests benchmark that is not in lockstep's "
		     "library: not in Debian 12's archive: MMTests downloads and builds it "
		     "(docs/benchmarks.md");
	/* why, for a family by its prefix and by its suffix */
	expect_error(spec_text, "MMTESTS=\"hb wis-pread\"\n", "g.conf", 1,
		     "MMTESTS names \"wis-pread\", an MMTests benchmark that is not in lockstep's "
		     "library: not in Debian 12's archive: MMTests downloads and builds it "
		     "(will-it-scale) (docs/benchmarks.md");
	expect_error(spec_text, "MMTESTS=\"hb io_uring\"\n", "g.conf", 1,
		     "library: it runs fio's t/io_uring test program, which Debian's fio package "
		     "does not ship (");
	expect_error(spec_text, "MMTESTS=\"hb gmpbuild\"\n", "g.conf", 1,
		     "library: a build of sources MMTests downloads (a compiler benchmark) (");
	/* one lockstep has, whose spec the folder lacks */
	expect_error(spec_text, "MMTESTS=\"hb fsmark\"\n", "g.conf", 1,
		     "MMTESTS names \"fsmark\", an MMTests benchmark whose spec is not in the "
		     "benchmark spec folder (");
	expect_error(spec_text, "MMTESTS=\"hb-alas\"\n", "g.conf", 1,
		     "MMTESTS names \"hb-alas\", which no benchmark answers to: did you mean "
		     "\"hb-alias\"?");
	expect_error(spec_text, "MMTESTS=\"cpu-prob\"\n", "g.conf", 1, "did you mean \"cpu-probe\"?");
	/* a list MMTests sweeps, where a spec takes one value */
	expect_error(SPEC_HEAD "BENCH_ONE_VALUE=HB_LOOPS\nBENCH_COMMAND='hackbench -l ${HB_LOOPS}'\n",
		     "MMTESTS=hb\n\nHB_LOOPS=10,20\n", "g.conf", 3,
		     "HB_LOOPS=\"10,20\" lists several values; hb runs one (MMTests sweeps the list)");
	expect_error(SPEC_HEAD "BENCH_ONE_VALUE=HB_NOPE\nBENCH_COMMAND='hackbench'\n",
		     "MMTESTS=hb\n", "hb.bench", 17,
		     "BENCH_ONE_VALUE names \"HB_NOPE\", which is not in "
		     "BENCH_PARAMS");
	/* a template naming something that is not a parameter */
	expect_error(SPEC_HEAD "BENCH_COMMAND='hackbench -g ${NOPE}'\n", "MMTESTS=hb\n", "hb.bench",
		     17, "uses ${NOPE}, which is neither a parameter");
	/* a parser that does not exist, metrics that do not parse */
	expect_error("BENCH_NAME=x\nBENCH_COMMAND=true\nBENCH_PARSER=nosuch\nBENCH_METRICS=a:s:lower\n",
		     "MMTESTS=x\n", "hb.bench", 3, "BENCH_PARSER=\"nosuch\" is not a parser");
	expect_error("BENCH_NAME=x\nBENCH_COMMAND=true\nBENCH_PARSER=hackbench\n"
		     "BENCH_METRICS=\"time:s:sideways\"\n",
		     "MMTESTS=x\n", "hb.bench", 4,
		     "\"time:s:sideways\" is not name:unit:higher|lower");
	expect_error("BENCH_NAME=x\nBENCH_COMMAND=true\nBENCH_PARSER=hackbench\n"
		     "BENCH_METRICS=\"time:s:lower:maybe\"\n",
		     "MMTESTS=x\n", "hb.bench", 4,
		     "\"time:s:lower:maybe\" is not name:unit:higher|lower[:optional]");
	expect_error("BENCH_NAME=x\nBENCH_PARAMS=UNSET\nBENCH_COMMAND=true\nBENCH_PARSER=hackbench\n"
		     "BENCH_METRICS=time:s:lower\n",
		     "MMTESTS=x\n", "hb.bench", 2, "BENCH_PARAMS names \"UNSET\"");
}
END_TEST

#define WORDS_SPEC                                                                     \
	"BENCH_NAME=w\nBENCH_PARAMS=\"W_OPTS\"\nBENCH_WORDS=\"W_OPTS\"\nW_OPTS=\"\"\n" \
	"BENCH_COMMAND='run [${W_OPTS}]'\nBENCH_PARSER=hackbench\nBENCH_METRICS=time:s:lower\n"

/* BENCH_WORDS: a parameter of blank-separated plain words (MMTests'
 * FIO_CMD_OPTIONS), joined by single spaces; empty is a value. */
START_TEST(test_words_param)
{
	static const struct {
		const char *gconf, *command;
	} ok[] = {
		{ "MMTESTS=w\n", "run []" },
		{ "MMTESTS=w\nW_OPTS=\"./job-1  --ioengine=io_uring\t--fixedbufs \"\n",
		  "run [./job-1 --ioengine=io_uring --fixedbufs]" },
		{ "MMTESTS=w\nW_OPTS=one\n", "run [one]" },
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		put("w.bench", WORDS_SPEC);
		struct node_plan p;
		struct config_diag d = { 0 };
		ck_assert_msg(plan_of(ok[i].gconf, 2, &p, &d) == 0, "%s:%d: %s", d.file, d.line,
			      d.text);
		ck_assert_uint_eq(p.nsteps, 1);
		ck_assert_str_eq(p.steps[0].command, ok[i].command);
		plan_fini(&p);
	}
	unlink(put("w.bench", ""));
}
END_TEST

START_TEST(test_words_param_refused)
{
	/* a word the shell would act on, named with the file and line */
	expect_error(WORDS_SPEC, "MMTESTS=w\n\nW_OPTS=\"./job --x;reboot\"\n", "g.conf", 3,
		     "W_OPTS=\"./job --x;reboot\" cannot go into the command of w: use words");
	expect_error(WORDS_SPEC, "MMTESTS=w\nW_OPTS='./job $HOME'\n", "g.conf", 2,
		     "W_OPTS=\"./job $HOME\" cannot go into the command of w");
	/* BENCH_WORDS names parameters only */
	expect_error("BENCH_NAME=w\nBENCH_PARAMS=\"W_OPTS\"\nW_OPTS=a\nBENCH_WORDS=\"W_NOPE\"\n"
		     "BENCH_COMMAND=true\nBENCH_PARSER=hackbench\nBENCH_METRICS=time:s:lower\n",
		     "MMTESTS=w\n", "hb.bench", 4,
		     "BENCH_WORDS names \"W_NOPE\", which is not in BENCH_PARAMS");
	/* a parameter not in BENCH_WORDS still takes one plain word */
	expect_error(spec_text, "MMTESTS=hb\nHB_LOOPS=\"1 2\"\n", "g.conf", 2,
		     "HB_LOOPS=\"1 2\" cannot go into the command of hb");
}
END_TEST

#define LISTS_SPEC                                                              \
	"BENCH_NAME=ip\nBENCH_PARAMS=\"IP_SIZES IP_RATES IP_MAX\"\n"            \
	"IP_SIZES=1420\nIP_RATES=0\nIP_MAX=2\n"                                 \
	"BENCH_SWEEP_LISTS=\"size:IP_SIZES bitrate:IP_RATES\"\n"                \
	"BENCH_SWEEP=STREAMS\nBENCH_SWEEP_MIN=1\nBENCH_SWEEP_MAX='${IP_MAX}'\n" \
	"BENCH_COMMAND='ip -l ${IP_SIZES} -b ${IP_RATES} -P ${STREAMS}'\n"      \
	"BENCH_PARSER=hackbench\nBENCH_METRICS=time:s:lower\n"

/* BENCH_SWEEP_LISTS: MMTests' lists (iperf3's sizes and bitrates), comma
 * or blank separated, each combination a series, the sweep innermost;
 * iterations count per series. */
START_TEST(test_sweep_lists)
{
	put("ip.bench", LISTS_SPEC);
	struct node_plan p;
	struct config_diag d = { 0 };
	ck_assert_msg(plan_of("MMTESTS=ip\nMMTEST_ITERATIONS=2\nIP_SIZES=\"200,8920\"\n"
			      "IP_RATES=\"0 10m\"\n",
			      2, &p, &d) == 0,
		      "%s:%d: %s", d.file, d.line, d.text);
	static const char *const want[][2] = {
		{ "ip -l 200 -b 0 -P 1", "size=200,bitrate=0,streams=1" },
		{ "ip -l 200 -b 0 -P 2", "size=200,bitrate=0,streams=2" },
		{ "ip -l 200 -b 10m -P 1", "size=200,bitrate=10m,streams=1" },
		{ "ip -l 200 -b 10m -P 2", "size=200,bitrate=10m,streams=2" },
		{ "ip -l 8920 -b 0 -P 1", "size=8920,bitrate=0,streams=1" },
		{ "ip -l 8920 -b 0 -P 2", "size=8920,bitrate=0,streams=2" },
		{ "ip -l 8920 -b 10m -P 1", "size=8920,bitrate=10m,streams=1" },
		{ "ip -l 8920 -b 10m -P 2", "size=8920,bitrate=10m,streams=2" },
	};
	ck_assert_uint_eq(p.nsteps, 16);
	for (uint32_t k = 0; k < p.nsteps; k++) {
		char v[BENCH_VARIANT_MAX];
		ck_assert_str_eq(p.steps[k].command, want[k % 8][0]);
		ck_assert_str_eq(plan_step_variant(&p, k + 1, v, sizeof(v)), want[k % 8][1]);
		ck_assert_uint_eq(p.steps[k].iteration, k / 8 + 1);
	}
	ck_assert(plan_same_series(&p, 2, 10));
	ck_assert(!plan_same_series(&p, 2, 3));
	plan_fini(&p);

	/* one value each: one series per point, named all the same */
	ck_assert_int_eq(plan_of("MMTESTS=ip\nIP_MAX=1\n", 2, &p, &d), 0);
	ck_assert_uint_eq(p.nsteps, 1);
	char v[BENCH_VARIANT_MAX];
	ck_assert_str_eq(plan_step_variant(&p, 1, v, sizeof(v)), "size=1420,bitrate=0,streams=1");
	plan_fini(&p);
	unlink(put("ip.bench", ""));

	/* a value the shell would act on, an empty list, a bad declaration */
	expect_error(LISTS_SPEC, "MMTESTS=ip\n\nIP_SIZES=\"200,1;reboot\"\n", "g.conf", 3,
		     "IP_SIZES=\"200,1;reboot\" is not a list of at most 64 values");
	expect_error(LISTS_SPEC, "MMTESTS=ip\nIP_RATES=\" , \"\n", "g.conf", 2,
		     "IP_RATES=\" , \" is not a list");
	/* a series name past its limit: refused, not cut */
	char g[256];
	snprintf(g, sizeof(g), "MMTESTS=ip\nIP_SIZES=%0*d\n", 80, 7);
	expect_error(LISTS_SPEC, g, "g.conf", 2, "ip: the series name \"size=000");
	expect_error("BENCH_NAME=ip\nBENCH_PARAMS=A\nA=1\nBENCH_SWEEP_LISTS=\"a:B\"\n"
		     "BENCH_COMMAND=true\nBENCH_PARSER=hackbench\nBENCH_METRICS=time:s:lower\n",
		     "MMTESTS=ip\n", "hb.bench", 4,
		     "BENCH_SWEEP_LISTS names \"B\", which is not in BENCH_PARAMS");
	expect_error("BENCH_NAME=ip\nBENCH_PARAMS=A\nA=1\nBENCH_SWEEP_LISTS=\"Size:A\"\n"
		     "BENCH_COMMAND=true\nBENCH_PARSER=hackbench\nBENCH_METRICS=time:s:lower\n",
		     "MMTESTS=ip\n", "hb.bench", 4,
		     "BENCH_SWEEP_LISTS: \"Size:A\" is not label:PARAMETER");
}
END_TEST

/* A step's command is at most PROTO_COMMAND_MAX - 1 bytes, from a COMMAND_
 * or from a spec, and is kept whole. */
START_TEST(test_command_limit)
{
	const size_t max = PROTO_COMMAND_MAX - 1;
	char *cmd = malloc(max + 2), *gconf = malloc(max + 64), *spec = malloc(max + 1024);
	struct node_plan p;
	struct config_diag d = { 0 };

	ck_assert_ptr_nonnull(cmd);
	ck_assert_ptr_nonnull(gconf);
	ck_assert_ptr_nonnull(spec);
	memset(cmd, 'a', max);
	cmd[max] = '\0';
	snprintf(gconf, max + 64, "MMTESTS=cp\nCOMMAND_CP=\"%s\"\n", cmd);
	ck_assert_msg(plan_of(gconf, 2, &p, &d) == 0, "%s", d.text);
	ck_assert_uint_eq(strlen(p.steps[0].command), max);
	plan_fini(&p);
	strcat(cmd, "a");
	snprintf(gconf, max + 64, "MMTESTS=cp\nCOMMAND_CP=\"%s\"\n", cmd);
	ck_assert_int_lt(plan_of(gconf, 2, &p, &d), 0);
	ck_assert_msg(strstr(d.text, "COMMAND_CP is 4096 bytes long; the limit is 4095"), "%s", d.text);

	/* sweep points 8 and 16: the first command fits exactly, the second
	 * is one byte over, and the steps made for the first are freed */
	cmd[max - 1] = '\0';
	snprintf(spec, max + 1024, SPEC_HEAD "BENCH_COMMAND='%.*s${GROUPS}'\n", (int)(max - 1), cmd);
	put("hb.bench", spec);
	ck_assert_msg(plan_of("MMTESTS=hb\nHB_MIN=8\nHB_MAX=8\n", 2, &p, &d) == 0, "%s", d.text);
	ck_assert_uint_eq(strlen(p.steps[0].command), max);
	plan_fini(&p);
	ck_assert_int_lt(plan_of("MMTESTS=hb\nHB_MIN=8\nHB_MAX=16\n", 2, &p, &d), 0);
	ck_assert_msg(strstr(d.text, "the command of hb is 4096 bytes; at most 4095"), "%s", d.text);
	free(cmd);
	free(gconf);
	free(spec);
}
END_TEST

START_TEST(test_two_specs_one_name)
{
	put("hb.bench", spec_text);
	put("other.bench", "BENCH_NAME=other\nBENCH_ALIASES=hb-alias\nBENCH_COMMAND=true\n"
			   "BENCH_PARSER=hackbench\nBENCH_METRICS=time:s:lower\n");
	struct node_plan p;
	struct config_diag d = { 0 };
	ck_assert_int_lt(plan_of("MMTESTS=hb\n", 2, &p, &d), 0);
	ck_assert_msg(strstr(d.text, "\"hb-alias\" is taken by") != NULL, "%s", d.text);
}
END_TEST

/* Runs a step's command with /bin/sh in dir, as the agent does; its exit
 * status, and what it printed in *out (static). */
static int run_step(const char *command, const char **out)
{
	static char buf[8192];
	char sh[400];
	/* the command reaches the shell through the environment, unquoted */
	setenv("LOCKSTEP_TEST_STEP", command, 1);
	snprintf(sh, sizeof(sh), "cd '%s' && /bin/sh -c \"$LOCKSTEP_TEST_STEP\" 2>&1", dir);
	FILE *f = popen(sh, "r");
	ck_assert_ptr_nonnull(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	int st = pclose(f);
	*out = buf;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A spec with a server: started before the command on a port the step
 * picks, waited for until it says it is ready, stopped after; the step has
 * the command's status.  A server that dies first fails the step with its
 * output. */
START_TEST(test_server_started_and_stopped)
{
	put("srv.bench",
	    "BENCH_NAME=srv\nBENCH_BINARIES=sh\nBENCH_PARAMS=\"SRV_WORD SRV_RC\"\n"
	    "SRV_WORD=serving\nSRV_RC=0\n"
	    "BENCH_SERVER='sh -c \"echo \\$\\$ >srv.pid; sleep 1; echo ${SRV_WORD} on $LOCKSTEP_PORT; "
	    "exec sleep 600\"'\n"
	    "BENCH_SERVER_READY='serving on'\n"
	    "BENCH_COMMAND='echo Time: 1.5 port $LOCKSTEP_PORT; exit ${SRV_RC}'\n"
	    "BENCH_PARSER=hackbench\nBENCH_METRICS=time:s:lower\n");
	struct node_plan p;
	struct config_diag d = { 0 };
	const char *out;
	ck_assert_msg(plan_of("MMTESTS=srv\n", 2, &p, &d) == 0, "%s:%d: %s", d.file, d.line, d.text);
	ck_assert_int_eq(run_step(p.steps[0].command, &out), 0);
	unsigned port;
	ck_assert_msg(sscanf(out, "Time: 1.5 port %u", &port) == 1, "output: %s", out);
	/* below the ephemeral range, where no client socket can hold it */
	unsigned lo = 0, hi = 0;
	FILE *range = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
	ck_assert_ptr_nonnull(range);
	ck_assert_int_eq(fscanf(range, "%u %u", &lo, &hi), 2);
	fclose(range);
	if (lo > 13024) {
		ck_assert_uint_ge(port, lo - 12000);
		ck_assert_uint_lt(port, lo);
	}
	/* the server is gone, and so is its log */
	char path[600], pidtext[32] = "";
	snprintf(path, sizeof(path), "%s/srv.pid", dir);
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(pidtext, sizeof(pidtext), f));
	fclose(f);
	ck_assert_int_eq(kill(atoi(pidtext), 0), -1);
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "ls '%s' | grep -q lockstep-server", dir);
	ck_assert_int_ne(system(cmd), 0);
	plan_fini(&p);

	/* the command's status is the step's, and its failure is followed by
	 * what the server printed */
	ck_assert_int_eq(plan_of("MMTESTS=srv\nSRV_RC=3\n", 2, &p, &d), 0);
	ck_assert_int_eq(run_step(p.steps[0].command, &out), 3);
	ck_assert_msg(strstr(out, "lockstep: the command failed (status 3); the server's output:\n"
				  "serving on "),
		      "output: %s", out);
	plan_fini(&p);

	/* a server that cannot have its first port (it exits, as one that
	 * finds the port taken): another port is tried */
	put("srv.bench", "BENCH_NAME=srv\nBENCH_BINARIES=sh\n"
			 "BENCH_SERVER='sh -c \"if [ -e tried ]; then echo serving on; exec sleep 600; fi; "
			 "echo $LOCKSTEP_PORT >tried; echo Address already in use\"'\n"
			 "BENCH_SERVER_READY='serving on'\n"
			 "BENCH_COMMAND='echo Time: 1 first $(cat tried) then $LOCKSTEP_PORT'\n"
			 "BENCH_PARSER=hackbench\nBENCH_METRICS=time:s:lower\n");
	ck_assert_int_eq(plan_of("MMTESTS=srv\n", 2, &p, &d), 0);
	ck_assert_int_eq(run_step(p.steps[0].command, &out), 0);
	unsigned first, then;
	ck_assert_msg(sscanf(out, "Time: 1 first %u then %u", &first, &then) == 2, "output: %s", out);
	ck_assert_uint_ne(first, then);
	plan_fini(&p);
	snprintf(path, sizeof(path), "%s/tried", dir);
	unlink(path);

	/* a server that dies under the command: said so, with its last words */
	put("srv.bench",
	    "BENCH_NAME=srv\nBENCH_BINARIES=sh\n"
	    "BENCH_SERVER='sh -c \"echo \\$\\$ >srv.pid; echo serving on; exec sleep 600\"'\n"
	    "BENCH_SERVER_READY='serving on'\n"
	    "BENCH_COMMAND='kill $(cat srv.pid); sleep 0.2; echo all clients disconnected; "
	    "exit 1'\nBENCH_PARSER=hackbench\nBENCH_METRICS=time:s:lower\n");
	ck_assert_int_eq(plan_of("MMTESTS=srv\n", 2, &p, &d), 0);
	ck_assert_int_eq(run_step(p.steps[0].command, &out), 1);
	ck_assert_msg(strstr(out, "all clients disconnected\nlockstep: the server exited during the "
				  "command; its output:\nserving on"),
		      "output: %s", out);
	plan_fini(&p);

	/* a server that exits before it is ready */
	put("srv.bench",
	    "BENCH_NAME=srv\nBENCH_BINARIES=sh\n"
	    "BENCH_SERVER='sh -c \"echo cannot bind; exit 1\"'\nBENCH_SERVER_READY='serving on'\n"
	    "BENCH_COMMAND='echo Time: 1'\nBENCH_PARSER=hackbench\nBENCH_METRICS=time:s:lower\n");
	ck_assert_int_eq(plan_of("MMTESTS=srv\n", 2, &p, &d), 0);
	ck_assert_int_eq(run_step(p.steps[0].command, &out), 125);
	ck_assert_msg(strstr(out, "lockstep: the server exited before it was ready:\ncannot bind") &&
			      !strstr(out, "Time:"),
		      "output: %s", out);
	plan_fini(&p);

	/* a server needs something to wait for, and the waits need a server */
	expect_error("BENCH_NAME=x\nBENCH_SERVER=true\nBENCH_COMMAND=true\nBENCH_PARSER=hackbench\n"
		     "BENCH_METRICS=time:s:lower\n",
		     "MMTESTS=x\n", "hb.bench", 2,
		     "BENCH_SERVER needs BENCH_SERVER_PORT (the port it listens on, or \"pick\") or "
		     "BENCH_SERVER_READY");
	expect_error("BENCH_NAME=x\nBENCH_SERVER_PORT=pick\nBENCH_COMMAND=true\n"
		     "BENCH_PARSER=hackbench\nBENCH_METRICS=time:s:lower\n",
		     "MMTESTS=x\n", "hb.bench", 2, "BENCH_SERVER_PORT without BENCH_SERVER");
	expect_error("BENCH_NAME=x\nBENCH_SERVER=true\nBENCH_SERVER_PORT=70000\nBENCH_COMMAND=true\n"
		     "BENCH_PARSER=hackbench\nBENCH_METRICS=time:s:lower\n",
		     "MMTESTS=x\n", "hb.bench", 3,
		     "BENCH_SERVER_PORT=\"70000\" is neither \"pick\" nor a port 1 to 65535");
	expect_error("BENCH_NAME=x\nBENCH_SERVER=true\nBENCH_SERVER_READY=\"it's up\"\n"
		     "BENCH_COMMAND=true\nBENCH_PARSER=hackbench\nBENCH_METRICS=time:s:lower\n",
		     "MMTESTS=x\n", "hb.bench", 3, "without quotes or backslashes");
}
END_TEST

/* The specs we ship load, expand with their defaults for 1 and 64 CPUs, and
 * name a parser whose metrics they declare. */
START_TEST(test_shipped_specs_load)
{
	char specs[512];
	snprintf(specs, sizeof(specs), "%s/benchmarks", getenv("LOCKSTEP_SOURCE_ROOT"));
	for (int cpus = 1; cpus <= 64; cpus *= 64) {
		struct sysfacts f = facts(cpus);
		struct bench_spec **v;
		size_t n;
		struct config_diag d = { 0 };
		ck_assert_msg(bench_specs_load_dir(specs, &f, &v, &n, &d) == 0, "%s:%d: %s", d.file,
			      d.line, d.text);
		ck_assert_uint_ge(n, 13);
		struct config *g = config_new();
		for (size_t i = 0; i < n; i++) {
			struct proto_step *steps;
			struct bench_step *info;
			size_t k;
			ck_assert_msg(bench_spec_expand(v[i], g, &steps, &info, &k, &d) == 0,
				      "%s: %s", v[i]->name, d.text);
			ck_assert_uint_ge(k, 1);
			ck_assert_uint_ge(v[i]->nmetrics, 1);
			/* fio's job files may only read or only write (MMTests'):
			 * its metrics may be absent, and bonnie++'s too (+++++:
			 * too quick to time); perf bench numa has no convergence
			 * when a run did not converge; no other */
			for (size_t m = 0; m < v[i]->nmetrics; m++)
				ck_assert_msg(v[i]->metrics[m].optional ==
						      (!strcmp(v[i]->name, "fio") ||
						       !strcmp(v[i]->name, "bonniepp") ||
						       (!strcmp(v[i]->name, "perfnuma") &&
							!strcmp(v[i]->metrics[m].name, "convergence"))),
					      "%s: %s", v[i]->name, v[i]->metrics[m].name);
			/* nap, monitor and trunc run only the shell's cat,
			 * sleep, dd and rm, timed by /proc/uptime */
			if (strncmp(v[i]->parser, "uptime", 6) != 0)
				ck_assert_uint_ge(v[i]->nbinaries, 1);
			ck_assert_ptr_nonnull(steps[0].command);
			ck_assert_uint_lt(strlen(steps[0].command), PROTO_COMMAND_MAX);
			proto_steps_free(steps, k);
			free(info);
		}
		config_free(g);
		bench_specs_free(v, n);
	}
}
END_TEST

/* MMTests' names and the shipped specs agree: a name said to be lockstep's
 * (no why) has a spec, and one with a why has none, so that the one line
 * refusing a name never tells a user lockstep lacks what it has. */
START_TEST(test_mmtests_names_match_specs)
{
	char specs[512];
	snprintf(specs, sizeof(specs), "%s/benchmarks", getenv("LOCKSTEP_SOURCE_ROOT"));
	struct sysfacts f = facts(2);
	struct bench_spec **v;
	size_t n;
	struct config_diag d = { 0 };
	ck_assert_msg(bench_specs_load_dir(specs, &f, &v, &n, &d) == 0, "%s:%d: %s", d.file, d.line,
		      d.text);
	for (size_t i = 0; mmtests_benchmarks[i].name; i++) {
		const struct mmtests_benchmark *b = &mmtests_benchmarks[i];
		size_t k = strlen(b->name);
		bool has = false;
		for (size_t j = 0; j < n && !has; j++)
			for (size_t a = 0; a <= v[j]->naliases && !has; a++) {
				const char *name = a == 0 ? v[j]->name : v[j]->aliases[a - 1];
				has = b->name[k - 1] == '*' ? !strncmp(name, b->name, k - 1)
				      : b->name[0] == '*'
					      ? strlen(name) >= k - 1 &&
							!strcmp(name + strlen(name) - (k - 1),
								b->name + 1)
					      : !strcmp(name, b->name);
			}
		ck_assert_msg(has == (b->why == NULL), "MMTests' %s: %s", b->name,
			      b->why ? "has a spec, but mmtests_names.c says why it has none"
				     : "no spec answers to it, but mmtests_names.c gives no why");
		ck_assert_msg(b->why == NULL || mmtests_benchmark_why(b->name) == b->why, "%s",
			      b->name);
	}
	bench_specs_free(v, n);
}
END_TEST

/* A TCP socket listening on 127.0.0.1:port (0: any free port); *port is
 * set to its port. */
static int listen_on(unsigned *port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)*port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(fd, 1), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

/* A server that prints nothing (tbench_srv): ready when its port listens
 * in /proc/net/tcp.  The command connects, which only a listening port
 * allows; a fixed port already taken fails the step before the server
 * starts, so that another's socket is not taken for this server's. */
START_TEST(test_server_ready_by_port)
{
	put("srv.py", "import socket, sys, time\n"
		      "time.sleep(0.5)\n"
		      "s = socket.socket()\n"
		      "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
		      "s.bind(('127.0.0.1', int(sys.argv[1])))\n"
		      "s.listen()\n"
		      "time.sleep(600)\n");
	put("cli.py", "import socket, sys\n"
		      "socket.create_connection(('127.0.0.1', int(sys.argv[1]))).close()\n"
		      "print('Time: 1')\n");
	static const char spec[] =
		"BENCH_NAME=srv\nBENCH_BINARIES=python3\nBENCH_SERVER='python3 srv.py $LOCKSTEP_PORT'\n"
		"BENCH_SERVER_PORT=%s\nBENCH_COMMAND='python3 cli.py $LOCKSTEP_PORT'\n"
		"BENCH_PARSER=hackbench\nBENCH_METRICS=time:s:lower\n";
	char text[512], fixed[16];
	struct node_plan p;
	struct config_diag d = { 0 };
	const char *out;

	snprintf(text, sizeof(text), spec, "pick");
	put("srv.bench", text);
	ck_assert_msg(plan_of("MMTESTS=srv\n", 2, &p, &d) == 0, "%s:%d: %s", d.file, d.line, d.text);
	ck_assert_msg(run_step(p.steps[0].command, &out) == 0, "output: %s", out);
	ck_assert_str_eq(out, "Time: 1\n");
	plan_fini(&p);

	/* a fixed port: taken, then free */
	unsigned port = 0;
	int fd = listen_on(&port);
	snprintf(fixed, sizeof(fixed), "%u", port);
	snprintf(text, sizeof(text), spec, fixed);
	put("srv.bench", text);
	ck_assert_msg(plan_of("MMTESTS=srv\n", 2, &p, &d) == 0, "%s:%d: %s", d.file, d.line, d.text);
	ck_assert_int_eq(run_step(p.steps[0].command, &out), 125);
	char want[160];
	snprintf(want, sizeof(want), "lockstep: port %u already listens on this node", port);
	ck_assert_msg(strstr(out, want) && !strstr(out, "Time:"), "output: %s", out);
	close(fd);
	ck_assert_msg(run_step(p.steps[0].command, &out) == 0, "output: %s", out);
	ck_assert_str_eq(out, "Time: 1\n");
	plan_fini(&p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bench-spec");
	TCase *tc = tcase_create("spec");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_sweep_uses_node_facts_and_user_values);
	tcase_add_test(tc, test_alias_iterations_and_command_override);
	tcase_add_test(tc, test_errors_name_place_and_value);
	tcase_add_test(tc, test_command_limit);
	tcase_add_test(tc, test_words_param);
	tcase_add_test(tc, test_words_param_refused);
	tcase_add_test(tc, test_sweep_lists);
	tcase_add_test(tc, test_two_specs_one_name);
	tcase_add_test(tc, test_shipped_specs_load);
	tcase_add_test(tc, test_mmtests_names_match_specs);
	tcase_add_test(tc, test_server_started_and_stopped);
	tcase_add_test(tc, test_server_ready_by_port);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
