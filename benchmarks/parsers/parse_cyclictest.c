// SPDX-License-Identifier: GPL-2.0-or-later
/* cyclictest (rt-tests 2.x), run with -q so that it prints its summary once.
 * Without -h, one line per thread:
 *
 *   T: 0 (12583) P: 0 I:500 C:    200 Min:     65 Act:   69 Avg:   67 Max:      76
 *
 * With -h US (or -H US) a histogram of one-microsecond buckets instead, one
 * column per thread (-H adds a column of their sum when there are several),
 * and a footer:
 *
 *   000066 000015	000020
 *   # Total: 000000200 000000200
 *   # Min Latencies: 00066 00051
 *   # Avg Latencies: 00068 00067
 *   # Max Latencies: 00086 00095
 *   # Histogram Overflows: 00000 00000
 *
 * Percentiles come from the histogram: bucket b holds latencies of b us up
 * to b+1 us, and a percentile that lands among the overflows (beyond US) is
 * an error rather than a guess.  Without -q the T: lines are reprinted as
 * the run goes; the last one of each thread counts. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_parse_impl.h"
#include "xalloc.h"

#define CT_THREADS_MAX 512
#define CT_FOOTER_ROWS 5

/* in tenths, so that ranks are whole-number arithmetic */
static const unsigned ct_pcts10[] = { 500, 900, 990, 999 };
#define CT_PCTS (sizeof(ct_pcts10) / sizeof(ct_pcts10[0]))
#define CT_COUNT_MAX 9007199254740992.0 /* 2^53: counts stay exact */

enum { F_TOTAL, F_MIN, F_AVG, F_MAX, F_OVF };
static const char *const ct_footer[CT_FOOTER_ROWS] = {
	"# Total:",	    "# Min Latencies:",	      "# Avg Latencies:",
	"# Max Latencies:", "# Histogram Overflows:",
};

struct ct {
	/* T: lines, by thread */
	size_t t_n;
	bool t_have[CT_THREADS_MAX];
	double t_cycles[CT_THREADS_MAX], t_min[CT_THREADS_MAX], t_avg[CT_THREADS_MAX],
		t_max[CT_THREADS_MAX];
	/* the histogram */
	unsigned long hist_at, hist_end_at;
	size_t cols;
	double last_bucket, buckets;
	double colsum[CT_THREADS_MAX + 1];
	double row[CT_THREADS_MAX + 1];
	/* its footer */
	unsigned long foot_at[CT_FOOTER_ROWS];
	size_t foot_n[CT_FOOTER_ROWS];
	double foot[CT_FOOTER_ROWS][CT_THREADS_MAX + 1];
};

int bench__check_cyclictest_arg(const char *arg, char *why, size_t whylen)
{
	if (arg && strcmp(arg, "overall") != 0) {
		snprintf(why, whylen, "cyclictest parser: argument '%s' is not 'overall'", arg);
		return -EINVAL;
	}
	return 0;
}

/* numbers to the end of the line, at most max of them */
static int ct_numbers(struct bench__cur *c, const struct bench__line *l, const char *expected,
		      double *v, size_t max, size_t *n, char *why, size_t whylen)
{
	int r;

	for (*n = 0; !bench__rest_blank(c); (*n)++) {
		if (*n == max)
			return bench__fail(why, whylen, "line %lu: more than %zu threads", l->no,
					   max - 1);
		r = bench__number_at(c, l, expected, &v[*n], why, whylen);
		if (r < 0)
			return r;
		if (v[*n] != floor(v[*n]) || v[*n] >= CT_COUNT_MAX)
			return bench__fail(why, whylen, "line %lu: %g is not a whole number below 2^53",
					   l->no, v[*n]);
	}
	return 0;
}

