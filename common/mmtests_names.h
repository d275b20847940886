/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Names of MMTests (mmtests_names.c). */
#ifndef LOCKSTEP_MMTESTS_NAMES_H
#define LOCKSTEP_MMTESTS_NAMES_H

/* The benchmark names MMTests' configs use; "x-*" is a family.  why: why
 * lockstep has no spec of that name, or NULL when it has one. */
struct mmtests_benchmark {
	const char *name;
	const char *why;
};
extern const struct mmtests_benchmark mmtests_benchmarks[];

/* 2 when name is one of them, 1 when it only has a family's form
 * (iperf3-ipv4-tpc), 0 when it is neither. */
int mmtests_benchmark_match(const char *name);
/* why lockstep lacks the MMTests benchmark name (one clause, no final
 * period), or NULL when it has it or name is not MMTests' */
const char *mmtests_benchmark_why(const char *name);

#endif
