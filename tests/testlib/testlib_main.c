// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testlib.h"

int testlib_main(Suite *s)
{
	const char *top = getenv("TMPDIR");
	char *saved = top ? strdup(top) : NULL;
	char dir[256];
	SRunner *sr = srunner_create(s);
	int failed, r;

	/* Cases fail with _exit, past any atexit: what they leave in their
	 * temporary folders is removed from here, after all of them. */
	snprintf(dir, sizeof(dir), "%s/lockstep-suite-XXXXXX", top && top[0] ? top : "/tmp");
	if (!mkdtemp(dir)) {
		fprintf(stderr, "testlib_main: mkdtemp %s: %s\n", dir, strerror(errno));
		srunner_free(sr);
		free(saved);
		return EXIT_FAILURE;
	}
	/* Passable, not listable: a case may run programs as other users (the
	 * service's submitters, nobody) that must reach a folder of its own
	 * below this one, as they could below /tmp. */
	if (chmod(dir, 0711) < 0)
		fprintf(stderr, "testlib_main: chmod %s: %s\n", dir, strerror(errno));
	setenv("TMPDIR", dir, 1);
	/* Check's default cap on a failure's message is 4 KiB, and a longer
	 * one (a tool's output quoted in it) ends the case with "Message
	 * string too long" and exit 2 instead of the message: seen with
	 * cyclictest's histogram. CK_MAX_MSG_SIZE still overrides this. */
	check_set_max_msg_size(TESTLIB_MAX_MSG);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (saved)
		setenv("TMPDIR", saved, 1);
	else
		unsetenv("TMPDIR");
	free(saved);
	if (getenv("LOCKSTEP_KEEP_TMP")) {
		fprintf(stderr, "testlib_main: kept %s (LOCKSTEP_KEEP_TMP)\n", dir);
		return failed ? EXIT_FAILURE : EXIT_SUCCESS;
	}
	r = testlib_rmtree(dir);
	if (r < 0) {
		fprintf(stderr, "testlib_main: cannot remove %s: %s\n", dir, strerror(-r));
		return EXIT_FAILURE;
	}
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
