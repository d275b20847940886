// SPDX-License-Identifier: GPL-2.0-or-later
#include "monitor_ext.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "closer.h"
#include "uv_errno.h"
#include "xalloc.h"

#define MX_ARGS_MAX 160 /* trace-cmd: two per event */

_Static_assert(MONITOR_EXT_COUNT <= PROTO_MONITORS_MAX, "a guest takes every kind at once");
#define MX_DEFAULT_PERF_EVENTS "cpu-migrations,context-switches,task-clock"
#define MX_DEFAULT_FTRACE_EVENTS "sched:sched_switch sched:sched_wakeup sched:sched_migrate_task"

/* One monitor process, for one step. */
struct mx_run {
	uv_process_t proc;
	uv_timer_t kill;
	struct monitor_ext *m;
	int kind;
	uint32_t step;
	bool exited, stopping;
	int handles; /* open: proc and kill; freed at 0 */
};

struct monitor_ext {
	uv_loop_t *loop;
	struct monitor_settings s;
	char *dir;
	int dirfd; /* dir, opened once; -1: by its path */
	const struct runas *ra;
	monitor_ext_report_fn report;
	void *ctx;
	struct mx_run *cur[MONITOR_EXT_COUNT]; /* running for the current step */
	struct closer closer;		       /* a hold per run not yet freed */
};

__attribute__((format(printf, 4, 5))) static void mx_report(struct monitor_ext *m, int kind,
							    uint32_t step, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (m->report)
		m->report(m->ctx, monitor_ext_names[kind], step, what);
}

static void mx_destroy(void *obj)
{
	struct monitor_ext *m = obj;

	free(m->dir);
	if (m->dirfd >= 0)
		close(m->dirfd);
	free(m);
}

static void mx_closed(uv_handle_t *h)
{
	struct mx_run *run = h->data;
	struct monitor_ext *m = run->m;

	if (--run->handles)
		return;
	free(run);
	closer_release(&m->closer);
}

static void mx_release(struct mx_run *run)
{
	if (run->m->cur[run->kind] == run)
		run->m->cur[run->kind] = NULL;
	uv_close((uv_handle_t *)&run->proc, mx_closed);
	uv_close((uv_handle_t *)&run->kill, mx_closed);
}

static void mx_exit_cb(uv_process_t *p, int64_t status, int sig)
{
	struct mx_run *run = p->data;

	run->exited = true;
	uv_timer_stop(&run->kill);
	if (!run->stopping) {
		if (sig)
			mx_report(run->m, run->kind, run->step,
				  "killed by signal %d during step %u", sig, run->step);
		else
			mx_report(run->m, run->kind, run->step,
				  "exited with status %lld during step %u; see %s-step-%u.log",
				  (long long)status, run->step, monitor_ext_names[run->kind],
				  run->step);
	}
	mx_release(run);
}

static void mx_kill_cb(uv_timer_t *t)
{
	struct mx_run *run = t->data;

	if (!run->exited) {
		mx_report(run->m, run->kind, run->step, "still running %d ms after SIGINT; killed",
			  MONITOR_EXT_KILL_MS);
		kill(-run->proc.pid, SIGKILL);
	}
}

/* The monitor's own group gets the signal: perf and trace-cmd fork helpers. */
static void mx_stop(struct mx_run *run)
{
	if (!run || run->exited || run->stopping)
		return;
	run->stopping = true;
	if (run->m->cur[run->kind] == run)
		run->m->cur[run->kind] = NULL;
	kill(-run->proc.pid, SIGINT);
	uv_timer_start(&run->kill, mx_kill_cb, MONITOR_EXT_KILL_MS, 0);
}

/* Appends the NULL-terminated arguments that follow n to argv. */
static void mx_push(char **argv, int *n, ...)
{
	va_list ap;
	char *a;

	va_start(ap, n);
	while ((a = va_arg(ap, char *)) && *n < MX_ARGS_MAX - 1)
		argv[(*n)++] = a;
	va_end(ap);
	argv[*n] = NULL;
}

/* The command line of a kind; its strings live in buf.  dir: where
 * trace-cmd's data goes. */
