/* SPDX-License-Identifier: GPL-2.0-or-later */
/* g.conf's keys of adaptive iterations (MMTEST_ITERATIONS=auto): AUTO_MIN,
 * AUTO_MAX and AUTO_TARGET_CI_PCT into a rule (auto_iter.h). */
#ifndef LOCKSTEP_AUTO_SETTINGS_H
#define LOCKSTEP_AUTO_SETTINGS_H

#include <stdint.h>

#include "auto_iter.h"
#include "config.h"

#define AUTO_SETTINGS_KEYS "AUTO_MIN", "AUTO_MAX", "AUTO_TARGET_CI_PCT"

/* The rule, defaults for what is not set; rounds at most max_rounds.
 * 0, or -EINVAL with d naming file:line, the key and its value. */
int auto_settings_load(const struct config *c, const char *path, uint32_t max_rounds,
		       struct auto_iter_rule *rule, struct config_diag *d);

#endif
