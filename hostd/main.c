// SPDX-License-Identifier: GPL-2.0-or-later
/* hostd: run one synchronized experiment in the foreground. */
#include <errno.h>
#include <getopt.h>
#include <libssh/libssh.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkmode.h"
#include "config.h"
#include "experiment.h"
#include "harness.h"
#include "hoststate.h"
#include "log.h"
#include "proto.h"
#include "run.h"
#include "runas.h"
#include "service.h"
#include "ssh_key.h"
#include "submitted.h"
#include "xalloc.h"

#ifndef LOCKSTEP_LIBEXECDIR
#define LOCKSTEP_LIBEXECDIR "/usr/local/libexec/lockstep"
#endif
#ifndef LOCKSTEP_DATADIR
#define LOCKSTEP_DATADIR "/usr/local/share/lockstep"
#endif

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: hostd --host-config H.CONF --guest-config G.CONF [options]\n"
		"\n"
		"Runs one experiment in the foreground: starts the guests that H.CONF names,\n"
		"hands each the steps of G.CONF, releases all of them into every step at the\n"
		"same moment, and writes everything to RESULTS/RUN/.\n"
		"\n"
		"Options:\n"
		"  --host-config FILE   the host's config: guests, barrier timeout, failure policy\n"
		"  --guest-config FILE  the guests' config: MMTESTS (steps), MMTEST_ITERATIONS\n"
		"                       (a number, or auto: rounds until the numbers are steady)\n"
		"  --run-name NAME      name of the run's folder (default: a timestamp)\n"
		"  --results DIR        where run folders go (default: ./results)\n"
		"  --agent PATH         the guestagent binary (default: found beside hostd)\n"
		"  --guest-agent PATH   the agent pushed into libvirt guests, statically linked\n"
		"                       (default: the --agent binary)\n"
		"  --state-dir DIR      hostd's SSH key, guests' known_hosts, the host state to put\n"
		"                       back after a crash (default: /var/lib/lockstep)\n"
		"  --sysfs-root DIR     tests only: where the host state (cpufreq, THP) is read and set\n"
		"  --no-progress        no progress line, even on a terminal\n"
		"  --print-public-key   print hostd's SSH public key (made once in the state dir) and exit,\n"
		"                       for images of your own: add it to the guest's authorized_keys\n"
		"  --status-file FILE   rewrite FILE (JSON) at each barrier edge: the step, whom the\n"
		"                       barrier waits for (what hostd --service shows)\n"
		"  --set NAME=VALUE     override a setting of G.CONF after it is read (repeatable;\n"
		"                       e.g. --set MMTEST_ITERATIONS=1); the manifest records it\n"
		"  --check              read both configs and print, starting nothing, each node's\n"
		"                       plan and samples per series, shipped files, host state, what\n"
		"                       is ignored, binaries pushed and pre-flight checks; exit 0,\n"
		"                       or 1 on any error\n"
		"  --lenient            names in H.CONF that are no key are warnings, not errors\n"
		"                       (by default a typo such as GEUST_COUNT stops hostd: exit 1)\n"
		"  -v, --verbose        debug messages\n"
		"  -h, --help           this text\n"
		"  --version            the version\n"
		"\n"
		"Service mode (docs/service.md):\n"
		"  hostd --service [--socket PATH] [--state-dir DIR] [--settings FILE] [--group NAME]\n"
		"  --service            run experiments that hostctl submits, one at a time, from a\n"
		"                       queue kept in STATE_DIR/service; until SIGTERM\n"
		"  --socket PATH        the control socket (default " SERVICE_DEFAULT_SOCKET "),\n"
		"                       unless systemd passes one (socket activation)\n"
		"  --settings FILE      the service's settings, reread on SIGHUP\n"
		"                       (default " SERVICE_DEFAULT_SETTINGS ")\n"
		"  --group NAME         who besides root may use the service (overrides SERVICE_GROUP)\n"
		"  --agent, --guest-agent, --sysfs-root and -v are passed on to each experiment.\n"
		"\n"
		"Exit status:\n"
		"  0  complete: every step ran and ended with done on every participant\n"
		"  1  usage or configuration error: nothing ran\n"
		"  2  the run was degraded (a participant failed and ON_GUEST_FAILURE=continue,\n"
		"     or a step left a failure record), aborted or interrupted; what was\n"
		"     collected is in the results folder\n"
		"\n"
		"See docs/hostd.md and docs/config.md; many hosts in one run (CLUSTER_* keys):\n"
		"docs/cluster.md.\n");
}