static void mx_argv(const struct monitor_settings *s, const char *dir, int kind, uint32_t step,
		    char **argv, char *buf, size_t size)
{
	/* sysstat and procps take whole seconds; top and perf what was asked */
	unsigned secs = s->interval_ms >= 1500 ? (s->interval_ms + 500) / 1000 : 1;
	unsigned ms = s->interval_ms >= 10 ? s->interval_ms : 1000;
	char *interval = buf, *msecs = buf + 32, *dat = buf + 64, *events = buf + 512;
	char *perf = (char *)(s->perf_events[0] ? s->perf_events : MX_DEFAULT_PERF_EVENTS);
	int n = 0;

	snprintf(interval, 32, "%u", secs);
	snprintf(msecs, 32, "%u", ms);
	snprintf(dat, 448, "%s/trace-cmd-step-%u.dat", dir, step);
	snprintf(events, size - 512, "%s",
		 s->ftrace_events[0] ? s->ftrace_events : MX_DEFAULT_FTRACE_EVENTS);
	switch (kind) {
	case MONITOR_EXT_VMSTAT: mx_push(argv, &n, "vmstat", "-n", "-t", interval, NULL); break;
	case MONITOR_EXT_MPSTAT: mx_push(argv, &n, "mpstat", "-P", "ALL", interval, NULL); break;
	case MONITOR_EXT_IOSTAT: mx_push(argv, &n, "iostat", "-x", "-t", interval, NULL); break;
	case MONITOR_EXT_TOP:
		snprintf(interval, 32, "%.2f", ms / 1000.0);
		mx_push(argv, &n, "top", "-b", "-d", interval, NULL);
		break;
	case MONITOR_EXT_PERF_EVENT_STAT:
		mx_push(argv, &n, "perf", "stat", "-a", "-I", msecs, "-e", perf, NULL);
		break;
	case MONITOR_EXT_TRACE_CMD:
		mx_push(argv, &n, "trace-cmd", "record", "-o", dat, NULL);
		for (char *save = NULL, *e = strtok_r(events, " ", &save); e;
		     e = strtok_r(NULL, " ", &save))
			mx_push(argv, &n, "-e", e, NULL);
		break;
	}
}

/* Where util-linux's setpriv is: it runs a monitor with PR_SET_PDEATHSIG,
 * so that hostd dying (SIGKILL included) stops it as a normal end would
 * (SIGINT).  libuv offers no hook between fork and exec to set it. */
#define MX_SETPRIV "/usr/bin/setpriv"
#define MX_SETPRIV_ARGS 4

/* Whether a program is there to run (a name is looked up on PATH). */
static bool mx_runnable(const char *prog)
{
	const char *path = getenv("PATH");
	char full[4096];

	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0;
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t len = strcspn(p, ":");
		snprintf(full, sizeof(full), "%.*s/%s", (int)len, p, prog);
		if (len && access(full, X_OK) == 0)
			return true;
		p += len + (p[len] == ':');
	}
	return false;
}

/* argv prefixed with setpriv --pdeathsig INT --, when there is one; a
 * monitor that is not there is left to fail in uv_spawn, which says so. */
static void mx_die_with_hostd(char **argv)
{
	int n = 0;

	if (access(MX_SETPRIV, X_OK) < 0 || !mx_runnable(argv[0]))
		return;
	while (argv[n])
		n++;
	if (n + MX_SETPRIV_ARGS >= MX_ARGS_MAX)
		return;
	memmove(argv + MX_SETPRIV_ARGS, argv, (size_t)(n + 1) * sizeof(*argv));
	argv[0] = MX_SETPRIV;
	argv[1] = "--pdeathsig";
	argv[2] = "INT";
	argv[3] = "--";
}

static void mx_spawn(struct monitor_ext *m, int kind, uint32_t step)
{
	struct mx_run *run = xcalloc(1, sizeof(*run));
	uv_process_options_t o = { 0 };
	uv_stdio_container_t io[3];
	char *argv[MX_ARGS_MAX], buf[2048], *log;
	int fd, r;

	mx_argv(&m->s, m->dir, kind, step, argv, buf, sizeof(buf));
	mx_die_with_hostd(argv);
	log = xasprintf("%s/%s-step-%u.log", m->dir, monitor_ext_names[kind], step);
	if (m->dirfd >= 0)
		/* a folder the submitter may write into: nothing they put
		 * there is written through */
		fd = openat(m->dirfd, strrchr(log, '/') + 1,
			    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0640);
	else
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		mx_report(m, kind, step, "cannot start: %s: %s", log, strerror(errno));
		free(log);
		free(run);
		return;
	}
	free(log);
	io[0].flags = UV_IGNORE;
	io[1].flags = io[2].flags = UV_INHERIT_FD;
	io[1].data.fd = io[2].data.fd = fd;
	o.file = argv[0];
	o.args = argv;
	o.stdio = io;
	o.stdio_count = 3;
	o.exit_cb = mx_exit_cb;
	o.flags = UV_PROCESS_DETACHED; /* a group of its own, for the signals */
	run->m = m;
	run->kind = kind;
	run->step = step;
	run->handles = 2;
	run->proc.data = run->kill.data = run;
	uv_timer_init(m->loop, &run->kill);
	closer_hold(&m->closer);
	char **shim;
	runas_wrap(m->ra, &o, m->dir, &shim);
	r = errno_from_uv(uv_spawn(m->loop, &run->proc, &o));
	runas_free_args(shim);
	close(fd);
	if (r < 0) {
		mx_report(m, kind, step, "cannot start %s: %s", argv[0], strerror(-r));
		run->exited = true;
		mx_release(run);
		return;
	}
	m->cur[kind] = run;
}

