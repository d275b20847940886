// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The cross-host barrier end to end (issue 18, docs/cluster.md): a real
 * redis-server on 127.0.0.1 at a free port, two real hostds (local guests)
 * as leader "a" and follower "b" of one cluster.  Both complete with the
 * same release instant per step in their barriers.ndjson; a follower that
 * never comes, or dies after a step, makes the leader fail naming it
 * within CLUSTER_TIMEOUT, with what ran kept.  tools/install-deps installs
 * redis-server: its absence fails the test.
 */
#include <check.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "cluster_roster.h" /* CLUSTER_RTT_MAX_NS */
#include "hostd_testlib.h"
#include "roadblock_msg.h"
#include "testlib.h"

#define REDIS_PW "pw-of-the-test"

static pid_t redis_pid;
static int redis_port;

static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

static bool redis_answers(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)redis_port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	bool ok = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	if (ok) {
		char buf[16] = "";
		/* up, and asking for the password */
		ok = write(fd, "PING\r\n", 6) == 6 && read(fd, buf, sizeof(buf) - 1) > 0 &&
		     strncmp(buf, "-NOAUTH", 7) == 0;
	}
	close(fd);
	return ok;
}

/* argv[0] started with stdout and stderr to tmpdir/<log>. */
static pid_t spawn(const char *log, const char *const *argv)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, log);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

/* roadblock's message format from its facts (issue 18), checked by
 * Python's own json and hashlib: every message a member wrote must be one
 * that roadblock's Python would accept and checksum alike (python3 and
 * python3-jsonschema, tools/install-deps). */
static const char schema_check_py[] =
	"import hashlib, json, sys\n"
	"import jsonschema\n"
	"name = {'type': 'string', 'minLength': 1}\n"
	"commands = ['global-stream-created', 'leader-stream-created', 'followers-stream-created',\n"
	"  'personal-stream-created', 'timeout-ts', 'initialized', 'leader-online',\n"
	"  'follower-online', 'all-online', 'initiator-info', 'follower-ready',\n"
	"  'follower-ready-abort', 'follower-ready-waiting', 'leader-heartbeat',\n"
	"  'follower-heartbeat', 'follower-waiting-complete', 'follower-waiting-complete-failed',\n"
	"  'heartbeat-timeout', 'all-ready', 'all-go', 'all-abort', 'all-wait', 'follower-gone',\n"
	"  'all-gone', 'user-string', 'user-object']\n"
	"schema = {'type': 'object', 'required': ['payload', 'tx_checksum'],\n"
	" 'additionalProperties': False, 'properties': {\n"
	"  'tx_checksum': {'type': 'string', 'pattern': '^[0-9a-f]{64}$'},\n"
	"  'payload': {'type': 'object', 'additionalProperties': False,\n"
	"   'required': ['uuid', 'roadblock', 'sender', 'recipient', 'message'], 'properties': {\n"
	"    'uuid': {'type': 'string', 'minLength': 36, 'maxLength': 36}, 'roadblock': name,\n"
	"    'sender': {'type': 'object', 'additionalProperties': False,\n"
	"     'required': ['timestamp', 'type', 'id'], 'properties': {\n"
	"      'timestamp': {'type': 'integer', 'minimum': 0},\n"
	"      'type': {'enum': ['leader', 'follower']}, 'id': name}},\n"
	"    'recipient': {'type': 'object', 'additionalProperties': False, 'required': ['type'],\n"
	"     'properties': {'type': {'enum': ['all', 'leader', 'follower']}, 'id': name,\n"
	"      'timestamp': {'type': 'integer'}},\n"
	"     'if': {'properties': {'type': {'enum': ['leader', 'follower']}}},\n"
	"     'then': {'required': ['id']}},\n"
	"    'message': {'type': 'object', 'additionalProperties': False, 'required': ['command'],\n"
	"     'properties': {'command': {'enum': commands}, 'value': name, 'user-string': name,\n"
	"      'user-object': {}}}}}}}\n"
	"seen = set()\n"
	"n = 0\n"
	"for line in open(sys.argv[1]):\n"
	"    m = json.loads(line)\n"
	"    jsonschema.validate(m, schema)\n"
	"    s = json.dumps(m['payload'], separators=(',', ':'))\n"
	"    assert hashlib.sha256(s.encode()).hexdigest() == m['tx_checksum'], line\n"
	"    seen.add(m['payload']['message']['command'])\n"
	"    n += 1\n"
	"print(n, ' '.join(sorted(seen)))\n";

/* python3 schema_check.py on tmpdir/<file>: its exit status, its output in
 * out.  Needs python3-jsonschema (tools/install-deps). */
static int schema_check(const char *file, char *out, size_t size)
{
	char cmd[1200];
	write_file("schema_check.py", schema_check_py, 0644);
	snprintf(cmd, sizeof(cmd), "python3 %s/schema_check.py %s/%s 2>&1", tmpdir, tmpdir, file);
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	size_t len = fread(out, 1, size - 1, p);
	out[len] = 0;
	return pclose(p);
}

/* Every message of every stream of the run's roadblocks into
 * tmpdir/messages.ndjson; how many. */
static int dump_messages(void)
{
	char path[512], pattern[64];
	snprintf(path, sizeof(path), "%s/messages.ndjson", tmpdir);
	snprintf(pattern, sizeof(pattern), "t%d:*__stream__*", redis_port);
	FILE *out = fopen(path, "w");
	redisContext *rc = redisConnect("127.0.0.1", redis_port);
	ck_assert(rc && !rc->err);
	freeReplyObject(redisCommand(rc, "AUTH %s", REDIS_PW));
	redisReply *keys = redisCommand(rc, "KEYS %s", pattern);
	ck_assert_int_eq(keys->type, REDIS_REPLY_ARRAY);
	int n = 0;
	for (size_t k = 0; k < keys->elements; k++) {
		redisReply *r = redisCommand(rc, "XRANGE %s - +", keys->element[k]->str);
		ck_assert_int_eq(r->type, REDIS_REPLY_ARRAY);
		for (size_t i = 0; i < r->elements; i++) {
			redisReply *f = r->element[i]->element[1];
			ck_assert_int_eq(f->elements, 2);
			ck_assert_str_eq(f->element[0]->str, "msg");
			fprintf(out, "%s\n", f->element[1]->str);
			n++;
		}
		freeReplyObject(r);
	}
	freeReplyObject(keys);
	redisFree(rc);
	fclose(out);
	return n;
}

/* redis-server on 127.0.0.1:redis_port with the test's password, its data
 * in tmpdir; appendonly "yes" or "no". */
static void start_redis(const char *appendonly)
{
	char port[16];
	snprintf(port, sizeof(port), "%d", redis_port);
	const char *argv[] = { "/usr/bin/redis-server",
			       "--port",
			       port,
			       "--bind",
			       "127.0.0.1",
			       "--save",
			       "",
			       "--appendonly",
			       appendonly,
			       "--dir",
			       tmpdir,
			       "--requirepass",
			       REDIS_PW,
			       NULL };
	redis_pid = spawn("redis.log", argv);
	for (int i = 0; i < 200 && !redis_answers(); i++)
		usleep(20000);
	ck_assert_msg(redis_answers(),
		      "redis-server on 127.0.0.1:%d did not answer PING with NOAUTH", redis_port);
}

static void stop_redis(int sig)
{
	kill(redis_pid, sig);
	waitpid(redis_pid, NULL, 0);
	redis_pid = 0;
}

static void setup(void)
{
	hostd_test_setup();
	ck_assert_msg(access("/usr/bin/redis-server", X_OK) == 0,
		      "redis-server is missing: tools/install-deps installs it");
	redis_port = free_port();
	/* with a password: the members AUTH from CLUSTER_PASSWORD_FILE */
	write_file("redis.pw", REDIS_PW "\n", 0600);
	start_redis("no");
}

static void teardown(void)
{
	if (redis_pid > 0)
		stop_redis(SIGTERM);
	hostd_test_teardown();
}

/* member's h.conf, its results folder tmpdir/<member>, its stderr
 * tmpdir/<member>.err */
/* extra: one more option for hostd (NULL: none) */
static pid_t start_member_args(const char *member, const char *role, const char *gconf,
			       const char *extra_conf, const char *extra)
{
	char name[64], h[512], g[512], res[512], err[64], conf[1024];
	snprintf(conf, sizeof(conf),
		 "GUEST_KIND=local\nGUEST_COUNT=2\nBARRIER_TIMEOUT=30\n"
		 "CLUSTER_REDIS=127.0.0.1:%d\nCLUSTER_ID=t%d\nCLUSTER_ROLE=%s\nCLUSTER_MEMBER=%s\n"
		 "CLUSTER_MEMBERS=\"a b\"\nCLUSTER_PASSWORD_FILE=%s/redis.pw\n%s",
		 redis_port, redis_port, role, member, tmpdir, extra_conf);
	snprintf(name, sizeof(name), "h-%s.conf", member);
	write_file(name, conf, 0644);
	snprintf(h, sizeof(h), "%s/%s", tmpdir, name);
	snprintf(g, sizeof(g), "%s/%s", tmpdir, gconf);
	snprintf(res, sizeof(res), "%s/%s", tmpdir, member);
	snprintf(err, sizeof(err), "%s.err", member);
	const char *argv[] = { hostd_path, "--host-config",
			       h,	   "--guest-config",
			       g,	   "--results",
			       res,	   "--run-name",
			       "t",	   "--agent",
			       agent_path, "--no-progress",
			       extra,	   NULL };
	return spawn(err, argv);
}

