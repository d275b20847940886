// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostd --service's boundary (issue 14) with three users of the user
 * database (lst-alice, lst-bob, lst-carol: made with useradd if missing,
 * each in a group of their own and in users, the tests' SERVICE_GROUP):
 * what an experiment runs on the host runs as its submitter, without
 * capabilities, and cannot read the service's state or another user's
 * results; a config names no file of another user's; a run folder swapped
 * or a link planted in it is not written through; SERVICE_HOST_STEPS and
 * RUN_TIMEOUT.  Runs as root.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "service_testlib.h"
#include "testlib.h"

#define ALICE "lst-alice"
#define BOB "lst-bob"
#define CAROL "lst-carol"

static uid_t alice, bob, carol;
static gid_t alice_g, bob_g, carol_g;

static void setup(void)
{
	service_test_setup();
	service_test_user(ALICE, &alice, &alice_g);
	service_test_user(BOB, &bob, &bob_g);
	service_test_user(CAROL, &carol, &carol_g);
}

/* tmpdir/rel, made as a folder of uid's with mode; the path lives until the
 * case ends (a case makes fewer than 16). */
static const char *user_dir(const char *rel, uid_t uid, gid_t gid, mode_t mode)
{
	static char path[16][600];
	static int k;
	char *p = path[k++ % 16];
	snprintf(p, sizeof(path[0]), "%s/%s", tmpdir, rel);
	ck_assert_int_eq(mkdir(p, mode), 0);
	ck_assert_int_eq(chown(p, uid, gid), 0);
	ck_assert_int_eq(chmod(p, mode), 0);
	return p;
}

/* tmpdir/rel with text, uid's and private. */
static void user_file(const char *rel, const char *text, uid_t uid, gid_t gid)
{
	char path[600];
	write_file(rel, text, 0600);
	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	ck_assert_int_eq(chown(path, uid, gid), 0);
}

/* hostctl submit as user of tmpdir/h and tmpdir/g; its exit status. */
static int try_submit_as(const char *user, const char *h, const char *g, const char *results,
			 const char *run)
{
	char hp[600], gp[600];
	snprintf(hp, sizeof(hp), "%s/%s", tmpdir, h);
	snprintf(gp, sizeof(gp), "%s/%s", tmpdir, g);
	const char *args[12] = { "submit", "--host-config", hp, "--guest-config", gp };
	size_t n = 5;
	if (run) {
		args[n++] = "--run-name";
		args[n++] = run;
	}
	if (results) {
		args[n++] = "--results";
		args[n++] = results;
	}
	args[n] = NULL;
	return hostctl_user(user, args);
}

/* tmpdir/dir (uid's, 0700) with h.conf and g.conf of theirs. */
static void user_configs(const char *dir, uid_t uid, gid_t gid, const char *h, const char *g)
{
	char rel[256];
	user_dir(dir, uid, gid, 0700);
	snprintf(rel, sizeof(rel), "%s/h.conf", dir);
	user_file(rel, h, uid, gid);
	snprintf(rel, sizeof(rel), "%s/g.conf", dir);
	user_file(rel, g, uid, gid);
}

static long submit_as(const char *user, const char *h, const char *g, const char *results,
		      const char *run)
{
	int r = try_submit_as(user, h, g, results, run);
	ck_assert_msg(r == 0, "submit as %s: %d: %s", user, r, hostctl_err());
	return strtol(out, NULL, 10);
}

static int wait_as(const char *user, long id)
{
	char s[32];
	snprintf(s, sizeof(s), "%ld", id);
	return hostctl_user(user, (const char *const[]){ "wait", s, NULL });
}

static const char *logs_of(long id)
{
	char s[32];
	snprintf(s, sizeof(s), "%ld", id);
	ck_assert_int_eq(HOSTCTL("logs", s), 0);
	return out;
}

static void assert_owned(uid_t uid, mode_t mode, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The file fmt names is uid's, with mode. */
static void assert_owned(uid_t uid, mode_t mode, const char *fmt, ...)
{
	char path[800];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	struct stat st;
	ck_assert_msg(lstat(path, &st) == 0, "%s: %s", path, strerror(errno));
	ck_assert_msg(st.st_uid == uid, "%s: uid %u, not %u", path, st.st_uid, uid);
	ck_assert_msg((st.st_mode & 07777) == mode, "%s: mode %o, not %o", path, st.st_mode & 07777,
		      mode);
}

START_TEST(test_command_runs_as_submitter)
{
	pid_t svc = start_service("users");
	char state[600], text[4096], path[700];
	snprintf(state, sizeof(state), "%s/state", tmpdir);
	const char *h1 = "GUEST_KIND=local\nGUEST_COUNT=1\nBARRIER_TIMEOUT=60\n";

	/* bob's run, in a folder of his; carol's in RESULTS_ROOT */
	const char *res_bob = user_dir("res-bob", bob, bob_g, 0700);
	user_configs("conf-bob", bob, bob_g, h1,
		     "# bob-secret\nMMTESTS=cpu-probe\n"
		     "MMTEST_ITERATIONS=1\nCPU_PROBE_UNITS=1000\n");
	long b = submit_as(BOB, "conf-bob/h.conf", "conf-bob/g.conf", res_bob, "b");
	ck_assert_int_eq(wait_as(BOB, b), 0);
	user_configs("conf-carol", carol, carol_g, h1,
		     "MMTESTS=cpu-probe\nMMTEST_ITERATIONS=1\n"
		     "CPU_PROBE_UNITS=1000\n");
	long c = submit_as(CAROL, "conf-carol/h.conf", "conf-carol/g.conf", NULL, "c");
	ck_assert_int_eq(wait_as(CAROL, c), 0);

	/* results are their submitters', 0750/0640, also in RESULTS_ROOT */
	assert_owned(bob, 0750, "%s/b", res_bob);
	assert_owned(bob, 0640, "%s/b/manifest.json", res_bob);
	assert_owned(carol, 0750, "%s/results/c", tmpdir);
	assert_owned(carol, 0640, "%s/results/c/samples.ndjson", tmpdir);

	/* alice's command step: who it is, what it holds, what it can read */
	const char *res_alice = user_dir("res-alice", alice, alice_g, 0700);
	snprintf(text, sizeof(text),
		 "MMTESTS=probe\nMMTEST_ITERATIONS=1\n"
		 "COMMAND_PROBE='id; grep -E \"^(CapInh|CapPrm|CapEff|CapAmb|NoNewPrivs)\" "
		 "/proc/self/status; ls %s 2>&1; cat %s/service/exp/%ld/g.conf 2>&1; "
		 "cat %s/b/manifest.json 2>&1; cat %s/results/c/manifest.json 2>&1; "
		 "echo probe-end; sleep 2'\n",
		 state, state, b, res_bob, tmpdir);
	/* and top on the host, an external monitor: it lists itself */
	user_configs("conf-alice", alice, alice_g,
		     "GUEST_KIND=local\nGUEST_COUNT=1\nMONITORS=top\nMONITOR_UPDATE_FREQUENCY=1\n",
		     text);
	long a = submit_as(ALICE, "conf-alice/h.conf", "conf-alice/g.conf", res_alice, "a");
	ck_assert_int_eq(wait_as(ALICE, a), 0);
	stop_service(svc);

	snprintf(path, sizeof(path), "%s/a/nodes/guest-1/step-1.out", res_alice);
	const char *got = read_text(path);
	ck_assert_msg(got, "no %s: %s", path, logs_of(a));
	char want[256];
	snprintf(want, sizeof(want), "uid=%u(%s) gid=%u(%s)", alice, ALICE, alice_g, ALICE);
	ck_assert_msg(strstr(got, want), "no '%s' in %s", want, got);
	ck_assert_msg(strstr(got, "(users)"), "the supplementary group users is missing: %s", got);
	ck_assert_msg(strstr(got, "CapPrm:\t0000000000000000"), "%s", got);
	ck_assert_msg(strstr(got, "CapEff:\t0000000000000000"), "%s", got);
	ck_assert_msg(strstr(got, "CapAmb:\t0000000000000000"), "%s", got);
	ck_assert_msg(strstr(got, "NoNewPrivs:\t1"), "%s", got);
	ck_assert_msg(strstr(got, "probe-end"), "the probe did not finish: %s", got);
	/* ls, the queue's g.conf, bob's and carol's manifests: all refused */
	int denied = 0;
	for (const char *p = got; (p = strstr(p, "Permission denied")); p++)
		denied++;
	ck_assert_msg(denied == 4, "%d refusals, not 4: %s", denied, got);
	ck_assert_msg(!strstr(got, "bob-secret") && !strstr(got, "\"status\""), "%s", got);
	/* top ran as alice: its own line (top cuts user names to 8
	 * characters) */
	snprintf(path, sizeof(path), "%s/a/nodes/host/monitors/top-step-1.log", res_alice);
	got = read_text(path);
	ck_assert_msg(got, "no %s", path);
	int tops = 0;
	for (const char *l = got; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
		size_t n = strcspn(l, "\n");
		if (n > 4 && !strncmp(l + n - 4, " top", 4)) {
			ck_assert_msg(strstr(l, "lst-ali+") && strstr(l, "lst-ali+") < l + n,
				      "top's own line: %.*s", (int)n, l);
			tops++;
		}
	}
	ck_assert_msg(tops > 0, "top did not list itself: %s", got);
	/* the work folder was alice's, the rest hers at the end */
	assert_owned(alice, 0750, "%s/a/nodes/guest-1/work", res_alice);
	assert_owned(alice, 0640, "%s/a/nodes/guest-1/agent.log", res_alice);
}
END_TEST

/* Carol names bob's file as key (with more lines of h.conf): hostctl,
 * reading it with her rights, refuses; a client that sends the name without
 * the file gets a run that fails without the file being read. */
static void name_bobs_file(const char *key, const char *h_more, const char *res_carol, const char *run)
{
	char text[2048], bobs[600];
	snprintf(bobs, sizeof(bobs), "%s/conf-bob/g.conf", tmpdir);
	snprintf(text, sizeof(text), "%s%s=%s\n", h_more, key, bobs);
	char rel[64];
	snprintf(rel, sizeof(rel), "conf-carol-%s", run);
	user_configs(rel, carol, carol_g, text, "MMTESTS=cpu-probe\n");
	char hrel[128], grel[128];
	snprintf(hrel, sizeof(hrel), "%s/h.conf", rel);
	snprintf(grel, sizeof(grel), "%s/g.conf", rel);
	ck_assert_int_eq(try_submit_as(CAROL, hrel, grel, NULL, NULL), 2);
	ck_assert_msg(strstr(hostctl_err(), bobs) && strstr(hostctl_err(), "Permission denied") &&
			      strstr(hostctl_err(), key),
		      "%s", hostctl_err());

	json_object *req = json_object_new_object();
	json_object_object_add(req, "v", json_object_new_int(1));
	json_object_object_add(req, "type", json_object_new_string("submit"));
	json_object_object_add(req, "host_config", json_object_new_string(text));
	json_object_object_add(req, "guest_config", json_object_new_string("MMTESTS=cpu-probe\n"));
	json_object_object_add(req, "results", json_object_new_string(res_carol));
	json_object_object_add(req, "run_name", json_object_new_string(run));
	char line[4096];
	snprintf(line, sizeof(line), "%s\n",
		 json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN));
	json_object_put(req);
	struct group *users = getgrnam("users");
	ck_assert_ptr_nonnull(users);
	const char *reply = raw_request_as(carol, users->gr_gid, line);
	json_object *ok = json_tokener_parse(reply);
	ck_assert_msg(ok && !strcmp(jstr(ok, "type"), "ok"), "%s", reply);
	long id = (long)jint(json_object_object_get(ok, "experiment"), "id");
	json_object_put(ok);
	char ids[32];
	snprintf(ids, sizeof(ids), "%ld", id);
	ck_assert_int_eq(HOSTCTL("wait", ids), 1);
	const char *log = logs_of(id);
	ck_assert_msg(strstr(log, "not among the files hostctl submit sent"), "%s", log);
	ck_assert_msg(!strstr(log, "bob-secret"), "%s", log);
}

START_TEST(test_other_users_config_cannot_be_named)
{
	pid_t svc = start_service("users");
	user_dir("conf-bob", bob, bob_g, 0700);
	user_file("conf-bob/g.conf", "# bob-secret\nMMTESTS=cpu-probe\n", bob, bob_g);
	const char *res_carol = user_dir("res-carol", carol, carol_g, 0700);
	name_bobs_file("GUEST_CONFIG_GUEST_1", "GUEST_KIND=local\nGUEST_COUNT=1\n", res_carol, "x");
	/* a domain template is a user's file as well */
	name_bobs_file("GUEST_TEMPLATE", "GUEST_KIND=libvirt\nGUEST_COUNT=1\n", res_carol, "y");
	stop_service(svc);
}
END_TEST

/* A binary a config names by path is read by the service (to push it into
 * guests): only a system file anyone may read passes. */
START_TEST(test_named_binaries_public_only)
{
	pid_t svc = start_service("users");
	const char *res = user_dir("res-alice", alice, alice_g, 0700);
	const char *h = "GUEST_KIND=local\nGUEST_COUNT=1\n";
	user_configs("conf-a", alice, alice_g, h,
		     "MMTESTS=cpu-probe\nHARNESS_BINARIES='cat /etc/shadow'\n");
	user_configs("conf-b", alice, alice_g, h,
		     "MMTESTS=cpu-probe\nCPU_PROBE_UNITS=1000\nHARNESS_BINARIES='cat /usr/bin/ls'\n");
	long a = submit_as(ALICE, "conf-a/h.conf", "conf-a/g.conf", res, "a");
	long b = submit_as(ALICE, "conf-b/h.conf", "conf-b/g.conf", res, "b");
	ck_assert_int_eq(wait_as(ALICE, a), 1);
	const char *log = logs_of(a);
	ck_assert_msg(strstr(log, "HARNESS_BINARIES names /etc/shadow: not a file of root's that "
				  "everyone may read"),
		      "%s", log);
	ck_assert_msg(wait_as(ALICE, b) == 0, "%s", logs_of(b));
	stop_service(svc);
}
END_TEST

/* The swapped folder's planted link and its target. */
static char target[600];

static void make_target(void)
{
	snprintf(target, sizeof(target), "%s/target", tmpdir);
	write_file("target", "root's own\n", 0600);
}

static void assert_target_untouched(void)
{
	const char *t = read_text(target);
	ck_assert_msg(t && !strcmp(t, "root's own\n"), "the target was written: %s", t);
}

START_TEST(test_swapped_run_folder_not_written)
{
	pid_t svc = start_service("users");
	make_target();
	const char *res_alice = user_dir("res-alice", alice, alice_g, 0700);
	user_configs("conf-alice", alice, alice_g, "GUEST_KIND=local\nGUEST_COUNT=1\n",
		     "MMTESTS=nap\nMMTEST_ITERATIONS=4\nCOMMAND_NAP='sleep 1'\n");
	long id = submit_as(ALICE, "conf-alice/h.conf", "conf-alice/g.conf", res_alice, "s");
	char run[700], moved[700], planted[800];
	snprintf(run, sizeof(run), "%s/s", res_alice);
	snprintf(moved, sizeof(moved), "%s/s.orig", res_alice);
	snprintf(planted, sizeof(planted), "%s/manifest.json.tmp", run);
	/* once the run writes: polled, the folder is another process's */
	char samples[800];
	struct stat st;
	snprintf(samples, sizeof(samples), "%s/samples.ndjson", run);
	for (int i = 0; i < 600 && (stat(samples, &st) < 0 || st.st_size == 0); i++)
		usleep(100 * 1000);
	ck_assert_msg(stat(samples, &st) == 0 && st.st_size > 0, "no sample in %s", samples);

	/* alice cannot plant anything in the run folder itself (it is the
	 * service's until the end), but owning the folder it is in, she swaps
	 * it for one with a link */
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (setgid(alice_g) < 0 || setuid(alice) < 0)
			_exit(1);
		if (symlink(target, planted) == 0 || errno != EACCES)
			_exit(2);
		if (rename(run, moved) < 0 || mkdir(run, 0755) < 0 || symlink(target, planted) < 0)
			_exit(3);
		_exit(0);
	}
	int wst;
	ck_assert_int_eq(waitpid(pid, &wst, 0), pid);
	ck_assert_msg(WIFEXITED(wst) && WEXITSTATUS(wst) == 0,
		      "alice: %d (2: she could write into %s; 3: she could not swap it)",
		      WEXITSTATUS(wst), run);

	ck_assert_int_eq(wait_as(ALICE, id), 2);
	assert_target_untouched();
	ck_assert_msg(lstat(planted, &st) == 0 && S_ISLNK(st.st_mode), "%s is gone", planted);
	const char *log = logs_of(id);
	ck_assert_msg(strstr(log, "the run folder was moved or replaced during the run"), "%s", log);
	json_object *e = exp_status(id);
	ck_assert_str_eq(jstr(e, "state"), "failed");
	json_object_put(e);
	stop_service(svc);
}
END_TEST

