/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * External monitors by MMTests' names (vmstat mpstat iostat top
 * perf-event-stat trace-cmd), run on the host for each step: started at
 * one step edge, stopped at the next (SIGINT to the monitor's process
 * group, as a user's Ctrl-C: perf and trace-cmd then write what they
 * gathered; SIGKILL 2 s later if it still runs).  Each run's stdout and
 * stderr go to <dir>/<name>-step-<k>.log (trace-cmd's data to
 * <dir>/trace-cmd-step-<k>.dat).  A monitor that cannot start or exits
 * while its step runs is reported through the report callback and the
 * run goes on.  Everything runs on the caller's libuv loop.
 */
#ifndef LOCKSTEP_MONITOR_EXT_H
#define LOCKSTEP_MONITOR_EXT_H

#include <stdint.h>
#include <uv.h>

#include "monitor_settings.h"
#include "runas.h"
#include "proto.h"

#define MONITOR_EXT_KILL_MS 2000

struct monitor_ext;

/* what: "cannot start: No such file or directory", "exited with status 1
 * during step 3", ... */
typedef void (*monitor_ext_report_fn)(void *ctx, const char *monitor, uint32_t step, const char *what);

/* NULL when s asks for no external monitor.  dir must exist. */
struct monitor_ext *monitor_ext_new(uv_loop_t *loop, const struct monitor_settings *s,
				    const char *dir, monitor_ext_report_fn report, void *ctx);
/* Under the service: the monitors run as ra's user (runas.h), and their
 * logs are opened below dirfd (dir, opened once; m takes it) with
 * O_EXCL|O_NOFOLLOW.  Accepts NULL (dirfd is closed). */
void monitor_ext_run_as(struct monitor_ext *m, const struct runas *ra, int dirfd);
/* Starts every monitor for step (stopping what still runs for an earlier
 * one).  Accepts NULL. */
void monitor_ext_step_start(struct monitor_ext *m, uint32_t step);
/* Stops the monitors of step.  Accepts NULL. */
void monitor_ext_step_end(struct monitor_ext *m, uint32_t step);
/* Stops everything and frees m once every process is gone and every handle
 * closed; done(ctx) is called then (on the loop).  Accepts NULL (done is
 * called at once). */
void monitor_ext_close(struct monitor_ext *m, void (*done)(void *ctx), void *ctx);
/*
 * The monitors of s as a guest's agent runs them: one PROTO_MONITOR each
 * in out[0..n) (at most PROTO_MONITORS_MAX), in MMTests' order, with the
 * command line hostd would run.  trace-cmd is left out (its data file
 * would stay in the guest) and its bit set in *skipped.  Returns n.
 */
unsigned monitor_ext_guest_set(const struct monitor_settings *s, struct proto_msg *out,
			       unsigned *skipped);

/* How many monitor processes are running now. */
unsigned monitor_ext_running(const struct monitor_ext *m);

#endif