/* "T: 0 (12583) P: 0 I:500 C:    200 Min:     65 Act:   69 Avg:   67 Max:      76" */
static int ct_tline(struct ct *s, struct bench__cur *c, const struct bench__line *l, char *why,
		    size_t whylen)
{
	static const char expected[] =
		"'T: <thread> (<tid>) ... C: <n> Min: <us> Act: <us> Avg: <us> Max: <us>'";
	static const char *const keys[] = { " C:", " Min:", " Avg:", " Max:" };
	double idx, v[4];
	int r = bench__number_at(c, l, expected, &idx, why, whylen);

	if (r < 0)
		return r;
	if (idx >= CT_THREADS_MAX || idx != floor(idx))
		return bench__fail(why, whylen, "line %lu: thread %g is not a thread number below %d",
				   l->no, idx, CT_THREADS_MAX);
	for (size_t i = 0; i < 4; i++) {
		const char *k = memmem(c->p, (size_t)(c->end - c->p), keys[i], strlen(keys[i]));
		char q[BENCH_QUOTE_MAX];

		if (!k)
			return bench__fail(why, whylen, "line %lu: expected %s, found '%s'", l->no,
					   expected, bench__quote(l->s, l->len, q, sizeof(q)));
		c->p = k + strlen(keys[i]);
		r = bench__number_at(c, l, expected, &v[i], why, whylen);
		if (r < 0)
			return r;
	}
	size_t t = (size_t)idx;
	s->t_have[t] = true;
	s->t_cycles[t] = v[0];
	s->t_min[t] = v[1];
	s->t_avg[t] = v[2];
	s->t_max[t] = v[3];
	if (t + 1 > s->t_n)
		s->t_n = t + 1;
	return 0;
}

/* "000066 000015	000020": the bucket, then a count per column */
static int ct_hist_row(struct ct *s, struct bench__cur *c, const struct bench__line *l,
		       double *bucket, size_t *cols, char *why, size_t whylen)
{
	static const char expected[] = "'<bucket us> <count>...' (a histogram line)";
	int r = bench__number_at(c, l, expected, bucket, why, whylen);

	if (r < 0)
		return r;
	r = ct_numbers(c, l, expected, s->row, CT_THREADS_MAX + 1, cols, why, whylen);
	if (r < 0)
		return r;
	if (*cols == 0 || *bucket != floor(*bucket))
		return bench__fail(why, whylen, "line %lu: expected %s", l->no, expected);
	return 0;
}

static int ct_line(struct ct *s, const struct bench__line *l, char *why, size_t whylen)
{
	struct bench__cur c = bench__cur_of(l);
	double bucket;
	size_t cols;
	int r;

	if (bench__eat(&c, "T:"))
		return ct_tline(s, &c, l, why, whylen);
	if (bench__eat(&c, "# Histogram") && bench__rest_blank(&c))
		return bench__once(&s->hist_at, l, "'# Histogram' line", why, whylen);
	c = bench__cur_of(l);
	for (int f = 0; f < CT_FOOTER_ROWS; f++) {
		if (!bench__eat(&c, ct_footer[f]))
			continue;
		if (!s->hist_at)
			return 0;
		if (!s->hist_end_at)
			s->hist_end_at = l->no;
		r = bench__once(&s->foot_at[f], l, ct_footer[f], why, whylen);
		return r < 0 ? r
			     : ct_numbers(&c, l, "numbers, one per thread", s->foot[f],
					  CT_THREADS_MAX + 1, &s->foot_n[f], why, whylen);
	}
	if (!s->hist_at || s->hist_end_at || l->len == 0 || l->s[0] == '#')
		return 0;
	r = ct_hist_row(s, &c, l, &bucket, &cols, why, whylen);
	if (r < 0)
		return r;
	if (s->buckets > 0 && cols != s->cols)
		return bench__fail(why, whylen, "line %lu: %zu columns where the histogram has %zu",
				   l->no, cols, s->cols);
	if (s->buckets > 0 && bucket <= s->last_bucket)
		return bench__fail(why, whylen, "line %lu: bucket %g after bucket %g", l->no,
				   bucket, s->last_bucket);
	s->cols = cols;
	s->last_bucket = bucket;
	s->buckets++;
	for (size_t i = 0; i < cols; i++)
		s->colsum[i] += s->row[i];
	return 0;
}

