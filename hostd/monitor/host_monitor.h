/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * host_sampler on the loop: every interval one uv_queue_work job reads
 * the vCPU stats of every libvirt guest (blocking libvirt calls stay off
 * the loop), and the loop hands the samples to monitor_store under each
 * guest's node, stamped with the step the guest runs then.  A tick while
 * the previous job is still out is skipped rather than queued.
 */
#ifndef LOCKSTEP_HOST_MONITOR_H
#define LOCKSTEP_HOST_MONITOR_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "host_sampler.h"

struct monitor_store;
struct host_monitor;

/* The step a guest runs now, 0 when none; guest is what was given to
 * host_monitor_add (hostd's participant). */
typedef uint32_t (*host_monitor_step_fn)(void *guest);
/* What reads one guest: host_sampler_read, or a test's stand-in. */
typedef int (*host_monitor_read_fn)(virDomainPtr dom, struct host_vcpu_snap *s, char *why,
				    size_t why_size);

struct host_monitor *host_monitor_new(uv_loop_t *loop, struct monitor_store *ms,
				      uint32_t interval_ms, host_monitor_step_fn step_of);
/* A guest: its samples go under node, read through dom (a reference is
 * taken), stamped with step_of(guest).  Before host_monitor_start only. */
void host_monitor_add(struct host_monitor *hm, const char *node, virDomainPtr dom, void *guest);
void host_monitor_set_reader(struct host_monitor *hm, host_monitor_read_fn read);
void host_monitor_start(struct host_monitor *hm);
/* Stops; frees hm once a job in flight came back, then calls done(ctx) on
 * the loop.  Accepts NULL (done called at once). */
void host_monitor_close(struct host_monitor *hm, void (*done)(void *ctx), void *ctx);

#endif
