// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * MMTests settings that lockstep accepts in a config and does not act on,
 * gathered from MMTests' configs (configs/config-*, config-global-dhp__*)
 * and the shell that reads them (shellpacks/common.sh, monitors.sh).  A
 * config that sets them gets one warning listing them, not one "unknown
 * name" each (config_check_known_ex).  A name lockstep does act on
 * (MONITORS_GZIP, MONITOR_UPDATE_FREQUENCY, ...) belongs in the caller's
 * known list instead, which wins over this one.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "config.h"
#include "mmtests_names.h"

const char *const config_mmtests_ignored[] = {
	/* monitors lockstep does not run */
	"RUN_MONITOR", "MONITORS_ALWAYS", "MONITORS_PLAIN", "MONITORS_STAP", "MONITOR_WAIT_TIME",
	/* profiling */
	"RUN_NOPROFILE", "RUN_FINEPROFILE", "RUN_COARSEPROFILE", "OPROFILE_REPORT_ANNOTATE",
	"OPROFILE_REPORT_CALLGRAPH",
	/* how MMTests runs a benchmark */
	"RUN_WARMUP", "MMTESTS_THREAD_CUTOFF", "CONTAINER_NO_PIDS_LIMIT", "MMTESTS_IGNORE_MIRROR",
	/* machine set-up MMTests does before a run */
	"RUN_TUNINGS", "VM_DIRTY_RATIO", "VM_TRANSPARENT_HUGEPAGES_DEFAULT", "SWAP_CONFIGURATION",
	"SWAP_PARTITIONS", "SWAP_SWAPFILE_SIZEMB", "SWAP_NFS_MOUNT", "SWAP_NBD_DEVICE",
	"SWAP_NBD_HOST", "SWAP_NBD_PORT", "MEMCG_SIZE", "TESTDISK_*",
	/* NUMA placement of benchmark instances */
	"MMTESTS_NUMA_POLICY", "MMTESTS_NUMA_NODE_NRCPUS", "MMTESTS_NODE_ID",
	/* MMTests' own host/guest token protocol; lockstep has its barrier */
	"MMTESTS_HOST_IP", "MMTESTS_HOST_PORT", "MMTESTS_GUEST_PORT",
	/* functions MMTests calls around each test; lockstep runs no hooks */
	"MONITOR_HOOKS",
	/* set-up that would change the machine under test: each gets a
	 * warning of its own, saying why */
	"TUNING_SYSCTL: lockstep writes no sysctl on a node (it would stay changed for "
	"every later run, and a guest's is its own); set it in the guest's image or, on "
	"the host, by hand",
	NULL,
};

/*
 * The benchmark names MMTests' configs use (MMTESTS="..."), so that a name
 * no lockstep spec answers to can be told apart from a typo.  "wis-*" is
 * a family: every name with that prefix.
 */
const char *const mmtests_benchmarks[] = {
	"aim9", "apachebench", "autonumabench", "blogbench", "bonniepp", "coremark",
	"cyclictest", "cyclictest-fine", "dbench", "dbench4", "easywave", "ebizzy", "fio",
	"fsmark", "futexbench-*", "gitcheckout", "gitsource", "hackbench-*", "hpcc",
	"io_uring", "iperf3-*", "kernbench", "klp", "kvmstart", "libmicro-*", "ltp", "monitor",
	"mutilate", "nap", "nas-*", "netperf-*", "parsec-*", "pedsort", "perffutexwake",
	"perfnuma", "perfpipe", "perfsyscall", "pgbench", "pistress", "pmqtest-*",
	"poundsyscall", "redis", "redis-memtier", "rtmigration", "saladfork", "schbench",
	"script", "sembench-*", "siege", "simoop", "specjbb", "specjbb2015", "sqlite",
	"sstartup", "stockfish", "stream", "stressng", "stutterp", "sysbench", "sysbenchcpu",
	"sysbenchmutex", "sysjitter", "tbench", "thpchallenge", "time_unmap", "trunc",
	"unixbench", "unixbenchd", "usemem", "wis-*", "xfsrepair", "xfstests", "xsbench",
	/* MMTests builds these from source as benchmarks of a compiler */
	"*build",
	NULL,
};

int mmtests_benchmark_match(const char *name)
{
	size_t n = strlen(name);
	int found = 0;
	for (size_t i = 0; mmtests_benchmarks[i]; i++) {
		const char *b = mmtests_benchmarks[i];
		size_t k = strlen(b);
		if (strcmp(name, b) == 0)
			return 2;
		if (b[0] == '*' ? n > k - 1 && strcmp(name + n - (k - 1), b + 1) == 0
		    : b[k - 1] == '*' && n > k - 1 && strncmp(name, b, k - 1) == 0)
			found = 1;
	}
	return found;
}