/* hostd in the foreground: a command step (as the same user, here root)
 * plants manifest.json.tmp in its run folder; the next manifest fails. */
START_TEST(test_foreground_planted_link_not_written)
{
	char g[1024];
	make_target();
	write_file("h.conf", "GUEST_KIND=local\nGUEST_COUNT=1\nBARRIER_TIMEOUT=60\n", 0644);
	/* the work folder is results/t/nodes/guest-1/work */
	snprintf(g, sizeof(g),
		 "MMTESTS=plant\nMMTEST_ITERATIONS=2\n"
		 "COMMAND_PLANT='ln -sf %s ../../../manifest.json.tmp'\n",
		 target);
	write_file("g.conf", g, 0644);
	ck_assert_int_eq(hostd_test_run(NULL, NULL), 2);
	assert_target_untouched();
	char path[600];
	snprintf(path, sizeof(path), "%s/stderr", tmpdir);
	const char *err = read_text(path);
	ck_assert_msg(err && strstr(err, "manifest.json.tmp (something was put there: not written "
					 "through)"),
		      "%s", err ? err : "");
}
END_TEST

START_TEST(test_host_steps_refused)
{
	pid_t svc = start_service_with("users", "SERVICE_HOST_STEPS=\n");
	user_configs("conf-alice", alice, alice_g, "GUEST_COUNT=1\n", "MMTESTS=cpu-probe\n");
	ck_assert_int_eq(try_submit_as(ALICE, "conf-alice/h.conf", "conf-alice/g.conf", NULL, NULL), 1);
	ck_assert_msg(strstr(hostctl_err(), "lst-alice may not run steps on the host") &&
			      strstr(hostctl_err(), "GUEST_KIND=local (the default)") &&
			      strstr(hostctl_err(), "SERVICE_HOST_STEPS"),
		      "%s", hostctl_err());
	/* root may, whatever the setting */
	ck_assert_int_eq(wait_exp(submit("g.conf", "r")), 0);
	stop_service(svc);
}
END_TEST

