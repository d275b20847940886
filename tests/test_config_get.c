// SPDX-License-Identifier: GPL-2.0-or-later
/* The config reader beyond syntax: unset and unknown names with their
 * suggestions, where names were set, the typed getters, and the limits. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config_testlib.h"
#include "testlib.h"
#include "xalloc.h"

static char *repeat(const char *head, const char *unit, int count, const char *mid,
		    const char *unit2, const char *tail)
{
	size_t len = strlen(head) + (strlen(unit) + strlen(unit2)) * (size_t)count + strlen(mid) +
		     strlen(tail) + 1;
	char *s = xmalloc(len);

	strcpy(s, head);
	for (int i = 0; i < count; i++)
		strcat(s, unit);
	strcat(s, mid);
	for (int i = 0; i < count; i++)
		strcat(s, unit2);
	strcat(s, tail);
	return s;
}

START_TEST(test_unset_warnings)
{
	load_ok("MMTESTS_ITERATIONS=3\n"
		"A=$MMTESTS_ITERATION\n"
		"B=\"x ${NUM_NODE}\"\n"
		"C=$((num_nodes + 1))\n"
		"D=$COMPLETELY_DIFFERENT\n");
	value_is("A", "");
	value_is("B", "x ");
	value_is("C", "1");
	ck_assert_uint_eq(nwarnings(), 4);
	ck_assert_str_eq(warning(0), "t.conf:2:3: MMTESTS_ITERATION is not set, expanding to \"\"; "
				     "did you mean MMTESTS_ITERATIONS?");
	ck_assert_str_eq(warning(1), "t.conf:3:6: NUM_NODE is not set, expanding to \"\"; did you "
				     "mean NUM_NODES?");
	/* Names are case-sensitive; the suggestion is not. */
	ck_assert_str_eq(warning(2), "t.conf:4:6: num_nodes is not set, using 0; did you mean "
				     "NUM_NODES?");
	ck_assert_str_eq(warning(3), "t.conf:5:3: COMPLETELY_DIFFERENT is not set, expanding to "
				     "\"\"");
}
END_TEST

START_TEST(test_unset_no_suggestion)
{
	load_ok("D=$COMPLETELY_DIFFERENT\nE=$((Q))\n");
	ck_assert_uint_eq(nwarnings(), 2);
	ck_assert_str_eq(warning(0), "t.conf:1:3: COMPLETELY_DIFFERENT is not set, expanding to \"\"");
	ck_assert_str_eq(warning(1), "t.conf:2:6: Q is not set, using 0");
}
END_TEST

START_TEST(test_check_known)
{
	static const char *const known[] = { "GUEST_COUNT",	   "GUEST_MEMORY",    "MMTESTS",
					     "MMTESTS_ITERATIONS", "BARRIER_TIMEOUT", NULL };
	static const char *const prefixes[] = { "COMMAND_", NULL };

	load_ok("GUEST_COUNT=2\n"
		"GEUST_MEMORY=512\n"		   /* transposition */
		"mmtests_iterations=3\n"	   /* case only */
		"BARRIER_TIMOUT=5\n"		   /* deletion */
		"COMMAND_foo=bar\n"		   /* a prefix */
		"  export HELPER_VARIABLE_XYZ=1\n" /* far from everything */
		"GC=1\n");			   /* short: too far from GUEST_COUNT */
	ck_assert_uint_eq(config_check_known(cfg, known, prefixes), 5);
	ck_assert_uint_eq(nwarnings(), 5);
	ck_assert_str_eq(warning(0), "t.conf:2:1: unknown name GEUST_MEMORY, did you mean "
				     "GUEST_MEMORY?");
	ck_assert_str_eq(warning(1), "t.conf:3:1: unknown name mmtests_iterations, did you mean "
				     "MMTESTS_ITERATIONS?");
	ck_assert_str_eq(warning(2), "t.conf:4:1: unknown name BARRIER_TIMOUT, did you mean "
				     "BARRIER_TIMEOUT?");
	ck_assert_str_eq(warning(3), "t.conf:6:10: unknown name HELPER_VARIABLE_XYZ");
	ck_assert_str_eq(warning(4), "t.conf:7:1: unknown name GC");
}
END_TEST

