/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Names of MMTests (mmtests_names.c). */
#ifndef LOCKSTEP_MMTESTS_NAMES_H
#define LOCKSTEP_MMTESTS_NAMES_H

/* The benchmark names MMTests' configs use; "x-*" is a family. */
extern const char *const mmtests_benchmarks[];

/* 2 when name is one of them, 1 when it only has a family's form
 * (iperf3-ipv4-tpc), 0 when it is neither. */
int mmtests_benchmark_match(const char *name);

#endif
