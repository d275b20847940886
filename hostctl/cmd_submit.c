// SPDX-License-Identifier: GPL-2.0-or-later
/* hostctl submit: every config of the experiment (h.conf, g.conf and each
 * GUEST_CONFIG_<NODE> h.conf names), read here with the submitter's rights
 * and sent whole by name: the service opens no path a user named, and what
 * runs is what they said when submitted, whatever happens to the files
 * later. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "config.h"
#include "config_files.h"
#include "ctl.h"
#include "fileio.h"
#include "svc.h"

static void submit_usage(FILE *f)
{
	fprintf(f,
		"usage: hostctl submit --host-config H.CONF --guest-config G.CONF [--run-name NAME]\n"
		"                      [--results DIR] [--lenient] [--socket PATH] [--json]\n\n"
		"Queues an experiment on hostd --service and prints its ID.  The configs are\n"
		"read now and kept by the service; the run folder DIR/NAME becomes yours.\n\n"
		"options:\n"
		"  --host-config FILE   the host's config (see docs/config.md)\n"
		"  --guest-config FILE  the guests' config\n"
		"  --run-name NAME      the run folder's name (default: a timestamp and the ID)\n"
		"  --results DIR        a folder of yours the service may write into (default: the\n"
		"                       service's RESULTS_ROOT)\n"
		"  --lenient            hostd --lenient: names h.conf does not know are warnings,\n"
		"                       not errors\n"
		"  --socket PATH        the service's socket (default %s)\n"
		"  --json               the queued experiment as JSON\n"
		"  -h, --help           this text\n\n"
		"exit status: 0 queued; 1 refused or no service; 2 usage.\n",
		SVC_DEFAULT_SOCKET);
}

/* The config's text, or NULL after saying why. */
static char *read_config(const char *opt, const char *path)
{
	char *text;
	size_t len;
	int r = fileio_read_all(path, CTL_CONFIG_MAX, &text, &len);
	if (r < 0) {
		fprintf(stderr, "hostctl submit: %s %s: %s\n", opt, path,
			r == -EFBIG ? "larger than 64 KiB" : strerror(-r));
		return NULL;
	}
	if (strlen(text) != len) {
		fprintf(stderr, "hostctl submit: %s %s: holds a NUL byte, not a config\n", opt, path);
		free(text);
		return NULL;
	}
	return text;
}

/* Loads path into c through config_files (recording); 0, or 1 after saying
 * why it cannot be read.  A syntax error is hostd's to report, with its
 * line: the files read so far still go. */
static int load_one(struct config *c, const char *what, const char *path)
{
	struct config_diag d;
	char line[1024];
	int r = config_files_load(c, path, &d);
	if (r == 0 || r == -EINVAL)
		return 0;
	config_diag_format(&d, line, sizeof(line));
	fprintf(stderr, "hostctl submit: %s: %s\n", what, line);
	return 1;
}

/* Every config the experiment reads, read here with the submitter's rights
 * by the names hostd will ask for: h.conf, g.conf, each GUEST_CONFIG_<NODE>
 * and the GUEST_TEMPLATE h.conf names (relative to h.conf's folder, as in
 * hostd/exp/experiment.c and virt_settings.c) and whatever they source.  1 after saying why when one cannot be read. */
static int collect_configs(const char *hname, const char *gname, struct config_files *files)
{
	struct config *h = config_new(), *g = config_new();
	const char **names;
	int r;
	config_files_record(files);
	r = load_one(h, "--host-config", hname) || load_one(g, "--guest-config", gname);
	size_t n = r ? 0 : config_names(h, &names);
	const char *slash = strrchr(hname, '/');
	for (size_t i = 0; i < n && r == 0; i++) {
		const char *v = config_get(h, names[i]);
		if (strncmp(names[i], "GUEST_CONFIG_", 13) != 0 || !v || !*v)
			continue;
		char *path, what[200];
		if (v[0] == '/' || !slash)
			path = strdup(v);
		else if (asprintf(&path, "%.*s/%s", (int)(slash - hname), hname, v) < 0)
			path = NULL;
		if (!path) {
			r = 1;
			break;
		}
		snprintf(what, sizeof(what), "%.150s (in h.conf)", names[i]);
		struct config *node = config_new();
		if (!config_files_get(files, path))
			r = load_one(node, what, path);
		config_free(node);
		free(path);
	}
	/* GUEST_TEMPLATE: a domain XML, read with the configs (not parsed) */
	const char *t = r ? NULL : config_get(h, "GUEST_TEMPLATE");
	if (t && *t) {
		char *path, *text;
		if (t[0] == '/' || !slash)
			path = strdup(t);
		else if (asprintf(&path, "%.*s/%s", (int)(slash - hname), hname, t) < 0)
			path = NULL;
		int e = path ? config_files_read(path, &text, NULL) : -ENOMEM;
		if (e < 0) {
			fprintf(stderr, "hostctl submit: GUEST_TEMPLATE (in h.conf) %s: %s\n",
				path ? path : t, strerror(-e));
			r = 1;
		} else {
			free(text);
		}
		free(path);
	}
	config_files_record(NULL);
	config_free(h);
	config_free(g);
	if (r == 0 && config_files_count(files) > CTL_FILES_MAX + 2) {
		fprintf(stderr,
			"hostctl submit: the configs read %zu files; at most %d go with "
			"a submission\n",
			config_files_count(files), CTL_FILES_MAX + 2);
		r = 1;
	}
	for (size_t i = 0; i < config_files_count(files) && r == 0; i++) {
		const char *name = config_files_name(files, i);
		if (strlen(config_files_get(files, name)) > CTL_CONFIG_MAX) {
			fprintf(stderr, "hostctl submit: %s: larger than 64 KiB\n", name);
			r = 1;
		}
	}
	return r;
}

