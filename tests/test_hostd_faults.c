// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Faults on real demo guests (issue 9), and hostd surviving them: a guest
 * paused past the barrier deadline, the agent killed inside a guest, the
 * SSH connection cut during the harness push, libvirtd restarted mid-run.
 * Each case checks that the fault is named in the manifest with the node
 * and the step, that the run ends (hostd exits on its own), and that every
 * sample of the guest that survived is there exactly once.  (A guest
 * destroyed mid-run is test_hostd_libvirt.c's.)
 *
 * Needs root, a running libvirtd and the built demo guest; skipped (77)
 * without them.  Guests are lockstep-flt-<pid>-N on loopback ports of this
 * process's own.  No assertion is about time: the machines are shared.
 */
#include <check.h>
#include <errno.h>
#include <json-c/json.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "demo_testlib.h"
#include "hostd_testlib.h"
#include "testlib.h"

#define DEMO_KERNEL "/var/lib/lockstep/demo-guest/vmlinux"
#define DEMO_INITRD "/var/lib/lockstep/demo-guest/initrd.img"
#define STATE_DIR "/var/lib/lockstep"
#define STEPS 8 /* ITERATIONS=4 of 'cpu-probe nap' */

static char prefix[64], rundir[128], node1[96], node2[96];
static int port_base;
static pid_t proxy_pid = -1;
static const char *state_args[5] = { "--state-dir", STATE_DIR };

/* the cases look up domains that are meant to be gone */
static void quiet(void *data, virErrorPtr e)
{
	(void)data;
	(void)e;
}

static void setup(void)
{
	virSetErrorFunc(NULL, quiet);
	hostd_test_setup();
	const char *guest_agent = getenv("LOCKSTEP_GUEST_AGENT");
	if (guest_agent) {
		state_args[2] = "--guest-agent";
		state_args[3] = guest_agent;
	}
	snprintf(prefix, sizeof(prefix), "lockstep-flt-%d-", (int)getpid());
	snprintf(node1, sizeof(node1), "%s1", prefix);
	snprintf(node2, sizeof(node2), "%s2", prefix);
	snprintf(rundir, sizeof(rundir), "/run/lockstep/flt-%d", (int)getpid());
	mkdir("/run/lockstep", 0755);
	mkdir(rundir, 0755);
	/* away from the default 22200 and from test_hostd_libvirt's range */
	port_base = 24000 + (getpid() % 300) * 16;
}

static virConnectPtr conn_or_die(void)
{
	virConnectPtr c = NULL;
	/* libvirtd may be on its way back up from a restart case */
	for (int i = 0; i < 300 && !c; i++) {
		c = virConnectOpen("qemu:///system");
		if (!c)
			usleep(200 * 1000);
	}
	ck_assert_ptr_nonnull(c);
	return c;
}

static void teardown(void)
{
	if (proxy_pid > 0) {
		kill(proxy_pid, SIGKILL);
		waitpid(proxy_pid, NULL, 0);
		proxy_pid = -1;
	}
	/* whatever happened, no guest of this case may outlive it */
	virConnectPtr c = conn_or_die();
	const char *names[] = { node1, node2 };
	for (int i = 0; i < 2; i++) {
		virDomainPtr d = virDomainLookupByName(c, names[i]);
		if (d) {
			virDomainDestroy(d);
			virDomainFree(d);
		}
	}
	virConnectClose(c);
	hostd_test_teardown();
}

static void write_hconf(const char *extra)
{
	char text[2048];
	const char *src = getenv("LOCKSTEP_SOURCE_ROOT");
	ck_assert_ptr_nonnull(src);
	snprintf(text, sizeof(text),
		 "GUEST_KIND=libvirt\nGUEST_COUNT=2\nGUEST_NAME_PREFIX=%s\n"
		 "GUEST_TEMPLATE=%s/vm-templates/demo-guest.xml.in\n"
		 "GUEST_SSH_PORT_BASE=%d\nGUEST_RUNTIME_DIR=%s\nGUEST_BOOT_TIMEOUT=180\n"
		 "GUEST_SSH_TIMEOUT=20\nON_GUEST_FAILURE=continue\nSTEP_TIMEOUT=600\n%s",
		 prefix, src, port_base, rundir, extra);
	write_file("h.conf", text, 0644);
}

/* cpu-probe and a nap, four times over: 8 steps, about 2 s each */
static void write_gconf(const char *name, const char *nap)
{
	char text[512];
	snprintf(text, sizeof(text),
		 "MMTESTS='cpu-probe nap'\nITERATIONS=4\n"
		 "CPU_PROBE_UNITS=100000\nCOMMAND_NAP='%s'\n",
		 nap);
	write_file(name, text, 0644);
}

/* Waits (at most seconds) until the manifest names a failure; 0 if none. */
static size_t wait_failures(pid_t pid, int seconds)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/results/t/manifest.json", tmpdir);
	for (int i = 0; i < seconds * 5; i++) {
		json_object *m = json_object_from_file(path), *f;
		size_t n = 0;
		if (m && json_object_object_get_ex(m, "failures", &f))
			n = json_object_array_length(f);
		json_object_put(m);
		if (n || waitpid(pid, NULL, WNOHANG) == pid)
			return n;
		usleep(200 * 1000);
	}
	return 0;
}

