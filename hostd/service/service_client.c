// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The control socket's clients.  Who a peer is comes from the kernel
 * (SO_PEERCRED, SO_PEERGROUPS), never from what it says; everything it says
 * is bounded by ctl's decoder and checked field by field.  A client sends
 * one request at a time; "wait" and "logs -f" keep it until the experiment
 * ends.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "config_files.h"
#include "exit_codes.h"
#include "fileio.h"
#include "log.h"
#include "service_priv.h"
#include "xalloc.h"

#define PEER_GROUPS_MAX 256
#define STATUS_FILE_MAX (64 * 1024)

struct write_req {
	uv_write_t req;
	struct proto_buf buf;
};

static void logs_pump(struct client *c);

static void on_client_closed(uv_handle_t *h)
{
	struct client *c = h->data;
	struct service *s = c->svc;
	for (struct client **pp = &s->clients; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	s->nclients--;
	ctl_decoder_free(&c->dec);
	free(c);
}

static void on_watch_closed(uv_handle_t *h)
{
	struct client *c = h->data;
	uv_close((uv_handle_t *)&c->pipe, on_client_closed);
}

static void on_idle_closed(uv_handle_t *h)
{
	struct client *c = h->data;
	uv_close((uv_handle_t *)&c->watch, on_watch_closed);
}

void service_client_close(struct client *c)
{
	if (c->closed)
		return;
	c->closed = true;
	c->wait = CLIENT_CLOSING;
	if (c->log_fd >= 0)
		close(c->log_fd);
	c->log_fd = -1;
	uv_read_stop((uv_stream_t *)&c->pipe);
	c->watching = false;
	/* the timer, the watch, then the pipe: c is freed when all are closed */
	uv_close((uv_handle_t *)&c->idle, on_idle_closed);
}

static void on_written(uv_write_t *req, int status)
{
	struct write_req *w = (struct write_req *)req;
	struct client *c = req->handle->data;
	proto_buf_free(&w->buf);
	free(w);
	if (status < 0) {
		if (status != UV_ECANCELED)
			service_client_close(c);
		return;
	}
	/* a log longer than SERVICE_WRITE_QUEUE_MAX goes on as it drains */
	if (c->wait == CLIENT_FOLLOW || c->wait == CLIENT_LOGS)
		logs_pump(c);
}

static void send_msg(struct client *c, json_object *m)
{
	struct write_req *w = xcalloc(1, sizeof(*w));
	if (ctl_encode(m, &w->buf) < 0) {
		/* our own message: only a log line could be that long, and they are not */
		json_object_put(m);
		free(w);
		return;
	}
	json_object_put(m);
	uv_buf_t b = uv_buf_init(w->buf.data, (unsigned)w->buf.len);
	if (uv_write(&w->req, (uv_stream_t *)&c->pipe, &b, 1, on_written) < 0) {
		proto_buf_free(&w->buf);
		free(w);
		service_client_close(c);
	}
}

/* A client that connects and never completes a request would hold one of
 * SERVICE_CLIENTS_MAX for good.  Bytes that trickle in without a newline do
 * not count: only a whole request restarts the clock. */
static void on_idle_timeout(uv_timer_t *t)
{
	struct client *c = t->data;
	double secs = (double)c->svc->set.idle_timeout_ms / 1000;
	if (c->wait == CLIENT_CLOSING) {
		service_client_close(c); /* its last answer was not read */
		return;
	}
	log_warn("control client %s (uid %u, pid %d): no complete request in %.1f s "
		 "(IDLE_TIMEOUT); hung up",
		 c->user, c->uid, (int)c->pid, secs);
	json_object *m = ctl_msg_new("error");
	json_object_object_add(m, "code", json_object_new_string("ETIMEDOUT"));
	char text[256];
	snprintf(text, sizeof(text), "no complete request in %.1f s: the service hung up", secs);
	json_object_object_add(m, "text", json_object_new_string(text));
	/* written at once if the socket takes it; a peer that does not read
	 * is not waited for */
	send_msg(c, m);
	service_client_close(c);
}

static void idle_start(struct client *c)
{
	if (!c->closed)
		uv_timer_start(&c->idle, on_idle_timeout, c->svc->set.idle_timeout_ms, 0);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
	(void)status;
	service_client_close(req->handle->data);
	free(req);
}

/* The final line of a request.  close: then hang up, once it is written. */
static void send_final(struct client *c, json_object *m, bool close)
{
	send_msg(c, m);
	if (c->closed)
		return;
	c->wait = close ? CLIENT_CLOSING : CLIENT_IDLE;
	/* the next request is owed from now; or, closing, a peer that does
	 * not read the answer is not waited for longer than that */
	idle_start(c);
	if (close) {
		uv_shutdown_t *req = xcalloc(1, sizeof(*req));
		if (uv_shutdown(req, (uv_stream_t *)&c->pipe, on_shutdown) < 0) {
			free(req);
			service_client_close(c);
		}
	}
}

static void reply_error(struct client *c, const char *code, bool close, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void reply_error(struct client *c, const char *code, bool close, const char *fmt, ...)
{
	char text[PROTO_TEXT_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	json_object *m = ctl_msg_new("error");
	json_object_object_add(m, "code", json_object_new_string(code));
	json_object_object_add(m, "text", json_object_new_string(text));
	send_final(c, m, close);
}

/* ---- who is asking ---------------------------------------------------- */

static bool in_group(struct client *c, gid_t want)
{
	if (c->gid == want)
		return true;
	gid_t groups[PEER_GROUPS_MAX];
	socklen_t len = sizeof(groups);
	int fd;
	if (uv_fileno((uv_handle_t *)&c->pipe, &fd) == 0 &&
	    getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == 0) {
		for (size_t i = 0; i < len / sizeof(gid_t); i++)
			if (groups[i] == want)
				return true;
		return false;
	}
	/* older kernels: the groups of the account, not of the process */
	struct passwd *pw = getpwuid(c->uid);
	int n = PEER_GROUPS_MAX;
	if (pw && getgrouplist(pw->pw_name, pw->pw_gid, groups, &n) >= 0)
		for (int i = 0; i < n; i++)
			if (groups[i] == want)
				return true;
	return false;
}

static bool allowed(struct client *c)
{
	if (c->uid == 0)
		return true;
	const char *name = c->svc->set.group;
	struct group *g = name[0] ? getgrnam(name) : NULL;
	return g && in_group(c, g->gr_gid);
}

/* Whether an experiment runs programs on the host (as its submitter): local
 * guests are agent processes on the host, and the host may take part
 * itself.  what says which, for the refusal. */
static bool runs_on_host(const struct config_files *map, const char *hname, char *what, size_t size)
{
	struct config *c = config_new();
	struct config_diag d;
	bool host = true, hrb = false;
	/* from what was sent, never from a path (a file h.conf sources) */
	config_files_use(map);
	int r = config_files_load(c, hname, &d);
	config_files_use(NULL);
	if (r < 0) {
		char line[600];
		config_diag_format(&d, line, sizeof(line));
		snprintf(what, size, "it cannot be told whether it does (%s)", line);
	} else {
		const char *kind = config_get(c, "GUEST_KIND");
		if (!kind || !strcmp(kind, "local"))
			snprintf(what, size,
				 "GUEST_KIND=%s in %s: its guests are agent processes on "
				 "the host",
				 kind ? kind : "local (the default)", hname);
		else if (config_get_bool(c, "HOST_RUNS_BENCHMARKS", &hrb, &d) < 0 || hrb)
			snprintf(what, size,
				 "HOST_RUNS_BENCHMARKS=%s in %s: the host runs the steps "
				 "too",
				 config_get(c, "HOST_RUNS_BENCHMARKS"), hname);
		else
			host = false;
	}
	config_free(c);
	return host;
}

/* SERVICE_HOST_STEPS: who may run steps on the host at all (root always). */
static bool may_run_on_host(struct client *c)
{
	const char *name = c->svc->set.host_steps;
	struct group *g = name[0] ? getgrnam(name) : NULL;
	return c->root || (g && in_group(c, g->gr_gid));
}

static bool visible(const struct client *c, const struct queue_exp *e)
{
	return c->root || e->uid == c->uid;
}

/* ---- answers ---------------------------------------------------------- */

static json_object *exp_json(struct service *s, const struct queue_exp *e)
{
	json_object *o = queue_exp_json(e);
	json_object_object_del(o, "pid_start");
	json_object_object_add(o, "position", json_object_new_int64((int64_t)service_position(s, e)));
	if (e->state == QUEUE_RUNNING) {
		char path[PATH_MAX], *text;
		size_t len;
		queue_path(s->root, e->id, "status.json", path, sizeof(path));
		if (fileio_read_all(path, STATUS_FILE_MAX, &text, &len) == 0) {
			json_object *p = json_tokener_parse(text);
			if (p && json_object_is_type(p, json_type_object))
				json_object_object_add(o, "progress", p);
			else
				json_object_put(p);
			free(text);
		}
	}
	return o;
}

static void send_exp(struct client *c, const struct queue_exp *e)
{
	json_object *m = ctl_msg_new("experiment");
	json_object_object_add(m, "experiment", exp_json(c->svc, e));
	send_msg(c, m);
}

static json_object *ok_ended(const struct queue_exp *e)
{
	json_object *m = ctl_msg_new("ok");
	json_object_object_add(m, "id", json_object_new_int64((int64_t)e->id));
	json_object_object_add(m, "state", json_object_new_string(queue_state_name(e->state)));
	json_object_object_add(m, "exit_code", json_object_new_int(e->exit_code));
	return m;
}

/* The experiment a request names, if the asker may see it; else answered. */
static struct queue_exp *named_exp(struct client *c, json_object *req)
{
	char detail[256];
	uint64_t id;
	int r = ctl_get_u64(req, "id", UINT64_MAX >> 1, &id, detail, sizeof(detail));
	if (r) {
		reply_error(c, "EINVAL", r < 0, "%s", r < 0 ? detail : "field 'id': missing");
		return NULL;
	}
	struct queue_exp *e = service_find(c->svc, id);
	if (!e || !visible(c, e)) {
		reply_error(c, "ENOENT", false,
			    "no experiment %" PRIu64 " of %s (hostctl list shows "
			    "yours)",
			    id, c->user);
		return NULL;
	}
	return e;
}

static void do_submit(struct client *c, json_object *req)
{
	struct service *s = c->svc;
	const char *h = NULL, *g = NULL, *name = "", *results = s->set.results_root;
	const char *hname = "h.conf", *gname = "g.conf";
	json_object *files = NULL;
	bool lenient = false;
	char detail[256], why[1024];
	int r;

	if ((r = ctl_get_str(req, "host_config", CTL_CONFIG_MAX + 1, &h, detail, sizeof(detail))) ||
	    (r = ctl_get_str(req, "guest_config", CTL_CONFIG_MAX + 1, &g, detail, sizeof(detail))) ||
	    (r = ctl_get_str(req, "run_name", PROTO_NAME_MAX, &name, detail, sizeof(detail))) < 0 ||
	    (r = ctl_get_str(req, "results", CTL_PATH_MAX, &results, detail, sizeof(detail))) < 0 ||
	    (r = ctl_get_str(req, "host_config_name", CTL_PATH_MAX, &hname, detail, sizeof(detail))) < 0 ||
	    (r = ctl_get_str(req, "guest_config_name", CTL_PATH_MAX, &gname, detail, sizeof(detail))) < 0 ||
	    (r = ctl_get_files(req, "files", &files, detail, sizeof(detail))) < 0 ||
	    (r = ctl_get_bool(req, "lenient", &lenient, detail, sizeof(detail))) < 0) {
		reply_error(c, "EINVAL",
			    r<0, "%s", r> 0 ? "submit needs host_config and "
					      "guest_config"
					    : detail);
		return;
	}
	if (name[0] && !proto_name_valid(name)) {
		reply_error(c, "EINVAL", false,
			    "run name '%s': use letters, digits, '.', '_' and "
			    "'-' (not starting with '.')",
			    name);
		return;
	}
	if (results[0] != '/') {
		reply_error(c, "EINVAL", false, "results folder '%s': not an absolute path", results);
		return;
	}
	for (const char *p = results; *p; p++)
		/* it goes into log lines and onto root's terminal */
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			reply_error(c, "EINVAL", false,
				    "results folder: a control character (0x%02x) "
				    "at byte %zu; name a folder without one",
				    (unsigned char)*p, (size_t)(p - results));
			return;
		}
	if (!hname[0] || !gname[0] || (!strcmp(hname, gname) && strcmp(h, g))) {
		reply_error(c, "EINVAL", false,
			    "host_config_name '%s' and guest_config_name '%s': "
			    "empty, or one name for two texts",
			    hname, gname);
		return;
	}
	for (const char *p = hname; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			reply_error(c, "EINVAL", false, "host_config_name: a control character");
			return;
		}
	for (const char *p = gname; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			reply_error(c, "EINVAL", false, "guest_config_name: a control character");
			return;
		}
	if (service_queued(s) >= s->set.queue_max) {
		reply_error(c, "EBUSY", false,
			    "the queue is full (QUEUE_MAX=%u in %s): try again "
			    "when some have run",
			    s->set.queue_max, s->opt->settings_path);
		return;
	}
	size_t mine = 0;
	for (size_t i = 0; i < s->n; i++)
		mine += s->exps[i]->state == QUEUE_QUEUED && s->exps[i]->uid == c->uid;
	if (mine >= s->set.user_queue_max) {
		/* so that one submitter cannot fill the queue for everyone */
		reply_error(c, "EBUSY", false,
			    "%s has %zu experiments queued already "
			    "(USER_QUEUE_MAX=%u in %s): try again when some have run",
			    c->user, mine, s->set.user_queue_max, s->opt->settings_path);
		return;
	}
	struct queue_exp *e = xcalloc(1, sizeof(*e));
	e->uid = c->uid;
	e->gid = c->gid;
	snprintf(e->user, sizeof(e->user), "%s", c->user);
	snprintf(e->run_name, sizeof(e->run_name), "%s", name);
	snprintf(e->results, sizeof(e->results), "%s", results);
	e->lenient = lenient;
	e->state = QUEUE_QUEUED;
	e->exit_code = -1;
	e->submitted = (int64_t)time(NULL);
	for (size_t i = 0; i < s->n && name[0]; i++)
		if (!queue_state_final(s->exps[i]->state) && !strcmp(s->exps[i]->run_name, name) &&
		    !strcmp(s->exps[i]->results, results)) {
			reply_error(c, "EEXIST", false,
				    "experiment %" PRIu64 " will write %s/%s "
				    "already: choose another --run-name",
				    s->exps[i]->id, results, name);
			free(e);
			return;
		}
	if ((r = service_results_check(s, e, why, sizeof(why))) < 0) {
		reply_error(c, r == -EEXIST ? "EEXIST" : "EACCES", false, "%s", why);
		free(e);
		return;
	}
	/* every config by the name the configs use for it: the run reads
	 * these, never a path of the submitter's */
	struct config_files *map = config_files_new();
	if (files) {
		json_object_object_foreach(files, fname, ftext)
			config_files_add(map, fname, json_object_get_string(ftext));
	}
	config_files_add(map, hname, h);
	config_files_add(map, gname, g);
	if (!may_run_on_host(c) && runs_on_host(map, hname, why, sizeof(why))) {
		config_files_free(map);
		reply_error(c, "EACCES", false,
			    "%s may not run steps on the host: %s; only root "
			    "and members of group '%s' (SERVICE_HOST_STEPS in %s) may; use guests "
			    "under libvirt (GUEST_KIND=libvirt) or ask an admin",
			    c->user, why, s->set.host_steps[0] ? s->set.host_steps : "(none set)",
			    s->opt->settings_path);
		free(e);
		return;
	}
	r = queue_create(s->root, e, h, g, map, hname, gname);
	config_files_free(map);
	if (r < 0) {
		log_error("cannot save a submission of %s in %s: %s", c->user, s->root, strerror(-r));
		reply_error(c, "EIO", false,
			    "the service cannot save the submission: %s (its log "
			    "says more)",
			    strerror(-r));
		free(e);
		return;
	}
	s->exps = xrealloc(s->exps, (s->n + 1) * sizeof(*s->exps));
	s->exps[s->n++] = e;
	log_info("experiment %" PRIu64 " submitted by %s (uid %u): %s/%s, position %zu", e->id,
		 e->user, e->uid, e->results, e->run_name, service_position(s, e));
	json_object *m = ctl_msg_new("ok");
	json_object_object_add(m, "experiment", exp_json(s, e));
	send_final(c, m, false);
	service_schedule(s);
}

static void do_status(struct client *c, json_object *req)
{
	struct service *s = c->svc;
	json_object *idv;
	if (json_object_object_get_ex(req, "id", &idv)) {
		struct queue_exp *e = named_exp(c, req);
		if (!e)
			return;
		send_exp(c, e);
	} else {
		for (size_t i = 0; i < s->n; i++)
			if (!queue_state_final(s->exps[i]->state) && visible(c, s->exps[i]))
				send_exp(c, s->exps[i]);
	}
	json_object *m = ctl_msg_new("ok");
	json_object_object_add(m, "queued", json_object_new_int64((int64_t)service_queued(s)));
	json_object_object_add(m, "running", json_object_new_boolean(s->cur != NULL));
	send_final(c, m, false);
}

static void do_list(struct client *c)
{
	struct service *s = c->svc;
	for (size_t i = 0; i < s->n; i++)
		if (visible(c, s->exps[i]))
			send_exp(c, s->exps[i]);
	send_final(c, ctl_msg_new("ok"), false);
}

static void do_cancel(struct client *c, json_object *req)
{
	struct service *s = c->svc;
	struct queue_exp *e = named_exp(c, req);
	char reason[128];
	if (!e)
		return;
	snprintf(reason, sizeof(reason), "cancelled by %s", c->user);
	if (queue_state_final(e->state)) {
		reply_error(c, "EALREADY", false, "experiment %" PRIu64 " has ended already (%s)",
			    e->id, queue_state_name(e->state));
		return;
	}
	log_info("experiment %" PRIu64 " of %s: %s (uid %u)", e->id, e->user, reason, c->uid);
	if (e->state == QUEUE_RUNNING) {
		service_run_stop(s, QUEUE_CANCELLED, reason);
		json_object *m = ctl_msg_new("ok");
		json_object_object_add(m, "state", json_object_new_string("stopping"));
		send_final(c, m, false);
		return;
	}
	e->state = QUEUE_CANCELLED;
	e->exit_code = RUN_EXIT_FAILED;
	e->ended = (int64_t)time(NULL);
	snprintf(e->reason, sizeof(e->reason), "%s before it started", reason);
	service_save(s, e);
	send_final(c, ok_ended(e), false);
	service_exp_changed(s, e);
}

static void do_wait(struct client *c, json_object *req)
{
	struct queue_exp *e = named_exp(c, req);
	if (!e)
		return;
	if (queue_state_final(e->state)) {
		send_final(c, ok_ended(e), false);
		return;
	}
	c->wait = CLIENT_WAIT;
	c->exp_id = e->id;
}

static void on_log_changed(uv_fs_event_t *h, const char *name, int events, int status)
{
	(void)name;
	(void)events;
	(void)status;
	logs_pump(h->data);
}

static void logs_pump(struct client *c)
{
	struct service *s = c->svc;
	struct queue_exp *e = service_find(s, c->exp_id);
	bool final = !e || queue_state_final(e->state);
	char buf[CTL_LOG_CHUNK + 1];

	if (c->log_fd < 0 || c->closed)
		return;
	while (uv_stream_get_write_queue_size((uv_stream_t *)&c->pipe) < SERVICE_WRITE_QUEUE_MAX) {
		ssize_t n = read(c->log_fd, buf, CTL_LOG_CHUNK);
		if (n <= 0)
			break;
		size_t ok = ctl_utf8_prefix(buf, (size_t)n);
		if (ok == 0 && !final) {
			lseek(c->log_fd, -n, SEEK_CUR); /* a character still being written */
			break;
		}
		if (ok == 0)
			memset(buf, '?', (size_t)(ok = (size_t)n));
		else if (ok < (size_t)n)
			lseek(c->log_fd, (off_t)ok - n, SEEK_CUR);
		json_object *m = ctl_msg_new("log");
		json_object_object_add(m, "data", json_object_new_string_len(buf, (int)ok));
		send_msg(c, m);
		if (c->closed)
			return;
	}
	if (uv_stream_get_write_queue_size((uv_stream_t *)&c->pipe) >= SERVICE_WRITE_QUEUE_MAX)
		return; /* on_written comes back */
	if (c->wait != CLIENT_FOLLOW || final) {
		close(c->log_fd);
		c->log_fd = -1;
		if (c->watching) {
			c->watching = false;
			uv_fs_event_stop(&c->watch);
		}
		send_final(c, e ? ok_ended(e) : ctl_msg_new("ok"), false);
		return;
	}
	if (!c->watching) {
		char path[PATH_MAX];
		queue_path(s->root, e->id, "hostd.log", path, sizeof(path));
		c->watch.data = c;
		if (uv_fs_event_start(&c->watch, on_log_changed, path, 0) == 0)
			c->watching = true;
	}
}

static void do_logs(struct client *c, json_object *req)
{
	struct service *s = c->svc;
	struct queue_exp *e = named_exp(c, req);
	char detail[256], path[PATH_MAX];
	bool follow = false;
	if (!e)
		return;
	if (ctl_get_bool(req, "follow", &follow, detail, sizeof(detail)) < 0) {
		reply_error(c, "EINVAL", true, "%s", detail);
		return;
	}
	queue_path(s->root, e->id, "hostd.log", path, sizeof(path));
	c->log_fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0640);
	if (c->log_fd < 0) {
		reply_error(c, "EIO", false, "cannot read the log %s: %s", path, strerror(errno));
		return;
	}
	c->exp_id = e->id;
	c->wait = follow ? CLIENT_FOLLOW : CLIENT_LOGS;
	logs_pump(c);
}

void service_client_ended(struct client *c, struct queue_exp *e)
{
	if (c->wait == CLIENT_WAIT && queue_state_final(e->state))
		send_final(c, ok_ended(e), false);
	else if (c->wait == CLIENT_FOLLOW)
		logs_pump(c);
}

/* ---- the connection --------------------------------------------------- */

static bool on_event(void *ctx, enum ctl_event ev, json_object *m, const char *type, int err,
		     const char *detail)
{
	struct client *c = ctx;
	(void)err;
	if (ev == CTL_EV_RESET)
		return true;
	if (ev == CTL_EV_ERROR) {
		log_warn("control client %s (pid %d): refused a message: %s", c->user, (int)c->pid,
			 detail);
		reply_error(c, "EBADMSG", true, "%s", detail);
		return false;
	}
	if (c->wait != CLIENT_IDLE) {
		reply_error(c, "EBUSY", true, "one request at a time on a connection");
		return false;
	}
	if (uv_stream_get_write_queue_size((uv_stream_t *)&c->pipe) >= SERVICE_WRITE_QUEUE_MAX) {
		/* requests sent ahead, answers never read: our memory, not theirs */
		log_warn("control client %s (uid %u, pid %d): over %d bytes of answers unread; "
			 "hung up",
			 c->user, c->uid, (int)c->pid, SERVICE_WRITE_QUEUE_MAX);
		service_client_close(c);
		return false;
	}
	uv_timer_stop(&c->idle);
	if (!strcmp(type, "submit"))
		do_submit(c, m);
	else if (!strcmp(type, "status"))
		do_status(c, m);
	else if (!strcmp(type, "list"))
		do_list(c);
	else if (!strcmp(type, "cancel"))
		do_cancel(c, m);
	else if (!strcmp(type, "logs"))
		do_logs(c, m);
	else if (!strcmp(type, "wait"))
		do_wait(c, m);
	else
		reply_error(c, "EINVAL", true, "'%s' is an answer, not a request", type);
	return c->wait != CLIENT_CLOSING;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	static char slab[64 * 1024]; /* one loop, one read at a time */
	(void)h;
	(void)suggested;
	*buf = uv_buf_init(slab, sizeof(slab));
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
	struct client *c = stream->data;
	if (nread < 0) {
		service_client_close(c);
		return;
	}
	if (c->wait == CLIENT_CLOSING)
		return;
	ctl_decoder_feed(&c->dec, buf->base, (size_t)nread, on_event, c);
}

static void peer_identity(struct client *c)
{
	struct ucred cred = { .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
	socklen_t len = sizeof(cred);
	int fd;
	if (uv_fileno((uv_handle_t *)&c->pipe, &fd) == 0)
		getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len);
	c->uid = cred.uid;
	c->gid = cred.gid;
	c->pid = cred.pid;
	c->root = cred.uid == 0;
	struct passwd *pw = getpwuid(cred.uid);
	if (pw)
		snprintf(c->user, sizeof(c->user), "%s", pw->pw_name);
	else
		snprintf(c->user, sizeof(c->user), "uid-%u", (unsigned)cred.uid);
}

void service_client_accept(struct service *s)
{
	struct client *c = xcalloc(1, sizeof(*c));
	c->svc = s;
	c->log_fd = -1;
	uv_pipe_init(s->loop, &c->pipe, 0);
	uv_fs_event_init(s->loop, &c->watch);
	uv_timer_init(s->loop, &c->idle);
	c->pipe.data = c->watch.data = c->idle.data = c;
	c->next = s->clients;
	s->clients = c;
	s->nclients++;
	if (uv_accept((uv_stream_t *)&s->listener, (uv_stream_t *)&c->pipe) < 0) {
		service_client_close(c);
		return;
	}
	peer_identity(c);
	if (!allowed(c)) {
		log_warn("refused a control connection from %s (uid %u, pid %d): neither root nor in "
			 "group '%s'",
			 c->user, c->uid, (int)c->pid, s->set.group);
		reply_error(c, "EACCES", true,
			    "%s (uid %u) may not use this hostd service: only "
			    "root and members of group '%s' may (an admin can add you: usermod -aG "
			    "%s %s, then log in again)",
			    c->user, c->uid, s->set.group, s->set.group, c->user);
		return;
	}
	if (s->nclients > SERVICE_CLIENTS_MAX) {
		log_warn("refused a control connection from %s: %d clients already", c->user,
			 SERVICE_CLIENTS_MAX);
		reply_error(c, "EBUSY", true, "the service has %d clients already: try again",
			    SERVICE_CLIENTS_MAX);
		return;
	}
	size_t mine = 0;
	for (struct client *o = s->clients; o; o = o->next)
		mine += !o->closed && o->uid == c->uid;
	if (!c->root && mine > SERVICE_CLIENTS_PER_USER) {
		log_warn("refused a control connection from %s (uid %u, pid %d): %d of theirs "
			 "already",
			 c->user, c->uid, (int)c->pid, SERVICE_CLIENTS_PER_USER);
		reply_error(c, "EBUSY", true,
			    "%s has %d connections to the service already (waits "
			    "and follows): end some, then try again",
			    c->user, SERVICE_CLIENTS_PER_USER);
		return;
	}
	idle_start(c);
	uv_read_start((uv_stream_t *)&c->pipe, on_alloc, on_read);
}