START_TEST(test_run_timeout)
{
	/* the service's cap */
	pid_t svc = start_service_with("users", "RUN_TIMEOUT=2\n");
	long id = submit("long.conf", "t");
	ck_assert_int_eq(wait_exp(id), 2);
	json_object *e = exp_status(id);
	ck_assert_str_eq(jstr(e, "state"), "failed");
	ck_assert_msg(strstr(jstr(e, "reason"), "RUN_TIMEOUT=2 s"), "%s", jstr(e, "reason"));
	json_object_put(e);
	stop_service(svc);

	/* h.conf's, in the foreground */
	hostd_test_teardown_results();
	write_file("h.conf", "GUEST_KIND=local\nGUEST_COUNT=1\nRUN_TIMEOUT=2\n", 0644);
	char g[600];
	snprintf(g, sizeof(g), "%s/long.conf", tmpdir);
	ck_assert_int_eq(hostd_test_run(NULL, (const char *const[]){ "--guest-config", g, NULL }), 2);
	json_object *m = manifest();
	ck_assert_str_eq(jstr(m, "status"), "aborted");
	ck_assert_msg(strstr(jstr(m, "reason"), "RUN_TIMEOUT=2 s"), "%s", jstr(m, "reason"));
	json_object_put(m);
}
END_TEST

