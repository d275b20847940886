// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "achan.h"
#include "agent.h"
#include "aclock.h"
#include "clock.h"
#include "log.h"
#include "monitor_ext.h"
#include "proto.h"
#include "ptp.h"
#include "sampler.h"
#include "session.h"
#include "step.h"
#include "stepgroup.h"
#include "sysfacts.h"
#include "utf8.h"

#define AGENT_BACKOFF_MIN_NS (100 * 1000000LL)
#define AGENT_BACKOFF_MAX_NS (5 * NSEC_PER_SEC)
/* Output of one step forwarded to the host at most; the rest is dropped. */
#define AGENT_OUTPUT_CAP (1024 * 1024)
/* An output line's bytes besides the data: {"v":1,"type":"output",...}. */
#define AGENT_OUTPUT_ESCAPED_MAX (PROTO_LINE_MAX - 512)
/* Reads of a step's output per wake-up, so a chatty step cannot starve
 * pings; and after it exited, enough to empty the largest pipe (1 MiB)
 * without chasing a process it left behind that keeps writing. */
#define AGENT_OUTPUT_READS 16
#define AGENT_DRAIN_READS 32
/* A pass of the loop (everything but its wait) longer than this is said:
 * the agent was held up in a call that should not block (a fork under
 * memory pressure, a log write behind a busy disk), and a go that came
 * meanwhile waited for it (issue 19). */
#define AGENT_STALL_NS (100 * 1000000LL)
/* How long a leaving agent tries to get its bye out. */
#define AGENT_BYE_WAIT_NS (NSEC_PER_SEC)

struct agent {
	struct achan chan;
	struct proto_decoder dec;
	struct outq q;
	struct session sess;
	struct step_run run;
	bool prepared;	     /* run holds a child waiting for the go of the step we wait at */
	bool prepare_failed; /* no child could be prepared: fork at the go */
	bool running;	     /* run holds a released step not yet reported done */
	bool started;	     /* started has been sent for it */
	int64_t go_rx_ns;    /* when the go of the running step was read */
	int sigfd;
	int workdir_fd;
	bool leaving;
	int exit_code;
	bool up;	   /* the channel is open and the host is there */
	int64_t reopen_at; /* not up: when to try again */
	int64_t backoff_ns;
	unsigned open_failures;
	int64_t rx_ns; /* when the bytes being decoded were read */
	char carry[4]; /* a UTF-8 sequence cut by the end of a read */
	size_t ncarry;
	size_t forwarded; /* output bytes of this step sent */
	bool truncated;
	struct ptp_clock ptp; /* the KVM PTP clock, when sess.ptp points to it */
	struct sampler mon;   /* built-in monitors, while the plan asks */
	uint32_t mon_asked;   /* the interval last asked of it (once, even if it failed) */
	struct mext mext;     /* external monitors, as the host names them */
	struct stepgroup grp; /* the step's group and cgroup, and what it leaves */
	bool grp_warned;      /* said once why a step has no cgroup */
};

/* Big buffers off the stack; one agent per process. */
static char agent_rx[64 * 1024];
static char agent_out[sizeof(((struct agent *)0)->carry) + 64 * 1024];
static char agent_chunk[PROTO_OUTPUT_MAX + 1];

static void agent_disconnected(struct agent *a, const char *why, bool hard);
static void agent_step_cleanup(struct agent *a, bool report);
static void agent_check_started(struct agent *a, bool ended);

static void agent_flush(struct agent *a)
{
	int r;

	if (!a->up || !outq_writable(&a->q))
		return;
	r = outq_flush(&a->q, a->chan.fd);
	if (r < 0)
		agent_disconnected(a, strerror(-r), r != -EPIPE);
}

/* ---- the running step ---- */

