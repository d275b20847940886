// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Names a guest sends never pick a file path: node, benchmark and metric
 * names outside [A-Za-z0-9._-] (1..63 bytes, no leading dot) are refused
 * before they touch the results folder, and a symlink planted where a
 * node's folder, its monitors folder or the run folder goes is refused
 * rather than followed.  The results writer and the monitor store, as hostd
 * uses them.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "monitor_store.h"
#include "proto.h"
#include "results.h"
#include "testlib.h"

static char top[64], runs[128], elsewhere[128];
static struct results *res;

static void setup(void)
{
	testlib_tmpdir(top, sizeof(top), "names");
	snprintf(runs, sizeof(runs), "%s/results", top);
	/* where a planted symlink points: must stay empty */
	snprintf(elsewhere, sizeof(elsewhere), "%s/elsewhere", top);
	ck_assert_int_eq(mkdir(elsewhere, 0755), 0);
	ck_assert_int_eq(results_open(runs, "run", &res), 0);
}

static void teardown(void)
{
	results_close(res);
	res = NULL;
}

/* How many entries dir holds (. and .. not counted). */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	ck_assert_msg(d != NULL, "%s: %s", dir, strerror(errno));
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static const char *const bad_names[] = {
	"",
	".",
	"..",
	"../x",
	"a/b",
	"/etc",
	".hidden",
	"a\nb",
	"tab\there",
	"\x01",
	"sp ace",
	"caf\xc3\xa9",
	"a\\b",
	/* 64 bytes: one over */
	"0123456789012345678901234567890123456789012345678901234567890123",
};
#define NBAD (sizeof(bad_names) / sizeof(bad_names[0]))

START_TEST(test_bad_node_names_refused)
{
	const char *name = bad_names[_i];
	char *path = NULL;
	ck_assert_int_eq(results_node_dir(res, name, &path), -EINVAL);
	ck_assert_ptr_null(path);
	ck_assert_int_eq(results_append_output(res, name, 1, "x", 1), -EINVAL);
	struct monitor_store *ms = monitor_store_new(res);
	ck_assert_int_eq(monitor_store_put(ms, name, 1, 1, 1, "stat.cpu.user", 1.0, "%"), -EINVAL);
	/* a good node with the bad name as its metric */
	ck_assert_int_eq(monitor_store_put(ms, "guest-1", 1, 1, 1, name, 1.0, "%"), -EINVAL);
	ck_assert_int_eq(monitor_store_close(ms), 0);
	results_flush(res);
	ck_assert_int_eq(results_error(res, NULL), 0);
	/* nothing was made outside nodes/, nor inside it for the bad name */
	ck_assert_int_eq(entries(elsewhere), 0);
	char nodes[256];
	snprintf(nodes, sizeof(nodes), "%s/run/nodes", runs);
	ck_assert_int_eq(entries(nodes), 0);
	ck_assert(!proto_name_valid(name));
}
END_TEST

START_TEST(test_good_names_taken)
{
	static const char *const good[] = {
		"guest-1",
		"host",
		"a",
		"A.b_c-9",
		"x..y",
		"012345678901234567890123456789012345678901234567890123456789012", /* 63 */
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		char *path = NULL;
		ck_assert_msg(results_node_dir(res, good[i], &path) == 0, "%s", good[i]);
		ck_assert_ptr_nonnull(strstr(path, good[i]));
		free(path);
	}
}
END_TEST

/* nodes/<node> planted as a symlink before the run uses it */
START_TEST(test_symlinked_node_folder_refused)
{
	char link[256];
	snprintf(link, sizeof(link), "%s/run/nodes/guest-1", runs);
	ck_assert_int_eq(symlink(elsewhere, link), 0);
	char *path = NULL;
	ck_assert_int_eq(results_node_dir(res, "guest-1", &path), -ENOTDIR);
	ck_assert_ptr_null(path);
	/* raw output for it goes nowhere, and the writer says so */
	ck_assert_int_eq(results_append_output(res, "guest-1", 1, "secret", 6), 0);
	results_flush(res);
	const char *what = NULL;
	ck_assert_int_eq(results_error(res, &what), -ENOTDIR);
	ck_assert_ptr_nonnull(strstr(what, "nodes/guest-1/step-1.out"));
	struct monitor_store *ms = monitor_store_new(res);
	ck_assert_int_lt(monitor_store_put(ms, "guest-1", 1, 1, 1, "stat.cpu.user", 1.0, "%"), 0);
	ck_assert_int_lt(monitor_store_close(ms), 0);
	ck_assert_int_eq(entries(elsewhere), 0);
}
END_TEST

/* nodes/<node>/monitors planted as a symlink inside a real node folder */
START_TEST(test_symlinked_monitors_folder_refused)
{
	ck_assert_int_eq(results_node_dir(res, "guest-2", NULL), 0);
	char link[256];
	snprintf(link, sizeof(link), "%s/run/nodes/guest-2/monitors", runs);
	ck_assert_int_eq(symlink(elsewhere, link), 0);
	struct monitor_store *ms = monitor_store_new(res);
	ck_assert_int_eq(monitor_store_put(ms, "guest-2", 1, 1, 1, "stat.cpu.user", 1.0, "%"),
			 -ENOTDIR);
	ck_assert_int_eq(monitor_store_close(ms), -ENOTDIR);
	ck_assert_int_eq(entries(elsewhere), 0);
}
END_TEST

/* the run folder itself planted as a symlink: refused, never written into */
START_TEST(test_symlinked_run_folder_refused)
{
	char link[256];
	snprintf(link, sizeof(link), "%s/planted", runs);
	ck_assert_int_eq(symlink(elsewhere, link), 0);
	struct results *other = NULL;
	ck_assert_int_eq(results_open(runs, "planted", &other), -EEXIST);
	ck_assert_ptr_null(other);
	ck_assert_int_eq(results_open(runs, "../escape", &other), -EINVAL);
	ck_assert_int_eq(results_open(runs, "a/b", &other), -EINVAL);
	ck_assert_int_eq(entries(elsewhere), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("names");
	TCase *tc = tcase_create("untrusted names");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_bad_node_names_refused, 0, NBAD);
	tcase_add_test(tc, test_good_names_taken);
	tcase_add_test(tc, test_symlinked_node_folder_refused);
	tcase_add_test(tc, test_symlinked_monitors_folder_refused);
	tcase_add_test(tc, test_symlinked_run_folder_refused);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
