/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The distribution-free confidence interval of a median, from order
 * statistics: one definition for hostctl's statistics and hostd's
 * adaptive iterations, so that the interval a run stops on is the one
 * compare prints.  Uses GSL's binomial distribution; built as its own
 * library (common/meson.build), so the guest agent does not link GSL.
 */
#ifndef LOCKSTEP_MEDIAN_CI_H
#define LOCKSTEP_MEDIAN_CI_H

#include <stddef.h>

/* A 95% interval of the median from order statistics needs n >= 6. */
#define MEDIAN_CI_MIN_N 6

/* The widest-order-statistic-pair interval with coverage >= conf on sorted
 * data: [x(k), x(n+1-k)], its coverage in *level; -ERANGE when n is too
 * small for conf. */
int median_ci(const double *sorted, size_t n, double conf, double *lo, double *hi, double *level);
/* The median of sorted data (n > 0). */
double median_sorted(const double *sorted, size_t n);

#endif
