// SPDX-License-Identifier: GPL-2.0-or-later
/* hostd/host/uv_errno.c: libuv's codes into -errno, once. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>

#include "testlib.h"
#include "uv_errno.h"

START_TEST(test_errno_codes_pass_through)
{
	ck_assert_int_eq(errno_from_uv(0), 0);
	ck_assert_int_eq(errno_from_uv(42), 42);
	ck_assert_int_eq(errno_from_uv(UV_EINVAL), -EINVAL);
	ck_assert_int_eq(errno_from_uv(UV_ENOENT), -ENOENT);
	ck_assert_int_eq(errno_from_uv(UV_EADDRINUSE), -EADDRINUSE);
	ck_assert_int_eq(errno_from_uv(-EHWPOISON), -EHWPOISON);
}
END_TEST

START_TEST(test_libuv_own_codes_mapped)
{
	ck_assert_int_eq(errno_from_uv(UV_EOF), -EPIPE);
	ck_assert_int_eq(errno_from_uv(UV_EAI_MEMORY), -ENOMEM);
	ck_assert_int_eq(errno_from_uv(UV_EAI_AGAIN), -EAGAIN);
	ck_assert_int_eq(errno_from_uv(UV_ECHARSET), -EILSEQ);
	ck_assert_int_eq(errno_from_uv(UV_EAI_NONAME), -EIO);
	ck_assert_int_eq(errno_from_uv(UV_UNKNOWN), -EIO);
}
END_TEST

/* What the edge exists for: a real libuv failure reads as strerror does. */
START_TEST(test_real_failure_reads_as_strerror)
{
	uv_loop_t loop;
	uv_fs_t req;
	char dir[256], path[300];

	testlib_tmpdir(dir, sizeof(dir), "uv-errno");
	snprintf(path, sizeof(path), "%s/missing", dir);
	ck_assert_int_eq(uv_loop_init(&loop), 0);
	int r = errno_from_uv(uv_fs_open(&loop, &req, path, O_RDONLY, 0, NULL));
	uv_fs_req_cleanup(&req);
	ck_assert_msg(r == -ENOENT, "open %s: %d (%s), not -ENOENT", path, r, strerror(-r));
	ck_assert_str_eq(strerror(-r), strerror(ENOENT));
	ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("uv_errno");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_errno_codes_pass_through);
	tcase_add_test(tc, test_libuv_own_codes_mapped);
	tcase_add_test(tc, test_real_failure_reads_as_strerror);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
