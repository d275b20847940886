// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostd --service end to end: the real hostd started as a service (no
 * systemd: the test is the NOTIFY_SOCKET listener), the real hostctl as the
 * client, local guests for the experiments.  Clients outside the group run
 * as nobody in a forked child.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl.h" /* CTL_CONFIG_MAX */
#include "hostd_testlib.h"
#include "testlib.h"
#include "service_testlib.h"

#define NOBODY 65534

/* What the service sends on fd until it hangs up (the first 64 KiB of it);
 * NULL if it did not hang up. */
static const char *read_to_eof(int fd)
{
	static char buf[1 << 16];
	char skip[4096];
	size_t len = 0;
	ssize_t n;
	while ((n = len < sizeof(buf) - 1 ? read(fd, buf + len, sizeof(buf) - 1 - len)
					  : read(fd, skip, sizeof(skip))) > 0)
		len += len < sizeof(buf) - 1 ? (size_t)n : 0;
	buf[len] = '\0';
	/* ECONNRESET: hung up on with requests of ours still unread */
	bool gone = n == 0 || errno == ECONNRESET;
	close(fd);
	return gone ? buf : NULL;
}

/* An experiment's "hostd": the shell lines first, then it says it started
 * and sleeps.  "trap '' TERM" makes one that ignores SIGTERM as a hung
 * hostd would. */
static void fake_hostd(const char *first)
{
	char text[1024];
	snprintf(text, sizeof(text), "#!/bin/sh\n%s\necho fake hostd: started\nexec sleep 600\n",
		 first);
	write_file("fake-hostd", text, 0755);
}

/* Until the experiment's log holds text.  Polled: the log is another
 * process's. */
static void wait_log(long id, const char *text)
{
	char ids[32];
	snprintf(ids, sizeof(ids), "%ld", id);
	for (int i = 0; i < 600; i++) {
		ck_assert_int_eq(HOSTCTL("logs", ids), 0);
		if (strstr(out, text))
			return;
		usleep(100 * 1000);
	}
	ck_abort_msg("experiment %ld: no '%s' in its log: %s", id, text, out);
}

START_TEST(test_idle_client_dropped)
{
	pid_t svc = start_service_with("users", "IDLE_TIMEOUT=3\n");
	int silent = raw_connect();
	ck_assert_int_ge(silent, 0);
	ck_assert_int_eq(write(silent, "{\"v\":1,\"type\":\"li", 17), 17);
	/* another is served while it says nothing more */
	ck_assert_int_eq(HOSTCTL("list"), 0);
	const char *got = read_to_eof(silent);
	ck_assert_msg(got, "a silent client was not hung up");
	ck_assert_ptr_nonnull(strstr(got, "\"code\":\"ETIMEDOUT\""));
	ck_assert_ptr_nonnull(strstr(service_log(), "no complete request in 3.0 s (IDLE_TIMEOUT); "
						    "hung up"));
	/* every slot taken by one that says nothing: refused, until they go */
	int fds[64];
	for (int i = 0; i < 64; i++) {
		fds[i] = raw_connect();
		ck_assert_int_ge(fds[i], 0);
	}
	ck_assert_int_eq(HOSTCTL("list"), 1);
	ck_assert_ptr_nonnull(strstr(hostctl_err(), "64 clients already"));
	for (int i = 0; i < 64; i++)
		ck_assert_ptr_nonnull(read_to_eof(fds[i]));
	ck_assert_int_eq(HOSTCTL("list"), 0);
	stop_service(svc);
}
END_TEST

