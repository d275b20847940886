// SPDX-License-Identifier: GPL-2.0-or-later
#include "clock_offset.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <time.h>

/* Exchanges whose delay is within this of the smallest are "good": the
 * rest were held up somewhere and would only add their asymmetry. */
#define GOOD_DELAY_FACTOR 1.5
#define GOOD_DELAY_SLACK_NS 20000
/* A drift is only fitted over this much time; shorter spans give a slope
 * that is mostly noise. */
#define FIT_SPAN_MIN_NS 1000000000LL

static void estimate(struct clock_offset *c)
{
	int64_t min_delay = INT64_MAX, max_delay = 0;
	for (unsigned i = 0; i < c->count; i++) {
		if (c->ring[i].delay_ns < min_delay)
			min_delay = c->ring[i].delay_ns;
		if (c->ring[i].delay_ns > max_delay)
			max_delay = c->ring[i].delay_ns;
	}
	c->max_delay_ns = max_delay;
	double limit = (double)min_delay * GOOD_DELAY_FACTOR +
		       (double)(c->good_slack_ns ? c->good_slack_ns : GOOD_DELAY_SLACK_NS);

	/* least squares over the good exchanges, relative to the newest one so
	 * that the numbers stay small */
	int64_t ref = c->ring[(c->next + CLOCK_OFFSET_WINDOW - 1) % CLOCK_OFFSET_WINDOW].at_ns;
	double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
	int64_t first = INT64_MAX, last = INT64_MIN, worst_half = 0;
	for (unsigned i = 0; i < c->count; i++) {
		const struct clock_exchange *e = &c->ring[i];
		if ((double)e->delay_ns > limit)
			continue;
		double x = (double)(e->at_ns - ref), y = (double)e->offset_ns;
		n++;
		sx += x;
		sy += y;
		sxx += x * x;
		sxy += x * y;
		if (e->at_ns < first)
			first = e->at_ns;
		if (e->at_ns > last)
			last = e->at_ns;
		if ((e->delay_ns + 1) / 2 > worst_half)
			worst_half = (e->delay_ns + 1) / 2;
	}
	double slope = 0, mean_y = sy / n;
	double den = n * sxx - sx * sx;
	if (n >= 3 && last - first >= FIT_SPAN_MIN_NS && den > 0)
		slope = (n * sxy - sx * sy) / den;
	double intercept = mean_y - slope * (sx / n);

	/* how far the good exchanges stray from the line, on top of their own
	 * half-delay: what the line itself may be off by */
	double stray = 0;
	for (unsigned i = 0; i < c->count; i++) {
		const struct clock_exchange *e = &c->ring[i];
		if ((double)e->delay_ns > limit)
			continue;
		double fit = intercept + slope * (double)(e->at_ns - ref);
		double d = fabs((double)e->offset_ns - fit);
		if (d > stray)
			stray = d;
	}
	c->ref_ns = ref;
	c->fit_last_ns = last;
	c->offset_ns = (int64_t)llround(intercept);
	c->drift = slope;
	c->bound_ns = worst_half + (int64_t)ceil(stray);
}

static void store(struct clock_offset *c, int64_t at_ns, int64_t offset_ns, int64_t delay_ns)
{
	struct clock_exchange *e = &c->ring[c->next];
	e->offset_ns = offset_ns;
	e->delay_ns = delay_ns;
	e->at_ns = at_ns;
	c->next = (c->next + 1) % CLOCK_OFFSET_WINDOW;
	if (c->count < CLOCK_OFFSET_WINDOW)
		c->count++;
	c->samples++;
	estimate(c);
}

int clock_offset_exchange(int64_t t1, int64_t t2, int64_t t3, int64_t t4, struct clock_exchange *out)
{
	int64_t trip, held, out_way, back;
	if (t4 < t1 || t3 < t2)
		return -EINVAL;
	/* t2 and t3 are the guest's: any value at all */
	if (__builtin_sub_overflow(t4, t1, &trip) || __builtin_sub_overflow(t3, t2, &held) ||
	    __builtin_sub_overflow(t2, t1, &out_way) || __builtin_sub_overflow(t3, t4, &back))
		return -ERANGE;
	if (trip < held)
		return -EINVAL; /* the guest claims it held the ping longer than the trip */
	out->delay_ns = trip - held;
	/* halves first: the sums of two instants could overflow */
	out->at_ns = t1 + trip / 2;
	out->offset_ns = out_way / 2 + back / 2;
	if (out->offset_ns > CLOCK_OFFSET_MAX_NS || out->offset_ns < -CLOCK_OFFSET_MAX_NS)
		return -ERANGE;
	return 0;
}

bool clock_offset_add(struct clock_offset *c, int64_t t1, int64_t t2, int64_t t3, int64_t t4)
{
	struct clock_exchange e;
	if (clock_offset_exchange(t1, t2, t3, t4, &e) < 0)
		return false;
	store(c, e.at_ns, e.offset_ns, e.delay_ns);
	return true;
}

bool clock_offset_add_sample(struct clock_offset *c, int64_t at_ns, int64_t offset_ns, int64_t bound_ns)
{
	/* the fit keeps delay/2 as a sample's bound */
	if (bound_ns < 0 || bound_ns > INT64_MAX / 4 || offset_ns > CLOCK_OFFSET_MAX_NS ||
	    offset_ns < -CLOCK_OFFSET_MAX_NS)
		return false;
	store(c, at_ns, offset_ns, 2 * bound_ns);
	return true;
}