static pid_t start_member_g(const char *member, const char *role, const char *gconf,
			    const char *extra_conf)
{
	return start_member_args(member, role, gconf, extra_conf, NULL);
}

static pid_t start_member_check(const char *member)
{
	return start_member_args(member, "leader", "g.conf", "", "--check");
}

static pid_t start_member(const char *member, const char *role, const char *extra_conf)
{
	return start_member_g(member, role, "g.conf", extra_conf);
}

static const char *member_err(const char *member)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s.err", tmpdir, member);
	const char *t = read_text(path);
	return t ? t : "";
}

static json_object **barriers(const char *member, size_t *n)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s/t/barriers.ndjson", tmpdir, member);
	const char *text = read_text(path);
	ck_assert_msg(text, "%s has no barriers.ndjson: %s", member, member_err(member));
	json_object **v = calloc(64, sizeof(*v));
	*n = 0;
	for (const char *l = text; *l && *n < 64;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		char *line = strndup(l, len);
		v[(*n)++] = json_tokener_parse(line);
		free(line);
		l += len + (e ? 1 : 0);
	}
	return v;
}

static json_object *field(json_object *o, const char *k)
{
	json_object *v = NULL;
	ck_assert_msg(json_object_object_get_ex(o, k, &v), "no %s in %s", k,
		      json_object_to_json_string(o));
	return v;
}

/* tmpdir/<name>: cpu-probe steps */
static void write_gconf(const char *name, int iterations, int units)
{
	char g[256];
	snprintf(g, sizeof(g), "MMTESTS=\"cpu-probe\"\nMMTEST_ITERATIONS=%d\nCPU_PROBE_UNITS=%d\n",
		 iterations, units);
	write_file(name, g, 0644);
}

/* Both members exited 0 with steps barrier records each: into ra, rb. */
static void both_complete(int sa, int sb, size_t steps, json_object ***ra, json_object ***rb)
{
	size_t na, nb;
	ck_assert_msg(sa == 0, "leader exit %d: %s", sa, member_err("a"));
	ck_assert_msg(sb == 0, "follower exit %d: %s", sb, member_err("b"));
	*ra = barriers("a", &na);
	*rb = barriers("b", &nb);
	ck_assert_uint_eq(na, steps);
	ck_assert_uint_eq(nb, steps);
}

/* The record says this host joined the step's roadblock while the step
 * before ran (docs/cluster.md "Joining the next step early"). */
static bool joined_early(json_object *cluster)
{
	json_object *v = NULL;
	return json_object_object_get_ex(cluster, "joined_early", &v) && json_object_get_boolean(v);
}

START_TEST(test_two_hosts_one_instant)
{
	/* steps of some 100 ms: longer than the lead, so that each member
	 * joins the next roadblock while one runs */
	write_gconf("g.conf", 3, 50000000);
	pid_t a = start_member("a", "leader", "CLUSTER_TIMEOUT=20\n");
	pid_t b = start_member("b", "follower", "CLUSTER_TIMEOUT=20\n");
	int sa = hostd_test_wait(a), sb = hostd_test_wait(b);
	json_object **ra, **rb;
	size_t na = 3, nb = 3;
	both_complete(sa, sb, 3, &ra, &rb);
	int64_t spread_max = 0;
	for (size_t i = 0; i < na; i++) {
		json_object *ca = field(ra[i], "cluster"), *cb = field(rb[i], "cluster");
		char id[64];
		snprintf(id, sizeof(id), "t%d:step-%zu", redis_port, i + 1);
		ck_assert_str_eq(json_object_get_string(field(ca, "roadblock")), id);
		ck_assert_str_eq(json_object_get_string(field(cb, "roadblock")), id);
		ck_assert_str_eq(json_object_get_string(field(ca, "role")), "leader");
		ck_assert_str_eq(json_object_get_string(field(cb, "role")), "follower");
		int64_t at = json_object_get_int64(field(ca, "release_realtime_ns"));
		ck_assert_int_gt(at, 0);
		ck_assert_int_eq(json_object_get_int64(field(cb, "release_realtime_ns")), at);
		/* each host's own scheduled release is that instant on its clock */
		ck_assert_str_eq(json_object_get_string(field(ra[i], "release")), "scheduled");
		ck_assert_str_eq(json_object_get_string(field(rb[i], "release")), "scheduled");
		ck_assert(json_object_is_type(field(field(ca, "host_clock"), "unsynchronised"),
					      json_type_boolean));
		/* the leader knows both round trips */
		ck_assert_int_gt(json_object_get_int64(field(field(ca, "rtt_ns"), "b")), 0);
		/* both speak lockstep: from step 2 each joined while the step
		 * before ran */
		ck_assert_msg(joined_early(ca) == (i > 0) && joined_early(cb) == (i > 0),
			      "step %zu: joined early: leader %d, follower %d", i + 1,
			      joined_early(ca), joined_early(cb));
		int64_t lo = INT64_MAX, hi = INT64_MIN;
		json_object *hosts[] = { ca, cb };
		for (int h = 0; h < 2; h++) {
			json_object *st = field(hosts[h], "started_realtime_ns");
			ck_assert_int_eq(json_object_object_length(st), 2);
			json_object_object_foreach(st, node, v)
			{
				int64_t t = json_object_get_int64(v);
				/* no guest before the instant (stamps to 1 ms), none long after */
				ck_assert_msg(t > at - 1000000 && t < at + 1000000000,
					      "step %zu: %s of host %d started %lld ns from the instant",
					      i + 1, node, h, (long long)(t - at));
				lo = t < lo ? t : lo;
				hi = t > hi ? t : hi;
			}
		}
		spread_max = hi - lo > spread_max ? hi - lo : spread_max;
	}
	printf("two hostds, 2 local guests each: release instant shared on every step; "
	       "start spread across the 4 guests at most %lld us\n",
	       (long long)(spread_max / 1000));
	free_ndjson(ra, na);
	free_ndjson(rb, nb);

	/* every message either member wrote is one roadblock accepts */
	int n = dump_messages();
	ck_assert_int_gt(n, 3 * 10);
	char out[1024];
	ck_assert_msg(schema_check("messages.ndjson", out, sizeof(out)) == 0,
		      "roadblock's schema or checksum refused a message: %s", out);
	char want[64];
	snprintf(want, sizeof(want), "%d ", n);
	ck_assert_msg(strncmp(out, want, strlen(want)) == 0, "checked: %s", out);
	const char *must[] = { "all-go",	 "all-gone",	   "all-online",
			       "all-ready",	 "follower-gone",  "follower-online",
			       "follower-ready", "initiator-info", "leader-online",
			       "timeout-ts",	 "user-object",	   NULL };
	for (int i = 0; must[i]; i++)
		ck_assert_msg(strstr(out, must[i]), "no %s among the messages: %s", must[i], out);

	/* and the check itself refuses what roadblock would: one payload byte
	 * changed after its checksum, a command roadblock does not have */
	char path[512];
	snprintf(path, sizeof(path), "%s/messages.ndjson", tmpdir);
	char *first = strdup(read_text(path));
	*strchr(first, '\n') = 0;
	char *id = strstr(first, "\"uuid\":\"") + 8;
	*id = *id == 'x' ? 'y' : 'x';
	write_file("bad1.ndjson", first, 0644);
	ck_assert_msg(schema_check("bad1.ndjson", out, sizeof(out)) != 0, "tampered: %s", out);
	free(first);
	write_file("bad2.ndjson",
		   "{\"payload\":{\"uuid\":\"u\",\"roadblock\":\"r\",\"sender\":"
		   "{\"timestamp\":1,\"type\":\"leader\",\"id\":\"a\"},\"recipient\":{\"type\":"
		   "\"all\"},\"message\":{\"command\":\"all-stop\"}},\"tx_checksum\":\""
		   "0000000000000000000000000000000000000000000000000000000000000000\"}\n",
		   0644);
	ck_assert_msg(schema_check("bad2.ndjson", out, sizeof(out)) != 0, "all-stop: %s", out);
}
END_TEST

START_TEST(test_follower_never_comes)
{
	write_gconf("g.conf", 2, 1000);
	pid_t a = start_member("a", "leader", "CLUSTER_TIMEOUT=1\n");
	int sa = hostd_test_wait(a);
	/* nothing ran: a usage-type end, no run folder */
	ck_assert_msg(sa == 1, "leader exit %d: %s", sa, member_err("a"));
	char want[160];
	snprintf(want, sizeof(want),
		 "cluster step 1 (roadblock t%d:step-1): no follower-online from "
		 "b within CLUSTER_TIMEOUT=1s (ON_HOST_FAILURE=abort)",
		 redis_port);
	ck_assert_msg(strstr(member_err("a"), want), "want \"%s\" in: %s", want, member_err("a"));
	struct stat st;
	char path[512];
	snprintf(path, sizeof(path), "%s/a/t", tmpdir);
	ck_assert_int_ne(stat(path, &st), 0);
}
END_TEST