static void agent_forward(struct agent *a, const char *text, size_t n)
{
	while (n && !a->truncated) {
		size_t room = AGENT_OUTPUT_CAP - a->forwarded;
		size_t k = utf8_chunk_len(text, n, room < PROTO_OUTPUT_MAX ? room : PROTO_OUTPUT_MAX,
					  AGENT_OUTPUT_ESCAPED_MAX);

		if (!k) {
			int len = snprintf(agent_chunk, sizeof(agent_chunk),
					   "\n[guestagent: output truncated after %zu bytes]\n",
					   a->forwarded);

			log_warn("step %" PRIu32 ": output truncated after %zu bytes",
				 sess_current_step(&a->sess), a->forwarded);
			sess_step_output(&a->sess, agent_chunk, (size_t)len);
			a->truncated = true;
			break;
		}
		memcpy(agent_chunk, text, k);
		agent_chunk[k] = '\0';
		sess_step_output(&a->sess, agent_chunk, k);
		a->forwarded += k;
		text += k;
		n -= k;
	}
}

/* Reads the step's output; drain: all there is now, the step has ended. */
static void agent_read_output(struct agent *a, bool drain)
{
	int reads = drain ? AGENT_DRAIN_READS : AGENT_OUTPUT_READS;

	for (int i = 0; a->run.out_fd >= 0 && i < reads; i++) {
		ssize_t n;
		size_t total, done;

		memcpy(agent_out, a->carry, a->ncarry);
		n = read(a->run.out_fd, agent_out + a->ncarry, sizeof(agent_out) - a->ncarry);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		total = a->ncarry + (n > 0 ? (size_t)n : 0);
		done = utf8_sanitize(agent_out, total, n <= 0);
		a->ncarry = total - done;
		memcpy(a->carry, agent_out + done, a->ncarry);
		agent_forward(a, agent_out, done);
		if (n <= 0) {
			close(a->run.out_fd);
			a->run.out_fd = -1;
		}
	}
}

static void agent_step_results(struct agent *a, int32_t status, int64_t *end_ns)
{
	int64_t begin = a->run.start_ns;
	double secs;

	if (a->run.kind == PROTO_STEP_CPU_PROBE) {
		/* Numbers from a probe that did not finish would be wrong. */
		if (status != 0 || step_cpu_times(&a->run, &begin, end_ns) < 0)
			return;
		secs = (double)(*end_ns - begin) / NSEC_PER_SEC;
		sess_step_result(&a->sess, "ops_per_sec",
				 secs > 0 ? (double)a->run.units / secs : 0, "ops/s", true);
	} else {
		secs = (double)(*end_ns - begin) / NSEC_PER_SEC;
	}
	sess_step_result(&a->sess, "elapsed", secs, "s", false);
}

/* The child has been reaped: report it and move on to the next step. */
static void agent_step_finished(struct agent *a)
{
	int64_t end = aclock_now();
	int32_t status = step_exit_status(a->run.wstatus);
	uint32_t step = sess_current_step(&a->sess);
	size_t dropped;

	agent_check_started(a, true);
	/* What it wrote before exiting is in the pipe; what a process it left
	 * behind writes later is not waited for. */
	agent_read_output(a, true);
	if (a->ncarry) {
		a->ncarry = utf8_sanitize(a->carry, a->ncarry, true);
		agent_forward(a, a->carry, a->ncarry);
		a->ncarry = 0;
	}
	agent_step_results(a, status, &end);
	/* the step's last interval, so that its samples cover all of it */
	sampler_take(&a->mon, &a->sess, step, true);
	mext_step_end(&a->mext, step);
	step_run_close(&a->run);
	a->running = false;
	agent_step_cleanup(a, true);
	dropped = outq_take_dropped(&a->q);
	if (dropped)
		log_warn("step %" PRIu32 ": %zu output lines dropped: the host is not reading",
			 step, dropped);
	log_info("step %" PRIu32 " done: exit status %" PRId32 ", %.6f s", step, status,
		 (double)(end - a->run.start_ns) / NSEC_PER_SEC);
	sess_step_done(&a->sess, end, status);
}