START_TEST(test_distance)
{
	static const char *const known[] = { "ABCDEFGHIJKL", NULL };

	/* 12 characters: up to 4 edits is close enough, 5 is not. */
	load_ok("ABCDXXXXIJKL=1\n");
	config_check_known(cfg, known, NULL);
	ck_assert_str_eq(warning(0), "t.conf:1:1: unknown name ABCDXXXXIJKL, did you mean "
				     "ABCDEFGHIJKL?");
	load_ok("ABCXXXXXIJKL=1\n");
	config_check_known(cfg, known, NULL);
	ck_assert_str_eq(warning(2), "t.conf:1:1: unknown name ABCXXXXXIJKL");
}
END_TEST

START_TEST(test_names_where)
{
	const char **names;
	const char *file;
	int line;

	load_ok("B=1\nA=2\nB=3\n");
	load_ok("C=4\n");
	ck_assert_uint_eq(config_names(cfg, &names), 3);
	ck_assert_str_eq(names[0], "B");
	ck_assert_str_eq(names[1], "A");
	ck_assert_str_eq(names[2], "C");
	value_is("B", "3");
	ck_assert(config_where(cfg, "B", &file, &line));
	ck_assert_str_eq(file, "t.conf");
	ck_assert_int_eq(line, 3);
	ck_assert(!config_where(cfg, "NUM_NODES", &file, &line));
	ck_assert(!config_where(cfg, "NOPE", NULL, NULL));
	{
		static const char *const alias[] = { "MMTESTS_NAME", "A", "B", NULL };
		static const char *const none[] = { "X", "Y", NULL };

		ck_assert_str_eq(config_first_set(cfg, alias), "A");
		ck_assert_ptr_null(config_first_set(cfg, none));
	}
}
END_TEST

START_TEST(test_get_int)
{
	struct config_diag err;
	char msg[600];
	int64_t v = 77;

	load_ok("\n\n\nGUEST_COUNT=\"many\"\nN=12\nBIG=2000\nNEG=-5\nSP=\" 7 \"\n");
	ck_assert_int_eq(config_get_int(cfg, "N", 1, 1024, &v, &err), 0);
	ck_assert_int_eq(v, 12);
	ck_assert_int_eq(config_get_int(cfg, "SP", 1, 1024, &v, &err), 0);
	ck_assert_int_eq(v, 7);
	ck_assert_int_eq(config_get_int(cfg, "NEG", INT64_MIN, INT64_MAX, &v, &err), 0);
	ck_assert_int_eq(v, -5);
	v = 77;
	ck_assert_int_eq(config_get_int(cfg, "UNSET", 1, 1024, &v, &err), 1);
	ck_assert_int_eq(v, 77);
	ck_assert_int_eq(config_get_int(cfg, "NUM_NODES", 1, 1024, &v, &err), 1);

	ck_assert_int_eq(config_get_int(cfg, "GUEST_COUNT", 1, 1024, &v, &err), -EINVAL);
	config_diag_format(&err, msg, sizeof(msg));
	ck_assert_str_eq(msg, "t.conf:4: GUEST_COUNT=\"many\" is not an integer between 1 and 1024");
	ck_assert_int_eq(config_get_int(cfg, "BIG", 1, 1024, &v, &err), -EINVAL);
	config_diag_format(&err, msg, sizeof(msg));
	ck_assert_str_eq(msg, "t.conf:6: BIG=\"2000\" is not an integer between 1 and 1024");
	ck_assert_int_eq(config_get_int(cfg, "NEG", 0, INT64_MAX, &v, &err), -EINVAL);
	config_diag_format(&err, msg, sizeof(msg));
	ck_assert_str_eq(msg, "t.conf:7: NEG=\"-5\" is not an integer of at least 0");
	ck_assert_int_eq(config_get_int(cfg, "BIG", INT64_MIN, 10, &v, &err), -EINVAL);
	config_diag_format(&err, msg, sizeof(msg));
	ck_assert_str_eq(msg, "t.conf:6: BIG=\"2000\" is not an integer of at most 10");
	ck_assert_int_eq(config_get_int(cfg, "GUEST_COUNT", INT64_MIN, INT64_MAX, &v, &err), -EINVAL);
	config_diag_format(&err, msg, sizeof(msg));
	ck_assert_str_eq(msg, "t.conf:4: GUEST_COUNT=\"many\" is not an integer");
	ck_assert_int_eq(v, 77); /* untouched by errors */
}
END_TEST

