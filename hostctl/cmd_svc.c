// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the service commands share: the connection to hostd --service, one
 * request per connection, answers read through ctl's decoder (bounded like
 * everything a peer sends), and the human form of an experiment.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "ctl.h"
#include "svc.h"

struct call {
	svc_data_fn fn;
	void *ctx;
	json_object *final;
	bool failed;
};

static bool on_event(void *ctx, enum ctl_event ev, json_object *m, const char *type, int err,
		     const char *detail)
{
	struct call *c = ctx;
	(void)err;
	if (ev == CTL_EV_RESET)
		return true;
	if (ev == CTL_EV_ERROR) {
		fprintf(stderr, "hostctl: the service sent a line that is not understood: %s\n",
			detail);
		c->failed = true;
		return false;
	}
	if (!strcmp(type, "ok") || !strcmp(type, "error")) {
		c->final = json_object_get(m);
		return false;
	}
	if (c->fn)
		c->fn(c->ctx, type, m);
	return true;
}

static int connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "hostctl: socket path %s is too long\n", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr,
			"hostctl: cannot reach hostd --service at %s: %s (is it running? "
			"systemctl status hostd; or use --socket PATH)\n",
			path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int svc_call(const struct svc_opts *o, json_object *req, svc_data_fn fn, void *ctx, json_object **ok)
{
	struct proto_buf out = { 0 };
	struct ctl_decoder dec = { 0 };
	struct call c = { .fn = fn, .ctx = ctx };
	int r = ctl_encode(req, &out);
	json_object_put(req);
	*ok = NULL;
	if (r < 0) {
		fprintf(stderr,
			"hostctl: the request is over %d bytes (configs of at most %d bytes "
			"each)\n",
			CTL_LINE_MAX, CTL_CONFIG_MAX);
		proto_buf_free(&out);
		return -1;
	}
	int fd = connect_to(o->socket);
	if (fd < 0) {
		proto_buf_free(&out);
		return -1;
	}
	/* a refusal arrives even when the request could not be written */
	for (size_t off = 0; off < out.len;) {
		ssize_t n = send(fd, out.data + off, out.len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	proto_buf_free(&out);
	char buf[64 * 1024];
	while (!c.final && !c.failed) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "hostctl: the service at %s hung up before answering%s%s\n",
				o->socket, n < 0 ? ": " : "", n < 0 ? strerror(errno) : "");
			c.failed = true;
			break;
		}
		ctl_decoder_feed(&dec, buf, (size_t)n, on_event, &c);
	}
	close(fd);
	ctl_decoder_free(&dec);
	if (c.failed || !c.final) {
		json_object_put(c.final);
		return -1;
	}
	if (!strcmp(svc_str(c.final, "type"), "error")) {
		fprintf(stderr, "hostctl: %s\n", svc_str(c.final, "text"));
		json_object_put(c.final);
		return -1;
	}
	*ok = c.final;
	return 0;
}

const char *svc_str(json_object *o, const char *key)
{
	json_object *v;
	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return "";
	return json_object_get_string(v);
}

long long svc_int(json_object *o, const char *key)
{
	json_object *v;
	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		return 0;
	return (long long)json_object_get_int64(v);
}

int svc_getopt(int argc, char **argv, struct svc_opts *o, const struct option *extra, const char **arg)
{
	enum { OPT_SOCKET = 1000, OPT_JSON };
	struct option all[16] = {
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
	};
	size_t n = 3;
	for (size_t i = 0; extra && extra[i].name && n < 15; i++)
		all[n++] = extra[i];
	for (;;) {
		int c = getopt_long(argc, argv, "hf", all, NULL);
		*arg = optarg;
		if (c == OPT_SOCKET)
			o->socket = optarg;
		else if (c == OPT_JSON)
			o->json = true;
		else
			return c;
	}
}

int svc_id_arg(int argc, char **argv, const char *cmd, long long *id)
{
	char *end;
	if (optind != argc - 1) {
		fprintf(stderr,
			"hostctl %s: one experiment ID is needed (hostctl list shows them)\n", cmd);
		return -1;
	}
	*id = strtoll(argv[optind], &end, 10);
	if (*end || *id <= 0) {
		fprintf(stderr,
			"hostctl %s: '%s' is not an experiment ID (a number, as hostctl "
			"list shows)\n",
			cmd, argv[optind]);
		return -1;
	}
	return 0;
}

static void print_time(const char *label, long long t)
{
	char when[32];
	time_t tt = (time_t)t;
	struct tm tm;
	if (!t)
		return;
	localtime_r(&tt, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	printf("  %-10s %s\n", label, when);
}

void svc_print_exp(json_object *e, bool detail)
{
	const char *state = svc_str(e, "state");
	printf("experiment %lld (%s): %s", svc_int(e, "id"), svc_str(e, "user"), state);
	if (!strcmp(state, "queued"))
		printf(", position %lld in the queue", svc_int(e, "position"));
	else if (strcmp(state, "running"))
		printf(", exit code %lld", svc_int(e, "exit_code"));
	json_object *p;
	if (json_object_object_get_ex(e, "progress", &p)) {
		long long k = svc_int(p, "step"), n = svc_int(p, "nsteps");
		printf(", step %lld of %lld", k, n);
		if (*svc_str(p, "benchmark"))
			printf(" (%s #%lld)", svc_str(p, "benchmark"), svc_int(p, "iteration"));
		json_object *w;
		if (json_object_object_get_ex(p, "waiting_for", &w) &&
		    json_object_is_type(w, json_type_array) && json_object_array_length(w)) {
			size_t nw = json_object_array_length(w);
			printf(", the barrier waits for");
			for (size_t i = 0; i < nw; i++)
				printf("%s %s", i ? "," : "",
				       json_object_get_string(json_object_array_get_idx(w, i)));
			long long more = svc_int(p, "waiting_count") - (long long)nw;
			if (more > 0)
				printf(" (+%lld more)", more);
		}
	}
	printf("\n");
	if (!detail)
		return;
	printf("  %-10s %s/%s\n", "results", svc_str(e, "results"), svc_str(e, "run_name"));
	print_time("submitted", svc_int(e, "submitted"));
	print_time("started", svc_int(e, "started"));
	print_time("ended", svc_int(e, "ended"));
	if (*svc_str(e, "reason"))
		printf("  %-10s %s\n", "reason", svc_str(e, "reason"));
}
