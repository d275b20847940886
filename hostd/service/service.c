// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostd --service: the loop, the control socket, signals, and the order of
 * the queue.  One experiment at a time owns the host; the rest wait in
 * STATE_DIR/service, which is all the state there is, so that a restart
 * (or a SIGKILL) loses nothing but the run that was cut short.
 */
#include "service.h"

#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "fileio.h"
#include "log.h"
#include "sd_notify.h"
#include "service_priv.h"
#include "uv_errno.h"
#include "xalloc.h"

struct queue_exp *service_find(struct service *s, uint64_t id)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->exps[i]->id == id)
			return s->exps[i];
	return NULL;
}

size_t service_position(struct service *s, const struct queue_exp *e)
{
	size_t pos = 0;
	if (e->state != QUEUE_QUEUED)
		return 0;
	for (size_t i = 0; i < s->n && s->exps[i] != e; i++)
		pos += s->exps[i]->state == QUEUE_QUEUED;
	return pos + 1;
}

size_t service_queued(struct service *s)
{
	size_t k = 0;
	for (size_t i = 0; i < s->n; i++)
		k += s->exps[i]->state == QUEUE_QUEUED;
	return k;
}

void service_save(struct service *s, struct queue_exp *e)
{
	int r = queue_save(s->root, e);
	if (r < 0)
		log_error("cannot write experiment %" PRIu64 " to %s/exp/%" PRIu64
			  "/experiment.json: %s; a restart may not know its state",
			  e->id, s->root, e->id, strerror(-r));
}

void service_publish_status(struct service *s)
{
	char text[256];
	size_t q = service_queued(s);
	if (s->stopping)
		snprintf(text, sizeof(text), "STATUS=stopping, %zu queued", q);
	else if (s->cur)
		snprintf(text, sizeof(text), "STATUS=running experiment %" PRIu64 " of %s, %zu queued",
			 s->cur->id, s->cur->user, q);
	else
		snprintf(text, sizeof(text), "STATUS=idle, %zu queued", q);
	sdnotify_send(text);
}

void service_exp_changed(struct service *s, struct queue_exp *e)
{
	for (struct client *c = s->clients, *next; c; c = next) {
		next = c->next; /* a client may leave */
		if (c->exp_id == e->id)
			service_client_ended(c, e);
	}
	service_publish_status(s);
}

/* Forgets the oldest ended experiments beyond KEEP_FINISHED (their results
 * stay where they are). */
static void trim_finished(struct service *s)
{
	size_t ended = 0;
	for (size_t i = 0; i < s->n; i++)
		ended += queue_state_final(s->exps[i]->state);
	for (size_t i = 0; i < s->n && ended > s->set.keep_finished;) {
		struct queue_exp *e = s->exps[i];
		if (!queue_state_final(e->state)) {
			i++;
			continue;
		}
		int r = queue_remove(s->root, e->id);
		if (r < 0) {
			log_warn("cannot remove experiment %" PRIu64 " from %s: %s", e->id, s->root,
				 strerror(-r));
			i++;
			ended--;
			continue;
		}
		free(e);
		memmove(&s->exps[i], &s->exps[i + 1], (s->n - i - 1) * sizeof(*s->exps));
		s->n--;
		ended--;
	}
}

static void on_handle_closed(uv_handle_t *h)
{
	(void)h;
}

static void close_all(struct service *s)
{
	for (struct client *c = s->clients, *next; c; c = next) {
		next = c->next;
		service_client_close(c);
	}
	uv_close((uv_handle_t *)&s->sigterm, on_handle_closed);
	uv_close((uv_handle_t *)&s->sigint, on_handle_closed);
	uv_close((uv_handle_t *)&s->sighup, on_handle_closed);
	uv_close((uv_handle_t *)&s->sigchld, on_handle_closed);
	service_run_close(s);
}

void service_schedule(struct service *s)
{
	if (s->cur)
		return;
	if (s->stopping) {
		close_all(s);
		return;
	}
	for (size_t i = 0; i < s->n && !s->cur; i++)
		if (s->exps[i]->state == QUEUE_QUEUED)
			service_run_start(s, s->exps[i]);
	trim_finished(s);
	service_publish_status(s);
}

static void stop_listening(struct service *s)
{
	if (!s->listening)
		return;
	s->listening = false;
	uv_close((uv_handle_t *)&s->listener, on_handle_closed);
	if (s->socket_bound)
		unlink(s->opt->socket_path);
}

