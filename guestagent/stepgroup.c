// SPDX-License-Identifier: GPL-2.0-or-later
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "stepgroup.h"

/* ---- files ---- */

static int sg_write(const char *dir, const char *file, const char *text)
{
	char path[PATH_MAX + 32];
	int fd, r = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		r = -errno;
	close(fd);
	return r;
}

static ssize_t sg_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n;
}

static bool sg_exists(const char *dir, const char *file)
{
	char path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return access(path, F_OK) == 0;
}

/* ---- finding the hierarchies ---- */

/* The mount point of the cgroup2 hierarchy, or of the v1 hierarchy that
 * has controller (NULL: v2), from /proc/self/mountinfo. */
static bool sg_mount(const char *controller, char *out, size_t len)
{
	FILE *fp = fopen("/proc/self/mountinfo", "re");
	char line[1024];
	bool found = false;

	if (!fp)
		return false;
	while (!found && fgets(line, sizeof(line), fp)) {
		char mnt[PATH_MAX], fstype[64], opts[512];
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
		    sscanf(dash + 3, "%63s %*s %511s", fstype, opts) != 2)
			continue;
		if (!controller)
			found = !strcmp(fstype, "cgroup2");
		else if (!strcmp(fstype, "cgroup"))
			for (char *t = strtok(opts, ","); t && !found; t = strtok(NULL, ","))
				found = !strcmp(t, controller);
		if (found)
			snprintf(out, len, "%s", mnt);
	}
	fclose(fp);
	return found;
}

/* Our own cgroup in the hierarchy of controller (NULL: v2), from
 * /proc/self/cgroup. */
static bool sg_own(const char *controller, char *out, size_t len)
{
	FILE *fp = fopen("/proc/self/cgroup", "re");
	char line[1024];
	bool found = false;

	if (!fp)
		return false;
	while (!found && fgets(line, sizeof(line), fp)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (!c2)
			continue;
		*c1 = '\0';
		*c2 = '\0';
		c2[1 + strcspn(c2 + 1, "\n")] = '\0';
		if (!controller)
			found = !strcmp(line, "0") && c1[1] == '\0';
		else
			for (char *t = strtok(c1 + 1, ","); t && !found; t = strtok(NULL, ","))
				found = !strcmp(t, controller);
		if (found)
			snprintf(out, len, "%s", c2 + 1);
	}
	fclose(fp);
	return found;
}

/* The folder step cgroups go under, if we may make them there. */
static bool sg_base(const char *controller, char *out, size_t len)
{
	char mnt[PATH_MAX], own[PATH_MAX], probe[PATH_MAX + 32];

	if (!sg_mount(controller, mnt, sizeof(mnt)) || !sg_own(controller, own, sizeof(own)))
		return false;
	if (strlen(mnt) + strlen(own) + 64 > len)
		return false;
	snprintf(out, len, "%.*s%.*s", PATH_MAX / 2 - 1, mnt, PATH_MAX / 2 - 1,
		 strcmp(own, "/") ? own : "");
	snprintf(probe, sizeof(probe), "%s/lockstep-probe-%d", out, (int)getpid());
	if (mkdir(probe, 0755) < 0)
		return false;
	rmdir(probe);
	return true;
}

/* ---- the keeper ---- */

/* Everything in a cgroup, SIGKILLed: cgroup.kill where there is one. */
static void sg_kill_cgroup(const char *dir)
{
	char path[PATH_MAX + 32], buf[4096];
	ssize_t n;

	if (!dir[0])
		return;
	if (sg_write(dir, "cgroup.kill", "1") == 0)
		return;
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	/* a fork loop refills it: a few rounds */
	for (int round = 0; round < 8; round++) {
		n = sg_read(path, buf, sizeof(buf));
		if (n <= 0)
			return;
		for (char *t = strtok(buf, "\n"); t; t = strtok(NULL, "\n"))
			kill((pid_t)atoi(t), SIGKILL);
	}
}

/* Until a v2 cgroup is empty (cgroup.events says populated 0), 2 s at
 * most: a cgroup is removed only once empty. */