/* Waits (10 s at most) until member wrote its first barrier record. */
static void wait_first_barrier(const char *member)
{
	char path[512];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s/t/barriers.ndjson", tmpdir, member);
	for (int i = 0; i < 1000 && (stat(path, &st) != 0 || st.st_size == 0); i++)
		usleep(10000);
	ck_assert_msg(stat(path, &st) == 0 && st.st_size > 0, "%s wrote no barrier: %s", member,
		      member_err(member));
}

/* pid stopped (SIGSTOP) for us microseconds, then continued. */
static void stop_for(pid_t pid, useconds_t us)
{
	kill(pid, SIGSTOP);
	usleep(us);
	kill(pid, SIGCONT);
}

/* Leader a and follower b (their h.conf lines) on iterations steps that
 * each sleep secs, started; waits until who wrote its first barrier. */
static void start_nap_pair(int iterations, const char *secs, const char *conf_a, const char *conf_b,
			   const char *who, pid_t *a, pid_t *b)
{
	char g[160];
	snprintf(g, sizeof(g), "BENCHMARKS='nap'\nITERATIONS=%d\nCOMMAND_NAP='sleep %s'\n",
		 iterations, secs);
	write_file("g.conf", g, 0644);
	*a = start_member("a", "leader", conf_a);
	*b = start_member("b", "follower", conf_b);
	wait_first_barrier(who);
}

/* Leader a and follower b on 6 steps; b SIGKILLed once it wrote its first
 * barrier.  The leader's exit status. */
static int run_follower_dies(const char *leader_conf)
{
	pid_t a, b;
	/* steps long enough that b dies in one of the first */
	start_nap_pair(6, "0.2", leader_conf, "CLUSTER_TIMEOUT=2\n", "b", &a, &b);
	kill(b, SIGKILL);
	waitpid(b, NULL, 0);
	return hostd_test_wait(a);
}

/* The follower dies after its first step: its heartbeats stop and the
 * leader names it within CLUSTER_TIMEOUT (silent for CLUSTER_TIMEOUT/2),
 * not at its next barrier; its results so far stay. */
START_TEST(test_follower_dies_results_kept)
{
	char path[512];
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int sa = run_follower_dies("CLUSTER_TIMEOUT=2\n");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert_msg(sa == 2, "leader exit %d: %s", sa, member_err("a"));
	const char *err = member_err("a");
	ck_assert_msg(strstr(err, "cluster: member b silent for ") &&
			      strstr(err, "a member silent for CLUSTER_TIMEOUT/2 = 1.00 s is lost): "
					  "heartbeat-timeout sent (ON_HOST_FAILURE=abort)"),
		      "leader's stderr: %s", err);
	size_t n;
	json_object **ra = barriers("a", &n);
	ck_assert_uint_ge(n, 1);
	ck_assert_uint_lt(n, 6);
	free_ndjson(ra, n);
	snprintf(path, sizeof(path), "%s/a/t/manifest.json", tmpdir);
	json_object *m = json_object_from_file(path);
	ck_assert_ptr_nonnull(m);
	ck_assert_str_eq(json_object_get_string(field(m, "status")), "aborted");
	json_object *cl = field(m, "cluster");
	ck_assert_str_eq(json_object_get_string(field(cl, "role")), "leader");
	ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(field(cl, "members"), 1)),
			 "b");
	ck_assert_ptr_null(strstr(json_object_to_json_string(m), REDIS_PW));
	json_object_put(m);
	ck_assert_msg(t1.tv_sec - t0.tv_sec < 15, "took %ld s", (long)(t1.tv_sec - t0.tv_sec));
}
END_TEST

/* The leader is SIGKILLed mid-run: the follower names it through the
 * heartbeats it no longer gets, within CLUSTER_TIMEOUT, and aborts. */
/* Leader a and follower b (its extra h.conf lines) on steps of secs,
 * CLUSTER_TIMEOUT=3; a SIGKILLed once it wrote its first barrier.  b's
 * exit status; *took: seconds from the kill to b's end. */
static int kill_leader(const char *secs, const char *b_conf, double *took)
{
	pid_t a, b;
	char conf[128];
	struct timespec t0, t1;
	snprintf(conf, sizeof(conf), "CLUSTER_TIMEOUT=3\n%s", b_conf);
	start_nap_pair(4, secs, "CLUSTER_TIMEOUT=3\n", conf, "a", &a, &b);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	kill(a, SIGKILL);
	waitpid(a, NULL, 0);
	int sb = hostd_test_wait(b);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ck_assert_msg(sb == 2, "follower exit %d: %s", sb, member_err("b"));
	ck_assert_msg(strstr(member_err("b"), "cluster: the leader a silent for "), "follower: %s",
		      member_err("b"));
	return sb;
}

/* The leader is SIGKILLed mid-run: the follower names it through the
 * heartbeats it no longer gets, within CLUSTER_TIMEOUT, and aborts. */
START_TEST(test_leader_dies_follower_names_it)
{
	double took;
	kill_leader("1", "", &took);
	ck_assert_msg(took < 3.0, "named %.1f s after the kill, CLUSTER_TIMEOUT=3: %s", took,
		      member_err("b"));
	printf("leader SIGKILLed: the follower named it and ended %.2f s later (CLUSTER_TIMEOUT=3)\n",
	       took);
}
END_TEST

/* The same with ON_HOST_FAILURE=continue on the follower and steps of
 * 3.5 s: it names the leader mid-step, lets the step finish (its record
 * kept), and ends at the next barrier, which no leader would release. */
START_TEST(test_leader_dies_follower_finishes_step)
{
	double took;
	kill_leader("3.5", "ON_HOST_FAILURE=continue\n", &took);
	const char *err = member_err("b");
	ck_assert_msg(strstr(err, ": this step finishes, the run ends at the next "
				  "(ON_HOST_FAILURE=continue)") &&
			      strstr(err, "cluster step 2: the leader a silent for ") &&
			      strstr(err, ": the run ends here"),
		      "follower: %s", err);
	size_t n;
	json_object **rb = barriers("b", &n);
	ck_assert_uint_eq(n, 1);
	free_ndjson(rb, n);
	char path[512];
	snprintf(path, sizeof(path), "%s/b/t/samples.ndjson", tmpdir);
	const char *samples = read_text(path);
	ck_assert_msg(samples && strstr(samples, "\"step\":1"), "step 1's samples: %s",
		      samples ? samples : "(none)");
	ck_assert_msg(took > 2.0, "ended %.1f s after the kill: before its step finished", took);
}
END_TEST

/* A follower that hangs (SIGSTOP) is named by the leader through its
 * heartbeats within CLUSTER_TIMEOUT, as one that died. */
START_TEST(test_follower_hangs_named)
{
	pid_t a, b;
	start_nap_pair(6, "0.5", "CLUSTER_TIMEOUT=3\n", "CLUSTER_TIMEOUT=3\n", "a", &a, &b);
	kill(b, SIGSTOP);
	int sa = hostd_test_wait(a);
	kill(b, SIGKILL);
	waitpid(b, NULL, 0);
	ck_assert_msg(sa == 2 && strstr(member_err("a"), "cluster: member b silent for "),
		      "leader exit %d: %s", sa, member_err("a"));
}
END_TEST

/* The leader stopped for 2.5 s (CLUSTER_TIMEOUT=3: silent after 1.5 s):
 * its follower names it, rightly; the leader, once it runs again, does not
 * name the follower it simply did not hear while stopped, and ends on the
 * follower's follower-ready-abort.  (Stopped in epoll_wait, its loop reads
 * what came before its timers run, so this passes without the late-tick
 * rule too: that rule is for a loop starved while busy.) */
START_TEST(test_stopped_leader_judges_after_reading)
{
	pid_t a, b;
	start_nap_pair(6, "0.5", "CLUSTER_TIMEOUT=3\n", "CLUSTER_TIMEOUT=3\n", "a", &a, &b);
	stop_for(a, 2500000);
	int sa = hostd_test_wait(a), sb = hostd_test_wait(b);
	ck_assert_msg(sb == 2 && strstr(member_err("b"), "cluster: the leader a silent for "),
		      "follower exit %d: %s", sb, member_err("b"));
	ck_assert_msg(sa == 2 && !strstr(member_err("a"), "member b silent") &&
			      strstr(member_err("a"), "follower b said follower-ready-abort"),
		      "leader exit %d: %s", sa, member_err("a"));
}
END_TEST

/* The same, ON_HOST_FAILURE=continue: the leader leaves b out and completes. */
START_TEST(test_follower_dies_leader_continues)
{
	int sa = run_follower_dies("CLUSTER_TIMEOUT=1\nON_HOST_FAILURE=continue\n");
	ck_assert_msg(sa == 0, "leader exit %d: %s", sa, member_err("a"));
	size_t n;
	json_object **ra = barriers("a", &n);
	ck_assert_uint_eq(n, 6);
	/* the step it was left out of says so, and the last one still does */
	json_object *last = field(ra[n - 1], "cluster");
	ck_assert_msg(json_object_array_length(field(last, "dropped")) == 1 &&
			      strcmp(json_object_get_string(
					     json_object_array_get_idx(field(last, "dropped"), 0)),
				     "b") == 0,
		      "b not dropped at the last step: %s", member_err("a"));
	free_ndjson(ra, n);
}
END_TEST

