// SPDX-License-Identifier: GPL-2.0-or-later
#include "monitor_ext.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "session.h"
#include "utf8.h"

#define MEXT_ARGS_MAX 64
/* An output line's bytes besides the data, as the agent's step output. */
#define MEXT_ESCAPED_MAX (PROTO_LINE_MAX - 512)
/* Reads per run and wake-up, so that a chatty monitor cannot starve the
 * channel; after it exited, enough to empty a full pipe. */
#define MEXT_READS 16
#define MEXT_DRAIN_READS 32

static char mext_buf[4 + 64 * 1024];
static char mext_chunk[PROTO_OUTPUT_MAX + 1];
/* PATH of the monitors: as command steps have it (step.c), worked out once */
static char mext_path[2 * PATH_MAX + 16];
/* TERMINFO of the monitors when the agent wrote one, else "" */
static char mext_terminfo[PATH_MAX + 16];

/*
 * procps top reads a terminal description even in batch mode (TERM unset:
 * "dumb") and exits 1 without a word when there is none, as in the busybox
 * demo guest.  This is terminfo's "dumb" (am, cols#80, bel, cr) in the
 * compiled legacy format, as tic writes it: header, names, booleans,
 * numbers, string offsets, string table.
 */
static const unsigned char mext_dumb[] = {
	0x1a, 0x01, 0x18, 0x00, 0x02, 0x00, 0x01, 0x00, 0x03, 0x00, 0x04, 0x00, 'd',
	'u',  'm',  'b',  '|',	'8',  '0',  '-',  'c',	'o',  'l',  'u',  'm',	'n',
	' ',  'd',  'u',  'm',	'b',  ' ',  't',  't',	'y',  0x00, 0x00, 0x01, 0x50,
	0x00, 0xff, 0xff, 0x00, 0x00, 0x02, 0x00, 0x07, 0x00, 0x0d, 0x00,
};

