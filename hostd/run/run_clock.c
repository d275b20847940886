// SPDX-License-Identifier: GPL-2.0-or-later
/* A participant's clock (run_clock.h): ping/pong, KVM PTP, the offset in
 * use; and the judgement of a clocksource.  No I/O, no log. */
#include "run_clock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "xalloc.h"

struct part_clock {
	bool shared;
	bool ready;	   /* the first RUN_CLOCK_EXCHANGES are in */
	unsigned attempts; /* pongs that answered our ping, possible or not */
	bool ping_inflight;
	uint64_t ping_seq;
	int64_t ping_t1;
	struct clock_realmono ping_realmono; /* the host's realtime - mono as the ping left */
	struct clock_offset ping;	     /* estimated by ping/pong */
	/* the guest's KVM PTP clock, read on each pong when it has one: the
	 * offset in use (method "ptp-kvm") once use_ptp is set */
	struct clock_offset ptp;
	bool use_ptp;
	unsigned ptp_refused;	    /* readings outside the exchange they came with */
	int64_t ptp_real_behind_ns; /* the guest's realtime behind the host's, last reading */
	bool jumped;		    /* since the last record: flag it in the next */
};

struct part_clock *part_clock_new(bool shared)
{
	struct part_clock *c = xcalloc(1, sizeof(*c));
	c->shared = shared;
	return c;
}

void part_clock_free(struct part_clock *c)
{
	free(c);
}

bool part_clock_shared(const struct part_clock *c)
{
	return c->shared;
}

bool part_clock_ready(const struct part_clock *c)
{
	return c->ready;
}

const struct clock_offset *part_clock_offset(const struct part_clock *c)
{
	return c->use_ptp ? &c->ptp : &c->ping;
}

const char *part_clock_method(const struct part_clock *c)
{
	return c->shared ? "shared" : c->use_ptp ? "ptp-kvm" : "ping";
}

int64_t part_clock_to_guest(const struct part_clock *c, int64_t host_ns)
{
	return c->shared ? host_ns : clock_offset_to_guest(part_clock_offset(c), host_ns);
}

int64_t part_clock_to_host(const struct part_clock *c, int64_t guest_ns)
{
	/* a shared clock's estimate has no samples: the instant unchanged */
	return clock_offset_to_host(part_clock_offset(c), guest_ns);
}

int64_t part_clock_bound_at(const struct part_clock *c, int64_t host_ns)
{
	return c->shared ? 0 : clock_offset_bound_at(part_clock_offset(c), host_ns);
}

int64_t part_clock_max_delay_ns(const struct part_clock *c)
{
	return c->shared ? 0 : c->ping.max_delay_ns;
}

bool part_clock_refresh_due(const struct part_clock *c)
{
	return !c->shared && c->ready && !c->ping_inflight;
}

void part_clock_ping(struct part_clock *c, int64_t now_ns, const struct clock_realmono *rm,
		     struct proto_msg *m)
{
	*m = (struct proto_msg){ .type = PROTO_PING, .version = PROTO_VERSION };
	m->u.ping.seq = ++c->ping_seq;
	c->ping_realmono = *rm;
	c->ping_t1 = m->u.ping.t1 = now_ns;
	c->ping_inflight = true;
}

void part_clock_forget_ping(struct part_clock *c)
{
	c->ping_inflight = false;
}

bool part_clock_take_jump(struct part_clock *c)
{
	bool j = c->jumped;
	c->jumped = false;
	return j;
}

bool part_clock_jump_pending(const struct part_clock *c)
{
	return c->jumped;
}

/* A refresh between steps whose offset lies outside what the line said:
 * the guest's clock (or its answers) jumped. */
static void check_jump(struct part_clock *c, const struct proto_msg *m, int64_t rx_ns,
		       struct part_clock_news *news)
{
	struct clock_exchange e;
	int64_t off_by, allowed;
	if (clock_offset_exchange(c->ping_t1, m->u.ping.t2, m->u.ping.t3, rx_ns, &e) < 0 ||
	    !clock_offset_jumped(&c->ping, &e, &off_by, &allowed))
		return;
	news->jumped = !c->jumped;
	c->jumped = true;
	snprintf(news->jump, sizeof(news->jump),
		 "its clock offset jumped by %lld ns between "
		 "exchanges, beyond the %lld ns their bounds allow: flagged in barriers.ndjson",
		 (long long)off_by, (long long)allowed);
}

/* The guest's KVM PTP reading on a pong: the host's realtime at one of its
 * instants, turned into an offset sample on the host's monotonic clock. */
static void ptp_reading(struct part_clock *c, const struct proto_msg *m, int64_t rx_ns,
			const struct clock_realmono *rm, struct part_clock_news *news)
{
	const struct clock_ptp_reading rd = {
		.guest_ns = m->u.ping.ptp_mono_ns,
		.guest_real_ns = m->u.ping.ptp_real_ns,
		.host_real_ns = m->u.ping.ptp_host_real_ns,
		.window_ns = m->u.ping.ptp_window_ns,
	};
	struct clock_ptp_sample smp;
	int e = clock_offset_from_ptp(&rd, &c->ping_realmono, rm, c->ping_t1, rx_ns, &smp);
	if (e == 0) {
		if (!c->ptp.good_slack_ns)
			c->ptp.good_slack_ns = RUN_PTP_GOOD_SLACK_NS;
		clock_offset_add_sample(&c->ptp, smp.at_ns, smp.offset_ns, smp.bound_ns);
		c->ptp_real_behind_ns = rd.host_real_ns - rd.guest_real_ns;
		return;
	}
	if (c->ptp_refused++ > 0)
		return;
	news->ptp_refused = true;
	if (e == -EDOM)
		snprintf(news->ptp, sizeof(news->ptp),
			 "its KVM PTP clock put the host's monotonic "
			 "clock at %lld ns, outside the exchange it came with (%lld..%lld, bound %lld "
			 "ns): it does not read this host's realtime; such readings are ignored",
			 (long long)smp.at_ns, (long long)c->ping_t1, (long long)rx_ns,
			 (long long)smp.bound_ns);
	else
		snprintf(news->ptp, sizeof(news->ptp),
			 "its KVM PTP reading (host realtime %lld ns) "
			 "cannot be converted; such readings are ignored",
			 (long long)rd.host_real_ns);
}

