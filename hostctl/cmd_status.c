// SPDX-License-Identifier: GPL-2.0-or-later
/* hostctl status [ID] and hostctl list: what the service has of yours. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "ctl.h"
#include "svc.h"

struct shown {
	bool json, detail;
	size_t n;
	json_object *all; /* --json: the experiments, printed at the end */
};

static void on_exp(void *ctx, const char *type, json_object *m)
{
	struct shown *s = ctx;
	json_object *e;
	if (strcmp(type, "experiment") || !json_object_object_get_ex(m, "experiment", &e))
		return;
	s->n++;
	if (s->json)
		json_object_array_add(s->all, json_object_get(e));
	else
		svc_print_exp(e, s->detail);
}

static int show(const char *cmd, int argc, char **argv, const char *usage)
{
	struct svc_opts o = { .socket = SVC_DEFAULT_SOCKET };
	const char *arg;
	long long id = 0;
	int c;

	optind = 1;
	while ((c = svc_getopt(argc, argv, &o, NULL, &arg)) != -1) {
		FILE *f = c == 'h' ? stdout : stderr;
		fprintf(f, usage, SVC_DEFAULT_SOCKET);
		return c == 'h' ? HOSTCTL_EXIT_OK : HOSTCTL_EXIT_USAGE;
	}
	bool is_status = !strcmp(cmd, "status");
	if (optind < argc && (!is_status || svc_id_arg(argc, argv, cmd, &id) < 0))
		return HOSTCTL_EXIT_USAGE;
	json_object *req = ctl_msg_new(cmd);
	if (id)
		json_object_object_add(req, "id", json_object_new_int64(id));
	struct shown s = { .json = o.json, .detail = id != 0, .all = json_object_new_array() };
	json_object *ok;
	if (svc_call(&o, req, on_exp, &s, &ok) < 0) {
		json_object_put(s.all);
		return HOSTCTL_EXIT_ERROR;
	}
	if (o.json) {
		json_object *out = json_object_new_object();
		json_object_object_add(out, "experiments", s.all);
		if (is_status && !id) {
			json_object_object_add(out, "queued",
					       json_object_new_int64(svc_int(ok, "queued")));
			json_object_object_add(out, "running",
					       json_object_get(json_object_object_get(ok, "running")));
		}
		printf("%s\n",
		       json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN |
								   JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(out);
	} else {
		json_object_put(s.all);
		if (is_status && !id)
			printf("service: %s, %lld queued in all\n",
			       json_object_get_boolean(json_object_object_get(ok, "running"))
				       ? "running an experiment"
				       : "idle",
			       svc_int(ok, "queued"));
		else if (!s.n)
			printf("no experiments of yours\n");
	}
	json_object_put(ok);
	return HOSTCTL_EXIT_OK;
}

int cmd_status(int argc, char **argv)
{
	return show("status", argc, argv,
		    "usage: hostctl status [ID] [--socket PATH] [--json]\n\n"
		    "Without ID: the service's state and your running and queued experiments.\n"
		    "With ID: that experiment: its state, queue position, the step it is at and\n"
		    "whom the barrier waits for, where its results go.\n"
		    "  --socket PATH  the service's socket (default %s)\n"
		    "  --json         JSON: {\"experiments\":[...], ...}\n");
}

int cmd_list(int argc, char **argv)
{
	return show("list", argc, argv,
		    "usage: hostctl list [--socket PATH] [--json]\n\n"
		    "Every experiment of yours the service remembers (root: everyone's), oldest\n"
		    "first.\n"
		    "  --socket PATH  the service's socket (default %s)\n"
		    "  --json         JSON: {\"experiments\":[...]}\n");
}