/* The first of rel_paths (relative to hostd's own folder) that exists, or
 * fallback: the build tree first, then an installed hostd's neighbours. */
static char *find_beside_hostd(const char *const *rel_paths, const char *fallback)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			for (size_t i = 0; rel_paths[i]; i++) {
				char *p = xasprintf("%s%s", self, rel_paths[i]);
				if (access(p, R_OK) == 0)
					return p;
				free(p);
			}
		}
	}
	return xstrdup(fallback);
}

static char *find_agent(void)
{
	static const char *const rel[] = { "/../guestagent/guestagent", "/guestagent", NULL };
	return find_beside_hostd(rel, LOCKSTEP_LIBEXECDIR "/guestagent");
}

static char *find_demo_template(void)
{
	static const char *const rel[] = { "/../../vm-templates/demo-guest.xml.in", NULL };
	return find_beside_hostd(rel, LOCKSTEP_DATADIR "/demo-guest.xml.in");
}

static void log_warning(void *ctx, const char *line)
{
	(void)ctx;
	log_warn("%s", line);
}

static int print_public_key(const char *state_dir)
{
	char err[1024], *priv = NULL, *pub = NULL;
	if (ssh_key_ensure(state_dir, &priv, &pub, err, sizeof(err)) < 0) {
		log_error("%s", err);
		return RUN_EXIT_USAGE;
	}
	printf("%s\n", pub);
	free(priv);
	free(pub);
	return 0;
}

/* The configs loaded, checked against this host and run: an exit code.
 * What it loaded is freed at one place whichever way it ends. */
static int run_configs(const struct run_options *o, const char *const *sets, unsigned load_flags)
{
	struct experiment exp;
	struct config *h = NULL, *g = NULL;
	struct config_diag d;
	char *template = find_demo_template();
	int code = RUN_EXIT_USAGE;
	int loaded = experiment_load_set(o->host_config, o->guest_config, template, sets,
					 load_flags, &exp, &h, &g, &d);
	free(template);
	if (loaded < 0) {
		char line[1024];
		config_diag_format(&d, line, sizeof(line));
		log_error("%s", line);
		return RUN_EXIT_USAGE;
	}
	if (submitted_check(&exp) < 0)
		goto out;
	experiment_warnings(&exp, log_warning, NULL);
	int st = exp.guest_kind == GUEST_KIND_LIBVIRT ? harness_elf_is_static(o->guest_agent_path) : 1;
	if (st <= 0) {
		log_error("the agent for guests %s %s: a guest may have no libc of ours; use a "
			  "statically linked guestagent (--guest-agent PATH, meson -Dstatic_agent=true)",
			  o->guest_agent_path,
			  st == 0 ? "is dynamically linked" : "is not an ELF executable");
		goto out;
	}

	/* A hostd that died mid-run left the host changed: put it back first. */
	int rec = hoststate_recover(o->state_dir, o->sysfs_root);
	if (rec == 1)
		log_warn("restored the host state (cpufreq) that a hostd which died left in %s",
			 o->state_dir);
	else if (rec == -EBUSY && !hoststate_settings_empty(&exp.hoststate)) {
		log_error("another hostd runs with host state saved in %s: two runs would spoil "
			  "each other's numbers; wait for it or use another --state-dir",
			  o->state_dir);
		goto out;
	} else if (rec < 0 && rec != -EBUSY) {
		log_warn("cannot restore the host state left in %s: %s (it stays for the next start)",
			 o->state_dir, strerror(-rec));
	}

	/* libssh's global state, once, before any session in a worker thread */
	ssh_init();
	code = run_experiment(&exp, o);
	ssh_finalize();
out:
	experiment_fini(&exp);
	config_free(h);
	config_free(g);
	return code;
}

