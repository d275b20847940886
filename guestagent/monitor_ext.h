/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * External monitors in the agent (vmstat, mpstat, ... as the host's
 * "monitor" messages name them): each runs from a step's start to its end
 * in a process group of its own, its stdout and stderr in one pipe whose
 * text goes to the host as monitor-output messages stamped with the step.
 * At the end SIGINT (as Ctrl-C: perf then prints its totals), SIGKILL
 * MEXT_KILL_NS later if it still runs.  A monitor that is not on PATH,
 * cannot start or exits while its step runs is reported to the host (an
 * error message, code "monitor") and the step goes on.
 *
 * Commands are split at spaces and run without a shell, with PATH as
 * command steps have it: <the agent's folder>/bin first, where hostd puts
 * the binaries it pushes with their libraries.
 */
#ifndef GUESTAGENT_MONITOR_EXT_H
#define GUESTAGENT_MONITOR_EXT_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto.h"

#define MEXT_KILL_NS (2 * 1000000000LL)
/* A monitor's output forwarded per step at most; the rest is dropped. */
#define MEXT_OUTPUT_CAP (1024 * 1024)
/* Runs at once: each monitor of this step, and the last step's while
 * they take their time to leave after SIGINT. */
#define MEXT_RUNS (2 * PROTO_MONITORS_MAX)
/* Poll slots mext_poll fills: one pipe per run and the kill timer. */
#define MEXT_NFDS (MEXT_RUNS + 1)

struct session;

/* One monitor process, for one step. */
struct mext_run {
	pid_t pid;	 /* > 0 until reaped; 0: a free slot */
	int out_fd;	 /* read end, non-blocking; -1 once at its end */
	unsigned mon;	 /* which monitor */
	uint32_t step;	 /* the step it runs for */
	bool stopping;	 /* stopped by us: its exit is no news */
	int64_t kill_at; /* CLOCK_MONOTONIC of the SIGKILL; 0: none due */
	char carry[4];	 /* a UTF-8 sequence cut by the end of a read */
	size_t ncarry;
	size_t forwarded;
	bool truncated;
};

struct mext {
	char name[PROTO_MONITORS_MAX][PROTO_NAME_MAX];
	char command[PROTO_MONITORS_MAX][PROTO_TEXT_MAX];
	unsigned n;   /* monitors configured */
	uint32_t gen; /* the session's mon_gen they come from */
	struct mext_run run[MEXT_RUNS];
	int tfd; /* timerfd for the SIGKILLs; -1 until needed */
	struct session *sess;
};

void mext_init(struct mext *x, struct session *sess);
/* Takes the session's monitor set when it changed (monitors still running
 * keep running until their step ends). */
void mext_update(struct mext *x);
/* Starts every monitor for step; close_fd (the channel) is closed in the
 * children. */
void mext_step_start(struct mext *x, uint32_t step, int close_fd);
/* Stops the monitors of step. */
void mext_step_end(struct mext *x, uint32_t step);
/* Fills p[0..MEXT_NFDS) (fd -1 where nothing is to be polled). */
void mext_poll(const struct mext *x, struct pollfd *p);
/* After poll: reads what p says is there, sends the kills that are due. */
void mext_handle(struct mext *x, const struct pollfd *p);
/* On SIGCHLD: reaps the monitors that ended, reports those that ended on
 * their own, sends what they left in their pipes. */
void mext_reap(struct mext *x);
/* Leaving: SIGKILL to every monitor still there, reaped at once. */
void mext_fini(struct mext *x);

#endif