START_TEST(test_stop_timeout_kills)
{
	char extra[1024], ids[32];
	fake_hostd("trap '' TERM");
	snprintf(extra, sizeof(extra), "HOSTD_BINARY=%s/fake-hostd\nSTOP_TIMEOUT=1\n", tmpdir);
	pid_t svc = start_service_with("users", extra);
	ck_assert_ptr_nonnull(strstr(service_log(), "for tests only"));
	long id = submit("g.conf", "hung");
	wait_log(id, "fake hostd: started");
	snprintf(ids, sizeof(ids), "%ld", id);
	ck_assert_int_eq(HOSTCTL("cancel", ids), 0);
	ck_assert_int_eq(wait_exp(id), 2);
	json_object *e = exp_status(id);
	ck_assert_str_eq(jstr(e, "state"), "cancelled");
	ck_assert_ptr_nonnull(strstr(jstr(e, "reason"), "cancelled by root; its hostd ignored "
							"SIGTERM for 1.0 s and was killed (SIGKILL)"));
	json_object_put(e);
	ck_assert_int_eq(HOSTCTL("logs", ids), 0);
	ck_assert_ptr_nonnull(strstr(out, "its hostd did not end 1.0 s after SIGTERM: killed"));

	/* stopping the service: the same, and the service ends */
	long id2 = submit("g.conf", "hung2");
	wait_log(id2, "fake hostd: started");
	stop_service(svc);
	ck_assert_ptr_nonnull(strstr(service_log(), "did not end 1.0 s after SIGTERM (STOP_TIMEOUT"));
	svc = start_service_with("users", extra);
	e = exp_status(id2);
	ck_assert_str_eq(jstr(e, "state"), "interrupted");
	ck_assert_int_eq(jint(e, "exit_code"), 2);
	ck_assert_ptr_nonnull(strstr(jstr(e, "reason"), "stopped while it ran; its hostd ignored"));
	json_object_put(e);
	stop_service(svc);
}
END_TEST

/* hostctl logs ID with its output into a file (a log larger than a pipe
 * holds); its exit status. */
static int logs_to_file(long id, const char *path)
{
	char ids[32];
	snprintf(ids, sizeof(ids), "%ld", id);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || dup2(fd, 1) < 0)
			_exit(126);
		execl(hostctl_path, hostctl_path, "logs", ids, "--socket", sock, (char *)NULL);
		_exit(127);
	}
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* A log larger than the answers a client may have unread goes on as the
 * client reads it, to its end. */
START_TEST(test_logs_larger_than_write_queue)
{
	char extra[1024], path[600];
	fake_hostd("head -c 3000000 /dev/zero | tr '\\0' x\necho\necho fake hostd: done\nexit 0");
	snprintf(extra, sizeof(extra), "HOSTD_BINARY=%s/fake-hostd\n", tmpdir);
	pid_t svc = start_service_with("users", extra);
	long id = submit("g.conf", "big");
	ck_assert_int_eq(wait_exp(id), 0);
	snprintf(path, sizeof(path), "%s/logs.out", tmpdir);
	ck_assert_int_eq(logs_to_file(id, path), 0);
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_gt(st.st_size, 3000000);
	const char *text = read_text(path); /* its first MiB */
	ck_assert_ptr_nonnull(text);
	ck_assert_ptr_nonnull(strstr(text, "starts: results in"));
	char tail[200] = "";
	int fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_gt(pread(fd, tail, sizeof(tail) - 1, st.st_size - 150), 0);
	close(fd);
	ck_assert_msg(strstr(tail, "fake hostd: done"), "the log's end: %s", tail);

	/* a client slower than the service: it reads only once the service
	 * has had time to fill the socket and its queue (the wait makes the
	 * case likely, and the outcome does not depend on it) */
	int c = raw_connect();
	ck_assert_int_ge(c, 0);
	char req[128], buf[65536];
	int n = snprintf(req, sizeof(req), "{\"v\":1,\"type\":\"logs\",\"id\":%ld}\n", id);
	ck_assert_int_eq(write(c, req, (size_t)n), n);
	usleep(500 * 1000);
	size_t total = 0, keep = 0;
	ssize_t k;
	while ((k = read(c, buf + keep, sizeof(buf) - 1 - keep)) > 0) {
		total += (size_t)k;
		buf[keep + (size_t)k] = '\0';
		if (strstr(buf, "{\"v\":1,\"type\":\"ok\""))
			break;
		/* keep the last bytes: the final line may straddle two reads */
		size_t have = keep + (size_t)k, tailn = have < 200 ? have : 200;
		memmove(buf, buf + have - tailn, tailn);
		keep = tailn;
	}
	ck_assert_msg(k > 0, "logs did not end: %zu bytes, then %s", total,
		      k < 0 ? strerror(errno) : "a hang-up");
	ck_assert_uint_gt(total, 3000000);
	ck_assert_ptr_nonnull(strstr(buf, "\"state\":\"done\""));
	close(c);
	stop_service(svc);
}
END_TEST