int main(int argc, char **argv)
{
	enum {
		OPT_HOST = 256,
		OPT_GUEST,
		OPT_RUN,
		OPT_RESULTS,
		OPT_AGENT,
		OPT_GUEST_AGENT,
		OPT_STATE,
		OPT_SYSFS,
		OPT_NOPROG,
		OPT_PUBKEY,
		OPT_VERSION,
		OPT_SERVICE,
		OPT_SOCKET,
		OPT_SETTINGS,
		OPT_GROUP,
		OPT_STATUS_FILE,
		OPT_SET,
		OPT_CHECK,
		OPT_RUN_AS,
		OPT_CONFIG_FILES,
		OPT_LENIENT
	};
	static const struct option opts[] = {
		{ "host-config", required_argument, NULL, OPT_HOST },
		{ "guest-config", required_argument, NULL, OPT_GUEST },
		{ "run-name", required_argument, NULL, OPT_RUN },
		{ "results", required_argument, NULL, OPT_RESULTS },
		{ "agent", required_argument, NULL, OPT_AGENT },
		{ "guest-agent", required_argument, NULL, OPT_GUEST_AGENT },
		{ "state-dir", required_argument, NULL, OPT_STATE },
		{ "sysfs-root", required_argument, NULL, OPT_SYSFS }, /* tests only */
		{ "no-progress", no_argument, NULL, OPT_NOPROG },
		{ "print-public-key", no_argument, NULL, OPT_PUBKEY },
		{ "service", no_argument, NULL, OPT_SERVICE },
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "settings", required_argument, NULL, OPT_SETTINGS },
		{ "group", required_argument, NULL, OPT_GROUP },
		{ "status-file", required_argument, NULL, OPT_STATUS_FILE },
		{ "set", required_argument, NULL, OPT_SET },
		{ "check", no_argument, NULL, OPT_CHECK },
		{ "lenient", no_argument, NULL, OPT_LENIENT },
		{ "run-as", required_argument, NULL, OPT_RUN_AS },	       /* the service's */
		{ "config-files", required_argument, NULL, OPT_CONFIG_FILES }, /* the service's */
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ 0 },
	};
	struct run_options o = { .results_dir = "results",
				 .state_dir = "/var/lib/lockstep",
				 .sysfs_root = "/",
				 .progress = isatty(STDERR_FILENO) };
	enum log_level level = LOG_LVL_INFO;
	bool print_key = false, service = false, sysfs_set = false, check = false;
	unsigned load_flags = 0; /* EXPERIMENT_LENIENT */
	/* --set NAME=VALUE, NULL-terminated; at most one per argument */
	const char *sets[argc + 1];
	size_t nsets = 0;

	memset(sets, 0, sizeof(sets));
	struct service_options so = { .socket_path = SERVICE_DEFAULT_SOCKET,
				      .settings_path = SERVICE_DEFAULT_SETTINGS };
	char *agent = NULL;
	const char *run_as = NULL, *config_files = NULL;
	int c, code = RUN_EXIT_USAGE;

	/* the service's shim between a fork and a program run as a submitter */
	if (argc > 1 && strcmp(argv[1], RUNAS_EXEC_ARG) == 0)
		return runas_exec_main(argc, argv);

	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case OPT_HOST: o.host_config = optarg; break;
		case OPT_GUEST: o.guest_config = optarg; break;
		case OPT_RUN: o.run_name = optarg; break;
		case OPT_RESULTS: o.results_dir = optarg; break;
		case OPT_AGENT: agent = xstrdup(optarg); break;
		case OPT_STATE: o.state_dir = optarg; break;
		case OPT_SYSFS:
			o.sysfs_root = optarg;
			sysfs_set = true;
			break;
		case OPT_GUEST_AGENT: o.guest_agent_path = optarg; break;
		case OPT_NOPROG: o.progress = false; break;
		case OPT_PUBKEY: print_key = true; break;
		case OPT_SERVICE: service = true; break;
		case OPT_SOCKET: so.socket_path = optarg; break;
		case OPT_SETTINGS: so.settings_path = optarg; break;
		case OPT_GROUP: so.group = optarg; break;
		case OPT_STATUS_FILE: o.status_file = optarg; break;
		case OPT_SET: sets[nsets++] = optarg; break;
		case OPT_CHECK: check = true; break;
		case OPT_LENIENT: load_flags |= EXPERIMENT_LENIENT; break;
		case OPT_RUN_AS: run_as = optarg; break;
		case OPT_CONFIG_FILES: config_files = optarg; break;
		case 'v': level = LOG_LVL_DEBUG; break;
		case 'h':
			usage(stdout);
			code = 0;
			goto out;
		case OPT_VERSION:
			printf("hostd (lockstep) %s\n", LOCKSTEP_VERSION);
			code = 0;
			goto out;
		default: usage(stderr); goto out;
		}
	}
	log_init("hostd", level);
	if (optind < argc) {
		log_error("unexpected argument '%s' (see hostd --help)", argv[optind]);
		goto out;
	}
	if (service && (nsets || check)) {
		log_error("--service takes its settings from hostctl submit, not --set or --check");
		goto out;
	}
	if (check) {
		if (!o.host_config || !o.guest_config) {
			log_error("--check needs --host-config and --guest-config (see hostd --help)");
			goto out;
		}
		char *template = find_demo_template();
		char *found = agent ? NULL : find_agent();
		struct check_options co = {
			.host_config = o.host_config,
			.guest_config = o.guest_config,
			.default_template = template,
			.sets = sets,
			.state_dir = o.state_dir,
			.results_dir = o.results_dir,
			.load_flags = load_flags,
			.guest_agent = o.guest_agent_path ? o.guest_agent_path
				       : agent		  ? agent
							  : found,
		};
		code = check_main(&co, stdout);
		free(template);
		free(found);
		goto out;
	}
	if (print_key) {
		code = print_public_key(o.state_dir);
		goto out;
	}
	if (service) {
		if (o.host_config || o.guest_config || o.run_name) {
			log_error("--service takes experiments from hostctl submit, not "
				  "--host-config, --guest-config or --run-name");
			goto out;
		}
		so.state_dir = o.state_dir;
		so.agent = agent;
		so.guest_agent = o.guest_agent_path;
		so.sysfs_root = sysfs_set ? o.sysfs_root : NULL;
		so.verbose = level == LOG_LVL_DEBUG;
		code = service_main(&so);
		goto out;
	}
	if (!o.host_config || !o.guest_config) {
		log_error("both --host-config and --guest-config are needed (see hostd --help)");
		goto out;
	}
	if (o.run_name && !proto_name_valid(o.run_name)) {
		log_error("--run-name '%s': use letters, digits, '.', '_' and '-' (not starting with '.')",
			  o.run_name);
		goto out;
	}
	if (submitted_setup(run_as, config_files, &o) < 0)
		goto out;
	o.agent_path = agent ? agent : (agent = find_agent());
	if (!o.guest_agent_path)
		o.guest_agent_path = o.agent_path;
	if (access(o.agent_path, X_OK) != 0) {
		log_error("the guest agent '%s' is not an executable file: %s (use --agent PATH)",
			  o.agent_path, strerror(errno));
		goto out;
	}

	code = run_configs(&o, sets, load_flags);
out:
	free(agent);
	return code;
}
