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
	"RUN_MONITOR",
	"MONITORS_ALWAYS",
	"MONITORS_PLAIN",
	"MONITORS_STAP",
	"MONITOR_WAIT_TIME",
	/* profiling */
	"RUN_NOPROFILE",
	"RUN_FINEPROFILE",
	"RUN_COARSEPROFILE",
	"OPROFILE_REPORT_ANNOTATE",
	"OPROFILE_REPORT_CALLGRAPH",
	/* how MMTests runs a benchmark */
	"RUN_WARMUP",
	"MMTESTS_THREAD_CUTOFF",
	"CONTAINER_NO_PIDS_LIMIT",
	"MMTESTS_IGNORE_MIRROR",
	/* machine set-up MMTests does before a run */
	"RUN_TUNINGS",
	"VM_DIRTY_RATIO",
	"VM_TRANSPARENT_HUGEPAGES_DEFAULT",
	"SWAP_CONFIGURATION",
	"SWAP_PARTITIONS",
	"SWAP_SWAPFILE_SIZEMB",
	"SWAP_NFS_MOUNT",
	"SWAP_NBD_DEVICE",
	"SWAP_NBD_HOST",
	"SWAP_NBD_PORT",
	"MEMCG_SIZE",
	"TESTDISK_*",
	/* NUMA placement of benchmark instances */
	"MMTESTS_NUMA_POLICY",
	"MMTESTS_NUMA_NODE_NRCPUS",
	"MMTESTS_NODE_ID",
	/* MMTests' own host/guest token protocol; lockstep has its barrier */
	"MMTESTS_HOST_IP",
	"MMTESTS_HOST_PORT",
	"MMTESTS_GUEST_PORT",
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
 * no lockstep spec answers to can be told apart from a typo, and why
 * lockstep lacks each one it lacks: that reason goes into the one line that
 * refuses it.  "wis-*" is a family (every name with that prefix), "*build"
 * one by suffix.  A NULL why: lockstep has a spec of that name.
 */
#define NOT_IN_DEBIAN "not in Debian 12's archive: MMTests downloads and builds it"