static void sg_wait_empty(const char *dir)
{
	char path[PATH_MAX + 32], buf[256];
	int64_t deadline = clock_mono_ns() + STEPGROUP_KILL_WAIT_NS;
	int fd;

	if (!dir[0])
		return;
	snprintf(path, sizeof(path), "%s/cgroup.events", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLPRI };
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
		int64_t left = deadline - clock_mono_ns();

		if (n <= 0 || left <= 0)
			break;
		buf[n] = '\0';
		if (strstr(buf, "populated 0"))
			break;
		/* the file notifies a change with POLLPRI */
		poll(&p, 1, (int)((left + 999999) / 1000000));
	}
	close(fd);
}

/* Until the agent has exited (a pidfd polls readable then), 2 s at most:
 * its cgroups can be removed only without it. */
static void sg_wait_exit(pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (fd < 0)
		return;
	poll(&p, 1, (int)(STEPGROUP_KILL_WAIT_NS / 1000000));
	close(fd);
}

/*
 * The keeper: outside the agent's cgroups, it reads what the agent tells
 * it (C its cgroups, S the step and its group, E the step ended, Q a clean
 * exit) until the pipe ends.  Without Q the agent died: the step's group
 * and the cgroups are killed.  Either way the cgroups are removed.
 */
static void __attribute__((noreturn)) sg_keeper(int rfd, pid_t agent)
{
	char cg[PATH_MAX] = "", pids_cg[PATH_MAX] = "", line[2 * PATH_MAX + 64];
	uint32_t step = 0;
	pid_t pgid = 0;
	bool quit = false;
	FILE *fp;

	setpgid(0, 0);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	for (int fd = 3; fd < 1024; fd++)
		if (fd != rfd)
			close(fd);
	fp = fdopen(rfd, "r");
	if (!fp)
		_exit(1);
	while (fgets(line, sizeof(line), fp)) {
		char a[PATH_MAX], b[PATH_MAX];
		int pg;

		if (line[0] == 'Q') {
			quit = true;
		} else if (line[0] == 'E') {
			step = 0;
			pgid = 0;
		} else if (sscanf(line, "C %4095s %4095s", a, b) == 2) {
			snprintf(cg, sizeof(cg), "%s", strcmp(a, "-") ? a : "");
			snprintf(pids_cg, sizeof(pids_cg), "%s", strcmp(b, "-") ? b : "");
		} else if (sscanf(line, "S %" SCNu32 " %d", &step, &pg) == 2) {
			pgid = pg;
		}
	}
	if (!quit) {
		/* The agent is gone without saying Q: its step goes too. */
		/* the group only without a cgroup: its leader may be gone */
		if (pgid > 0 && !cg[0])
			kill(-pgid, SIGKILL);
		sg_kill_cgroup(cg);
		sg_kill_cgroup(pids_cg);
		if (step)
			dprintf(STDERR_FILENO,
				"guestagent keeper: the agent ended during step %" PRIu32
				"; killed what was left of it (group %d%s%s)\n",
				step, (int)pgid, cg[0] ? ", cgroup " : "", cg);
	}
	sg_wait_exit(agent);
	sg_wait_empty(cg);
	if (cg[0])
		rmdir(cg);
	if (pids_cg[0])
		rmdir(pids_cg);
	_exit(0);
}

static void sg_keeper_start(struct stepgroup *g)
{
	pid_t agent = getpid(), pid;
	int fds[2];

	if (pipe2(fds, O_CLOEXEC) < 0)
		return;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (pid == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		close(fds[1]);
		sg_keeper(fds[0], agent);
	}
	close(fds[0]);
	fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK);
	g->keeper = pid;
	g->keeper_fd = fds[1];
}

static void sg_keeper_say(struct stepgroup *g, const char *text)
{
	/* A keeper not scheduled for a while fills its pipe: lines are lost
	 * then (EAGAIN), the keeper is not; one that is gone (EPIPE) is. */
	if (g->keeper_fd >= 0 && write(g->keeper_fd, text, strlen(text)) < 0 && errno == EPIPE) {
		close(g->keeper_fd);
		g->keeper_fd = -1;
	}
}

/* ---- life ---- */

/* base/lockstep-agent-<pid>, with us in it; "" if it cannot be. */
static void sg_join(const char *base, char *out, size_t len)
{
	out[0] = '\0';
	/* not inside another agent's (an agent started by a step, or twice in
	 * one process): its owner removes that one */
	if (!base[0] || strstr(base, "/lockstep-agent-"))
		return;
	snprintf(out, len, "%s/lockstep-agent-%d", base, (int)getpid());
	if ((mkdir(out, 0755) < 0 && errno != EEXIST) || sg_write(out, "cgroup.procs", "0") < 0) {
		rmdir(out);
		out[0] = '\0';
	}
}

