/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Host state that a run changes and must always put back: the cpufreq
 * governor of every CPU, and where present intel_pstate's no_turbo and the
 * energy_performance_preference (EPP) of every CPU (intel_pstate and
 * amd_pstate in active mode), and transparent huge pages and their defrag
 * mode (MMTests' disable_transhuge, echo never >
 * /sys/kernel/mm/transparent_hugepage/...) when a config asks.
 *
 * Every value is saved to <state_dir>/hoststate (written atomically and
 * synced) BEFORE anything is changed.  hoststate_restore() puts every value
 * back and removes the file; a file that is still there when hostd starts
 * again means a hostd died holding host state, and hoststate_recover()
 * restores from it.  Unlike MMTests, every CPU is saved, not only cpu0.
 *
 * sysfs_root is the folder holding sys/ ("/" in production; tests build a
 * fake tree).  Functions log what failed (hostd is the outer layer) and
 * return 0 or -errno.
 */
#ifndef LOCKSTEP_HOSTSTATE_H
#define LOCKSTEP_HOSTSTATE_H

#include <stdbool.h>

struct config;
struct config_diag;

#define HOSTSTATE_FILE "hoststate"
#define HOSTSTATE_VALUE_MAX 64 /* bytes of one sysfs value, NUL included */

struct hoststate_settings {
	char governor[HOSTSTATE_VALUE_MAX];   /* CPUFREQ_GOVERNOR; "" leaves it */
	char epp[HOSTSTATE_VALUE_MAX];	      /* CPUFREQ_EPP; "" leaves it */
	int no_turbo;			      /* CPUFREQ_NO_TURBO: -1 leaves it, 0, 1 */
	char thp[HOSTSTATE_VALUE_MAX];	      /* TRANSPARENT_HUGEPAGES; "" leaves it */
	char thp_defrag[HOSTSTATE_VALUE_MAX]; /* TRANSPARENT_HUGEPAGES_DEFRAG; "" leaves it */
};

/* The config keys hoststate_settings_load reads. */
#define HOSTSTATE_KEYS                                                                  \
	"CPUFREQ_GOVERNOR", "CPUFREQ_EPP", "CPUFREQ_NO_TURBO", "TRANSPARENT_HUGEPAGES", \
		"TRANSPARENT_HUGEPAGES_DEFRAG"

/* h.conf's keys into s: 0, or -EINVAL with err naming file:line and value.
 * Keys: CPUFREQ_GOVERNOR, CPUFREQ_EPP, CPUFREQ_NO_TURBO (yes/no),
 * TRANSPARENT_HUGEPAGES (always/madvise/never), TRANSPARENT_HUGEPAGES_DEFRAG
 * (always/defer/defer+madvise/madvise/never). */
int hoststate_settings_load(const struct config *c, struct hoststate_settings *s,
			    struct config_diag *err);
/* Nothing to change: hoststate_apply would save nothing. */
bool hoststate_settings_empty(const struct hoststate_settings *s);

struct hoststate;

/*
 * At hostd's start, before any run: a state file left by a hostd that died
 * is restored and removed.  0 when there was none, 1 when it was restored,
 * -EBUSY when the hostd that wrote it is still alive (same boot, its pid
 * runs hostd), another -errno when it cannot be read or a value cannot be
 * written back (the file is kept so that the next start tries again).
 */
int hoststate_recover(const char *state_dir, const char *sysfs_root);

/* Saves every knob's current value to the state file (nothing changed yet).
 * *out is NULL (and nothing saved) when s asks for nothing. */
int hoststate_save(const char *state_dir, const char *sysfs_root,
		   const struct hoststate_settings *s, struct hoststate **out);
/* Sets what the settings ask; on a failure puts back what it changed. */
int hoststate_set(struct hoststate *h);
/* hoststate_save + hoststate_set; on a failure of set, the state is
 * restored and *out is NULL. */
int hoststate_apply(const char *state_dir, const char *sysfs_root,
		    const struct hoststate_settings *s, struct hoststate **out);
/* Puts every saved value back, removes the state file (kept when a value
 * could not be written back) and frees h.  Accepts NULL. */
int hoststate_restore(struct hoststate *h);

/* How many knobs h saved (for the manifest and tests). */
unsigned hoststate_count(const struct hoststate *h);

#endif