static void on_stop_signal(uv_signal_t *h, int signum)
{
	struct service *s = h->data;
	if (s->stopping)
		return;
	s->stopping = true;
	log_info("%s: stopping%s", strsignal(signum),
		 s->cur ? "; the running experiment is interrupted, the queue kept" : "");
	sdnotify_send("STOPPING=1");
	service_publish_status(s);
	stop_listening(s);
	if (s->cur)
		service_run_stop(s, QUEUE_INTERRUPTED, "the service was stopped while it ran");
	else
		service_schedule(s);
}

static int load_settings(struct service *s)
{
	const char *path = s->opt->settings_path;
	struct service_settings set;
	struct config_diag d;
	char line[1024];
	int r = service_settings_load(path, &set, &d);
	if (r < 0) {
		config_diag_format(&d, line, sizeof(line));
		log_error("%s", line);
		return r;
	}
	if (r == 0 && d.text[0]) {
		config_diag_format(&d, line, sizeof(line));
		log_warn("%s", line);
	}
	if (s->opt->group)
		snprintf(set.group, sizeof(set.group), "%s", s->opt->group);
	if (set.group[0] && !getgrnam(set.group))
		log_warn("group '%s' (SERVICE_GROUP in %s or --group) does not exist: only root may "
			 "use the service",
			 set.group, path);
	r = fileio_mkdir_p(set.results_root, 0755);
	if (r < 0)
		log_warn("cannot make RESULTS_ROOT %s: %s; submissions without --results will fail",
			 set.results_root, strerror(-r));
	s->set = set;
	log_info("settings%s%s%s: group '%s', QUEUE_MAX=%u, USER_QUEUE_MAX=%u, KEEP_FINISHED=%u, "
		 "RESULTS_ROOT=%s, IDLE_TIMEOUT=%.1fs, STOP_TIMEOUT=%.1fs",
		 r == 1 ? " (no " : " from ", path, r == 1 ? ")" : "", set.group, set.queue_max,
		 set.user_queue_max, set.keep_finished, set.results_root,
		 (double)set.idle_timeout_ms / 1000, (double)set.stop_timeout_ms / 1000);
	if (set.hostd_binary[0])
		log_warn("HOSTD_BINARY=%s in %s: experiments run that, not this hostd (a setting "
			 "for tests only)",
			 set.hostd_binary, path);
	return 0;
}

static void on_sighup(uv_signal_t *h, int signum)
{
	struct service *s = h->data;
	(void)signum;
	if (load_settings(s) < 0)
		log_warn("SIGHUP: kept the settings in force");
}

static void on_sigchld(uv_signal_t *h, int signum)
{
	(void)signum;
	service_run_sigchld(h->data);
}

static void on_connection(uv_stream_t *server, int status)
{
	struct service *s = server->data;
	if (status < 0) {
		log_warn("control socket: %s", strerror(-errno_from_uv(status)));
		return;
	}
	service_client_accept(s);
}

/* A socket file left by a service that died is removed; one that answers
 * belongs to a live service, and two would both run experiments. */
static int clear_stale_socket(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	int err = errno;
	close(fd);
	if (r == 0)
		return -EADDRINUSE;
	if (err == ECONNREFUSED && unlink(path) < 0)
		return -errno;
	return 0;
}

static int start_listening(struct service *s)
{
	int fd, r = sdnotify_listen_fd(&fd);
	if (r < 0) {
		log_error("socket activation: systemd passed LISTEN_FDS that are not one stream "
			  "socket; check hostd.socket (one ListenStream=)");
		return r;
	}
	uv_pipe_init(s->loop, &s->listener, 0);
	s->listener.data = s;
	if (r == 1) {
		r = errno_from_uv(uv_pipe_open(&s->listener, fd));
		if (r == 0)
			log_info("listening on the socket systemd passed");
	} else {
		const char *path = s->opt->socket_path;
		char *dir = xstrdup(path), *slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = '\0';
			fileio_mkdir_p(dir, 0755);
		}
		free(dir);
		r = clear_stale_socket(path);
		if (r == -EADDRINUSE) {
			log_error("another hostd --service answers on %s: stop it first, or use --socket",
				  path);
			return r;
		}
		r = errno_from_uv(uv_pipe_bind(&s->listener, path));
		/* anyone may connect: who may do what is SO_PEERCRED's business,
		 * and a refusal says why, where a mode would say EACCES */
		if (r == 0) {
			chmod(path, 0666);
			s->socket_bound = true;
		}
		if (r == 0)
			log_info("listening on %s", path);
	}
	if (r == 0)
		r = errno_from_uv(uv_listen((uv_stream_t *)&s->listener, 16, on_connection));
	if (r < 0) {
		log_error("control socket %s: %s", s->opt->socket_path, strerror(-r));
		uv_close((uv_handle_t *)&s->listener, NULL);
		return r;
	}
	s->listening = true;
	return 0;
}