void stepgroup_init(struct stepgroup *g, const char *root, uint64_t pids_max, uint64_t memory_max)
{
	char num[32], line[2 * PATH_MAX + 16];

	(void)root;
	memset(g, 0, sizeof(*g));
	g->keeper_fd = -1;
	g->pids_max = pids_max;
	g->memory_max = memory_max;
	/* Orphans of a step come to us, not to an init that may not reap. */
	prctl(PR_SET_CHILD_SUBREAPER, 1UL, 0UL, 0UL, 0UL);
	/* first, so that it stays outside the cgroups it may have to kill */
	sg_keeper_start(g);
	if (!sg_base(NULL, g->v2_base, sizeof(g->v2_base)))
		g->v2_base[0] = '\0';
	if (g->v2_base[0] && (g->pids_max || g->memory_max))
		sg_write(g->v2_base, "cgroup.subtree_control",
			 g->memory_max ? "+pids +memory" : "+pids");
	sg_join(g->v2_base, g->cg, sizeof(g->cg));
	/* The cgroup is the agent's, joined once: a step's child is born in
	 * it.  Moving a process into a cgroup per step costs 10 to 40 ms on
	 * these machines (the write to cgroup.procs), which an immediate go
	 * would wait for. */
	snprintf(num, sizeof(num), "%" PRIu64, g->pids_max + STEPGROUP_OWN_PIDS);
	if (g->pids_max && g->cg[0] && sg_exists(g->cg, "pids.max")) {
		sg_write(g->cg, "pids.max", num);
	} else if (g->pids_max && sg_base("pids", g->pids_base, sizeof(g->pids_base))) {
		sg_join(g->pids_base, g->pids_cg, sizeof(g->pids_cg));
		if (g->pids_cg[0])
			sg_write(g->pids_cg, "pids.max", num);
	}
	if (g->memory_max && g->cg[0] && sg_exists(g->cg, "memory.max")) {
		snprintf(num, sizeof(num), "%" PRIu64, g->memory_max);
		sg_write(g->cg, "memory.max", num);
	}
	snprintf(line, sizeof(line), "C %s %s\n", g->cg[0] ? g->cg : "-",
		 g->pids_cg[0] ? g->pids_cg : "-");
	sg_keeper_say(g, line);
}

const char *stepgroup_describe(const struct stepgroup *g, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s", g->cg[0] ? "in the agent's cgroup " : "no writable cgroup v2",
		 g->cg, g->pids_cg[0] ? ", pids limit in " : "", g->pids_cg);
	return buf;
}

void stepgroup_fini(struct stepgroup *g)
{
	/* the keeper removes the cgroups once we are gone */
	sg_keeper_say(g, "Q\n");
	if (g->keeper_fd >= 0)
		close(g->keeper_fd);
	g->keeper_fd = -1;
	g->keeper = 0;
}

static uint64_t sg_pids_events(const struct stepgroup *g)
{
	const char *dir = g->pids_cg[0] ? g->pids_cg : g->cg;
	char path[PATH_MAX + 32], buf[256], *m;

	if (!dir[0])
		return 0;
	snprintf(path, sizeof(path), "%s/pids.events", dir);
	if (sg_read(path, buf, sizeof(buf)) <= 0 || !(m = strstr(buf, "max ")))
		return 0;
	return strtoull(m + 4, NULL, 10);
}

int stepgroup_enter(struct stepgroup *g, uint32_t step, pid_t pid, char *why, size_t len)
{
	char line[64];

	g->step = step;
	g->pgid = pid;
	g->pids_base_hits = sg_pids_events(g);
	snprintf(line, sizeof(line), "S %" PRIu32 " %d\n", step, (int)pid);
	sg_keeper_say(g, line);
	if (!g->cg[0]) {
		snprintf(why, len, "%s",
			 g->v2_base[0] ? "cannot make or join a cgroup under the "
					 "agent's own"
				       : "no writable cgroup v2 hierarchy");
		return -ENOENT;
	}
	return 0;
}

/* ---- the end of a step ---- */

struct sg_proc {
	pid_t pid, ppid, pgid;
	char state;
};

