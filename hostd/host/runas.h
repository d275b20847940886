/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The submitter's rights for the submitter's work.  Under hostd --service an
 * experiment's hostd keeps what only it needs (libvirt, the state folder,
 * the SSH key); every program it starts on the host for the experiment
 * (local agents, the host's own agent and so its steps and commands,
 * external monitors) runs as the submitting user instead: their uid, gid and
 * supplementary groups (the user database), no capabilities, no new
 * privileges, in a work folder of theirs.
 *
 * libuv's uv_spawn can set a uid and gid but drops every supplementary
 * group and leaves ambient capabilities and the bounding set alone, so a
 * program goes through hostd's own binary first: `hostd --exec-as UID GID
 * GROUPS DIR -- PROGRAM ARGS...` (runas_exec_main) drops everything, checks
 * that it cannot get it back, and execs.
 */
#ifndef LOCKSTEP_RUNAS_H
#define LOCKSTEP_RUNAS_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>
#include <uv.h>

#define RUNAS_EXEC_ARG "--exec-as"
#define RUNAS_GROUPS_MAX 64

struct runas {
	uid_t uid;
	gid_t gid;
	gid_t groups[RUNAS_GROUPS_MAX];
	size_t ngroups;
	char user[64];
	char home[256];
	char self[PATH_MAX]; /* hostd's binary, the one that drops */
};

/* spec is "UID:GID" (what the service passes on as --run-as); the groups
 * come from the user database.  0, or -errno with why. */
int runas_init(struct runas *ra, const char *spec, char *why, size_t size);

/* Rewrites o->file and o->args so that the program runs as ra's user with
 * its working folder cwd; *store holds the new argument vector (free it
 * with runas_free_args after uv_spawn).  ra NULL: o is left as it is. */
void runas_wrap(const struct runas *ra, uv_process_options_t *o, const char *cwd, char ***store);
void runas_free_args(char **store);

/* hostd --exec-as ...: never returns on success; 127 and a line on stderr
 * when it cannot drop or exec. */
int runas_exec_main(int argc, char **argv);

#endif
