// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostd's use of hoststate, without the rest of hostd, so that a test can
 * SIGKILL it while it holds host state:
 *
 *   hoststate-driver run STATE_DIR SYSFS_ROOT GOVERNOR [EPP]
 *     recovers a state file left behind, applies, prints "applied N",
 *     then waits for SIGINT or SIGTERM and restores (exit 0).
 *   hoststate-driver recover STATE_DIR SYSFS_ROOT
 *     prints "recovered R" with hoststate_recover's return; exit 0 if R >= 0.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "hoststate.h"
#include "log.h"

static int run(const char *state_dir, const char *root, const char *gov, const char *epp)
{
	struct hoststate_settings s = { .no_turbo = 1 };
	struct hoststate *h;
	sigset_t set;
	int sig, r;

	snprintf(s.governor, sizeof(s.governor), "%s", gov);
	snprintf(s.epp, sizeof(s.epp), "%s", epp ? epp : "");
	/* Blocked before anything changes, as hostd's loop takes them. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	r = hoststate_recover(state_dir, root);
	if (r < 0)
		return 1;
	r = hoststate_apply(state_dir, root, &s, &h);
	if (r < 0)
		return 1;
	printf("applied %u\n", hoststate_count(h));
	fflush(stdout);
	sigwait(&set, &sig);
	return hoststate_restore(h) < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	log_init("hoststate-driver", LOG_LVL_INFO);
	if (argc >= 5 && !strcmp(argv[1], "run"))
		return run(argv[2], argv[3], argv[4], argc > 5 ? argv[5] : NULL);
	if (argc == 4 && !strcmp(argv[1], "recover")) {
		int r = hoststate_recover(argv[2], argv[3]);

		printf("recovered %d\n", r);
		return r < 0 ? 1 : 0;
	}
	fprintf(stderr,
		"usage: %s run STATE_DIR SYSFS_ROOT GOVERNOR [EPP] | recover STATE_DIR "
		"SYSFS_ROOT\n",
		argv[0]);
	return 2;
}