struct monitor_ext *monitor_ext_new(uv_loop_t *loop, const struct monitor_settings *s,
				    const char *dir, monitor_ext_report_fn report, void *ctx)
{
	struct monitor_ext *m;

	if (!s->external)
		return NULL;
	m = xcalloc(1, sizeof(*m));
	m->loop = loop;
	m->s = *s;
	m->dir = xstrdup(dir);
	m->dirfd = -1;
	closer_init(&m->closer, mx_destroy, m);
	m->report = report;
	m->ctx = ctx;
	return m;
}

void monitor_ext_run_as(struct monitor_ext *m, const struct runas *ra, int dirfd)
{
	if (!m) {
		if (dirfd >= 0)
			close(dirfd);
		return;
	}
	m->ra = ra;
	m->dirfd = dirfd;
}

void monitor_ext_step_start(struct monitor_ext *m, uint32_t step)
{
	if (!m || m->closer.closing)
		return;
	for (int k = 0; k < MONITOR_EXT_COUNT; k++) {
		if (!(m->s.external & (1u << k)))
			continue;
		mx_stop(m->cur[k]);
		mx_spawn(m, k, step);
	}
}

void monitor_ext_step_end(struct monitor_ext *m, uint32_t step)
{
	if (!m)
		return;
	for (int k = 0; k < MONITOR_EXT_COUNT; k++)
		if (m->cur[k] && m->cur[k]->step == step)
			mx_stop(m->cur[k]);
}

void monitor_ext_close(struct monitor_ext *m, void (*done)(void *ctx), void *ctx)
{
	closer_close(m ? &m->closer : NULL, done, ctx);
	if (!m)
		return;
	for (int k = 0; k < MONITOR_EXT_COUNT; k++)
		mx_stop(m->cur[k]);
	closer_settle(&m->closer);
}

unsigned monitor_ext_guest_set(const struct monitor_settings *s, struct proto_msg *out, unsigned *skipped)
{
	char *argv[MX_ARGS_MAX], buf[2048];
	unsigned n = 0, count = 0;

	*skipped = 0;
	for (int k = 0; k < MONITOR_EXT_COUNT; k++)
		if ((s->external & (1u << k)) && k != MONITOR_EXT_TRACE_CMD)
			count++;
	for (int k = 0; k < MONITOR_EXT_COUNT; k++) {
		struct proto_msg *m = &out[n];
		size_t len = 0;

		if (!(s->external & (1u << k)))
			continue;
		/* its data file would stay in the guest: output only travels */
		if (k == MONITOR_EXT_TRACE_CMD) {
			*skipped |= 1u << k;
			continue;
		}
		mx_argv(s, "", k, 0, argv, buf, sizeof(buf));
		memset(m, 0, sizeof(*m));
		m->type = PROTO_MONITOR;
		m->version = PROTO_VERSION;
		m->u.monitor.index = ++n;
		m->u.monitor.count = count;
		snprintf(m->u.monitor.name, sizeof(m->u.monitor.name), "%s", monitor_ext_names[k]);
		/* words never hold a space: event names are checked for it */
		for (int i = 0; argv[i] && len < sizeof(m->u.monitor.command); i++)
			len += (size_t)snprintf(m->u.monitor.command + len,
						sizeof(m->u.monitor.command) - len, "%s%s",
						i ? " " : "", argv[i]);
	}
	return n;
}

unsigned monitor_ext_running(const struct monitor_ext *m)
{
	unsigned n = 0;

	for (int k = 0; m && k < MONITOR_EXT_COUNT; k++)
		n += m->cur[k] != NULL;
	return n;
}