/* The one failure of the run: node2, at a step of the plan, whose reason
 * has want in it. */
static int64_t check_one_failure(json_object *m, const char *want)
{
	json_object *f = json_object_object_get(m, "failures");
	ck_assert_msg(f && json_object_array_length(f) == 1, "%s", run_diagnosis());
	json_object *f0 = json_object_array_get_idx(f, 0);
	ck_assert_str_eq(jstr(f0, "node"), node2);
	ck_assert_msg(strstr(jstr(f0, "reason"), want), "reason \"%s\" lacks \"%s\"",
		      jstr(f0, "reason"), want);
	int64_t step = jint(f0, "step");
	ck_assert_int_ge(step, 1);
	ck_assert_int_le(step, STEPS);
	return step;
}

/* Every step of node1 has its samples, each exactly once. */
static void check_survivor(void)
{
	size_t n;
	json_object **s = read_ndjson("samples.ndjson", &n);
	for (int step = 1; step <= STEPS; step++)
		ck_assert_int_eq(count_sample(s, n, node1, step, "elapsed"), 1);
	for (int step = 1; step <= STEPS; step += 2)
		ck_assert_int_eq(count_sample(s, n, node1, step, "ops_per_sec"), 1);
	free_ndjson(s, n);
}

static bool has_event(json_object *m, const char *want)
{
	json_object *ev = json_object_object_get(m, "events");
	for (size_t i = 0; ev && i < json_object_array_length(ev); i++) {
		json_object *what;
		if (json_object_object_get_ex(json_object_array_get_idx(ev, i), "what", &what) &&
		    strstr(json_object_get_string(what), want))
			return true;
	}
	return false;
}

static void skip_unless_possible(void)
{
	if (geteuid() != 0 || access(DEMO_KERNEL, R_OK) != 0) {
		fprintf(stderr, "needs root and the demo guest (vm-templates/build-demo-guest)\n");
		exit(77);
	}
}

/* Guest 2 suspended (virDomainSuspend) past BARRIER_TIMEOUT: named at the
 * deadline as paused, from the lifecycle event; stopped at once; then
 * resumed (or found gone: hostd destroyed what it made); guest 1 goes on. */
START_TEST(test_suspended_guest)
{
	write_hconf("BARRIER_TIMEOUT=8\n");
	write_gconf("g.conf", "sleep 1");
	pid_t pid = hostd_test_start(NULL, state_args);
	hostd_test_wait_first_barrier(240);

	virConnectPtr c = conn_or_die();
	virDomainPtr d = virDomainLookupByName(c, node2);
	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(virDomainSuspend(d), 0);
	ck_assert_uint_eq(wait_failures(pid, 120), 1);
	/* named while hostd still runs the others' steps; its guest stopped */
	if (virDomainResume(d) < 0)
		ck_assert_int_eq(virGetLastErrorCode(), VIR_ERR_NO_DOMAIN);
	virDomainFree(d);
	virConnectClose(c);

	ck_assert_int_eq(hostd_test_wait(pid), 2);
	json_object *m = manifest();
	ck_assert_str_eq(jstr(m, "status"), "degraded");
	check_one_failure(m, "paused (libvirt: suspended, paused)");
	ck_assert(has_event(m, "its domain was paused"));
	json_object_put(m);
	check_survivor();
	ck_assert(!demo_domain_exists(node1));
	ck_assert(!demo_domain_exists(node2));
}
END_TEST

