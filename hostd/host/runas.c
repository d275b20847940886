// SPDX-License-Identifier: GPL-2.0-or-later
#include "runas.h"

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "xalloc.h"

#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

/* The shim's fixed arguments: hostd --exec-as UID GID GROUPS DIR NFDS -- */
#define SHIM_FIXED 8

int runas_init(struct runas *ra, const char *spec, char *why, size_t size)
{
	unsigned long uid, gid;
	char *end;
	memset(ra, 0, sizeof(*ra));
	uid = strtoul(spec, &end, 10);
	if (end == spec || *end != ':' || (gid = strtoul(end + 1, &end, 10), *end) ||
	    uid >= (uid_t)-1 || gid >= (gid_t)-1) {
		snprintf(why, size, "--run-as '%s': not UID:GID", spec);
		return -EINVAL;
	}
	ra->uid = (uid_t)uid;
	ra->gid = (gid_t)gid;
	ssize_t n = readlink("/proc/self/exe", ra->self, sizeof(ra->self) - 1);
	if (n <= 0) {
		snprintf(why, size, "cannot find hostd's own binary (/proc/self/exe): %s",
			 strerror(errno));
		return -errno;
	}
	ra->self[n] = '\0';
	struct passwd *pw = getpwuid(ra->uid);
	if (!pw) {
		/* no account: the uid and gid the kernel named, no other group */
		snprintf(ra->user, sizeof(ra->user), "uid-%u", ra->uid);
		snprintf(ra->home, sizeof(ra->home), "/");
		ra->groups[0] = ra->gid;
		ra->ngroups = 1;
		return 0;
	}
	snprintf(ra->user, sizeof(ra->user), "%s", pw->pw_name);
	snprintf(ra->home, sizeof(ra->home), "%s", pw->pw_dir);
	int ng = RUNAS_GROUPS_MAX;
	if (getgrouplist(ra->user, ra->gid, ra->groups, &ng) < 0) {
		snprintf(why, size, "user %s is in %d groups; at most %d are passed on", ra->user,
			 ng, RUNAS_GROUPS_MAX);
		return -E2BIG;
	}
	ra->ngroups = (size_t)ng;
	return 0;
}

void runas_wrap(const struct runas *ra, uv_process_options_t *o, const char *cwd, char ***store)
{
	*store = NULL;
	if (!ra)
		return;
	size_t nargs = 0;
	while (o->args[nargs])
		nargs++;
	char **v = xcalloc(SHIM_FIXED + 1 + nargs + 1, sizeof(*v));
	size_t len = 0, cap = ra->ngroups * 12 + 2;
	char *groups = xmalloc(cap);
	groups[0] = '\0';
	for (size_t i = 0; i < ra->ngroups; i++)
		len += (size_t)snprintf(groups + len, cap - len, "%s%u", i ? "," : "",
					(unsigned)ra->groups[i]);
	v[0] = (char *)ra->self;
	v[1] = RUNAS_EXEC_ARG;
	v[2] = xasprintf("%u", (unsigned)ra->uid);
	v[3] = xasprintf("%u", (unsigned)ra->gid);
	v[4] = groups[0] ? groups : xstrdup("-");
	if (!groups[0])
		free(groups);
	v[5] = xstrdup(cwd ? cwd : "-");
	v[6] = xasprintf("%d", o->stdio_count);
	v[7] = "--";
	v[8] = (char *)o->file;
	memcpy(v + SHIM_FIXED + 1, o->args, nargs * sizeof(*v));
	o->file = ra->self;
	o->args = v;
	*store = v;
}

void runas_free_args(char **store)
{
	if (!store)
		return;
	for (size_t i = 2; i <= 6; i++)
		free(store[i]);
	free(store);
}

/* ---- the shim: a child between fork and the program's exec ------------ */

static int fail(const char *what, int err)
{
	fprintf(stderr, "hostd --exec-as: %s: %s\n", what, strerror(err));
	return 127;
}

static int drop(uid_t uid, gid_t gid, const gid_t *groups, size_t ng)
{
	/* while still privileged: nothing exec'd below gains a capability
	 * back (setuid programs, file capabilities) */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return fail("PR_SET_NO_NEW_PRIVS", errno);
	/* dropping from the bounding set needs CAP_SETPCAP: as far as we may */
	for (int cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno == EINVAL)
			break;
	/* ambient capabilities would survive a non-root setuid and the exec */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return fail("clearing ambient capabilities", errno);
	if (setgroups(ng, groups) < 0)
		return fail("setgroups", errno);
	if (setresgid(gid, gid, gid) < 0)
		return fail("setresgid", errno);
	if (setresuid(uid, uid, uid) < 0)
		return fail("setresuid", errno);
	/* from a non-root service user the permitted set survives setuid */
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capset, &h, d) < 0)
		return fail("dropping capabilities", errno);
	/* and none of it comes back */
	memset(d, 0xff, sizeof(d));
	if (getuid() != uid || geteuid() != uid || getgid() != gid || getegid() != gid ||
	    (uid != 0 && setresuid((uid_t)-1, 0, (uid_t)-1) == 0) || syscall(SYS_capget, &h, d) < 0 ||
	    d[0].permitted || d[1].permitted || d[0].effective || d[1].effective)
		return fail("privileges still held after dropping them", EPERM);
	return 0;
}

int runas_exec_main(int argc, char **argv)
{
	if (argc < SHIM_FIXED + 2 || strcmp(argv[7], "--") != 0) {
		fprintf(stderr, "hostd --exec-as UID GID GROUPS DIR NFDS -- PROGRAM ARGV0 [ARGS]: "
				"for hostd's own use\n");
		return 127;
	}
	uid_t uid = (uid_t)strtoul(argv[2], NULL, 10);
	gid_t gid = (gid_t)strtoul(argv[3], NULL, 10);
	gid_t groups[RUNAS_GROUPS_MAX];
	size_t ng = 0;
	if (strcmp(argv[4], "-") != 0)
		for (char *p = argv[4]; *p && ng < RUNAS_GROUPS_MAX; p++) {
			groups[ng++] = (gid_t)strtoul(p, &p, 10);
			if (*p != ',')
				break;
		}
	int nfds = atoi(argv[6]);
	int r = drop(uid, gid, groups, ng);
	if (r)
		return r;
	/* only the descriptors meant for the program: a library of hostd's
	 * may have left one without O_CLOEXEC */
	for (int fd = nfds > 3 ? nfds : 3; fd < 1024; fd++)
		close(fd);
	if (strcmp(argv[5], "-") != 0 && chdir(argv[5]) < 0)
		return fail(argv[5], errno);
	struct passwd *pw = getpwuid(uid);
	if (pw) {
		setenv("HOME", pw->pw_dir, 1);
		setenv("USER", pw->pw_name, 1);
		setenv("LOGNAME", pw->pw_name, 1);
	}
	execvp(argv[SHIM_FIXED], argv + SHIM_FIXED + 1);
	return fail(argv[SHIM_FIXED], errno);
}
