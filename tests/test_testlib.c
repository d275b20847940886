// SPDX-License-Identifier: GPL-2.0-or-later
/* tests/testlib itself: the temporary folder and its removal, the tree
 * remover on what tests leave behind, the fake clock. */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"

static void put(const char *dir, const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "w");
	ck_assert_msg(f != NULL, "fopen %s: %s", path, strerror(errno));
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

START_TEST(test_tmpdir_under_tmpdir)
{
	char dir[256];
	const char *top = getenv("TMPDIR");
	struct stat st;

	/* testlib_main gave the cases a TMPDIR of their own */
	ck_assert_ptr_nonnull(top);
	ck_assert_msg(strstr(top, "/lockstep-suite-") != NULL, "TMPDIR is '%s'", top);
	testlib_tmpdir(dir, sizeof(dir), "unit");
	ck_assert_msg(strncmp(dir, top, strlen(top)) == 0 && dir[strlen(top)] == '/',
		      "folder '%s' is not below TMPDIR '%s'", dir, top);
	ck_assert_msg(strstr(dir, "/unit-") != NULL, "folder '%s' lacks its name", dir);
	ck_assert_int_eq(stat(dir, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 0777, 0700);
}
END_TEST

/* A child that makes a folder and exits: the folder goes with it; a child
 * that dies by _exit leaves it (testlib_main removes those later). */
START_TEST(test_tmpdir_removed_at_exit)
{
	char path[256] = "";
	int p[2], status;
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char dir[256];

		testlib_tmpdir(dir, sizeof(dir), "child");
		put(dir, "file", "x");
		if (write(p[1], dir, strlen(dir) + 1) < 0)
			_exit(2);
		if (_i)
			_exit(0);
		exit(0);
	}
	close(p[1]);
	ck_assert_int_gt(read(p[0], path, sizeof(path)), 0);
	close(p[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
	if (_i) {
		ck_assert_msg(exists(path), "%s went away after _exit", path);
		ck_assert_int_eq(testlib_rmtree(path), 0);
	} else {
		ck_assert_msg(!exists(path), "%s is left after exit", path);
	}
}
END_TEST

/* The parent's folder survives a forked child's exit. */
START_TEST(test_tmpdir_not_removed_by_child)
{
	char dir[256];
	int status;
	pid_t pid;

	testlib_tmpdir(dir, sizeof(dir), "parent");
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		exit(0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(exists(dir), "a child's exit removed its parent's %s", dir);
}
END_TEST

START_TEST(test_rmtree_nested_readonly_and_links)
{
	char dir[256], keep[256], path[512];

	testlib_tmpdir(dir, sizeof(dir), "tree");
	testlib_tmpdir(keep, sizeof(keep), "keep");
	put(keep, "precious", "kept");
	snprintf(path, sizeof(path), "%s/a", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/a/b", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	put(dir, "a/b/c", "text");
	put(dir, "top", "text");
	/* a link to a folder outside: removed, never followed */
	snprintf(path, sizeof(path), "%s/a/out", dir);
	ck_assert_int_eq(symlink(keep, path), 0);
	/* a folder nobody may write or search, as error tests leave them */
	snprintf(path, sizeof(path), "%s/a/b", dir);
	ck_assert_int_eq(chmod(path, 0), 0);
	snprintf(path, sizeof(path), "%s/a", dir);
	ck_assert_int_eq(chmod(path, 0500), 0);

	ck_assert_int_eq(testlib_rmtree(dir), 0);
	ck_assert_msg(!exists(dir), "%s is left", dir);
	snprintf(path, sizeof(path), "%s/precious", keep);
	ck_assert_msg(exists(path), "%s went through the link", path);
}
END_TEST

START_TEST(test_rmtree_missing_and_file)
{
	char dir[256], path[512];

	testlib_tmpdir(dir, sizeof(dir), "gone");
	snprintf(path, sizeof(path), "%s/never-made", dir);
	ck_assert_int_eq(testlib_rmtree(path), 0);
	put(dir, "plain", "x");
	snprintf(path, sizeof(path), "%s/plain", dir);
	ck_assert_int_eq(testlib_rmtree(path), 0);
	ck_assert(!exists(path));
}
END_TEST

START_TEST(test_fake_clock)
{
	ck_assert_int_eq(testlib_clock_now(), 0);
	testlib_clock_set(5 * TESTLIB_SEC);
	ck_assert_int_eq(testlib_clock_now(), 5 * TESTLIB_SEC);
	ck_assert_int_eq(testlib_clock_advance(250 * TESTLIB_MSEC), 5250 * TESTLIB_MSEC);
	ck_assert_int_eq(testlib_clock_advance(-TESTLIB_SEC), 4250 * TESTLIB_MSEC);
	ck_assert_int_eq(testlib_clock_now(), 4250 * TESTLIB_MSEC);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("testlib");
	TCase *tc = tcase_create("testlib");

	tcase_add_test(tc, test_tmpdir_under_tmpdir);
	tcase_add_loop_test(tc, test_tmpdir_removed_at_exit, 0, 2);
	tcase_add_test(tc, test_tmpdir_not_removed_by_child);
	tcase_add_test(tc, test_rmtree_nested_readonly_and_links);
	tcase_add_test(tc, test_rmtree_missing_and_file);
	tcase_add_test(tc, test_fake_clock);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
