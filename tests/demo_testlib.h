/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the end-to-end tests on real demo guests share: a guest name prefix
 * and ports of the test process's own, hostd's arguments for guests, the
 * h.conf of template guests, and no guest outliving its case. */
#ifndef LOCKSTEP_DEMO_TESTLIB_H
#define LOCKSTEP_DEMO_TESTLIB_H

#include <stdbool.h>

#define DEMO_DIR "/var/lib/lockstep/demo-guest"

/* "lockstep-<tag>-<pid>-": guest i is named prefix + i */
extern char demo_prefix[64];
/* --state-dir, and --guest-agent when LOCKSTEP_GUEST_AGENT names one: the
 * agent pushed into guests must be static, a sanitizer build's is not, so
 * tools/test names the static one of the plain build */
extern const char *demo_args[5];

/* Exits 77 (skipped) without root or the built demo guest. */
void demo_skip_unless_possible(void);
/* hostd_test_setup() and the names of this case. */
void demo_test_setup(const char *tag);
/* Destroys guests 1..count of the prefix, whatever happened, then
 * hostd_test_teardown(). */
void demo_test_teardown(unsigned count);
/* h.conf for count template guests of the demo template: SSH ports from
 * port_base (+ 2 per pid % 400, so that tests never share one), a runtime
 * dir of their own, then extra (timeouts and the rest). */
void demo_write_hconf(unsigned count, int port_base, const char *extra);
bool demo_domain_exists(const char *name);

#endif
