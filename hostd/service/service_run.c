// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * An experiment's hostd: a child of the service, exec'd from the service's
 * own binary with the experiment's saved configs, its output appended to
 * the experiment's log.  The child gets SIGTERM if the service dies
 * (PR_SET_PDEATHSIG), so a SIGKILLed service never leaves a run going on
 * behind the queue's back; a restarted service waits for such an orphan to
 * end (pidfd) before it starts the next experiment.  Our own children end
 * through SIGCHLD.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exit_codes.h"
#include "fileio.h"
#include "log.h"
#include "service_priv.h"
#include "xalloc.h"

#define CHOWN_DEPTH_MAX 32

/* Field 22 of /proc/PID/stat: with the pid, names one process for good. */
static uint64_t proc_start_time(pid_t pid)
{
	char path[64], *text, *p;
	size_t len;
	unsigned long long v = 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (fileio_read_all(path, 4096, &text, &len) < 0)
		return 0;
	p = strrchr(text, ')'); /* the command may hold spaces and parentheses */
	if (p && sscanf(p + 1,
			" %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
			"%*d %*d %*d %*d %llu",
			&v) != 1)
		v = 0;
	free(text);
	return v;
}

static void log_line(struct service *s, const struct queue_exp *e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A line of the service's own in the experiment's log, for hostctl logs. */
static void log_line(struct service *s, const struct queue_exp *e, const char *fmt, ...)
{
	char path[PATH_MAX], line[1024];
	va_list ap;
	queue_path(s->root, e->id, "hostd.log", path, sizeof(path));
	int n = snprintf(line, sizeof(line), "hostd --service: ");
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
	if (fd >= 0) {
		fileio_write_all(fd, line, (size_t)n);
		close(fd);
	}
}

int service_results_check(const struct service *s, const struct queue_exp *e, char *why, size_t size)
{
	struct stat st, rs;
	int r = 0;
	int fd = open(e->results, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		snprintf(why, size, "cannot open the results folder %s: %s", e->results,
			 strerror(errno));
		return r;
	}
	fstat(fd, &st);
	bool shared = stat(s->set.results_root, &rs) == 0 && rs.st_dev == st.st_dev &&
		      rs.st_ino == st.st_ino;
	if (!shared && e->uid != 0 && st.st_uid != e->uid) {
		r = -EPERM;
		snprintf(why, size,
			 "the results folder %s belongs to uid %u, not to %s (uid %u): name "
			 "a folder of your own, or leave --results out for %s",
			 e->results, (unsigned)st.st_uid, e->user, e->uid, s->set.results_root);
	} else if (faccessat(fd, ".", W_OK, AT_EACCESS) < 0) {
		r = -errno;
		snprintf(why, size,
			 "the service (uid %u) cannot write into %s: %s; let it (chgrp "
			 "lockstep %s && chmod g+w %s) or leave --results out for %s",
			 (unsigned)geteuid(), e->results, strerror(errno), e->results, e->results,
			 s->set.results_root);
	} else if (e->run_name[0] && fstatat(fd, e->run_name, &rs, AT_SYMLINK_NOFOLLOW) == 0) {
		r = -EEXIST;
		snprintf(why, size, "%s/%s exists already: choose another --run-name", e->results,
			 e->run_name);
	}
	close(fd);
	return r;
}

/* Children first, the folder last: a service that is not root reads a
 * folder only while it is still its own. */
static int chown_tree(int dfd, uid_t uid, gid_t gid, int depth)
{
	int r = 0;
	int fd2 = dup(dfd);
	DIR *d = fd2 >= 0 ? fdopendir(fd2) : NULL;
	if (!d) {
		if (fd2 >= 0)
			close(fd2);
		return -errno;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		struct stat st;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		/* the submitter's already (their work folders, and whatever
		 * their programs made): left alone, not walked; a file with
		 * another name elsewhere (a hard link) is not ours to give */
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_uid == uid ||
		    (!S_ISDIR(st.st_mode) && st.st_nlink > 1))
			continue;
		int e = 0;
		if (!S_ISDIR(st.st_mode) || depth >= CHOWN_DEPTH_MAX) {
			if (fchownat(dfd, de->d_name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
				e = -errno;
		} else {
			/* O_NOFOLLOW: a link swapped in for a folder is not walked */
			int sub = openat(dfd, de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			e = sub < 0 ? -errno : chown_tree(sub, uid, gid, depth + 1);
			if (sub >= 0)
				close(sub);
		}
		if (e < 0 && !r)
			r = e;
	}
	closedir(d);
	if (fchown(dfd, uid, gid) < 0 && !r)
		r = -errno;
	return r;
}

/* The run folder becomes its submitter's.  The folder it is in was checked
 * to be theirs (or the shared RESULTS_ROOT) again here, and nothing below
 * it is followed through a link. */
static void give_results(struct service *s, struct queue_exp *e)
{
	char why[512];
	struct queue_exp probe = *e;
	probe.run_name[0] = '\0';
	if (e->uid == geteuid() && e->gid == getegid())
		return;
	if (service_results_check(s, &probe, why, sizeof(why)) == -EPERM) {
		log_error("experiment %" PRIu64 ": not giving %s/%s to %s: %s", e->id, e->results,
			  e->run_name, e->user, why);
		return;
	}
	int dfd = open(e->results, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int fd = dfd < 0 ? -1
			 : openat(dfd, e->run_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd >= 0)
		close(dfd);
	if (fd < 0)
		return; /* hostd made no run folder (a config error) */
	int r = chown_tree(fd, e->uid, e->gid, 0);
	close(fd);
	if (r < 0)
		log_warn("experiment %" PRIu64 ": cannot give %s/%s to %s (uid %u): %s%s", e->id,
			 e->results, e->run_name, e->user, e->uid, strerror(-r),
			 r == -EPERM ? " (the service needs CAP_CHOWN: see systemd/hostd.service)"
				     : "");
}

static void ended(struct service *s, struct queue_exp *e, enum queue_state st, int code,
		  const char *reason)
{
	e->state = st;
	e->exit_code = code;
	e->ended = (int64_t)time(NULL);
	e->pid = 0;
	e->pid_start = 0;
	snprintf(e->reason, sizeof(e->reason), "%s", reason ? reason : "");
	give_results(s, e);
	service_save(s, e);
	log_line(s, e, "experiment %" PRIu64 " %s, exit code %d%s%s", e->id, queue_state_name(st),
		 code, e->reason[0] ? ": " : "", e->reason);
	if (st == QUEUE_DONE)
		log_info("experiment %" PRIu64 " of %s done: %s/%s", e->id, e->user, e->results,
			 e->run_name);
	else
		log_warn("experiment %" PRIu64 " of %s %s (exit code %d)%s%s", e->id, e->user,
			 queue_state_name(st), code, e->reason[0] ? ": " : "", e->reason);
	service_exp_changed(s, e);
}

/* The running hostd ended with code (an orphan's cannot be known: it was
 * interrupted, and hostd says 2 for that). */
static void child_done(struct service *s, int code)
{
	struct queue_exp *e = s->cur;
	enum queue_state as = s->end_as != QUEUE_RUNNING ? s->end_as
			      : code == 0		 ? QUEUE_DONE
							 : QUEUE_FAILED;
	char reason[300] = "";
	if (as == QUEUE_FAILED)
		snprintf(reason, sizeof(reason), "hostd exited with %d (hostctl logs %" PRIu64 ")",
			 code, e->id);
	uv_timer_stop(&s->kill_timer);
	uv_timer_stop(&s->run_timer);
	if (s->killed || (s->end_as != QUEUE_RUNNING && code > 128)) {
		/* killed by our SIGKILL, or by our SIGTERM before it could take
		 * it: what hostd says when it ends on one, so that hostctl wait
		 * keeps to its codes */
		code = RUN_EXIT_FAILED;
	}
	s->killed = false;
	s->cur = NULL;
	s->child = 0;
	/* a stop of ours (cancel, RUN_TIMEOUT) says why it ended */
	ended(s, e, as, code, s->end_as == QUEUE_RUNNING ? reason : s->end_reason);
	if (!s->orphan_watch)
		service_schedule(s);
}

void service_run_sigchld(struct service *s)
{
	int st;
	if (!s->cur || !s->child_ours || waitpid(s->child, &st, WNOHANG) != s->child)
		return;
	child_done(s, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

static void on_orphan_closed(uv_handle_t *h)
{
	struct service *s = h->data;
	if (s->pidfd >= 0)
		close(s->pidfd);
	s->pidfd = -1;
	s->orphan_watch = false;
	service_schedule(s);
}

static void orphan_gone(struct service *s)
{
	if (s->pidfd >= 0) {
		uv_poll_stop(&s->orphan_poll);
		uv_close((uv_handle_t *)&s->orphan_poll, on_orphan_closed);
	} else {
		uv_timer_stop(&s->orphan_timer);
		uv_close((uv_handle_t *)&s->orphan_timer, on_orphan_closed);
	}
	child_done(s, RUN_EXIT_FAILED);
}

static void on_orphan_exit(uv_poll_t *h, int status, int events)
{
	(void)status;
	(void)events;
	orphan_gone(h->data);
}

/* Without pidfd_open (Linux < 5.3, valgrind) nothing tells us when a
 * process that is not our child ends: look now and then. */
static void on_orphan_tick(uv_timer_t *t)
{
	struct service *s = t->data;
	if (proc_start_time(s->child) != s->cur->pid_start)
		orphan_gone(s);
}

static void watch_orphan(struct service *s, pid_t pid)
{
	s->orphan_watch = true;
	s->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (s->pidfd >= 0) {
		uv_poll_init(s->loop, &s->orphan_poll, s->pidfd);
		s->orphan_poll.data = s;
		uv_poll_start(&s->orphan_poll, UV_READABLE, on_orphan_exit);
	} else {
		uv_timer_init(s->loop, &s->orphan_timer);
		s->orphan_timer.data = s;
		uv_timer_start(&s->orphan_timer, on_orphan_tick, 200, 200);
	}
}

/* STOP_TIMEOUT after the SIGTERM: a hostd that ignores it (hung in a
 * libvirt call, or not hostd at all) would hold the host and the queue for
 * good.  Its process group goes: its local guests and monitors with it. */
static void on_kill_timer(uv_timer_t *t)
{
	struct service *s = t->data;
	if (!s->cur || !s->child)
		return;
	/* an orphan is not ours to reap: its pid may be another's by now */
	if (!s->child_ours && proc_start_time(s->child) != s->cur->pid_start)
		return;
	double secs = (double)s->set.stop_timeout_ms / 1000;
	log_warn("experiment %" PRIu64 ": its hostd (pid %d) did not end %.1f s after SIGTERM "
		 "(STOP_TIMEOUT in %s): SIGKILL; guests it started under libvirt may be left "
		 "running (virsh list)",
		 s->cur->id, (int)s->child, secs, s->opt->settings_path);
	log_line(s, s->cur, "its hostd did not end %.1f s after SIGTERM: killed (SIGKILL)", secs);
	size_t n = strlen(s->end_reason);
	snprintf(s->end_reason + n, sizeof(s->end_reason) - n,
		 "; its hostd ignored SIGTERM for %.1f s and was killed (SIGKILL)", secs);
	s->killed = true;
	/* the group is the child's own (child_exec), or gone with it */
	kill(-s->child, SIGKILL);
	kill(s->child, SIGKILL);
}

static void arm_kill_timer(struct service *s)
{
	if (!uv_is_active((uv_handle_t *)&s->kill_timer))
		uv_timer_start(&s->kill_timer, on_kill_timer, s->set.stop_timeout_ms, 0);
}

/* The service's RUN_TIMEOUT: a cap whatever h.conf says (its own
 * RUN_TIMEOUT may only be shorter). */
static void on_run_timer(uv_timer_t *t)
{
	struct service *s = t->data;
	if (!s->cur || !s->child)
		return;
	char why[256];
	snprintf(why, sizeof(why), "it ran longer than RUN_TIMEOUT=%.0f s (in %s)",
		 (double)s->set.run_timeout_ms / 1000, s->opt->settings_path);
	log_line(s, s->cur, "%s: stopped", why);
	service_run_stop(s, QUEUE_FAILED, why);
}

void service_run_init(struct service *s)
{
	uv_timer_init(s->loop, &s->kill_timer);
	s->kill_timer.data = s;
	uv_timer_init(s->loop, &s->run_timer);
	s->run_timer.data = s;
}

void service_run_close(struct service *s)
{
	if (uv_is_closing((uv_handle_t *)&s->kill_timer))
		return;
	uv_timer_stop(&s->kill_timer);
	uv_close((uv_handle_t *)&s->kill_timer, NULL);
	uv_timer_stop(&s->run_timer);
	uv_close((uv_handle_t *)&s->run_timer, NULL);
}

void service_run_recover(struct service *s, struct queue_exp *e)
{
	const char *why = "the service stopped or died while it ran";
	if (!s->cur && e->pid > 0 && e->pid_start && proc_start_time(e->pid) == e->pid_start) {
		/* its hostd is still finishing: let it write its manifest, and
		 * start nothing before it is gone */
		log_warn("experiment %" PRIu64 ": its hostd (pid %d) outlived the service that ran "
			 "it; waiting for it to end (SIGKILL after STOP_TIMEOUT)",
			 e->id, e->pid);
		/* no SIGTERM of ours: it had the kernel's (PR_SET_PDEATHSIG), and
		 * hostd takes a second one, mid-finish, as "now": its manifest
		 * would stay "running" */
		s->cur = e;
		s->child = e->pid;
		s->child_ours = false;
		s->end_as = QUEUE_INTERRUPTED;
		snprintf(s->end_reason, sizeof(s->end_reason), "%s", why);
		watch_orphan(s, e->pid);
		arm_kill_timer(s);
		return;
	}
	ended(s, e, QUEUE_INTERRUPTED, RUN_EXIT_FAILED, why);
}

void service_run_stop(struct service *s, enum queue_state as, const char *reason)
{
	if (!s->cur || !s->child)
		return;
	if (s->end_as == QUEUE_RUNNING) {
		s->end_as = as;
		snprintf(s->end_reason, sizeof(s->end_reason), "%s", reason);
	}
	if (uv_is_active((uv_handle_t *)&s->kill_timer)) {
		/* a cancel, then a stop: one SIGTERM, as a second would cut its
		 * finish short (see service_run_recover) */
		log_info("experiment %" PRIu64 ": its hostd (pid %d) is stopping already: %s",
			 s->cur->id, (int)s->child, reason);
		return;
	}
	log_info("experiment %" PRIu64 ": SIGTERM to its hostd (pid %d): %s", s->cur->id,
		 (int)s->child, reason);
	/* hostd stops its guests, writes the manifest as interrupted, exits 2 */
	kill(s->child, SIGTERM);
	arm_kill_timer(s);
}

/* The child's side of the fork: only async-signal-safe calls until exec. */
static void child_exec(const char *self, pid_t parent, int logfd, char *const *argv)
{
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	/* results 0640/0750 (RESULTS_ROOT is shared); the submitter's group
	 * on the folders, and the files theirs at the end */
	umask(027);
	if (getppid() != parent)
		_exit(RUN_EXIT_FAILED); /* the service died before the prctl */
	setpgid(0, 0); /* the terminal's ^C is the service's to pass on, not the run's */
	signal(SIGPIPE, SIG_DFL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	int null = open("/dev/null", O_RDONLY);
	if (null >= 0)
		dup2(null, STDIN_FILENO);
	dup2(logfd, STDOUT_FILENO);
	dup2(logfd, STDERR_FILENO);
	execv(self, argv);
	static const char msg[] = "hostd --service: cannot exec hostd (HOSTD_BINARY?)\n";
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(127);
	_exit(127);
}

void service_run_start(struct service *s, struct queue_exp *e)
{
	char why[PATH_MAX + 512], hconf[PATH_MAX], gconf[PATH_MAX], logp[PATH_MAX],
		status[PATH_MAX], files[PATH_MAX], runas[64];
	char *hname = NULL, *gname = NULL;
	struct config_files *map = NULL;
	if (service_results_check(s, e, why, sizeof(why)) < 0) {
		ended(s, e, QUEUE_FAILED, 1, why);
		return;
	}
	queue_path(s->root, e->id, "h.conf", hconf, sizeof(hconf));
	queue_path(s->root, e->id, "g.conf", gconf, sizeof(gconf));
	queue_path(s->root, e->id, "hostd.log", logp, sizeof(logp));
	queue_path(s->root, e->id, "status.json", status, sizeof(status));
	queue_path(s->root, e->id, "files.json", files, sizeof(files));
	unlink(status);
	/* the configs as sent, by the names they use for each other; an
	 * experiment queued by a service without files.json has its two */
	int fr = queue_files_load(files, &map, &hname, &gname);
	config_files_free(map);
	if (fr < 0 && fr != -ENOENT) {
		snprintf(why, sizeof(why), "cannot read its configs %s: %s", files, strerror(-fr));
		ended(s, e, QUEUE_FAILED, 1, why);
		return;
	}
	int logfd = open(logp, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
	if (logfd < 0) {
		snprintf(why, sizeof(why), "cannot open its log %s: %s", logp, strerror(errno));
		free(hname);
		free(gname);
		ended(s, e, QUEUE_FAILED, 1, why);
		return;
	}
	const char *argv[32] = { "hostd",
				 "--host-config",
				 fr == 0 ? hname : hconf,
				 "--guest-config",
				 fr == 0 ? gname : gconf,
				 "--results",
				 e->results,
				 "--run-name",
				 e->run_name,
				 "--state-dir",
				 s->opt->state_dir,
				 "--status-file",
				 status,
				 "--no-progress" };
	size_t n = 14;
	if (fr == 0) {
		argv[n++] = "--config-files";
		argv[n++] = files;
	}
	if (e->uid != geteuid()) {
		/* what it runs on the host runs as the submitter (runas.h) */
		snprintf(runas, sizeof(runas), "%u:%u", e->uid, e->gid);
		argv[n++] = "--run-as";
		argv[n++] = runas;
	}
	if (s->opt->agent) {
		argv[n++] = "--agent";
		argv[n++] = s->opt->agent;
	}
	if (s->opt->guest_agent) {
		argv[n++] = "--guest-agent";
		argv[n++] = s->opt->guest_agent;
	}
	if (s->opt->sysfs_root) {
		argv[n++] = "--sysfs-root";
		argv[n++] = s->opt->sysfs_root;
	}
	if (s->opt->verbose)
		argv[n++] = "--verbose";
	if (e->lenient)
		argv[n++] = "--lenient";
	argv[n] = NULL;
	log_line(s, e, "experiment %" PRIu64 " of %s (uid %u) starts: results in %s/%s", e->id,
		 e->user, e->uid, e->results, e->run_name);

	pid_t parent = getpid();
	const char *binary = s->set.hostd_binary[0] ? s->set.hostd_binary : s->self;
	pid_t pid = fork();
	if (pid == 0)
		child_exec(binary, parent, logfd, (char *const *)argv);
	int err = errno;
	close(logfd);
	free(hname);
	free(gname);
	if (pid < 0) {
		snprintf(why, sizeof(why), "cannot fork its hostd: %s", strerror(err));
		ended(s, e, QUEUE_FAILED, 1, why);
		return;
	}
	s->cur = e;
	s->child = pid;
	s->child_ours = true;
	s->end_as = QUEUE_RUNNING;
	s->end_reason[0] = '\0';
	e->state = QUEUE_RUNNING;
	e->started = (int64_t)time(NULL);
	e->pid = pid;
	e->pid_start = proc_start_time(pid);
	uv_timer_start(&s->run_timer, on_run_timer, s->set.run_timeout_ms, 0);
	service_save(s, e);
	log_info("experiment %" PRIu64 " of %s started: hostd pid %d, results in %s/%s", e->id,
		 e->user, (int)pid, e->results, e->run_name);
	service_exp_changed(s, e);
}
