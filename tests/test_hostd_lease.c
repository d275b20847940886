// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostd finds a guest's SSH address in libvirt's DHCP lease, on a real
 * libvirt NAT network.  192.168.122.0/24 is a private range that nothing in
 * the root network namespace may talk to (FACTS.md, "Network rules"), so
 * this test moves itself into a new network and mount namespace first and
 * runs its own virtlogd, libvirtd, the default network (dnsmasq, NAT rules),
 * the guest and hostd in there.  The system libvirtd is never touched:
 * /run, /var/lib/libvirt and /var/cache/libvirt get private tmpfs mounts,
 * so sockets, pid files, leases and domain state cannot collide.
 *
 * Skipped (77) when not root, without the demo guest, or when the namespace
 * or its daemons cannot be set up here; after that, failures are real.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hostd_testlib.h"
#include "testlib.h"

#define DEMO_KERNEL "/var/lib/lockstep/demo-guest/vmlinux"
#define DAEMON_STOP_S 20

static const char *state_args[5] = { "--state-dir", "/var/lib/lockstep" };
static pid_t main_pid;
static char prefix[64];

static void skip(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "test-hostd-lease: skipped: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(77);
}

/* Runs a shell command; its exit status, -1 if it did not exit. */
static int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	int st = system(cmd);
	return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static pid_t read_pid(const char *path)
{
	FILE *f = fopen(path, "r");
	long pid = 0;
	if (f) {
		if (fscanf(f, "%ld", &pid) != 1)
			pid = 0;
		fclose(f);
	}
	return pid > 1 ? (pid_t)pid : 0;
}

/* Progress on stderr, seconds since main started: where the time goes. */
static void note(const char *what)
{
	static struct timespec t0;
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	if (!t0.tv_sec)
		t0 = t;
	fprintf(stderr, "test-hostd-lease: %6.1f s %s\n",
		(double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9, what);
}

static volatile sig_atomic_t stop_asked;

static void on_stop(int sig)
{
	(void)sig;
	stop_asked = 1;
}

/* Signals every child of this process (the reparented ones included), by
 * pid, found through /proc. */
static void kill_children(int sig)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char path[64], line[128];

	while (d && (e = readdir(d))) {
		long pid = strtol(e->d_name, NULL, 10);
		if (pid <= 1)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/status", pid);
		FILE *f = fopen(path, "r");
		long ppid = -1;
		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "PPid: %ld", &ppid) == 1)
				break;
		if (f)
			fclose(f);
		if (ppid == (long)getpid())
			kill((pid_t)pid, sig);
	}
	if (d)
		closedir(d);
}

/* The kill and reap part of the keeper: SIGTERM to the daemons, then to
 * every other child left (the guest's qemu once libvirtd is gone), reaping
 * until none is left; SIGKILL after DAEMON_STOP_S. */
static void keeper_stop(void)
{
	pid_t pids[] = { read_pid("/run/libvirt/network/default.pid"),
			 read_pid("/run/libvirtd.pid"), read_pid("/run/virtlogd.pid") };
	for (size_t i = 0; i < sizeof(pids) / sizeof(pids[0]); i++)
		if (pids[i] > 0)
			kill(pids[i], SIGTERM);
	stop_asked = 0;
	alarm(DAEMON_STOP_S);
	for (int sig = SIGTERM;;) {
		pid_t r = waitpid(-1, NULL, 0);
		if (r < 0 && errno == ECHILD)
			break;
		if (r < 0 && errno == EINTR) {
			fprintf(stderr,
				"test-hostd-lease: children of the namespace keeper "
				"outlived %d s: SIGKILL\n",
				DAEMON_STOP_S);
			sig = SIGKILL;
			alarm(DAEMON_STOP_S);
		}
		/* whatever libvirtd left behind was reparented to us */
		if (sig == SIGKILL || r == pids[1])
			kill_children(sig);
	}
	alarm(0);
}

/*
 * The keeper: a child of the test's main process that starts virtlogd,
 * libvirtd and the default network in the namespaces, is their child
 * subreaper (the daemons and qemu are reparented to it, and it reaps them:
 * libvirt waits for a killed qemu to disappear, and PID 1 of these machines
 * does not reap), and stops them all when the main process sends SIGTERM
 * or dies.  It writes "ok" or why it failed to fd.
 */