/* the bucket where each percentile lands: a second walk over the rows.
 * The rank of percentile p of n samples is ceil(p * n / 100). */
static int ct_percentiles(struct ct *s, const char *out, size_t len, size_t nthreads, double n,
			  double *at, char *why, size_t whylen)
{
	unsigned long long total = (unsigned long long)n, cum = 0;
	struct bench__lines it;
	struct bench__line l;
	size_t next = 0, cols;
	double bucket;

	bench__lines_init(&it, out, len);
	while (next < CT_PCTS && bench__line_next(&it, &l)) {
		struct bench__cur c = bench__cur_of(&l);

		if (l.no <= s->hist_at || l.no >= s->hist_end_at || l.len == 0 || l.s[0] == '#')
			continue;
		if (ct_hist_row(s, &c, &l, &bucket, &cols, why, whylen) < 0)
			return -EBADMSG; /* the first walk saw it whole */
		for (size_t t = 0; t < nthreads; t++)
			cum += (unsigned long long)s->row[t];
		/* total < 2^53 and the factor < 2^10: no overflow */
		while (next < CT_PCTS && cum * 1000 >= ct_pcts10[next] * total)
			at[next++] = bucket;
	}
	if (next < CT_PCTS)
		return bench__fail(why, whylen,
				   "percentile %g lies beyond the histogram (buckets up to %g us; "
				   "%llu of %llu samples overflowed): run with a larger -h",
				   ct_pcts10[next] / 10.0, s->last_bucket, total - cum, total);
	return 0;
}

/* overall min/avg/max: the overall average weighs each thread's by its
 * cycles */
static int ct_add_overall(struct bench_metrics *m, size_t n, const double *cycles, const double *min,
			  const double *avg, const double *max, char *why, size_t whylen)
{
	double lo = INFINITY, hi = 0, sum = 0, cyc = 0;
	int r;

	for (size_t t = 0; t < n; t++) {
		if (cycles[t] == 0)
			return bench__fail(why, whylen,
					   "thread %zu measured nothing (0 cycles): run too short?",
					   t);
		lo = fmin(lo, min[t]);
		hi = fmax(hi, max[t]);
		sum += avg[t] * cycles[t];
		cyc += cycles[t];
	}
	r = bench__metric_add(m, why, whylen, lo, "us", false, "lat_min");
	if (r == 0)
		r = bench__metric_add(m, why, whylen, sum / cyc, "us", false, "lat_avg");
	if (r == 0)
		r = bench__metric_add(m, why, whylen, hi, "us", false, "lat_max");
	return r;
}

static int ct_add_threads(struct bench_metrics *m, const char *arg, size_t n, const double *min,
			  const double *avg, const double *max, char *why, size_t whylen)
{
	int r = 0;

	for (size_t t = 0; r == 0 && !arg && t < n; t++) {
		r = bench__metric_add(m, why, whylen, min[t], "us", false, "t%zu.lat_min", t);
		if (r == 0)
			r = bench__metric_add(m, why, whylen, avg[t], "us", false, "t%zu.lat_avg", t);
		if (r == 0)
			r = bench__metric_add(m, why, whylen, max[t], "us", false, "t%zu.lat_max", t);
	}
	return r;
}

static int ct_from_tlines(struct ct *s, const char *arg, struct bench_metrics *m, char *why,
			  size_t whylen)
{
	if (s->t_n == 0)
		return bench__fail(why, whylen,
				   "no 'T: <thread> ...' lines and no histogram: output truncated?");
	for (size_t t = 0; t < s->t_n; t++)
		if (!s->t_have[t])
			return bench__fail(why, whylen,
					   "no 'T: %zu' line (there is one for thread %zu)", t,
					   s->t_n - 1);
	int r = ct_add_overall(m, s->t_n, s->t_cycles, s->t_min, s->t_avg, s->t_max, why, whylen);

	return r < 0 ? r : ct_add_threads(m, arg, s->t_n, s->t_min, s->t_avg, s->t_max, why, whylen);
}

