// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostctl: the command-line client of lockstep.  A dispatcher over
 * subcommands; today compare and report, which read results folders
 * (later also the service's submit/status/...).
 */
#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "svc.h"

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "compare", cmd_compare, "compare runs: BASE NEW [NEW...], with significance and fairness" },
	{ "report", cmd_report, "write an HTML page with the comparison and gnuplot plots" },
	{ "submit", cmd_submit, "queue an experiment on hostd --service; prints its ID" },
	{ "status", cmd_status, "the service, or one experiment: queue position, step, barrier" },
	{ "list", cmd_list, "your experiments the service knows" },
	{ "logs", cmd_logs, "an experiment's log (-f: until it ends)" },
	{ "cancel", cmd_cancel, "drop a queued experiment or stop a running one" },
	{ "wait", cmd_wait, "wait for an experiment to end; its exit code" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: hostctl COMMAND [OPTIONS] [ARGS]\n"
		   "       hostctl COMMAND --help\n\n"
		   "commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\noptions:\n"
		   "  -h, --help     this text\n"
		   "  --version      print the version\n\n"
		   "exit status: 0 ok, 1 error (runs unreadable or not comparable), 2 usage,\n"
		   "3 a significant regression beyond --fail-on-regression (compare, report);\n"
		   "wait exits with the experiment's own code, 4 when it cannot be known.\n"
		   "See docs/hostctl.md, and docs/service.md for the service commands.\n");
}

int main(int argc, char **argv)
{
	/* GSL's default handler aborts; stats.c keeps to the functions' domains,
	 * and a result to check beats a core dump if it ever does not. */
	gsl_set_error_handler_off();
	if (argc < 2) {
		usage(stderr);
		return HOSTCTL_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return HOSTCTL_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("hostctl %s\n", LOCKSTEP_VERSION);
		return HOSTCTL_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "hostctl: unknown command '%s' (try hostctl --help)\n", argv[1]);
	return HOSTCTL_EXIT_USAGE;
}
