/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A participant's clock, beside the ping/pong of run.c: the KVM PTP
 * readings its pongs carry, and the judgement of its clocksource. */
#include <errno.h>
#include <stdio.h>

#include "log.h"
#include "run_priv.h"

/* jiffies, hpet or acpi_pm make microsecond skews meaningless or costly:
 * say so before the first step, not in the analysis afterwards */
void run_clock_judge_source(struct run *r, struct participant *p)
{
	const char *cs = p->clocksource;
	const char *why;
	switch (clock_source_fitness(cs)) {
	case CLOCK_SOURCE_FIT:
		return;
	case CLOCK_SOURCE_SLOW:
		why = "is slow to read (a microsecond or more per stamp), though monotonic";
		break;
	case CLOCK_SOURCE_COARSE:
		why = "counts timer ticks (1 to 10 ms): every barrier is released immediately, "
		      "since a sleep to a common instant would wake up to a tick late";
		break;
	default:
		if (!cs[0])
			return; /* an agent that could not tell */
		why = "is not one lockstep knows to be fit for microsecond timing";
		break;
	}
	char what[320];
	snprintf(what, sizeof(what), "clocksource %s %s (tsc or kvm-clock is fit; boot the guest "
		 "with tsc=reliable and ACPI)", cs, why);
	log_warn("%s: %s", p->node.name, what);
	run_add_event(r, p, 0, what);
}

/* The guest's KVM PTP reading on a pong: the host's realtime at one of its
 * instants, turned into an offset sample on the host's monotonic clock. */
void run_clock_ptp_reading(struct run *r, struct participant *p, const struct proto_msg *m)
{
	const struct clock_ptp_reading rd = {
		.guest_ns = m->u.ping.ptp_mono_ns,
		.guest_real_ns = m->u.ping.ptp_real_ns,
		.host_real_ns = m->u.ping.ptp_host_real_ns,
		.window_ns = m->u.ping.ptp_window_ns,
	};
	struct clock_realmono now;
	struct clock_ptp_sample smp;
	clock_realmono_read(&now);
	int e = clock_offset_from_ptp(&rd, &p->ping_realmono, &now, p->ping_t1, p->node.rx_ns, &smp);
	if (e == 0) {
		if (!p->ptp.good_slack_ns)
			p->ptp.good_slack_ns = RUN_PTP_GOOD_SLACK_NS;
		clock_offset_add_sample(&p->ptp, smp.at_ns, smp.offset_ns, smp.bound_ns);
		p->ptp_real_behind_ns = rd.host_real_ns - rd.guest_real_ns;
		return;
	}
	if (p->ptp_refused++ == 0) {
		char what[320];
		if (e == -EDOM)
			snprintf(what, sizeof(what), "its KVM PTP clock put the host's monotonic clock "
				 "at %lld ns, outside the exchange it came with (%lld..%lld, bound %lld "
				 "ns): it does not read this host's realtime; such readings are ignored",
				 (long long)smp.at_ns, (long long)p->ping_t1, (long long)p->node.rx_ns,
				 (long long)smp.bound_ns);
		else
			snprintf(what, sizeof(what), "its KVM PTP reading (host realtime %lld ns) "
				 "cannot be converted; such readings are ignored",
				 (long long)rd.host_real_ns);
		log_warn("%s: %s", p->node.name, what);
		run_add_event(r, p, 0, what);
	}
}