/* What a member of the group may try: fill the queue, another's experiment,
 * a link to another's folder, control characters, huge fields, requests
 * whose answers it never reads, every connection slot. */
START_TEST(test_hostile_member)
{
	struct group *users = getgrnam("users");
	ck_assert_ptr_nonnull(users);
	gid_t ug = users->gr_gid;
	char extra[1024], path[600], path2[600], h[512], g[512], line[1024];
	fake_hostd("");
	snprintf(extra, sizeof(extra), "HOSTD_BINARY=%s/fake-hostd\nUSER_QUEUE_MAX=2\n", tmpdir);
	pid_t svc = start_service_with("users", extra);
	snprintf(h, sizeof(h), "%s/h.conf", tmpdir);
	snprintf(g, sizeof(g), "%s/g.conf", tmpdir);

	/* one running and two queued of root's: a third waits in vain */
	long run = submit("g.conf", "r1");
	submit("g.conf", "r2");
	submit("g.conf", "r3");
	ck_assert_int_eq(HOSTCTL("submit", "--host-config", h, "--guest-config", g), 1);
	ck_assert_ptr_nonnull(strstr(hostctl_err(), "has 2 experiments queued already "
						    "(USER_QUEUE_MAX=2"));

	/* root's experiment is not nobody's to see, follow, wait for or cancel */
	char ids[32];
	snprintf(ids, sizeof(ids), "%ld", run);
#define AS_NOBODY(...) hostctl_as(NOBODY, ug, (const char *const[]){ __VA_ARGS__, NULL })
	ck_assert_int_eq(AS_NOBODY("logs", "-f", ids), 1);
	ck_assert_ptr_nonnull(strstr(hostctl_err(), "no experiment"));
	ck_assert_int_eq(AS_NOBODY("logs", ids), 1);
	ck_assert_int_eq(AS_NOBODY("cancel", ids), 1);
	ck_assert_int_eq(AS_NOBODY("wait", ids), 4);
	ck_assert_int_eq(AS_NOBODY("list"), 0);
	ck_assert_ptr_nonnull(strstr(out, "no experiments of yours"));

	/* a link in a folder of nobody's to a folder of root's: followed, and
	 * the folder it leads to is checked (hostctl would have resolved it) */
	snprintf(path, sizeof(path), "%s/mine", tmpdir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	ck_assert_int_eq(chown(path, NOBODY, NOBODY), 0);
	snprintf(path2, sizeof(path2), "%s/roots", tmpdir);
	ck_assert_int_eq(mkdir(path2, 0777), 0);
	chmod(path2, 0777);
	snprintf(path, sizeof(path), "%s/mine/link", tmpdir);
	ck_assert_int_eq(symlink(path2, path), 0);
	snprintf(line, sizeof(line),
		 "{\"v\":1,\"type\":\"submit\",\"host_config\":\"\","
		 "\"guest_config\":\"\",\"results\":\"%s\"}\n",
		 path);
	const char *r = raw_request_as(NOBODY, ug, line);
	ck_assert_msg(strstr(r, "belongs to uid 0, not to nobody"), "%s", r);

	/* a control character in the results folder's name */
	snprintf(path, sizeof(path), "%s/a\033[2Jb", tmpdir);
	ck_assert_int_eq(mkdir(path, 0777), 0);
	ck_assert_int_eq(hostctl_as(0, 0,
				    (const char *const[]){ "submit", "--host-config", h, "--guest-config",
							   g, "--results", path, NULL }),
			 1);
	ck_assert_ptr_nonnull(strstr(hostctl_err(), "a control character (0x1b) at byte"));

	/* a config over 64 KiB, which hostctl would not send */
	static char big[80 * 1024];
	int n = snprintf(big, sizeof(big),
			 "{\"v\":1,\"type\":\"submit\",\"guest_config\":\"\","
			 "\"host_config\":\"");
	memset(big + n, 'x', CTL_CONFIG_MAX + 1);
	snprintf(big + n + CTL_CONFIG_MAX + 1, sizeof(big) - (size_t)n - CTL_CONFIG_MAX - 1, "\"}\n");
	r = raw_request_as(NOBODY, ug, big);
	ck_assert_msg(strstr(r, "field 'host_config': 65537 bytes, at most 65536"), "%s", r);

	/* requests sent ahead, answers never read: hung up, not buffered */
	int fd = raw_connect();
	ck_assert_int_ge(fd, 0);
	static char many[3000 * 23];
	size_t len = 0;
	for (int i = 0; i < 3000; i++)
		len += (size_t)snprintf(many + len, sizeof(many) - len,
					"{\"v\":1,\"type\":\"list\"}\n");
	signal(SIGPIPE, SIG_IGN); /* were it hung up before all is written */
	ck_assert_int_eq(write(fd, many, len), (ssize_t)len);
	/* not read until the service said so (polled: its log is a file) */
	for (int i = 0; i < 600 && !strstr(service_log(), "bytes of answers unread"); i++)
		usleep(100 * 1000);
	ck_assert_ptr_nonnull(strstr(service_log(), "over 262144 bytes of answers unread; hung up"));
	ck_assert_msg(read_to_eof(fd), "a client that does not read was not hung up");

	/* one user holds at most SERVICE_CLIENTS_PER_USER connections */
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (setgroups(1, &ug) < 0 || setgid(NOBODY) < 0 || setuid(NOBODY) < 0)
			_exit(126);
		for (int i = 0; i < 16; i++)
			if (raw_connect() < 0)
				_exit(125);
		int last = raw_connect();
		const char *got = last < 0 ? NULL : read_to_eof(last);
		_exit(got && strstr(got, "nobody has 16 connections to the service already") ? 0 : 1);
	}
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "17th connection: status %d", st);
	ck_assert_ptr_nonnull(strstr(service_log(), "16 of theirs already"));
	/* and root's one is still served */
	ck_assert_int_eq(HOSTCTL("cancel", ids), 0);
	stop_service(svc);
}
END_TEST

