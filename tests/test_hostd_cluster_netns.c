// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The cross-host barrier across network namespaces this test makes (issue
 * 18, docs/cluster.md): redis-server in one namespace on a bridge, three
 * members m1 (the leader), m2, m3 each a real hostd with local guests (4
 * in the first case, 2 in the others) in a namespace of its own, joined to
 * the bridge by a veth.  Nothing here
 * sends to an address of the root namespace but loopback: every address is
 * inside the namespaces (10.99.0.0/24 exists only there), which
 * tools/cluster-netns makes and removes (as for tools/demo --cluster and
 * bench/cluster).
 *
 * Cases: the three complete with one release instant per step, every
 * follower's samples in the leader's folder once; a member SIGKILLed
 * mid-run is named through its heartbeats within CLUSTER_TIMEOUT (abort,
 * and continue); a member cut off by its veth brought down is named alike;
 * redis-server SIGKILLed and started again with appendonly is survived,
 * every follower's samples in the leader's folder once.  Every namespace
 * is removed, and the processes in it killed, before each case and after
 * the last, also when one failed.  Without the
 * right to make namespaces (not root) the suite is skipped (exit 77).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hostd_testlib.h"
#include "testlib.h"

#define NMEMBERS 3
#define NET "10.99.0"
#define REDIS_ADDR NET ".1"
#define REDIS_PORT 6379
#define REDIS_PW "netns-pw"

/* "lsc<runner pid>": the namespaces are <prefix>r and <prefix>m1..m3 */
static char prefix[32];

/* cmd run by the shell: its exit status, -1 when it did not exit. */
static int run_cmd(const char *cmd)
{
	int st = system(cmd);
	return st == -1 || !WIFEXITED(st) ? -1 : WEXITSTATUS(st);
}

/* The command formatted into a buffer of the caller's, then run. */
#define SH(buf, ...) (snprintf(buf, sizeof(buf), __VA_ARGS__), run_cmd(buf))
#define SH_OK(...)                                                                     \
	do {                                                                           \
		char cmd_[1024];                                                       \
		ck_assert_msg(SH(cmd_, __VA_ARGS__) == 0, "failed (not 0): %s", cmd_); \
	} while (0)

/* Namespace name of "r" or "m<i>" into buf. */
static const char *ns(char *buf, size_t size, const char *which)
{
	snprintf(buf, size, "%s%s", prefix, which);
	return buf;
}

/* Where tools/ is: the source tree meson gives (LOCKSTEP_SOURCE_ROOT). */
static const char *source_root(void)
{
	const char *src = getenv("LOCKSTEP_SOURCE_ROOT");
	return src ? src : ".";
}

/* tools/cluster-netns (shared with tools/demo-cluster and bench/cluster):
 * cmd and its arguments before the members, on our prefix and m1..m3; its
 * exit status. */
static int cluster_netns(const char *cmd, const char *args)
{
	char line[1024];
	return SH(line, "'%s/tools/cluster-netns' %s %s %s m1 m2 m3", source_root(), cmd, prefix, args);
}

/* Every process in our namespaces killed (they are this suite's: hostds,
 * their agents, redis-server), then the namespaces removed. */
static void netns_cleanup(void)
{
	cluster_netns("down", "");
}

/* The bridge br0 (REDIS_ADDR/24) in namespace r, and each member's veth
 * eth0 (NET.<9+i>) joined to it. */
static void netns_make(void)
{
	netns_cleanup();
	ck_assert_msg(cluster_netns("up", NET) == 0,
		      "%s/tools/cluster-netns up %s " NET " m1 m2 m3 failed", source_root(), prefix);
}

/* argv run in namespace which ("r", "m1", ...), stdout and stderr to
 * tmpdir/<log>. */
static pid_t spawn_in(const char *which, const char *log, const char *const *argv)
{
	char path[512], n[64];
	const char *full[32] = { "/usr/sbin/ip", "netns", "exec", ns(n, sizeof(n), which) };
	int k = 4;
	for (int i = 0; argv[i] && k < 31; i++)
		full[k++] = argv[i];
	full[k] = NULL;
	snprintf(path, sizeof(path), "%s/%s", tmpdir, log);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		execv(full[0], (char *const *)full);
		_exit(127);
	}
	return pid;
}

