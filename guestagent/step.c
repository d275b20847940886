// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "step.h"
#include "aclock.h"

void step_run_init(struct step_run *r)
{
	memset(r, 0, sizeof(*r));
	r->pid = -1;
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

static void __attribute__((noreturn)) step_child_cpu(uint64_t units, int report_fd, int close_fd)
{
	int64_t t[2];

	if (close_fd >= 0)
		close(close_fd);
	t[0] = clock_mono_ns();
	step_cpu_work(units);
	t[1] = clock_mono_ns();
	/* Under PIPE_BUF: one atomic write or nothing. */
	if (write(report_fd, t, sizeof(t)) != (ssize_t)sizeof(t))
		_exit(1);
	_exit(0);
}

static void __attribute__((noreturn)) step_child_command(const char *command, int workdir_fd,
							  int out_fd)
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

int step_start(struct step_run *r, const struct proto_step *st, int workdir_fd, int close_fd)
{
	int fds[2];
	pid_t pid;
	int err;

	step_run_init(r);
	r->kind = st->kind;
	r->units = st->units;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	r->start_ns = aclock_now();
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(fds[0]);
		close(fds[1]);
		return err;
	}
	if (pid == 0) {
		step_child_signals();
		close(fds[0]);
		if (st->kind == PROTO_STEP_CPU_PROBE)
			step_child_cpu(st->units, fds[1], close_fd);
		step_child_command(st->command, workdir_fd, fds[1]);
	}
	/* Also here, so that a kill right after fork reaches the group. */
	setpgid(pid, pid);
	close(fds[1]);
	r->pid = pid;
	if (st->kind == PROTO_STEP_CPU_PROBE) {
		r->report_fd = fds[0];
	} else {
		fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
		r->out_fd = fds[0];
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

	if (r->report_fd < 0)
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

void step_run_close(struct step_run *r)
{
	if (r->out_fd >= 0)
		close(r->out_fd);
	if (r->report_fd >= 0)
		close(r->report_fd);
	r->out_fd = -1;
	r->report_fd = -1;
}
