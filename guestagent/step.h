/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Running one step in a child process, so that the agent keeps answering
 * the host (pings, resyncs) while the work runs.  The child leads its own
 * process group: stopping a step stops what its shell started too.
 *
 *   cpu-probe  a fixed amount of integer work; the child times it and
 *              hands the time back through a pipe
 *   command    /bin/sh -c COMMAND in the work folder, stdin /dev/null,
 *              stdout and stderr into one pipe the agent reads
 */
#ifndef GUESTAGENT_STEP_H
#define GUESTAGENT_STEP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto.h"

/* How long a stopped step gets between SIGTERM and SIGKILL. */
#define STEP_KILL_GRACE_NS (2 * 1000000000LL)

struct step_run {
	pid_t pid;          /* > 0 while the child has not been reaped */
	int out_fd;         /* command: read end of its output, non-blocking; else -1 */
	int report_fd;      /* cpu-probe: read end of the pipe its timing comes back on; else -1 */
	enum proto_step_kind kind;
	uint64_t units;
	int64_t start_ns;   /* CLOCK_MONOTONIC just before the fork */
	int wstatus;        /* once reaped */
};

void step_run_init(struct step_run *r);

/*
 * Forks the child for st.  workdir_fd is where commands run; close_fd (the
 * channel, or -1) is closed in a child that does not exec.  0, or -errno
 * (pipe or fork failed; nothing is left running).
 */
int step_start(struct step_run *r, const struct proto_step *st, int workdir_fd, int close_fd);

/* Reaps the child if it has ended.  true once it has (r->wstatus is set). */
bool step_reap(struct step_run *r);

/* cpu-probe: the CLOCK_MONOTONIC instants the child's work began and
 * ended.  -EIO if it sent none (it died first). */
int step_cpu_times(struct step_run *r, int64_t *begin_ns, int64_t *end_ns);

/* 0 for success; the exit code; 128 + the signal that killed it. */
int32_t step_exit_status(int wstatus);

/* Stops a running step: SIGTERM to its group, SIGKILL after the grace
 * period, waiting on sigfd (a signalfd with SIGCHLD) in between. */
void step_kill(struct step_run *r, int sigfd);

/* Closes the pipes once the caller has read what it wants. */
void step_run_close(struct step_run *r);

/* The work of a cpu-probe; exposed for tests.  Returns the final state. */
uint64_t step_cpu_work(uint64_t units);

#endif
