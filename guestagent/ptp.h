/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The guest's KVM PTP clock (ptp_kvm): a PTP hardware clock whose every
 * read is a hypercall that returns the HOST's CLOCK_REALTIME.  With it the
 * agent tells hostd, without any round trip over the channel, where the
 * host's clock stood at one of its own instants:
 *
 *   rt_a = CLOCK_REALTIME, M = the agent's clock, rt_b = CLOCK_REALTIME
 *   pairs (sys, phc): this system's CLOCK_REALTIME and the PHC, read
 *   together by the kernel (a cross-timestamp, or stamps around the read)
 *
 *   reading: at agent instant M, this system's CLOCK_REALTIME was
 *   real = (rt_a + rt_b) / 2 and the host's was real + (phc - sys) of the
 *   tightest pair; the window is (rt_b - rt_a) + that pair's own window.
 *
 * hostd turns the host's realtime into its monotonic clock (docs/
 * performance.md).  The PHC is behind a small interface so that a test
 * double can stand in for it: these machines run TCG, where ptp_kvm cannot
 * load.
 */
#ifndef GUESTAGENT_PTP_H
#define GUESTAGENT_PTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PTP_KVM_CLOCK_NAME "KVM virtual PTP"
/* Pairs asked of the kernel per reading (its limit is 25): each costs a
 * hypercall; the tightest one is kept. */
#define PTP_PAIRS 7

/* One PHC read and this system's CLOCK_REALTIME at the same moment: sys_ns
 * is the middle of the stamps around the read, window_ns their distance
 * (0 for a cross-timestamp, which pairs the two exactly). */
struct ptp_pair {
	int64_t sys_ns, phc_ns, window_ns;
};

/* What goes into a pong (proto.h: ping.ptp_*). */
struct ptp_reading {
	int64_t mono_ns;      /* the agent's clock (aclock) */
	int64_t real_ns;      /* this system's CLOCK_REALTIME then */
	int64_t host_real_ns; /* the host's CLOCK_REALTIME then */
	int64_t window_ns;    /* >= 1: the full width of the uncertainty */
};

enum ptp_method {
	PTP_PRECISE,  /* PTP_SYS_OFFSET_PRECISE: a cross-timestamp */
	PTP_EXTENDED, /* PTP_SYS_OFFSET_EXTENDED: stamps around each read */
	PTP_PLAIN,    /* PTP_SYS_OFFSET: stamps between the reads */
	PTP_NMETHODS,
};

struct ptp_clock;
struct ptp_ops {
	/* Fills up to max pairs: their number (> 0) or -errno. */
	int (*pairs)(struct ptp_clock *c, struct ptp_pair *out, unsigned max);
	/* This system's CLOCK_REALTIME, as the pairs' sys_ns read it. */
	int64_t (*sys_now)(struct ptp_clock *c);
};

struct ptp_clock {
	const struct ptp_ops *ops;
	int fd;
	enum ptp_method method; /* the one that worked last */
	char path[256];
	int64_t behind_ns; /* the synthetic clock: this system's realtime lag */
	unsigned failures; /* readings that failed, ever */
};

/* The first /sys/class/ptp/ptpN (lowest N) under root whose clock_name is
 * PTP_KVM_CLOCK_NAME; dev gets <root>/dev/ptpN.  0; -ENOENT: no such
 * clock; -ENODEV: there is one but no device node (dev names it). */
int ptp_find_kvm(const char *root, char *dev, size_t len);
/* Opens a PHC device and reads it once, to find the best method that
 * works.  0 or -errno (-ENOTTY: not a PTP clock). */
int ptp_open(struct ptp_clock *c, const char *dev);
/* The test double (--ptp-synthetic-ns): a PHC that reads this system's
 * CLOCK_REALTIME, as the host's would on the same machine, while the
 * "guest's" CLOCK_REALTIME lags it by behind_ns. */
void ptp_open_synthetic(struct ptp_clock *c, int64_t behind_ns);
void ptp_close(struct ptp_clock *c);
const char *ptp_method_name(enum ptp_method m);

/* A reading now.  0 or -errno (-EAGAIN: a clock stepped while it was
 * taken). */
int ptp_read(struct ptp_clock *c, struct ptp_reading *out);
/* The arithmetic of ptp_read, for tests: rt_a, agent_ns, rt_b read in that
 * order, then n pairs.  0, -EAGAIN (rt_b before rt_a) or -ERANGE (no pair
 * with a sane window, or numbers that would overflow). */
int ptp_combine(int64_t rt_a, int64_t agent_ns, int64_t rt_b, const struct ptp_pair *pairs,
		unsigned n, struct ptp_reading *out);

#endif