START_TEST(test_get_bool)
{
	static const char *const yes[] = { "Y1", "Y2", "Y3", "Y4" }, *const no[] = { "N1", "N2",
										     "N3", "N4" };
	struct config_diag err;
	char msg[600];
	bool b;

	load_ok("Y1=yes\nY2=TRUE\nY3=On\nY4=1\nN1=no\nN2=False\nN3=OFF\nN4=0\nBAD=maybe\n");
	for (int i = 0; i < 4; i++) {
		b = false;
		ck_assert_int_eq(config_get_bool(cfg, yes[i], &b, &err), 0);
		ck_assert(b);
		ck_assert_int_eq(config_get_bool(cfg, no[i], &b, &err), 0);
		ck_assert(!b);
	}
	ck_assert_int_eq(config_get_bool(cfg, "UNSET", &b, &err), 1);
	ck_assert_int_eq(config_get_bool(cfg, "BAD", &b, &err), -EINVAL);
	config_diag_format(&err, msg, sizeof(msg));
	ck_assert_str_eq(msg, "t.conf:9: BAD=\"maybe\" is not a boolean (yes/no, true/false, "
			      "on/off, 1/0)");
}
END_TEST

START_TEST(test_get_seconds)
{
	static const struct {
		const char *text;
		double seconds;
	} good[] = {
		{ "1.5", 1.5 }, { "500ms", 0.5 }, { "30s", 30 }, { "2m", 120 },
		{ "1h", 3600 }, { ".25", 0.25 },  { "3.", 3 },	 { " 4s ", 4 },
	};
	static const char *const bad[] = { "abc", "1.2.3", "-1", "5x", "", "s", "1e3", "inf", "1 s" };
	struct config_diag err;
	char text[64], msg[600];
	double s;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(text, sizeof(text), "T=\"%s\"\n", good[i].text);
		load_ok(text);
		ck_assert_int_eq(config_get_seconds(cfg, "T", 0, 1e9, &s, &err), 0);
		ck_assert_double_eq_tol(s, good[i].seconds, 1e-9);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "T=\"%s\"\n", bad[i]);
		load_ok(text);
		ck_assert_msg(config_get_seconds(cfg, "T", 0, 1e9, &s, &err) == -EINVAL, "%s", bad[i]);
	}
	load_ok("T=2h\n");
	ck_assert_int_eq(config_get_seconds(cfg, "T", 0.1, 60, &s, &err), -EINVAL);
	config_diag_format(&err, msg, sizeof(msg));
	ck_assert_str_eq(msg, "t.conf:1: T=\"2h\" is not a duration between 0.1 and 60 seconds (a "
			      "number with an optional unit ms, s, m or h: 1.5, 500ms, 2m)");
	ck_assert_int_eq(config_get_seconds(cfg, "UNSET", 0, 1, &s, &err), 1);
}
END_TEST