const struct mmtests_benchmark mmtests_benchmarks[] = {
	{ "aim9", NOT_IN_DEBIAN " (AIM Suite IX)" },
	{ "apachebench", NULL },
	{ "autonumabench", NOT_IN_DEBIAN " (the autonuma-benchmark sources)" },
	{ "blogbench", NOT_IN_DEBIAN },
	{ "bonniepp", NULL },
	{ "coremark", NOT_IN_DEBIAN },
	{ "cyclictest", NULL },
	{ "cyclictest-fine", NULL },
	{ "dbench", NULL },
	{ "dbench4", NULL },
	{ "easywave", NOT_IN_DEBIAN },
	{ "ebizzy", NOT_IN_DEBIAN },
	{ "fio", NULL },
	{ "fsmark", NULL },
	{ "futexbench-*", NULL },
	{ "gitcheckout", "it clones a git repository over the network (MMTests' mirror), which a "
			 "node does not have" },
	{ "gitsource", "it runs git's own test suite from git's sources, which Debian does not "
		       "ship to run" },
	{ "hackbench-*", NULL },
	{ "hpcc", "Debian's hpcc runs under MPI with an input sized for the machine that MMTests "
		  "writes; no spec yet" },
	{ "io_uring", "it runs fio's t/io_uring test program, which Debian's fio package does not "
		      "ship" },
	{ "iperf3-*", NULL },
	{ "kernbench", NULL },
	{ "klp", "it builds a live-patch kernel module against the node's running kernel" },
	{ "kvmstart", "it starts KVM guests of its own inside the node" },
	{ "libmicro-*", NOT_IN_DEBIAN },
	{ "ltp", NOT_IN_DEBIAN " (the Linux Test Project)" },
	{ "monitor", NULL },
	{ "mutilate", NOT_IN_DEBIAN },
	{ "nap", NULL },
	{ "nas-*", NOT_IN_DEBIAN " (the NAS Parallel Benchmarks)" },
	{ "netperf-*", "Debian's netperf is in non-free, which lockstep does not install from" },
	{ "parsec-*", NOT_IN_DEBIAN },
	{ "pedsort", NOT_IN_DEBIAN },
	{ "perffutexwake", NULL },
	{ "perfnuma", NULL },
	{ "perfpipe", NULL },
	{ "perfsyscall", NULL },
	{ "pgbench", NULL },
	{ "pistress", NULL },
	{ "pmqtest-*", NULL },
	{ "poundsyscall", "MMTests' own program, built at run time" },
	{ "redis", NULL },
	{ "redis-memtier", "memtier_benchmark is not in Debian 12's archive" },
	{ "rtmigration", NULL },
	{ "saladfork", "MMTests' own program, built at run time" },
	{ "schbench", NOT_IN_DEBIAN },
	{ "script", "it runs a script of the lab's own (MMTests' SCRIPT_*): give it as a "
		    "COMMAND_<NAME> of g.conf" },
	{ "sembench-*", NOT_IN_DEBIAN },
	{ "siege", "siege is in Debian, but it needs a web server started in the node; no spec "
		   "yet" },
	{ "simoop", NOT_IN_DEBIAN },
	{ "specjbb", "SPECjbb is licensed per site, not in Debian" },
	{ "specjbb2015", "SPECjbb is licensed per site, not in Debian" },
	{ "sqlite", NULL },
	{ "sstartup", "it times desktop programs (libreoffice, gnome-terminal) starting under "
		      "I/O load, with scripts MMTests downloads" },
	{ "stockfish", NULL },
	{ "stream", NOT_IN_DEBIAN " (McCalpin's STREAM, compiled for the machine)" },
	{ "stressng", NULL },
	{ "stutterp", "MMTests' own programs, built at run time" },
	{ "sysbench", "MMTests' sysbench is its OLTP test against a database it builds and "
		      "starts; sysbenchcpu and sysbenchmutex are here" },
	{ "sysbenchcpu", NULL },
	{ "sysbenchmutex", NULL },
	{ "sysjitter", NOT_IN_DEBIAN },
	{ "tbench", NULL },
	{ "tbench4", NULL },
	{ "thpchallenge", "MMTests' own program, built at run time" },
	{ "time_unmap", "MMTests' own program, built at run time" },
	{ "trunc", NULL },
	{ "unixbench", NOT_IN_DEBIAN " (byte-unixbench)" },
	{ "unixbenchd", NOT_IN_DEBIAN " (byte-unixbench)" },
	{ "usemem", NOT_IN_DEBIAN " (usemem.c, posted to linux-mm)" },
	{ "wis-*", NOT_IN_DEBIAN " (will-it-scale)" },
	{ "xfsrepair", "xfs_repair is in Debian (xfsprogs), but MMTests loop-mounts an XFS image "
		       "it makes (root, a loop device and the xfs module in the node) and fills it with 50 "
		       "million files first; lockstep mounts nothing in a node" },
	{ "xfstests", "not in Debian 12's archive, and it needs test and scratch partitions" },
	{ "xsbench", NOT_IN_DEBIAN },
	/* MMTests builds these from source as benchmarks of a compiler */
	{ "*build", "a build of sources MMTests downloads (a compiler benchmark)" },
	{ NULL, NULL },
};

/* whether name is b, 2, or of b's family ("wis-*", "*build"), 1 */
static int match(const char *name, const char *b)
{
	size_t n = strlen(name), k = strlen(b);
	if (strcmp(name, b) == 0)
		return 2;
	if (b[0] == '*')
		return n > k - 1 && strcmp(name + n - (k - 1), b + 1) == 0;
	return b[k - 1] == '*' && n > k - 1 && strncmp(name, b, k - 1) == 0;
}

int mmtests_benchmark_match(const char *name)
{
	int found = 0;
	for (size_t i = 0; mmtests_benchmarks[i].name; i++) {
		int m = match(name, mmtests_benchmarks[i].name);
		if (m == 2)
			return 2;
		found |= m;
	}
	return found;
}

const char *mmtests_benchmark_why(const char *name)
{
	const char *family = NULL;
	for (size_t i = 0; mmtests_benchmarks[i].name; i++) {
		int m = match(name, mmtests_benchmarks[i].name);
		if (m == 2)
			return mmtests_benchmarks[i].why;
		if (m && !family)
			family = mmtests_benchmarks[i].why;
	}
	return family;
}