/* The step the session waits at, if any. */
static const struct proto_step *agent_waiting_step(const struct agent *a)
{
	if (a->sess.phase != SESS_WAITING || a->sess.cur >= a->sess.nsteps)
		return NULL;
	return &a->sess.steps[a->sess.cur];
}

/* The agent's children that are not the step's: they are not leftovers. */
static size_t agent_known_children(const struct agent *a, pid_t *out)
{
	size_t n = 0;

	for (unsigned i = 0; i < MEXT_RUNS; i++)
		if (a->mext.run[i].pid > 0)
			out[n++] = a->mext.run[i].pid;
	return n;
}

/*
 * Kills and reaps what the step that just ended left behind (issue 20),
 * and tells the host: before done, so that it is recorded with the step.
 */
static void agent_step_cleanup(struct agent *a, bool report)
{
	pid_t known[MEXT_RUNS];
	char desc[PROTO_TEXT_MAX / 2], text[PROTO_TEXT_MAX];
	uint32_t step = a->grp.step;
	size_t left = stepgroup_end(&a->grp, known, agent_known_children(a, known), a->sigfd, desc,
				    sizeof(desc));

	/* a SIGCHLD of a monitor may have been read while waiting */
	mext_reap(&a->mext);
	if (left) {
		snprintf(text, sizeof(text), "step %" PRIu32 " left %zu process%s: %s; killed",
			 step, left, left == 1 ? "" : "es", desc);
		log_warn("%s", text);
		if (report)
			sess_step_error(&a->sess, "leftover", text);
	}
	if (a->grp.pids_hits) {
		snprintf(text, sizeof(text),
			 "step %" PRIu32 " hit its limit of %" PRIu64
			 " processes (pids.max) %" PRIu64 " times: forks failed",
			 step, a->grp.pids_max, a->grp.pids_hits);
		log_warn("%s", text);
		if (report)
			sess_step_error(&a->sess, "pids-limit", text);
	}
}

/* Forks the child of st and puts it in a group (and cgroup) of its own. */
static int agent_fork_step(struct agent *a, const struct proto_step *st)
{
	char why[PATH_MAX + 64];
	int r = step_prepare(&a->run, st, a->workdir_fd, a->chan.fd);

	if (r < 0)
		return r;
	if (stepgroup_enter(&a->grp, st->index, a->run.pid, why, sizeof(why)) < 0 && !a->grp_warned) {
		a->grp_warned = true;
		log_info("steps run in a process group of their own, without a cgroup: %s", why);
	}
	return 0;
}

static void agent_discard_prepared(struct agent *a)
{
	if (!a->prepared)
		return;
	log_debug("discarding the child prepared for step %" PRIu32, a->run.index);
	step_discard(&a->run);
	a->prepared = false;
	agent_step_cleanup(a, false);
}

/*
 * Forks the child of the step we wait at, so that the go only has to hand
 * it the instant; and discards one that no longer matches the plan.  Run
 * before the ready is flushed: the fork then delays the ready, which the
 * barrier waits for anyway, and not the go.  Run after, the last node's go
 * came while it forked (under load, milliseconds), after the instant: the
 * tail of the skew (issue 21).
 */
static void agent_prepare(struct agent *a)
{
	const struct proto_step *st = agent_waiting_step(a);
	int r;

	if (a->running)
		return;
	if (a->prepared && (!st || !step_prepared_for(&a->run, st)))
		agent_discard_prepared(a);
	if (!st) {
		a->prepare_failed = false;
		step_hold_priority(false);
		return;
	}
	/* Waiting for the go (blocked in poll: no cost): boosted, so that
	 * reading it does not queue behind the machine's other work; the
	 * fork too, so that the ready goes out sooner (the child does not
	 * inherit it) */
	step_hold_priority(true);
	if (!a->prepared && !a->prepare_failed) {
		r = agent_fork_step(a, st);
		if (r < 0) {
			log_warn("cannot prepare step %" PRIu32 ": %s; trying again at its go",
				 st->index, strerror(-r));
			a->prepare_failed = true;
		} else {
			a->prepared = true;
			log_debug("step %" PRIu32 " prepared (pid %d)", st->index, (int)a->run.pid);
		}
	}
}