/* A follower with another g.conf is refused before its first step runs. */
START_TEST(test_different_plan_refused)
{
	write_gconf("g.conf", 2, 1000);
	write_gconf("g-other.conf", 3, 1000);
	pid_t a = start_member("a", "leader", "CLUSTER_TIMEOUT=10\n");
	pid_t b = start_member_g("b", "follower", "g-other.conf", "CLUSTER_TIMEOUT=10\n");
	int sa = hostd_test_wait(a), sb = hostd_test_wait(b);
	ck_assert_msg(sa == 1, "leader exit %d: %s", sa, member_err("a"));
	ck_assert_msg(strstr(member_err("a"), "member b runs a different plan"), "leader: %s",
		      member_err("a"));
	/* the follower hears all-abort at once, not after its timeout */
	ck_assert_msg(sb == 1, "follower exit %d: %s", sb, member_err("b"));
	ck_assert_msg(strstr(member_err("b"), "the leader a sent all-abort"), "follower: %s",
		      member_err("b"));
}
END_TEST

/* A wrong password: the run ends before its first step, naming Redis and
 * the password file's key. */
/* The leader alone with extra h.conf lines and CLUSTER_REDIS at port:
 * refused before it starts (exit 1), its error naming Redis and what. */
static void expect_redis_refused(int port, const char *conf, const char *what)
{
	int real = redis_port;
	write_gconf("g.conf", 2, 1000);
	redis_port = port; /* start_member writes CLUSTER_REDIS from it */
	int sa = hostd_test_wait(start_member("a", "leader", conf));
	redis_port = real;
	ck_assert_msg(sa == 1, "leader exit %d: %s", sa, member_err("a"));
	char want[160];
	snprintf(want, sizeof(want), "cluster: Redis at 127.0.0.1:%d (CLUSTER_REDIS): %s", port, what);
	ck_assert_msg(strstr(member_err("a"), want), "want \"%s\" in: %s", want, member_err("a"));
}

START_TEST(test_wrong_password)
{
	char conf[600];
	write_file("bad.pw", "not-it\n", 0600);
	snprintf(conf, sizeof(conf), "CLUSTER_PASSWORD_FILE=%s/bad.pw\n", tmpdir);
	expect_redis_refused(redis_port, conf, "AUTH (CLUSTER_PASSWORD_FILE): ");
}
END_TEST

/* ---- a plain roadblock leader -------------------------------------------- */

/* One of roadblock's messages from the plain member: the leader "a" to all
 * on followers (or global), or the follower "b" to the leader "a". */
static void rb_send(redisContext *rc, const char *id, const char *stream, enum rb_command cmd)
{
	struct rb_msg m;
	char uuid[RB_UUID_LEN + 1], key[300];
	static const uint8_t base[16] = { 0x70, 0x6c, 0x61, 0x69, 0x6e }; /* "plain" */
	static uint64_t seq;
	bool to_leader = strcmp(stream, "leader") == 0;
	rb_uuid_format(uuid, base, ++seq);
	rb_msg_init(&m, uuid, id, time(NULL), to_leader ? RB_ROLE_FOLLOWER : RB_ROLE_LEADER,
		    to_leader ? "b" : "a", to_leader ? RB_TO_LEADER : RB_TO_ALL, "a", cmd);
	char *text = rb_msg_encode(&m);
	snprintf(key, sizeof(key), "%s__stream__%s", id, stream);
	freeReplyObject(redisCommand(rc, "XADD %s * msg %s", key, text));
	free(text);
}

/* Waits (10 s at most) on stream of id for cmd from sender. */
static bool rb_wait(redisContext *rc, const char *id, const char *stream, char *last,
		    enum rb_command cmd, const char *sender)
{
	char key[300];
	snprintf(key, sizeof(key), "%s__stream__%s", id, stream);
	for (int tries = 0; tries < 100; tries++) {
		redisReply *r = redisCommand(rc, "XREAD BLOCK 100 STREAMS %s %s", key, last);
		bool got = false;
		redisReply *entries = r && r->type == REDIS_REPLY_ARRAY ? r->element[0]->element[1]
									: NULL;
		for (size_t i = 0; entries && i < entries->elements; i++) {
			redisReply *e = entries->element[i];
			struct rb_msg m;
			char err[256];
			snprintf(last, 48, "%s", e->element[0]->str);
			if (rb_msg_decode(e->element[1]->element[1]->str,
					  e->element[1]->element[1]->len, &m, err, sizeof(err)) < 0)
				_exit(3); /* lockstep wrote what roadblock would refuse */
			got = got || (m.command == cmd && strcmp(m.sender_id, sender) == 0);
			rb_msg_clear(&m);
		}
		freeReplyObject(r);
		if (got)
			return true;
	}
	return false;
}

static redisContext *plain_connect(void)
{
	redisContext *rc = redisConnect("127.0.0.1", redis_port);
	if (!rc || rc->err)
		_exit(2);
	freeReplyObject(redisCommand(rc, "AUTH %s", REDIS_PW));
	return rc;
}

/* Roadblock's follower as roadblock runs it: online, ready at all-online,
 * gone at all-go; no user-object.  Exits 0 after steps roadblocks. */
static void plain_follower(int steps)
{
	redisContext *rc = plain_connect();
	for (int k = 1; k <= steps; k++) {
		char id[64], last[48] = "0";
		snprintf(id, sizeof(id), "t%d:step-%d", redis_port, k);
		rb_send(rc, id, "leader", RB_FOLLOWER_ONLINE);
		if (!rb_wait(rc, id, "followers", last, RB_ALL_ONLINE, "a"))
			_exit(10 + k);
		rb_send(rc, id, "leader", RB_FOLLOWER_READY);
		if (!rb_wait(rc, id, "followers", last, RB_ALL_GO, "a"))
			_exit(30 + k);
		rb_send(rc, id, "leader", RB_FOLLOWER_GONE);
	}
	redisFree(rc);
	_exit(0);
}

/* Roadblock's leader as roadblock runs it, without lockstep's additions:
 * no release instant.  Exits 0 after steps roadblocks with b. */
static void plain_leader(int steps)
{
	redisContext *rc = plain_connect();
	for (int k = 1; k <= steps; k++) {
		char id[64], last[48] = "0", ts[32];
		snprintf(id, sizeof(id), "t%d:step-%d", redis_port, k);
		snprintf(ts, sizeof(ts), "%lld", (long long)time(NULL));
		redisReply *r = redisCommand(rc, "MSETNX %s %s", id, ts);
		bool initiator = r && r->type == REDIS_REPLY_INTEGER && r->integer == 1;
		freeReplyObject(r);
		if (initiator) {
			rb_send(rc, id, "global", RB_GLOBAL_STREAM_CREATED);
			rb_send(rc, id, "followers", RB_FOLLOWERS_STREAM_CREATED);
			rb_send(rc, id, "global", RB_INITIATOR_INFO);
			freeReplyObject(redisCommand(rc, "RPUSH %s__initialized 1", id));
		}
		rb_send(rc, id, "followers", RB_LEADER_ONLINE);
		if (!rb_wait(rc, id, "leader", last, RB_FOLLOWER_ONLINE, "b"))
			_exit(10 + k);
		rb_send(rc, id, "followers", RB_ALL_ONLINE);
		if (!rb_wait(rc, id, "leader", last, RB_FOLLOWER_READY, "b"))
			_exit(30 + k);
		rb_send(rc, id, "followers", RB_ALL_READY);
		rb_send(rc, id, "followers", RB_ALL_GO);
		if (!rb_wait(rc, id, "leader", last, RB_FOLLOWER_GONE, "b"))
			_exit(50 + k);
		rb_send(rc, id, "followers", RB_ALL_GONE);
	}
	redisFree(rc);
	_exit(0);
}

/* No Redis at CLUSTER_REDIS: refused before anything starts, naming it. */
START_TEST(test_redis_unreachable)
{
	expect_redis_refused(free_port(), "", "connect: Connection refused");
}
END_TEST

/* A plain roadblock member (plain_leader or plain_follower) beside one
 * hostd member on 3 steps; the plain one must see every step through.  The
 * steps (0.8 s) are longer than a heartbeat silence (CLUSTER_TIMEOUT/2 =
 * 0.75 s): a plain member sends no heartbeats in a step and must not be
 * named for it.  The hostd's exit status. */
static int run_with_plain(void (*plain)(int), const char *member, const char *role)
{
	write_file("g.conf", "BENCHMARKS='nap'\nITERATIONS=3\nCOMMAND_NAP='sleep 0.8'\n", 0644);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		plain(3);
	int rc = hostd_test_wait(start_member(member, role, "CLUSTER_TIMEOUT=1.5\n"));
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the plain member ended with %d: %s",
		      st, member_err(member));
	return rc;
}

/* A lockstep follower of a plain roadblock leader: no instant comes, each
 * step is released at all-go. */
