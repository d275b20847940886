// SPDX-License-Identifier: GPL-2.0-or-later
/* hostctl logs [-f] ID, hostctl wait ID, hostctl cancel ID. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "ctl.h"
#include "svc.h"

static void on_log(void *ctx, const char *type, json_object *m)
{
	json_object *d;
	(void)ctx;
	if (strcmp(type, "log") || !json_object_object_get_ex(m, "data", &d))
		return;
	fwrite(json_object_get_string(d), 1, (size_t)json_object_get_string_len(d), stdout);
	fflush(stdout);
}

/* Options and the ID of logs, wait and cancel; -1: return *code. */
static int id_command(const char *cmd, int argc, char **argv, const char *usage, struct svc_opts *o,
		      bool *follow, long long *id, int usage_code)
{
	static const struct option extra[] = {
		{ "follow", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	const char *arg;
	int c;
	optind = 1;
	while ((c = svc_getopt(argc, argv, o, follow ? extra : NULL, &arg)) != -1) {
		if (c == 'f' && follow) {
			*follow = true;
			continue;
		}
		fprintf(c == 'h' ? stdout : stderr, usage, SVC_DEFAULT_SOCKET);
		return c == 'h' ? HOSTCTL_EXIT_OK : usage_code;
	}
	if (svc_id_arg(argc, argv, cmd, id) < 0)
		return usage_code;
	return -1;
}

int cmd_logs(int argc, char **argv)
{
	struct svc_opts o = { .socket = SVC_DEFAULT_SOCKET };
	bool follow = false;
	long long id;
	int r = id_command("logs", argc, argv,
			   "usage: hostctl logs [-f] ID [--socket PATH]\n\n"
			   "The output of the experiment's hostd, and the service's lines about it.\n"
			   "  -f, --follow   go on until the experiment ends\n"
			   "  --socket PATH  the service's socket (default %s)\n",
			   &o, &follow, &id, HOSTCTL_EXIT_USAGE);
	if (r >= 0)
		return r;
	json_object *req = ctl_msg_new("logs"), *ok;
	json_object_object_add(req, "id", json_object_new_int64(id));
	json_object_object_add(req, "follow", json_object_new_boolean(follow));
	if (svc_call(&o, req, on_log, NULL, &ok) < 0)
		return HOSTCTL_EXIT_ERROR;
	json_object_put(ok);
	return HOSTCTL_EXIT_OK;
}

int cmd_wait(int argc, char **argv)
{
	struct svc_opts o = { .socket = SVC_DEFAULT_SOCKET };
	long long id;
	int r = id_command("wait", argc, argv,
			   "usage: hostctl wait ID [--socket PATH] [--json]\n\n"
			   "Waits until the experiment ends; exits with its exit code (hostd's: 0\n"
			   "complete, 1 configuration error, 2 degraded, aborted, interrupted or\n"
			   "cancelled), or 4 when that cannot be known (no service, unknown ID).\n"
			   "  --socket PATH  the service's socket (default %s)\n"
			   "  --json         print {\"id\":..,\"state\":..,\"exit_code\":..}\n",
			   &o, NULL, &id, SVC_EXIT_UNKNOWN);
	if (r >= 0)
		return r;
	json_object *req = ctl_msg_new("wait"), *ok;
	json_object_object_add(req, "id", json_object_new_int64(id));
	if (svc_call(&o, req, NULL, NULL, &ok) < 0)
		return SVC_EXIT_UNKNOWN;
	long long code = svc_int(ok, "exit_code");
	if (o.json)
		printf("{\"id\":%lld,\"state\":\"%s\",\"exit_code\":%lld}\n", id,
		       svc_str(ok, "state"), code);
	else if (isatty(STDOUT_FILENO))
		printf("experiment %lld %s, exit code %lld\n", id, svc_str(ok, "state"), code);
	json_object_put(ok);
	return code < 0 || code > 255 ? SVC_EXIT_UNKNOWN : (int)code;
}

int cmd_cancel(int argc, char **argv)
{
	struct svc_opts o = { .socket = SVC_DEFAULT_SOCKET };
	long long id;
	int r = id_command("cancel", argc, argv,
			   "usage: hostctl cancel ID [--socket PATH]\n\n"
			   "A queued experiment is dropped; a running one is stopped (its guests\n"
			   "stopped, its partial results kept, marked interrupted in the manifest).\n"
			   "Yours only; root may cancel any.\n"
			   "  --socket PATH  the service's socket (default %s)\n",
			   &o, NULL, &id, HOSTCTL_EXIT_USAGE);
	if (r >= 0)
		return r;
	json_object *req = ctl_msg_new("cancel"), *ok;
	json_object_object_add(req, "id", json_object_new_int64(id));
	if (svc_call(&o, req, NULL, NULL, &ok) < 0)
		return HOSTCTL_EXIT_ERROR;
	const char *st = svc_str(ok, "state");
	if (o.json)
		printf("{\"id\":%lld,\"state\":\"%s\"}\n", id, st);
	else
		printf("experiment %lld %s\n", id,
		       !strcmp(st, "stopping") ? "is being stopped (hostctl wait to see it end)"
					       : "cancelled");
	json_object_put(ok);
	return HOSTCTL_EXIT_OK;
}