START_TEST(test_ready_queue_in_order)
{
	pid_t svc = start_service("users");
	long a = submit("long.conf", "a"), b = submit("g.conf", "b");
	ck_assert_int_eq(b, a + 1);
	ck_assert_int_eq(wait_exp(b), 0);
	json_object *ea = exp_status(a), *eb = exp_status(b);
	ck_assert_str_eq(jstr(ea, "state"), "done");
	ck_assert_str_eq(jstr(eb, "state"), "done");
	/* the second started once the first had ended, not before */
	ck_assert_int_le(jint(ea, "ended"), jint(eb, "started"));
	ck_assert_int_ge(jint(ea, "ended"), jint(ea, "started"));
	json_object *m = run_manifest("a");
	ck_assert_str_eq(jstr(m, "status"), "complete");
	ck_assert_int_eq(jint(m, "steps_released"), 6);
	json_object_put(m);
	m = run_manifest("b");
	ck_assert_str_eq(jstr(m, "status"), "complete");
	json_object_put(m);
	json_object_put(ea);
	json_object_put(eb);
	/* the log has hostd's lines and the service's */
	char id[32];
	snprintf(id, sizeof(id), "%ld", a);
	ck_assert_int_eq(HOSTCTL("logs", id), 0);
	ck_assert_ptr_nonnull(strstr(out, "run a complete"));
	ck_assert_ptr_nonnull(strstr(out, "experiment 1 done, exit code 0"));
	stop_service(svc);
}
END_TEST