/* Hands the go to the prepared child, or to one forked now if there is
 * none or it died.  0 or -errno. */
static int agent_release(struct agent *a, const struct proto_step *st, int64_t at_ns)
{
	int r;

	for (int tries = 0; tries < 2; tries++) {
		if (a->prepared && !step_prepared_for(&a->run, st))
			agent_discard_prepared(a);
		if (!a->prepared) {
			r = agent_fork_step(a, st);
			if (r < 0)
				return r;
			a->prepared = true;
		}
		r = step_go(&a->run, at_ns);
		if (r == 0) {
			a->prepared = false;
			return 0;
		}
		log_warn("the child prepared for step %" PRIu32 " is gone; forking another", st->index);
		agent_discard_prepared(a);
	}
	return r;
}

static void agent_start_step(struct agent *a, const struct sess_action *act)
{
	const struct proto_step *st = act->step;
	int r;

	a->prepare_failed = false;
	r = agent_release(a, st, act->at_ns);
	/* the child (boosted as we were) runs once we yield */
	step_hold_priority(false);
	if (r < 0) {
		char text[PROTO_TEXT_MAX];
		int64_t now = aclock_now();

		snprintf(text, sizeof(text), "cannot start step %" PRIu32 ": %s", st->index,
			 strerror(-r));
		log_error("%s", text);
		sess_step_started(&a->sess, now, 0, NULL);
		sess_step_error(&a->sess, "step-start", text);
		sess_step_done(&a->sess, now, 127);
		return;
	}
	a->running = true;
	a->started = false;
	a->go_rx_ns = a->rx_ns;
	a->ncarry = 0;
	a->forwarded = 0;
	a->truncated = false;
	log_debug("step %" PRIu32 " released for %" PRId64, st->index, act->at_ns);
}

/*
 * The child's start stamp: sends started.  ended: the child has been
 * reaped, so whatever it wrote is there.  A child that died before its
 * start (killed from outside) still gets a started, stamped now.
 */
static void agent_check_started(struct agent *a, bool ended)
{
	const struct proto_step *st = &a->sess.steps[a->sess.cur];
	int r;

	if (!a->running || a->started)
		return;
	r = step_read_stamp(&a->run);
	if (r == -EAGAIN && !ended)
		return;
	a->started = true;
	if (r < 0) {
		a->run.start_ns = aclock_now();
		a->run.late_ns = 0;
		log_warn("step %" PRIu32 ": its process ended before it started", st->index);
		sess_step_started(&a->sess, a->run.start_ns, 0, NULL);
		sess_step_error(&a->sess, "step-start", "the step's process ended before it started");
		return;
	}
	struct sess_start_timing timing = { .agent_go_ns = a->go_rx_ns,
					    .child_go_ns = a->run.child_go_ns,
					    .runq_ns = a->run.runq_ns };
	sess_step_started(&a->sess, a->run.start_ns, a->run.late_ns, &timing);
	/* After the start, not before: sampling must not delay it. */
	sampler_take(&a->mon, &a->sess, 0, true);
	mext_step_start(&a->mext, st->index, a->chan.fd);
	log_info("step %" PRIu32 " started (%s, iteration %" PRIu32 ", %s), %" PRId64 " ns late",
		 st->index, st->benchmark, st->iteration,
		 st->kind == PROTO_STEP_CPU_PROBE ? "cpu-probe" : "command", a->run.late_ns);
}

/* ---- leaving ---- */

