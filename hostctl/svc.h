/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hostctl's commands for hostd --service (docs/service.md): the connection
 * and request loop in cmd_svc.c, the commands in cmd_submit.c,
 * cmd_status.c and cmd_logs.c. */
#ifndef HOSTCTL_SVC_H
#define HOSTCTL_SVC_H

#include <getopt.h>
#include <json-c/json.h>
#include <stdbool.h>

#define SVC_DEFAULT_SOCKET "/run/lockstep/hostd.sock"
/* hostctl wait: the experiment's own exit code, or this when it cannot be
 * known (no service, unknown id, bad command line) */
#define SVC_EXIT_UNKNOWN 4

struct svc_opts {
	const char *socket;
	bool json;
};

/* Data lines ("experiment", "log") as they arrive. */
typedef void (*svc_data_fn)(void *ctx, const char *type, json_object *m);

/* Sends req (consumed) and reads the answer; the final "ok" into *ok
 * (the caller puts it).  0; or -1 after saying on stderr what failed (no
 * service, refused, an "error" answer: its text). */
int svc_call(const struct svc_opts *o, json_object *req, svc_data_fn fn, void *ctx, json_object **ok);

/* Parses --socket and --json (and -h) for every service command; the
 * command's own long options follow in extra (may be NULL).  Returns the
 * getopt value of an extra option, -1 at the end, '?' on an error (said),
 * 'h' for help. */
int svc_getopt(int argc, char **argv, struct svc_opts *o, const struct option *extra, const char **arg);
/* The experiment ID argument at argv[optind]: 0, or -1 after saying why. */
int svc_id_arg(int argc, char **argv, const char *cmd, long long *id);
/* A human line per experiment (status shows progress too). */
void svc_print_exp(json_object *e, bool detail);
const char *svc_str(json_object *o, const char *key);
long long svc_int(json_object *o, const char *key);

int cmd_submit(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_logs(int argc, char **argv);
int cmd_cancel(int argc, char **argv);
int cmd_wait(int argc, char **argv);

#endif
