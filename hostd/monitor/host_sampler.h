/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Per-vCPU figures of a libvirt guest, seen from the host: the CPU time
 * each vCPU thread got, and the time it waited for a host CPU ("wait",
 * and "delay" where libvirt has it), from the VIR_DOMAIN_STATS_VCPU group
 * of the domain stats.  Two snapshots make samples as monitor_store takes
 * them: vcpu.<n>.time, .wait, .delay in percent of the interval (of one
 * host CPU), and vcpu.all.* their sums over the guest's vCPUs.
 *
 * host_sampler_read blocks on libvirt: run it from a uv_queue_work job,
 * never on the loop.  The rest is pure.  Functions return 0 or -errno.
 */
#ifndef LOCKSTEP_HOST_SAMPLER_H
#define LOCKSTEP_HOST_SAMPLER_H

#include <libvirt/libvirt.h>
#include <stdint.h>

#define HOST_VCPUS_MAX 512

enum { HOST_VCPU_TIME = 1, HOST_VCPU_WAIT = 2, HOST_VCPU_DELAY = 4 };

struct host_vcpu_snap {
	int64_t ns; /* CLOCK_MONOTONIC when read */
	unsigned n; /* vCPUs in id order, as libvirt lists them (sparse ids allowed) */
	unsigned id[HOST_VCPUS_MAX];
	unsigned have[HOST_VCPUS_MAX]; /* HOST_VCPU_* */
	uint64_t time_ns[HOST_VCPUS_MAX], wait_ns[HOST_VCPUS_MAX], delay_ns[HOST_VCPUS_MAX];
};

/* The "vcpu.*" fields of one domain's stats record into s (s->ns untouched).
 * Fields of other groups are ignored; a vcpu number past HOST_VCPUS_MAX or
 * a field of the wrong type is -EINVAL. */
int host_sampler_parse(const virTypedParameter *params, int nparams, struct host_vcpu_snap *s);
/* Blocking: reads dom's vCPU stats now.  -EIO with libvirt's message in
 * why when libvirt fails. */
int host_sampler_read(virDomainPtr dom, struct host_vcpu_snap *s, char *why, size_t why_size);

typedef void (*host_sampler_fn)(void *ctx, const char *metric, double value, const char *unit);
/* Samples for the interval a..b; a vCPU in only one of them, or whose
 * counters went back, gives nothing.  Returns how many it emitted. */
unsigned host_sampler_emit(const struct host_vcpu_snap *a, const struct host_vcpu_snap *b,
			   host_sampler_fn fn, void *ctx);

#endif