/* Guest 2's agent is killed by its own step: QEMU says the port closed,
 * and hostd names it from that at once (BARRIER_TIMEOUT is far away), at
 * the step that killed it, and fetches its agent.log before stopping it. */
START_TEST(test_agent_killed_in_guest)
{
	char extra[256];
	/* GUEST_CONFIG_<NODE>: guest 2 alone gets the killing nap */
	snprintf(extra, sizeof(extra),
		 "BARRIER_TIMEOUT=300\nGUEST_CONFIG_LOCKSTEP_FLT_%d_2=g2.conf\n", (int)getpid());
	write_hconf(extra);
	write_gconf("g.conf", "sleep 1");
	write_gconf("g2.conf", "kill -9 $(cat /run/lockstep/agent.pid)");
	ck_assert_int_eq(hostd_test_run(NULL, state_args), 2);

	json_object *m = manifest();
	ck_assert_str_eq(jstr(m, "status"), "degraded");
	/* the nap is step 2: the first step the agent never finished */
	ck_assert_int_eq(check_one_failure(m, "closed its virtio-serial port"), 2);
	json_object_put(m);
	check_survivor();

	/* both agents' own logs came back */
	char path[512];
	snprintf(path, sizeof(path), "%s/results/t/nodes/%s/agent.log", tmpdir, node2);
	char *log = read_text(path);
	ck_assert_msg(log && strlen(log) > 0, "no %s", path);
	snprintf(path, sizeof(path), "%s/results/t/nodes/%s/agent.log", tmpdir, node1);
	log = read_text(path);
	ck_assert_msg(log && strlen(log) > 0, "no %s", path);
	ck_assert(!demo_domain_exists(node2));
}
END_TEST

/* A loopback TCP proxy to to_port that closes both sides once the client
 * sent more than cut bytes: the SSH connection dies in the harness push. */
static void run_proxy(int lfd, int to_port, size_t cut)
{
	for (;;) {
		int a = accept(lfd, NULL, NULL);
		if (a < 0)
			_exit(1);
		struct sockaddr_in to = { .sin_family = AF_INET,
					  .sin_port = htons((uint16_t)to_port),
					  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		int b = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(b, (struct sockaddr *)&to, sizeof(to)) < 0) {
			close(a);
			close(b);
			continue;
		}
		size_t sent = 0;
		char buf[16384];
		struct pollfd p[2] = { { a, POLLIN, 0 }, { b, POLLIN, 0 } };
		while (sent <= cut && poll(p, 2, -1) > 0) {
			ssize_t n = 0;
			if (p[0].revents) {
				n = read(a, buf, sizeof(buf));
				if (n > 0 && write(b, buf, (size_t)n) != n)
					n = -1;
				sent += n > 0 ? (size_t)n : 0;
			} else if (p[1].revents) {
				n = read(b, buf, sizeof(buf));
				if (n > 0 && write(a, buf, (size_t)n) != n)
					n = -1;
			}
			if (n <= 0)
				break;
		}
		close(a);
		close(b);
	}
}

static int start_proxy(int to_port, size_t cut)
{
	int lfd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(lfd, 8), 0);
	ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&a, &len), 0);
	proxy_pid = fork();
	ck_assert_int_ge(proxy_pid, 0);
	if (proxy_pid == 0)
		run_proxy(lfd, to_port, cut);
	close(lfd);
	return ntohs(a.sin_port);
}

/* Guest 2's SSH goes through a proxy that cuts the connection 256 KiB
 * into the harness (1.2 MiB): named with a clear error, its guest gone,
 * no hang; guest 1 runs every step. */
