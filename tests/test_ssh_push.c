// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostd's SSH side against a real dropbear on loopback, started by the
 * test itself.  dropbear reads authorized_keys from the home directory in
 * /etc/passwd and accepts only shells listed in /etc/shells, so the server
 * runs in a mount namespace of its own where both files are bind-mounted
 * from the test's folder: root's home and login shell are there, and the
 * host's files are never touched.  The login shell puts only busybox
 * applets on PATH, as in the demo guest (busybox sh, busybox tar).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <libssh/libssh.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileio.h"
#include "ssh_key.h"
#include "ssh_push.h"
#include "xalloc.h"

#define DROPBEAR "/usr/sbin/dropbear"
#define BIG_SIZE (2 * 1024 * 1024 + 123) /* not a multiple of 512 */

static char T[64];	 /* the test's folder */
static char *client_key; /* hostd's private key (ssh_key_ensure) */
static char *client_pub;
static char hostkey_pub[2][512];  /* dropbear's keys A and B: "ssh-ed25519 AAAA..." */
static char hostkey_fp[2][128];	  /* their fingerprints, from ssh-keygen */
static char hostkey_blob[2][512]; /* "ssh-ed25519 AAAA..." without the comment */

/* ---- helpers ---- */

/* Check's asserts only work inside a test; the world is made outside. */
static int in_world;
#define MUST(cond, ...)                                                       \
	do {                                                                  \
		if (!in_world) {                                              \
			ck_assert_msg(cond, __VA_ARGS__);                     \
		} else if (!(cond)) {                                         \
			fprintf(stderr, "test-ssh-push setup: " __VA_ARGS__); \
			fputc('\n', stderr);                                  \
			exit(EXIT_FAILURE);                                   \
		}                                                             \
	} while (0)

static char *path(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *path(const char *fmt, ...)
{
	char rel[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	return xasprintf("%s/%s", T, rel);
}

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	char *cmd;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	MUST(vasprintf(&cmd, fmt, ap) != -1, "vasprintf");
	va_end(ap);
	rc = system(cmd);
	MUST(rc == 0, "`%s` failed: %d", cmd, rc);
	free(cmd);
}

/* The first line a command prints. */
static void first_line(char *out, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void first_line(char *out, size_t n, const char *fmt, ...)
{
	char *cmd;
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	MUST(vasprintf(&cmd, fmt, ap) != -1, "vasprintf");
	va_end(ap);
	f = popen(cmd, "r");
	MUST(f != NULL, "popen %s", cmd);
	out[0] = '\0';
	MUST(fgets(out, (int)n, f) != NULL, "`%s` printed nothing", cmd);
	out[strcspn(out, "\n")] = '\0';
	pclose(f);
	free(cmd);
}

static void write_file(const char *p, const char *text, mode_t mode)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode);

	MUST(fd >= 0, "cannot create %s: %s", p, strerror(errno));
	MUST(fileio_write_all(fd, text, strlen(text)) == 0, "cannot write %s", p);
	close(fd);
	MUST(chmod(p, mode) == 0, "chmod %s", p);
}

static char *read_text(const char *p)
{
	char *buf = NULL;
	size_t len;

	if (fileio_read_all(p, 1 << 20, &buf, &len) < 0)
		return xstrdup("");
	return buf;
}