static pid_t redis_pid;

/* redis-server in namespace r on REDIS_ADDR, appendonly yes, its files in
 * tmpdir; up once redis-cli in that namespace gets PONG. */
static void redis_start(void)
{
	char port[16], r[64], cmd[512];
	snprintf(port, sizeof(port), "%d", REDIS_PORT);
	const char *argv[] = { "/usr/bin/redis-server",
			       "--port",
			       port,
			       "--bind",
			       REDIS_ADDR,
			       "--save",
			       "",
			       "--appendonly",
			       "yes",
			       "--dir",
			       tmpdir,
			       "--requirepass",
			       REDIS_PW,
			       NULL };
	redis_pid = spawn_in("r", "redis.log", argv);
	ns(r, sizeof(r), "r");
	for (int i = 0; i < 100; i++) {
		if (SH(cmd,
		       "ip netns exec %s redis-cli -h %s -p %d -a %s --no-auth-warning PING "
		       "2>/dev/null | grep -q PONG",
		       r, REDIS_ADDR, REDIS_PORT, REDIS_PW) == 0)
			return;
		usleep(50000);
	}
	ck_abort_msg("redis-server in %s on %s:%d did not answer PING", r, REDIS_ADDR, REDIS_PORT);
}

static void redis_kill(void)
{
	kill(redis_pid, SIGKILL);
	waitpid(redis_pid, NULL, 0);
}

static pid_t members[NMEMBERS + 1];
static int guests = 2; /* local guests per member */

/* Member i (1: the leader) started in its namespace on tmpdir/g.conf with
 * extra h.conf lines; its results in tmpdir/m<i>, its log tmpdir/m<i>.err. */
static void member_start(int i, const char *extra)
{
	char conf[1024], name[32], h[512], g[512], res[512], log[32], which[16];
	snprintf(conf, sizeof(conf),
		 "GUEST_KIND=local\nGUEST_COUNT=%d\nBARRIER_TIMEOUT=30\n"
		 "CLUSTER_REDIS=%s:%d\nCLUSTER_ID=%s-%ld\nCLUSTER_ROLE=%s\nCLUSTER_MEMBER=m%d\n"
		 "CLUSTER_MEMBERS=\"m1 m2 m3\"\nCLUSTER_TIMEOUT=4\nCLUSTER_PASSWORD_FILE=%s/redis.pw\n%s",
		 guests, REDIS_ADDR, REDIS_PORT, prefix, (long)time(NULL),
		 i == 1 ? "leader" : "follower", i, tmpdir, extra);
	snprintf(name, sizeof(name), "h-m%d.conf", i);
	write_file(name, conf, 0644);
	snprintf(h, sizeof(h), "%s/%s", tmpdir, name);
	snprintf(g, sizeof(g), "%s/g.conf", tmpdir);
	snprintf(res, sizeof(res), "%s/m%d", tmpdir, i);
	snprintf(log, sizeof(log), "m%d.err", i);
	snprintf(which, sizeof(which), "m%d", i);
	const char *argv[] = { hostd_path, "--host-config", h,		"--guest-config",
			       g,	   "--results",	    res,	"--run-name",
			       "t",	   "--agent",	    agent_path, "--no-progress",
			       NULL };
	members[i] = spawn_in(which, log, argv);
}

static const char *log_of(int i)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/m%d.err", tmpdir, i);
	const char *t = read_text(path);
	return t ? t : "(no log)";
}

/* Every member started on steps of `sleep secs` (iterations of them), the
 * leader with extra lines lead_extra; back once m1 wrote a barrier. */
static void start_all(int iterations, const char *secs, const char *lead_extra)
{
	char g[160], path[512];
	struct stat st;
	snprintf(g, sizeof(g), "BENCHMARKS='nap'\nITERATIONS=%d\nCOMMAND_NAP='sleep %s'\n",
		 iterations, secs);
	write_file("g.conf", g, 0644);
	for (int i = 1; i <= NMEMBERS; i++)
		member_start(i, i == 1 ? lead_extra : "");
	snprintf(path, sizeof(path), "%s/m1/t/barriers.ndjson", tmpdir);
	for (int t = 0; t < 1500 && (stat(path, &st) != 0 || st.st_size == 0); t++)
		usleep(10000);
	ck_assert_msg(st.st_size > 0, "the leader wrote no barrier within 15 s: %s", log_of(1));
}

