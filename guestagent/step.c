// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "step.h"
#include "aclock.h"

void step_run_init(struct step_run *r)
{
	memset(r, 0, sizeof(*r));
	r->pid = -1;
	r->go_fd = -1;
	r->out_fd = -1;
	r->report_fd = -1;
}

/* Where the work goes, so that the compiler must do every iteration. */
static volatile uint64_t step_sink;

uint64_t step_cpu_work(uint64_t units)
{
	uint64_t x = 0x9E3779B97F4A7C15ULL;

	/* xorshift64: a data dependency from each iteration to the next. */
	for (uint64_t i = 0; i < units; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		step_sink = x;
	}
	return x;
}

/* The agent blocks SIGCHLD/SIGTERM/SIGINT and ignores SIGPIPE; a child
 * must start from the defaults, which exec keeps. */
static void step_child_signals(void)
{
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	setpgid(0, 0);
}

static void __attribute__((noreturn)) step_child_cpu(uint64_t units, int report_fd)
{
	int64_t t[2];

	t[0] = clock_mono_ns();
	step_cpu_work(units);
	t[1] = clock_mono_ns();
	/* Under PIPE_BUF: one atomic write or nothing. */
	if (write(report_fd, t, sizeof(t)) != (ssize_t)sizeof(t))
		_exit(1);
	_exit(0);
}

static void __attribute__((noreturn))
step_child_command(const char *command, int workdir_fd, int out_fd)
{
	int null_fd = open("/dev/null", O_RDONLY);

	if (dup2(out_fd, STDOUT_FILENO) < 0 || dup2(out_fd, STDERR_FILENO) < 0)
		_exit(127);
	if (null_fd >= 0 && null_fd != STDIN_FILENO) {
		dup2(null_fd, STDIN_FILENO);
		close(null_fd);
	}
	if (fchdir(workdir_fd) < 0) {
		dprintf(STDERR_FILENO, "guestagent: cannot enter the work folder: %s\n",
			strerror(errno));
		_exit(127);
	}
	execl("/bin/sh", "sh", "-c", command, (char *)NULL);
	dprintf(STDERR_FILENO, "guestagent: cannot run /bin/sh: %s\n", strerror(errno));
	_exit(127);
}

/* The instant from the agent; false on end of file: the child was
 * discarded, or the agent died. */
static bool step_child_wait_go(int go_fd, int64_t *at_ns)
{
	ssize_t n;

	do
		n = read(go_fd, at_ns, sizeof(*at_ns));
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(*at_ns);
}

/* Tests only (step_test_hooks): the child blocks on hold before its set-up
 * and says when it has set up, so that a test can deliver the go at each
 * point of the prepare sequence without timing luck. */
static int step_hold_fd = -1, step_setup_fd = -1;

void step_test_hooks(int hold_fd, int setup_fd)
{
	step_hold_fd = hold_fd;
	step_setup_fd = setup_fd;
}

/* SCHED_FIFO priority of a prepared child from just before its sleep to
 * just after its start stamp (0: none).  Children woken at one instant
 * queue for the CPUs otherwise, and the last stamps late by the others'
 * work; a real-time waker takes its stamp at once.  Off by default. */
static int step_start_priority;

void step_set_start_priority(int priority)
{
	step_start_priority = priority;
}

/* The agent's own boost (step_hold_priority): whether it holds it. */
static bool step_agent_boosted;

bool step_hold_priority(bool on)
{
	if (step_start_priority <= 0 || on == step_agent_boosted)
		return step_agent_boosted;
	/* RESET_ON_FORK: nothing the agent forks (a step's child, a monitor's
	 * command) inherits it by accident */
	struct sched_param p = { .sched_priority = on ? step_start_priority : 0 };
	if (sched_setscheduler(0, (on ? SCHED_FIFO : SCHED_OTHER) | SCHED_RESET_ON_FORK, &p) == 0)
		step_agent_boosted = on;
	return step_agent_boosted;
}

