/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Helpers shared by test_config.c and test_config_get.c: a config with the
 * usual facts, and loads that must succeed or fail with an exact message. */
#ifndef LOCKSTEP_CONFIG_TESTLIB_H
#define LOCKSTEP_CONFIG_TESTLIB_H

#include <check.h>
#include <errno.h>

#include "config.h"

/* The end of the error for a command substitution lockstep does not answer. */
#define KNOWN                                                                               \
	"lockstep never runs commands; it answers only uname -m|-r|-s, whoami, id -u, "     \
	"nproc, getconf PAGESIZE, cat of a file under /proc/sys or /sys, nas-class.sh and " \
	"echo ... | sed s/A/B/"

static struct config *cfg;

static inline void setup(void)
{
	cfg = config_new();
	config_set_fact(cfg, "NUM_LOGICAL_CPUS", "8");
	config_set_fact(cfg, "NUM_NODES", "2");
	config_set_fact(cfg, "NUM_LLCS", "2");
	config_set_fact(cfg, "MEMTOTAL_BYTES", "25144741888");
}

static inline void teardown(void)
{
	config_free(cfg);
}

static inline void load_ok(const char *text)
{
	struct config_diag err = { 0 };
	char msg[1024];
	int r = config_load_string(cfg, "t.conf", text, &err);

	config_diag_format(&err, msg, sizeof(msg));
	ck_assert_msg(r == 0, "load failed (%d): %s", r, msg);
}

/* The load fails with exactly this "file:line:column: text". */
static inline void load_err(const char *text, const char *expect)
{
	struct config_diag err = { 0 };
	char msg[1024];
	int r = config_load_string(cfg, "t.conf", text, &err);

	ck_assert_int_eq(r, -EINVAL);
	config_diag_format(&err, msg, sizeof(msg));
	ck_assert_str_eq(msg, expect);
}

static inline void value_is(const char *name, const char *expect)
{
	const char *v = config_get(cfg, name);

	ck_assert_msg(v != NULL, "%s is not set", name);
	ck_assert_str_eq(v, expect);
}

/* The i-th warning, formatted. */
static inline const char *warning(size_t i)
{
	static char msg[1024];
	const struct config_diag *w;
	size_t n = config_warnings(cfg, &w);

	ck_assert_uint_gt(n, i);
	config_diag_format(&w[i], msg, sizeof(msg));
	return msg;
}

static inline size_t nwarnings(void)
{
	const struct config_diag *w;

	return config_warnings(cfg, &w);
}

#endif