START_TEST(test_ssh_cut_during_push)
{
	int proxy = start_proxy(port_base + 2, 256 * 1024);
	char extra[256];
	snprintf(extra, sizeof(extra),
		 "BARRIER_TIMEOUT=60\n"
		 "GUEST_ADDRESSES=\"127.0.0.1:%d 127.0.0.1:%d\"\n",
		 port_base + 1, proxy);
	write_hconf(extra);
	write_gconf("g.conf", "sleep 1");
	ck_assert_int_eq(hostd_test_run(NULL, state_args), 2);

	json_object *m = manifest();
	ck_assert_str_eq(jstr(m, "status"), "degraded");
	int64_t step = check_one_failure(m, "harness");
	ck_assert_int_eq(step, 1); /* before the first barrier */
	char where[64];
	snprintf(where, sizeof(where), "127.0.0.1:%d", proxy);
	const char *reason =
		jstr(json_object_array_get_idx(json_object_object_get(m, "failures"), 0), "reason");
	ck_assert_msg(strstr(reason, where), "reason \"%s\" does not name %s", reason, where);
	json_object_put(m);
	check_survivor();
	ck_assert(!demo_domain_exists(node2));
}
END_TEST

/* ---- libvirtd restarted ---- */

static pid_t libvirtd_pid(void)
{
	char *t = read_text("/run/libvirtd.pid");
	return t ? (pid_t)atoi(t) : -1;
}

/* As tools/start-libvirt starts it (no systemd here): SIGTERM, wait until
 * it is gone, start it again. */
static void restart_libvirtd(void)
{
	pid_t pid = libvirtd_pid();
	ck_assert_int_gt(pid, 1);
	ck_assert_int_eq(kill(pid, SIGTERM), 0);
	for (int i = 0; i < 600 && kill(pid, 0) == 0; i++)
		usleep(100 * 1000);
	ck_assert_msg(kill(pid, 0) < 0, "libvirtd %d did not stop within 60 s", (int)pid);
	ck_assert_int_eq(system("libvirtd -d"), 0);
}

/* A demo guest of the test's own: an existing domain for hostd (transient,
 * without AUTODESTROY, so that libvirtd's restart leaves it running). */
static void create_domain(virConnectPtr c, const char *name, int i)
{
	const char *src = getenv("LOCKSTEP_SOURCE_ROOT");
	char path[512], *pub, cmd[4096], *xml;
	snprintf(path, sizeof(path), "%s/ssh/id_ed25519.pub", STATE_DIR);
	pub = read_text(path);
	ck_assert_ptr_nonnull(pub);
	/* the template filled by sed: the base64 key has no '|' */
	snprintf(cmd, sizeof(cmd),
		 "sed -e 's|@NAME@|%s|; s|@MEMORY_MIB@|256|; s|@VCPUS@|1|; s|@KERNEL@|%s|; "
		 "s|@INITRD@|%s|; s|@CMDLINE_EXTRA@||; s|@CONSOLE_LOG@|%s/%s.console.log|g; "
		 "s|@CHANNEL_PATH@|%s/%s.agent.sock|; s|@SSH_PORT@|%d|; "
		 "s|@AUTHKEY@|'$(base64 -w0 %s)'|' %s/vm-templates/demo-guest.xml.in > %s/%s.xml",
		 name, DEMO_KERNEL, DEMO_INITRD, rundir, name, rundir, name, port_base + i, path,
		 src, tmpdir, name);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/%s.xml", tmpdir, name);
	xml = read_text(path);
	ck_assert_ptr_nonnull(xml);
	virDomainPtr d = virDomainCreateXML(c, xml, 0);
	ck_assert_msg(d, "cannot create %s: %s", name, virGetLastErrorMessage());
	virDomainFree(d);
}

/* Existing domains live through a restart of libvirtd: hostd notices the
 * closed connection, reconnects with back-off, finds its guests again,
 * and the run completes with every sample of both. */
