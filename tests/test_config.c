// SPDX-License-Identifier: GPL-2.0-or-later
/* The config reader's syntax: every construct, and every error with its
 * exact place.  Names, typed getters and limits: test_config_get.c. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "config_testlib.h"
#include "testlib.h"

START_TEST(test_assignments)
{
	load_ok("# a comment\n"
		"\n"
		"   \t\n"
		"export A=1\n"
		"B=two\n"
		"  export\tC=3   \n"
		"D=\n"
		"E=x # trailing comment\n"
		"F=x#not-a-comment\n"
		"G=a=b\n"
		"   # indented comment\n"
		"H=#hash\n");
	value_is("A", "1");
	value_is("B", "two");
	value_is("C", "3");
	value_is("D", "");
	value_is("E", "x");
	value_is("F", "x#not-a-comment");
	value_is("G", "a=b");
	value_is("H", "#hash");
	ck_assert_uint_eq(nwarnings(), 0);
}
END_TEST

START_TEST(test_quotes)
{
	load_ok("S='literal $A ${B} $((1+1)) \\n \" `x` ; | #'\n"
		"D=\"a \\\" b \\\\ c \\$d \\` \\n 'q' # ; | & > <\"\n"
		"U=a\\ b\\\"c\\$d\\#\\;\\\\\n"
		"E1=''\n"
		"E2=\"\"\n"
		"T=\"tab\there\"\n");
	value_is("S", "literal $A ${B} $((1+1)) \\n \" `x` ; | #");
	/* In double quotes only \" \\ \$ \` are escapes, as in shell. */
	value_is("D", "a \" b \\ c $d ` \\n 'q' # ; | & > <");
	value_is("U", "a b\"c$d#;\\");
	value_is("E1", "");
	value_is("E2", "");
	value_is("T", "tab\there");
}
END_TEST

START_TEST(test_concatenation)
{
	load_ok("X=1\n"
		"C=a\"b\"'c'd\"$X\"'$X'$X${X}e$((X+1))\n");
	value_is("C", "abcd1$X11e2");
}
END_TEST

START_TEST(test_expansion)
{
	load_ok("A=one\n"
		"B=$A\n"
		"C=${A}two\n"
		"D=\"<$A> <${A}>\"\n"
		"E=$A_x\n" /* the longest name: A_x, which is unset */
		"F=${A}_x\n"
		"G=cost$\n"
		"H=\"$ sign\"\n"
		"I=$NUM_NODES/$NUM_LOGICAL_CPUS\n"
		"A=changed\n"
		"J=$A\n");
	value_is("B", "one");
	value_is("C", "onetwo");
	value_is("D", "<one> <one>");
	value_is("E", "");
	value_is("F", "one_x");
	value_is("G", "cost$");
	value_is("H", "$ sign");
	value_is("I", "2/8");
	/* Values are expanded when assigned, as in shell. */
	value_is("B", "one");
	value_is("J", "changed");
	ck_assert_uint_eq(nwarnings(), 1);
	ck_assert_str_eq(warning(0), "t.conf:5:3: A_x is not set, expanding to \"\"; did you mean A?");
}
END_TEST

START_TEST(test_file_overrides_fact)
{
	load_ok("NUM_NODES=4\nN=$NUM_NODES\nM=$((NUM_NODES*2))\n");
	value_is("N", "4");
	value_is("M", "8");
	/* Facts are not returned as if a file had set them. */
	ck_assert_ptr_null(config_get(cfg, "NUM_LLCS"));
}
END_TEST

START_TEST(test_arithmetic)
{
	load_ok("A=$((1+2*3))\n"
		"B=$(( (1 + 2) * 3 ))\n"
		"C=$((-7 / 2)).$((-7 % 2)).$((7 % -2))\n"
		"D=$((- -3 + +4 - -(2)))\n"
		"X=5\n"
		"E=$((X*X + $X + ${X}))\n"
		"F=$(( $((X*2)) + $(( $((1)) )) ))\n"
		"G=$((9223372036854775807))\n"
		"H=$((-9223372036854775807 - 1))\n"
		"I=$((100/7*7 + 100%7))\n"
		"SP=\"  12 \"\n"
		"J=$((SP + 1))\n"
		"EMPTY=\n"
		"K=$((EMPTY + 1))\n"
		"L=\"$((1+1))\"\n"
		"M=$((10-2-3))\n");
	value_is("A", "7");
	value_is("B", "9");
	value_is("C", "-3.-1.1"); /* C's truncation toward zero, as in shell */
	value_is("D", "9");
	value_is("E", "35");
	value_is("F", "11");
	value_is("G", "9223372036854775807");
	value_is("H", "-9223372036854775808");
	value_is("I", "100");
	value_is("J", "13");
	value_is("K", "1");
	value_is("L", "2");
	value_is("M", "5");
	ck_assert_uint_eq(nwarnings(), 0);
}
END_TEST

