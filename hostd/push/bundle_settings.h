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

struct config;
struct config_diag;
struct experiment;

/* For the check of known names. */
extern const char *const bundle_settings_keys[];

/*
 * Reads both keys into e->push_binaries and e->guest_binaries and, for
 * libvirt guests, resolves them (bundle_settings_resolve).  0, or -EINVAL
 * (-errno) with d naming path:line, the binary and the library.
 */
int bundle_settings_load(const struct config *g, const char *path, struct experiment *e,
			 struct config_diag *d);

/*
 * Builds e->bundle from e->push_binaries minus e->guest_binaries, with
 * hostd's PATH and this host's loader configuration: every binary missing
 * on the host and every library that cannot be found is an error now,
 * before any guest starts.  Code that adds binaries to push_binaries later
 * (benchmark specs) calls it again.  g and path (may be NULL) place the
 * message.
 */
int bundle_settings_resolve(struct experiment *e, const struct config *g, const char *path,
			    struct config_diag *d);

/* Adds one binary to e->push_binaries unless it is there already. */
void bundle_settings_add(struct experiment *e, const char *binary);

void bundle_settings_fini(struct experiment *e);

#endif