START_TEST(test_get_choice)
{
	static const char *const modes[] = { "tsc", "kvm-clock", "hpet", NULL };
	struct config_diag err;
	char msg[600];
	int i = -1;

	load_ok("A=kvm-clock\nB=TSC\nC=kvm_clock\nD=acpi_pm\n");
	ck_assert_int_eq(config_get_choice(cfg, "A", modes, &i, &err), 0);
	ck_assert_int_eq(i, 1);
	ck_assert_int_eq(config_get_choice(cfg, "B", modes, &i, &err), 0);
	ck_assert_int_eq(i, 0);
	ck_assert_int_eq(config_get_choice(cfg, "C", modes, &i, &err), -EINVAL);
	config_diag_format(&err, msg, sizeof(msg));
	ck_assert_str_eq(msg, "t.conf:3: C=\"kvm_clock\" is not one of tsc, kvm-clock, hpet; did "
			      "you mean kvm-clock?");
	ck_assert_int_eq(config_get_choice(cfg, "D", modes, &i, &err), -EINVAL);
	config_diag_format(&err, msg, sizeof(msg));
	ck_assert_str_eq(msg, "t.conf:4: D=\"acpi_pm\" is not one of tsc, kvm-clock, hpet");
	ck_assert_int_eq(config_get_choice(cfg, "UNSET", modes, &i, &err), 1);
}
END_TEST

START_TEST(test_long_value_in_message)
{
	struct config_diag err;
	char text[256], msg[600];
	int64_t v;

	snprintf(text, sizeof(text), "N=\"%0100d\\\"x\"\n", 7);
	load_ok(text);
	ck_assert_int_eq(config_get_int(cfg, "N", 0, 1, &v, &err), -EINVAL);
	config_diag_format(&err, msg, sizeof(msg));
	/* The value is shown cut short, with its quotes escaped. */
	ck_assert_str_eq(msg, "t.conf:1: N=\"000000000000000000000000000000000000000000000000...\" "
			      "is not an integer between 0 and 1");
	load_ok("T=\"\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t"
		"\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\\\"\"\n");
	ck_assert_int_eq(config_get_int(cfg, "T", 0, 1, &v, &err), -EINVAL);
	config_diag_format(&err, msg, sizeof(msg));
	ck_assert_str_eq(msg, "t.conf:1: T=\"\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t"
			      "\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t\\t"
			      "\\t\\t\\t\\t\\t\\t\\t...\" is not an integer between 0 and 1");
	load_ok("Q=\"a\tb\\\"\"\n");
	ck_assert_int_eq(config_get_int(cfg, "Q", 0, 1, &v, &err), -EINVAL);
	config_diag_format(&err, msg, sizeof(msg));
	ck_assert_str_eq(msg, "t.conf:1: Q=\"a\\tb\\\"\" is not an integer between 0 and 1");
}
END_TEST

START_TEST(test_limit_long_line)
{
	size_t n = 1 << 20;
	char *text = xmalloc(n + 8);

	memcpy(text, "A=", 2);
	memset(text + 2, 'x', n);
	memcpy(text + 2 + n, "\n", 2);
	load_err(text, "t.conf:1:65537: expected a line of at most 65536 bytes");
	free(text);
	ck_assert_ptr_null(config_get(cfg, "A"));
}
END_TEST

START_TEST(test_limit_line_just_fits)
{
	size_t n = 65536 - 4;
	char *text = xmalloc(n + 8);

	memcpy(text, "A='", 3);
	memset(text + 3, 'x', n);
	memcpy(text + 3 + n, "'\n", 3);
	load_ok(text);
	ck_assert_uint_eq(strlen(config_get(cfg, "A")), n);
	free(text);
}
END_TEST

START_TEST(test_limit_value)
{
	size_t n = 40000;
	char *text = xmalloc(n + 32);

	memcpy(text, "A='", 3);
	memset(text + 3, 'x', n);
	memcpy(text + 3 + n, "'\nB=$A$A\n", 10);
	load_err(text, "t.conf:2:5: expected a value of at most 65536 bytes (after expansion)");
	free(text);
}
END_TEST