static void keeper(int fd)
{
	struct sigaction sa = { .sa_handler = on_stop }; /* no SA_RESTART */
	const char *why = NULL;

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != main_pid)
		_exit(0);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		why = "PR_SET_CHILD_SUBREAPER failed";
	/* -d returns once the daemon is initialised (it reports its start-up
	 * through a pipe): no wait for a socket is needed */
	else if (sh("virtlogd -d") != 0)
		why = "virtlogd -d failed in the namespace";
	else if (sh("libvirtd -d") != 0)
		why = "libvirtd -d failed in the namespace";
	else if (!read_pid("/run/virtlogd.pid") || !read_pid("/run/libvirtd.pid"))
		why = "no pid in /run/virtlogd.pid or /run/libvirtd.pid";
	else if (sh("virsh -q -c qemu:///system net-start default >&2") != 0)
		why = "virsh net-start default failed in the namespace (dnsmasq-base, iptables?)";
	if (write(fd, why ? why : "ok", strlen(why ? why : "ok")) < 0)
		why = "cannot report";
	close(fd);
	while (!why && !stop_asked) {
		if (waitpid(-1, NULL, 0) < 0 && errno == ECHILD)
			pause(); /* nothing to reap until a signal */
	}
	keeper_stop();
	_exit(0);
}

static pid_t keeper_pid;

/* Everything that runs in the namespace ends: the guest, the network
 * (dnsmasq), libvirtd, virtlogd; then the network namespace has no process
 * left and goes away, and the mount namespace with this process. */
static void ns_teardown(void)
{
	if (getpid() != main_pid || keeper_pid <= 0)
		return;
	sh("virsh -q -c qemu:///system destroy %s1 >/dev/null 2>&1", prefix);
	sh("virsh -q -c qemu:///system net-destroy default >/dev/null 2>&1");
	kill(keeper_pid, SIGTERM);
	/* the keeper's own stop is bounded (2 * DAEMON_STOP_S) */
	waitpid(keeper_pid, NULL, 0);
	keeper_pid = 0;
}