START_TEST(test_libvirtd_restart)
{
	virConnectPtr c = conn_or_die();
	create_domain(c, node1, 1);
	create_domain(c, node2, 2);
	virConnectClose(c);
	char extra[512];
	snprintf(extra, sizeof(extra),
		 "BARRIER_TIMEOUT=60\nGUEST_DOMAINS=\"%s %s\"\n"
		 "GUEST_READY=console\nGUEST_ADDRESSES=\"127.0.0.1:%d 127.0.0.1:%d\"\n",
		 node1, node2, port_base + 1, port_base + 2);
	write_hconf(extra);
	write_gconf("g.conf", "sleep 2");
	pid_t pid = hostd_test_start(NULL, state_args);
	hostd_test_wait_first_barrier(240);
	restart_libvirtd();

	int code = hostd_test_wait(pid);
	ck_assert_msg(code == 0, "hostd exited %d: %s", code, run_diagnosis());
	json_object *m = manifest();
	ck_assert_msg(strcmp(jstr(m, "status"), "complete") == 0, "%s", run_diagnosis());
	ck_assert(has_event(m, "lost the connection to libvirt"));
	ck_assert_msg(has_event(m, "reconnected to libvirt"), "%s", run_diagnosis());
	json_object_put(m);
	check_survivor();
	size_t n;
	json_object **s = read_ndjson("samples.ndjson", &n);
	for (int step = 1; step <= STEPS; step++)
		ck_assert_int_eq(count_sample(s, n, node2, step, "elapsed"), 1);
	free_ndjson(s, n);
	/* they were running before the run: left running */
	ck_assert(demo_domain_exists(node1));
	ck_assert(demo_domain_exists(node2));
}
END_TEST

/* Guests made for the run (AUTODESTROY) may not live through it: libvirtd
 * destroys them one after the other as it stops, and a short run may
 * finish first (seen on a clean clone).  Either way hostd reconnects, does
 * not hang, names each guest libvirt destroyed as libvirt's doing, and
 * keeps every sample of everyone else. */
START_TEST(test_libvirtd_restart_template_guests)
{
	write_hconf("BARRIER_TIMEOUT=60\nHOST_RUNS_BENCHMARKS=yes\n");
	write_gconf("g.conf", "sleep 2");
	pid_t pid = hostd_test_start(NULL, state_args);
	hostd_test_wait_first_barrier(240);
	restart_libvirtd();

	int code = hostd_test_wait(pid);
	json_object *m = manifest();
	json_object *f = json_object_object_get(m, "failures");
	size_t nf = json_object_array_length(f);
	ck_assert_msg(nf <= 2, "%s", run_diagnosis());
	/* complete with nobody failed, or degraded with who libvirt destroyed */
	ck_assert_int_eq(code, nf ? 2 : 0);
	ck_assert_str_eq(jstr(m, "status"), nf ? "degraded" : "complete");
	ck_assert(has_event(m, "lost the connection to libvirt"));
	bool failed[3] = { false };
	for (size_t i = 0; i < nf; i++) {
		json_object *fi = json_object_array_get_idx(f, i);
		const char *node = jstr(fi, "node");
		ck_assert_ptr_nonnull(strstr(node, prefix));
		failed[node[strlen(node) - 1] - '0'] = true;
		/* libvirt's doing; or, when QEMU's end of the channel closed
		 * before hostd heard that libvirtd went away, QEMU's exit */
		const char *why = jstr(fi, "reason");
		ck_assert_msg(strstr(why, "libvirt") || strstr(why, "its QEMU exited"), "%s", why);
		ck_assert_int_ge(jint(fi, "step"), 1);
	}
	json_object_put(m);
	size_t n;
	json_object **s = read_ndjson("samples.ndjson", &n);
	for (int step = 1; step <= STEPS; step++) {
		ck_assert_int_eq(count_sample(s, n, "host", step, "elapsed"), 1);
		if (!failed[1])
			ck_assert_int_eq(count_sample(s, n, node1, step, "elapsed"), 1);
		if (!failed[2])
			ck_assert_int_eq(count_sample(s, n, node2, step, "elapsed"), 1);
	}
	free_ndjson(s, n);
	ck_assert(!demo_domain_exists(node1));
	ck_assert(!demo_domain_exists(node2));
}
END_TEST

static void add_case(Suite *s, const char *name, const TTest *t)
{
	/* one case each: CK_RUN_CASE=ssh-cut runs one alone */
	TCase *tc = tcase_create(name);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, t);
	suite_add_tcase(s, tc);
}

int main(void)
{
	skip_unless_possible();
	Suite *s = suite_create("hostd-faults");
	add_case(s, "suspend", test_suspended_guest);
	add_case(s, "agent-killed", test_agent_killed_in_guest);
	add_case(s, "ssh-cut", test_ssh_cut_during_push);
	add_case(s, "restart", test_libvirtd_restart);
	add_case(s, "restart-template", test_libvirtd_restart_template_guests);
	return testlib_main(s);
}