/* Gives a bye (and whatever is before it) up to a second to get out. */
static void agent_flush_blocking(struct agent *a)
{
	int64_t deadline = clock_mono_ns() + AGENT_BYE_WAIT_NS;

	while (a->up && outq_writable(&a->q)) {
		struct pollfd p = { .fd = a->chan.fd, .events = POLLOUT };
		int64_t left = deadline - clock_mono_ns();

		if (left <= 0 || poll(&p, 1, (int)((left + 999999) / 1000000)) <= 0)
			return;
		if (outq_flush(&a->q, a->chan.fd) < 0)
			return;
	}
}

static void agent_leave(struct agent *a, int code, const char *bye_reason)
{
	mext_fini(&a->mext);
	if (a->running) {
		log_info("stopping step %" PRIu32, sess_current_step(&a->sess));
		step_kill(&a->run, a->sigfd);
		step_run_close(&a->run);
		a->running = false;
		agent_step_cleanup(a, false);
	}
	agent_discard_prepared(a);
	if (bye_reason && a->up) {
		sess_bye(&a->sess, bye_reason);
		agent_flush_blocking(a);
	}
	a->leaving = true;
	a->exit_code = code;
}

/* ---- the channel ---- */

static void agent_schedule_reopen(struct agent *a)
{
	a->reopen_at = clock_mono_ns() + a->backoff_ns;
	a->backoff_ns *= 2;
	if (a->backoff_ns > AGENT_BACKOFF_MAX_NS)
		a->backoff_ns = AGENT_BACKOFF_MAX_NS;
}

/*
 * The host went away.  A virtio-serial port stays open (FACTS.md: what the
 * host sends while the guest has the port closed is lost) and is looked at
 * again after the back-off; a socket, or a port that failed (hard), is
 * closed and opened again.  An fd we were given cannot be: we are done.
 */
static void agent_disconnected(struct agent *a, const char *why, bool hard)
{
	if (a->chan.mode == ACHAN_FD) {
		log_info("the host closed the channel (%s); leaving", why);
		a->up = false;
		agent_leave(a, 0, NULL);
		achan_close(&a->chan);
		return;
	}
	a->up = false;
	proto_decoder_reset(&a->dec);
	if (a->chan.is_socket || hard) {
		log_info("lost the host on %s (%s); reopening", a->chan.path, why);
		achan_close(&a->chan);
	} else {
		log_info("the host is not connected to %s (%s); waiting for it", a->chan.path, why);
	}
	agent_schedule_reopen(a);
}

/* A port whose host side is not connected polls as POLLHUP. */
static bool agent_host_absent(const struct agent *a)
{
	struct pollfd p = { .fd = a->chan.fd, .events = POLLIN | POLLOUT };

	return !a->chan.is_socket && poll(&p, 1, 0) == 1 && (p.revents & POLLHUP);
}

static void agent_open(struct agent *a)
{
	const char *what = a->chan.mode == ACHAN_FD	? "fd"
			   : a->chan.mode == ACHAN_PATH ? a->chan.path
							: "port " ACHAN_PORT_NAME;
	int r = a->chan.fd >= 0 && a->chan.mode != ACHAN_FD ? 0 : achan_open(&a->chan);

	if (r < 0 && (!achan_error_transient(r) || a->chan.mode == ACHAN_FD)) {
		log_error("cannot open channel %s: %s", what, strerror(-r));
		agent_leave(a, 1, NULL);
		return;
	}
	if (r < 0 || agent_host_absent(a)) {
		if (a->open_failures++ == 0)
			log_warn("channel %s: %s; waiting", what,
				 r < 0 ? strerror(-r) : "the host is not connected");
		agent_schedule_reopen(a);
		return;
	}
	log_info("channel %s open", a->chan.mode == ACHAN_FD ? "fd" : a->chan.path);
	a->up = true;
	a->reopen_at = 0;
	a->open_failures = 0;
	sess_connected(&a->sess);
	agent_flush(a);
}