static void on_term(int sig)
{
	ns_teardown();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void private_tmpfs(const char *dir, const char *mode)
{
	char opts[64];
	snprintf(opts, sizeof(opts), "mode=%s", mode);
	mkdir(dir, 0755);
	if (mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
		skip("mount tmpfs on %s: %s", dir, strerror(errno));
}

/* Moves this process into a new network and mount namespace and has the
 * keeper start virtlogd, libvirtd and the default network there; skips
 * (77) when any of it is impossible. */
static void ns_setup(void)
{
	if (unshare(CLONE_NEWNET | CLONE_NEWNS) < 0)
		skip("unshare(CLONE_NEWNET|CLONE_NEWNS): %s", strerror(errno));
	/* nothing mounted here may leak back to the root mount namespace */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		skip("make / private: %s", strerror(errno));
	/* /run holds libvirt's sockets and the daemons' pid files (/var/run
	 * is a link to it on Debian), /var/lib/libvirt the domain state and
	 * the leases, /var/cache/libvirt the QEMU capabilities */
	private_tmpfs("/run", "0755");
	private_tmpfs("/var/lib/libvirt", "0755");
	/* a copy of the system's QEMU capabilities: probing QEMU afresh
	 * costs seconds at the first domain start */
	int cache = open("/var/cache/libvirt", O_PATH | O_DIRECTORY);
	private_tmpfs("/var/cache/libvirt", "0711");
	if (cache >= 0) {
		sh("cp -a /proc/self/fd/%d/. /var/cache/libvirt/ 2>/dev/null", cache);
		close(cache);
	}
	if (sh("ip link set lo up") != 0)
		skip("ip link set lo up failed in the new network namespace");
	note("namespaces made");

	int p[2];
	char why[256] = "";
	if (pipe(p) < 0)
		skip("pipe: %s", strerror(errno));
	fflush(NULL);
	keeper_pid = fork();
	if (keeper_pid < 0)
		skip("fork: %s", strerror(errno));
	if (keeper_pid == 0) {
		close(p[0]);
		keeper(p[1]);
	}
	close(p[1]);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	atexit(ns_teardown);
	/* returns when the keeper reports (or dies) */
	ssize_t n = read(p[0], why, sizeof(why) - 1);
	close(p[0]);
	why[n > 0 ? n : 0] = '\0';
	if (strcmp(why, "ok") != 0)
		skip("%s", n > 0 ? why : "the namespace keeper died");
	note("virtlogd, libvirtd and network default up");
}
static void setup(void)
{
	hostd_test_setup();
	const char *guest_agent = getenv("LOCKSTEP_GUEST_AGENT");
	if (guest_agent) {
		state_args[2] = "--guest-agent";
		state_args[3] = guest_agent;
	}
}

static void teardown(void)
{
	hostd_test_teardown();
}

START_TEST(test_address_from_lease)
{
	char text[2048], dir[128];
	const char *src = getenv("LOCKSTEP_SOURCE_ROOT");
	ck_assert_ptr_nonnull(src);
	/* no GUEST_ADDRESSES and no forward in the template: only libvirt can
	 * say where the guest is */
	snprintf(dir, sizeof(dir), "/run/lockstep/lease-%d", (int)main_pid);
	snprintf(text, sizeof(text),
		 "GUEST_KIND=libvirt\nGUEST_COUNT=1\nGUEST_NAME_PREFIX=%s\n"
		 "GUEST_TEMPLATE=%s/vm-templates/demo-guest-nat.xml.in\n"
		 "GUEST_RUNTIME_DIR=%s\nGUEST_BOOT_TIMEOUT=180\nBARRIER_TIMEOUT=60\n",
		 prefix, src, dir);
	write_file("h.conf", text, 0644);
	write_file("g.conf",
		   "MMTESTS='cpu-probe uname'\nITERATIONS=2\nCPU_PROBE_UNITS=200000\n"
		   "COMMAND_UNAME='uname -r'\n",
		   0644);
	mkdir("/run/lockstep", 0755);
	mkdir(dir, 0755);

	note("hostd starts");
	int code = hostd_test_run(NULL, state_args);
	note("hostd exited");
	ck_assert_msg(code == 0, "hostd exited %d; %s", code, run_diagnosis());

	json_object *m = manifest();
	ck_assert_str_eq(jstr(m, "status"), "complete");
	json_object *parts = json_object_object_get(m, "participants");
	ck_assert_int_eq(json_object_array_length(parts), 1);
	json_object *p = json_object_array_get_idx(parts, 0);
	ck_assert_str_eq(jstr(p, "kind"), "libvirt");
	json_object *v = json_object_object_get(p, "libvirt");
	ck_assert_ptr_nonnull(v);
	/* the address is the guest's lease on the namespace's virbr0 */
	ck_assert_str_eq(jstr(v, "addr_source"), "lease");
	ck_assert_msg(strncmp(jstr(v, "address"), "192.168.122.", 12) == 0, "address %s",
		      jstr(v, "address"));
	fprintf(stderr, "test-hostd-lease: guest %s at %s, create %.1f s, ready %.1f s after start\n",
		jstr(v, "domain"), jstr(v, "address"),
		json_object_get_double(json_object_object_get(v, "create_s")),
		json_object_get_double(json_object_object_get(v, "boot_s")));
	json_object *h = json_object_object_get(p, "harness");
	ck_assert_ptr_nonnull(h);
	ck_assert_int_gt(jint(h, "bytes"), 100000);
	ck_assert_str_eq(jstr(h, "hostkey_trust"), "pinned");
	json_object_put(m);

	char node[96];
	size_t n;
	snprintf(node, sizeof(node), "%s1", prefix);
	json_object **s = read_ndjson("samples.ndjson", &n);
	ck_assert_uint_gt(n, 0);
	for (int step = 1; step <= 4; step++)
		ck_assert_int_eq(count_sample(s, n, node, step, "elapsed"), 1);
	ck_assert_int_eq(count_sample(s, n, node, 1, "ops_per_sec"), 1);
	free_ndjson(s, n);

	/* the transient guest is gone */
	ck_assert_int_ne(sh("virsh -q -c qemu:///system domstate %s >/dev/null 2>&1", node), 0);
}
END_TEST

int main(void)
{
	if (geteuid() != 0)
		skip("needs root (its own libvirtd in a network namespace)");
	if (access(DEMO_KERNEL, R_OK) != 0)
		skip("no demo guest at %s (vm-templates/build-demo-guest)", DEMO_KERNEL);
	if (sh("{ command -v virtlogd && command -v libvirtd && command -v virsh && "
	       "command -v ip && { command -v dnsmasq || test -x /usr/sbin/dnsmasq; }; }"
	       " >/dev/null 2>&1") != 0)
		skip("needs virtlogd, libvirtd, virsh, ip and dnsmasq");
	main_pid = getpid();
	snprintf(prefix, sizeof(prefix), "lockstep-lease-%d-", (int)main_pid);
	note("start");
	ns_setup();

	Suite *s = suite_create("hostd-lease");
	TCase *tc = tcase_create("nat-network");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 400);
	tcase_add_test(tc, test_address_from_lease);
	suite_add_tcase(s, tc);
	int failed = testlib_main(s) != EXIT_SUCCESS;
	note("hostd run done");
	ns_teardown();
	note("torn down");
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