/* The barriers.ndjson records of member i, parsed; *n the count. */
static json_object **records(int i, size_t *n)
{
	char path[512], *line = NULL;
	size_t cap = 0;
	snprintf(path, sizeof(path), "%s/m%d/t/barriers.ndjson", tmpdir, i);
	FILE *f = fopen(path, "r");
	ck_assert_msg(f, "m%d: no %s: %s", i, path, log_of(i));
	json_object **v = calloc(128, sizeof(*v));
	*n = 0;
	while (*n < 128 && getline(&line, &cap, f) > 0)
		v[(*n)++] = json_tokener_parse(line);
	free(line);
	fclose(f);
	return v;
}

/* o["cluster"][key], which must be there. */
static json_object *cl(json_object *o, const char *key)
{
	json_object *c = NULL, *v = NULL;
	ck_assert_msg(json_object_object_get_ex(o, "cluster", &c) &&
			      json_object_object_get_ex(c, key, &v),
		      "no cluster.%s in %s", key, json_object_to_json_string(o));
	return v;
}

/* The exit statuses of members from..to, waited for (at most 60 s each,
 * the case's timeout). */
static void wait_members(int from, int to, int *st)
{
	for (int i = from; i <= to; i++)
		st[i] = hostd_test_wait(members[i]);
}

/* Members ids (1-based, 0-terminated) completed every one of steps steps
 * with the same instant each; the start spread of all their guests at
 * most, ns. */
static int64_t same_instants(const int *ids, size_t steps)
{
	json_object **v[NMEMBERS + 1] = { 0 };
	size_t n[NMEMBERS + 1] = { 0 };
	int64_t worst = 0;
	for (int k = 0; ids[k]; k++) {
		v[k] = records(ids[k], &n[k]);
		ck_assert_msg(n[k] == steps, "m%d has %zu barriers of %zu: %s", ids[k], n[k], steps,
			      log_of(ids[k]));
	}
	for (size_t s = 0; s < steps; s++) {
		int64_t at = json_object_get_int64(cl(v[0][s], "release_realtime_ns")),
			lo = INT64_MAX, hi = INT64_MIN;
		ck_assert_int_gt(at, 0);
		for (int k = 0; ids[k]; k++) {
			ck_assert_int_eq(json_object_get_int64(cl(v[k][s], "release_realtime_ns")), at);
			json_object_object_foreach(cl(v[k][s], "started_realtime_ns"), node, t)
			{
				int64_t ns_ = json_object_get_int64(t);
				(void)node;
				lo = ns_ < lo ? ns_ : lo;
				hi = ns_ > hi ? ns_ : hi;
			}
		}
		worst = hi - lo > worst ? hi - lo : worst;
	}
	for (int k = 0; ids[k]; k++)
		free_ndjson(v[k], n[k]);
	return worst;
}

static double since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void setup(void)
{
	hostd_test_setup();
	ck_assert_msg(access("/usr/bin/redis-server", X_OK) == 0 &&
			      access("/usr/bin/redis-cli", X_OK) == 0,
		      "redis-server or redis-cli is missing: tools/install-deps installs them");
	write_file("redis.pw", REDIS_PW "\n", 0600);
	netns_make();
	redis_start();
}

static void teardown(void)
{
	netns_cleanup();
	hostd_test_teardown();
}

