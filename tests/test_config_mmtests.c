// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * MMTests' idioms, read as lockstep reads a g.conf: a corpus of configs
 * written for these tests (tests/data/mmtests-corpus/configs/config-*, one
 * per idiom, none copied from MMTests), each built into a plan with fixed
 * facts and the real specs of benchmarks/, and checked against its
 * config-*.expect:
 *
 *   step BENCHMARK VARIANT ITERATION   the plan's steps, in order, all of them
 *   value NAME PATTERN                 the value of NAME matches (fnmatch)
 *   shipped NAME-PATTERN TEXT-PATTERN  a file shipped with the steps
 *   warning PATTERN                    a warning matches
 *   error PATTERN                      the config is refused with this message
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config_testlib.h"
#include "fileio.h"
#include "plan.h"
#include "testlib.h"

static char corpus[512], specs[512];

/* 8 CPUs, 2 nodes of 4 and 12 GiB, 2 MiB huge pages. */
static struct sysfacts facts(void)
{
	struct sysfacts f = { .num_logical_cpus = 8,
			      .num_nodes = 2,
			      .num_llcs = 2,
			      .memtotal_bytes = 16ull << 30,
			      .huge_pagesize = 2 << 20 };
	f.node_mem_bytes[0] = 4ull << 30;
	f.node_mem_bytes[1] = 12ull << 30;
	return f;
}

/* "a\tb" style escapes are not needed: patterns are fnmatch's, where '?'
 * stands for a newline. */
static void check_line(const char *name, const struct node_plan *p, const char *line, uint32_t *step)
{
	const char *rest = strchr(line, ' ');
	char label[256], variant[64];

	ck_assert_msg(rest, "%s.expect: bad line \"%s\"", name, line);
	rest++;
	if (!strncmp(line, "step ", 5)) {
		ck_assert_msg(*step < p->nsteps, "%s: fewer steps than expected (%u)", name, p->nsteps);
		plan_step_variant(p, *step + 1, variant, sizeof(variant));
		snprintf(label, sizeof(label), "%s %s %u", p->steps[*step].benchmark, variant,
			 p->steps[*step].iteration);
		ck_assert_msg(!strcmp(label, rest), "%s: step %u is \"%s\", expected \"%s\"", name,
			      *step + 1, label, rest);
		++*step;
	} else if (!strncmp(line, "value ", 6)) {
		const char *sp = strchr(rest, ' ');
		char key[128];

		ck_assert_ptr_nonnull(sp);
		snprintf(key, sizeof(key), "%.*s", (int)(sp - rest), rest);
		const char *v = config_get(p->gconf, key);
		ck_assert_msg(v, "%s: %s is not set", name, key);
		ck_assert_msg(fnmatch(sp + 1, v, 0) == 0, "%s: %s is \"%s\", expected \"%s\"", name,
			      key, v, sp + 1);
	} else if (!strncmp(line, "shipped ", 8)) {
		const char *sp = strchr(rest, ' ');
		const struct config_shipped *f;
		size_t n = config_shipped(p->gconf, &f);
		char pat[128];
		bool found = false;

		ck_assert_ptr_nonnull(sp);
		snprintf(pat, sizeof(pat), "%.*s", (int)(sp - rest), rest);
		for (size_t i = 0; i < n && !found; i++)
			found = fnmatch(pat, f[i].name, 0) == 0 && fnmatch(sp + 1, f[i].text, 0) == 0;
		ck_assert_msg(found, "%s: no shipped file %s with text \"%s\" (%zu shipped%s%s)",
			      name, pat, sp + 1, n, n ? ", the first: " : "", n ? f[0].text : "");
	} else if (!strncmp(line, "warning ", 8)) {
		const struct config_diag *d;
		size_t n = config_warnings(p->gconf, &d);
		bool found = false;
		char text[1024];

		for (size_t i = 0; i < n && !found; i++) {
			config_diag_format(&d[i], text, sizeof(text));
			found = fnmatch(rest, text, 0) == 0;
		}
		ck_assert_msg(found, "%s: no warning \"%s\" among %zu (the last: %s)", name, rest,
			      n, n ? text : "");
	} else {
		ck_abort_msg("%s.expect: unknown line \"%s\"", name, line);
	}
}

