/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a follower's records are worth on the leader (docs/cluster.md,
 * "Records on the leader"): every record a member sends is untrusted.  Its
 * manifest facts declare its nodes; a sample or failure record must be one
 * `hostctl` reads (the fields, a finite value, the same unit and direction
 * as every other line of its metric) and name a declared node; a barrier
 * record gives that host's starts on the shared clock.  No string may hold
 * a control character.  Accepted records name their nodes "<member>/<node>".
 *
 * And the skew across hosts of one step: the spread of every host's starts
 * on the shared real-time clock, with a bound that adds, at each end, the
 * node's clock bound and (between two hosts) the host clock's maxerror.
 * Pure: no I/O, no clock, no log.
 */
#ifndef LOCKSTEP_MEMBER_RECORDS_H
#define LOCKSTEP_MEMBER_RECORDS_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One stream entry's payload at most, by kind. */
#define MREC_FACTS_MAX (1u << 20)
#define MREC_LINES_MAX (256u << 10)
/* One record (an NDJSON line) at most; the nodes a member may declare. */
#define MREC_LINE_MAX (64u << 10)
#define MREC_NODES_MAX 1024
/* (benchmark, metric) pairs remembered for their unit and direction. */
#define MREC_METRICS_MAX 10000
/* A host clock whose error is unknown (adjtimex failed): the kernel's
 * largest, 16 s (NTP_PHASE_LIMIT's maxerror). */
#define MREC_MAXERROR_UNKNOWN_US 16000000

/* A follower's NDJSON text buf (len bytes) as entries: the bytes of the
 * lines longer than MREC_LINE_MAX at its start, to leave out (*nlines of
 * them); then the bytes of whole lines from its start, at most
 * MREC_LINES_MAX, stopping before a line too long.  A last line without
 * its newline counts as a line. */
size_t mrec_skip_long(const char *buf, size_t len, size_t *nlines);
size_t mrec_take_lines(const char *buf, size_t len);

/* A node name a member may use: [A-Za-z0-9._-], not starting with '.',
 * 1 to 63 bytes (a "/" would name another member's node). */
bool mrec_name_ok(const char *s);

/* text (len bytes) as one JSON object whose every string and key is free
 * of control characters; NULL with err saying why. */
json_object *mrec_parse(const char *text, size_t len, char *err, size_t errlen);

/* A member's manifest facts: {"participants":[{"node",...}], "host",
 * "status", ...}.  Its nodes into *nodes (a new array of strings, NULL
 * on error); 0 or -1 with err. */
int mrec_facts(json_object *facts, json_object **nodes, char *err, size_t errlen);
/* The facts' participants renamed "<member>/<node>" with "member": a new
 * array. */
json_object *mrec_facts_participants(json_object *facts, const char *member);

/* The units and directions of metrics seen, so that no line a member sends
 * makes the leader's samples.ndjson one hostctl refuses. */
struct mrec_units {
	json_object *map; /* "benchmark\x1fvariant\x1fmetric" -> "unit\x1fbetter" */
};
void mrec_units_init(struct mrec_units *u);
void mrec_units_fini(struct mrec_units *u);
/* A sample line this host wrote itself: its metric's unit noted. */
void mrec_units_note(struct mrec_units *u, const char *line, size_t len);

/* A sample or failure record of member's (nodes: its declared ones),
 * checked and renamed in place: node "<member>/<node>", a failure's "log"
 * (a file in the member's own folder) as "member_log".  0 or -1 with err. */
int mrec_sample(json_object *o, const char *member, json_object *nodes, struct mrec_units *u,
		char *err, size_t errlen);

/* A barrier record of member's, for step at most nsteps: *step and a new
 * summary {skew_ns, skew_bound_ns, release_realtime_ns, started_realtime_ns,
 * bound_ns, host_clock, not_started} with its nodes named "<member>/<node>".
 * 0 or -1 with err. */
int mrec_barrier(json_object *o, const char *member, json_object *nodes, uint32_t nsteps,
		 uint32_t *step, json_object **summary, char *err, size_t errlen);
/* Whether a summary's host said its clock was not synchronised. */
bool mrec_unsynchronised(json_object *summary);

/* The leader's own part of a step, from its barrier record o, as a
 * summary like mrec_barrier's (its nodes keep their names); NULL when o
 * has no cluster facts. */
json_object *mrec_own_summary(json_object *o);

/* The skew across hosts of one step: hosts is {member: summary}.  A new
 * {skew_ns, skew_bound_ns, first, last, hosts} (skew_ns null when nobody
 * started). */
json_object *mrec_across(json_object *hosts);

#endif