START_TEST(test_three_hosts_one_instant)
{
	int st[NMEMBERS + 1];
	guests = 4;
	write_file("g.conf", "MMTESTS=\"cpu-probe\"\nMMTEST_ITERATIONS=4\nCPU_PROBE_UNITS=2000\n",
		   0644);
	for (int i = 1; i <= NMEMBERS; i++)
		member_start(i, "");
	wait_members(1, NMEMBERS, st);
	for (int i = 1; i <= NMEMBERS; i++)
		ck_assert_msg(st[i] == 0, "m%d exit %d: %s", i, st[i], log_of(i));
	const int all[] = { 1, 2, 3, 0 };
	int64_t spread = same_instants(all, 4);
	/* every sample of every follower also on the leader, as <member>/<node> */
	char lead[512], own[512], member[8];
	snprintf(lead, sizeof(lead), "%s/m1/t", tmpdir);
	for (int i = 2; i <= NMEMBERS; i++) {
		snprintf(own, sizeof(own), "%s/m%d/t", tmpdir, i);
		snprintf(member, sizeof(member), "m%d", i);
		size_t n = cluster_samples_once(lead, own, member);
		ck_assert_msg(n >= 4 * 4, "m%d: %zu samples on the leader for 4 steps x 4 guests",
			      i, n);
	}
	printf("3 hostds in 3 network namespaces x 4 local guests, Redis in a fourth: one instant "
	       "per step, every sample on the leader; start spread across the 12 guests at most "
	       "%lld us\n",
	       (long long)(spread / 1000));
}
END_TEST

/* Seconds from the instant at (CLOCK_REALTIME) to the log line of member
 * i that holds needle (hostd's log stamps its lines in local time, to the
 * ms); the line must be there. */
static double logged_after(int i, const char *needle, const struct timespec *at)
{
	const char *log = log_of(i), *hit = strstr(log, needle);
	ck_assert_msg(hit, "m%d's log has no \"%s\": %s", i, needle, log);
	while (hit > log && hit[-1] != '\n')
		hit--;
	struct tm tm = { 0 };
	int ms = 0;
	const char *rest = strptime(hit, "%Y-%m-%d %H:%M:%S", &tm);
	ck_assert_msg(rest && sscanf(rest, ".%3d", &ms) == 1, "no time stamp on: %.80s", hit);
	tm.tm_isdst = -1;
	double when = (double)mktime(&tm) + ms / 1e3;
	return when - ((double)at->tv_sec + (double)at->tv_nsec / 1e9);
}

/* m3 SIGKILLed once the leader wrote its first barrier; the seconds from
 * the kill to the leader's log naming it as silent. */
static double kill_m3(const char *lead_extra, int *st)
{
	struct timespec t0;
	start_all(8, "0.5", lead_extra);
	clock_gettime(CLOCK_REALTIME, &t0);
	kill(members[3], SIGKILL);
	waitpid(members[3], NULL, 0);
	wait_members(1, 2, st);
	return logged_after(1, "cluster: member m3 silent for ", &t0);
}

START_TEST(test_member_killed_abort)
{
	int st[NMEMBERS + 1];
	double took = kill_m3("", st);
	ck_assert_msg(st[1] == 2 && strstr(log_of(1), "heartbeat-timeout sent (ON_HOST_FAILURE=abort)"),
		      "leader exit %d: %s", st[1], log_of(1));
	ck_assert_msg(took < 4.0, "the leader named m3 %.1f s after the kill, CLUSTER_TIMEOUT=4", took);
	/* the other follower hears heartbeat-timeout and ends too, its
	 * results so far kept */
	ck_assert_msg(st[2] == 2 && strstr(log_of(2), "the leader m1 sent heartbeat-timeout"),
		      "m2 exit %d: %s", st[2], log_of(2));
	size_t n;
	json_object **v = records(2, &n);
	ck_assert_uint_ge(n, 1);
	free_ndjson(v, n);
	printf("member SIGKILLed, abort: the leader named it %.2f s later (CLUSTER_TIMEOUT=4)\n", took);
}
END_TEST

START_TEST(test_member_killed_continue)
{
	int st[NMEMBERS + 1];
	double took = kill_m3("ON_HOST_FAILURE=continue\n", st);
	ck_assert_msg(took < 4.0, "the leader named m3 %.1f s after the kill, CLUSTER_TIMEOUT=4", took);
	printf("member SIGKILLed, continue: the leader named it %.2f s later and went on\n", took);
	ck_assert_msg(st[1] == 0, "leader exit %d: %s", st[1], log_of(1));
	ck_assert_msg(st[2] == 0, "m2 exit %d: %s", st[2], log_of(2));
	const int rest[] = { 1, 2, 0 };
	same_instants(rest, 8);
	size_t n;
	json_object **v = records(1, &n);
	json_object *dropped = cl(v[n - 1], "dropped");
	ck_assert_msg(json_object_array_length(dropped) == 1 &&
			      strcmp(json_object_get_string(json_object_array_get_idx(dropped, 0)),
				     "m3") == 0,
		      "m3 not dropped at the last step: %s", json_object_to_json_string(v[n - 1]));
	free_ndjson(v, n);
}
END_TEST

