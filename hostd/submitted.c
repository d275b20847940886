// SPDX-License-Identifier: GPL-2.0-or-later
#include "submitted.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_files.h"
#include "log.h"
#include "queue.h"
#include "runas.h"

/* for the whole life of the process (the run reads both until its end) */
static struct runas submitter;
static struct config_files *files;

int submitted_setup(const char *run_as, const char *config_files, struct run_options *o)
{
	char why[512];
	if (run_as) {
		int r = runas_init(&submitter, run_as, why, sizeof(why));
		if (r < 0) {
			log_error("%s", why);
			return -1;
		}
		o->runas = &submitter;
		log_info("programs on the host run as %s (uid %u, gid %u, %zu groups), without "
			 "capabilities", submitter.user, (unsigned)submitter.uid,
			 (unsigned)submitter.gid, submitter.ngroups);
	}
	if (!config_files)
		return 0;
	char *h = NULL, *g = NULL;
	int r = queue_files_load(config_files, &files, &h, &g);
	if (r < 0) {
		log_error("--config-files %s: %s", config_files, strerror(-r));
		return -1;
	}
	free(h);
	free(g);
	const char *missing = !o->host_config || !config_files_get(files, o->host_config)
				      ? o->host_config
			      : !o->guest_config || !config_files_get(files, o->guest_config)
				      ? o->guest_config
				      : NULL;
	if (missing || !o->host_config || !o->guest_config) {
		log_error("--config-files %s does not hold %s", config_files,
			  missing ? missing : "--host-config or --guest-config");
		return -1;
	}
	config_files_use(files);
	return 0;
}