static void check_config(const char *name)
{
	char path[1024], *expect = NULL, *save = NULL, msg[1024];
	struct sysfacts f = facts();
	struct node_plan p;
	struct config_diag d = { 0 };
	uint32_t step = 0;
	size_t len;

	snprintf(path, sizeof(path), "%s/%s.expect", corpus, name);
	ck_assert_msg(fileio_read_all(path, 1 << 16, &expect, &len) == 0, "%s is missing", path);
	snprintf(path, sizeof(path), "%s/%s", corpus, name);
	int r = plan_build(path, &f, specs, &p, &d);
	config_diag_format(&d, msg, sizeof(msg));
	if (!strncmp(expect, "error ", 6)) {
		expect[strcspn(expect, "\n")] = '\0';
		ck_assert_msg(r < 0, "%s: read, expected the error \"%s\"", name, expect + 6);
		ck_assert_msg(fnmatch(expect + 6, msg, 0) == 0, "%s: error \"%s\", expected \"%s\"",
			      name, msg, expect + 6);
		free(expect);
		return;
	}
	ck_assert_msg(r == 0, "%s: %s", name, msg);
	for (char *line = strtok_r(expect, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		check_line(name, &p, line, &step);
	ck_assert_msg(step == p.nsteps, "%s: %u steps, expected %u", name, p.nsteps, step);
	plan_fini(&p);
	free(expect);
}

START_TEST(test_corpus)
{
	struct dirent **names;
	int n = scandir(corpus, &names, NULL, alphasort), checked = 0;

	ck_assert_int_gt(n, 0);
	for (int i = 0; i < n; i++) {
		const char *e = names[i]->d_name;

		if (!strncmp(e, "config-", 7) && !strstr(e, ".expect")) {
			check_config(e);
			checked++;
		}
		free(names[i]);
	}
	free(names);
	ck_assert_int_ge(checked, 17);
}
END_TEST

/* hostd --set: a value given on the command line wins over the file's. */
START_TEST(test_set_overrides)
{
	char path[1024];
	struct sysfacts f = facts();
	struct node_plan p;
	struct config_diag d = { 0 };
	const char *sets[] = { "HACKBENCH_MAX_GROUPS=2", "MMTEST_ITERATIONS=2", NULL };
	const char *file = NULL;

	snprintf(path, sizeof(path), "%s/config-sizes", corpus);
	ck_assert_int_eq(plan_build_set(path, &f, specs, sets, &p, &d), 0);
	ck_assert_uint_eq(p.iterations, 2);
	ck_assert_uint_eq(p.nsteps, 2); /* groups=2, twice */
	ck_assert(config_where(p.gconf, "HACKBENCH_MAX_GROUPS", &file, NULL));
	ck_assert_str_eq(file, "--set");
	plan_fini(&p);
	const char *bad[] = { "1X=2", NULL };
	ck_assert_int_eq(plan_build_set(path, &f, specs, bad, &p, &d), -EINVAL);
	char msg[512];
	config_diag_format(&d, msg, sizeof(msg));
	ck_assert_str_eq(msg, "--set: expected NAME=VALUE, found \"1X=2\": a name is letters, "
			      "digits and '_', not starting with a digit");
}
END_TEST

/* The side-effect-free forms are answered from facts, never run; every
 * other substitution stays an error naming it. */
/* A fake root for the config to read below (dir, a mkdtemp template):
 * proc/sys/vm/ and the file rel holding text; path is the file's. */
static void fake_root(char *dir, const char *rel, const char *text, char *path, size_t size)
{
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, size, "%s/proc/sys/vm", dir);
	ck_assert_int_eq(fileio_mkdir_p(path, 0755), 0);
	snprintf(path, size, "%s/%s", dir, rel);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
	config_set_root(cfg, dir);
}

START_TEST(test_other_substitutions)
{
	static const char *const refused[][2] = {
		{ "A=`uname -m -r`\n", "t.conf:1:3: expected a value, found the command "
				       "substitution of 'uname -m -r': " KNOWN },
		{ "A=`uname -m\n", "t.conf:1:3: expected a closing '`' for the command "
				   "substitution opened here" },
		{ "A=$(uname -m`\n", "t.conf:1:3: expected a closing ')' for the command "
				     "substitution opened here" },
		{ "A=`unamex -m`\n", "t.conf:1:3: expected a value, found the command substitution "
				     "of 'unamex -m': " KNOWN },
		{ "A=\"$(hostname)\"\n", "t.conf:1:4: expected a value, found the command "
					 "substitution of 'hostname': " KNOWN },
		{ "if [[ `hostname` == x ]]; then A=1; fi\n",
		  "t.conf:1:7: expected a value, found "
		  "the command substitution of 'hostname': " KNOWN },
		{ "A=`cat /etc/passwd`\n", "t.conf:1:3: expected a value, found the command "
					   "substitution of 'cat /etc/passwd': " KNOWN },
		{ "A=`cat /proc/sys/../../etc/passwd`\n",
		  "t.conf:1:3: expected a value, found the "
		  "command substitution of 'cat /proc/sys/../../etc/passwd': " KNOWN },
		{ "A=`cat /proc/sys/vm/absent`\n",
		  "t.conf:1:3: expected a file that can be read "
		  "after cat, found /proc/sys/vm/absent: No such file or directory" },
	};
	char dir[] = "/tmp/lockstep-cfg-XXXXXX", path[128];

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		load_err(refused[i][0], refused[i][1]);
	/* answered from facts and from a fake /proc/sys */
	fake_root(dir, "proc/sys/vm/dirty_ratio", "20\n", path, sizeof(path));
	config_set_fact(cfg, "KERNEL_RELEASE", "6.1.0-test");
	config_set_fact(cfg, "WHOAMI", "lab");
	config_set_fact(cfg, "UID", "1000");
	config_set_fact(cfg, "PAGESIZE", "4096");
	load_ok("A=`uname -r`\nB=$(whoami)\nC=`id -u`\nD=$(nproc)\nE=`getconf PAGESIZE`\n"
		"F=`cat /proc/sys/vm/dirty_ratio`\nG=\"$(uname -s)\"\n");
	value_is("A", "6.1.0-test");
	value_is("B", "lab");
	value_is("C", "1000");
	value_is("D", "8");
	value_is("E", "4096");
	value_is("F", "20");
	value_is("G", "Linux");
	ck_assert_uint_eq(nwarnings(), 0);
	/* a libvirt guest's: from its facts where they say it (no file of
	 * this machine is read: the fake tree has none of these), else this
	 * machine's with a warning naming the line */
	config_set_node_elsewhere(cfg, true);
	config_set_fact(cfg, "NUM_NODES", "1");
	config_set_fact(cfg, "HUGE_PAGESIZE", "2097152");
	load_ok("J=`cat /sys/devices/system/cpu/online`\nK=$(cat /sys/devices/system/node/online)\n"
		"L=`cat /sys/kernel/mm/transparent_hugepage/hpage_pmd_size`\n"
		"M=`cat /proc/sys/vm/dirty_ratio`\n");
	value_is("J", "0-7");
	value_is("K", "0");
	value_is("L", "2097152");
	value_is("M", "20");
	ck_assert_uint_eq(nwarnings(), 1);
	ck_assert_str_eq(warning(0),
			 "t.conf:4:3: cat /proc/sys/vm/dirty_ratio answered \"20\" "
			 "from hostd's machine: this node is a libvirt guest, whose own file is not "
			 "known before it runs (set the value in the config if it matters)");
	config_set_node_elsewhere(cfg, false);
	load_err("J=`cat /sys/devices/system/cpu/online`\n",
		 "t.conf:1:3: expected a file that can "
		 "be read after cat, found /sys/devices/system/cpu/online: No such file or "
		 "directory");
	/* a branch not taken reads no file */
	load_ok("if [ 1 = 2 ]; then H=`cat /proc/sys/vm/nothing`; fi\n");
	/* nor one that not everybody may read: hostd reads configs as root */
	ck_assert_int_eq(chmod(path, 0600), 0);
	load_err("I=`cat /proc/sys/vm/dirty_ratio`\n",
		 "t.conf:1:3: expected a file that can be "
		 "read after cat, found /proc/sys/vm/dirty_ratio: not readable by everybody (hostd "
		 "reads configs as root)");
}
END_TEST

/* limit_memory and echo > THP's files: what they mean, and every wrong
 * use refused at its line and column. */
START_TEST(test_limit_memory_and_thp_echo)
{
	static const char *const refused[][2] = {
		{ "A=1\nlimit_memory\n", "t.conf:2:13: expected one number of bytes after "
					 "limit_memory, found 0 words" },
		{ "limit_memory 1 2\n", "t.conf:1:16: expected one number of bytes after "
					"limit_memory, found 2 words" },
		{ "limit_memory lots\n", "t.conf:1:14: expected a number of bytes above 0 after "
					 "limit_memory, found \"lots\"" },
		{ "limit_memory $((8-8))\n", "t.conf:1:14: expected a number of bytes above 0 "
					     "after limit_memory, found \"0\"" },
		{ "echo sometimes > /sys/kernel/mm/transparent_hugepage/enabled\n",
		  "t.conf:1:6: "
		  "expected one of always madvise never to write to "
		  "/sys/kernel/mm/transparent_hugepage/enabled, found \"sometimes\"" },
		{ "echo defer madvise > /sys/kernel/mm/transparent_hugepage/defrag\n",
		  "t.conf:1:1: "
		  "expected one value to write to /sys/kernel/mm/transparent_hugepage/defrag, found "
		  "2 words" },
		{ "  echo never > /sys/kernel/mm/transparent_hugepage/enabled > x\n",
		  "t.conf:1:60: "
		  "expected one '>' after echo, found another" },
		{ "echo 3 >/proc/sys/vm/drop_caches\n",
		  "t.conf:1:9: expected echo VALUE > "
		  "/sys/kernel/mm/transparent_hugepage/enabled or .../defrag, found a write to "
		  "\"/proc/sys/vm/drop_caches\": writing a file would change the node; lockstep "
		  "sets only CPUFREQ_* and TRANSPARENT_HUGEPAGES*" },
	};

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		load_err(refused[i][0], refused[i][1]);
	/* MEMTOTAL_BYTES of the facts is 25144741888 */
	load_ok("A=$MEMTOTAL_BYTES\nlimit_memory $((1024*1024*1024))\nB=$MEMTOTAL_BYTES\n"
		"echo defer+madvise >> /sys/kernel/mm/transparent_hugepage/defrag\n"
		"if [ 1 = 2 ]; then limit_memory x; echo x > /etc/passwd; fi\n"
		"echo madvise > /sys/kernel/mm/transparent_hugepage/enabled; C=1\n");
	value_is("A", "25144741888");
	value_is("B", "1073741824");
	value_is("TRANSPARENT_HUGEPAGES_DEFRAG", "defer+madvise");
	value_is("TRANSPARENT_HUGEPAGES", "madvise");
	value_is("C", "1");
	ck_assert_uint_eq(nwarnings(), 1);
	ck_assert_str_eq(warning(0),
			 "t.conf:2:1: limit_memory 1073741824: MEMTOTAL_BYTES is "
			 "1073741824 for the rest of the config; lockstep offlines no memory, so "
			 "the node keeps all of its own: give the guest that much in its template "
			 "for the benchmark to see only that");
	/* a MEMTOTAL_BYTES the config set is the one limited */
	load_ok("MEMTOTAL_BYTES=4096\nlimit_memory 1024\n");
	value_is("MEMTOTAL_BYTES", "1024");
}
END_TEST

/* $(echo ... | sed s/A/B/): sed's s command on the words, and every
 * other pipeline or script refused at its line and column. */
START_TEST(test_echo_sed)
{
#define SED_WANT "expected sed 's/PATTERN/REPLACEMENT/' with a plain pattern, found "
	static const char *const refused[][2] = {
		{ "A=1\nB=$(echo a | sed \"s/a*/b/\")\n",
		  "t.conf:2:18: " SED_WANT "'*' at "
		  "character 4 of 's/a*/b/': a regular expression; lockstep's sed reads plain text, "
		  "'.', '^' and '$' (a backslash before the character means the character)" },
		{ "B=$(echo a | sed 's/\\(a\\)/b/')\n",
		  "t.conf:1:18: " SED_WANT "'(' at character "
		  "4 of 's/\\(a\\)/b/': a regular expression; lockstep's sed reads plain text, '.', "
		  "'^' and '$'" },
		{ "B=$(echo a | sed s/a/\\\\1/)\n",
		  "t.conf:1:18: " SED_WANT "'1' at character 6 of "
		  "'s/a/\\1/': a back-reference; the pattern has no groups" },
		{ "B=$(echo a | sed s/a/b/x)\n", "t.conf:1:18: " SED_WANT "'x' at character 7 of "
						 "'s/a/b/x': after s/// only the flag g is read" },
		{ "B=$(echo a | sed s/a/b)\n",
		  "t.conf:1:18: " SED_WANT "the end at character 6 of "
		  "'s/a/b': the replacement's closing delimiter is missing" },
		{ "B=$(echo a | sed s//b/)\n",
		  "t.conf:1:18: " SED_WANT "'/' at character 3 of "
		  "'s//b/': an empty pattern (sed's \"the last one\") means nothing here" },
		{ "B=$(echo a | sed y/a/b/)\n", "t.conf:1:18: " SED_WANT "'y' at character 1 of "
						"'y/a/b/': sed's s command is the one lockstep reads" },
		{ "B=$(echo a | grep x)\n", "t.conf:1:14: expected sed after 'echo ... |': lockstep "
					    "answers no other pipeline" },
		{ "B=$(echo a | sed s/a/b/ | sed s/b/c/)\n", "t.conf:1:25: expected echo ... | sed "
							     "'s/A/B/' with one '|', found another" },
		{ "B=$(echo a | sed -e)\n", "t.conf:1:20: expected sed [-e] "
					    "'s/PATTERN/REPLACEMENT/' and nothing more" },
		{ "B=$(echo a | sed s/a/b/ c)\n", "t.conf:1:25: expected sed [-e] "
						  "'s/PATTERN/REPLACEMENT/' and nothing more" },
		{ "B=$(echo a; ls)\n",
		  "t.conf:1:11: expected a word or '|' after echo, found ';': "
		  "a config holds one assignment per line and lockstep never runs commands (quote "
		  "it if it belongs to the value)" },
		{ "B=$(echo a | sed s/a/b/\n", "t.conf:1:3: expected a closing ')' for the command "
					       "substitution opened here" },
	};
#undef SED_WANT

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		load_err(refused[i][0], refused[i][1]);
	load_ok("L=\"a parsec-x  b\"\n"
		"A=`echo $L | sed -e 's/parsec-x//'`\n" /* unquoted: split, joined by one blank */
		"B=$(echo \"$L\" | sed 's/ b$/ c/')\n"	/* quoted: kept */
		"C=$(echo -n a.b.c | sed s/\\\\./-/g)\n"
		"D=$(echo xax | sed 's/^x/&&/')\n"
		"E=$(echo abab | sed 's/a./<&>/g')\n"
		"F=$(echo $L)\n"
		"G=$(echo a/b | sed 's|/|\\n|')\n"
		"H=$(echo aaa | sed s/a/b/)\n"
		"if [ 1 = 2 ]; then I=$(echo a | sed s/$X/b/); fi\n"
		/* config-hpc-parsec-pthreads-full's line, in a branch not taken */
		"if [ 1 = 2 ]; then\n\tJ=`echo $L | sed -e 's/parsec-x//'`\nfi\n");
	value_is("A", "a  b");
	value_is("B", "a parsec-x  c");
	value_is("C", "a-b-c");
	value_is("D", "xxax");
	value_is("E", "<ab><ab>");
	value_is("F", "a parsec-x b");
	value_is("G", "a\nb");
	value_is("H", "baa");
	ck_assert_ptr_null(config_get(cfg, "I"));
	ck_assert_ptr_null(config_get(cfg, "J"));
}
END_TEST

/* nas-class.sh from the node's memory and CPUs, with a warning that says
 * which and why. */
START_TEST(test_nas_class)
{
	static const struct {
		const char *mem, *cpus, *cls, *note;
	} cases[] = {
		{ "1073741824", "64", "B", "from the node's 1 GiB and 64 CPUs" },
		{ "17179869184", "8", "C", "from the node's 16 GiB and 8 CPUs" },
		{ "8589934592", "64", "C", "from the node's 8 GiB and 64 CPUs" },
		{ "68719476736", "16", "D", "from the node's 64 GiB and 16 CPUs" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char want[512];

		teardown();
		setup();
		config_set_fact(cfg, "MEMTOTAL_BYTES", cases[i].mem);
		config_set_fact(cfg, "NUM_LOGICAL_CPUS", cases[i].cpus);
		load_ok("A=1\nexport NAS_CLASS=`nas-class.sh`\n");
		value_is("NAS_CLASS", cases[i].cls);
		snprintf(want, sizeof(want),
			 "t.conf:2:18: nas-class.sh answered %s %s (B under 2 "
			 "GiB, C under 16 GiB or 16 CPUs, else D)%s",
			 cases[i].cls, cases[i].note,
			 cases[i].cls[0] == 'C'
				 ? ""
				 : "; MMTests' own copy of the script answers C "
				   "whatever the machine (an early exit skips its rules), so MMTests would run "
				   "class C here");
		ck_assert_uint_eq(nwarnings(), 1);
		ck_assert_str_eq(warning(0), want);
	}
	/* by a path ending so; with arguments it is another command */
	load_ok("B=$($SHELLPACK_TOPLEVEL/bin/nas-class.sh)\n");
	value_is("B", "D");
	load_err("C=`nas-class.sh D`\n", "t.conf:1:3: expected a value, found the command "
					 "substitution of 'nas-class.sh D': " KNOWN);
	load_err("C=`my-nas-class.sh`\n", "t.conf:1:3: expected a value, found the command "
					  "substitution of 'my-nas-class.sh': " KNOWN);
}
END_TEST

/* the end of the error for a $? with no status */
#define STATUS_KNOWN                                                            \
	" a config has a status only on the statement line after grep -q TEXT " \
	"FILE (0 when found, else 1), an assignment or a command read as a setting (0)"

/* grep -q TEXT /proc/cpuinfo and $? on the next line (MMTests' HT test
 * in its NAS and HPCC configs), against a fake /proc. */
START_TEST(test_grep_status)
{
	static const char *const refused[][2] = {
		{ "A=$?\n",
		  "t.conf:1:3: expected a variable name after '$', found '$?' after no "
		  "statement: a config has a status only on the statement line after grep -q TEXT "
		  "FILE (0 when found, else 1), an assignment or a command read as a setting (0)" },
		/* after a statement whose status would be what a shell ran */
		{ "grep -q ht /proc/cpuinfo\nif [ 1 = 1 ]; then B=1; fi\nC=$?\n",
		  "t.conf:3:3: "
		  "expected a variable name after '$', found '$?' after 'fi':" STATUS_KNOWN },
		{ "[ 1 = 2 ] && B=1\nC=$?\n",
		  "t.conf:2:3: expected a variable name after '$', "
		  "found '$?' after a test ([ ] && ..., [ ] || ...):" STATUS_KNOWN },
		{ "case x in\nx) B=1;;\nesac\nC=$?\n",
		  "t.conf:4:3: expected a variable name after "
		  "'$', found '$?' after a 'case' line:" STATUS_KNOWN },
		{ "grep ht /proc/cpuinfo\n",
		  "t.conf:1:1: expected grep -q TEXT FILE (read as a "
		  "status for $? on the next line): lockstep runs no other grep" },
		{ "grep -q ht\n", "t.conf:1:1: expected grep -q TEXT FILE (read as a status for $? "
				  "on the next line): lockstep runs no other grep" },
		{ "grep -q x /etc/passwd\n",
		  "t.conf:1:11: expected /proc/cpuinfo or a file under "
		  "/proc/sys or /sys after grep -q TEXT, found \"/etc/passwd\"" },
		{ "grep -q 'a.b' /proc/cpuinfo\n",
		  "t.conf:1:9: expected plain text after grep -q, "
		  "found '.': lockstep's grep reads no regular expression" },
		{ "grep -q x /proc/sys/vm/absent\n",
		  "t.conf:1:11: expected a file that can be read "
		  "after grep -q, found /proc/sys/vm/absent: No such file or directory" },
	};
	char dir[] = "/tmp/lockstep-cfg-XXXXXX", path[128];

	fake_root(dir, "proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu vme ht syscall\n", path,
		  sizeof(path));
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		load_err(refused[i][0], refused[i][1]);
	load_ok("grep -q \" ht \" /proc/cpuinfo\n"
		"if [ $? -eq 0 ]; then\n\tA=ht\nfi\n"
		"grep -q \" smt \" /proc/cpuinfo\n"
		"\n# a comment between\n"
		"B=$?\n"
		"if [ 1 = 2 ]; then\n\tgrep -q x /proc/cpuinfo\n\tif [ $? -eq 0 ]; then C=1; fi\nfi\n");
	value_is("A", "ht");
	value_is("B", "1");
	ck_assert_ptr_null(config_get(cfg, "C"));
	/* the file read is the node's own (the host, local guests): no guess,
	 * no warning */
	ck_assert_uint_eq(nwarnings(), 0);
	/* 0 after an assignment and after the commands read as settings; the
	 * last statement of the line counts */
	load_ok("grep -q \" smt \" /proc/cpuinfo\nD=1\nE=$?\n"
		"grep -q \" smt \" /proc/cpuinfo\nF=$?\n"
		"disable_transhuge\nG=$?\n"
		"cpupower frequency-set -g performance\nH=$?\n"
		"grep -q \" smt \" /proc/cpuinfo; true\nI=$?\n"
		"true; grep -q \" smt \" /proc/cpuinfo\nJ=$?\n");
	value_is("E", "0");
	value_is("F", "1");
	value_is("G", "0");
	value_is("H", "0");
	value_is("I", "0");
	value_is("J", "1");
	/* a libvirt guest's own file is not hostd's machine's: said, by line */
	config_set_node_elsewhere(cfg, true);
	load_ok("A=1\ngrep -q \" ht \" /proc/cpuinfo\nK=$?\n");
	value_is("K", "0");
	ck_assert_uint_eq(nwarnings(), 1);
	ck_assert_str_eq(warning(0),
			 "t.conf:2:1: grep -q \" ht \" /proc/cpuinfo: found in "
			 "hostd's machine's file, so $? is 0: this node is a libvirt guest, whose own "
			 "file is not known before it runs");
	snprintf(path, sizeof(path), "rm -r %s", dir);
	ck_assert_int_eq(system(path), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("config-mmtests");
	TCase *tc = tcase_create("corpus");

	snprintf(corpus, sizeof(corpus), "%s/tests/data/mmtests-corpus/configs",
		 getenv("LOCKSTEP_SOURCE_ROOT"));
	snprintf(specs, sizeof(specs), "%s/benchmarks", getenv("LOCKSTEP_SOURCE_ROOT"));
	tcase_add_test(tc, test_corpus);
	tcase_add_test(tc, test_set_overrides);
	suite_add_tcase(s, tc);
	tc = tcase_create("substitutions");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_other_substitutions);
	tcase_add_test(tc, test_limit_memory_and_thp_echo);
	tcase_add_test(tc, test_echo_sed);
	tcase_add_test(tc, test_nas_class);
	tcase_add_test(tc, test_grep_status);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
