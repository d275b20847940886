// SPDX-License-Identifier: GPL-2.0-or-later
#include "median_ci.h"

#include <errno.h>
#include <gsl/gsl_cdf.h>

int median_ci(const double *s, size_t n, double conf, double *lo, double *hi, double *level)
{
	size_t k = 0;

	/* largest k with P(B <= k-1) <= (1-conf)/2, B ~ Bin(n, 1/2) */
	while (k + 1 <= n / 2 &&
	       gsl_cdf_binomial_P((unsigned)k, 0.5, (unsigned)n) <= (1 - conf) / 2 + 1e-12)
		k++;
	if (k == 0)
		return -ERANGE;
	*lo = s[k - 1];
	*hi = s[n - k];
	*level = 1 - 2 * gsl_cdf_binomial_P((unsigned)(k - 1), 0.5, (unsigned)n);
	return 0;
}

double median_sorted(const double *s, size_t n)
{
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}