static void step_child_sleep_until(int64_t at_ns)
{
	int64_t mono = aclock_to_mono(at_ns);
	struct timespec ts = { .tv_sec = mono / NSEC_PER_SEC, .tv_nsec = mono % NSEC_PER_SEC };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* The time this process has spent runnable but not running, from
 * /proc/self/schedstat (its second field, in ns); -1 when there is none
 * (no schedstats in the kernel, no /proc). */
static int64_t step_child_runq(int fd)
{
	char b[96];
	long long run, wait;
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, b, sizeof(b) - 1, 0);
	if (n <= 0)
		return -1;
	b[n] = '\0';
	if (sscanf(b, "%lld %lld", &run, &wait) != 2 || wait < 0)
		return -1;
	return wait;
}

/*
 * The prepared child: blocks (no CPU) until the go, sleeps until its
 * instant, stamps the start first thing on waking, then works.  Nothing
 * between the wake-up and the stamp but the clock read; the timing of the
 * start (when the go reached us, how long we queued for a CPU) is read
 * after the stamp.
 */
static void __attribute__((noreturn)) step_child(const struct step_run *r, pid_t agent, int go_fd,
						 int report_fd, int out_fd, int workdir_fd)
{
	int64_t at, reached, stamp[STEP_STAMP_WORDS];
	/* opened now: an open between the go and the stamp would delay it */
	int sched_fd = open("/proc/self/schedstat", O_RDONLY | O_CLOEXEC);
	int64_t runq0;

	/* The agent dying while we sleep towards the instant ends us too;
	 * while we block in read its death is an end of file. */
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0UL, 0UL, 0UL);
	if (step_setup_fd >= 0 && write(step_setup_fd, "s", 1) != 1)
		_exit(1);
	if (getppid() != agent)
		_exit(0);
	/* Boosted from before the wait, not from the go: blocked, it costs
	 * nothing, and on a busy machine an unboosted child woke from the
	 * pipe milliseconds after the agent wrote the go, after the instant
	 * (issue 21: the tail of the skew was this hand-off). */
	struct sched_param fifo = { .sched_priority = step_start_priority };
	bool boosted = step_start_priority > 0 && sched_setscheduler(0, SCHED_FIFO, &fifo) == 0;
	if (!step_child_wait_go(go_fd, &at))
		_exit(0);
	reached = aclock_now();
	/* The queueing counted starts at the go: counted from before the
	 * wait, a preemption on the way into it (a child just forked on a
	 * busy machine) would be blamed on the start.  The wake-up from the
	 * wait shows as child_go minus agent_go.  A pread, 2 us: before the
	 * sleep of a scheduled start, so only an immediate one pays it. */
	runq0 = step_child_runq(sched_fd);
	if (at)
		step_child_sleep_until(at);
	stamp[0] = aclock_now();
	/* at once, still boosted: a preemption after the stamp is not the
	 * start's queueing */
	int64_t runq1 = step_child_runq(sched_fd);
	if (boosted) {
		struct sched_param other = { .sched_priority = 0 };
		/* never run a benchmark real-time by accident */
		if (sched_setscheduler(0, SCHED_OTHER, &other) < 0)
			_exit(1);
	}
	/* Late only when the go itself reached us after the instant (the
	 * host should send it earlier); waking after it is skew, which the
	 * stamp shows by itself. */
	stamp[1] = at && reached > at && stamp[0] > at ? stamp[0] - at : 0;
	stamp[2] = reached;
	stamp[3] = runq0 >= 0 && runq1 >= runq0 ? runq1 - runq0 : -1;
	if (sched_fd >= 0)
		close(sched_fd);
	if (write(report_fd, stamp, sizeof(stamp)) != (ssize_t)sizeof(stamp))
		_exit(1);
	/* PR_SET_PDEATHSIG stays: the step's leader dies with the agent (it
	 * survives exec); the keeper (stepgroup.h) takes the rest. */
	close(go_fd);
	if (r->kind == PROTO_STEP_CPU_PROBE)
		step_child_cpu(r->units, report_fd);
	step_child_command(r->command, workdir_fd, out_fd);
}

