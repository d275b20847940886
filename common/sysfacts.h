/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a node is: the system facts MMTests defines (NUM_LOGICAL_CPUS,
 * NUM_NODES, NUM_LLCS, MEMTOTAL_BYTES) and what a benchmark record needs. */
#ifndef LOCKSTEP_SYSFACTS_H
#define LOCKSTEP_SYSFACTS_H

#include <stdint.h>

#define SYSFACTS_NODES_MAX 64 /* nodes whose memory is recorded */

struct sysfacts {
	int num_logical_cpus; /* online CPUs */
	int num_nodes;	      /* NUMA nodes, at least 1 */
	int num_llcs;	      /* distinct last-level caches, at least 1 */
	uint64_t memtotal_bytes;
	uint64_t huge_pagesize; /* Hugepagesize of /proc/meminfo; 0 when none */
	/* MemTotal of node0, node1, ...: MMTests' MMTESTS_NODE_SIZE */
	uint64_t node_mem_bytes[SYSFACTS_NODES_MAX];
	char hostname[64];
	char kernel[128];     /* uname -r */
	char boot_id[40];     /* /proc/sys/kernel/random/boot_id */
	char clocksource[32]; /* current_clocksource */
	char cpu_model[128];
	int has_hw_virt; /* CPU flags carry vmx or svm */
	/* 1: the facts of another machine (a libvirt guest), not read here:
	 * this machine's /proc and /sys are not its own; sysfacts_read sets 0 */
	int elsewhere;
};

/* Reads the facts below root ("/" normally; a fake tree in tests).  Missing
 * files leave safe defaults (1 node, 1 LLC, "" strings); returns 0, or a
 * negative errno when not even the CPU count could be found. */
int sysfacts_read(struct sysfacts *f, const char *root);

#endif