START_TEST(test_wait_returns_exit_code)
{
	pid_t svc = start_service("users");
	write_file("bad.conf", "MMTESTS=cpu-probe\nMMTEST_ITERATIONS=many\n", 0644);
	long bad = submit("bad.conf", "bad");
	ck_assert_int_eq(wait_exp(bad), 1); /* hostd: a configuration error */
	json_object *e = exp_status(bad);
	ck_assert_str_eq(jstr(e, "state"), "failed");
	json_object_put(e);
	/* and an experiment's 0 after it, to tell the two apart */
	ck_assert_int_eq(wait_exp(submit("g.conf", "good")), 0);
	ck_assert_int_eq(HOSTCTL("wait", "999"), 4);
	stop_service(svc);
}
END_TEST

/* An h.conf name hostd does not know fails the experiment (hostd exits 1)
 * unless it was submitted with --lenient, which reaches its hostd. */
static long submit_hconf(const char *hconf, const char *run, bool lenient)
{
	char h[512], g[512], res[512];
	snprintf(h, sizeof(h), "%s/%s", tmpdir, hconf);
	snprintf(g, sizeof(g), "%s/g.conf", tmpdir);
	snprintf(res, sizeof(res), "%s/results", tmpdir);
	int r = lenient ? HOSTCTL("submit", "--host-config", h, "--guest-config", g, "--results",
				  res, "--run-name", run, "--lenient")
			: HOSTCTL("submit", "--host-config", h, "--guest-config", g, "--results",
				  res, "--run-name", run);
	ck_assert_msg(r == 0, "submit: %d: %s", r, hostctl_err());
	return strtol(out, NULL, 10);
}

START_TEST(test_lenient_reaches_hostd)
{
	pid_t svc = start_service("users");
	write_file("typo.conf",
		   "GUEST_KIND=local\nGUEST_COUNT=2\nBARRIER_TIMEOUT=60\n"
		   "GEUST_COUNT=2\n",
		   0644);
	ck_assert_int_eq(wait_exp(submit_hconf("typo.conf", "strict", false)), 1);
	long id = submit_hconf("typo.conf", "lenient", true);
	json_object *e = exp_status(id);
	ck_assert(json_object_get_boolean(json_object_object_get(e, "lenient")));
	json_object_put(e);
	ck_assert_int_eq(wait_exp(id), 0);
	stop_service(svc);
}
END_TEST

START_TEST(test_outsider_refused_member_served)
{
	struct group *users = getgrnam("users");
	ck_assert_ptr_nonnull(users);
	pid_t svc = start_service("users");
	ck_assert_int_eq(hostctl_as(NOBODY, (gid_t)-1, (const char *const[]){ "list", NULL }), 1);
	ck_assert_ptr_nonnull(strstr(hostctl_err(), "may not use this hostd service"));
	ck_assert_ptr_nonnull(strstr(hostctl_err(), "group 'users'"));

	/* a member: its run folder, in a folder of its own, ends up its own */
	char res[512], h[512], g[512];
	snprintf(res, sizeof(res), "%s/mine", tmpdir);
	ck_assert_int_eq(mkdir(res, 0755), 0);
	ck_assert_int_eq(chown(res, NOBODY, NOBODY), 0);
	snprintf(h, sizeof(h), "%s/h.conf", tmpdir);
	snprintf(g, sizeof(g), "%s/g.conf", tmpdir);
	ck_assert_int_eq(hostctl_as(NOBODY, users->gr_gid,
				    (const char *const[]){ "submit", "--host-config", h,
							   "--guest-config", g, "--results", res,
							   "--run-name", "n", NULL }),
			 0);
	long id = strtol(out, NULL, 10);
	char ids[32];
	snprintf(ids, sizeof(ids), "%ld", id);
	ck_assert_int_eq(hostctl_as(NOBODY, users->gr_gid, (const char *const[]){ "wait", ids, NULL }),
			 0);
	char path[600];
	struct stat st;
	snprintf(path, sizeof(path), "%s/n/samples.ndjson", res);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_uid, NOBODY);
	/* root's folder is not nobody's to fill */
	snprintf(res, sizeof(res), "%s/results", tmpdir);
	ck_assert_int_eq(hostctl_as(NOBODY, users->gr_gid,
				    (const char *const[]){ "submit", "--host-config", h, "--guest-config",
							   g, "--results", tmpdir, NULL }),
			 1);
	ck_assert_ptr_nonnull(strstr(hostctl_err(), "not to nobody"));
	stop_service(svc);

	snprintf(path, sizeof(path), "%s/stderr", tmpdir);
	ck_assert_ptr_nonnull(strstr(read_text(path), "refused a control connection from nobody"));
}
END_TEST

