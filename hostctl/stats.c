// SPDX-License-Identifier: GPL-2.0-or-later
/* Descriptive statistics, rank and t tests, Holm, Jain (see stats.h). */
#include "stats.h"

#include <errno.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sf_gamma.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "median_ci.h"
#include "xalloc.h"

const char *stats_method_name(enum stats_method m)
{
	switch (m) {
	case STATS_MWU_EXACT: return "mann-whitney-exact";
	case STATS_MWU_NORMAL: return "mann-whitney-normal";
	case STATS_WELCH: return "welch";
	}
	return "?";
}

int stats_check_finite(const double *x, size_t n, size_t *bad)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i])) {
			*bad = i;
			return -EDOM;
		}
	return 0;
}

static int dbl_cmp(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

int stats_describe(const double *x, size_t n, struct stats_desc *d)
{
	double *s, sum = 0, ss = 0;
	size_t bad;

	if (n == 0)
		return -EINVAL;
	if (stats_check_finite(x, n, &bad) < 0)
		return -EDOM;
	s = xmalloc(n * sizeof(*s));
	memcpy(s, x, n * sizeof(*s));
	qsort(s, n, sizeof(*s), dbl_cmp);
	memset(d, 0, sizeof(*d));
	d->n = n;
	d->min = s[0];
	d->max = s[n - 1];
	d->median = median_sorted(s, n);
	for (size_t i = 0; i < n; i++)
		sum += s[i];
	d->mean = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (s[i] - d->mean) * (s[i] - d->mean);
	d->sd = n > 1 ? sqrt(ss / (double)(n - 1)) : NAN;
	d->cv = n > 1 && d->mean != 0 ? d->sd / fabs(d->mean) : NAN;
	d->has_ci = median_ci(s, n, 0.95, &d->ci_lo, &d->ci_hi, &d->ci_level) == 0;
	free(s);
	return 0;
}

/* ---- Mann-Whitney U ---- */

/* The exact null distribution of U for (m, n), as cumulative
 * probabilities, cached: a comparison asks for the same sizes on every row. */
struct mwu_dist {
	size_t m, n;
	double *cdf; /* cdf[u] = P(U <= u), u = 0..m*n */
};

#define MWU_CACHE 8
static struct mwu_dist mwu_cache[MWU_CACHE];
static size_t mwu_next;

/*
 * f(m', u) counts the arrangements of m' x-values among n' y-values with
 * U = u; adding one y-value gives f(m', u) += f(m'-1, u - n') (the new
 * largest value is an x with n' y-values below it, or it is the new y).
 * f(m'-1, .) is already the one for n' when m' is reached (ascending).
 * Only additions of positive counts: no cancellation.
 */
static const double *mwu_cdf(size_t m, size_t n)
{
	size_t w = m * n + 1;
	struct mwu_dist *c;
	double *f, total = 0, acc = 0;

	for (size_t i = 0; i < MWU_CACHE; i++)
		if (mwu_cache[i].cdf && mwu_cache[i].m == m && mwu_cache[i].n == n)
			return mwu_cache[i].cdf;
	f = xcalloc((m + 1) * w, sizeof(*f));
	for (size_t mm = 0; mm <= m; mm++)
		f[mm * w] = 1; /* n' = 0: U = 0 in one way */
	for (size_t nn = 1; nn <= n; nn++)
		for (size_t mm = 1; mm <= m; mm++)
			for (size_t u = mm * nn; u >= nn; u--)
				f[mm * w + u] += f[(mm - 1) * w + u - nn];
	c = &mwu_cache[mwu_next];
	mwu_next = (mwu_next + 1) % MWU_CACHE;
	free(c->cdf);
	c->m = m;
	c->n = n;
	c->cdf = xmalloc(w * sizeof(double));
	for (size_t u = 0; u < w; u++)
		total += f[m * w + u];
	for (size_t u = 0; u < w; u++) {
		acc += f[m * w + u];
		c->cdf[u] = acc / total;
	}
	free(f);
	return c->cdf;
}

void stats_cleanup(void)
{
	for (size_t i = 0; i < MWU_CACHE; i++) {
		free(mwu_cache[i].cdf);
		mwu_cache[i].cdf = NULL;
	}
}

double stats_mwu_min_p(size_t nx, size_t ny)
{
	return fmin(1, 2 * exp(-gsl_sf_lnchoose((unsigned)(nx + ny), (unsigned)nx)));
}

struct ranked {
	double v;
	int side;
};

static int ranked_cmp(const void *pa, const void *pb)
{
	return dbl_cmp(&((const struct ranked *)pa)->v, &((const struct ranked *)pb)->v);
}

/* Rank sum of x (mid-ranks for ties); *ties gets sum(t^3 - t). */
static double rank_sum(const double *x, size_t nx, const double *y, size_t ny, double *ties)
{
	size_t n = nx + ny;
	struct ranked *r = xmalloc(n * sizeof(*r));
	double rx = 0;

	for (size_t i = 0; i < nx; i++)
		r[i] = (struct ranked){ x[i], 0 };
	for (size_t i = 0; i < ny; i++)
		r[nx + i] = (struct ranked){ y[i], 1 };
	qsort(r, n, sizeof(*r), ranked_cmp);
	*ties = 0;
	for (size_t i = 0, j; i < n; i = j) {
		double t, mid;

		for (j = i + 1; j < n && r[j].v == r[i].v; j++)
			;
		t = (double)(j - i);
		mid = (double)(i + 1 + j) / 2; /* ranks i+1..j */
		*ties += t * t * t - t;
		for (size_t k = i; k < j; k++)
			if (r[k].side == 0)
				rx += mid;
	}
	free(r);
	return rx;
}

int stats_mann_whitney(const double *x, size_t nx, const double *y, size_t ny, struct stats_test *t)
{
	double ties, u, mn = (double)nx * (double)ny, n = (double)(nx + ny);
	size_t bad;

	if (!nx || !ny)
		return -EINVAL;
	if (stats_check_finite(x, nx, &bad) < 0 || stats_check_finite(y, ny, &bad) < 0)
		return -EDOM;
	u = rank_sum(x, nx, y, ny, &ties) - (double)nx * (double)(nx + 1) / 2;
	t->stat = u;
	t->df = NAN;
	if (nx < STATS_MWU_EXACT_MAX && ny < STATS_MWU_EXACT_MAX && ties == 0) {
		const double *cdf = mwu_cdf(nx, ny);
		size_t k = (size_t)u;

		t->method = STATS_MWU_EXACT;
		t->p = u > mn / 2 ? 1 - cdf[k - 1] : cdf[k];
		t->p = fmin(1, 2 * t->p);
		return 0;
	}
	t->method = STATS_MWU_NORMAL;
	{
		double z = u - mn / 2;
		double sigma = sqrt(mn / 12 * ((n + 1) - ties / (n * (n - 1))));

		if (sigma == 0) { /* every value equal: nothing to tell apart */
			t->p = 1;
			return 0;
		}
		z = (z - copysign(0.5, z) * (z != 0)) / sigma;
		t->p = fmin(1, 2 * gsl_cdf_ugaussian_Q(fabs(z)));
	}
	return 0;
}

/* ---- Welch ---- */

static void mean_var(const double *x, size_t n, double *mean, double *var)
{
	double s = 0, ss = 0;

	for (size_t i = 0; i < n; i++)
		s += x[i];
	*mean = s / (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - *mean) * (x[i] - *mean);
	*var = ss / (double)(n - 1);
}

int stats_welch(const double *x, size_t nx, const double *y, size_t ny, struct stats_test *t)
{
	double mx, vx, my, vy, sx, sy, se2;
	size_t bad;

	if (nx < 2 || ny < 2)
		return -ERANGE;
	if (stats_check_finite(x, nx, &bad) < 0 || stats_check_finite(y, ny, &bad) < 0)
		return -EDOM;
	mean_var(x, nx, &mx, &vx);
	mean_var(y, ny, &my, &vy);
	sx = vx / (double)nx;
	sy = vy / (double)ny;
	se2 = sx + sy;
	t->method = STATS_WELCH;
	if (se2 == 0) {
		if (mx != my)
			return -ENODATA;
		t->stat = 0;
		t->df = NAN;
		t->p = 1;
		return 0;
	}
	t->stat = (mx - my) / sqrt(se2);
	t->df = se2 * se2 / (sx * sx / (double)(nx - 1) + sy * sy / (double)(ny - 1));
	t->p = fmin(1, 2 * gsl_cdf_tdist_Q(fabs(t->stat), t->df));
	return 0;
}

/* ---- Holm ---- */

static const double *holm_p;

static int holm_cmp(const void *pa, const void *pb)
{
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;

	if (holm_p[a] != holm_p[b])
		return holm_p[a] < holm_p[b] ? -1 : 1;
	return (a > b) - (a < b);
}

void stats_holm(const double *p, size_t n, double *adj)
{
	size_t *o = xmalloc((n ? n : 1) * sizeof(*o));
	double run = 0;

	for (size_t i = 0; i < n; i++)
		o[i] = i;
	holm_p = p;
	qsort(o, n, sizeof(*o), holm_cmp);
	for (size_t i = 0; i < n; i++) {
		double a = fmin(1, (double)(n - i) * p[o[i]]);

		run = fmax(run, a); /* step-down: never below an earlier one */
		adj[o[i]] = run;
	}
	free(o);
}

int stats_jain(const double *x, size_t n, double *j)
{
	double s = 0, ss = 0;

	if (n == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!(x[i] >= 0))
			return -ERANGE;
		s += x[i];
		ss += x[i] * x[i];
	}
	if (ss == 0)
		return -ERANGE;
	*j = s * s / ((double)n * ss);
	return 0;
}