/* A loopback port that was free a moment ago (listen_it: and still held). */
static int loopback_socket(int *port, int listen_it)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	if (listen_it)
		ck_assert_int_eq(listen(fd, 8), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

/* ---- the server ---- */

struct server {
	pid_t pid;
	int port;
	char *log;
};

/*
 * Runs in the server process, the leader of a process group that holds
 * dropbear and its sessions: a mount namespace of its own, dropbear in the
 * foreground, and its log copied to a file.  Tells fd report "ok" once
 * dropbear listens (it says "Not backgrounding" after listen(2)), or why not.
 */
static void server_main(pid_t parent, int port, const char *hostkey, const char *log, int report)
{
	char *passwd = path("passwd"), *shells = path("shells"), addr[32], buf[4096];
	const char *what = NULL;
	size_t seen = 0;
	int p[2], logfd, ready = 0;
	ssize_t n;

	/* a test that fails skips its teardown: die with it all the same */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	setpgid(0, 0);
	if (unshare(CLONE_NEWNS) < 0)
		what = "unshare(CLONE_NEWNS)";
	else if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		what = "mount --make-rprivate /";
	else if (mount(passwd, "/etc/passwd", NULL, MS_BIND, NULL) < 0 ||
		 mount(shells, "/etc/shells", NULL, MS_BIND, NULL) < 0)
		what = "bind-mounting passwd and shells";
	else if (pipe(p) < 0)
		what = "pipe";
	if (what) {
		dprintf(report, "%s: %s", what, strerror(errno));
		_exit(1);
	}
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	parent = getpid();
	if (fork() == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		dup2(p[1], 2);
		execl(DROPBEAR, "dropbear", "-F", "-E", "-s", "-m", "-p", addr, "-r", hostkey, "-P",
		      "/dev/null", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	logfd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	while ((n = read(p[0], buf + seen, sizeof(buf) - 1 - seen)) > 0) {
		if (write(logfd, buf + seen, (size_t)n) < 0)
			break;
		seen += (size_t)n;
		buf[seen] = '\0';
		if (!ready && strstr(buf, "Not backgrounding")) {
			ready = 1;
			dprintf(report, "ok");
			close(report);
		}
		if (seen > sizeof(buf) / 2)
			seen = 0; /* only the readiness line is looked for */
	}
	if (!ready)
		dprintf(report, "dropbear -p %s exited: %s", addr, buf);
	_exit(0);
}

static struct server server_start(int key)
{
	struct server s;
	char *hostkey = path("hostkey_%c", 'a' + key), msg[512] = "";
	pid_t self = getpid();
	int pipefd[2];
	ssize_t n = 0;

	/* a port that was free a moment ago; another taker makes dropbear
	 * fail to listen, and then the next try picks another */
	for (int tries = 0; tries < 3; tries++) {
		close(loopback_socket(&s.port, 0));
		s.log = path("dropbear-%d.log", s.port);
		ck_assert_int_eq(pipe2(pipefd, O_CLOEXEC), 0);
		s.pid = fork();
		ck_assert_int_ge(s.pid, 0);
		if (s.pid == 0) {
			close(pipefd[0]);
			server_main(self, s.port, hostkey, s.log, pipefd[1]);
		}
		close(pipefd[1]);
		n = read(pipefd[0], msg, sizeof(msg) - 1);
		close(pipefd[0]);
		if (n == 2 && strncmp(msg, "ok", 2) == 0)
			break;
		waitpid(s.pid, NULL, 0);
		free(s.log);
	}
	ck_assert_msg(n == 2 && strncmp(msg, "ok", 2) == 0, "test sshd: %s", msg);
	free(hostkey);
	return s;
}

static void server_stop(struct server *s)
{
	kill(-s->pid, SIGKILL); /* dropbear and its sessions too */
	waitpid(s->pid, NULL, 0);
	free(s->log);
}

static struct ssh_push_target target(const struct server *s, const char *node, int pinned_key)
{
	struct ssh_push_target t = {
		.node = node,
		.host = "127.0.0.1",
		.port = s->port,
		.user = "root",
		.private_key_path = client_key,
		.timeout_ms = 5000,
		.expected_hostkey = pinned_key >= 0 ? hostkey_pub[pinned_key] : NULL,
	};
	return t;
}

static struct ssh_push_session *connect_ok(const struct ssh_push_target *t)
{
	struct ssh_push_session *s = NULL;
	char err[512] = "";
	int r = ssh_push_connect(t, &s, NULL, err, sizeof(err));

	ck_assert_msg(r == 0, "connect: %d %s", r, err);
	return s;
}

/* ---- the suite's world, made once ---- */

static void world_setup(void)
{
	char err[512] = "", line[512];

	in_world = 1;
	strcpy(T, "/tmp/lockstep-ssh-XXXXXX");
	MUST(mkdtemp(T) != NULL, "mkdtemp: %s", strerror(errno));
	MUST(ssh_init() == 0, "ssh_init failed");
	MUST(ssh_key_ensure(T, &client_key, &client_pub, err, sizeof(err)) == 0, "%s", err);

	sh("mkdir -p %s/bin %s/home/.ssh && chmod 700 %s/home/.ssh", T, T, T);
	sh("/bin/busybox --install -s %s/bin", T);
	char *p = path("home/.ssh/authorized_keys"), *text = xasprintf("%s\n", client_pub);
	write_file(p, text, 0600);
	free(p);
	free(text);

	/* the login shell: busybox only; a command naming stall-here never
	 * reads its stdin, to stand for a guest that stopped reading */
	p = path("login-shell");
	text = xasprintf("#!/bin/busybox sh\nPATH=%s/bin; export PATH\n"
			 "case \"$2\" in *stall-here*) exec sleep 3;; esac\n"
			 "exec /bin/busybox sh \"$@\"\n",
			 T);
	write_file(p, text, 0755);
	free(text);
	text = xasprintf("root:x:0:0:root:%s/home:%s\n", T, p);
	free(p);
	p = path("passwd");
	write_file(p, text, 0644);
	free(p);
	free(text);
	p = path("shells");
	text = xasprintf("%s/login-shell\n", T);
	write_file(p, text, 0644);
	free(p);
	free(text);

	for (int k = 0; k < 2; k++) {
		sh("dropbearkey -t ed25519 -f %s/hostkey_%c >/dev/null 2>&1", T, 'a' + k);
		first_line(hostkey_pub[k], sizeof(hostkey_pub[k]),
			   "dropbearkey -y -f %s/hostkey_%c | grep ^ssh-ed25519 | tee %s/hostkey_%c.pub",
			   T, 'a' + k, T, 'a' + k);
		first_line(hostkey_blob[k], sizeof(hostkey_blob[k]),
			   "cut -d' ' -f1,2 %s/hostkey_%c.pub", T, 'a' + k);
		/* an independent fingerprint: OpenSSH's ssh-keygen, not libssh */
		first_line(line, sizeof(line), "ssh-keygen -l -E sha256 -f %s/hostkey_%c.pub", T,
			   'a' + k);
		MUST(sscanf(line, "%*d %127s", hostkey_fp[k]) == 1, "ssh-keygen said %s", line);
	}
	in_world = 0;
}

static void world_teardown(void)
{
	in_world = 1;
	/* LOCKSTEP_KEEP_TMP=1 keeps the folder (dropbear's logs) to debug */
	if (T[0] && !getenv("LOCKSTEP_KEEP_TMP"))
		sh("rm -rf %s", T);
	free(client_key);
	free(client_pub);
	ssh_finalize();
}

/* ---- hostd's key ---- */

START_TEST(test_key_made_once)
{
	char *state = path("keystate"), *priv = NULL, *pub = NULL, *priv2 = NULL, *pub2 = NULL;
	char err[512] = "", *pubfile;
	struct stat st;

	ck_assert_int_eq(ssh_key_ensure(state, &priv, &pub, err, sizeof(err)), 0);
	ck_assert_int_eq(stat(priv, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	ck_assert_msg(strncmp(pub, "ssh-ed25519 AAAA", 16) == 0, "%s", pub);
	ck_assert_ptr_nonnull(strstr(pub, " lockstep@"));
	pubfile = xasprintf("%s.pub", priv);
	char *text = read_text(pubfile), *want = xasprintf("%s\n", pub);
	ck_assert_str_eq(text, want);
	/* OpenSSH reads it too, so users can debug with ssh -i */
	sh("ssh-keygen -y -f %s | cut -d' ' -f1,2 | grep -q \"$(cut -d' ' -f1,2 %s)\"", priv, pubfile);

	ck_assert_int_eq(ssh_key_ensure(state, &priv2, &pub2, err, sizeof(err)), 0);
	ck_assert_str_eq(priv2, priv);
	ck_assert_str_eq(pub2, pub); /* reused, not made again */

	/* a key others may read is refused, naming the file and the fix */
	ck_assert_int_eq(chmod(priv, 0644), 0);
	free(priv2);
	free(pub2);
	ck_assert_int_eq(ssh_key_ensure(state, &priv2, &pub2, err, sizeof(err)), -EPERM);
	ck_assert_ptr_nonnull(strstr(err, priv));
	ck_assert_ptr_nonnull(strstr(err, "chmod 600"));
	free(text);
	free(want);
	free(pubfile);
	free(priv);
	free(pub);
	free(state);
}
END_TEST

START_TEST(test_key_from_console)
{
	char *text, *line = NULL;

	/* the last whole line wins; a cut line and an unfinished one do not */
	text = xasprintf("[    1.0] boot\r\nLOCKSTEP-HOSTKEY %s\r\n"
			 "LOCKSTEP-HOSTKEY ssh-ed25519 AAAAC3[    2.1] virtio_net\n"
			 "LOCKSTEP-HOSTKEY %s",
			 hostkey_pub[0], hostkey_blob[1]);
	ck_assert_int_eq(ssh_key_from_console(text, strlen(text), &line), 0);
	ck_assert_str_eq(line, hostkey_pub[0]);
	free(line);
	ck_assert_int_eq(ssh_key_from_console("no key here\n", 12, &line), -ENOENT);
	ck_assert_ptr_null(line);
	free(text);
}
END_TEST

/* ---- against dropbear ---- */

static struct server srv; /* key A, started for every case below */

static void srv_setup(void)
{
	srv = server_start(0);
}

static void srv_teardown(void)
{
	server_stop(&srv);
}

/* The local twin of what the push sends, so checksums compare as text. */
static void make_harness(const char *local, struct ssh_push_file *files)
{
	sh("mkdir -p %s/lib && head -c %d /dev/urandom > %s/big && "
	   "printf '#!/bin/sh\\necho agent\\n' > %s/agent && printf 'x' > %s/lib/libx.so.1 && "
	   "printf 'NODE=n1\\n' > %s/guest.conf",
	   local, BIG_SIZE, local, local, local, local);
	files[0] = (struct ssh_push_file){ "big", 0644, xasprintf("%s/big", local), NULL, 0 };
	files[1] = (struct ssh_push_file){ "agent", 0755, xasprintf("%s/agent", local), NULL, 0 };
	files[2] = (struct ssh_push_file){ "lib/libx.so.1", 0644,
					   xasprintf("%s/lib/libx.so.1", local), NULL, 0 };
	files[3] = (struct ssh_push_file){ "guest.conf", 0600, NULL, "NODE=n1\n", 8 };
}

START_TEST(test_push_and_exec)
{
	struct ssh_push_target t = target(&srv, "n1", 0);
	struct ssh_push_file files[4];
	struct ssh_push_stats st = { 0 };
	struct ssh_push_hostkey hk;
	struct ssh_push_session *s = NULL;
	char *local = path("h1"), *remote = path("guest-n1/harness"), *out = NULL, *cmd;
	char err[1024] = "", want[1024];
	int status, r;

	make_harness(local, files);
	r = ssh_push_connect(&t, &s, &hk, err, sizeof(err));
	ck_assert_msg(r == 0, "%s", err);
	ck_assert_int_eq(hk.trust, SSH_PUSH_TRUST_PINNED);
	ck_assert_str_eq(hk.fingerprint, hostkey_fp[0]);

	r = ssh_push_harness(s, remote, files, 4, &st, err, sizeof(err));
	ck_assert_msg(r == 0, "%s", err);
	ck_assert_uint_gt(st.bytes, BIG_SIZE);
	ck_assert(st.seconds > 0);
	printf("push: %llu bytes in %.3f s = %.1f MB/s\n", (unsigned long long)st.bytes, st.seconds,
	       st.bytes / st.seconds / 1e6);

	/* what arrived, checked by the guest's own (busybox) sha256sum */
	cmd = xasprintf("cd %s && sha256sum big agent lib/libx.so.1 guest.conf", remote);
	r = ssh_push_exec(s, cmd, &out, &status, err, sizeof(err));
	ck_assert_msg(r == 0 && status == 0, "%d %d %s", r, status, err);
	first_line(want, sizeof(want),
		   "cd %s && sha256sum big agent lib/libx.so.1 guest.conf "
		   "| tr '\\n' '|'",
		   local);
	for (char *c = out; *c; c++)
		*c = *c == '\n' ? '|' : *c;
	ck_assert_str_eq(out, want);
	free(out);
	free(cmd);
	cmd = xasprintf("cd %s && stat -c '%%a %%n' agent guest.conf lib", remote);
	r = ssh_push_exec(s, cmd, &out, &status, err, sizeof(err));
	ck_assert_int_eq(r, 0);
	ck_assert_str_eq(out, "755 agent\n600 guest.conf\n755 lib\n");
	free(out);
	free(cmd);

	/* output and exit status; stderr goes to err */
	r = ssh_push_exec(s, "echo hello; echo oops >&2; exit 3", &out, &status, err, sizeof(err));
	ck_assert_int_eq(r, 0);
	ck_assert_int_eq(status, 3);
	ck_assert_str_eq(out, "hello\n");
	ck_assert_msg(strstr(err, "guest n1 (root@127.0.0.1:") && strstr(err, "exited 3: oops"),
		      "%s", err);
	free(out);
	ssh_push_close(s);

	/* the server saw a key login: the negative cases below rely on this */
	char *log = read_text(srv.log);
	ck_assert_msg(strstr(log, "auth succeeded"), "%s", log);
	free(log);
	for (int i = 0; i < 3; i++)
		free((char *)files[i].local_path);
	free(remote);
	free(local);
}
END_TEST

START_TEST(test_wrong_pinned_key)
{
	struct ssh_push_target t = target(&srv, "n2", 1); /* server has A */
	struct ssh_push_session *s = (void *)1;
	char err[1024] = "", *log;
	int r;

	r = ssh_push_connect(&t, &s, NULL, err, sizeof(err));
	ck_assert_int_eq(r, -EBADMSG);
	ck_assert_ptr_null(s);
	ck_assert_msg(strstr(err, "guest n2 (root@127.0.0.1:") && strstr(err, "MISMATCH"), "%s", err);
	ck_assert_msg(strstr(err, hostkey_fp[0]) && strstr(err, hostkey_fp[1]), "%s", err);
	/* it gave up before authenticating: the server never saw our key */
	log = read_text(srv.log);
	ck_assert_msg(!strstr(log, "auth succeeded"), "%s", log);
	free(log);
}
END_TEST

START_TEST(test_known_hosts)
{
	struct ssh_push_target t = target(&srv, "n3", -1);
	struct ssh_push_hostkey hk;
	struct ssh_push_session *s;
	struct server other;
	char *kh = path("state/known_hosts/n3"), err[1024] = "", *before, *after, *want;
	int r;

	t.known_hosts_path = kh;
	r = ssh_push_connect(&t, &s, &hk, err, sizeof(err));
	ck_assert_msg(r == 0, "%s", err);
	ck_assert_int_eq(hk.trust, SSH_PUSH_TRUST_RECORDED);
	ck_assert_str_eq(hk.fingerprint, hostkey_fp[0]);
	ssh_push_close(s);
	before = read_text(kh);
	want = xasprintf("n3 %s\n", hostkey_blob[0]);
	ck_assert_str_eq(before, want);
	/* OpenSSH finds it by the guest's name */
	sh("ssh-keygen -F n3 -f %s >/dev/null", kh);

	r = ssh_push_connect(&t, &s, &hk, err, sizeof(err));
	ck_assert_msg(r == 0, "%s", err);
	ck_assert_int_eq(hk.trust, SSH_PUSH_TRUST_KNOWN);
	ssh_push_close(s);

	/* the same guest now answers with key B: refused, loudly */
	other = server_start(1);
	t.port = other.port;
	r = ssh_push_connect(&t, &s, &hk, err, sizeof(err));
	ck_assert_int_eq(r, -EBADMSG);
	ck_assert_msg(strstr(err, "guest n3 (") && strstr(err, "CHANGED") && strstr(err, kh), "%s",
		      err);
	ck_assert_msg(strstr(err, hostkey_fp[0]) && strstr(err, hostkey_fp[1]), "%s", err);
	after = read_text(kh);
	ck_assert_str_eq(after, before); /* not replaced */
	server_stop(&other);
	free(before);
	free(after);
	free(want);
	free(kh);
}
END_TEST

START_TEST(test_unreachable)
{
	struct ssh_push_target t = target(&srv, "ghost", 0);
	struct ssh_push_session *s;
	char err[1024] = "", *who;
	int fd, r;

	/* a closed port */
	fd = loopback_socket(&t.port, 0);
	close(fd);
	t.timeout_ms = 2000;
	r = ssh_push_connect(&t, &s, NULL, err, sizeof(err));
	ck_assert_int_eq(r, -ECONNREFUSED);
	who = xasprintf("guest ghost (root@127.0.0.1:%d): cannot connect", t.port);
	ck_assert_msg(strstr(err, who), "%s", err);
	free(who);

	/* a port that accepts (the kernel's backlog) and never speaks */
	fd = loopback_socket(&t.port, 1);
	t.timeout_ms = 1000;
	r = ssh_push_connect(&t, &s, NULL, err, sizeof(err));
	ck_assert_int_eq(r, -ETIMEDOUT);
	who = xasprintf("guest ghost (root@127.0.0.1:%d): cannot connect within 1000 ms", t.port);
	ck_assert_msg(strstr(err, who), "%s", err);
	free(who);
	close(fd);
}
END_TEST

START_TEST(test_stalls_time_out)
{
	struct ssh_push_target t = target(&srv, "n4", 0);
	struct ssh_push_file files[4];
	struct ssh_push_session *s;
	char *local = path("h4"), *remote = path("stall-here"), err[1024] = "", *out = NULL;
	int status, r;

	make_harness(local, files);
	t.timeout_ms = 1000;
	s = connect_ok(&t);
	/* the guest's tar never reads: the window closes, the write gives up */
	r = ssh_push_harness(s, remote, files, 4, NULL, err, sizeof(err));
	ck_assert_int_eq(r, -ETIMEDOUT);
	ck_assert_msg(strstr(err, "guest n4 (") && strstr(err, "stopped reading"), "%s", err);
	ssh_push_close(s);

	/* a command that runs silently longer than the timeout */
	s = connect_ok(&t);
	r = ssh_push_exec(s, "sleep 3", &out, &status, err, sizeof(err));
	ck_assert_int_eq(r, -ETIMEDOUT);
	ck_assert_msg(strstr(err, "guest n4 (") && strstr(err, "`sleep 3` neither printed"), "%s", err);
	ck_assert_ptr_null(out);
	ssh_push_close(s);
	for (int i = 0; i < 3; i++)
		free((char *)files[i].local_path);
	free(remote);
	free(local);
}
END_TEST

START_TEST(test_refusals)
{
	struct ssh_push_target t = target(&srv, "n5", 0);
	struct ssh_push_file f = { "x", 0644, NULL, "x", 1 };
	struct ssh_push_file bad = { "../x", 0644, NULL, "x", 1 };
	struct ssh_push_session *s;
	char *state = path("stranger"), *priv, *pub, err[1024] = "";
	int r;

	/* a key the guest does not know */
	ck_assert_int_eq(ssh_key_ensure(state, &priv, &pub, err, sizeof(err)), 0);
	t.private_key_path = priv;
	r = ssh_push_connect(&t, &s, NULL, err, sizeof(err));
	ck_assert_int_eq(r, -EACCES);
	ck_assert_msg(strstr(err, "guest n5 (") && strstr(err, "authorized_keys"), "%s", err);

	/* a folder the guest's mkdir cannot make: tar's complaint comes back */
	t.private_key_path = client_key;
	s = connect_ok(&t);
	r = ssh_push_harness(s, "/proc/lockstep-nope", &f, 1, NULL, err, sizeof(err));
	ck_assert_int_eq(r, -EIO);
	ck_assert_msg(strstr(err, "guest n5 (") && strstr(err, "/proc/lockstep-nope"), "%s", err);
	/* a name that could escape the folder is refused before sending */
	r = ssh_push_harness(s, "/tmp/x", &bad, 1, NULL, err, sizeof(err));
	ck_assert_int_eq(r, -EINVAL);
	ck_assert_msg(strstr(err, "../x"), "%s", err);
	ssh_push_close(s);
	free(priv);
	free(pub);
	free(state);
}
END_TEST

START_TEST(test_detached_start)
{
	struct ssh_push_target t = target(&srv, "n6", 0);
	struct ssh_push_file f = { "agent", 0755, NULL,
				   "#!/bin/busybox sh\necho started $1\nexec sleep 30\n", 0 };
	struct ssh_push_session *s;
	char *remote = path("guest-n6"), *cmd, *out = NULL, err[1024] = "", want[64];
	long pid = 0;
	int status, r;

	f.len = strlen(f.data);
	t.timeout_ms = 3000;
	s = connect_ok(&t);
	ck_assert_int_eq(ssh_push_harness(s, remote, &f, 1, NULL, err, sizeof(err)), 0);
	/* returns once the session's shell is gone, though the agent runs on
	 * for half a minute; a held channel would end in -ETIMEDOUT instead */
	r = ssh_push_start_detached(s, remote, "./agent 'a b'", "agent.log", &pid, err, sizeof(err));
	ck_assert_msg(r == 0, "%s", err);
	ck_assert_int_gt(pid, 1);
	ssh_push_close(s);

	/* a new session finds it alive, in a session of its own */
	s = connect_ok(&t);
	cmd = xasprintf("kill -0 %ld && cut -d' ' -f6 /proc/%ld/stat && cat %s/agent.log", pid, pid,
			remote);
	r = ssh_push_exec(s, cmd, &out, &status, err, sizeof(err));
	ck_assert_msg(r == 0 && status == 0, "%s", err);
	snprintf(want, sizeof(want), "%ld\nstarted a b\n", pid);
	ck_assert_str_eq(out, want);
	free(out);
	free(cmd);
	cmd = xasprintf("kill %ld", pid);
	ck_assert_int_eq(ssh_push_exec(s, cmd, NULL, &status, err, sizeof(err)), 0);
	ck_assert_int_eq(status, 0);
	ssh_push_close(s);
	free(cmd);
	free(remote);
}
END_TEST

/* hostd runs one uv_queue_work job per guest: sessions in parallel threads */
struct par_job {
	pthread_t thread;
	int idx, r, status;
	char node[16], err[1024], *out;
};

static void *par_main(void *arg)
{
	struct par_job *j = arg;
	struct ssh_push_target t = target(&srv, j->node, 0);
	char *id = xasprintf("job %d\n", j->idx), *remote = path("par-%d", j->idx), *cmd;
	struct ssh_push_file files[2] = {
		{ "id", 0644, NULL, id, strlen(id) },
		{ "big", 0644, NULL, NULL, 0 },
	};
	struct ssh_push_session *s = NULL;

	files[1].local_path = path("par-big");
	cmd = xasprintf("cat %s/id && cmp %s/big %s && echo same", remote, remote, files[1].local_path);
	j->r = ssh_push_connect(&t, &s, NULL, j->err, sizeof(j->err));
	if (j->r == 0)
		j->r = ssh_push_harness(s, remote, files, 2, NULL, j->err, sizeof(j->err));
	if (j->r == 0)
		j->r = ssh_push_exec(s, cmd, &j->out, &j->status, j->err, sizeof(j->err));
	ssh_push_close(s);
	free((char *)files[1].local_path);
	free(cmd);
	free(remote);
	free(id);
	return NULL;
}

START_TEST(test_parallel_sessions)
{
	struct par_job jobs[4];
	char want[32];

	sh("head -c %d /dev/urandom > %s/par-big", BIG_SIZE, T);
	for (int i = 0; i < 4; i++) {
		memset(&jobs[i], 0, sizeof(jobs[i]));
		jobs[i].idx = i;
		snprintf(jobs[i].node, sizeof(jobs[i].node), "p%d", i);
		ck_assert_int_eq(pthread_create(&jobs[i].thread, NULL, par_main, &jobs[i]), 0);
	}
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_join(jobs[i].thread, NULL), 0);
	for (int i = 0; i < 4; i++) {
		ck_assert_msg(jobs[i].r == 0 && jobs[i].status == 0, "job %d: %d %s", i, jobs[i].r,
			      jobs[i].err);
		snprintf(want, sizeof(want), "job %d\nsame\n", i);
		ck_assert_str_eq(jobs[i].out, want);
		free(jobs[i].out);
	}
}
END_TEST

int main(void)
{
	Suite *su = suite_create("ssh_push");
	TCase *key = tcase_create("key"), *net = tcase_create("ssh");
	SRunner *sr;
	int failed;

	tcase_add_test(key, test_key_made_once);
	tcase_add_test(key, test_key_from_console);
	tcase_add_checked_fixture(net, srv_setup, srv_teardown);
	tcase_add_test(net, test_push_and_exec);
	tcase_add_test(net, test_wrong_pinned_key);
	tcase_add_test(net, test_known_hosts);
	tcase_add_test(net, test_unreachable);
	tcase_add_test(net, test_stalls_time_out);
	tcase_add_test(net, test_refusals);
	tcase_add_test(net, test_detached_start);
	tcase_add_test(net, test_parallel_sessions);
	suite_add_tcase(su, key);
	suite_add_tcase(su, net);

	if (geteuid() != 0) {
		/* 77: meson's "skipped"; CI and the lab machines run as root */
		fprintf(stderr, "test-ssh-push: needs root for dropbear's mount namespace\n");
		return 77;
	}
	/* one world for every case: keys and the fake guest's files */
	world_setup();
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	world_teardown();
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
