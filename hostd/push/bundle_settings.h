/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The g.conf keys of the binaries pushed into libvirt guests (bundle.h):
 *
 *   HARNESS_BINARIES="hackbench sysbench /opt/x/bin/tool"
 *           names looked up on hostd's PATH, or absolute paths: each is
 *           pushed with its loader and libraries into every libvirt guest,
 *           where command steps find it first on PATH
 *   GUEST_INSTALLED_BINARIES="perf"
 *           names the guests provide themselves: never pushed, even when
 *           HARNESS_BINARIES or a benchmark asks for them; they run from
 *           the guest's own PATH
 *
 * Local guests run on the host: nothing is pushed and nothing resolved.
 */
#ifndef LOCKSTEP_BUNDLE_SETTINGS_H
#define LOCKSTEP_BUNDLE_SETTINGS_H

#include <stddef.h>

struct bundle;
struct config;
struct config_diag;

/*
 * g.conf's binaries for libvirt guests: those pushed (HARNESS_BINARIES, and
 * those benchmarks and monitors add) and those the guests provide
 * themselves (GUEST_INSTALLED_BINARIES, never pushed); what is pushed,
 * resolved on this host, or NULL.  Zeroed is empty.
 */
struct bundle_list {
	char **push_binaries;
	size_t npush_binaries;
	char **guest_binaries;
	size_t nguest_binaries;
	struct bundle *bundle;
};

/* For the check of known names. */
extern const char *const bundle_settings_keys[];

/*
 * Reads both keys into l->push_binaries and l->guest_binaries; libvirt
 * guests' callers then resolve them (bundle_settings_resolve).  0, or
 * -EINVAL with d naming path:line, the key and the word.
 */
int bundle_settings_load(const struct config *g, const char *path, struct bundle_list *l,
			 struct config_diag *d);

/*
 * Builds l->bundle from l->push_binaries minus l->guest_binaries, to go
 * into harness_dir (NULL: nothing is built), with hostd's PATH and this
 * host's loader configuration: every binary missing on the host and every
 * library that cannot be found is an error now, before any guest starts.
 * Code that adds binaries to push_binaries later (benchmark specs,
 * monitors) calls it again.  g and path (may be NULL) place the message.
 */
int bundle_settings_resolve(struct bundle_list *l, const char *harness_dir, const struct config *g,
			    const char *path, struct config_diag *d);

/* Adds one binary to l->push_binaries unless it is there already. */
void bundle_settings_add(struct bundle_list *l, const char *binary);

void bundle_settings_fini(struct bundle_list *l);

#endif
