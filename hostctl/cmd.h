/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hostctl's subcommands (main.c dispatches) and what they share. */
#ifndef HOSTCTL_CMD_H
#define HOSTCTL_CMD_H

#include <stddef.h>

#include "run.h"

/* Exit statuses (docs/hostctl.md). */
enum {
	HOSTCTL_EXIT_OK = 0,
	HOSTCTL_EXIT_ERROR = 1,	     /* runs unreadable or not comparable, I/O, tools */
	HOSTCTL_EXIT_USAGE = 2,	     /* bad command line */
	HOSTCTL_EXIT_REGRESSION = 3, /* --fail-on-regression tripped */
};

#define HOSTCTL_DEFAULT_RESULTS "results"

int cmd_compare(int argc, char **argv);
int cmd_report(int argc, char **argv);

/* Locates and loads every run, saying on stderr what failed; -errno. */
int cmd_load_runs(char **args, size_t n, const char *results_dir, struct run_dict *d, struct run **out);
void cmd_free_runs(struct run *runs, size_t n);
void cmd_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
