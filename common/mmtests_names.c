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
#include <stddef.h>

#include "config.h"

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
	NULL,
};
