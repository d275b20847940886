/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The service's experiments, one folder each under ROOT (STATE_DIR/service):
 *
 *   ROOT/next-id                  the id the next submission gets
 *   ROOT/exp/<id>/experiment.json who, what, where, state; rewritten atomically
 *   ROOT/exp/<id>/h.conf, g.conf  the configs as they were at submit time
 *   ROOT/exp/<id>/files.json      every config file by name, as sent (the run reads these)
 *   ROOT/exp/<id>/hostd.log       the experiment's hostd: stdout and stderr
 *   ROOT/exp/<id>/status.json     its progress (hostd --status-file)
 *
 * An experiment exists once its experiment.json does (written last).  File
 * work only: returns 0 or -errno, never logs.
 */
#ifndef LOCKSTEP_QUEUE_H
#define LOCKSTEP_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config_files.h"
#include "ctl.h"
#include "proto.h"

enum queue_state {
	QUEUE_QUEUED,
	QUEUE_RUNNING,
	QUEUE_DONE,	   /* hostd exited 0 */
	QUEUE_FAILED,	   /* hostd exited non-zero or could not start */
	QUEUE_INTERRUPTED, /* the service stopped or died while it ran */
	QUEUE_CANCELLED,   /* by its submitter or root */
};

struct queue_exp {
	uint64_t id;
	uint32_t uid, gid;
	char user[64];
	char run_name[PROTO_NAME_MAX];
	char results[CTL_PATH_MAX]; /* the folder the run folder goes in */
	bool lenient;		    /* hostd --lenient: unknown h.conf names are warnings */
	enum queue_state state;
	int exit_code;			   /* -1 until it ended */
	int64_t submitted, started, ended; /* Unix seconds; 0: not yet */
	int32_t pid;			   /* its hostd while running */
	uint64_t pid_start;		   /* that process's start time (/proc/PID/stat) */
	char reason[256];		   /* why it ended other than done */
};

const char *queue_state_name(enum queue_state s);
static inline bool queue_state_final(enum queue_state s)
{
	return s != QUEUE_QUEUED && s != QUEUE_RUNNING;
}

/* ROOT/exp/<id>/<file> (file may be NULL: the folder) into buf. */
void queue_path(const char *root, uint64_t id, const char *file, char *buf, size_t size);

/* Gives e the next id and writes its folder: configs first, experiment.json
 * last.  -errno; on error nothing half-made is left that a load would see. */
int queue_create(const char *root, struct queue_exp *e, const char *hconf, const char *gconf,
		 const struct config_files *files, const char *hname, const char *gname);
/* ROOT/exp/<id>/files.json, what queue_create wrote from files: every
 * config of the experiment by the name its configs use (h.conf's as hname,
 * g.conf's as gname), as hostctl read them.  -errno; -EBADMSG if it is not
 * such a file. */
int queue_files_load(const char *path, struct config_files **out, char **hname, char **gname);
/* Rewrites experiment.json atomically. */
int queue_save(const char *root, const struct queue_exp *e);
/* Reads one experiment.json; -EBADMSG when it is not ours or damaged. */
int queue_load_one(const char *path, struct queue_exp *e);
/* Every experiment under root, sorted by id (*out owned by the caller, one
 * allocation per entry).  Folders that cannot be read are passed to bad()
 * and skipped. */
int queue_load_all(const char *root, struct queue_exp ***out, size_t *n,
		   void (*bad)(void *ctx, const char *path, int err), void *ctx);
/* Removes an experiment's folder (not its results). */
int queue_remove(const char *root, uint64_t id);
/* The experiment as the control protocol shows it (no progress). */
json_object *queue_exp_json(const struct queue_exp *e);

#endif