int cmd_submit(int argc, char **argv)
{
	enum { OPT_HOST = 2000, OPT_GUEST, OPT_RUN, OPT_RESULTS, OPT_LENIENT };
	static const struct option extra[] = {
		{ "host-config", required_argument, NULL, OPT_HOST },
		{ "guest-config", required_argument, NULL, OPT_GUEST },
		{ "run-name", required_argument, NULL, OPT_RUN },
		{ "results", required_argument, NULL, OPT_RESULTS },
		{ "lenient", no_argument, NULL, OPT_LENIENT },
		{ NULL, 0, NULL, 0 },
	};
	struct svc_opts o = { .socket = SVC_DEFAULT_SOCKET };
	const char *host = NULL, *guest = NULL, *run = NULL, *results = NULL, *arg;
	bool lenient = false;
	int c;

	optind = 1;
	while ((c = svc_getopt(argc, argv, &o, extra, &arg)) != -1) {
		switch (c) {
		case OPT_HOST: host = arg; break;
		case OPT_GUEST: guest = arg; break;
		case OPT_RUN: run = arg; break;
		case OPT_RESULTS: results = arg; break;
		case OPT_LENIENT: lenient = true; break;
		case 'h': submit_usage(stdout); return HOSTCTL_EXIT_OK;
		default: submit_usage(stderr); return HOSTCTL_EXIT_USAGE;
		}
	}
	if (!host || !guest || optind < argc) {
		fprintf(stderr, "hostctl submit: --host-config and --guest-config are needed, and "
				"nothing else (see hostctl submit --help)\n");
		return HOSTCTL_EXIT_USAGE;
	}
	char dir[PATH_MAX], hname[PATH_MAX], gname[PATH_MAX];
	if (results && !realpath(results, dir)) {
		fprintf(stderr, "hostctl submit: --results %s: %s\n", results, strerror(errno));
		return HOSTCTL_EXIT_USAGE;
	}
	if (!realpath(host, hname) || !realpath(guest, gname)) {
		fprintf(stderr, "hostctl submit: %s: %s\n", realpath(host, hname) ? guest : host,
			strerror(errno));
		return HOSTCTL_EXIT_USAGE;
	}
	char *h = read_config("--host-config", host),
	     *g = h ? read_config("--guest-config", guest) : NULL;
	if (!h || !g) {
		free(h);
		return HOSTCTL_EXIT_USAGE;
	}
	struct config_files *read = config_files_new();
	if (collect_configs(hname, gname, read)) {
		config_files_free(read);
		free(h);
		free(g);
		return HOSTCTL_EXIT_USAGE;
	}
	json_object *files = json_object_new_object();
	for (size_t i = 0; i < config_files_count(read); i++) {
		const char *name = config_files_name(read, i);
		if (strcmp(name, hname) != 0 && strcmp(name, gname) != 0)
			json_object_object_add(files, name,
					       json_object_new_string(config_files_get(read, name)));
	}
	config_files_free(read);
	json_object *req = ctl_msg_new("submit");
	json_object_object_add(req, "host_config", json_object_new_string(h));
	json_object_object_add(req, "guest_config", json_object_new_string(g));
	json_object_object_add(req, "host_config_name", json_object_new_string(hname));
	json_object_object_add(req, "guest_config_name", json_object_new_string(gname));
	json_object_object_add(req, "files", files);
	if (run)
		json_object_object_add(req, "run_name", json_object_new_string(run));
	if (results)
		json_object_object_add(req, "results", json_object_new_string(dir));
	if (lenient)
		json_object_object_add(req, "lenient", json_object_new_boolean(true));
	free(h);
	free(g);
	json_object *ok;
	if (svc_call(&o, req, NULL, NULL, &ok) < 0)
		return HOSTCTL_EXIT_ERROR;
	json_object *e = json_object_object_get(ok, "experiment");
	if (o.json)
		printf("%s\n",
		       json_object_to_json_string_ext(e, JSON_C_TO_STRING_PLAIN |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
	else
		printf("%lld\n", svc_int(e, "id"));
	if (!o.json && isatty(STDERR_FILENO))
		fprintf(stderr, "queued at position %lld; results will be in %s/%s\n",
			svc_int(e, "position"), svc_str(e, "results"), svc_str(e, "run_name"));
	json_object_put(ok);
	return HOSTCTL_EXIT_OK;
}