static void step_close_fds(int *fds, int n)
{
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

static void step_set_nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/*
 * PATH for a command step: <the agent's folder>/bin first when it exists.
 * hostd pushes the binaries of HARNESS_BINARIES there (wrappers that run
 * them with their own loader and libraries), so that "hackbench -g 1"
 * finds them in a guest that has no hackbench, or no glibc.  Empty when
 * there is no such folder: the step gets the agent's PATH unchanged.
 */
static void step_command_path(char *out, size_t len)
{
	char exe[PATH_MAX], bin[PATH_MAX + 8];
	struct stat st;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *old = getenv("PATH");
	char *slash;

	out[0] = '\0';
	if (n <= 0)
		return;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return;
	*slash = '\0';
	snprintf(bin, sizeof(bin), "%s/bin", exe);
	if (stat(bin, &st) < 0 || !S_ISDIR(st.st_mode))
		return;
	/* busybox sh's own default when the agent got no PATH */
	snprintf(out, len, "%s:%s", bin, old && *old ? old : "/sbin:/usr/sbin:/bin:/usr/bin");
}

int step_prepare(struct step_run *r, const struct proto_step *st, int workdir_fd, int close_fd)
{
	char path[2 * PATH_MAX + 16] = "";
	/* go read, go write, report read, report write, output read, output write */
	int fds[6] = { -1, -1, -1, -1, -1, -1 };
	pid_t agent = getpid(), pid;
	int err;

	step_run_init(r);
	r->index = st->index;
	r->kind = st->kind;
	r->units = st->units;
	/* a copy: the plan (and its commands) may be replaced while the
	 * child waits for its go */
	snprintf(r->command, sizeof(r->command), "%s", st->command ? st->command : "");
	if (st->kind != PROTO_STEP_CPU_PROBE)
		step_command_path(path, sizeof(path));
	if (pipe2(fds, O_CLOEXEC) < 0 || pipe2(fds + 2, O_CLOEXEC) < 0 ||
	    (st->kind != PROTO_STEP_CPU_PROBE && pipe2(fds + 4, O_CLOEXEC) < 0)) {
		err = -errno;
		step_close_fds(fds, 6);
		return err;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		step_close_fds(fds, 6);
		return err;
	}
	if (pid == 0) {
		char c;

		if (step_hold_fd >= 0 && read(step_hold_fd, &c, 1) != 1)
			_exit(1);
		step_child_signals();
		/* Not the channel: a reconnect must not find it still held. */
		if (close_fd >= 0)
			close(close_fd);
		close(fds[1]);
		close(fds[2]);
		if (fds[4] >= 0)
			close(fds[4]);
		/* now, not after the go: nothing between the start and the exec */
		if (path[0] && setenv("PATH", path, 1) < 0)
			_exit(127);
		step_child(r, agent, fds[0], fds[3], fds[5], workdir_fd);
	}
	/* Also here, so that a kill right after fork reaches the group. */
	setpgid(pid, pid);
	/* Boosted from birth: forked into the normal class (the agent's
	 * boost resets on fork), a child on a busy machine first ran
	 * milliseconds later, and a go that came meanwhile waited for its
	 * set-up (issue 21).  It boosts itself too, and drops it at its
	 * stamp; failing here only leaves that. */
	if (step_start_priority > 0) {
		struct sched_param fifo = { .sched_priority = step_start_priority };
		sched_setscheduler(pid, SCHED_FIFO, &fifo);
	}
	close(fds[0]);
	close(fds[3]);
	if (fds[5] >= 0)
		close(fds[5]);
	r->pid = pid;
	r->go_fd = fds[1];
	r->report_fd = fds[2];
	step_set_nonblock(r->report_fd);
	r->out_fd = fds[4];
	if (r->out_fd >= 0)
		step_set_nonblock(r->out_fd);
	return 0;
}

bool step_prepared_for(const struct step_run *r, const struct proto_step *st)
{
	return r->pid > 0 && r->go_fd >= 0 && r->index == st->index && r->kind == st->kind &&
	       r->units == st->units && !strcmp(r->command, st->command ? st->command : "");
}

int step_go(struct step_run *r, int64_t at_ns)
{
	ssize_t n;

	if (r->go_fd < 0)
		return -EPIPE;
	do
		n = write(r->go_fd, &at_ns, sizeof(at_ns));
	while (n < 0 && errno == EINTR);
	close(r->go_fd);
	r->go_fd = -1;
	return n == (ssize_t)sizeof(at_ns) ? 0 : -EPIPE;
}

int step_read_stamp(struct step_run *r)
{
	int64_t stamp[STEP_STAMP_WORDS];
	ssize_t n;

	if (r->stamped)
		return 0;
	if (r->report_fd < 0)
		return -EIO;
	do
		n = read(r->report_fd, stamp, sizeof(stamp));
	while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return -EAGAIN;
	if (n != (ssize_t)sizeof(stamp))
		return -EIO;
	r->start_ns = stamp[0];
	r->late_ns = stamp[1] > 0 ? stamp[1] : 0;
	/* the child's own word, but sanity costs nothing here */
	r->child_go_ns = stamp[2] > 0 && stamp[2] <= stamp[0] ? stamp[2] : 0;
	r->runq_ns = stamp[3];
	r->stamped = true;
	/* A command's report pipe closed at its exec: nothing more comes. */
	if (r->kind != PROTO_STEP_CPU_PROBE) {
		close(r->report_fd);
		r->report_fd = -1;
	}
	return 0;
}

bool step_reap(struct step_run *r)
{
	int st;
	pid_t p;

	if (r->pid <= 0)
		return true;
	do
		p = waitpid(r->pid, &st, WNOHANG);
	while (p < 0 && errno == EINTR);
	if (p == 0)
		return false;
	/* p < 0 (ECHILD) cannot happen for our own child; treat it as gone. */
	r->wstatus = p > 0 ? st : 0;
	r->pid = -1;
	return true;
}

int step_cpu_times(struct step_run *r, int64_t *begin_ns, int64_t *end_ns)
{
	int64_t t[2];
	ssize_t n;

	/* The start stamp comes first on the same pipe. */
	if (!r->stamped || r->report_fd < 0)
		return -EIO;
	do
		n = read(r->report_fd, t, sizeof(t));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(t) || t[1] < t[0])
		return -EIO;
	*begin_ns = t[0];
	*end_ns = t[1];
	return 0;
}

