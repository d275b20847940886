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
 *
 * The child is forked before the go (step_prepare, when the agent says
 * ready) and waits for it in read(2) on a pipe; step_go hands it the
 * instant.  The child sleeps until that instant itself and takes the start
 * stamp as it wakes, so that no fork (about 100 us, and a queue for the
 * cores when many agents wake together) lies between the instant and the
 * start.
 */
#ifndef GUESTAGENT_STEP_H
#define GUESTAGENT_STEP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto.h"

/* How long a stopped step gets between SIGTERM and SIGKILL. */
#define STEP_KILL_GRACE_NS (2 * 1000000000LL)

/* The start stamp the child writes, one atomic write: start, late,
 * child_go, runq (step_run's fields of those names). */
#define STEP_STAMP_WORDS 4

struct step_run {
	pid_t pid;	/* > 0 while the child has not been reaped */
	int go_fd;	/* prepared: write end of the pipe the child waits on; else -1 */
	int out_fd;	/* command: read end of its output, non-blocking; else -1 */
	int report_fd;	/* read end, non-blocking: the start stamp, then (cpu-probe)
			     * the work's timing; -1 once not needed */
	uint32_t index; /* the step it was prepared for */
	enum proto_step_kind kind;
	uint64_t units;
	char command[PROTO_COMMAND_MAX];
	bool stamped;	     /* the start stamp has been read */
	int64_t start_ns;    /* agent clock: the child's first instant after waking */
	int64_t late_ns;     /* start - at when the go reached the child after at; else 0 */
	int64_t child_go_ns; /* agent clock: the child read its go; 0: unknown */
	int64_t runq_ns;     /* the child's time runnable but not running from reading
			     * its go to its stamp; -1: unknown (no schedstats) */
	int wstatus;	     /* once reaped */
};

void step_run_init(struct step_run *r);

/*
 * Forks the child for st; it waits for step_go.  workdir_fd is where
 * commands run; close_fd (the channel, or -1) is closed in the child at
 * once.  0, or -errno (pipe or fork failed; nothing is left running).
 */
int step_prepare(struct step_run *r, const struct proto_step *st, int workdir_fd, int close_fd);
/* SCHED_FIFO priority a prepared child holds from its wait for the go
 * (blocked, so at no cost) until just after its start stamp; 0 (the
 * default) for none.  Without the privilege the child runs unboosted. */
void step_set_start_priority(int priority);

/* The agent itself holds that priority (on) or normal scheduling (off):
 * while it waits for a go, so that the go's read and its hand-off to the
 * child do not queue behind the machine's other work; dropped as soon as
 * the child has the go.  Whether it holds it now (false without the
 * privilege or with priority 0). */
bool step_hold_priority(bool on);

/* Tests only: a child forked from now on first reads a byte from hold_fd
 * (before any set-up), and writes one to setup_fd once set up, just before
 * it waits for its go; -1: not. */
void step_test_hooks(int hold_fd, int setup_fd);

/* Whether the prepared child would run st as it is. */
bool step_prepared_for(const struct step_run *r, const struct proto_step *st);

/*
 * Releases the prepared child: it starts at at_ns (the agent's clock; 0:
 * now).  0, or -EPIPE when the child is gone (the caller discards it).
 */
int step_go(struct step_run *r, int64_t at_ns);

/* Reads the child's start stamp into start_ns and late_ns: 0 once there,
 * -EAGAIN while not yet, -EIO if the child ended without one. */
int step_read_stamp(struct step_run *r);

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

/* Ends a prepared child that has not been released (it does no work, so
 * SIGKILL at once) and closes its pipes. */
void step_discard(struct step_run *r);

/* Closes the pipes once the caller has read what it wants. */
void step_run_close(struct step_run *r);

/* The work of a cpu-probe; exposed for tests.  Returns the final state. */
uint64_t step_cpu_work(uint64_t units);

#endif
