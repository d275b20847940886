// SPDX-License-Identifier: GPL-2.0-or-later
/* guestagent: the in-guest side of lockstep.  See docs/guestagent.md. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "achan.h"
#include "aclock.h"
#include "clock.h"
#include "agent.h"
#include "step.h"
#include "stepgroup.h"
#include "log.h"
#include "proto.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: guestagent [OPTION]...\n"
		   "The in-guest agent of lockstep: waits at each barrier, runs the steps\n"
		   "the host plans, and sends their results back over a virtio-serial port.\n"
		   "\n"
		   "  --channel PATH      a virtio-serial character device, or a unix stream\n"
		   "                      socket to connect to\n"
		   "  --channel-fd N      an already connected socket (exit when it closes)\n"
		   "                      default: the port named " ACHAN_PORT_NAME "\n"
		   "  --sysfs-root DIR    look for sys/class/virtio-ports and dev/ under DIR\n"
		   "                      instead of / (for tests)\n"
		   "  --node NAME         the node name sent to the host (default: hostname)\n"
		   "  --work-dir DIR      where command steps run (default: the current folder)\n"
		   "  --proc-root DIR     monitors read proc/ under DIR instead of / (for tests)\n"
		   "  --start-rt-priority N  hold SCHED_FIFO priority N while waiting for a go\n"
		   "                      (the agent) and from the wait for it until the start\n"
		   "                      stamp (the step's child); 0: off\n"
		   "  --clock-offset-ns N, --clock-drift-ppm P, --clock-jitter-ns J\n"
		   "                      tests only: report instants on a synthetic clock N ns\n"
		   "                      ahead, drifting P ppm, with +/-J ns of noise\n"
		   "  --no-ptp            do not use a KVM PTP clock (sys/class/ptp under the\n"
		   "                      --sysfs-root); the host measures the clock by ping/pong\n"
		   "  --ptp-synthetic-ns N  tests only: act as if a KVM PTP clock read this\n"
		   "                      system's CLOCK_REALTIME as the host's, the guest's\n"
		   "                      own realtime being N ns behind it\n"
		   "  --step-pids-max N   at most N processes per step (cgroup pids.max; default\n"
		   "                      $LOCKSTEP_STEP_PIDS_MAX, else 16384; 0: no limit)\n"
		   "  --step-memory-max B at most B bytes of memory per step (cgroup v2\n"
		   "                      memory.max; default $LOCKSTEP_STEP_MEMORY_MAX, else none)\n"
		   "  -v, --verbose       log debug messages too\n"
		   "  -h, --help          show this help\n"
		   "  -V, --version       show the version\n");
}

static int parse_fd(const char *s, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > INT_MAX)
		return -EINVAL;
	if (fcntl((int)v, F_GETFD) < 0)
		return -EBADF;
	*out = (int)v;
	return 0;
}

static int parse_count(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-')
		return -EINVAL;
	*out = v;
	return 0;
}

/* The hostname, when it is usable as a node name. */
static int default_node(char *buf, size_t len)
{
	if (gethostname(buf, len) < 0)
		return -errno;
	buf[len - 1] = '\0';
	return proto_name_valid(buf) ? 0 : -EINVAL;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "channel", required_argument, NULL, 'c' },
		{ "channel-fd", required_argument, NULL, 'f' },
		{ "sysfs-root", required_argument, NULL, 'r' },
		{ "node", required_argument, NULL, 'n' },
		{ "work-dir", required_argument, NULL, 'w' },
		{ "proc-root", required_argument, NULL, 'P' },
		{ "start-rt-priority", required_argument, NULL, 'R' },
		{ "clock-offset-ns", required_argument, NULL, 'O' },
		{ "clock-drift-ppm", required_argument, NULL, 'D' },
		{ "clock-jitter-ns", required_argument, NULL, 'J' },
		{ "no-ptp", no_argument, NULL, 'N' },
		{ "ptp-synthetic-ns", required_argument, NULL, 'S' },
		{ "step-pids-max", required_argument, NULL, 'p' },
		{ "step-memory-max", required_argument, NULL, 'm' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct agent_opts o = { .channel_fd = -1,
				.root = "",
				.work_dir = ".",
				.step_pids_max = STEPGROUP_PIDS_MAX_DEFAULT };
	char host[PROTO_NAME_MAX];
	bool verbose = false, synthetic = false;
	long long clock_offset = 0, clock_jitter = 0;
	double clock_drift = 0;
	char *end;
	int c, r;

	if (getenv("LOCKSTEP_STEP_PIDS_MAX") &&
	    parse_count(getenv("LOCKSTEP_STEP_PIDS_MAX"), &o.step_pids_max) < 0) {
		fprintf(stderr, "guestagent: LOCKSTEP_STEP_PIDS_MAX is not a count\n");
		return 2;
	}
	if (getenv("LOCKSTEP_STEP_MEMORY_MAX") &&
	    parse_count(getenv("LOCKSTEP_STEP_MEMORY_MAX"), &o.step_memory_max) < 0) {
		fprintf(stderr, "guestagent: LOCKSTEP_STEP_MEMORY_MAX is not a count\n");
		return 2;
	}
	while ((c = getopt_long(argc, argv, "vhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': o.channel = optarg; break;
		case 'f':
			r = parse_fd(optarg, &o.channel_fd);
			if (r < 0) {
				fprintf(stderr, "guestagent: --channel-fd '%s': %s\n", optarg,
					r == -EBADF ? "not an open file descriptor"
						    : "not a file descriptor number");
				return 2;
			}
			break;
		case 'r': o.root = optarg; break;
		case 'n': o.node = optarg; break;
		case 'w': o.work_dir = optarg; break;
		case 'P': o.proc_root = optarg; break;
		case 'O':
		case 'J':
			errno = 0;
			*(c == 'O' ? &clock_offset : &clock_jitter) = strtoll(optarg, &end, 10);
			if (errno || end == optarg || *end) {
				fprintf(stderr, "guestagent: '%s' is not a number of nanoseconds\n",
					optarg);
				return 2;
			}
			synthetic = true;
			break;
		case 'N': o.no_ptp = true; break;
		case 'S':
			errno = 0;
			o.ptp_synthetic_ns = strtoll(optarg, &end, 10);
			/* a realtime that far behind would be before 1970 */
			if (errno || end == optarg || *end ||
			    o.ptp_synthetic_ns < -NSEC_PER_SEC * 3600 ||
			    o.ptp_synthetic_ns > NSEC_PER_SEC * 3600) {
				fprintf(stderr,
					"guestagent: --ptp-synthetic-ns '%s' is not a number of "
					"nanoseconds within an hour\n",
					optarg);
				return 2;
			}
			o.ptp_synthetic = true;
			break;
		case 'R': {
			long prio = strtol(optarg, &end, 10);
			if (end == optarg || *end || prio < 0 || prio > 99) {
				fprintf(stderr, "guestagent: --start-rt-priority '%s' is not 0..99\n",
					optarg);
				return 2;
			}
			step_set_start_priority((int)prio);
			break;
		}
		case 'D':
			clock_drift = strtod(optarg, &end);
			if (end == optarg || *end || clock_drift < -1e5 || clock_drift > 1e5) {
				fprintf(stderr, "guestagent: --clock-drift-ppm '%s' is not a drift\n",
					optarg);
				return 2;
			}
			synthetic = true;
			break;
		case 'p':
		case 'm':
			if (parse_count(optarg, c == 'p' ? &o.step_pids_max : &o.step_memory_max) < 0) {
				fprintf(stderr, "guestagent: --step-%s-max '%s' is not a count\n",
					c == 'p' ? "pids" : "memory", optarg);
				return 2;
			}
			break;
		case 'v': verbose = true; break;
		case 'h': usage(stdout); return 0;
		case 'V':
			printf("guestagent %s (protocol %d)\n", LOCKSTEP_VERSION, PROTO_VERSION);
			return 0;
		default: usage(stderr); return 2;
		}
	}
	if (synthetic)
		aclock_set_synthetic(clock_offset, clock_drift, clock_jitter);
	if (optind < argc) {
		fprintf(stderr, "guestagent: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (o.channel && o.channel_fd >= 0) {
		fprintf(stderr, "guestagent: --channel and --channel-fd exclude each other\n");
		return 2;
	}
	if (o.channel && strlen(o.channel) >= PATH_MAX) {
		fprintf(stderr, "guestagent: --channel path is longer than %d bytes\n", PATH_MAX - 1);
		return 2;
	}
	if (o.node && !proto_name_valid(o.node)) {
		fprintf(stderr,
			"guestagent: --node '%s': a node name is 1 to %d of "
			"[A-Za-z0-9._-], not starting with '.'\n",
			o.node, PROTO_NAME_MAX - 1);
		return 2;
	}
	if (!o.node) {
		r = default_node(host, sizeof(host));
		if (r < 0) {
			fprintf(stderr,
				"guestagent: the hostname is not usable as a node name (%s);"
				" give one with --node\n",
				r == -EINVAL ? "invalid" : strerror(-r));
			return 2;
		}
		o.node = host;
	}
	log_init("guestagent", verbose ? LOG_LVL_DEBUG : LOG_LVL_INFO);
	/* A scheduled go sleeps until an absolute instant: the default 50 us of
	 * timer slack would be 50 us of skew. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	return agent_run(&o);
}
