// SPDX-License-Identifier: GPL-2.0-or-later
/* Which agent binaries can go into a guest that has no libc of ours. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"
#include "testlib.h"

START_TEST(test_static_or_not)
{
	const char *build = getenv("LOCKSTEP_BUILD_ROOT");
	ck_assert_ptr_nonnull(build);
	/* the shell is dynamically linked on every Debian */
	ck_assert_int_eq(harness_elf_is_static("/bin/sh"), 0);
	/* a script, a missing file */
	ck_assert_int_eq(harness_elf_is_static("/etc/os-release"), -ENOEXEC);
	ck_assert_int_eq(harness_elf_is_static("/nonexistent/guestagent"), -ENOENT);
#ifdef AGENT_STATIC
	char path[512];
	snprintf(path, sizeof(path), "%s/guestagent/guestagent", build);
	ck_assert_int_eq(harness_elf_is_static(path), 1);
#endif
}
END_TEST

int main(void)
{
	Suite *s = suite_create("harness");
	TCase *tc = tcase_create("elf");
	tcase_add_test(tc, test_static_or_not);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
