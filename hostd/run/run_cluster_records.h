/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Every host's records in the leader's run folder (docs/cluster.md,
 * "Records on the leader"): a follower keeps writing its own complete
 * folder and also sends its sample and barrier lines (as it queues them)
 * and its manifest's facts to the leader through Redis
 * (cluster/cluster_records.h), once per step just after that step's
 * barrier record (every node started: outside the release window) and at
 * its end.  The leader checks them (cluster/member_records.h), writes the
 * samples with their nodes named "<member>/<node>", lists the members'
 * nodes among its participants, and holds each barrier record of its own
 * until every member's record of that step is in (at most
 * CLUSTER_TIMEOUT), so that the record says the skew across hosts and its
 * bound.  Without CLUSTER_* keys every function here is a no-op.
 */
#ifndef LOCKSTEP_RUN_CLUSTER_RECORDS_H
#define LOCKSTEP_RUN_CLUSTER_RECORDS_H

#include <json-c/json.h>

struct run;

/* Records queued on a follower at most; past it they stay in its own
 * folder only (said once, and counted in its last facts). */
#define RUN_CREC_QUEUED_MAX (64u << 20)
/* Refusals named in the log and the manifest per member; the rest counted. */
#define RUN_CREC_REFUSALS_SAID 16
/* Barrier records the leader holds at most. */
#define RUN_CREC_HELD_MAX 64

/* Connects (after run_cluster_start). */
void run_crec_start(struct run *r);
/* A barrier record of this host's: written now, or held (the leader). */
void run_crec_barrier(struct run *r, json_object *o);
/* Into the manifest m being written: the leader adds its members'
 * participants and their part (cluster.hosts, cluster.across_hosts); a
 * follower keeps its facts to send. */
void run_crec_manifest(struct run *r, json_object *m);
/* The run is finishing: a follower sends what is left and its end; the
 * leader waits (at most CLUSTER_TIMEOUT) for every member's end, writes
 * the records held and the manifest again. */
void run_crec_close(struct run *r);
void run_crec_free(struct run *r);

#endif
