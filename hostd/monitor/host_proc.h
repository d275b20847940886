/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The host's own /proc (common/procmon.h: stat per CPU, schedstat,
 * loadavg, pressure, vmstat), sampled by hostd when no agent runs on the
 * host (HOST_RUNS_BENCHMARKS=no; with yes, the host's agent samples it like
 * any guest).  Every interval, and at each step edge, one uv_queue_work job
 * reads a snapshot (a large host's /proc/stat is read off the loop); the
 * loop hands the samples to monitor_store under node "host".
 *
 * Stamps follow the agent's rule: a sample covers the interval since the
 * previous one and carries the step that ran over it, 0 while the host
 * waited at a barrier.  For the host a step runs from its release until
 * its last participant is done; the edge samples are taken as soon as a
 * job is free after the edge, so the samples stamped k cover step k.
 */
#ifndef LOCKSTEP_HOST_PROC_H
#define LOCKSTEP_HOST_PROC_H

#include <stdint.h>
#include <uv.h>

struct monitor_store;
struct host_proc;

/* Called on the loop once the sample that ends step is stored: the time
 * for monitor_store_step_done. */
typedef void (*host_proc_step_done_fn)(void *ctx, uint32_t step);

/* proc_root: "" or NULL for "/", else a fake tree (tests).  Logs once the
 * sources the host lacks. */
struct host_proc *host_proc_new(uv_loop_t *loop, struct monitor_store *ms, const char *node,
				const char *proc_root, uint32_t interval_ms,
				host_proc_step_done_fn step_done, void *ctx);
/* The first snapshot now, then one every interval. */
void host_proc_start(struct host_proc *hp);
/* Step edges.  A start while another step still counts as running ends
 * that one first; an end of a step that is not running is ignored.  Both
 * accept NULL. */
void host_proc_step_start(struct host_proc *hp, uint32_t step);
void host_proc_step_end(struct host_proc *hp, uint32_t step);
/* The step the host's samples are stamped with now (0: none). */
uint32_t host_proc_step(const struct host_proc *hp);
/* Stops the ticks; the edges already asked for are still sampled (their
 * samples and step_done calls come after this returns, so the store must
 * outlive the loop's run).  Frees hp once the last job came back, then
 * calls done(ctx).  Accepts NULL (done called at once). */
void host_proc_close(struct host_proc *hp, void (*done)(void *ctx), void *ctx);

#endif
