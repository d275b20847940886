/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a step leaves behind (issue 20).  Every step's child leads a process
 * group of its own, and, where the node has a writable cgroup v2 hierarchy,
 * is born in a cgroup that only the agent, its external monitors and the
 * one step share (the agent joins it once at its start: moving a process
 * into a cgroup per step costs 10 to 40 ms here), which setsid() and
 * double-fork escapees cannot leave; pids.max and memory.max bound it
 * where those controllers are there (pids falls back to a cgroup v1 pids
 * hierarchy: hybrid hosts).  The
 * agent is a child subreaper, so what a step orphans becomes the agent's
 * child, not init's, and is reaped here.
 *
 * At the step's end the leftovers are: the members of its cgroup, of its
 * process group, the agent's children it does not know, and everything
 * those started.  They get SIGTERM, a short grace, SIGKILL, and are reaped;
 * the caller reports what there was.
 *
 * The keeper covers the agent's own death (SIGKILL included): a small
 * process forked at start that holds a pipe from the agent and, when the
 * pipe ends without the agent having said so, kills the group and cgroup of
 * the step the agent last named.
 */
#ifndef GUESTAGENT_STEPGROUP_H
#define GUESTAGENT_STEPGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Defaults that stop a fork bomb before it takes the node: more processes
 * than any benchmark of MMTests' configs starts on a small node (hackbench
 * at 4 groups per CPU on 64 CPUs is about 10,000 processes), fewer than the
 * kernel's pid_max (32768 by default). */
#define STEPGROUP_PIDS_MAX_DEFAULT 16384
/* The agent's cgroup holds the agent and its external monitors too: the
 * limit is the step's plus these. */
#define STEPGROUP_OWN_PIDS 32
/* How long leftovers get between SIGTERM and SIGKILL, and after SIGKILL. */
#define STEPGROUP_GRACE_NS (500 * 1000000LL)
#define STEPGROUP_KILL_WAIT_NS (2000 * 1000000LL)
/* Leftovers named in the report; the count covers them all. */
#define STEPGROUP_NAMED 4
#define STEPGROUP_MAX 4096

struct stepgroup {
	char v2_base[PATH_MAX];	  /* where step cgroups are made (v2), "" if not */
	char pids_base[PATH_MAX]; /* the same for the pids limit when v2 has none */
	uint64_t pids_max;	  /* 0: none */
	uint64_t memory_max;	  /* bytes, 0: none */
	/* the current step */
	uint32_t step;
	pid_t pgid;
	char cg[PATH_MAX];	/* the agent's v2 cgroup, "" if none */
	char pids_cg[PATH_MAX]; /* the agent's v1 pids cgroup, "" if none */
	int keeper_fd;		/* write end of the keeper's pipe, -1 if none */
	pid_t keeper;
	uint64_t pids_hits;	 /* the last step ended: how often fork hit pids.max */
	uint64_t pids_base_hits; /* pids.events' max count as the step began */
};

/* Finds the cgroup hierarchies under root ("" for /) and starts the keeper.
 * Never fails: without cgroups a step still has its group. */
void stepgroup_init(struct stepgroup *g, const char *root, uint64_t pids_max, uint64_t memory_max);
void stepgroup_fini(struct stepgroup *g);

/* pid (the step's child, not yet released) leads step: the keeper is told.
 * 0, or -errno when the agent has no cgroup (the step runs in its group
 * only; why is in why). */
int stepgroup_enter(struct stepgroup *g, uint32_t step, pid_t pid, char *why, size_t len);

/* The step ended (its leader reaped, or about to be killed): kills and
 * reaps what is left of it.  known: the agent's own children that are not
 * the step's (external monitors, a prepared child).  Returns how many
 * processes were left and names the first of them in desc ("sleep 313,
 * sleep 314"); g->pids_hits says how often the step's forks hit pids.max.
 * sigfd: a signalfd with SIGCHLD, waited on in between (a SIGCHLD of a
 * known child read there is the caller's to look after: reap them after). */
size_t stepgroup_end(struct stepgroup *g, const pid_t *known, size_t nknown, int sigfd, char *desc,
		     size_t len);

/* Whether a step cgroup (v2) or a pids limit is in use; for the log. */
const char *stepgroup_describe(const struct stepgroup *g, char *buf, size_t len);

#endif