START_TEST(test_sigkill_queue_survives)
{
	pid_t svc = start_service("users");
	long first = submit("long.conf", "t");
	long second = submit("g.conf", "two"), third = submit("g.conf", "three");
	wait_first_sample();
	kill(svc, SIGKILL);
	hostd_test_wait_signal(svc);

	svc = start_service("users");
	ck_assert_int_eq(wait_exp(third), 0);
	ck_assert_int_eq(wait_exp(second), 0);
	json_object *e = exp_status(first);
	ck_assert_str_eq(jstr(e, "state"), "interrupted");
	ck_assert_int_eq(jint(e, "exit_code"), 2);
	json_object_put(e);
	/* its hostd got SIGTERM when the service died: partial results, said so */
	json_object *m = run_manifest("t");
	ck_assert_str_eq(jstr(m, "status"), "interrupted");
	ck_assert_int_lt(jint(m, "steps_released"), 6);
	json_object_put(m);
	size_t n;
	json_object **s = read_ndjson("samples.ndjson", &n);
	ck_assert_int_ge(count_sample(s, n, "guest-1", 1, "elapsed") +
				 count_sample(s, n, "guest-2", 1, "elapsed"),
			 1);
	free_ndjson(s, n);
	/* and nothing ran twice */
	m = run_manifest("two");
	ck_assert_str_eq(jstr(m, "status"), "complete");
	json_object_put(m);
	stop_service(svc);
}
END_TEST

START_TEST(test_cancel_running)
{
	pid_t svc = start_service("users");
	long id = submit("long.conf", "t");
	wait_first_sample();
	char ids[32];
	snprintf(ids, sizeof(ids), "%ld", id);
	ck_assert_int_eq(HOSTCTL("status", ids), 0);
	ck_assert_ptr_nonnull(strstr(out, "running, step "));
	ck_assert_int_eq(HOSTCTL("cancel", ids), 0);
	ck_assert_int_eq(wait_exp(id), 2);
	json_object *e = exp_status(id);
	ck_assert_str_eq(jstr(e, "state"), "cancelled");
	ck_assert_ptr_nonnull(strstr(jstr(e, "reason"), "cancelled by root"));
	json_object_put(e);
	json_object *m = run_manifest("t");
	ck_assert_str_eq(jstr(m, "status"), "interrupted");
	json_object_put(m);
	size_t n;
	json_object **s = read_ndjson("samples.ndjson", &n);
	ck_assert_int_ge(count_sample(s, n, "guest-1", 1, "elapsed") +
				 count_sample(s, n, "guest-2", 1, "elapsed"),
			 1);
	free_ndjson(s, n);
	/* a queued one goes at once, and an ended one cannot be cancelled */
	ck_assert_int_eq(HOSTCTL("cancel", ids), 1);
	ck_assert_ptr_nonnull(strstr(hostctl_err(), "has ended already"));
	stop_service(svc);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("service");
	TCase *tc = tcase_create("service");
	tcase_add_checked_fixture(tc, service_test_setup, service_test_teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_ready_queue_in_order);
	tcase_add_test(tc, test_wait_returns_exit_code);
	tcase_add_test(tc, test_lenient_reaches_hostd);
	tcase_add_test(tc, test_outsider_refused_member_served);
	tcase_add_test(tc, test_sigkill_queue_survives);
	tcase_add_test(tc, test_cancel_running);
	tcase_add_test(tc, test_idle_client_dropped);
	tcase_add_test(tc, test_stop_timeout_kills);
	tcase_add_test(tc, test_hostile_member);
	tcase_add_test(tc, test_logs_larger_than_write_queue);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