enum part_clock_pong part_clock_pong(struct part_clock *c, const struct proto_msg *m, int64_t rx_ns,
				     const struct clock_realmono *rm, struct part_clock_news *news)
{
	*news = (struct part_clock_news){ 0 };
	/* Only the answer to the ping in flight counts: a late one would pair
	 * the wrong t4 with it. */
	if (c->shared || !c->ping_inflight || m->u.ping.seq != c->ping_seq || m->u.ping.t1 != c->ping_t1)
		return PART_CLOCK_PONG_IGNORED;
	c->ping_inflight = false;
	c->attempts++;
	if (c->ready && !c->use_ptp)
		check_jump(c, m, rx_ns, news);
	/* An impossible exchange (a clock that ran backwards, or lies) is left
	 * out; a clock with no possible exchange at all is not used for a
	 * common instant. */
	if (!clock_offset_add(&c->ping, c->ping_t1, m->u.ping.t2, m->u.ping.t3, rx_ns) &&
	    c->attempts == RUN_CLOCK_EXCHANGES)
		news->impossible = true;
	if (m->u.ping.ptp_window_ns)
		ptp_reading(c, m, rx_ns, rm, news);
	if (c->ready)
		return PART_CLOCK_PONG_REFRESH;
	if (c->attempts < RUN_CLOCK_EXCHANGES)
		return PART_CLOCK_PONG_MORE;
	c->ready = true;
	/* the guest's PTP clock reads the host's: far tighter than any trip */
	c->use_ptp = c->ptp.samples > 0;
	return PART_CLOCK_PONG_READY;
}

bool part_clock_describe(const struct part_clock *c, char *buf, size_t len)
{
	if (c->use_ptp)
		snprintf(buf, len,
			 "clock offset %+.3f ms, bound %.3f us (KVM PTP clock, %u readings; "
			 "ping/pong said %+.3f ms, bound %.1f us)",
			 (double)c->ptp.offset_ns / 1e6, (double)c->ptp.bound_ns / 1e3, c->ptp.samples,
			 (double)c->ping.offset_ns / 1e6, (double)c->ping.bound_ns / 1e3);
	else if (c->ping.samples)
		snprintf(buf, len, "clock offset %+.3f ms, bound %.1f us (%u exchanges)",
			 (double)c->ping.offset_ns / 1e6, (double)c->ping.bound_ns / 1e3,
			 c->ping.samples);
	else
		snprintf(buf, len,
			 "none of %u clock exchanges was possible: its start instants "
			 "cannot be put on the host's clock",
			 c->attempts);
	return c->use_ptp || c->ping.samples;
}

json_object *part_clock_json(const struct part_clock *c)
{
	const struct clock_offset *in_use = part_clock_offset(c);
	json_object *o = json_object_new_object();
	json_object_object_add(o, "method", json_object_new_string(part_clock_method(c)));
	json_object_object_add(o, "offset_ns", json_object_new_int64(in_use->offset_ns));
	json_object_object_add(o, "bound_ns", json_object_new_int64(in_use->bound_ns));
	json_object_object_add(o, "exchanges", json_object_new_int64(c->ping.samples));
	if (c->ptp.samples || c->ptp_refused) {
		/* what ping/pong alone would have said, to judge the two by */
		json_object_object_add(o, "ptp_readings", json_object_new_int64(c->ptp.samples));
		json_object_object_add(o, "ptp_refused", json_object_new_int64(c->ptp_refused));
		json_object_object_add(o, "ping_offset_ns", json_object_new_int64(c->ping.offset_ns));
		json_object_object_add(o, "ping_bound_ns", json_object_new_int64(c->ping.bound_ns));
		json_object_object_add(o, "guest_realtime_behind_ns",
				       json_object_new_int64(c->ptp_real_behind_ns));
	}
	return o;
}

/* jiffies, hpet or acpi_pm make microsecond skews meaningless or costly:
 * said before the first step, not in the analysis afterwards */
const char *part_clock_source_warning(const char *cs, char *buf, size_t len)
{
	const char *why;
	switch (clock_source_fitness(cs)) {
	case CLOCK_SOURCE_FIT: return NULL;
	case CLOCK_SOURCE_SLOW:
		why = "is slow to read (a microsecond or more per stamp), though monotonic";
		break;
	case CLOCK_SOURCE_COARSE:
		why = "counts timer ticks (1 to 10 ms): every barrier is released immediately, "
		      "since a sleep to a common instant would wake up to a tick late";
		break;
	default:
		if (!cs[0])
			return NULL; /* an agent that could not tell */
		why = "is not one lockstep knows to be fit for microsecond timing";
		break;
	}
	snprintf(buf, len,
		 "clocksource %s %s (tsc or kvm-clock is fit; boot the guest with "
		 "tsc=reliable and ACPI)",
		 cs, why);
	return buf;
}