static void agent_on_event(void *ctx, enum proto_event ev, struct proto_msg *m, int err,
			   const char *detail)
{
	struct agent *a = ctx;
	struct sess_action act;

	if (a->leaving || !a->up)
		return;
	switch (ev) {
	case PROTO_EV_RESET: sess_peer_reset(&a->sess); break;
	case PROTO_EV_ERROR: sess_bad_input(&a->sess, err, detail); break;
	case PROTO_EV_MSG:
		act = sess_input(&a->sess, m, a->rx_ns);
		if (a->sess.monitor_interval_ms != a->mon_asked) {
			int r = sampler_set(&a->mon, a->sess.monitor_interval_ms);

			a->mon_asked = a->sess.monitor_interval_ms;
			if (r < 0)
				log_error("cannot start the monitors' timer: %s; no samples",
					  strerror(-r));
		}
		if (act.kind == SESS_ACT_RUN)
			agent_start_step(a, &act);
		else if (act.kind == SESS_ACT_EXIT)
			agent_leave(a, 0, NULL);
		break;
	}
}

static void agent_read_channel(struct agent *a, bool hup)
{
	for (;;) {
		ssize_t n = read(a->chan.fd, agent_rx, sizeof(agent_rx));

		if (n > 0) {
			a->rx_ns = aclock_now();
			/* The host is there: the next outage starts from a short wait. */
			a->backoff_ns = AGENT_BACKOFF_MIN_NS;
			proto_decoder_feed(&a->dec, agent_rx, (size_t)n, agent_on_event, a);
			if (a->leaving || !a->up)
				return;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (hup)
				agent_disconnected(a, "hang-up", false);
			return;
		}
		agent_disconnected(a, n == 0 ? "end of file" : strerror(errno), n < 0);
		return;
	}
}

/* ---- the loop ---- */

static void agent_signals(struct agent *a)
{
	struct signalfd_siginfo si;
	bool chld = false;
	int term = 0;

	while (read(a->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			chld = true;
		else
			term = (int)si.ssi_signo;
	}
	if (term) {
		log_info("got %s; leaving", strsignal(term));
		agent_leave(a, 0, term == SIGINT ? "agent interrupted" : "agent terminated");
		return;
	}
	if (chld)
		mext_reap(&a->mext);
	if (chld && a->running && step_reap(&a->run))
		agent_step_finished(a);
	if (chld && a->prepared && step_reap(&a->run)) {
		log_warn("the child prepared for step %" PRIu32
			 " ended before its go (status %" PRId32 "); forking at the go",
			 a->run.index, step_exit_status(a->run.wstatus));
		step_run_close(&a->run);
		a->prepared = false;
		a->prepare_failed = true;
		agent_step_cleanup(a, false);
	}
}

static int agent_poll_timeout(const struct agent *a)
{
	int64_t left;

	if (a->up)
		return -1;
	left = a->reopen_at - clock_mono_ns();
	return left <= 0 ? 0 : (int)((left + 999999) / 1000000);
}

/* One wait and what it brought; tests drive the agent through this. */
static void agent_loop_once(struct agent *a)
{
	struct pollfd p[5 + MEXT_NFDS] = {
		{ .fd = a->sigfd, .events = POLLIN },
		{ .fd = a->up ? a->chan.fd : -1, .events = POLLIN },
		{ .fd = a->running ? a->run.out_fd : -1, .events = POLLIN },
		{ .fd = sampler_fd(&a->mon), .events = POLLIN },
		{ .fd = a->running && !a->started ? a->run.report_fd : -1, .events = POLLIN },
	};

	mext_poll(&a->mext, p + 5);
	if (outq_writable(&a->q))
		p[1].events |= POLLOUT;
	int64_t woke;

	if (poll(p, 5 + MEXT_NFDS, agent_poll_timeout(a)) < 0 && errno != EINTR) {
		log_error("poll: %s", strerror(errno));
		agent_leave(a, 1, NULL);
		return;
	}
	woke = clock_mono_ns();
	if (p[0].revents)
		agent_signals(a);
	/* The stamp is written before any output: started goes first. */
	if (!a->leaving && (p[4].revents || p[2].revents))
		agent_check_started(a, false);
	if (!a->leaving && p[2].revents && a->running && a->started)
		agent_read_output(a, false);
	if (!a->leaving)
		mext_handle(&a->mext, p + 5);
	if (!a->leaving && p[3].revents)
		sampler_take(&a->mon, &a->sess, a->running ? sess_current_step(&a->sess) : 0, false);
	if (!a->leaving && a->up && (p[1].revents & (POLLIN | POLLHUP | POLLERR)))
		agent_read_channel(a, p[1].revents & (POLLHUP | POLLERR));
	if (!a->leaving && !a->up && clock_mono_ns() >= a->reopen_at)
		agent_open(a);
	if (!a->leaving)
		agent_prepare(a);
	if (!a->leaving)
		agent_flush(a);
	if (a->q.bytes > OUTQ_HARD_MAX) {
		log_error("the host has not read %zu queued bytes; giving up", a->q.bytes);
		agent_leave(a, 1, NULL);
	}
	if (clock_mono_ns() - woke > AGENT_STALL_NS)
		log_warn("one pass of the agent's loop took %" PRId64 " ms (at step %" PRIu32
			 ", %s): something it called was held up",
			 (clock_mono_ns() - woke) / 1000000, sess_current_step(&a->sess),
			 a->running ? "running" : "waiting");
}

static void agent_loop(struct agent *a)
{
	while (!a->leaving)
		agent_loop_once(a);
}

static uint64_t agent_seed(void)
{
	uint64_t seed;

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) == (ssize_t)sizeof(seed))
		return seed;
	/* Early boot without entropy: nonces need only differ per restart. */
	return (uint64_t)clock_real_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)clock_mono_ns();
}