START_TEST(test_follows_plain_roadblock_leader)
{
	int sb = run_with_plain(plain_leader, "b", "follower");
	ck_assert_msg(sb == 0, "follower exit %d: %s", sb, member_err("b"));
	size_t n;
	json_object **rb = barriers("b", &n);
	ck_assert_uint_eq(n, 3);
	for (size_t i = 0; i < n; i++) {
		json_object *c = field(rb[i], "cluster"), *v = NULL;
		ck_assert_str_eq(json_object_get_string(field(c, "outcome")), "released");
		ck_assert_msg(!json_object_object_get_ex(c, "release_realtime_ns", &v),
			      "an instant from a leader that sent none: %s",
			      json_object_to_json_string(c));
		ck_assert_int_eq(json_object_object_length(field(c, "started_realtime_ns")), 2);
		/* roadblock's timeout counts from the roadblock's creation */
		ck_assert_msg(!joined_early(c), "step %zu joined early with a plain leader", i + 1);
	}
	free_ndjson(rb, n);
}
END_TEST

/* A follower whose own run aborts (a guest killed, ON_GUEST_FAILURE=abort)
 * says so at the next roadblock (follower-ready-abort): the leader aborts
 * at once, naming it, not after CLUSTER_TIMEOUT. */
START_TEST(test_follower_abort_reaches_leader)
{
	write_file("g.conf",
		   "BENCHMARKS='nap'\nITERATIONS=4\n"
		   "COMMAND_NAP='case $PWD in */b/t/nodes/guest-2/work) kill -KILL $PPID; "
		   "sleep 5;; esac; sleep 0.1'\n",
		   0644);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t a = start_member("a", "leader", "CLUSTER_TIMEOUT=20\n");
	pid_t b = start_member("b", "follower", "CLUSTER_TIMEOUT=20\n");
	int sa = hostd_test_wait(a), sb = hostd_test_wait(b);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert_msg(sb == 2, "follower exit %d: %s", sb, member_err("b"));
	ck_assert_msg(sa == 2, "leader exit %d: %s", sa, member_err("a"));
	ck_assert_msg(strstr(member_err("a"), "follower b said follower-ready-abort"), "leader: %s",
		      member_err("a"));
	ck_assert_msg(t1.tv_sec - t0.tv_sec < 10, "took %ld s: the leader waited for its timeout",
		      (long)(t1.tv_sec - t0.tv_sec));
}
END_TEST

/* An earlier run's roadblock under the same CLUSTER_ID (made 1000 s ago):
 * its messages must not release this run; both members refuse it. */
START_TEST(test_reused_cluster_id_refused)
{
	write_gconf("g.conf", 2, 1000);
	redisContext *rc = redisConnect("127.0.0.1", redis_port);
	ck_assert(rc && !rc->err);
	freeReplyObject(redisCommand(rc, "AUTH %s", REDIS_PW));
	freeReplyObject(
		redisCommand(rc, "SET t%d:step-1 %lld", redis_port, (long long)time(NULL) - 1000));
	redisFree(rc);
	pid_t a = start_member("a", "leader", "CLUSTER_TIMEOUT=10\n");
	pid_t b = start_member("b", "follower", "CLUSTER_TIMEOUT=10\n");
	int sa = hostd_test_wait(a), sb = hostd_test_wait(b);
	ck_assert_msg(sa == 1 && sb == 1, "exits %d and %d: %s", sa, sb, member_err("a"));
	char want[160];
	snprintf(want, sizeof(want), "CLUSTER_ID=t%d was used by an earlier run", redis_port);
	ck_assert_msg(strstr(member_err("a"), want), "leader: %s", member_err("a"));
	ck_assert_msg(strstr(member_err("b"), want), "follower: %s", member_err("b"));
}
END_TEST

/* A lockstep leader with a plain roadblock follower: it completes, and
 * the follower saw every step through. */
START_TEST(test_leads_plain_roadblock_follower)
{
	int sa = run_with_plain(plain_follower, "a", "leader");
	ck_assert_msg(sa == 0, "leader exit %d: %s", sa, member_err("a"));
	size_t n;
	json_object **ra = barriers("a", &n);
	ck_assert_uint_eq(n, 3);
	for (size_t i = 0; i < n; i++) {
		json_object *c = field(ra[i], "cluster");
		ck_assert_int_gt(json_object_get_int64(field(c, "release_realtime_ns")), 0);
		/* it told no round trip: null, and the lead rests on the leader's own */
		ck_assert_ptr_null(field(field(c, "rtt_ns"), "b"));
		ck_assert_msg(!joined_early(c), "step %zu joined early with a plain follower", i + 1);
	}
	free_ndjson(ra, n);
}
END_TEST

/* Another user's experiment under the service (--run-as) may not have the
 * service read a password file for it. */
START_TEST(test_service_refuses_password_file)
{
	write_gconf("g.conf", 1, 1000);
	int sa = hostd_test_wait(start_member_args("a", "leader", "g.conf", "", "--run-as=65534:65534"));
	ck_assert_msg(sa == 1, "exit %d: %s", sa, member_err("a"));
	char want[400];
	snprintf(want, sizeof(want),
		 "CLUSTER_PASSWORD_FILE=%s/redis.pw: under hostd --service a "
		 "file a config names would be read with the service's rights",
		 tmpdir);
	ck_assert_msg(strstr(member_err("a"), want), "want \"%s\" in: %s", want, member_err("a"));
}
END_TEST

/* Redis goes away mid-run and stays away: both members try to connect
 * again for CLUSTER_TIMEOUT, then end the run as aborted naming Redis,
 * with what ran kept. */
START_TEST(test_redis_dies_midrun)
{
	pid_t a, b;
	start_nap_pair(6, "0.2", "CLUSTER_TIMEOUT=3\n", "CLUSTER_TIMEOUT=3\n", "a", &a, &b);
	stop_redis(SIGTERM);
	int sa = hostd_test_wait(a), sb = hostd_test_wait(b);
	char want[128];
	snprintf(want, sizeof(want), "Redis at 127.0.0.1:%d lost (", redis_port);
	ck_assert_msg(sa == 2 && strstr(member_err("a"), want) &&
			      strstr(member_err("a"), "and not back within CLUSTER_TIMEOUT=3s ("),
		      "leader exit %d: %s", sa, member_err("a"));
	ck_assert_msg(sb == 2 && strstr(member_err("b"), want), "follower exit %d: %s", sb,
		      member_err("b"));
}
END_TEST

static size_t samples_once_on_leader(const char *member);

/* Redis restarted mid-run: a pair of 8 steps of 0.3 s, Redis killed at
 * the first barrier and started again (same port) after 0.5 s with
 * appendonly as given.  The members' exit statuses. */
static void run_redis_restart(const char *appendonly, int *sa, int *sb)
{
	pid_t a, b;
	stop_redis(SIGTERM);
	start_redis(appendonly);
	start_nap_pair(8, "0.3", "CLUSTER_TIMEOUT=6\n", "CLUSTER_TIMEOUT=6\n", "a", &a, &b);
	stop_redis(SIGKILL);
	usleep(500000);
	start_redis(appendonly);
	*sa = hostd_test_wait(a);
	*sb = hostd_test_wait(b);
}

/* With appendonly the streams survive: both reconnect, read on from the
 * last entries seen, and complete every step with one instant each. */
START_TEST(test_redis_restart_survived)
{
	int sa, sb;
	run_redis_restart("yes", &sa, &sb);
	json_object **ra, **rb;
	size_t na = 8, nb = 8;
	both_complete(sa, sb, 8, &ra, &rb);
	for (size_t i = 0; i < na; i++)
		ck_assert_int_eq(json_object_get_int64(
					 field(field(ra[i], "cluster"), "release_realtime_ns")),
				 json_object_get_int64(
					 field(field(rb[i], "cluster"), "release_realtime_ns")));
	free_ndjson(ra, na);
	free_ndjson(rb, nb);
	/* the heartbeats (every second here) and the end of each run are
	 * messages roadblock accepts too, the ones sent twice included */
	int n = dump_messages();
	char out[1024];
	ck_assert_msg(schema_check("messages.ndjson", out, sizeof(out)) == 0,
		      "roadblock's schema or checksum refused a message: %s", out);
	ck_assert_msg(atoi(out) == n, "checked %s of %d", out, n);
	ck_assert_msg(strstr(out, "leader-heartbeat") && strstr(out, "follower-heartbeat"),
		      "no heartbeats among the messages: %s", out);
	/* the records' connection came back too: every sample of b's folder
	 * is in a's once, sent again or not, and none was refused */
	size_t ns = samples_once_on_leader("b");
	ck_assert_uint_ge(ns, 8 * 2);
	ck_assert_msg(!strstr(member_err("a"), "no more records") &&
			      !strstr(member_err("b"), "no more records"),
		      "the records stopped: %s / %s", member_err("a"), member_err("b"));
	char path[512];
	snprintf(path, sizeof(path), "%s/a/t/manifest.json", tmpdir);
	json_object *m = json_object_from_file(path);
	ck_assert_ptr_nonnull(m);
	json_object *hb = field(field(field(m, "cluster"), "hosts"), "b");
	ck_assert_int_eq(json_object_get_int64(field(field(hb, "records"), "refused")), 0);
	ck_assert_int_eq(json_object_get_int64(field(field(hb, "records"), "barriers")), 8);
	ck_assert(json_object_get_boolean(field(hb, "ended")));
	json_object_put(m);
	printf("Redis restarted: %zu samples of b on the leader, each once\n", ns);
}
END_TEST

