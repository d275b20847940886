/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An experiment as the two config files describe it: h.conf (the host: which
 * guests, barrier policy) and g.conf (the guests: which steps).  Reading one
 * checks everything that can be checked before anything starts.
 */
#ifndef LOCKSTEP_EXPERIMENT_H
#define LOCKSTEP_EXPERIMENT_H

#include <stdbool.h>
#include <stdint.h>

#include "bundle_settings.h"
#include "config.h"
#include "hoststate.h"
#include "monitor_settings.h"
#include "plan.h"
#include "proto.h"
#include "ssh_push.h"
#include "virt_settings.h"
#include "cluster_settings.h"

enum guest_kind {
	GUEST_KIND_LOCAL,   /* agent processes on the host: a dry run and a test double */
	GUEST_KIND_LIBVIRT, /* libvirt domains, the agent pushed in over SSH */
};

enum release_mode {
	RELEASE_SCHEDULED, /* go carries an instant, each agent sleeps until it */
	RELEASE_IMMEDIATE, /* go is written to every channel back to back, start at once */
};

enum failure_policy {
	ON_FAILURE_ABORT,    /* the first participant lost ends the run */
	ON_FAILURE_CONTINUE, /* the others go on without it */
};

struct experiment {
	/* h.conf */
	enum guest_kind guest_kind;
	unsigned guest_count;
	bool host_runs_benchmarks;
	double barrier_timeout_s;
	double step_timeout_s;
	enum failure_policy on_failure;
	int release_rt_priority; /* SCHED_FIFO priority while writing go; 0: off */
	enum release_mode release;
	double release_lead_s; /* how far ahead a scheduled go is sent; 0: auto */
	double run_timeout_s;  /* RUN_TIMEOUT: the run's wall time, at most; 0: none */

	/* GUEST_KIND=local: a synthetic clock for the local guests (the test
	 * double of a guest's own clock); all zero: they share the host's */
	int64_t local_clock_offset_ns, local_clock_jitter_ns;
	double local_clock_drift_ppm;

	/* GUEST_KIND=libvirt */
	struct virt_settings virt;
	struct cluster_settings cluster; /* CLUSTER_*: other hosts in the run */
	char *ssh_user;			 /* GUEST_SSH_USER */
	char *ssh_key;			 /* GUEST_SSH_KEY: our private key; NULL: state dir's */
	char *harness_dir;		 /* GUEST_HARNESS_DIR: where the agent goes in a guest */
	double ssh_timeout_s;		 /* GUEST_SSH_TIMEOUT */

	/* monitors (docs/monitors.md): the host's from h.conf, the guests'
	 * from g.conf; host state to set for the run */
	struct monitor_settings host_mon, guest_mon;
	struct hoststate_settings hoststate;

	/* g.conf: binaries pushed into every libvirt guest (HARNESS_BINARIES,
	 * and those the benchmarks and monitors need) and those the guests
	 * provide themselves; what is pushed, resolved on this host, or NULL.
	 * bundle_settings.h */
	struct bundle_list bundles;

	/* g.conf (or GUEST_CONFIG_<NODE> for one node): the plans.  Every
	 * node's plan has nsteps steps (the barrier is per step); nodes with
	 * the same g.conf and facts share one.  node_plan[i] is participant
	 * i's: the guests in order, then the host when it takes part. */
	uint32_t nsteps;
	struct node_plan *plans;
	size_t nplans;
	struct node_plan **node_plan;
	/* the first plan's steps (borrowed, commands and all): what a
	 * barrier is labelled with */
	uint32_t iterations;
	const struct proto_step *steps;
	/* h.conf as read (borrowed: the caller's *hconf_out, which outlives
	 * exp): its warnings go with the run's (experiment_warnings) */
	const struct config *hconf;
	/* hostd --set NAME=VALUE, applied to every g.conf after it is read
	 * (borrowed from the caller; NULL-terminated, may be NULL) */
	const char *const *overrides;
	/* per plan: the files its g.conf ships with the steps (cat >FILE
	 * <<END), as harness members; their bytes belong to the plan's gconf */
	struct ssh_push_file **shipped;
	size_t *nshipped;
};

/* Node names of the guests: guest-N for local guests, the domain name for
 * libvirt guests. */
const char *experiment_guest_name(const struct experiment *exp, unsigned i, char *buf, size_t len);

/* Reads both files; default_template (may be NULL) is GUEST_TEMPLATE's
 * default.  On error returns -EINVAL (or -errno) with diag naming
 * file:line and the value; warnings (unknown names) are left in the configs,
 * which the caller gets back to print. */
int experiment_load(const char *host_config, const char *guest_config, const char *default_template,
		    struct experiment *exp, struct config **hconf_out, struct config **gconf_out,
		    struct config_diag *diag);
/* Unknown names in h.conf are warnings, not errors (hostd --lenient). */
#define EXPERIMENT_LENIENT 1u

/* The same, with hostd --set's assignments (NULL-terminated "NAME=VALUE",
 * may be NULL) applied to g.conf after it is read; exp keeps the pointer.
 * A name h.conf sets that no key is (a typo of GUEST_COUNT) is an error
 * naming file, line, the name and the key it is close to, unless flags
 * has EXPERIMENT_LENIENT: then it is a warning left in h.conf. */
int experiment_load_set(const char *host_config, const char *guest_config,
			const char *default_template, const char *const *sets, unsigned flags,
			struct experiment *exp, struct config **hconf_out,
			struct config **gconf_out, struct config_diag *diag);
void experiment_fini(struct experiment *exp);

/* Every warning of the configs, formatted "file:line:column: text": h.conf's,
 * then each g.conf's once (as read for the first node that uses it): what
 * the configs say lockstep ignores, and why.  Calls fn for each. */
void experiment_warnings(const struct experiment *exp, void (*fn)(void *ctx, const char *line),
			 void *ctx);

/* The files participant i's g.conf ships into its work folder, where its
 * steps run; *out points into exp. */
size_t experiment_shipped(const struct experiment *exp, size_t i, const struct ssh_push_file **out);

#endif