/* A --sysfs-root that has a clocksource says which one this node reports
 * (tests: a guest on jiffies or hpet, on a host that has tsc). */
static void agent_clocksource_under_root(const char *root, char *cs, size_t len)
{
	char path[PATH_MAX], buf[PROTO_SHORT_MAX];
	ssize_t n;
	int fd;

	if (!root || !*root)
		return;
	snprintf(path, sizeof(path),
		 "%s/sys/devices/system/clocksource/clocksource0/"
		 "current_clocksource",
		 root);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	snprintf(cs, len, "%s", buf);
}

/* The KVM PTP clock, when the guest has one: its readings ride on pongs. */
static void agent_ptp_open(struct agent *a, const struct agent_opts *o)
{
	char dev[PATH_MAX];
	int r;

	if (o->ptp_synthetic) {
		ptp_open_synthetic(&a->ptp, o->ptp_synthetic_ns);
		log_warn("using a synthetic KVM PTP clock (tests only): realtime %" PRId64
			 " ns behind the host's",
			 o->ptp_synthetic_ns);
		a->sess.ptp = &a->ptp;
		return;
	}
	if (o->no_ptp)
		return;
	r = ptp_find_kvm(o->root && *o->root ? o->root : "", dev, sizeof(dev));
	if (r == -ENOENT) {
		log_info("no KVM PTP clock (ptp_kvm); the host measures this clock by ping/pong");
		return;
	}
	if (r == 0)
		r = ptp_open(&a->ptp, dev);
	if (r < 0) {
		log_warn("cannot use the KVM PTP clock %s: %s; the host measures this clock by "
			 "ping/pong",
			 dev, r == -ENODEV ? "no such device node" : strerror(-r));
		return;
	}
	log_info("KVM PTP clock %s (%s): pongs carry the host's time", dev,
		 ptp_method_name(a->ptp.method));
	a->sess.ptp = &a->ptp;
}