/* Redis stopped (SIGSTOP) for 3.5 s mid-run: no connection closes, the
 * reads and commands just go unanswered.  The records' connection sees it
 * (its read or its oldest entry unanswered over 2 s), is made again, and
 * when Redis runs again what it had buffered of the old connection and
 * what was sent again may both land: the leader keeps each record once. */
START_TEST(test_redis_stopped_records_once)
{
	pid_t a, b;
	start_nap_pair(4, "0.3", "CLUSTER_TIMEOUT=12\n", "CLUSTER_TIMEOUT=12\n", "a", &a, &b);
	stop_for(redis_pid, 3500000);
	int sa = hostd_test_wait(a), sb = hostd_test_wait(b);
	json_object **ra, **rb;
	both_complete(sa, sb, 4, &ra, &rb);
	/* the stall's round trip does not slow the steps after it by seconds */
	for (size_t i = 0; i < 4; i++) {
		int64_t lead = json_object_get_int64(field(field(ra[i], "cluster"), "lead_ns"));
		ck_assert_msg(lead <= 2 * CLUSTER_RTT_MAX_NS + CLUSTER_MARGIN_NS + CLUSTER_FIRST_LEAD_NS,
			      "step %zu: a lead of %lld ns after Redis stalled", i + 1,
			      (long long)lead);
	}
	free_ndjson(ra, 4);
	free_ndjson(rb, 4);
	size_t ns = samples_once_on_leader("b");
	ck_assert_uint_ge(ns, 4 * 2);
	ck_assert_msg(!strstr(member_err("a"), "no more records") &&
			      !strstr(member_err("b"), "no more records"),
		      "the records stopped: %s / %s", member_err("a"), member_err("b"));
	/* entries Redis took in b's stream against the seq of its last: more
	 * means some went twice and the leader dropped the second */
	redisContext *rc = redisConnect("127.0.0.1", redis_port);
	ck_assert(rc && !rc->err);
	freeReplyObject(redisCommand(rc, "AUTH %s", REDIS_PW));
	char key[64];
	snprintf(key, sizeof(key), "t%d__records__b", redis_port);
	redisReply *info = redisCommand(rc, "XINFO STREAM %s", key),
		   *last = redisCommand(rc, "XREVRANGE %s + - COUNT 1", key);
	long long added = -1, seq = -1;
	for (size_t i = 0; info->type == REDIS_REPLY_ARRAY && i + 1 < info->elements; i += 2)
		if (strcmp(info->element[i]->str, "entries-added") == 0)
			added = info->element[i + 1]->integer;
	ck_assert_msg(last->type == REDIS_REPLY_ARRAY && last->elements == 1, "%s is empty", key);
	redisReply *f = last->element[0]->element[1];
	for (size_t i = 0; i + 1 < f->elements; i += 2)
		if (strcmp(f->element[i]->str, "seq") == 0)
			seq = atoll(f->element[i + 1]->str);
	freeReplyObject(info);
	freeReplyObject(last);
	redisFree(rc);
	ck_assert_msg(seq > 0 && added >= seq, "%s: %lld entries added, the last seq %lld", key,
		      added, seq);
	printf("Redis stopped 3.5 s: %zu samples of b on the leader, each once; %lld entries "
	       "added for %lld records entries\n",
	       ns, added, seq);
}
END_TEST

/* Without persistence the barriers' keys are gone: the run ends aborted
 * naming Redis and its address, not at a later timeout. */
START_TEST(test_redis_restart_without_data)
{
	int sa, sb;
	run_redis_restart("no", &sa, &sb);
	char want[128];
	snprintf(want, sizeof(want),
		 "cluster: Redis at 127.0.0.1:%d came back without the run's data", redis_port);
	ck_assert_msg(sa == 2 && strstr(member_err("a"), want), "leader exit %d: %s", sa,
		      member_err("a"));
	ck_assert_msg(sb == 2 && strstr(member_err("b"), want), "follower exit %d: %s", sb,
		      member_err("b"));
}
END_TEST

/* hostd --check prints the keys and PINGs Redis. */
START_TEST(test_check_prints_keys)
{
	write_gconf("g.conf", 1, 1000);
	int sa = hostd_test_wait(start_member_check("a"));
	ck_assert_msg(sa == 0, "--check exit %d: %s", sa, member_err("a"));
	const char *out = member_err("a");
	char want[128];
	snprintf(want, sizeof(want), "  CLUSTER_REDIS=127.0.0.1:%d\n", redis_port);
	ck_assert_msg(strstr(out, want), "no %s in: %s", want, out);
	ck_assert_msg(strstr(out, "  CLUSTER_MEMBERS=a (leader) b\n  CLUSTER_TIMEOUT=60s\n  "
				  "ON_HOST_FAILURE=abort\n"),
		      "%s", out);
	snprintf(want, sizeof(want), "  Redis 127.0.0.1:%d (CLUSTER_REDIS): reachable\n", redis_port);
	ck_assert_msg(strstr(out, want), "no %s in: %s", want, out);
	ck_assert_msg(strstr(out, "check passed"), "%s", out);
}
END_TEST

/* ---- every host's records on the leader ---------------------------------- */

/* tmpdir/<member>/t/<file>'s lines, each as its own string (to free). */
static char **member_lines(const char *member, const char *file, size_t *n)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s/t/%s", tmpdir, member, file);
	const char *t = read_text(path);
	ck_assert_msg(t, "no %s: %s", path, member_err(member));
	char *text = strdup(t), **v = calloc(4096, sizeof(*v)), *save = NULL;
	*n = 0;
	for (char *l = strtok_r(text, "\n", &save); l && *n < 4096; l = strtok_r(NULL, "\n", &save))
		v[(*n)++] = strdup(l);
	free(text);
	return v;
}

