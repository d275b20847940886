// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the tests of hostd --service share: the real hostd started as a
 * service (no systemd: the test is the NOTIFY_SOCKET listener), the real
 * hostctl as the client, as root or as another user in a forked child.
 */
#include "service_testlib.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
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

char hostctl_path[512], sock[512];
char out[1 << 16];

void service_test_setup(void)
{
	hostd_test_setup();
	snprintf(hostctl_path, sizeof(hostctl_path), "%s/hostctl/hostctl",
		 getenv("LOCKSTEP_BUILD_ROOT"));
	snprintf(sock, sizeof(sock), "%s/hostd.sock", tmpdir);
	/* nobody must reach the socket and read the configs */
	chmod(tmpdir, 0755);
	write_file("h.conf", "GUEST_KIND=local\nGUEST_COUNT=2\nBARRIER_TIMEOUT=60\n", 0644);
	write_file("g.conf", "MMTESTS=cpu-probe\nMMTEST_ITERATIONS=2\nCPU_PROBE_UNITS=1000\n", 0644);
	/* a run that lasts: 6 steps of a second each */
	write_file("long.conf", "MMTESTS='nap'\nMMTEST_ITERATIONS=6\nCOMMAND_NAP='sleep 1'\n", 0644);
	char path[600];
	snprintf(path, sizeof(path), "%s/results", tmpdir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
}

void service_test_teardown(void)
{
	if (getenv("LOCKSTEP_KEEP_TMP"))
		fprintf(stderr, "kept %s\n", tmpdir);
	else
		hostd_test_teardown();
}

/* A datagram socket for hostd's sd_notify messages. */
static int notify_listener(char *path, size_t size)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(path, size, "%s/notify", tmpdir);
	ck_assert_uint_lt(strlen(path), sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	unlink(path);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	/* a service that is not root must be able to send to it */
	ck_assert_int_eq(chmod(path, 0777), 0);
	/* a bound on a hang, not a timed assertion */
	struct timeval tv = { .tv_sec = 60 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

pid_t start_service_with(const char *group, const char *settings_extra)
{
	return start_service_dropped(group, settings_extra, NULL);
}

pid_t start_service_dropped(const char *group, const char *settings_extra, void (*drop)(void))
{
	char notify[512], state[512], err[512], settings[512];
	int nfd = notify_listener(notify, sizeof(notify));
	snprintf(state, sizeof(state), "%s/state", tmpdir);
	snprintf(err, sizeof(err), "%s/stderr", tmpdir);
	snprintf(settings, sizeof(settings), "%s/service.conf", tmpdir);
	char text[2048];
	/* members of users may run local guests unless the case says otherwise */
	snprintf(text, sizeof(text), "RESULTS_ROOT=%s/results\nSERVICE_HOST_STEPS=users\n%s",
		 tmpdir, settings_extra);
	write_file("service.conf", text, 0644);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open(err, O_WRONLY | O_CREAT | O_APPEND, 0644);
		dup2(fd, 2);
		setenv("NOTIFY_SOCKET", notify, 1);
		if (drop)
			drop();
		execl(hostd_path, hostd_path, "--service", "--socket", sock, "--state-dir", state,
		      "--settings", settings, "--group", group, "--agent", agent_path, (char *)NULL);
		_exit(127);
	}
	char msg[1024];
	bool ready = false;
	while (!ready) {
		ssize_t n = recv(nfd, msg, sizeof(msg) - 1, 0);
		ck_assert_msg(n > 0, "no READY=1 from hostd --service: %s", run_diagnosis());
		msg[n] = '\0';
		ready = strstr(msg, "READY=1") != NULL;
	}
	close(nfd);
	return pid;
}

pid_t start_service(const char *group)
{
	return start_service_with(group, "");
}

void stop_service(pid_t pid)
{
	kill(pid, SIGTERM);
	ck_assert_int_eq(hostd_test_wait(pid), 0);
}

/* Runs hostctl CMD ... --socket SOCK as uid (0: as we are; else with
 * group, -1 for none); stdout into out; its exit status. */
/* A child's output on pipe p into buf (NUL-terminated), then its wait status. */
static int drain_and_wait(int p[2], pid_t pid, char *buf, size_t size)
{
	close(p[1]);
	size_t len = 0;
	ssize_t k;
	while ((k = read(p[0], buf + len, size - 1 - len)) > 0)
		len += (size_t)k;
	buf[len] = '\0';
	close(p[0]);
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return st;
}

static int run_hostctl(const struct passwd *pw, uid_t uid, gid_t group, const char *const *args)
{
	const char *argv[32] = { hostctl_path };
	size_t n = 1;
	for (size_t i = 0; args[i] && n < 29; i++)
		argv[n++] = args[i];
	argv[n++] = "--socket";
	argv[n++] = sock;
	argv[n] = NULL;
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char err[512];
		snprintf(err, sizeof(err), "%s/hostctl.err", tmpdir);
		int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0666);
		dup2(fd, 2);
		dup2(p[1], 1);
		if (pw && (initgroups(pw->pw_name, pw->pw_gid) < 0 || setgid(pw->pw_gid) < 0 ||
			   setuid(pw->pw_uid) < 0))
			_exit(126);
		if (!pw && uid) {
			gid_t g = group;
			if (setgroups(group == (gid_t)-1 ? 0 : 1, &g) < 0 || setgid(NOBODY) < 0 ||
			    setuid(uid) < 0)
				_exit(126);
		}
		execv(hostctl_path, (char *const *)argv);
		_exit(127);
	}
	int st = drain_and_wait(p, pid, out, sizeof(out));
	ck_assert(WIFEXITED(st));
	return WEXITSTATUS(st);
}