/* Every process's pid, parent, group and state, from /proc. */
static size_t sg_scan(struct sg_proc *out, size_t max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	size_t n = 0;

	if (!d)
		return 0;
	while (n < max && (e = readdir(d))) {
		char path[300], buf[512], *rp;
		int ppid, pgid;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		if (sg_read(path, buf, sizeof(buf)) <= 0 || !(rp = strrchr(buf, ')')))
			continue;
		if (sscanf(rp + 1, " %c %d %d", &out[n].state, &ppid, &pgid) != 3)
			continue;
		out[n].pid = (pid_t)atoi(e->d_name);
		out[n].ppid = ppid;
		out[n].pgid = pgid;
		n++;
	}
	closedir(d);
	return n;
}

static bool sg_in(const pid_t *v, size_t n, pid_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == pid)
			return true;
	return false;
}

/* Members of a cgroup, appended to set. */
static size_t sg_members(const char *dir, pid_t *set, size_t n, size_t max)
{
	char path[PATH_MAX + 32], buf[8192];

	if (!dir[0])
		return n;
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if (sg_read(path, buf, sizeof(buf)) <= 0)
		return n;
	for (char *t = strtok(buf, "\n"); t && n < max; t = strtok(NULL, "\n")) {
		pid_t pid = (pid_t)atoi(t);
		if (pid > 0 && !sg_in(set, n, pid))
			set[n++] = pid;
	}
	return n;
}

static struct sg_proc sg_procs[32768];
static pid_t sg_set[STEPGROUP_MAX];

/* The state letter of pid ('?' when it is gone), and its group. */
static char sg_stat(pid_t pid, pid_t *pgid)
{
	char path[64], buf[512], *rp, st;
	int ppid, pg;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (sg_read(path, buf, sizeof(buf)) <= 0 || !(rp = strrchr(buf, ')')) ||
	    sscanf(rp + 1, " %c %d %d", &st, &ppid, &pg) != 3)
		return '?';
	if (pgid)
		*pgid = pg;
	return st;
}

static char sg_state(pid_t pid)
{
	return sg_stat(pid, NULL);
}

/* Our children (we are single-threaded: our one task lists them all). */
static size_t sg_children(pid_t *out, size_t max)
{
	char path[64], buf[8192];
	size_t n = 0;

	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
	if (sg_read(path, buf, sizeof(buf)) < 0) {
		/* a kernel without CONFIG_PROC_CHILDREN: every process's parent */
		size_t np = sg_scan(sg_procs, sizeof(sg_procs) / sizeof(sg_procs[0]));

		for (size_t i = 0; i < np && n < max; i++)
			if (sg_procs[i].ppid == getpid())
				out[n++] = sg_procs[i].pid;
		return n;
	}
	for (char *t = strtok(buf, " \n"); t && n < max; t = strtok(NULL, " \n"))
		out[n++] = (pid_t)atoi(t);
	return n;
}

/*
 * What is left of the step now, live processes only (a zombie is done, and
 * reaped by its parent, which ends up being us): the members of its
 * cgroups, our children we do not know, and without a cgroup the members
 * of its process group and whatever those started.
 */
static size_t sg_leftovers(const struct stepgroup *g, const pid_t *known, size_t nknown, pid_t *set,
			   size_t max)
{
	pid_t kids[1024];
	size_t nk = sg_children(kids, sizeof(kids) / sizeof(kids[0]));
	size_t n = 0, live = 0;

	n = sg_members(g->cg, set, n, max);
	n = sg_members(g->pids_cg, set, n, max);
	for (size_t i = 0; i < nk && n < max; i++)
		if (kids[i] != g->keeper && !sg_in(known, nknown, kids[i]) && !sg_in(set, n, kids[i]))
			set[n++] = kids[i];
	if (!g->cg[0]) {
		size_t np = sg_scan(sg_procs, sizeof(sg_procs) / sizeof(sg_procs[0]));
		bool grew = true;

		for (size_t i = 0; i < np && n < max; i++)
			if (g->pgid > 0 && sg_procs[i].pgid == g->pgid &&
			    !sg_in(set, n, sg_procs[i].pid))
				set[n++] = sg_procs[i].pid;
		while (grew && n < max) {
			grew = false;
			for (size_t i = 0; i < np && n < max; i++)
				if (sg_in(set, n, sg_procs[i].ppid) && !sg_in(set, n, sg_procs[i].pid)) {
					set[n++] = sg_procs[i].pid;
					grew = true;
				}
		}
	}
	for (size_t i = 0; i < n; i++) {
		pid_t pgid = 0;
		char st = sg_stat(set[i], &pgid);

		/* the agent, its keeper, and what the known children (external
		 * monitors, each leading its group) started are not the step's */
		if (set[i] != getpid() && set[i] != g->keeper && st != 'Z' && st != 'X' &&
		    st != '?' && !sg_in(known, nknown, set[i]) && !sg_in(known, nknown, pgid))
			set[live++] = set[i];
	}
	return live;
}