START_TEST(test_facts_in_arithmetic)
{
	load_ok("export HACKBENCH_GROUPS=1,4,$((NUM_LOGICAL_CPUS*2))\n"
		"MEM_MB=$((MEMTOTAL_BYTES / 1048576))\n"
		"PER_NODE=$(($NUM_LOGICAL_CPUS / ${NUM_NODES}))\n");
	value_is("HACKBENCH_GROUPS", "1,4,16");
	value_is("MEM_MB", "23979");
	value_is("PER_NODE", "4");
}
END_TEST

START_TEST(test_mmtests_excerpt)
{
	const char *text = "### MMTests config: hackbench\n"
			   "export MMTESTS=\"hackbench-process-pipes hackbench-thread-pipes\"\n"
			   "export MMTESTS_ITERATIONS=3\n"
			   "export HACKBENCH_GROUPS=1,4,$((NUM_LOGICAL_CPUS*2))\n"
			   "export HACKBENCH_MAX_GROUPS=$((NUM_LOGICAL_CPUS*4))\n"
			   "\n"
			   "# Test disk to setup (optional)\n"
			   "#export TESTDISK_PARTITION=/dev/sda6\n"
			   "export MONITORS_GZIP=\"proc-vmstat top\"\n"
			   "export MONITOR_UPDATE_FREQUENCY=10\n"
			   "export MONITOR_PERF_EVENTS=cpu-migrations,context-switches\n";

	load_ok(text);
	value_is("MMTESTS", "hackbench-process-pipes hackbench-thread-pipes");
	value_is("MMTESTS_ITERATIONS", "3");
	value_is("HACKBENCH_GROUPS", "1,4,16");
	value_is("HACKBENCH_MAX_GROUPS", "32");
	value_is("MONITOR_PERF_EVENTS", "cpu-migrations,context-switches");
	ck_assert_uint_eq(nwarnings(), 0);
}
END_TEST

START_TEST(test_mmtests_control_flow)
{
	load_err("export MMTESTS=\"hackbench-process-pipes hackbench-thread-pipes\"\n"
		 "export MMTESTS_ITERATIONS=3\n"
		 "export HACKBENCH_GROUPS=1,4,$((NUM_LOGICAL_CPUS*2))\n"
		 "export HACKBENCH_MAX_GROUPS=$((NUM_LOGICAL_CPUS*4))\n"
		 "for X in 1 2; do\n"
		 "\texport X=1\n"
		 "done\n",
		 "t.conf:5:1: expected an assignment, found shell control flow 'for': lockstep "
		 "configs are assignments only (NAME=value) and nothing in them is executed");
	/* What came before the bad line is kept. */
	value_is("HACKBENCH_MAX_GROUPS", "32");
}
END_TEST