/* Writes dir/terminfo/d/dumb when the system has no "dumb" of its own. */
static void mext_make_terminfo(const char *dir)
{
	static const char *const system[] = {
		"/etc/terminfo/d/dumb",
		"/lib/terminfo/d/dumb",
		"/usr/share/terminfo/d/dumb",
	};
	char path[PATH_MAX + 32];
	ssize_t n;
	int fd;

	if (getenv("TERMINFO"))
		return;
	for (size_t i = 0; i < sizeof(system) / sizeof(system[0]); i++)
		if (access(system[i], R_OK) == 0)
			return;
	snprintf(path, sizeof(path), "%s/terminfo", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/terminfo/d", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/terminfo/d/dumb", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	n = write(fd, mext_dumb, sizeof(mext_dumb));
	if (close(fd) == 0 && n == (ssize_t)sizeof(mext_dumb))
		snprintf(mext_terminfo, sizeof(mext_terminfo), "%s/terminfo", dir);
}

/* <the agent's folder>/bin first when it exists, as step.c does for
 * command steps: hostd pushes the monitor binaries there. */
static void mext_make_path(void)
{
	char exe[PATH_MAX];
	struct stat st;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *old = getenv("PATH");
	char *slash;

	/* busybox sh's own default when the agent got no PATH */
	if (!old || !*old)
		old = "/sbin:/usr/sbin:/bin:/usr/bin";
	snprintf(mext_path, sizeof(mext_path), "%s", old);
	if (n <= 0)
		return;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return;
	*slash = '\0';
	mext_make_terminfo(exe);
	snprintf(slash, sizeof(exe) - (size_t)(slash - exe), "/bin");
	if (stat(exe, &st) == 0 && S_ISDIR(st.st_mode))
		snprintf(mext_path, sizeof(mext_path), "%s:%s", exe, old);
}

void mext_init(struct mext *x, struct session *sess)
{
	memset(x, 0, sizeof(*x));
	x->tfd = -1;
	for (unsigned i = 0; i < MEXT_RUNS; i++)
		x->run[i].out_fd = -1;
	x->sess = sess;
	mext_make_path();
}

void mext_update(struct mext *x)
{
	const struct session *s = x->sess;

	if (x->gen == s->mon_gen)
		return;
	x->gen = s->mon_gen;
	x->n = s->mon_count <= PROTO_MONITORS_MAX ? s->mon_count : PROTO_MONITORS_MAX;
	for (unsigned i = 0; i < x->n; i++) {
		snprintf(x->name[i], sizeof(x->name[i]), "%s", s->mon_name[i]);
		snprintf(x->command[i], sizeof(x->command[i]), "%s", s->mon_command[i]);
	}
	log_info("external monitors: %u from the host", x->n);
}

__attribute__((format(printf, 3, 4))) static void mext_report(struct mext *x, uint32_t step,
							      const char *fmt, ...)
{
	char text[PROTO_TEXT_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	log_warn("monitor %s", text);
	sess_monitor_error(x->sess, step, text);
}

/* ---- output -------------------------------------------------------------- */

static void mext_forward(struct mext *x, struct mext_run *r, const char *text, size_t n)
{
	const char *name = x->name[r->mon];

	while (n && !r->truncated) {
		size_t room = MEXT_OUTPUT_CAP - r->forwarded;
		size_t k = utf8_chunk_len(text, n, room < PROTO_OUTPUT_MAX ? room : PROTO_OUTPUT_MAX,
					  MEXT_ESCAPED_MAX);

		if (!k) {
			int len = snprintf(mext_chunk, sizeof(mext_chunk),
					   "\n[guestagent: monitor output truncated after %zu bytes]\n",
					   r->forwarded);

			sess_monitor_output(x->sess, r->step, name, mext_chunk, (size_t)len);
			r->truncated = true;
			break;
		}
		sess_monitor_output(x->sess, r->step, name, text, k);
		r->forwarded += k;
		text += k;
		n -= k;
	}
}

/* Reads what the run's pipe holds; at its end (or final) the carry too. */
static void mext_read(struct mext *x, struct mext_run *r, int reads, bool final)
{
	for (int i = 0; r->out_fd >= 0 && i < reads; i++) {
		ssize_t n;
		size_t total, done;

		memcpy(mext_buf, r->carry, r->ncarry);
		n = read(r->out_fd, mext_buf + r->ncarry, sizeof(mext_buf) - r->ncarry);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		total = r->ncarry + (n > 0 ? (size_t)n : 0);
		done = utf8_sanitize(mext_buf, total, n <= 0);
		r->ncarry = total - done;
		memcpy(r->carry, mext_buf + done, r->ncarry);
		mext_forward(x, r, mext_buf, done);
		if (n <= 0) {
			close(r->out_fd);
			r->out_fd = -1;
		}
	}
	if (final && r->out_fd >= 0) {
		/* a process it left behind keeps the pipe: not waited for */
		close(r->out_fd);
		r->out_fd = -1;
	}
	if (final && r->ncarry) {
		r->ncarry = utf8_sanitize(r->carry, r->ncarry, true);
		mext_forward(x, r, r->carry, r->ncarry);
		r->ncarry = 0;
	}
}

/* ---- starting and stopping ----------------------------------------------- */

/* Whether name runs: a path, or a file on mext_path. */
static bool mext_found(const char *name)
{
	char dir[PATH_MAX + 80];
	const char *p = mext_path;

	if (strchr(name, '/'))
		return access(name, X_OK) == 0;
	while (*p) {
		size_t len = strcspn(p, ":");

		snprintf(dir, sizeof(dir), "%.*s/%s", (int)(len < PATH_MAX ? len : PATH_MAX), p, name);
		if (len && access(dir, X_OK) == 0)
			return true;
		p += len + (p[len] == ':');
	}
	return false;
}

static void __attribute__((noreturn)) mext_child(char **argv, int out_fd, int close_fd)
{
	sigset_t none;
	int null_fd = open("/dev/null", O_RDONLY);

	/* the agent blocks SIGCHLD/SIGTERM/SIGINT and ignores SIGPIPE */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	setpgid(0, 0);
	if (close_fd >= 0)
		close(close_fd);
	if (dup2(out_fd, STDOUT_FILENO) < 0 || dup2(out_fd, STDERR_FILENO) < 0)
		_exit(127);
	if (null_fd >= 0 && null_fd != STDIN_FILENO) {
		dup2(null_fd, STDIN_FILENO);
		close(null_fd);
	}
	setenv("PATH", mext_path, 1);
	if (mext_terminfo[0]) {
		setenv("TERMINFO", mext_terminfo, 1);
		setenv("TERM", "dumb", 1);
	}
	execvp(argv[0], argv);
	dprintf(STDERR_FILENO, "guestagent: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

static struct mext_run *mext_free_run(struct mext *x)
{
	for (unsigned i = 0; i < MEXT_RUNS; i++)
		if (x->run[i].pid <= 0 && x->run[i].out_fd < 0)
			return &x->run[i];
	return NULL;
}

static void mext_spawn(struct mext *x, unsigned mon, uint32_t step, int close_fd)
{
	char words[PROTO_TEXT_MAX], *argv[MEXT_ARGS_MAX], *save = NULL;
	struct mext_run *r = mext_free_run(x);
	int fds[2], n = 0;
	pid_t pid;

	if (!r) {
		mext_report(x, step, "%s: cannot start: %d monitors are still stopping",
			    x->name[mon], MEXT_RUNS);
		return;
	}
	snprintf(words, sizeof(words), "%s", x->command[mon]);
	for (char *w = strtok_r(words, " ", &save); w && n < MEXT_ARGS_MAX - 1;
	     w = strtok_r(NULL, " ", &save))
		argv[n++] = w;
	argv[n] = NULL;
	if (!n || !mext_found(argv[0])) {
		mext_report(x, step, "%s: cannot start: %s is not on PATH (%s)", x->name[mon],
			    n ? argv[0] : "(empty command)", mext_path);
		return;
	}
	if (pipe2(fds, O_CLOEXEC) < 0) {
		mext_report(x, step, "%s: cannot start: pipe: %s", x->name[mon], strerror(errno));
		return;
	}
	pid = fork();
	if (pid < 0) {
		mext_report(x, step, "%s: cannot start: fork: %s", x->name[mon], strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (pid == 0)
		mext_child(argv, fds[1], close_fd);
	/* also here, so that a stop right after the fork reaches the group */
	setpgid(pid, pid);
	close(fds[1]);
	fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
	memset(r, 0, sizeof(*r));
	r->pid = pid;
	r->out_fd = fds[0];
	r->mon = mon;
	r->step = step;
}

void mext_step_start(struct mext *x, uint32_t step, int close_fd)
{
	mext_update(x);
	for (unsigned i = 0; i < x->n; i++)
		mext_spawn(x, i, step, close_fd);
}

static void mext_arm(struct mext *x)
{
	struct itimerspec it = { 0 };
	int64_t first = 0;

	for (unsigned i = 0; i < MEXT_RUNS; i++)
		if (x->run[i].pid > 0 && x->run[i].kill_at && (!first || x->run[i].kill_at < first))
			first = x->run[i].kill_at;
	if (first && x->tfd < 0)
		x->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (x->tfd < 0)
		return;
	it.it_value.tv_sec = first / 1000000000LL;
	it.it_value.tv_nsec = first % 1000000000LL;
	timerfd_settime(x->tfd, TFD_TIMER_ABSTIME, &it, NULL);
}

void mext_step_end(struct mext *x, uint32_t step)
{
	bool any = false;

	for (unsigned i = 0; i < MEXT_RUNS; i++) {
		struct mext_run *r = &x->run[i];

		if (r->pid <= 0 || r->stopping || r->step != step)
			continue;
		r->stopping = true;
		/* as Ctrl-C: perf stat prints its totals */
		kill(-r->pid, SIGINT);
		r->kill_at = clock_mono_ns() + MEXT_KILL_NS;
		any = true;
	}
	if (any)
		mext_arm(x);
}

/* ---- the loop's side ----------------------------------------------------- */

void mext_poll(const struct mext *x, struct pollfd *p)
{
	for (unsigned i = 0; i < MEXT_RUNS; i++) {
		p[i].fd = x->run[i].out_fd;
		p[i].events = POLLIN;
		p[i].revents = 0;
	}
	p[MEXT_RUNS].fd = x->tfd;
	p[MEXT_RUNS].events = POLLIN;
	p[MEXT_RUNS].revents = 0;
}

static void mext_kill_due(struct mext *x)
{
	int64_t now = clock_mono_ns();
	uint64_t ticks;

	while (read(x->tfd, &ticks, sizeof(ticks)) < 0 && errno == EINTR)
		;
	/* one that left already is no news (a SIGCHLD may have gone to
	 * step_kill's wait) */
	mext_reap(x);
	for (unsigned i = 0; i < MEXT_RUNS; i++) {
		struct mext_run *r = &x->run[i];

		if (r->pid <= 0 || !r->kill_at || r->kill_at > now)
			continue;
		mext_report(x, r->step, "%s: still running %lld ms after SIGINT; killed",
			    x->name[r->mon], MEXT_KILL_NS / 1000000);
		kill(-r->pid, SIGKILL);
		r->kill_at = 0;
	}
	mext_arm(x);
}

void mext_handle(struct mext *x, const struct pollfd *p)
{
	for (unsigned i = 0; i < MEXT_RUNS; i++)
		if (p[i].revents && x->run[i].out_fd >= 0)
			mext_read(x, &x->run[i], MEXT_READS, false);
	if (p[MEXT_RUNS].revents && x->tfd >= 0)
		mext_kill_due(x);
}

static void mext_ended(struct mext *x, struct mext_run *r, int st)
{
	mext_read(x, r, MEXT_DRAIN_READS, true);
	if (!r->stopping) {
		if (WIFSIGNALED(st))
			mext_report(x, r->step, "%s: killed by signal %d during step %" PRIu32,
				    x->name[r->mon], WTERMSIG(st), r->step);
		else
			mext_report(x, r->step, "%s: exited with status %d during step %" PRIu32,
				    x->name[r->mon], WEXITSTATUS(st), r->step);
	}
	r->pid = 0;
	r->kill_at = 0;
}

void mext_reap(struct mext *x)
{
	for (unsigned i = 0; i < MEXT_RUNS; i++) {
		struct mext_run *r = &x->run[i];
		int st;

		if (r->pid > 0 && waitpid(r->pid, &st, WNOHANG) == r->pid)
			mext_ended(x, r, st);
	}
}

void mext_fini(struct mext *x)
{
	for (unsigned i = 0; i < MEXT_RUNS; i++) {
		struct mext_run *r = &x->run[i];

		if (r->pid > 0) {
			kill(-r->pid, SIGKILL);
			while (waitpid(r->pid, NULL, 0) < 0 && errno == EINTR)
				;
		}
		if (r->out_fd >= 0)
			close(r->out_fd);
		r->pid = 0;
		r->out_fd = -1;
	}
	if (x->tfd >= 0)
		close(x->tfd);
	x->tfd = -1;
}