/* "sleep 313": the command line, NULs as spaces, cut. */
static void sg_cmdline(pid_t pid, char *out, size_t len)
{
	char path[64], buf[256];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	n = sg_read(path, buf, sizeof(buf));
	if (n <= 0) {
		/* between fork and exec, or on its way out: its name */
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		n = sg_read(path, buf, sizeof(buf));
	}
	if (n <= 0) {
		snprintf(out, len, "pid %d", (int)pid);
		return;
	}
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0' || buf[i] == '\n')
			buf[i] = ' ';
	while (n > 0 && buf[n - 1] == ' ')
		buf[--n] = '\0';
	snprintf(out, len, "%.60s", buf);
}

/* Reaps our children among set (orphans come to us: we are a subreaper). */
static void sg_reap(const pid_t *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		while (waitpid(set[i], NULL, WNOHANG) < 0 && errno == EINTR)
			;
}

/* Zombies of ours the step left (orphans that ended by themselves, or
 * were killed above), except the children the caller looks after. */
static void sg_reap_orphans(const struct stepgroup *g, const pid_t *known, size_t nknown)
{
	pid_t kids[1024];
	size_t nk = sg_children(kids, sizeof(kids) / sizeof(kids[0]));

	for (size_t i = 0; i < nk; i++)
		if (kids[i] != g->keeper && !sg_in(known, nknown, kids[i]) && sg_state(kids[i]) == 'Z')
			while (waitpid(kids[i], NULL, WNOHANG) < 0 && errno == EINTR)
				;
}

/* Until SIGCHLD or the deadline, at most 50 ms: the deaths of processes
 * that are not our children wake nobody, so look again after a while. */
static void sg_wait(int sigfd, int64_t deadline)
{
	int64_t left = deadline - clock_mono_ns();
	struct signalfd_siginfo si;
	struct pollfd p = { .fd = sigfd, .events = POLLIN };

	if (left <= 0)
		return;
	if (left > 50 * 1000000LL)
		left = 50 * 1000000LL;
	if (poll(&p, 1, (int)((left + 999999) / 1000000)) > 0)
		while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			;
}

size_t stepgroup_end(struct stepgroup *g, const pid_t *known, size_t nknown, int sigfd, char *desc,
		     size_t len)
{
	int64_t term_end = clock_mono_ns() + STEPGROUP_GRACE_NS;
	int64_t kill_end = term_end + STEPGROUP_KILL_WAIT_NS;
	size_t n = sg_leftovers(g, known, nknown, sg_set, STEPGROUP_MAX), left = n;
	bool killing = false;

	desc[0] = '\0';
	for (size_t i = 0, at = 0; i < n && i < STEPGROUP_NAMED; i++) {
		char cmd[80];
		sg_cmdline(sg_set[i], cmd, sizeof(cmd));
		at += (size_t)snprintf(desc + at, at < len ? len - at : 0, "%s%s", i ? ", " : "", cmd);
	}
	if (n > STEPGROUP_NAMED)
		snprintf(desc + strlen(desc), len - strlen(desc), ", ...");
	g->pids_hits = sg_pids_events(g) - g->pids_base_hits;
	while (n) {
		int64_t now = clock_mono_ns();
		if (now >= kill_end)
			break;
		/* not cgroup.kill: the agent is in the cgroup too */
		if (!killing && now >= term_end)
			killing = true;
		/* each by its pid: the group's leader is reaped, and its number
		 * could name another group once no member is left */
		for (size_t i = 0; i < n; i++)
			kill(sg_set[i], killing ? SIGKILL : SIGTERM);
		sg_wait(sigfd, killing ? kill_end : term_end);
		sg_reap(sg_set, n);
		n = sg_leftovers(g, known, nknown, sg_set, STEPGROUP_MAX);
	}
	sg_reap_orphans(g, known, nknown);
	sg_keeper_say(g, "E\n");
	g->pgid = 0;
	return left;
}