START_TEST(test_errors_commands)
{
	load_err("A=$(hostname)\n", "t.conf:1:3: expected a value, found the command "
				    "substitution of 'hostname': " KNOWN);
	load_err("A=\"x$(id)\"\n", "t.conf:1:5: expected a value, found the command "
				   "substitution of 'id': " KNOWN);
	load_err("A=`id`\n", "t.conf:1:3: expected a value, found the command substitution of "
			     "'id': " KNOWN);
	load_err("A=\"`id -g`\"\n", "t.conf:1:4: expected a value, found the command "
				    "substitution of 'id -g': " KNOWN);
	load_err("A=$((1+$(id)))\n", "t.conf:1:8: expected a value, found command substitution "
				     "'$(': lockstep never runs commands; write the value itself");
	load_err("A=`id\n", "t.conf:1:3: expected a closing '`' for the command substitution "
			    "opened here");
	load_err("A=b; rm -rf /\n",
		 "t.conf:1:4: expected end of line, found ';': a config holds "
		 "one assignment per line and lockstep never runs commands (quote it if it belongs "
		 "to the value)");
	load_err("A=b && c\n", "t.conf:1:5: expected end of line, found '&&': lockstep never "
			       "runs commands (quote it if it belongs to the value)");
	load_err("A=b|c\n", "t.conf:1:4: expected end of line, found '|': lockstep never runs "
			    "commands or pipes (quote it if it belongs to the value)");
	load_err("A=b >> f\n", "t.conf:1:5: expected end of line, found '>>': lockstep never "
			       "runs commands or redirects (quote it if it belongs to the value)");
	load_err("A=<f\n", "t.conf:1:3: expected end of line, found '<': lockstep never runs "
			   "commands or redirects (quote it if it belongs to the value)");
	load_err("A=(1 2)\n",
		 "t.conf:1:3: expected end of line, found '(': configs have no "
		 "subshells or functions; lockstep never runs commands (quote it if it belongs to "
		 "the value)");
	load_err("A=b c\n",
		 "t.conf:1:5: expected end of line after the value of A, found 'c': a "
		 "shell would run it as a command, and lockstep never runs commands (quote the value "
		 "if the space belongs to it)");
	load_err("A= b\n",
		 "t.conf:1:4: expected end of line after the value of A, found 'b': a "
		 "shell would run it as a command, and lockstep never runs commands (quote the value "
		 "if the space belongs to it)");
	load_err("A=1 B=2\n", "t.conf:1:5: expected end of line after the value of A, found "
			      "another assignment 'B=': one assignment per line");
	load_err("hostname\n", "t.conf:1:9: expected '=' and a value after hostname");
	load_err("ls -l\n",
		 "t.conf:1:1: expected an assignment, found the command 'ls': "
		 "lockstep configs are assignments only (NAME=value) and nothing in them is executed");
	load_err("cpupower frequency-info\n",
		 "t.conf:1:1: expected 'cpupower frequency-set -g "
		 "GOVERNOR' (read as CPUFREQ_GOVERNOR=GOVERNOR): lockstep runs no other cpupower "
		 "command");
	load_err("cat /etc/os-release\n",
		 "t.conf:1:1: expected cat >FILE <<END (a file shipped "
		 "with the steps), found another use of cat: lockstep never runs commands");
	load_err("cat >>f <<END\nx\nEND\n", "t.conf:1:5: expected cat >FILE <<END, found '>>': "
					    "a shipped file is written whole");
	load_err("cat >f <<\n", "t.conf:1:10: expected a delimiter word after '<<' (END, 'END' "
				"or \"END\" of at most 63 characters)");
	load_err("cat >d/ <<END\nx\nEND\n", "t.conf:1:1: expected cat >FILE to name a file, found "
					    "\"d/\"");
	load_err("A=$(cat <<END\nx\nEND\n", "t.conf:4:1: expected ')' to close the $(cat <<END "
					    "opened at line 1");
	/* END the last line, with no newline: nothing is read past the text
	 * (ASan, found by the config fuzzer) */
	load_err("A=$(cat <<END\nx\nEND", "t.conf:4:1: expected ')' to close the $(cat <<END "
					  "opened at line 1");
	load_err("A=$(cat <<END extra\n",
		 "t.conf:1:15: expected the end of the line after $(cat "
		 "<<END: the text follows on the next lines, then END and ')'");
	load_err("disable_transhuge now\n", "t.conf:1:19: expected nothing after "
					    "disable_transhuge");
	load_err("getmemtotals 1\n", "t.conf:1:14: expected nothing after getmemtotals");
	load_err("source /dev/null\n", "t.conf:1:8: expected a config file to read, found "
				       "\"/dev/null\": not a regular file");
	load_err("source a b\n", "t.conf:1:1: expected one file after 'source', found 2 words");
	load_err("unset 1A\n", "t.conf:1:7: expected a name after unset, found \"1A\"");
	load_err("die \"no $NUMCPUS\"\n", "t.conf:1:1: the config refuses to run: no 8");
	load_err("exit 3\n", "t.conf:1:1: the config refuses to run: it exits here (exit 3)");
	load_ok("true\n: ignored\nif [ 1 = 2 ]; then die x; exit 1; fi\n");
	load_err("f() { x; }\n", "t.conf:1:7: expected '{' and the end of the line after f(): the "
				 "body follows on the next lines, and '}' alone on the last");
	load_err("f() {\nA=1\n", "t.conf:1:1: expected a line '}' to end the function opened here, "
				 "found the end of the file");
	load_ok("g() {\n  G=1\n}\ng; H=$G\n");
	value_is("H", "1");
	load_err("g x\n", "t.conf:1:3: expected the end of the line after g: a function of a "
			  "config takes no arguments");
	load_err("f() {\n  f\n}\nf\n", "t.conf:2:3: expected at most 8 nested calls and source/.; "
				       "does f call itself?");
}
END_TEST

