// SPDX-License-Identifier: GPL-2.0-or-later
#include "host_sampler.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libvirt/virterror.h>

/* "vcpu.<n>.<field>": n, and which field (0 when not one of ours). */
static unsigned hs_field(const char *name, unsigned long *n)
{
	char *end;

	if (strncmp(name, "vcpu.", 5) || name[5] < '0' || name[5] > '9')
		return 0;
	errno = 0;
	*n = strtoul(name + 5, &end, 10);
	if (errno || *end != '.')
		return 0;
	end++;
	if (!strcmp(end, "time"))
		return HOST_VCPU_TIME;
	if (!strcmp(end, "wait"))
		return HOST_VCPU_WAIT;
	if (!strcmp(end, "delay"))
		return HOST_VCPU_DELAY;
	return 0;
}

static int hs_slot(struct host_vcpu_snap *s, unsigned long id)
{
	for (unsigned i = s->n; i-- > 0;)
		if (s->id[i] == id)
			return (int)i;
	if (s->n >= HOST_VCPUS_MAX)
		return -EINVAL;
	s->id[s->n] = (unsigned)id;
	s->have[s->n] = 0;
	return (int)s->n++;
}

int host_sampler_parse(const virTypedParameter *params, int nparams, struct host_vcpu_snap *s)
{
	s->n = 0;
	for (int i = 0; i < nparams; i++) {
		const virTypedParameter *p = &params[i];
		unsigned long id;
		unsigned f = hs_field(p->field, &id);
		int k;

		if (!f)
			continue;
		if (p->type != VIR_TYPED_PARAM_ULLONG || id >= 1u << 20)
			return -EINVAL;
		k = hs_slot(s, id);
		if (k < 0)
			return k;
		s->have[k] |= f;
		if (f == HOST_VCPU_TIME)
			s->time_ns[k] = p->value.ul;
		else if (f == HOST_VCPU_WAIT)
			s->wait_ns[k] = p->value.ul;
		else
			s->delay_ns[k] = p->value.ul;
	}
	return 0;
}

int host_sampler_read(virDomainPtr dom, struct host_vcpu_snap *s, char *why, size_t why_size)
{
	virDomainPtr doms[2] = { dom, NULL };
	virDomainStatsRecordPtr *recs = NULL;
	struct timespec ts;
	int n, r;

	n = virDomainListGetStats(doms, VIR_DOMAIN_STATS_VCPU, &recs, 0);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	s->ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	if (n < 0) {
		const char *msg = virGetLastErrorMessage();

		snprintf(why, why_size, "%s", msg ? msg : "unknown libvirt error");
		return -EIO;
	}
	r = n >= 1 ? host_sampler_parse(recs[0]->params, recs[0]->nparams, s) : -ENOENT;
	if (r < 0)
		snprintf(why, why_size, "%s",
			 r == -ENOENT ? "no stats record for the domain"
				      : "vcpu stats out of the expected shape");
	virDomainStatsRecordListFree(recs);
	return r;
}

static int hs_find(const struct host_vcpu_snap *s, unsigned hint, unsigned id)
{
	if (hint < s->n && s->id[hint] == id)
		return (int)hint;
	for (unsigned i = 0; i < s->n; i++)
		if (s->id[i] == id)
			return (int)i;
	return -1;
}

unsigned host_sampler_emit(const struct host_vcpu_snap *a, const struct host_vcpu_snap *b,
			   host_sampler_fn fn, void *ctx)
{
	static const char *const names[3] = { "time", "wait", "delay" };
	double secs = (double)(b->ns - a->ns) / 1e9, sum[3] = { 0 };
	bool any[3] = { false };
	unsigned emitted = 0;
	char metric[64];

	if (b->ns <= a->ns)
		return 0;
	for (unsigned i = 0; i < b->n; i++) {
		int j = hs_find(a, i, b->id[i]);

		if (j < 0)
			continue;
		for (int f = 0; f < 3; f++) {
			const uint64_t *fa = f == 0   ? a->time_ns
					     : f == 1 ? a->wait_ns
						      : a->delay_ns;
			const uint64_t *fb = f == 0   ? b->time_ns
					     : f == 1 ? b->wait_ns
						      : b->delay_ns;
			double pct;

			if (!(a->have[j] & b->have[i] & (1u << f)) || fb[i] < fa[j])
				continue;
			pct = (double)(fb[i] - fa[j]) / 1e7 / secs;
			snprintf(metric, sizeof(metric), "vcpu.%u.%s", b->id[i], names[f]);
			fn(ctx, metric, pct, "%");
			sum[f] += pct;
			any[f] = true;
			emitted++;
		}
	}
	for (int f = 0; f < 3; f++) {
		if (!any[f])
			continue;
		snprintf(metric, sizeof(metric), "vcpu.all.%s", names[f]);
		fn(ctx, metric, sum[f], "%");
		emitted++;
	}
	return emitted;
}
