/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The end of a Check test's main(): runs the suite, 0 when every test
 * passed.  (Older tests spell it out; new ones use this.) */
#ifndef TESTS_CHECK_MAIN_H
#define TESTS_CHECK_MAIN_H

#include <check.h>
#include <stdlib.h>

static inline int check_main_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