/* In a child: uid:gid, holding caps (ending with -1) as ambient
 * capabilities, as systemd's User= and AmbientCapabilities= make it. */
static void become_capable(uid_t uid, gid_t gid, const int *caps)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof(d));
	for (size_t i = 0; caps[i] >= 0; i++)
		d[caps[i] / 32].effective |= 1u << (caps[i] % 32);
	for (int k = 0; k < 2; k++)
		d[k].permitted = d[k].inheritable = d[k].effective;
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 || setgroups(1, &gid) < 0 ||
	    setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0 ||
	    syscall(SYS_capset, &h, d) < 0)
		_exit(120);
	for (size_t i = 0; caps[i] >= 0; i++)
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, caps[i], 0, 0) < 0)
			_exit(121);
}

/* hostd --exec-as from a service user that is not root but holds ambient
 * capabilities, as the shipped unit runs it (User=lockstep,
 * AmbientCapabilities=): bob plays lockstep, alice submitted.  A non-root
 * setuid keeps every capability; the shim must drop them itself. */
static const char *exec_as_from_capable_user(bool shim, const char *target_uid, const char *cmd)
{
	static char buf[8192];
	char gid[32], groups[64];
	snprintf(gid, sizeof(gid), "%u", alice_g);
	snprintf(groups, sizeof(groups), "%u,%u", alice_g, getgrnam("users")->gr_gid);
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		const int caps[] = { CAP_CHOWN, CAP_FOWNER, CAP_SETUID, CAP_SETGID, -1 };
		become_capable(bob, bob_g, caps);
		dup2(p[1], 1);
		dup2(p[1], 2);
		if (shim)
			execl(hostd_path, "hostd", "--exec-as", target_uid, gid, groups, "-", "3",
			      "--", "/bin/sh", "sh", "-c", cmd, (char *)NULL);
		else
			execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(122);
	}
	close(p[1]);
	size_t len = 0;
	ssize_t k;
	while ((k = read(p[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)k;
	buf[len] = '\0';
	close(p[0]);
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) < 120, "status %d: %s", st, buf);
	return buf;
}