static void load_bad(void *ctx, const char *path, int err)
{
	(void)ctx;
	log_error("skipped %s: %s (move it away once read)", path,
		  err == -EBADMSG ? "not an experiment of this hostd" : strerror(-err));
}

static void free_service(struct service *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->exps[i]);
	free(s->exps);
}

int service_main(const struct service_options *opt)
{
	static struct service s; /* handles live as long as the loop */
	uv_loop_t loop;
	int r;

	memset(&s, 0, sizeof(s));
	s.opt = opt;
	s.pidfd = -1;
	s.loop = &loop;
	snprintf(s.root, sizeof(s.root), "%s/service", opt->state_dir);
	/* the path, not /proc/self/exe: what a child of a child (or valgrind's
	 * client) would find there is not necessarily us */
	ssize_t len = readlink("/proc/self/exe", s.self, sizeof(s.self) - 1);
	s.self[len > 0 ? len : 0] = '\0';
	if (len <= 0)
		snprintf(s.self, sizeof(s.self), "/proc/self/exe");
	if ((r = fileio_mkdir_p(s.root, 0700)) < 0) {
		log_error("cannot make the queue's folder %s: %s (use --state-dir DIR)", s.root,
			  strerror(-r));
		return 1;
	}
	/* what experiments run on the host runs as their submitters: the
	 * queue (everyone's configs and logs) and the key are not theirs to
	 * read.  The state folder stays traversable (RESULTS_ROOT may be in
	 * it), not readable. */
	struct stat st;
	if (chmod(s.root, 0700) < 0 || stat(opt->state_dir, &st) < 0 ||
	    ((st.st_mode & 0066) && chmod(opt->state_dir, st.st_mode & 07711) < 0))
		log_warn("cannot keep %s (and %s) from other users: %s", opt->state_dir, s.root,
			 strerror(errno));
	if (load_settings(&s) < 0)
		return 1;
	if ((r = queue_load_all(s.root, &s.exps, &s.n, load_bad, NULL)) < 0) {
		log_error("cannot read the queue in %s: %s", s.root, strerror(-r));
		return 1;
	}
	/* a peer that hangs up must show as EPIPE, not end the service */
	signal(SIGPIPE, SIG_IGN);
	uv_loop_init(&loop);
	uv_signal_init(&loop, &s.sigchld);
	s.sigchld.data = &s;
	uv_signal_start(&s.sigchld, on_sigchld, SIGCHLD);
	service_run_init(&s);
	for (size_t i = 0; i < s.n; i++)
		if (s.exps[i]->state == QUEUE_RUNNING)
			service_run_recover(&s, s.exps[i]);
	if (start_listening(&s) < 0) {
		/* an orphan being watched is left to finish on its own */
		uv_close((uv_handle_t *)&s.sigchld, NULL);
		service_run_close(&s);
		free_service(&s);
		return 1;
	}
	uv_signal_init(&loop, &s.sigterm);
	uv_signal_init(&loop, &s.sigint);
	uv_signal_init(&loop, &s.sighup);
	s.sigterm.data = s.sigint.data = s.sighup.data = &s;
	uv_signal_start(&s.sigterm, on_stop_signal, SIGTERM);
	uv_signal_start(&s.sigint, on_stop_signal, SIGINT);
	uv_signal_start(&s.sighup, on_sighup, SIGHUP);

	log_info("service ready: %zu experiments known, %zu queued, state in %s", s.n,
		 service_queued(&s), s.root);
	sdnotify_send("READY=1");
	service_schedule(&s);
	uv_run(&loop, UV_RUN_DEFAULT);
	if (uv_loop_close(&loop) != 0)
		log_debug("handles were left open at exit");
	log_info("service stopped: %zu queued experiments wait for the next start", service_queued(&s));
	free_service(&s);
	return 0;
}