/* m3's veth down: its messages stop without a word (no FIN, no RST); the
 * leader names it through the heartbeats and, with continue, m1 and m2
 * finish; m3 itself finds Redis gone and ends naming it. */
START_TEST(test_member_cut_off)
{
	int st[NMEMBERS + 1];
	char m3[64];
	struct timespec t0, r0;
	start_all(10, "0.5", "ON_HOST_FAILURE=continue\n");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	clock_gettime(CLOCK_REALTIME, &r0);
	SH_OK("ip -n %s link set eth0 down", ns(m3, sizeof(m3), "m3"));
	wait_members(1, NMEMBERS, st);
	ck_assert_msg(st[1] == 0, "leader exit %d: %s", st[1], log_of(1));
	double named = logged_after(1, "cluster: member m3 silent for ", &r0);
	ck_assert_msg(named < 4.0, "the leader named m3 %.1f s after the cut, CLUSTER_TIMEOUT=4",
		      named);
	ck_assert_msg(st[2] == 0, "m2 exit %d: %s", st[2], log_of(2));
	const int rest[] = { 1, 2, 0 };
	same_instants(rest, 10);
	ck_assert_msg(st[3] == 2 && strstr(log_of(3), "Redis at " REDIS_ADDR ":6379"),
		      "m3 exit %d: %s", st[3], log_of(3));
	printf("member cut off (veth down): the leader named it %.2f s after the cut, the other "
	       "two finished; it ended itself naming Redis %.1f s after the cut\n",
	       named, since(&t0));
}
END_TEST

/* redis-server SIGKILLed mid-run and started again 0.5 s later on its
 * appendonly file: the three reconnect and complete every step. */
START_TEST(test_redis_restart)
{
	int st[NMEMBERS + 1];
	start_all(8, "0.3", "");
	redis_kill();
	usleep(500000);
	redis_start();
	wait_members(1, NMEMBERS, st);
	for (int i = 1; i <= NMEMBERS; i++)
		ck_assert_msg(st[i] == 0, "m%d exit %d: %s", i, st[i], log_of(i));
	const int all[] = { 1, 2, 3, 0 };
	same_instants(all, 8);
	/* the records' connections came back too: every sample of m2 and m3
	 * in the leader's folder once, none lost, none written twice */
	char lead[512], own[512], who[8];
	snprintf(lead, sizeof(lead), "%s/m1/t", tmpdir);
	for (int i = 2; i <= NMEMBERS; i++) {
		snprintf(own, sizeof(own), "%s/m%d/t", tmpdir, i);
		snprintf(who, sizeof(who), "m%d", i);
		ck_assert_uint_ge(cluster_samples_once(lead, own, who), 8 * 2);
		ck_assert_msg(!strstr(log_of(i), "no more records"), "m%d's records stopped: %s", i,
			      log_of(i));
	}
	ck_assert_msg(!strstr(log_of(1), "no more records"), "the leader's records stopped: %s",
		      log_of(1));
}
END_TEST

int main(void)
{
	snprintf(prefix, sizeof(prefix), "lsc%ld", (long)getpid());
	char probe[64], cmd[256];
	snprintf(probe, sizeof(probe), "%sprobe", prefix);
	if (SH(cmd, "ip netns add %s 2>/dev/null && ip netns del %s", probe, probe) != 0) {
		printf("hostd-cluster-netns: skipped: 'ip netns add' is not permitted here (it "
		       "needs root)\n");
		return 77;
	}
	Suite *s = suite_create("hostd-cluster-netns");
	TCase *tc = tcase_create("netns");
	tcase_add_checked_fixture(tc, setup, teardown);
	/* in this process: what a failed case left is removed at the end */
	tcase_add_unchecked_fixture(tc, NULL, netns_cleanup);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_three_hosts_one_instant);
	tcase_add_test(tc, test_member_killed_abort);
	tcase_add_test(tc, test_member_killed_continue);
	tcase_add_test(tc, test_member_cut_off);
	tcase_add_test(tc, test_redis_restart);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