START_TEST(test_exec_as_drops_ambient_capabilities)
{
	char uid[32], want[128];
	snprintf(uid, sizeof(uid), "%u", alice);
	const char *probe = "id; grep -E '^(CapInh|CapPrm|CapEff|CapAmb|NoNewPrivs)' /proc/self/status";
	/* what the service user's children hold without the shim: the four */
	const char *got = exec_as_from_capable_user(false, uid, probe);
	ck_assert_msg(strstr(got, "CapAmb:\t00000000000000c9"), "the test's setup: %s", got);
	got = exec_as_from_capable_user(true, uid, probe);
	snprintf(want, sizeof(want), "uid=%u(%s) gid=%u(%s) groups=%u(%s),100(users)", alice, ALICE,
		 alice_g, ALICE, alice_g, ALICE);
	ck_assert_msg(strstr(got, want), "no '%s' in %s", want, got);
	const char *zero[] = { "CapInh:\t0000000000000000", "CapPrm:\t0000000000000000",
			       "CapEff:\t0000000000000000", "CapAmb:\t0000000000000000",
			       "NoNewPrivs:\t1" };
	for (size_t i = 0; i < sizeof(zero) / sizeof(zero[0]); i++)
		ck_assert_msg(strstr(got, zero[i]), "no '%s' in %s", zero[i], got);
}
END_TEST

