/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The run's side of the cross-host barrier (cluster/cluster.h,
 * docs/cluster.md): when this host's own barrier of a step is complete,
 * release() asks run_cluster_hold whether to wait for the other hosts; the
 * cluster's answer comes back as run_cluster_decided (run.c), with the
 * common instant turned into this host's scheduled release.  Without
 * CLUSTER_* keys every function here is a no-op and Redis is never touched.
 */
#ifndef LOCKSTEP_RUN_CLUSTER_H
#define LOCKSTEP_RUN_CLUSTER_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

struct run;

/* Redis checked (blocking, at most a few seconds) and the cluster on the
 * loop; -1 when Redis cannot be used (logged). */
int run_cluster_start(struct run *r);
/* True: step k waits for the other hosts (asked now or already). */
bool run_cluster_hold(struct run *r, uint32_t k);
/* The instant of step k's release on the host's monotonic clock: the
 * cluster's common one when it gave one, else local_at. */
int64_t run_cluster_instant(struct run *r, uint32_t k, int64_t local_at);
/* Adds step's "cluster" facts and its start instants on the shared clock
 * (started_realtime_ns) to its barrier record o. */
void run_cluster_record(struct run *r, json_object *o);
void run_cluster_close(struct run *r);
void run_cluster_free(struct run *r);

#endif
