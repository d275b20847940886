// SPDX-License-Identifier: GPL-2.0-or-later
/* The ustar writer on its own: GNU tar and busybox tar read what it writes. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "tar_writer.h"
#include "testlib.h"
#include "xalloc.h"

#define BIG_SIZE (2 * 1024 * 1024 + 123) /* not a multiple of 512 */

static char T[64];

static char *path(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *path(const char *fmt, ...)
{
	char rel[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	return xasprintf("%s/%s", T, rel);
}

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	char *cmd;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	ck_assert_int_ne(vasprintf(&cmd, fmt, ap), -1);
	va_end(ap);
	rc = system(cmd);
	ck_assert_msg(rc == 0, "`%s` failed: %d", cmd, rc);
	free(cmd);
}

static void setup(void)
{
	testlib_tmpdir(T, sizeof(T), "tar");
}

static int fd_sink(void *opaque, const void *buf, size_t len)
{
	return fileio_write_all(*(int *)opaque, buf, len);
}

START_TEST(test_tar_names)
{
	char long_ok[300], comp[120];

	ck_assert_int_eq(tar_writer_check_name("a/b/c"), 0);
	ck_assert_int_eq(tar_writer_check_name("../x"), -EINVAL);
	ck_assert_int_eq(tar_writer_check_name("a/../x"), -EINVAL);
	ck_assert_int_eq(tar_writer_check_name("/etc/passwd"), -EINVAL);
	ck_assert_int_eq(tar_writer_check_name("a//b"), -EINVAL);
	ck_assert_int_eq(tar_writer_check_name("a/./b"), -EINVAL);
	ck_assert_int_eq(tar_writer_check_name("a/"), -EINVAL);
	ck_assert_int_eq(tar_writer_check_name(""), -EINVAL);
	ck_assert_int_eq(tar_writer_check_name("a\nb"), -EINVAL);
	memset(long_ok, 'x', 260);
	long_ok[260] = '\0';
	ck_assert_int_eq(tar_writer_check_name(long_ok), -ENAMETOOLONG);

	/* fits the length limit but has no slash to split at */
	struct tar_writer tw;
	int fd = open("/dev/null", O_WRONLY);
	tar_writer_init(&tw, fd_sink, &fd, 0);
	memset(comp, 'y', 101);
	comp[101] = '\0';
	ck_assert_int_eq(tar_writer_add_data(&tw, comp, 0644, "x", 1), -ENAMETOOLONG);
	ck_assert_int_eq(tar_writer_add_data(&tw, "ok", 010644, "x", 1), -EINVAL);
	ck_assert_int_eq(tw.error, 0); /* refused before a byte went out */
	close(fd);
}
END_TEST

START_TEST(test_tar_extracts)
{
	char *dir = path("tar"), *arc = path("tar/a.tar"), *big = path("tar/big");
	char name100[101], deep[200], *deep_dir;
	struct tar_writer tw;
	int fd;

	sh("mkdir -p %s/gnu %s/bb && head -c %d /dev/urandom > %s", dir, dir, BIG_SIZE, big);
	memset(name100, 'n', 100);
	name100[100] = '\0';
	/* 90 + 1 + 90 bytes: only fits with the prefix field */
	snprintf(deep, sizeof(deep), "%.*s/%.*s", 90,
		 "ppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp",
		 90,
		 "fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff");
	deep_dir = xstrndup(deep, 90);

	fd = open(arc, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	tar_writer_init(&tw, fd_sink, &fd, 1700000000);
	ck_assert_int_eq(tar_writer_add_dir(&tw, "lib", 0755), 0);
	ck_assert_int_eq(tar_writer_add_file(&tw, "lib/big", 0600, big), 0);
	ck_assert_int_eq(tar_writer_add_data(&tw, "cfg", 0644, "A=1\n", 4), 0);
	ck_assert_int_eq(tar_writer_add_data(&tw, "empty", 0644, NULL, 0), 0);
	ck_assert_int_eq(tar_writer_add_data(&tw, name100, 0755, "hundred", 7), 0);
	ck_assert_int_eq(tar_writer_add_dir(&tw, deep_dir, 0700), 0);
	ck_assert_int_eq(tar_writer_add_data(&tw, deep, 0644, "deep", 4), 0);
	ck_assert_int_eq(tar_writer_add_file(&tw, "missing", 0644, "/nonexistent"), -ENOENT);
	ck_assert_int_eq(tw.error, 0); /* nothing was sent for it */
	ck_assert_int_eq(tar_writer_finish(&tw), 0);
	close(fd);
	ck_assert_uint_eq(tw.bytes % 512, 0);

	/* GNU tar and busybox tar both read it back, names, modes and bytes */
	sh("tar -tf %s | grep -qx lib/big", arc);
	sh("tar -xf %s -C %s/gnu && /bin/busybox tar -xf %s -C %s/bb", arc, dir, arc, dir);
	for (int i = 0; i < 2; i++) {
		const char *x = i ? "bb" : "gnu";

		sh("cmp %s %s/%s/lib/big", big, dir, x);
		sh("test \"$(cat %s/%s/cfg)\" = A=1 && test ! -s %s/%s/empty", dir, x, dir, x);
		sh("test \"$(cat %s/%s/%s)\" = hundred", dir, x, name100);
		sh("test \"$(cat %s/%s/%s)\" = deep", dir, x, deep);
		sh("test \"$(stat -c %%a %s/%s/lib/big)\" = 600", dir, x);
		sh("test \"$(stat -c %%a %s/%s/%s)\" = 755", dir, x, name100);
		sh("test \"$(stat -c %%a %s/%s/%s)\" = 700", dir, x, deep_dir);
	}
	free(deep_dir);
	free(big);
	free(arc);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("tar_writer");
	TCase *tc = tcase_create("tar");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_tar_names);
	tcase_add_test(tc, test_tar_extracts);
	suite_add_tcase(su, tc);
	return testlib_main(su);
}