/* The shipped unit's service user: not root, six ambient capabilities. */
static uid_t svc;
static gid_t svc_g;

static void drop_to_service_user(void)
{
	const int caps[] = { CAP_CHOWN,	  CAP_FOWNER, CAP_SETUID, CAP_SETGID,
			     CAP_SETPCAP, CAP_KILL,   -1 };
	become_capable(svc, svc_g, caps);
}

/* hostd --service as the unit runs it (User=, AmbientCapabilities=, no
 * root): alice's command step and her monitor run as her, the monitor is
 * stopped at the step's end (CAP_KILL), her results end up hers. */
START_TEST(test_service_as_capable_user)
{
	service_test_user("lst-svc", &svc, &svc_g);
	user_dir("state", svc, svc_g, 0700);
	user_dir("run", svc, svc_g, 0755);
	user_dir("svc-results", svc, svc_g, 0755);
	snprintf(sock, sizeof(sock), "%s/run/hostd.sock", tmpdir);
	char extra[600];
	snprintf(extra, sizeof(extra), "RESULTS_ROOT=%s/svc-results\n", tmpdir);
	pid_t pid = start_service_dropped("users", extra, drop_to_service_user);

	/* a folder of alice's that the service may write into */
	const char *res = user_dir("res-alice", alice, svc_g, 0770);
	user_configs("conf-alice", alice, alice_g,
		     "GUEST_KIND=local\nGUEST_COUNT=1\nMONITORS=top\nMONITOR_UPDATE_FREQUENCY=1\n",
		     "MMTESTS=probe\nMMTEST_ITERATIONS=1\nCOMMAND_PROBE='id; sleep 2'\n");
	long id = submit_as(ALICE, "conf-alice/h.conf", "conf-alice/g.conf", res, "u");
	ck_assert_msg(wait_as(ALICE, id) == 0, "%s", logs_of(id));
	stop_service(pid);

	char path[700], want[128];
	snprintf(path, sizeof(path), "%s/u/nodes/guest-1/step-1.out", res);
	const char *got = read_text(path);
	snprintf(want, sizeof(want), "uid=%u(%s) gid=%u(%s)", alice, ALICE, alice_g, ALICE);
	ck_assert_msg(got && strstr(got, want), "no '%s' in %s", want, got ? got : path);
	snprintf(path, sizeof(path), "%s/u/nodes/host/monitors/top-step-1.log", res);
	got = read_text(path);
	ck_assert_msg(got && strstr(got, "lst-ali+"), "%s: %s", path, got ? got : "missing");
	assert_owned(alice, 0750, "%s/u", res);
	assert_owned(alice, 0640, "%s/u/manifest.json", res);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("service-users");
	TCase *tc = tcase_create("boundary");
	tcase_add_checked_fixture(tc, setup, service_test_teardown);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_command_runs_as_submitter);
	tcase_add_test(tc, test_other_users_config_cannot_be_named);
	tcase_add_test(tc, test_named_binaries_public_only);
	tcase_add_test(tc, test_swapped_run_folder_not_written);
	tcase_add_test(tc, test_foreground_planted_link_not_written);
	tcase_add_test(tc, test_host_steps_refused);
	tcase_add_test(tc, test_run_timeout);
	tcase_add_test(tc, test_exec_as_drops_ambient_capabilities);
	tcase_add_test(tc, test_service_as_capable_user);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