START_TEST(test_errors_control_flow)
{
	/* if, then, elif, else and fi: test_config_cond.c */
	static const char *const words[] = { "for", "while", "until", "do", "done", "esac" };
	char text[64], expect[256];

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		snprintf(text, sizeof(text), "A=1\n  %s x\n", words[i]);
		snprintf(expect, sizeof(expect),
			 "t.conf:2:3: expected an assignment, found shell "
			 "control flow '%s': lockstep configs are assignments only (NAME=value) and "
			 "nothing in them is executed",
			 words[i]);
		load_err(text, expect);
	}
	load_err("[ -f /x ] && A=1\n",
		 "t.conf:1:3: expected a test of numbers or strings, found "
		 "the file test '-f': lockstep does not look at files, so that a config means the "
		 "same wherever it is read");
	load_err("case x\n", "t.conf:1:7: expected 'in' after the word of 'case'");
	load_err("function 1\n", "t.conf:1:10: expected a function name after 'function'");
	load_err("}\n",
		 "t.conf:1:1: expected an assignment, found shell control flow '}': "
		 "lockstep configs are assignments only (NAME=value) and nothing in them is executed");
	load_err("done;\n",
		 "t.conf:1:1: expected an assignment, found shell control flow "
		 "'done': lockstep configs are assignments only (NAME=value) and nothing in them is "
		 "executed");
}
END_TEST

START_TEST(test_errors_assignment)
{
	load_err("A = 1\n", "t.conf:1:2: expected '=' right after A: no spaces around '=' in an "
			    "assignment");
	load_err("A\n", "t.conf:1:2: expected '=' and a value after A");
	load_ok("export A\n"); /* exported as it was: nothing changes */
	ck_assert_ptr_null(config_get(cfg, "A"));
	load_err("export   # nothing\n", "t.conf:1:10: expected NAME=value after 'export'");
	load_err("export -n A=1\n", "t.conf:1:8: expected an assignment NAME=value, found '-'");
	load_err("A+x\n", "t.conf:1:2: expected '=' after A, found '+'");
	load_err("A[1]=x\n", "t.conf:1:2: expected '=' after A, found '[': arrays are not supported");
	load_err("A-B=x\n", "t.conf:1:2: expected '=' after A, found '-'");
	load_err("1A=x\n", "t.conf:1:1: expected an assignment NAME=value, found '1': a name "
			   "starts with a letter or '_'");
	load_err("\xc3\xa9t\xc3\xa9=1\n", "t.conf:1:1: expected an assignment NAME=value, found "
					  "'\xc3\xa9'");
}
END_TEST

START_TEST(test_errors_quotes)
{
	load_err("A='abc\n", "t.conf:1:3: expected a closing ' for the quote opened here, found "
			     "the end of the file");
	load_err("A=x\"abc\\\"\n", "t.conf:1:4: expected a closing \" for the quote opened here, "
				   "found the end of the file");
	load_err("A=abc\\\n", "t.conf:1:6: expected a character after '\\' (a value ends with its "
			      "line)");
	load_err("A=~/bench\n", "t.conf:1:3: expected a path without a leading '~': lockstep does "
				"not read the environment, so write the full path");
	load_err("A=/a:~/b\n", "t.conf:1:6: expected a path without a leading '~': lockstep does "
			       "not read the environment, so write the full path");
	load_ok("B=a~b\nC='~/x'\nD=\\~/x\nE=\"~\"\n");
	value_is("B", "a~b");
	value_is("C", "~/x");
	value_is("D", "~/x");
	value_is("E", "~");
}
END_TEST

