/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a cluster member checks of its own side: Redis before the run
 * starts, and its clock's error at every step.
 */
#ifndef LOCKSTEP_CLUSTER_HOST_H
#define LOCKSTEP_CLUSTER_HOST_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "cluster_settings.h"

/* Before the run starts, blocking for at most CLUSTER_PROBE_MS: connects,
 * AUTHs and PINGs Redis.  0, or -1 with err saying why (hiredis' libuv
 * adapter does not report a refused connect, so the loop would only see a
 * timeout). */
#define CLUSTER_PROBE_MS 3000
int cluster_probe(const struct cluster_settings *s, char *err, size_t errlen);

/* The kernel's view of this host's clock (adjtimex): {maxerror_us,
 * esterror_us, unsynchronised}, or {error}; *unsync set.  Test-only: the
 * environment's LOCKSTEP_TEST_ADJTIMEX="maxerror_us,esterror_us,0|1"
 * replaces the kernel's answer. */
json_object *cluster_host_clock(bool *unsync);

#endif