static void free_lines(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Every sample of member's own folder in the leader's (a's) exactly once. */
static size_t samples_once_on_leader(const char *member)
{
	char lead[512], own[512];
	snprintf(lead, sizeof(lead), "%s/a/t", tmpdir);
	snprintf(own, sizeof(own), "%s/%s/t", tmpdir, member);
	return cluster_samples_once(lead, own, member);
}

/* How many times needle occurs in hay. */
static int occurrences(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* The skew across hosts and its bound, recomputed from a leader's barrier
 * record: every host's starts, the bounds of the two ends and (between
 * hosts) both hosts' maxerror. */
static void across_expected(json_object *rec, int64_t *skew, int64_t *bound)
{
	json_object *cl = field(rec, "cluster");
	int64_t lo = INT64_MAX, hi = INT64_MIN, blo = 0, bhi = 0, elo = 0, ehi = 0;
	const char *hlo = "", *hhi = "";
	json_object *hosts = json_object_new_object();
	json_object_object_add(hosts, "a", json_object_get(cl));
	json_object_object_foreach(field(cl, "members"), mk, mv)
	{
		json_object_object_add(hosts, mk, json_object_get(mv));
	}
	json_object_object_foreach(hosts, h, s)
	{
		bool own = strcmp(h, "a") == 0;
		int64_t err = json_object_get_int64(field(field(s, "host_clock"), "maxerror_us")) * 1000;
		json_object_object_foreach(field(s, "started_realtime_ns"), node, t)
		{
			int64_t at = json_object_get_int64(t), b;
			b = own ? json_object_get_int64(
					  field(field(field(rec, "clock_offsets"), node), "bound_ns"))
				: json_object_get_int64(field(field(s, "bound_ns"), node));
			if (at < lo) {
				lo = at, blo = b, elo = err;
				hlo = h;
			}
			if (at > hi) {
				hi = at, bhi = b, ehi = err;
				hhi = h;
			}
		}
	}
	*skew = hi - lo;
	*bound = blo + bhi + (strcmp(hlo, hhi) ? elo + ehi : 0);
	json_object_put(hosts);
}

/* A leader's barrier record: its skew across nhosts hosts as its facts
 * say, nobody missing. */
static void assert_across(json_object *rec, int nhosts, int64_t *skew, int64_t *bound)
{
	json_object *x = field(field(rec, "cluster"), "across_hosts");
	across_expected(rec, skew, bound);
	ck_assert_int_eq(json_object_get_int64(field(x, "skew_ns")), *skew);
	ck_assert_int_eq(json_object_get_int64(field(x, "skew_bound_ns")), *bound);
	ck_assert_int_eq(json_object_array_length(field(x, "hosts")), nhosts);
	ck_assert_int_eq(json_object_array_length(field(x, "missing")), 0);
}

/* Leader a and follower b, 3 steps: the leader's folder holds b's samples
 * as b wrote them (nodes "b/<node>"), b's nodes among its participants,
 * and each barrier the skew across both hosts with its bound; b's clock
 * (LOCKSTEP_TEST_ADJTIMEX) is unsynchronised, a's is not: warned once,
 * naming b, on each side. */
START_TEST(test_records_on_leader)
{
	write_gconf("g.conf", 3, 2000);
	setenv("LOCKSTEP_TEST_ADJTIMEX", "800,100,0", 1);
	pid_t a = start_member("a", "leader", "CLUSTER_TIMEOUT=20\n");
	setenv("LOCKSTEP_TEST_ADJTIMEX", "16000000,16000000,1", 1);
	pid_t b = start_member("b", "follower", "CLUSTER_TIMEOUT=20\n");
	unsetenv("LOCKSTEP_TEST_ADJTIMEX");
	int sa = hostd_test_wait(a), sb = hostd_test_wait(b);
	ck_assert_msg(sa == 0, "leader exit %d: %s", sa, member_err("a"));
	ck_assert_msg(sb == 0, "follower exit %d: %s", sb, member_err("b"));

	/* every sample of b's own folder, on the leader with its node renamed */
	size_t nb = samples_once_on_leader("b");
	ck_assert_uint_ge(nb, 3 * 2 * 2);

	/* its nodes and its part in the leader's manifest */
	char path[512];
	snprintf(path, sizeof(path), "%s/a/t/manifest.json", tmpdir);
	json_object *m = json_object_from_file(path);
	ck_assert_ptr_nonnull(m);
	json_object *parts = field(m, "participants");
	int theirs_parts = 0;
	for (size_t i = 0; i < json_object_array_length(parts); i++) {
		json_object *p = json_object_array_get_idx(parts, i), *v;
		if (json_object_object_get_ex(p, "member", &v)) {
			ck_assert_str_eq(json_object_get_string(v), "b");
			ck_assert(strncmp(json_object_get_string(field(p, "node")), "b/guest-", 8) == 0);
			theirs_parts++;
		}
	}
	ck_assert_int_eq(theirs_parts, 2);
	json_object *hb = field(field(field(m, "cluster"), "hosts"), "b");
	ck_assert_str_eq(json_object_get_string(field(hb, "status")), "complete");
	ck_assert_int_eq(json_object_get_int64(field(field(hb, "records"), "samples")), (int64_t)nb);
	ck_assert_int_eq(json_object_get_int64(field(field(hb, "records"), "barriers")), 3);
	ck_assert_int_eq(json_object_get_int64(field(field(hb, "records"), "refused")), 0);
	ck_assert(json_object_get_boolean(field(hb, "ended")));
	ck_assert(json_object_get_boolean(field(hb, "clock_unsynchronised")));
	json_object *xm = field(field(m, "cluster"), "across_hosts");
	ck_assert_int_eq(json_object_get_int64(field(xm, "steps")), 3);

	/* each barrier: the skew across hosts and its bound, from both hosts' facts */
	size_t n;
	json_object **ra = barriers("a", &n);
	ck_assert_uint_eq(n, 3);
	int64_t max_skew = 0, max_bound = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t skew, bound;
		assert_across(ra[i], 2, &skew, &bound);
		json_object *st = field(field(field(field(ra[i], "cluster"), "members"), "b"),
					"started_realtime_ns");
		ck_assert_int_eq(json_object_object_length(st), 2);
		ck_assert_ptr_nonnull(field(st, "b/guest-1"));
		max_skew = skew > max_skew ? skew : max_skew;
		max_bound = bound > max_bound ? bound : max_bound;
	}
	ck_assert_int_eq(json_object_get_int64(field(xm, "skew_max_ns")), max_skew);
	ck_assert_int_eq(json_object_get_int64(field(xm, "skew_bound_max_ns")), max_bound);
	free_ndjson(ra, n);
	json_object_put(m);
	printf("records on the leader: %zu samples of b, skew across hosts at most %lld us "
	       "(bound %lld us with b unsynchronised)\n",
	       nb, (long long)(max_skew / 1000), (long long)(max_bound / 1000));

	/* unsynchronised: warned once on each side, naming b; a's clock is fine */
	ck_assert_int_eq(occurrences(member_err("a"), "member b's clock is not synchronised"), 1);
	ck_assert_int_eq(occurrences(member_err("b"), "this host's (member b) clock is not "
						      "synchronised"),
			 1);
	ck_assert_int_eq(occurrences(member_err("a"), "this host's (member a) clock"), 0);

	/* hostctl reads the leader's folder as any run */
	char cmd[1200], out[8192];
	snprintf(cmd, sizeof(cmd), "%s/hostctl/hostctl compare %s/a/t %s/a/t 2>&1",
		 getenv("LOCKSTEP_BUILD_ROOT"), tmpdir, tmpdir);
	FILE *pf = popen(cmd, "r");
	size_t len = fread(out, 1, sizeof(out) - 1, pf);
	out[len] = 0;
	ck_assert_msg(pclose(pf) == 0, "%s: %.2000s", cmd, out);
	ck_assert_msg(strstr(out, "b/guest-1") && strstr(out, "b/guest-2"), "%.2000s", out);
	ck_assert_msg(strstr(out, "across hosts"), "%.2000s", out);
	ck_assert_msg(strstr(out, "cluster of hosts a (leader), b:"), "%.2000s", out);
	snprintf(cmd, sizeof(cmd), "%s/hostctl/hostctl report -o %s/report %s/a/t 2>&1",
		 getenv("LOCKSTEP_BUILD_ROOT"), tmpdir, tmpdir);
	pf = popen(cmd, "r");
	len = fread(out, 1, sizeof(out) - 1, pf);
	out[len] = 0;
	ck_assert_msg(pclose(pf) == 0, "%s: %.2000s", cmd, out);
	snprintf(path, sizeof(path), "%s/report/index.html", tmpdir);
	const char *html = read_text(path);
	ck_assert_msg(html && strstr(html, "b/guest-2") && strstr(html, "across hosts"),
		      "%s lacks b's guests or the skew across hosts", path);
}
END_TEST

/* One entry of b's records stream, as a hostile b would write it. */
static void hostile_entry(redisContext *rc, const char *member, const char *seq, const char *kind,
			  const char *data, size_t len)
{
	char key[128];
	snprintf(key, sizeof(key), "t%d__records__b", redis_port);
	const char *argv[] = { "XADD", key,    "*",  "member", member, "seq",
			       seq,    "kind", kind, "data",   data };
	size_t lens[11];
	for (int i = 0; i < 10; i++)
		lens[i] = strlen(argv[i]);
	lens[10] = len;
	redisReply *r = redisCommandArgv(rc, 11, argv, lens);
	ck_assert_msg(r && r->type == REDIS_REPLY_STRING, "XADD %s", key);
	freeReplyObject(r);
}

/* A follower's records that lie: each refused and named, the good ones
 * kept.  b is a plain roadblock follower (for the barrier) whose records
 * stream the test writes. */
START_TEST(test_hostile_records_refused)
{
	redisContext *rc = plain_connect();
	const char *facts = "{\"participants\":[{\"node\":\"guest-1\",\"kind\":\"local\"}],"
			    "\"status\":\"running\"}";
	hostile_entry(rc, "b", "1", "facts", facts, strlen(facts));
	const char *lines =
		/* good */
		"{\"node\":\"guest-1\",\"benchmark\":\"cpu-probe\",\"iteration\":1,\"step\":1,"
		"\"metric\":\"ops_per_sec\",\"value\":42.5,\"unit\":\"ops/s\",\"better\":\"higher\"}\n"
		/* a path */
		"{\"node\":\"../x\",\"benchmark\":\"cpu-probe\",\"iteration\":1,\"step\":1,"
		"\"metric\":\"ops_per_sec\",\"value\":1,\"unit\":\"ops/s\",\"better\":\"higher\"}\n"
		/* the leader's node */
		"{\"node\":\"a/guest-1\",\"benchmark\":\"cpu-probe\",\"iteration\":1,\"step\":1,"
		"\"metric\":\"ops_per_sec\",\"value\":1,\"unit\":\"ops/s\",\"better\":\"higher\"}\n"
		/* a node it never declared */
		"{\"node\":\"guest-9\",\"benchmark\":\"cpu-probe\",\"iteration\":1,\"step\":1,"
		"\"metric\":\"ops_per_sec\",\"value\":1,\"unit\":\"ops/s\",\"better\":\"higher\"}\n"
		/* another unit for the same metric: hostctl would refuse the folder */
		"{\"node\":\"guest-1\",\"benchmark\":\"cpu-probe\",\"iteration\":2,\"step\":2,"
		"\"metric\":\"ops_per_sec\",\"value\":1,\"unit\":\"furlongs\",\"better\":\"higher\"}\n"
		/* a terminal escape */
		"{\"node\":\"guest-1\",\"benchmark\":\"cpu-probe\",\"iteration\":1,\"step\":1,"
		"\"failed\":true,\"reason\":\"\\u001b[2J\"}\n"
		/* not JSON */
		"{\"node\":\n";
	hostile_entry(rc, "b", "2", "samples", lines, strlen(lines));
	/* written as b, claiming to be c */
	hostile_entry(rc, "c", "3", "samples", lines, strlen(lines));
	/* too big */
	size_t big = 300 << 10;
	char *huge = malloc(big);
	memset(huge, ' ', big);
	hostile_entry(rc, "b", "3", "samples", huge, big);
	free(huge);
	const char *bar = "{\"step\":1,\"cluster\":{\"started_realtime_ns\":{\"guest-1\":-5}}}\n";
	hostile_entry(rc, "b", "4", "barriers", bar, strlen(bar));
	hostile_entry(rc, "b", "5", "end", facts, strlen(facts));
	redisFree(rc);

	int sa = run_with_plain(plain_follower, "a", "leader");
	ck_assert_msg(sa == 0, "leader exit %d: %s", sa, member_err("a"));
	const char *err = member_err("a");
	char want[200];
	const char *named[] = {
		"node \"../x\" is not a node name",
		"node \"a/guest-1\" is not a node name",
		"node \"guest-9\" is not one of the member's own nodes",
		"cpu-probe ops_per_sec in \"furlongs\", better higher, but earlier lines say "
		"\"ops/s\"",
		"samples line 6: a string holds a control character",
		"samples line 7: not one JSON object",
		"it says member \"c\", in another member's stream",
		"samples of 307200 bytes, more than 262144",
		"cluster.started_realtime_ns of node \"guest-1\" is not a non-negative integer",
	};
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		snprintf(want, sizeof(want), "cluster: a record of member b refused: ");
		ck_assert_msg(strstr(err, named[i]) && strstr(err, want), "want \"%s\" in: %s",
			      named[i], err);
	}
	/* what was refused is nowhere; the good sample is there once */
	size_t n;
	char **la = member_lines("a", "samples.ndjson", &n);
	int good = 0;
	for (size_t i = 0; i < n; i++) {
		ck_assert_msg(!strstr(la[i], "..\\/x") && !strstr(la[i], "a\\/guest") &&
				      !strstr(la[i], "guest-9") && !strstr(la[i], "furlongs") &&
				      !strstr(la[i], "\\u001b"),
			      "refused, yet written: %s", la[i]);
		good += strstr(la[i], "\"node\":\"b\\/guest-1\"") && strstr(la[i], "42.5");
	}
	ck_assert_int_eq(good, 1);
	free_lines(la, n);
	char path[512];
	snprintf(path, sizeof(path), "%s/a/t/manifest.json", tmpdir);
	json_object *m = json_object_from_file(path);
	json_object *hb = field(field(field(m, "cluster"), "hosts"), "b");
	ck_assert_int_eq(json_object_get_int64(field(field(hb, "records"), "refused")), 9);
	ck_assert_int_eq(json_object_get_int64(field(field(hb, "records"), "samples")), 1);
	ck_assert_int_eq(json_object_array_length(field(hb, "refusals")), 9);
	json_object_put(m);
}
END_TEST

