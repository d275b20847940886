// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * if [ TEST ]; then ... elif ... else ... fi in configs (common/config_cond.c):
 * every operator both ways, nesting, the one-line form, branches not taken,
 * every construct that is refused with its place, bash's [[ ]] with glob and
 * regex matches and `uname -m` read from the fact MACHINE, MMTests-shaped scheduler
 * configs (tests/data/mmtests/) and the ignored-settings warning.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "config.h"
#include "config_testlib.h"
#include "testlib.h"

/* TEST (what follows "if") picks the branch: R is "yes" or "no". */
static void cond_is(const char *test, bool expect)
{
	char text[512];

	snprintf(text, sizeof(text), "R=no\nif %s; then\n\tR=yes\nfi\n", test);
	load_ok(text);
	ck_assert_msg(strcmp(config_get(cfg, "R"), expect ? "yes" : "no") == 0,
		      "if %s: expected %s, got %s", test, expect ? "yes" : "no", config_get(cfg, "R"));
}

START_TEST(test_integers)
{
	static const struct {
		const char *test;
		bool res;
	} cases[] = {
		{ "[ 3 -eq 3 ]", true },
		{ "[ 3 -eq 4 ]", false },
		{ "[ 3 -ne 4 ]", true },
		{ "[ 3 -ne 3 ]", false },
		{ "[ 4 -gt 3 ]", true },
		{ "[ 3 -gt 3 ]", false },
		{ "[ 3 -ge 3 ]", true },
		{ "[ 2 -ge 3 ]", false },
		{ "[ 2 -lt 3 ]", true },
		{ "[ 3 -lt 3 ]", false },
		{ "[ 3 -le 3 ]", true },
		{ "[ 4 -le 3 ]", false },
		{ "[ -5 -lt -4 ]", true },
		{ "[ +7 -eq 7 ]", true },
		{ "[ \" 7 \" -eq 7 ]", true },
		{ "[ 9223372036854775807 -gt -9223372036854775808 ]", true },
		{ "[ $NUMCPUS -eq 8 ]", true },
		{ "[ ${NUM_NODES} -eq $((NUMCPUS / 4)) ]", true },
		{ "[ $((NUMCPUS*4)) -gt 296 ]", false },
		{ "[ 10 -gt 9 ]", true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cond_is(cases[i].test, cases[i].res);
	ck_assert_uint_eq(nwarnings(), 0);
}
END_TEST

START_TEST(test_strings)
{
	static const struct {
		const char *test;
		bool res;
	} cases[] = {
		{ "[ abc = abc ]", true },
		{ "[ abc = abd ]", false },
		{ "[ abc == abc ]", true },
		{ "[ abc == ab ]", false },
		{ "[ abc != abd ]", true },
		{ "[ abc != abc ]", false },
		{ "[ 10 = 010 ]", false },
		{ "[ \"a b\" = 'a b' ]", true },
		{ "[ -z \"\" ]", true },
		{ "[ -z x ]", false },
		{ "[ -n x ]", true },
		{ "[ -n '' ]", false },
		{ "[ -z $EMPTY ]", true },
		{ "[ -n $EMPTY ]", false },
		{ "[ \"$EMPTY\" = \"\" ]", true },
		{ "[ $SPACED = \"a b\" ]", true },
		{ "[ x ]", true },
		{ "[ \"\" ]", false },
		{ "[ -f = -f ]", true },
		{ "[ ! a = b ]", true },
		{ "[ ! a = a ]", false },
		{ "[ ! ! a = a ]", true },
		{ "[ ! -z x ]", true },
		{ "[ 1 = 1 -a 2 = 2 ]", true },
		{ "[ 1 = 1 -a 2 = 3 ]", false },
		{ "[ 1 = 2 -o 2 = 2 ]", true },
		{ "[ 1 = 2 -o 2 = 3 ]", false },
		{ "[ 1 = 1 -o 1 = 2 -a 2 = 3 ]", true },
		{ "[ a = a ] && [ b = b ]", true },
		{ "[ a = a ] && [ b = c ]", false },
		{ "[ a = b ] || [ b = b ]", true },
		{ "[ a = b ] || [ b = c ]", false },
		{ "[ a = b ] || [ b = b ] && [ c = d ]", false },
		{ "[ a = a ]&&[ b = b ]", true },
	};

	load_ok("EMPTY=\nSPACED=\"a b\"\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cond_is(cases[i].test, cases[i].res);
	ck_assert_uint_eq(nwarnings(), 0);
}
END_TEST

/* A side that cannot change the result is not evaluated, as in shell. */
START_TEST(test_short_circuit)
{
	load_ok("E=\n");
	cond_is("[ -n \"$E\" ] && [ $E -gt 4 ]", false);
	cond_is("[ -z \"$E\" ] || [ $E -gt 4 ]", true);
	cond_is("[ -n \"$E\" -a $E -gt 4 ]", false);
	cond_is("[ -z \"$E\" -o $E -gt 4 ]", true);
	cond_is("[ 1 = 2 ] && [ $UNSET = x ]", false);
	ck_assert_uint_eq(nwarnings(), 0);
	/* ... and evaluated when it can. */
	load_err("if [ -z \"$E\" ] && [ $E -gt 4 ]; then A=1; fi\n",
		 "t.conf:1:21: expected an integer on the left of -gt, found \"\"");
}
END_TEST

START_TEST(test_elif_else)
{
	static const char *const text = "if [ $N -gt 100 ]; then\n"
					"\tR=big\n"
					"elif [ $N -gt 10 ]; then\n"
					"\tR=medium\n"
					"elif [ $N -gt 1 ]; then\n"
					"\tR=small\n"
					"else\n"
					"\tR=one\n"
					"fi\n";
	static const struct {
		const char *n, *r;
	} cases[] = { { "500", "big" }, { "50", "medium" }, { "5", "small" }, { "1", "one" } };
	char buf[512];

	for (size_t i = 0; i < 4; i++) {
		snprintf(buf, sizeof(buf), "N=%s\n%s", cases[i].n, text);
		load_ok(buf);
		value_is("R", cases[i].r);
	}
	/* Only the first true branch runs. */
	load_ok("if [ 1 = 1 ]; then A=first; elif [ 2 = 2 ]; then A=second; else A=third; fi\n");
	value_is("A", "first");
	load_ok("if [ 1 = 2 ]\nthen\n  B=1\nelse\n  B=2\nfi # done\n");
	value_is("B", "2");
	load_ok("if [ 1 = 2 ]; then\nfi\n");
}
END_TEST

START_TEST(test_nesting)
{
	load_ok("if [ 1 = 1 ]; then\n"
		"  if [ 2 = 3 ]; then\n"
		"    A=wrong\n"
		"  else\n"
		"    A=inner-else\n"
		"    if [ x = x ]; then B=deep; fi\n"
		"  fi\n"
		"  C=after-inner\n"
		"else\n"
		"  if [ 1 = 1 ]; then D=never; else D=never-either; fi\n"
		"fi\n");
	value_is("A", "inner-else");
	value_is("B", "deep");
	value_is("C", "after-inner");
	ck_assert_ptr_null(config_get(cfg, "D"));
	load_ok("if [ 1 = 1 ]; then if [ 2 = 2 ]; then E=1; fi; fi\n");
	value_is("E", "1");

	/* Up to 8 deep. */
	char text[1024] = "", *p = text;

	for (int i = 0; i < 8; i++)
		p += sprintf(p, "if [ %d = %d ]; then\n", i, i);
	p += sprintf(p, "F=8\n");
	for (int i = 0; i < 8; i++)
		p += sprintf(p, "fi\n");
	load_ok(text);
	value_is("F", "8");
	load_err("if [ 1 = 1 ]; then\n if [ 1 = 1 ]; then\n  if [ 1 = 1 ]; then\n"
		 "   if [ 1 = 1 ]; then\n    if [ 1 = 1 ]; then\n     if [ 1 = 1 ]; then\n"
		 "      if [ 1 = 1 ]; then\n       if [ 1 = 1 ]; then\n        if [ 1 = 1 ]; then\n",
		 "t.conf:9:9: expected at most 8 nested 'if' blocks");
}
END_TEST

/* A branch not taken assigns nothing, warns about nothing and evaluates
 * nothing, but its syntax is checked. */
START_TEST(test_not_taken)
{
	load_ok("A=before\n"
		"if [ 1 -eq 2 ]; then\n"
		"  A=$UNSET_NAME\n"
		"  B=$((1 / 0))\n"
		"  C=$((NOT_A_NUMBER + 9223372036854775807 + 1))\n"
		"elif [ x = y ]; then\n"
		"  D=1\n"
		"fi\n"
		"NOT_A_NUMBER=abc\n"
		"if [ 1 = 1 ]; then E=1; elif [ $NOT_A_NUMBER -gt 1 ]; then E=2; fi\n");
	value_is("A", "before");
	ck_assert_ptr_null(config_get(cfg, "B"));
	ck_assert_ptr_null(config_get(cfg, "C"));
	ck_assert_ptr_null(config_get(cfg, "D"));
	value_is("E", "1");
	ck_assert_uint_eq(nwarnings(), 0);
	/* The unset warning comes only where the line is read for real. */
	load_ok("if [ 1 = 1 ]; then G=$UNSET_NAME; fi\n");
	ck_assert_uint_eq(nwarnings(), 1);
	ck_assert_str_eq(warning(0), "t.conf:1:22: UNSET_NAME is not set, expanding to \"\"");
	/* Syntax is checked whatever the facts. */
	load_err("if [ 1 = 2 ]; then\n  A=$(hostname)\nfi\n",
		 "t.conf:2:5: expected a value, found "
		 "the command substitution of 'hostname': " KNOWN);
	load_err("if [ 1 = 2 ]; then\n  A=$((2 ** 3))\nfi\n",
		 "t.conf:2:10: expected an operator "
		 "(+ - * / %), found '**': there is no power operator");
	load_err("if [ 1 = 2 ]; then\n  for x in 1; do\nfi\n",
		 "t.conf:2:3: expected an "
		 "assignment, found shell control flow 'for': lockstep configs are assignments "
		 "only (NAME=value) and nothing in them is executed");
}
END_TEST

START_TEST(test_integer_errors)
{
	load_err("if [ abc -gt 1 ]; then A=1; fi\n",
		 "t.conf:1:6: expected an integer on the left of -gt, found \"abc\"");
	load_err("if [ 1 -le 2x ]; then A=1; fi\n",
		 "t.conf:1:12: expected an integer on the right of -le, found \"2x\"");
	load_err("W=\"2 cats\"\nif [ $W -eq 2 ]; then A=1; fi\n",
		 "t.conf:2:6: expected an integer on the left of -eq, found \"2 cats\"");
	load_err("if [ 99999999999999999999 -ne 1 ]; then A=1; fi\n",
		 "t.conf:1:6: expected an "
		 "integer on the left of -ne, found \"99999999999999999999\"");
	load_err("if [ $UNSET -lt 1 ]; then A=1; fi\n",
		 "t.conf:1:6: expected an integer on the left of -lt, found \"\"");
	ck_assert_str_eq(warning(0), "t.conf:1:6: UNSET is not set, expanding to \"\"");
	load_err("if [ 0x10 -ge 1 ]; then A=1; fi\n",
		 "t.conf:1:6: expected an integer on the left of -ge, found \"0x10\"");
}
END_TEST

START_TEST(test_refused_tests)
{
	load_err("if [ -f /etc/passwd ]; then A=1; fi\n",
		 "t.conf:1:6: expected a test of "
		 "numbers or strings, found the file test '-f': lockstep does not look at files, "
		 "so that a config means the same wherever it is read");
	load_err("if [ -d /tmp ]; then A=1; fi\n",
		 "t.conf:1:6: expected a test of numbers or "
		 "strings, found the file test '-d': lockstep does not look at files, so that a "
		 "config means the same wherever it is read");
	load_err("if [ ! -e /x ]; then A=1; fi\n",
		 "t.conf:1:8: expected a test of numbers or "
		 "strings, found the file test '-e': lockstep does not look at files, so that a "
		 "config means the same wherever it is read");
	load_err("if [ -v X ]; then A=1; fi\n", "t.conf:1:6: expected a test of numbers or "
						"strings, found '-v': write [ -n \"$NAME\" ]");
	load_err("if [ -t 1 ]; then A=1; fi\n",
		 "t.conf:1:6: expected a test of numbers or "
		 "strings, found '-t': only -z, -n and -eq -ne -gt -ge -lt -le = == != are "
		 "supported");
	load_err("if [ a =~ b ]; then A=1; fi\n",
		 "t.conf:1:8: expected one of -eq -ne -gt -ge "
		 "-lt -le = == != or ']', found '=~': a regular expression is matched in [[ ]]: "
		 "if [[ $A =~ ERE ]]");
	load_err("if [ a \\< b ]; then A=1; fi\n",
		 "t.conf:1:8: expected one of -eq -ne -gt -ge "
		 "-lt -le = == !=, -a, -o or ']' after the word, found '\\<'");
	load_err("if [ a < b ]; then A=1; fi\n",
		 "t.conf:1:8: expected one of -eq -ne -gt -ge "
		 "-lt -le = == != or ']', found '<': strings are not ordered, and in [ ] it would "
		 "redirect");
	load_err("if [ a -nt b ]; then A=1; fi\n",
		 "t.conf:1:8: expected one of -eq -ne -gt -ge "
		 "-lt -le = == != or ']', found '-nt': lockstep does not look at files");
	load_err("if [ a b ]; then A=1; fi\n", "t.conf:1:8: expected one of -eq -ne -gt -ge -lt "
					       "-le = == !=, -a, -o or ']' after the word, found 'b'");
	load_err("if [ \\( a = b \\) ]; then A=1; fi\n",
		 "t.conf:1:6: expected a test, found "
		 "'(': parentheses in tests are not supported; use several if blocks");
	load_err("if [ ]; then A=1; fi\n", "t.conf:1:6: expected a test, found ']'");
	load_err("if [ a = ]; then A=1; fi\n", "t.conf:1:10: expected a word after =, found ']'");
	load_err("if [ -n ]; then A=1; fi\n", "t.conf:1:9: expected a word after -n, found ']'");
	load_err("if [ 1 -eq 1; then A=1; fi\n",
		 "t.conf:1:13: expected a word or ']' in the "
		 "test, found ';': a config holds one assignment per line and lockstep never runs "
		 "commands (quote it if it belongs to the value)");
	load_err("if [ 1 -eq 1 then\n", "t.conf:1:14: expected ']' to close the '[' at column 4, "
					"found 'then'");
	load_err("if [ 1 -eq 1\n", "t.conf:1:13: expected ']' to close the '[' at column 4, "
				   "found the end of the line");
	load_err("if [ `uname -a` = 6.1 ]; then A=1; fi\n",
		 "t.conf:1:6: expected a value, "
		 "found the command substitution of 'uname -a': " KNOWN);
	load_err("if [ \"$(hostname)\" = x ]; then A=1; fi\n",
		 "t.conf:1:7: expected a "
		 "value, found the command substitution of 'hostname': " KNOWN);
}
END_TEST

START_TEST(test_refused_conditions)
{
	load_err("if test 1 -eq 1; then A=1; fi\n",
		 "t.conf:1:4: expected '[' after 'if', found "
		 "the command 'test': lockstep never runs commands; a test compares numbers and "
		 "strings only");
	load_err("if grep -q x /etc/os-release; then A=1; fi\n",
		 "t.conf:1:4: expected '[' after "
		 "'if', found the command 'grep': lockstep never runs commands; a test compares "
		 "numbers and strings only");
	load_err("if `true`; then A=1; fi\n",
		 "t.conf:1:4: expected '[' after 'if', found command "
		 "substitution '`': lockstep never runs commands; a test compares numbers and "
		 "strings only");
	load_err("if ! [ 1 = 1 ]; then A=1; fi\n",
		 "t.conf:1:4: expected '[' after 'if', found "
		 "the command '!': lockstep never runs commands; a test compares numbers and "
		 "strings only");
	load_err("if\n", "t.conf:1:3: expected '[' after 'if', found the end of the line");
	load_err("if [ 1 = 1 ] && grep x f; then A=1; fi\n",
		 "t.conf:1:17: expected '[' after "
		 "'&&', found the command 'grep': lockstep never runs commands; a test compares "
		 "numbers and strings only");
	load_err("if [ 1 = 1 ] then A=1; fi\n", "t.conf:1:14: expected ';' or the end of the line "
						"after the test of 'if', found 'then'");
	load_err("if [ 1 = 1 ] | x; then A=1; fi\n", "t.conf:1:14: expected ';' or the end of "
						     "the line after the test of 'if', found '|'");
	load_err("if [ 1 = 1 ]; A=1; fi\n", "t.conf:1:15: expected 'then' after the test of the "
					    "'if' at line 1, found 'A=1'");
	load_err("if [ 1 = 1 ]\nA=1\nfi\n", "t.conf:2:1: expected 'then' after the test of the "
					    "'if' at line 1, found 'A=1'");
	load_err("A=1\nthen B=2\n", "t.conf:2:1: expected an assignment, found 'then' with no "
				    "'if [ ... ];' before it");
	load_err("fi\n", "t.conf:1:1: expected an assignment, found 'fi' with no 'if' open");
	load_err("  else\n", "t.conf:1:3: expected an assignment, found 'else' with no 'if' open");
	load_err("elif [ 1 = 1 ]; then\n", "t.conf:1:1: expected an assignment, found 'elif' with "
					   "no 'if' open");
	load_err("if [ 1 = 1 ]; then\nelse\nelse\nfi\n", "t.conf:3:1: expected 'fi', found a "
							 "second 'else' for the 'if' at line 1");
	load_err("if [ 1 = 1 ]; then\nelse\nelif [ 1 = 1 ]; then\nfi\n",
		 "t.conf:3:1: expected "
		 "'fi', found 'elif' after the 'else' of the 'if' at line 1");
	load_err("if [ 1 = 1 ]; then A=1; B=2; fi\n",
		 "t.conf:1:23: expected end of line, found "
		 "';': a config holds one assignment per line and lockstep never runs commands "
		 "(quote it if it belongs to the value)");
	load_err("if [ 1 = 1 ]; then A=1; fi x\n", "t.conf:1:28: expected ';' or the end of the "
						   "line after 'fi', found 'x'");
	load_err("A=1; fi\n",
		 "t.conf:1:4: expected end of line, found ';': a config holds one "
		 "assignment per line and lockstep never runs commands (quote it if it belongs to "
		 "the value)");
	load_err("[ 1 = 1 ]\n", "t.conf:1:10: expected '&&' or '||' and a statement after the "
				"test: a test alone does nothing");
	load_err("[ 1 = 1 ] &&\n", "t.conf:1:13: expected a statement after '&&'");
	load_err("while [ 1 = 1 ]; do A=1; done\n",
		 "t.conf:1:1: expected an assignment, found "
		 "shell control flow 'while': lockstep configs are assignments only (NAME=value) "
		 "and nothing in them is executed");
	load_err("case $A in\n", "t.conf:1:1: expected 'esac' for this 'case', found the end of "
				 "the file");
	load_err("if [ 1 = 1 ]; then ls; fi\n",
		 "t.conf:1:22: expected '=' after ls, found ';': "
		 "a config holds one assignment per line and lockstep never runs commands");
}
END_TEST

/* `uname -m` and $(uname -m) are read from the fact MACHINE, never run. */
START_TEST(test_machine)
{
	struct utsname u;

	ck_assert_int_eq(uname(&u), 0);
	load_ok("A=`uname -m`\nB=$( uname  -m )\nC=\"on `uname -m`\"\nD=$MACHINE\n");
	value_is("A", u.machine);
	value_is("B", u.machine);
	value_is("D", u.machine);
	ck_assert_str_eq(config_get(cfg, "C") + 3, u.machine);
	config_set_fact(cfg, "MACHINE", "i686");
	load_ok("MACHINE=mine\nE=`uname -m`/$MACHINE\n");
	value_is("E", "i686/mine"); /* a file's MACHINE is not what uname says */
	ck_assert_uint_eq(nwarnings(), 0);
}
END_TEST

/* MMTests' own line, as in config-scheduler-hackbench and -unbound. */
START_TEST(test_mmtests_uname_line)
{
	static const char *const line = "G=32\nif [[ `uname -m` =~ i.86 ]]; then export G=128; fi\n";
	static const struct {
		const char *machine, *g;
	} cases[] = { { "x86_64", "32" },
		      { "i686", "128" },
		      { "i386", "128" },
		      { "aarch64", "32" },
		      { "xi586y", "128" } };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		config_set_fact(cfg, "MACHINE", cases[i].machine);
		load_ok(line);
		value_is("G", cases[i].g);
	}
	load_ok("if [[ $(uname -m) =~ ^(i.86|x86_64)$ ]]; then H=x86; else H=other; fi\n");
	value_is("H", "other"); /* xi586y */
}
END_TEST

START_TEST(test_dbl_tests)
{
	static const struct {
		const char *test;
		bool res;
	} cases[] = {
		{ "[[ 3 -gt 2 ]]", true },
		{ "[[ $NUMCPUS -eq 8 ]]", true },
		{ "[[ -z $EMPTY ]]", true },
		{ "[[ -n \"\" ]]", false },
		{ "[[ x ]]", true },
		{ "[[ $EMPTY ]]", false },
		{ "[[ a == a && b == b ]]", true },
		{ "[[ a == a && b == c ]]", false },
		{ "[[ a == b || b == b ]]", true },
		{ "[[ ! a == b ]]", true },
		{ "[[ ! a == a || ! b == c ]]", true },
		/* && binds tighter than ||, as in bash */
		{ "[[ a == a || b == c && c == d ]]", true },
		{ "[[ a == b ]] || [[ 1 -eq 1 ]] && [ x = x ]", true },
		{ "[[ -n \"$EMPTY\" && $EMPTY -gt 4 ]]", false },
		{ "[[ ] == ] ]]", true },
	};

	load_ok("EMPTY=\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cond_is(cases[i].test, cases[i].res);
	ck_assert_uint_eq(nwarnings(), 0);
}
END_TEST

/* == = != in [[ ]]: the right side is a glob, except where quoted. */
START_TEST(test_glob)
{
	static const struct {
		const char *test;
		bool res;
	} cases[] = {
		{ "[[ abc == a* ]]", true },	    { "[[ abc == b* ]]", false },
		{ "[[ abc = *c ]]", true },	    { "[[ abc != a?d ]]", true },
		{ "[[ abc != a?c ]]", false },	    { "[[ b == [abc] ]]", true },
		{ "[[ x86_64 == x86_* ]]", true },  { "[[ a/b == a*b ]]", true },
		{ "[[ abc == \"a*\" ]]", false },   { "[[ 'a*' == \"a*\" ]]", true },
		{ "[[ abc == 'a'* ]]", true },	    { "[[ abc == a\\* ]]", false },
		{ "[[ a* == a\\* ]]", true },	    { "[[ abc == $P ]]", true },
		{ "[[ abc == \"$P\" ]]", false },   { "[[ $P == \"$P\" ]]", true },
		{ "[[ a*c == $P ]]", true },	    { "[ abc = a* ]", false },
		{ "[[ \"[x]\" == '[x]' ]]", true }, { "[[ x == '[x]' ]]", false },
	};

	load_ok("P=\"a*\"\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cond_is(cases[i].test, cases[i].res);
}
END_TEST

/* =~: POSIX extended, unanchored, quoted parts literal, as in bash. */
START_TEST(test_regex)
{
	static const struct {
		const char *test;
		bool res;
	} cases[] = {
		{ "[[ i686 =~ i.86 ]]", true },
		{ "[[ x86_64 =~ i.86 ]]", false },
		{ "[[ xi386y =~ i.86 ]]", true },
		{ "[[ xi386y =~ ^i.86$ ]]", false },
		{ "[[ i386 =~ ^(i386|i686)$ ]]", true },
		{ "[[ x =~ ^(i386|i686)$ ]]", false },
		{ "[[ i386 =~ \"i.86\" ]]", false },
		{ "[[ i.86 =~ \"i.86\" ]]", true },
		{ "[[ a.b =~ a\\.b ]]", true },
		{ "[[ axb =~ a\\.b ]]", false },
		{ "[[ x86_64 =~ $RE ]]", true },
		{ "[[ x86_64 =~ \"$RE\" ]]", false },
		{ "[[ ^x86 =~ \"$RE\" ]]", true },
		{ "[[ aaa =~ a{2,3} ]]", true },
		{ "[[ 12 =~ ^[[:digit:]]+$ ]]", true },
		{ "[[ 1a =~ ^[0-9]+$ ]]", false },
		{ "[[ ab =~ 'a'b$ ]]", true },
		{ "[[ ab =~ a'$' ]]", false },
		{ "[[ x86_64 =~ 64 && $NUMCPUS -gt 4 ]]", true },
	};

	load_ok("RE=^x86\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cond_is(cases[i].test, cases[i].res);
	ck_assert_uint_eq(nwarnings(), 0);
	/* Not evaluated where not taken, like the integers of -gt. */
	load_ok("if [ 1 = 2 ]; then\n  if [[ a =~ ( ]]; then A=1; fi\nfi\n");
}
END_TEST

START_TEST(test_dbl_errors)
{
	char text[5100];

	load_err("if [[ a =~ i.8(6 ]]; then A=1; fi\n",
		 "t.conf:1:12: expected an extended "
		 "regular expression after =~, found \"i.8(6\": Unmatched ( or \\(");
	load_err("if [[ a =~ a{2,1} ]]; then A=1; fi\n",
		 "t.conf:1:12: expected an extended "
		 "regular expression after =~, found \"a{2,1}\": Invalid content of \\{\\}");
	load_err("R='[a'\nif [[ a =~ x$R ]]; then A=1; fi\n",
		 "t.conf:2:12: expected an extended "
		 "regular expression after =~, found \"x[a\": Unmatched [, [^, [:, [., or [=");
	load_err("R='(a)\\1'\nif [[ aa =~ $R ]]; then A=1; fi\n",
		 "t.conf:2:13: expected an extended "
		 "regular expression after =~, found the back-reference '\\1': back-references are "
		 "not supported");
	load_err("if [[ a =~ (a{100}){100} ]]; then A=1; fi\n",
		 "t.conf:1:12: expected a smaller "
		 "regular expression after =~, found \"(a{100}){100}\": with what {m,n} repeats "
		 "counted so often, it has more than 1000 atoms");
	load_err("if [[ a =~ a{1001} ]]; then A=1; fi\n",
		 "t.conf:1:12: expected a smaller "
		 "regular expression after =~, found \"a{1001}\": with what {m,n} repeats counted "
		 "so often, it has more than 1000 atoms");
	snprintf(text, sizeof(text), "if [[ a =~ %0300d ]]; then A=1; fi\n", 0);
	load_err(text, "t.conf:1:12: expected a regular expression of at most 256 bytes after =~");
	snprintf(text, sizeof(text), "A=%05000d\nif [[ $A =~ x ]]; then B=1; fi\n", 0);
	load_err(text, "t.conf:2:7: expected at most 4096 bytes on the left of =~, found 5000");
	load_err("if [[ 010 -eq 8 ]]; then A=1; fi\n",
		 "t.conf:1:7: expected an integer without "
		 "a leading 0 on the left of -eq, found \"010\": [[ ]] would read it as octal");
	load_err("if [[ a = a -a b = b ]]; then A=1; fi\n",
		 "t.conf:1:13: expected &&, || or "
		 "']]' after the test, found '-a': inside [[ ]] write &&");
	load_err("if [[ a -o b ]]; then A=1; fi\n",
		 "t.conf:1:9: expected one of -eq -ne -gt -ge "
		 "-lt -le = == != =~ or ']]', found '-o': inside [[ ]] write ||");
	load_err("if [[ a < b ]]; then A=1; fi\n",
		 "t.conf:1:9: expected one of -eq -ne -gt -ge "
		 "-lt -le = == != =~ or ']]', found '<': strings are not ordered");
	load_err("if [[ a b ]]; then A=1; fi\n",
		 "t.conf:1:9: expected one of -eq -ne -gt -ge -lt "
		 "-le = == != =~, &&, || or ']]' after the word, found 'b'");
	load_err("if [[ a = a ]; then A=1; fi\n", "t.conf:1:13: expected ']]' to close the '[[' at "
						  "column 4, found ']'");
	load_err("if [[ ]]; then A=1; fi\n", "t.conf:1:7: expected a test, found ']]'");
	load_err("if [[ a = ]]; then A=1; fi\n", "t.conf:1:11: expected a word after =, found "
						 "']]'");
	load_err("if [[ a == b; then A=1; fi\n",
		 "t.conf:1:13: expected a word or ']]' in the "
		 "test, found ';': a config holds one assignment per line and lockstep never runs "
		 "commands (quote it if it belongs to the value)");
	load_err("if [[ ( a = b ) ]]; then A=1; fi\n",
		 "t.conf:1:7: expected a test, found '(': "
		 "parentheses in tests are not supported; use several if blocks");
	load_err("if [[ -f /etc/passwd ]]; then A=1; fi\n",
		 "t.conf:1:7: expected a test of "
		 "numbers or strings, found the file test '-f': lockstep does not look at files, "
		 "so that a config means the same wherever it is read");
}
END_TEST

/* An if still open at the end of the file names the line of the if. */
START_TEST(test_unterminated)
{
	load_err("A=1\n  if [ $A = 1 ]; then\n\tB=2\n", "t.conf:2:3: expected 'fi' for this "
							"'if', found the end of the file");
	load_err("if [ 1 = 1 ]; then\n  if [ 2 = 2 ]; then\n  fi\n\n# end\n",
		 "t.conf:1:1: "
		 "expected 'fi' for this 'if', found the end of the file");
	load_err("A=1\nif [ 1 = 1 ]", "t.conf:2:1: expected 'then' for this 'if', found the end "
				      "of the file");
	/* An if cannot close in the next file. */
	load_err("if [ 1 = 1 ]; then\n", "t.conf:1:1: expected 'fi' for this 'if', found the end "
					 "of the file");
	load_err("fi\n", "t.conf:1:1: expected an assignment, found 'fi' with no 'if' open");
}
END_TEST

START_TEST(test_facts)
{
	load_ok("A=$NUMCPUS/$NUMNODES/$NUMLLCS\n");
	value_is("A", "8/2/2");
	ck_assert_ptr_null(config_get(cfg, "NUMCPUS")); /* facts, not file values */
	load_ok("NUMCPUS=3\nB=$((NUMCPUS + NUM_LOGICAL_CPUS))\n");
	value_is("B", "11");
	load_ok("C=$NUM_CPUS\n");
	ck_assert_str_eq(warning(0), "t.conf:1:3: NUM_CPUS is not set, expanding to \"\"; did "
				     "you mean NUMCPUS?");
}
END_TEST

/* A config with the facts of a node with this many CPUs and nodes. */
static struct config *node(int cpus, int nodes)
{
	struct config *c = config_new();
	char v[16];

	snprintf(v, sizeof(v), "%d", cpus);
	config_set_fact(c, "NUM_LOGICAL_CPUS", v);
	snprintf(v, sizeof(v), "%d", nodes);
	config_set_fact(c, "NUM_NODES", v);
	config_set_fact(c, "NUM_LLCS", v);
	config_set_fact(c, "MEMTOTAL_BYTES", "8589934592");
	return c;
}

/* machine: the fact MACHINE (`uname -m`), or NULL for this machine's. */
static struct config *load_mmtests_on(const char *name, int cpus, int nodes, const char *machine)
{
	struct config *c = node(cpus, nodes);
	struct config_diag err = { 0 };
	const struct config_diag *w;
	const char *root = getenv("LOCKSTEP_SOURCE_ROOT");
	char path[1024], msg[1024];
	int r;

	if (machine)
		config_set_fact(c, "MACHINE", machine);
	snprintf(path, sizeof(path), "%s/tests/data/mmtests/%s", root ? root : "..", name);
	r = config_load_file(c, path, &err);
	config_diag_format(&err, msg, sizeof(msg));
	ck_assert_msg(r == 0, "%s: %s", name, msg);
	ck_assert_uint_eq(config_warnings(c, &w), 0);
	return c;
}

static struct config *load_mmtests(const char *name, int cpus, int nodes)
{
	return load_mmtests_on(name, cpus, nodes, "x86_64");
}

static void expect(struct config *c, const char *name, const char *value)
{
	const char *v = config_get(c, name);

	ck_assert_msg(v != NULL, "%s is not set", name);
	ck_assert_str_eq(v, value);
}

START_TEST(test_mmtests_hackbench)
{
	static const struct {
		int cpus;
		const char *groups;
	} cases[] = { { 1, "4" }, { 8, "32" }, { 74, "296" }, { 75, "296" }, { 256, "296" } };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config *c = load_mmtests("config-scheduler-hackbench", cases[i].cpus, 1);

		expect(c, "HACKBENCH_MAX_GROUPS", cases[i].groups);
		expect(c, "HACKBENCH_MIN_GROUPS", "1");
		expect(c, "HACKBENCH_ITERATIONS", "3");
		expect(c, "HACKBENCH_LOOPS", "10000");
		expect(c, "MMTESTS",
		       "hackbench-process-pipes hackbench-process-sockets "
		       "hackbench-thread-pipes hackbench-thread-sockets");
		expect(c, "MONITORS_GZIP", "proc-vmstat mpstat");
		config_free(c);
		/* MMTests' i386 clamp: [[ `uname -m` =~ i.86 ]] */
		c = load_mmtests_on("config-scheduler-hackbench", cases[i].cpus, 1, "i686");
		expect(c, "HACKBENCH_MAX_GROUPS", "128");
		config_free(c);
	}
	/* ... and with this machine's own uname(2), whatever it is. */
	config_free(load_mmtests_on("config-scheduler-hackbench", 8, 1, NULL));
}
END_TEST

START_TEST(test_mmtests_perfpipe)
{
	struct config *c = load_mmtests("config-scheduler-perfpipe", 2, 1);

	expect(c, "PERFPIPE_LOOPS", "100000");
	expect(c, "PERFPIPE_ITERATIONS", "30");
	ck_assert_ptr_null(config_get(c, "MMTESTS_NUMA_POLICY"));
	ck_assert_ptr_null(config_get(c, "MONITORS_TRACER")); /* commented out */
	config_free(c);
	c = load_mmtests("config-scheduler-perfpipe", 16, 2);
	expect(c, "PERFPIPE_LOOPS", "500000");
	config_free(c);
}
END_TEST

START_TEST(test_mmtests_sysbench_schbench)
{
	static const struct {
		int cpus, nodes;
		const char *threads, *sched_threads;
	} cases[] = { { 1, 1, "4", "1" },
		      { 2, 2, "4", "1" },
		      { 8, 1, "16", "7" },
		      { 64, 2, "128", "31" },
		      { 200, 4, "256", "49" } };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config *c =
			load_mmtests("config-scheduler-sysbench-cpu", cases[i].cpus, cases[i].nodes);

		expect(c, "SYSBENCHCPU_MAX_THREADS", cases[i].threads);
		expect(c, "SYSBENCHCPU_MAX_PRIME", "25000");
		config_free(c);
		c = load_mmtests("config-scheduler-schbench", cases[i].cpus, cases[i].nodes);
		expect(c, "SCHBENCH_THREADS", cases[i].sched_threads);
		expect(c, "SCHBENCH_MESSAGE_THREADS",
		       cases[i].nodes == 1   ? "1"
		       : cases[i].nodes == 2 ? "2"
					     : "4");
		config_free(c);
	}
}
END_TEST

/* What hostd knows of these files; the benchmark parameters stand in for
 * the keys of benchmarks/. */
static const char *const known[] = { "MMTESTS",
				     "MONITORS_GZIP",
				     "MONITORS_WITH_LATENCY",
				     "MONITORS_TRACER",
				     "MONITOR_PERF_EVENTS",
				     "MONITOR_UPDATE_FREQUENCY",
				     NULL };
static const char *const params[] = { "HACKBENCH_", "PERFPIPE_", "SYSBENCHCPU_", "SCHBENCH_", NULL };

START_TEST(test_mmtests_ignored)
{
	struct config *c = load_mmtests("config-scheduler-hackbench", 8, 1);
	const struct config_diag *w;
	char msg[1024];
	const char *root = getenv("LOCKSTEP_SOURCE_ROOT");

	ck_assert_uint_eq(config_check_known_ex(c, known, params, config_mmtests_ignored), 0);
	ck_assert_uint_eq(config_warnings(c, &w), 1);
	config_diag_format(&w[0], msg, sizeof(msg));
	ck_assert_ptr_nonnull(strstr(msg, "tests/data/mmtests/config-scheduler-hackbench: "));
	ck_assert_str_eq(w[0].text, "ignored MMTests settings (lockstep does not act on them): "
				    "RUN_MONITOR, MONITORS_ALWAYS, MMTESTS_THREAD_CUTOFF");
	ck_assert_int_eq(w[0].line, 0);
	(void)root;
	config_free(c);

	/* The old entry point still warns once per unknown name. */
	c = load_mmtests("config-scheduler-schbench", 8, 1);
	ck_assert_uint_eq(config_check_known(c, known, params), 3);
	ck_assert_uint_eq(config_warnings(c, &w), 3);
	ck_assert_str_eq(w[0].text, "unknown name RUN_MONITOR");
	config_free(c);
}
END_TEST

START_TEST(test_check_known_ex)
{
	static const char *const k[] = { "GUEST_COUNT", "RUN_MONITOR", NULL };
	static const char *const ign[] = { "RUN_MONITOR", "MONITORS_ALWAYS", "TESTDISK_*", NULL };
	char text[8192], *p = text;

	load_ok("GUEST_COUNT=1\nRUN_MONITOR=yes\nMONITORS_ALWAYS=\nGEUST_COUNT=2\n");
	load_ok("TESTDISK_PARTITION=/dev/sda6\n");
	/* known wins over ignored; one warning per file; typos still caught */
	ck_assert_uint_eq(config_check_known_ex(cfg, k, NULL, ign), 1);
	ck_assert_uint_eq(nwarnings(), 3);
	ck_assert_str_eq(warning(0), "t.conf:4:1: unknown name GEUST_COUNT, did you mean "
				     "GUEST_COUNT?");
	ck_assert_str_eq(warning(1), "t.conf: ignored MMTests settings (lockstep does not act on "
				     "them): MONITORS_ALWAYS");
	ck_assert_str_eq(warning(2), "t.conf: ignored MMTests settings (lockstep does not act on "
				     "them): TESTDISK_PARTITION");
	config_free(cfg);

	/* A long list is cut short, saying how many are left out. */
	cfg = config_new();
	for (int i = 0; i < 100; i++)
		p += sprintf(p, "TESTDISK_SETTING_NUMBER_%03d=x\n", i);
	load_ok(text);
	ck_assert_uint_eq(config_check_known_ex(cfg, k, NULL, ign), 0);
	ck_assert_uint_eq(nwarnings(), 1);
	ck_assert_ptr_nonnull(strstr(warning(0), "TESTDISK_SETTING_NUMBER_000, "
						 "TESTDISK_SETTING_NUMBER_001, "));
	ck_assert_ptr_nonnull(strstr(warning(0), "_NUMBER_014, and 85 more"));
	ck_assert_uint_le(strlen(warning(0)), 520);
}
END_TEST

/* An ignored entry with a reason ("NAME: why") warns on its own, at its
 * line and column; MMTests' TUNING_SYSCTL is one. */
START_TEST(test_ignored_with_why)
{
	static const char *const ign[] = { "RUN_MONITOR", "LAB_*: the lab's own", NULL };
	static const char *const none[] = { NULL };

	load_ok("RUN_MONITOR=yes\n  export TUNING_SYSCTL=\"vm.dirty_ratio=40\"\nLAB_X=1\n");
	ck_assert_uint_eq(config_check_known_ex(cfg, none, NULL, config_mmtests_ignored), 1);
	ck_assert_uint_eq(nwarnings(), 3);
	ck_assert_str_eq(warning(0),
			 "t.conf:2:10: TUNING_SYSCTL ignored: lockstep writes no "
			 "sysctl on a node (it would stay changed for every later run, and a "
			 "guest's is its own); set it in the guest's image or, on the host, by "
			 "hand");
	ck_assert_str_eq(warning(1), "t.conf:3:1: unknown name LAB_X");
	ck_assert_str_eq(warning(2), "t.conf: ignored MMTests settings (lockstep does not act on "
				     "them): RUN_MONITOR");
	/* a prefix entry with a reason (TUNING_SYSCTL is unknown to this list) */
	ck_assert_uint_eq(config_check_known_ex(cfg, none, NULL, ign), 1);
	ck_assert_str_eq(warning(3), "t.conf:2:10: unknown name TUNING_SYSCTL");
	ck_assert_str_eq(warning(4), "t.conf:3:1: LAB_X ignored: the lab's own");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("config-cond");
	TCase *ops = tcase_create("tests"), *blocks = tcase_create("blocks"),
	      *errors = tcase_create("errors"), *mmtests = tcase_create("mmtests"),
	      *dbl = tcase_create("double-bracket");

	tcase_add_checked_fixture(ops, setup, teardown);
	tcase_add_test(ops, test_integers);
	tcase_add_test(ops, test_strings);
	tcase_add_test(ops, test_short_circuit);
	tcase_add_checked_fixture(blocks, setup, teardown);
	tcase_add_test(blocks, test_elif_else);
	tcase_add_test(blocks, test_nesting);
	tcase_add_test(blocks, test_not_taken);
	tcase_add_checked_fixture(errors, setup, teardown);
	tcase_add_test(errors, test_integer_errors);
	tcase_add_test(errors, test_refused_tests);
	tcase_add_test(errors, test_refused_conditions);
	tcase_add_test(errors, test_unterminated);
	tcase_add_checked_fixture(dbl, setup, teardown);
	tcase_add_test(dbl, test_machine);
	tcase_add_test(dbl, test_mmtests_uname_line);
	tcase_add_test(dbl, test_dbl_tests);
	tcase_add_test(dbl, test_glob);
	tcase_add_test(dbl, test_regex);
	tcase_add_test(dbl, test_dbl_errors);
	tcase_add_checked_fixture(mmtests, setup, teardown);
	tcase_add_test(mmtests, test_facts);
	tcase_add_test(mmtests, test_mmtests_hackbench);
	tcase_add_test(mmtests, test_mmtests_perfpipe);
	tcase_add_test(mmtests, test_mmtests_sysbench_schbench);
	tcase_add_test(mmtests, test_mmtests_ignored);
	tcase_add_test(mmtests, test_check_known_ex);
	tcase_add_test(mmtests, test_ignored_with_why);
	suite_add_tcase(s, ops);
	suite_add_tcase(s, blocks);
	suite_add_tcase(s, errors);
	suite_add_tcase(s, dbl);
	suite_add_tcase(s, mmtests);
	return testlib_main(s);
}