START_TEST(test_errors_expansion)
{
	load_err("A=${X\n", "t.conf:1:6: expected '}' after ${X, found the end of the line");
	load_err("A=${X:-default}\n", "t.conf:1:6: expected '}' after ${X, found ':': only "
				      "${NAME} is supported, not shell's ${NAME:...} forms");
	load_err("A=${#X}\n", "t.conf:1:5: expected a name after '${', found '#'");
	load_err("A=${X y}\n", "t.conf:1:6: expected '}' after ${X, found a space");
	load_err("A=$1\n", "t.conf:1:3: expected a variable name after '$', found the shell "
			   "parameter '$1': configs have no positional or special parameters");
	load_err("A=\"$@\"\n", "t.conf:1:4: expected a variable name after '$', found the shell "
			       "parameter '$@': configs have no positional or special parameters");
	load_err("A=$'\\t'\n", "t.conf:1:3: expected a variable name after '$': shell's $'...' and "
			       "$\"...\" quoting is not supported");
}
END_TEST

START_TEST(test_errors_arithmetic)
{
	load_err("A=$((1/0))\n", "t.conf:1:7: expected a divisor other than 0: 1 / 0 divides by zero");
	load_err("Z=0\nA=$((5 % Z))\n", "t.conf:2:8: expected a divisor other than 0: 5 % 0 "
					"divides by zero");
	load_err("A=$((9223372036854775807 + 1))\n",
		 "t.conf:1:26: expected a result within "
		 "64-bit signed integers: 9223372036854775807 + 1 overflows");
	load_err("A=$((4611686018427387904 * 2))\n",
		 "t.conf:1:26: expected a result within "
		 "64-bit signed integers: 4611686018427387904 * 2 overflows");
	load_err("M=-9223372036854775808\nA=$((M / -1))\n",
		 "t.conf:2:8: expected a result within "
		 "64-bit signed integers: -9223372036854775808 / -1 overflows");
	load_err("M=-9223372036854775808\nA=$((-M))\n",
		 "t.conf:2:6: expected a result within "
		 "64-bit signed integers: -(-9223372036854775808) overflows");
	load_err("A=$((99999999999999999999))\n", "t.conf:1:6: expected a number within 64-bit "
						  "signed integers");
	load_err("A=$((010))\n", "t.conf:1:6: expected a decimal number without a leading 0 (a "
				 "shell would read it as octal)");
	load_err("A=$((0x10))\n", "t.conf:1:6: expected a decimal number without a leading 0 (a "
				  "shell would read it as hexadecimal)");
	load_err("A=$((2 ** 3))\n", "t.conf:1:8: expected an operator (+ - * / %), found '**': "
				    "there is no power operator");
	load_err("A=$((1 < 2))\n", "t.conf:1:8: expected an operator (+ - * / %) or '))' to close "
				   "the $(( at column 3, found '<'");
	load_err("A=$((1 +))\n", "t.conf:1:9: expected a number, a name or '(' in arithmetic, "
				 "found ')'");
	load_err("A=$((1 + 2\n", "t.conf:1:11: expected an operator (+ - * / %) or '))' to close "
				 "the $(( at column 3, found the end of the line");
	load_err("A=$(((1 + 2))\n", "t.conf:1:13: expected an operator (+ - * / %) or '))' to "
				    "close the $(( at column 3, found ')'");
	load_err("A=$((2 * (3 + 4 x))\n", "t.conf:1:17: expected an operator (+ - * / %) or ')' to "
					  "close the '(' at column 10, found 'x'");
	load_err("A=$((2 * (3 + 4 ))\n", "t.conf:1:18: expected an operator (+ - * / %) or '))' to "
					 "close the $(( at column 3, found ')'");
	load_err("A=$((\"1\"))\n", "t.conf:1:6: expected a number, a name or '(' in arithmetic, "
				   "found '\"'");
	load_err("W=\"2 cats\"\nA=$((W + 1))\n", "t.conf:2:6: expected an integer in W, whose "
						 "value is \"2 cats\" (set at t.conf:1)");
	load_err("A=$((NUM_NODES + $X + ${Y}z))\n", "t.conf:1:27: expected an operator (+ - * / %) "
						    "or '))' to close the $(( at column 3, found 'z'");
}
END_TEST