int32_t step_exit_status(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return 255;
}

/* Sleeps until SIGCHLD or the deadline; other signals are dropped, since
 * the agent is leaving anyway. */
static void step_wait_sigchld(int sigfd, int64_t deadline)
{
	int64_t left = deadline - clock_mono_ns();
	struct signalfd_siginfo si;
	struct pollfd p = { .fd = sigfd, .events = POLLIN };

	if (left <= 0)
		return;
	if (poll(&p, 1, (int)((left + 999999) / 1000000)) > 0)
		while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			;
}

void step_kill(struct step_run *r, int sigfd)
{
	pid_t pgid = r->pid;
	int64_t deadline = clock_mono_ns() + STEP_KILL_GRACE_NS;

	if (r->pid <= 0)
		return;
	kill(-pgid, SIGTERM);
	kill(pgid, SIGTERM);
	while (!step_reap(r)) {
		if (clock_mono_ns() >= deadline) {
			kill(-pgid, SIGKILL);
			kill(pgid, SIGKILL);
			deadline = INT64_MAX;
		}
		step_wait_sigchld(sigfd, deadline == INT64_MAX ? clock_mono_ns() + NSEC_PER_SEC
							       : deadline);
	}
	/* Whatever the shell left behind in its group goes too. */
	kill(-pgid, SIGKILL);
}

void step_discard(struct step_run *r)
{
	if (r->pid > 0) {
		kill(r->pid, SIGKILL);
		while (waitpid(r->pid, NULL, 0) < 0 && errno == EINTR)
			;
		r->pid = -1;
	}
	step_run_close(r);
}

void step_run_close(struct step_run *r)
{
	if (r->go_fd >= 0)
		close(r->go_fd);
	r->go_fd = -1;
	if (r->out_fd >= 0)
		close(r->out_fd);
	if (r->report_fd >= 0)
		close(r->report_fd);
	r->out_fd = -1;
	r->report_fd = -1;
}