static void agent_identity(const struct agent_opts *o, struct sess_identity *id)
{
	struct sysfacts f;
	int r;

	memset(id, 0, sizeof(*id));
	snprintf(id->node, sizeof(id->node), "%s", o->node);
	memset(&f, 0, sizeof(f));
	r = sysfacts_read(&f, "/");
	if (r < 0)
		log_warn("cannot read this system's facts: %s; boot id and clock source unknown",
			 strerror(-r));
	snprintf(id->boot_id, sizeof(id->boot_id), "%s", f.boot_id);
	snprintf(id->clocksource, sizeof(id->clocksource), "%s", f.clocksource);
	/* uname's release has at most 64 bytes */
	snprintf(id->kernel, sizeof(id->kernel), "%.*s", (int)sizeof(id->kernel) - 1, f.kernel);
	agent_clocksource_under_root(o->root, id->clocksource, sizeof(id->clocksource));
	if (strcmp(id->clocksource, "tsc") && strcmp(id->clocksource, "kvm-clock"))
		log_warn("clock source is '%s', not tsc or kvm-clock: start instants are coarse",
			 id->clocksource);
}

/* Signals come through a signalfd, so the loop sleeps in one poll(2). */
static int agent_signalfd(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	/* A host that hangs up shows as EPIPE on write, not as a signal. */
	signal(SIGPIPE, SIG_IGN);
	return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

int agent_run(const struct agent_opts *o)
{
	static struct agent a; /* static: its buffers should not sit on the stack */
	struct sess_identity id;
	int code;

	memset(&a, 0, sizeof(a));
	a.sigfd = agent_signalfd();
	if (a.sigfd < 0) {
		log_error("cannot set up signal handling: %s", strerror(errno));
		return 1;
	}
	a.workdir_fd = open(o->work_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (a.workdir_fd < 0) {
		log_error("cannot open work folder %s: %s", o->work_dir, strerror(errno));
		close(a.sigfd);
		return 1;
	}
	agent_identity(o, &id);
	outq_init(&a.q);
	sess_init(&a.sess, &a.q, &id, agent_seed());
	agent_ptp_open(&a, o);
	proto_decoder_init(&a.dec);
	step_run_init(&a.run);
	sampler_init(&a.mon, o->proc_root);
	mext_init(&a.mext, &a.sess);
	stepgroup_init(&a.grp, o->root, o->step_pids_max, o->step_memory_max);
	log_info("steps: %s; pids.max %" PRIu64 ", memory.max %" PRIu64 " bytes (0: none)",
		 stepgroup_describe(&a.grp, (char[PATH_MAX + 64]){ 0 }, PATH_MAX + 64),
		 o->step_pids_max, o->step_memory_max);
	a.chan.fd = -1;
	if (o->channel_fd >= 0) {
		a.chan.mode = ACHAN_FD;
		a.chan.fd = o->channel_fd;
	} else if (o->channel) {
		a.chan.mode = ACHAN_PATH;
		snprintf(a.chan.path, sizeof(a.chan.path), "%s", o->channel);
	} else {
		a.chan.mode = ACHAN_DISCOVER;
		a.chan.root = o->root;
	}
	a.backoff_ns = AGENT_BACKOFF_MIN_NS;
	log_info("guestagent %s, node %s, boot %s, clock source %s", LOCKSTEP_VERSION, id.node,
		 id.boot_id[0] ? id.boot_id : "?", id.clocksource[0] ? id.clocksource : "?");
	agent_open(&a);
	agent_loop(&a);
	code = a.exit_code;
	mext_fini(&a.mext);
	stepgroup_fini(&a.grp);
	sampler_fini(&a.mon);
	achan_close(&a.chan);
	proto_decoder_free(&a.dec);
	sess_free(&a.sess);
	ptp_close(a.sess.ptp);
	outq_free(&a.q);
	close(a.workdir_fd);
	close(a.sigfd);
	return code;
}