START_TEST(test_bytes)
{
	load_err("A=1\r\nB=2\r\n", "t.conf:1:4: expected text, found a carriage return (DOS line "
				   "endings? convert the file with dos2unix)");
	load_err("# comment \x01\n", "t.conf:1:11: expected text, found the control character 0x01");
	/* Columns count characters: 'é' is two bytes and one column. */
	load_err("A=\"\xc3\xa9\xc3\xa9\" x\n",
		 "t.conf:1:8: expected end of line after the value "
		 "of A, found 'x': a shell would run it as a command, and lockstep never runs "
		 "commands (quote the value if the space belongs to it)");
	load_ok("U=\xc3\xa9t\xc3\xa9\n");
	value_is("U", "\xc3\xa9t\xc3\xa9");
	load_ok("NO_NEWLINE_AT_END=1");
	value_is("NO_NEWLINE_AT_END", "1");
}
END_TEST

START_TEST(test_load_file)
{
	char dir[128], path[256], msg[600];
	static const char nul[] = "A=1\nB=x\0y\n";
	struct config_diag err;
	FILE *f;

	testlib_tmpdir(dir, sizeof(dir), "config");
	snprintf(path, sizeof(path), "%s/h.conf", dir);
	ck_assert_int_eq(config_load_file(cfg, path, &err), -ENOENT);
	config_diag_format(&err, msg, sizeof(msg));
	ck_assert_str_eq(msg + strlen(dir), "/h.conf: cannot read: No such file or directory");

	f = fopen(path, "w");
	fputs("export GUEST_COUNT=2\n\nGUEST_MEMORY=$((GUEST_COUNT * 256))\n", f);
	fclose(f);
	ck_assert_int_eq(config_load_file(cfg, path, &err), 0);
	value_is("GUEST_MEMORY", "512");
	{
		const char *file;
		int line;

		ck_assert(config_where(cfg, "GUEST_MEMORY", &file, &line));
		ck_assert_str_eq(file, path);
		ck_assert_int_eq(line, 3);
	}

	f = fopen(path, "w");
	fwrite(nul, 1, sizeof(nul) - 1, f);
	fclose(f);
	ck_assert_int_eq(config_load_file(cfg, path, &err), -EINVAL);
	config_diag_format(&err, msg, sizeof(msg));
	ck_assert_str_eq(msg + strlen(dir), "/h.conf:2:4: expected text, found a NUL byte (is this "
					    "a binary file?)");
}
END_TEST

START_TEST(test_diag_format)
{
	struct config_diag d = { .file = "f", .line = 3, .column = 7, .text = "t" };
	char buf[64];

	config_diag_format(&d, buf, sizeof(buf));
	ck_assert_str_eq(buf, "f:3:7: t");
	d.column = 0;
	config_diag_format(&d, buf, sizeof(buf));
	ck_assert_str_eq(buf, "f:3: t");
	d.line = 0;
	config_diag_format(&d, buf, sizeof(buf));
	ck_assert_str_eq(buf, "f: t");
	config_free(NULL);
}
END_TEST

static Suite *config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *syntax = tcase_create("syntax"), *errors = tcase_create("errors");
	TCase *all[] = { syntax, errors };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		tcase_add_checked_fixture(all[i], setup, teardown);
		suite_add_tcase(s, all[i]);
	}
	tcase_add_test(syntax, test_assignments);
	tcase_add_test(syntax, test_quotes);
	tcase_add_test(syntax, test_concatenation);
	tcase_add_test(syntax, test_expansion);
	tcase_add_test(syntax, test_file_overrides_fact);
	tcase_add_test(syntax, test_arithmetic);
	tcase_add_test(syntax, test_facts_in_arithmetic);
	tcase_add_test(syntax, test_mmtests_excerpt);
	tcase_add_test(syntax, test_load_file);
	tcase_add_test(syntax, test_diag_format);
	tcase_add_test(errors, test_mmtests_control_flow);
	tcase_add_test(errors, test_errors_commands);
	tcase_add_test(errors, test_errors_control_flow);
	tcase_add_test(errors, test_errors_assignment);
	tcase_add_test(errors, test_errors_quotes);
	tcase_add_test(errors, test_errors_expansion);
	tcase_add_test(errors, test_errors_arithmetic);
	tcase_add_test(errors, test_bytes);
	return s;
}

int main(void)
{
	return testlib_main(config_suite());
}