int hostctl_as(uid_t uid, gid_t group, const char *const *args)
{
	return run_hostctl(NULL, uid, group, args);
}

int hostctl_user(const char *user, const char *const *args)
{
	struct passwd *pw = getpwnam(user);
	ck_assert_msg(pw, "no user %s", user);
	struct passwd copy = *pw;
	return run_hostctl(&copy, pw->pw_uid, pw->pw_gid, args);
}

void service_test_user(const char *name, uid_t *uid, gid_t *gid)
{
	char cmd[256];
	/* a user name, never NULL (and gcc under -fsanitize sees it so) */
	if (!name)
		ck_abort();
	if (!getpwnam(name)) {
		/* its own group, and users (the tests' SERVICE_GROUP) */
		snprintf(cmd, sizeof(cmd),
			 "useradd --user-group --no-create-home --groups users "
			 "--shell /usr/sbin/nologin %s",
			 name);
		ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
	}
	struct passwd *pw = getpwnam(name);
	ck_assert_ptr_nonnull(pw);
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
}

const char *hostctl_err(void)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/hostctl.err", tmpdir);
	const char *t = read_text(path);
	return t ? t : "";
}

/* Submits conf files from tmpdir; the id. */
long submit(const char *g, const char *run)
{
	char h[512], gp[512], res[512];
	snprintf(h, sizeof(h), "%s/h.conf", tmpdir);
	snprintf(gp, sizeof(gp), "%s/%s", tmpdir, g);
	snprintf(res, sizeof(res), "%s/results", tmpdir);
	int r = HOSTCTL("submit", "--host-config", h, "--guest-config", gp, "--results", res,
			"--run-name", run);
	ck_assert_msg(r == 0, "submit: %d: %s", r, hostctl_err());
	return strtol(out, NULL, 10);
}

int wait_exp(long id)
{
	char s[32];
	snprintf(s, sizeof(s), "%ld", id);
	return HOSTCTL("wait", s);
}

/* The experiment as hostctl status --json ID shows it (caller puts). */
json_object *exp_status(long id)
{
	char s[32];
	snprintf(s, sizeof(s), "%ld", id);
	ck_assert_int_eq(HOSTCTL("status", s, "--json"), 0);
	json_object *o = json_tokener_parse(out);
	ck_assert_msg(o, "status --json: %s", out);
	json_object *e = json_object_get(
		json_object_array_get_idx(json_object_object_get(o, "experiments"), 0));
	json_object_put(o);
	ck_assert_ptr_nonnull(e);
	return e;
}

/* Until the run folder t holds a sample: the first step of the long run
 * ended somewhere.  Polled, as the file is another process's. */
void wait_first_sample(void)
{
	char path[512];
	struct stat st;
	snprintf(path, sizeof(path), "%s/results/t/samples.ndjson", tmpdir);
	for (int i = 0; i < 600 && (stat(path, &st) < 0 || st.st_size == 0); i++)
		usleep(100 * 1000);
	ck_assert_msg(stat(path, &st) == 0 && st.st_size > 0, "no sample in %s", path);
}

json_object *run_manifest(const char *run)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/results/%s/manifest.json", tmpdir, run);
	json_object *m = json_object_from_file(path);
	ck_assert_msg(m, "no readable %s", path);
	return m;
}

/* ---- clients hostctl would not be ------------------------------------- */

const char *service_log(void)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/stderr", tmpdir);
	const char *t = read_text(path);
	return t ? t : "";
}

/* A connection of our own to the service; -1 if it cannot be made (for a
 * forked child, which may not ck_assert). */
int raw_connect(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	memcpy(sa.sun_path, sock, strlen(sock) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	struct timeval tv = { .tv_sec = 60 }; /* a bound on a hang, not a timed assertion */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* One request line as uid (0: as we are; else in group gid); the answer,
 * up to the hang-up (requests that end in an error) or the first line. */
const char *raw_request_as(uid_t uid, gid_t gid, const char *line)
{
	static char reply[1 << 16];
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(p[0]);
		if (uid && (setgroups(1, &gid) < 0 || setgid(NOBODY) < 0 || setuid(uid) < 0))
			_exit(126);
		int fd = raw_connect();
		if (fd < 0)
			_exit(125);
		for (size_t off = 0, len = strlen(line); off < len;) {
			ssize_t n = write(fd, line + off, len - off);
			if (n <= 0)
				_exit(124);
			off += (size_t)n;
		}
		char buf[4096];
		ssize_t n;
		while ((n = read(fd, buf, sizeof(buf))) > 0) {
			if (write(p[1], buf, (size_t)n) != n)
				_exit(123);
			if (memchr(buf, '\n', (size_t)n))
				break;
		}
		_exit(0);
	}
	int st = drain_and_wait(p, pid, reply, sizeof(reply));
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "raw client: status %d", st);
	return reply;
}