/* b is SIGKILLed once it wrote its second barrier record: what it sent
 * (its nodes, step 1's samples and barrier) stays in the leader's folder,
 * which names it as never ended. */
START_TEST(test_records_kept_follower_lost)
{
	char path[512];
	write_file("g.conf", "BENCHMARKS='nap'\nITERATIONS=6\nCOMMAND_NAP='sleep 0.3'\n", 0644);
	pid_t a = start_member("a", "leader", "CLUSTER_TIMEOUT=2\n");
	pid_t b = start_member("b", "follower", "CLUSTER_TIMEOUT=2\n");
	snprintf(path, sizeof(path), "%s/b/t/barriers.ndjson", tmpdir);
	const char *t = NULL;
	for (int i = 0; i < 1000 && !((t = read_text(path)) && occurrences(t, "\n") >= 2); i++)
		usleep(10000);
	ck_assert_msg(t && occurrences(t, "\n") >= 2, "b wrote no second barrier: %s", member_err("b"));
	kill(b, SIGKILL);
	waitpid(b, NULL, 0);
	int sa = hostd_test_wait(a);
	ck_assert_msg(sa == 2, "leader exit %d: %s", sa, member_err("a"));
	ck_assert_msg(strstr(member_err("a"), "member b sent no end of its records within "
					      "CLUSTER_TIMEOUT=2s"),
		      "%s", member_err("a"));
	size_t n;
	char **la = member_lines("a", "samples.ndjson", &n);
	int step1 = 0;
	for (size_t i = 0; i < n; i++)
		step1 += strstr(la[i], "\"node\":\"b\\/guest-") && strstr(la[i], "\"step\":1,");
	ck_assert_int_ge(step1, 2); /* each guest's elapsed of step 1 */
	free_lines(la, n);
	snprintf(path, sizeof(path), "%s/a/t/manifest.json", tmpdir);
	json_object *m = json_object_from_file(path);
	json_object *hb = field(field(field(m, "cluster"), "hosts"), "b");
	ck_assert(!json_object_get_boolean(field(hb, "ended")));
	ck_assert_int_ge(json_object_get_int64(field(field(hb, "records"), "barriers")), 1);
	ck_assert_ptr_nonnull(participant(m, "b/guest-2"));
	json_object_put(m);
	json_object **ra = barriers("a", &n);
	ck_assert_uint_ge(n, 1);
	ck_assert_ptr_nonnull(field(field(field(ra[0], "cluster"), "members"), "b"));
	free_ndjson(ra, n);
}
END_TEST

/* Three members of 4 local guests each: every sample of b and c on the
 * leader, and each step's skew across the 12 guests. */
START_TEST(test_records_three_members)
{
	const char *conf = "CLUSTER_TIMEOUT=20\nGUEST_COUNT=4\nCLUSTER_MEMBERS=\"a b c\"\n";
	write_gconf("g.conf", 3, 2000);
	pid_t a = start_member("a", "leader", conf);
	pid_t b = start_member("b", "follower", conf);
	pid_t c = start_member("c", "follower", conf);
	int sa = hostd_test_wait(a), sb = hostd_test_wait(b), sc = hostd_test_wait(c);
	ck_assert_msg(sa == 0 && sb == 0 && sc == 0, "exits %d %d %d: %s", sa, sb, sc, member_err("a"));
	size_t na, nb, nc;
	char **la = member_lines("a", "samples.ndjson", &na);
	char **lb = member_lines("b", "samples.ndjson", &nb);
	char **lc = member_lines("c", "samples.ndjson", &nc);
	size_t in_b = 0, in_c = 0;
	for (size_t i = 0; i < na; i++) {
		in_b += strstr(la[i], "\"node\":\"b\\/guest-") != NULL;
		in_c += strstr(la[i], "\"node\":\"c\\/guest-") != NULL;
	}
	ck_assert_uint_ge(nb, 3 * 4 * 2);
	ck_assert_uint_eq(in_b, nb);
	ck_assert_uint_eq(in_c, nc);
	free_lines(la, na);
	free_lines(lb, nb);
	free_lines(lc, nc);
	size_t n;
	json_object **ra = barriers("a", &n);
	ck_assert_uint_eq(n, 3);
	int64_t max_skew = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t skew, bound;
		assert_across(ra[i], 3, &skew, &bound);
		max_skew = skew > max_skew ? skew : max_skew;
	}
	free_ndjson(ra, n);
	printf("3 hostds x 4 local guests: every sample of b and c on the leader; start skew "
	       "across the 12 guests at most %lld us\n",
	       (long long)(max_skew / 1000));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hostd-cluster");
	TCase *tc = tcase_create("cluster");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_two_hosts_one_instant);
	tcase_add_test(tc, test_follower_never_comes);
	tcase_add_test(tc, test_follower_dies_results_kept);
	tcase_add_test(tc, test_follower_dies_leader_continues);
	tcase_add_test(tc, test_leader_dies_follower_names_it);
	tcase_add_test(tc, test_leader_dies_follower_finishes_step);
	tcase_add_test(tc, test_follower_hangs_named);
	tcase_add_test(tc, test_stopped_leader_judges_after_reading);
	tcase_add_test(tc, test_different_plan_refused);
	tcase_add_test(tc, test_wrong_password);
	tcase_add_test(tc, test_redis_unreachable);
	tcase_add_test(tc, test_follows_plain_roadblock_leader);
	tcase_add_test(tc, test_leads_plain_roadblock_follower);
	tcase_add_test(tc, test_check_prints_keys);
	tcase_add_test(tc, test_service_refuses_password_file);
	tcase_add_test(tc, test_redis_dies_midrun);
	tcase_add_test(tc, test_redis_restart_survived);
	tcase_add_test(tc, test_redis_restart_without_data);
	tcase_add_test(tc, test_reused_cluster_id_refused);
	tcase_add_test(tc, test_follower_abort_reaches_leader);
	suite_add_tcase(s, tc);
	/* Redis stopped, not closed: the records kept once (CK_RUN_CASE=stopped) */
	TCase *stopped = tcase_create("stopped");
	tcase_add_checked_fixture(stopped, setup, teardown);
	tcase_set_timeout(stopped, 60);
	tcase_add_test(stopped, test_redis_stopped_records_once);
	suite_add_tcase(s, stopped);
	/* every host's records on the leader (CK_RUN_CASE=records alone) */
	TCase *rec = tcase_create("records");
	tcase_add_checked_fixture(rec, setup, teardown);
	tcase_set_timeout(rec, 60);
	tcase_add_test(rec, test_records_on_leader);
	tcase_add_test(rec, test_hostile_records_refused);
	tcase_add_test(rec, test_records_kept_follower_lost);
	tcase_add_test(rec, test_records_three_members);
	suite_add_tcase(s, rec);
	return testlib_main(s);
}
