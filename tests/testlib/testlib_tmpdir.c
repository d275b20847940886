// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	if (remove(path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

/* A folder without write or search permission (tests make those to check
 * errors) would stop its entries' removal: opened up on the way down. */
static int open_dir(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	if (flag == FTW_D || flag == FTW_DNR)
		chmod(path, (st->st_mode & 07777) | S_IRWXU);
	return 0;
}

int testlib_rmtree(const char *path)
{
	int r;

	nftw(path, open_dir, 16, FTW_PHYS);
	r = nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);

	if (r == -1)
		return errno == ENOENT ? 0 : -errno;
	return r;
}

/* Folders to remove at exit, each with the process that made it: a forked
 * child inherits the list but must not remove its parent's folders. */
#define TESTLIB_TMPDIRS_MAX 32

static struct {
	char path[256];
	pid_t owner;
} made[TESTLIB_TMPDIRS_MAX];
static size_t nmade;

static void remove_made(void)
{
	pid_t me = getpid();

	if (getenv("LOCKSTEP_KEEP_TMP"))
		return;
	for (size_t i = 0; i < nmade; i++)
		if (made[i].owner == me)
			testlib_rmtree(made[i].path);
}

void testlib_tmpdir(char *dir, size_t len, const char *name)
{
	static bool registered;
	const char *top = getenv("TMPDIR");
	int n;

	if (!top || !top[0])
		top = "/tmp";
	n = snprintf(dir, len, "%s/%s-XXXXXX", top, name);
	ck_assert_msg(n > 0 && (size_t)n < len && (size_t)n < sizeof(made[0].path),
		      "testlib_tmpdir: '%s/%s-XXXXXX' does not fit in %zu bytes", top, name,
		      len < sizeof(made[0].path) ? len : sizeof(made[0].path));
	ck_assert_msg(mkdtemp(dir) != NULL, "testlib_tmpdir: mkdtemp %s: %s", dir, strerror(errno));
	ck_assert_msg(nmade < TESTLIB_TMPDIRS_MAX,
		      "testlib_tmpdir: more than %d folders in one process (%s)",
		      TESTLIB_TMPDIRS_MAX, dir);
	if (!registered) {
		atexit(remove_made);
		registered = true;
	}
	snprintf(made[nmade].path, sizeof(made[nmade].path), "%s", dir);
	made[nmade].owner = getpid();
	nmade++;
}
