// SPDX-License-Identifier: GPL-2.0-or-later
#include "submitted.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config_files.h"
#include "log.h"
#include "queue.h"
#include "runas.h"
#include "xalloc.h"

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
			 "capabilities",
			 submitter.user, (unsigned)submitter.uid, (unsigned)submitter.gid,
			 submitter.ngroups);
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
	/* main checked that both are given */
	const char *need[] = { o->host_config, o->guest_config };
	for (size_t i = 0; i < 2; i++)
		if (!config_files_get(files, need[i])) {
			log_error("--config-files %s does not hold %s", config_files, need[i]);
			return -1;
		}
	config_files_use(files);
	return 0;
}

/* A file whose reading by the service tells the submitter nothing they
 * could not read, and which they cannot swap for another: an absolute path
 * without links, every folder on it root's and writable by nobody else,
 * the file root's and readable by all. */
static bool public_file(const char *path, char *why, size_t size)
{
	char real[PATH_MAX], dir[PATH_MAX];
	struct stat st;
	if (path[0] != '/' || !realpath(path, real) || strcmp(real, path) != 0) {
		snprintf(why, size, "not an absolute path without links");
		return false;
	}
	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    !(st.st_mode & S_IROTH) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(why, size, "not a file of root's that everyone may read");
		return false;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	for (char *slash = strrchr(dir, '/'); slash; slash = strrchr(dir, '/')) {
		*slash = '\0';
		const char *d = dir[0] ? dir : "/";
		if (lstat(d, &st) < 0 || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
			snprintf(why, size, "in %.150s, a folder that others than root may change", d);
			return false;
		}
		if (!dir[0])
			break;
	}
	return true;
}

int submitted_check(const struct experiment *e)
{
	char why[256];
	if (!submitter.self[0])
		return 0; /* not another user's experiment (root's may name anything) */
	if (e->ssh_key) {
		log_error("GUEST_SSH_KEY=%s: under hostd --service the service's own key is used "
			  "(hostd --print-public-key); a key file a config names would be read with "
			  "the service's rights: leave GUEST_SSH_KEY out",
			  e->ssh_key);
		return -1;
	}
	if (e->cluster.password_file) {
		log_error("CLUSTER_PASSWORD_FILE=%s: under hostd --service a file a config names "
			  "would be read with the service's rights: leave it out (a Redis without a "
			  "password on a network only the hosts reach)",
			  e->cluster.password_file);
		return -1;
	}
	for (size_t k = 0; k < e->nplans; k++) {
		const char *v = config_get(e->plans[k].gconf, "HARNESS_BINARIES");
		char *copy = xstrdup(v ? v : ""), *save = NULL;
		for (char *w = strtok_r(copy, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
			if (!strchr(w, '/') || public_file(w, why, sizeof(why)))
				continue;
			log_error("%s: HARNESS_BINARIES names %s: %s; under hostd --service a binary "
				  "is named as in PATH, or by a path to a system file",
				  e->plans[k].gconf_path, w, why);
			free(copy);
			return -1;
		}
		free(copy);
	}
	return 0;
}
