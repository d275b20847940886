/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A guest's clock against the host's, from ping/pong exchanges over its
 * channel (Cristian's method, four timestamps as NTP takes them):
 *
 *   t1 host sends ping, t2 guest receives it, t3 guest sends pong,
 *   t4 host receives pong.
 *   offset = ((t2 - t1) + (t3 - t4)) / 2      (guest clock - host clock)
 *   delay  = (t4 - t1) - (t3 - t2)            (time on the wire, both ways)
 *
 * Whatever the asymmetry of the two directions, the true offset of one
 * exchange lies within delay/2 of its estimate, so exchanges with a small
 * delay are the ones worth believing.  Clocks also drift apart (a TCG
 * guest's clock is emulated), so one exchange is not enough for a whole
 * run: the last CLOCK_OFFSET_WINDOW exchanges are kept, the good ones (delay
 * close to the smallest) are fitted with a line over time, and an instant is
 * converted with the line at that instant.  The bound is the good
 * exchanges' delay/2 plus how far they stray from the line.
 *
 * A guest with the KVM PTP clock (guestagent/ptp.h) sends, on each pong, a
 * reading: at its instant M the host's CLOCK_REALTIME was H, within a
 * window W.  hostd works in CLOCK_MONOTONIC, so H becomes H - (realtime -
 * monotonic) of the host, that difference sampled when the ping left and
 * when the pong arrived (it moves only as NTP slews or steps the host's
 * clock, and the reading was taken in between): the offset sample is M
 * minus that, its bound W/2 plus half the spread of the difference.  Such
 * samples go into a clock_offset of their own, through the same fit.
 *
 * Pure arithmetic, except clock_realmono_read().
 */
#ifndef LOCKSTEP_CLOCK_OFFSET_H
#define LOCKSTEP_CLOCK_OFFSET_H

#include <stdbool.h>
#include <stdint.h>

#define CLOCK_OFFSET_WINDOW 64
/* No guest's monotonic clock is further than this from the host's: both
 * count from a boot, and 2^61 ns is 73 years.  A larger offset is a lie,
 * and refusing it keeps every sum of an instant and an offset in range. */
#define CLOCK_OFFSET_MAX_NS (1LL << 61)
/* How fast an honest clock's offset may move beyond its fitted drift:
 * the kernel slews a clock by at most 500 ppm (NTP's MAXFREQ). */
#define CLOCK_OFFSET_SLEW_PPM 500

struct clock_exchange {
	int64_t at_ns;	   /* host time of the exchange: (t1 + t4) / 2 */
	int64_t offset_ns; /* guest - host */
	int64_t delay_ns;
};

struct clock_offset {
	unsigned samples;     /* exchanges added, ever */
	unsigned count, next; /* ring of the last ones */
	struct clock_exchange ring[CLOCK_OFFSET_WINDOW];
	int64_t max_delay_ns; /* the largest delay in the ring */

	/* the current estimate (clock_offset_add refreshes it) */
	int64_t offset_ns;   /* guest - host at ref_ns */
	int64_t ref_ns;	     /* host time the estimate is for */
	double drift;	     /* d(offset)/d(host time), e.g. 1e-6 = 1 ppm */
	int64_t bound_ns;    /* |true - estimate| <= bound near ref_ns */
	int64_t fit_last_ns; /* the newest exchange the line rests on */

	/* samples whose delay is within this of 1.5x the smallest are fitted;
	 * 0: the ping/pong default (20 us: a TCG channel's jitter) */
	int64_t good_slack_ns;
};

/* One exchange's offset and delay.  0; -EINVAL when its timestamps cannot
 * be right (t4 before t1, t3 before t2, a negative delay); -ERANGE when
 * they overflow or put the offset past CLOCK_OFFSET_MAX_NS. */
int clock_offset_exchange(int64_t t1, int64_t t2, int64_t t3, int64_t t4, struct clock_exchange *out);
/* Adds one exchange; false (and nothing kept) when clock_offset_exchange
 * refuses it. */
bool clock_offset_add(struct clock_offset *c, int64_t t1, int64_t t2, int64_t t3, int64_t t4);
/* Whether exchange e disagrees with the estimate c (which has samples)
 * beyond both bounds (e's delay/2 and c's bound) and the slew an honest
 * clock may have had since the newest exchange the line rests on
 * (CLOCK_OFFSET_SLEW_PPM); *off_by and *allowed say by how much and what
 * was allowed. */
bool clock_offset_jumped(const struct clock_offset *c, const struct clock_exchange *e,
			 int64_t *off_by, int64_t *allowed);
/* Adds a sample made elsewhere (a PTP reading): at host instant at_ns the
 * guest's clock was offset_ns ahead, within bound_ns (>= 0). */
bool clock_offset_add_sample(struct clock_offset *c, int64_t at_ns, int64_t offset_ns,
			     int64_t bound_ns);
/* guest - host at host instant host_ns (the fitted line there). */
int64_t clock_offset_at(const struct clock_offset *c, int64_t host_ns);
/* The bound at host instant host_ns: bound_ns near the exchanges the line
 * rests on, growing by CLOCK_OFFSET_SLEW_PPM of the time from the newest
 * of them (a clock slews, and its frequency errs, beyond a fitted line). */
int64_t clock_offset_bound_at(const struct clock_offset *c, int64_t host_ns);
/* A guest instant on the host's clock, and a host instant on the guest's;
 * saturated at INT64_MIN / INT64_MAX, never overflowing (a guest names
 * any instant it likes). */
int64_t clock_offset_to_host(const struct clock_offset *c, int64_t guest_ns);
int64_t clock_offset_to_guest(const struct clock_offset *c, int64_t host_ns);

/* The host's CLOCK_REALTIME - CLOCK_MONOTONIC, read as mono, real, mono:
 * the true difference lies within window_ns/2 of diff_ns. */
struct clock_realmono {
	int64_t diff_ns, window_ns;
};
void clock_realmono_read(struct clock_realmono *out);

/* A guest's KVM PTP reading (proto.h: pong's ptp_*). */
struct clock_ptp_reading {
	int64_t guest_ns;      /* the guest agent's clock */
	int64_t guest_real_ns; /* the guest's CLOCK_REALTIME then */
	int64_t host_real_ns;  /* the host's CLOCK_REALTIME then (the PHC) */
	int64_t window_ns;
};
struct clock_ptp_sample {
	int64_t at_ns;	   /* host CLOCK_MONOTONIC of the reading */
	int64_t offset_ns; /* guest - host */
	int64_t bound_ns;
};
/* A reading taken during the exchange t1 (host sends the ping; before: the
 * host's difference then) .. t4 (the pong arrives; after: its difference
 * when converting) as an offset sample.  0; -ERANGE: numbers that overflow;
 * -EDOM: the reading falls outside [t1, t4] by more than its bound, so the
 * PHC is not this host's realtime (out still says where it fell). */
int clock_offset_from_ptp(const struct clock_ptp_reading *rd, const struct clock_realmono *before,
			  const struct clock_realmono *after, int64_t t1, int64_t t4,
			  struct clock_ptp_sample *out);

/* How fit a guest's clocksource is for microsecond timing. */
enum clock_source_fitness {
	CLOCK_SOURCE_FIT,     /* tsc, kvm-clock, arch_sys_counter */
	CLOCK_SOURCE_SLOW,    /* hpet, acpi_pm: monotonic, but a read costs a microsecond or more */
	CLOCK_SOURCE_COARSE,  /* jiffies: a tick (1 to 10 ms); timers no finer */
	CLOCK_SOURCE_UNKNOWN, /* a name lockstep does not know, or none */
};
enum clock_source_fitness clock_source_fitness(const char *name);

#endif
