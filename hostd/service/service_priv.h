/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The state of hostd --service, shared by service.c (loop, socket, signals,
 * the queue's order), service_client.c (the control protocol) and
 * service_run.c (an experiment's hostd child). */
#ifndef LOCKSTEP_SERVICE_PRIV_H
#define LOCKSTEP_SERVICE_PRIV_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "ctl.h"
#include "queue.h"
#include "service.h"
#include "service_settings.h"

#define SERVICE_CLIENTS_MAX 64
/* One user (root aside) may not take every slot with waits and follows. */
#define SERVICE_CLIENTS_PER_USER 16
/* A follower's unsent log stays under this; more is read when it drains.
 * A client whose unread answers are over it is hung up. */
#define SERVICE_WRITE_QUEUE_MAX (256 * 1024)

enum client_wait {
	CLIENT_IDLE,
	CLIENT_WAIT,   /* "wait": answered when the experiment ends */
	CLIENT_FOLLOW, /* "logs" with follow: log lines until it ends */
	CLIENT_LOGS,   /* "logs": log lines to the end of the file */
	CLIENT_CLOSING,
};

struct service;

struct client {
	struct service *svc;
	struct client *next;
	uv_pipe_t pipe;
	struct ctl_decoder dec;
	uid_t uid;
	gid_t gid;
	pid_t pid;
	char user[64];
	bool root;
	bool closed; /* its handles are being closed; freed when they are */
	enum client_wait wait;
	uint64_t exp_id;
	/* "logs": the log file and where we are in it */
	int log_fd;
	uv_fs_event_t watch;
	bool watching;
	/* runs while the client owes us a request: IDLE_TIMEOUT */
	uv_timer_t idle;
};

struct service {
	const struct service_options *opt;
	uv_loop_t *loop;
	uv_pipe_t listener;
	bool listening;
	bool socket_bound; /* ours to unlink (not systemd's) */
	uv_signal_t sigterm, sigint, sighup, sigchld;
	struct service_settings set;
	char root[PATH_MAX];	 /* STATE_DIR/service */
	char self[PATH_MAX];	 /* our own binary, what each experiment runs */
	struct queue_exp **exps; /* by id */
	size_t n;

	/* the experiment whose hostd runs (or, after a restart, is still
	 * winding down from the service's previous life) */
	struct queue_exp *cur;
	pid_t child;
	bool child_ours;   /* ours to waitpid; else an orphan we only watch */
	bool orphan_watch; /* an orphan's end is awaited on one of: */
	int pidfd;
	uv_poll_t orphan_poll;
	uv_timer_t orphan_timer;
	enum queue_state end_as; /* QUEUE_RUNNING: by its exit code */
	char end_reason[256];
	/* from the SIGTERM to the SIGKILL of a hostd that does not end */
	uv_timer_t kill_timer;
	bool killed;
	/* RUN_TIMEOUT of the settings: the longest any experiment may run */
	uv_timer_t run_timer;

	struct client *clients;
	size_t nclients;
	bool stopping;
};

/* service.c */
void service_schedule(struct service *s);
void service_publish_status(struct service *s);
struct queue_exp *service_find(struct service *s, uint64_t id);
size_t service_position(struct service *s, const struct queue_exp *e); /* 1-based; 0: not queued */
size_t service_queued(struct service *s);
void service_save(struct service *s, struct queue_exp *e);
/* An experiment moved on (started, ended): tell the clients that wait on it. */
void service_exp_changed(struct service *s, struct queue_exp *e);

/* service_run.c */
/* Starts e's hostd; on failure e ended as failed (saved). */
void service_run_start(struct service *s, struct queue_exp *e);
/* SIGTERM to the running hostd; it ends as `as` with reason. */
void service_run_stop(struct service *s, enum queue_state as, const char *reason);
/* SIGCHLD: reaps the running hostd if it ended. */
void service_run_sigchld(struct service *s);
/* After a restart: e was running when the service died. */
void service_run_recover(struct service *s, struct queue_exp *e);
/* The kill timer: before recover or start, and closed with the loop. */
void service_run_init(struct service *s);
void service_run_close(struct service *s);
/* 0 when the run folder may go in dir for e's submitter, else -errno and why. */
int service_results_check(const struct service *s, const struct queue_exp *e, char *why, size_t size);

/* service_client.c */
void service_client_accept(struct service *s);
void service_client_ended(struct client *c, struct queue_exp *e);
void service_client_close(struct client *c);

#endif