START_TEST(test_limit_depth)
{
	char *ok = repeat("A=$((", "(", 64, "1", ")", "))\n");
	char *deep = repeat("A=$((", "(", 5000, "1", ")", "))\n");
	char *signs = repeat("A=$((", "-", 5000, "1", "", "))\n");
	char *nested = repeat("A=", "$((", 5000, "1", "))", "\n");

	load_ok(ok);
	value_is("A", "1");
	/* "A=$((" is 5 characters; the 65th '(' is the one too deep. */
	load_err(deep, "t.conf:1:70: expected at most 64 nested parentheses, signs or $((...)) in "
		       "arithmetic");
	load_err(signs, "t.conf:1:70: expected at most 64 nested parentheses, signs or $((...)) "
			"in arithmetic");
	/* The first $(( is the expression itself; the 65th nested one is too deep. */
	load_err(nested, "t.conf:1:198: expected at most 64 nested parentheses, signs or "
			 "$((...)) in arithmetic");
	free(ok);
	free(deep);
	free(signs);
	free(nested);
}
END_TEST

START_TEST(test_limit_names)
{
	size_t cap = 4200 * 16;
	char *text = xmalloc(cap), expect[128];
	size_t o = 0;

	for (int i = 0; i < 4097; i++)
		o += (size_t)snprintf(text + o, cap - o, "N%d=%d\n", i, i);
	snprintf(expect, sizeof(expect),
		 "t.conf:4097:1: expected at most 4096 distinct names; "
		 "N4096 would be one more");
	load_err(text, expect);
	value_is("N4095", "4095");
	/* Setting an existing name again is always fine. */
	load_ok("N0=again\n");
	value_is("N0", "again");
	free(text);
}
END_TEST

START_TEST(test_limit_name_length)
{
	char text[300], expect[128];

	memset(text, 'N', 129);
	strcpy(text + 129, "=1\n");
	snprintf(expect, sizeof(expect), "t.conf:1:129: expected a name of at most 128 characters");
	load_err(text, expect);
}
END_TEST

START_TEST(test_limit_warnings)
{
	char *text = repeat("A=", "$U", 300, "", "", "\n");

	load_ok(text);
	ck_assert_uint_eq(nwarnings(), 257);
	ck_assert_str_eq(warning(0), "t.conf:1:3: U is not set, expanding to \"\"");
	ck_assert_str_eq(warning(256), "t.conf: more than 256 warnings; the rest are not shown");
	free(text);
}
END_TEST

static Suite *config_get_suite(void)
{
	Suite *s = suite_create("config-get");
	TCase *names = tcase_create("names"), *getters = tcase_create("getters");
	TCase *limits = tcase_create("limits");
	TCase *all[] = { names, getters, limits };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		tcase_add_checked_fixture(all[i], setup, teardown);
		suite_add_tcase(s, all[i]);
	}
	tcase_add_test(names, test_unset_warnings);
	tcase_add_test(names, test_unset_no_suggestion);
	tcase_add_test(names, test_check_known);
	tcase_add_test(names, test_distance);
	tcase_add_test(names, test_names_where);
	tcase_add_test(getters, test_get_int);
	tcase_add_test(getters, test_get_bool);
	tcase_add_test(getters, test_get_seconds);
	tcase_add_test(getters, test_get_choice);
	tcase_add_test(getters, test_long_value_in_message);
	tcase_add_test(limits, test_limit_long_line);
	tcase_add_test(limits, test_limit_line_just_fits);
	tcase_add_test(limits, test_limit_value);
	tcase_add_test(limits, test_limit_depth);
	tcase_add_test(limits, test_limit_names);
	tcase_add_test(limits, test_limit_name_length);
	tcase_add_test(limits, test_limit_warnings);
	return s;
}

int main(void)
{
	return testlib_main(config_get_suite());
}