/* the footer agrees with itself and with the rows: a histogram cut or
 * garbled in the middle is found here */
static int ct_check_hist(struct ct *s, size_t *nthreads, char *why, size_t whylen)
{
	for (int f = 0; f < CT_FOOTER_ROWS; f++)
		if (!s->foot_at[f])
			return bench__fail(why, whylen,
					   "no '%s' line after the histogram: output truncated?",
					   ct_footer[f]);
	size_t n = s->foot_n[F_MIN];
	/* -H adds a column of all threads to the rows, totals, maxima and
	 * overflows when there are several threads */
	size_t all = n > 1 ? n + 1 : n;
	if (n == 0 || s->foot_n[F_AVG] != n)
		return bench__fail(why, whylen, "line %lu: %zu minima but %zu averages",
				   s->foot_at[F_AVG], n, s->foot_n[F_AVG]);
	for (int f = 0; f < CT_FOOTER_ROWS; f++)
		if (s->foot_n[f] != n && s->foot_n[f] != all)
			return bench__fail(why, whylen, "line %lu: %zu values for %zu threads",
					   s->foot_at[f], s->foot_n[f], n);
	if (s->buckets == 0)
		return bench__fail(why, whylen, "line %lu: a histogram without rows", s->hist_at);
	if (s->cols != n && s->cols != all)
		return bench__fail(why, whylen, "the histogram has %zu columns for %zu threads",
				   s->cols, n);
	for (size_t t = 0; t < s->cols; t++)
		if (s->colsum[t] != s->foot[F_TOTAL][t])
			return bench__fail(why, whylen,
					   "column %zu of the histogram holds %g samples but '# Total:' says %g: "
					   "output garbled or truncated?",
					   t + 1, s->colsum[t], s->foot[F_TOTAL][t]);
	*nthreads = n;
	return 0;
}

static int ct_from_hist(struct ct *s, const char *out, size_t len, const char *arg,
			struct bench_metrics *m, char *why, size_t whylen)
{
	double cycles[CT_THREADS_MAX], at[CT_PCTS], total = 0, ovf = 0;
	const double *min = s->foot[F_MIN], *avg = s->foot[F_AVG], *max = s->foot[F_MAX];
	size_t n = 0;
	int r = ct_check_hist(s, &n, why, whylen);

	if (r < 0)
		return r;
	for (size_t t = 0; t < n; t++) {
		cycles[t] = s->foot[F_TOTAL][t] + s->foot[F_OVF][t];
		total += cycles[t];
		ovf += s->foot[F_OVF][t];
	}
	if (total >= CT_COUNT_MAX)
		return bench__fail(why, whylen, "%g samples: more than 2^53", total);
	r = ct_add_overall(m, n, cycles, min, avg, max, why, whylen);
	if (r == 0)
		r = ct_percentiles(s, out, len, n, total, at, why, whylen);
	for (size_t i = 0; r == 0 && i < CT_PCTS; i++)
		r = bench__metric_add(m, why, whylen, at[i], "us", false, "lat_p%g",
				      ct_pcts10[i] / 10.0);
	if (r == 0)
		r = bench__metric_add(m, why, whylen, ovf, "samples", false, "hist_overflows");
	return r < 0 ? r : ct_add_threads(m, arg, n, min, avg, max, why, whylen);
}

int bench__parse_cyclictest(const char *out, size_t len, const char *arg, struct bench_metrics *m,
			    char *why, size_t whylen)
{
	struct ct *s = xcalloc(1, sizeof(*s));
	struct bench__lines it;
	struct bench__line l;
	int r = 0;

	bench__lines_init(&it, out, len);
	while (r == 0 && bench__line_next(&it, &l))
		r = ct_line(s, &l, why, whylen);
	if (r == 0 && s->hist_at)
		r = ct_from_hist(s, out, len, arg, m, why, whylen);
	else if (r == 0)
		r = ct_from_tlines(s, arg, m, why, whylen);
	free(s);
	return r;
}