static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t s;
	return __builtin_add_overflow(a, b, &s) ? (b > 0 ? INT64_MAX : INT64_MIN) : s;
}

static int64_t sat_sub(int64_t a, int64_t b)
{
	int64_t s;
	return __builtin_sub_overflow(a, b, &s) ? (b < 0 ? INT64_MAX : INT64_MIN) : s;
}

/* A double as an int64, saturated (llround of one out of range is not). */
static int64_t sat_round(double x)
{
	if (!(x > -9.2e18)) /* also NaN */
		return x != x ? 0 : INT64_MIN;
	if (x > 9.2e18)
		return INT64_MAX;
	return (int64_t)llround(x);
}

int64_t clock_offset_at(const struct clock_offset *c, int64_t host_ns)
{
	/* the span in double: host_ns may be any instant a guest named */
	double span = (double)host_ns - (double)c->ref_ns;
	return sat_add(c->offset_ns, sat_round(c->drift * span));
}

int64_t clock_offset_to_host(const struct clock_offset *c, int64_t guest_ns)
{
	/* solve host = guest - offset(host) by fixed-point iteration: each
	 * step shrinks the error by the drift (1e-4 at most in practice), so
	 * three leave it far below a nanosecond */
	int64_t host = sat_sub(guest_ns, c->offset_ns);
	for (int i = 0; i < 3; i++)
		host = sat_sub(guest_ns, clock_offset_at(c, host));
	return host;
}

int64_t clock_offset_to_guest(const struct clock_offset *c, int64_t host_ns)
{
	return sat_add(host_ns, clock_offset_at(c, host_ns));
}

int64_t clock_offset_bound_at(const struct clock_offset *c, int64_t host_ns)
{
	/* exchanges held up on the way are not fitted: the line may rest on
	 * ones long ago, and an honest clock slews all that time */
	double since = fabs((double)host_ns - (double)c->fit_last_ns);
	return sat_add(c->bound_ns, sat_round(ceil(since * CLOCK_OFFSET_SLEW_PPM / 1e6)));
}

bool clock_offset_jumped(const struct clock_offset *c, const struct clock_exchange *e,
			 int64_t *off_by, int64_t *allowed)
{
	if (c->samples == 0)
		return false;
	*off_by = sat_sub(e->offset_ns, clock_offset_at(c, e->at_ns));
	*allowed = sat_add((e->delay_ns + 1) / 2, clock_offset_bound_at(c, e->at_ns));
	return *off_by > *allowed || *off_by < -*allowed;
}

void clock_realmono_read(struct clock_realmono *out)
{
	struct timespec a, r, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &b);
	int64_t ma = a.tv_sec * 1000000000LL + a.tv_nsec, mb = b.tv_sec * 1000000000LL + b.tv_nsec;
	out->diff_ns = r.tv_sec * 1000000000LL + r.tv_nsec - (ma + (mb - ma) / 2);
	out->window_ns = mb - ma;
}

int clock_offset_from_ptp(const struct clock_ptp_reading *rd, const struct clock_realmono *before,
			  const struct clock_realmono *after, int64_t t1, int64_t t4,
			  struct clock_ptp_sample *out)
{
	/* The difference at the reading lies between the two samples, each
	 * known within half its window: take the middle of the whole span. */
	int64_t wb = (before->window_ns + 1) / 2, wa = (after->window_ns + 1) / 2;
	int64_t lo = before->diff_ns - wb < after->diff_ns - wa ? before->diff_ns - wb
								: after->diff_ns - wa;
	int64_t hi = before->diff_ns + wb > after->diff_ns + wa ? before->diff_ns + wb
								: after->diff_ns + wa;
	int64_t diff = lo + (hi - lo) / 2;
	int64_t host_mono, offset;
	memset(out, 0, sizeof(*out));
	if (rd->window_ns < 0 || before->window_ns < 0 || after->window_ns < 0 ||
	    __builtin_sub_overflow(rd->host_real_ns, diff, &host_mono) ||
	    __builtin_sub_overflow(rd->guest_ns, host_mono, &offset))
		return -ERANGE;
	out->at_ns = host_mono;
	out->offset_ns = offset;
	out->bound_ns = (rd->window_ns + 1) / 2 + (hi - lo + 1) / 2;
	/* it was taken while the ping was out: anywhere else, the PHC does
	 * not read this host's realtime (another host, a lie, a bug) */
	if (host_mono < t1 - out->bound_ns || host_mono > t4 + out->bound_ns)
		return -EDOM;
	return 0;
}

enum clock_source_fitness clock_source_fitness(const char *name)
{
	static const char *const fit[] = { "tsc", "kvm-clock", "arch_sys_counter", NULL };
	static const char *const slow[] = { "hpet", "acpi_pm", NULL };
	static const char *const coarse[] = { "jiffies", "refined-jiffies", NULL };
	for (int i = 0; fit[i]; i++)
		if (!strcmp(name, fit[i]))
			return CLOCK_SOURCE_FIT;
	for (int i = 0; slow[i]; i++)
		if (!strcmp(name, slow[i]))
			return CLOCK_SOURCE_SLOW;
	for (int i = 0; coarse[i]; i++)
		if (!strcmp(name, coarse[i]))
			return CLOCK_SOURCE_COARSE;
	return CLOCK_SOURCE_UNKNOWN;
}
