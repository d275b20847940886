// SPDX-License-Identifier: GPL-2.0-or-later
#include "hostd_testlib.h"

#include <errno.h>

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"

char tmpdir[256];
char hostd_path[512], agent_path[512];

void hostd_test_setup(void)
{
	const char *build = getenv("LOCKSTEP_BUILD_ROOT");
	ck_assert_msg(build, "LOCKSTEP_BUILD_ROOT is not set (run through meson test)");
	snprintf(hostd_path, sizeof(hostd_path), "%s/hostd/hostd", build);
	snprintf(agent_path, sizeof(agent_path), "%s/guestagent/guestagent", build);
	testlib_tmpdir(tmpdir, sizeof(tmpdir), "lockstep-test");
}

void hostd_test_teardown(void)
{
	int r = testlib_rmtree(tmpdir);
	ck_assert_msg(r == 0, "cannot remove %s: %s", tmpdir, strerror(-r));
}

void write_file(const char *name, const char *text, mode_t mode)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

pid_t hostd_test_start(const char *agent, const char *const *extra)
{
	char h[512], g[512], res[512], err[512];
	snprintf(h, sizeof(h), "%s/h.conf", tmpdir);
	snprintf(g, sizeof(g), "%s/g.conf", tmpdir);
	snprintf(res, sizeof(res), "%s/results", tmpdir);
	snprintf(err, sizeof(err), "%s/stderr", tmpdir);
	const char *argv[32] = { hostd_path,
				 "--host-config",
				 h,
				 "--guest-config",
				 g,
				 "--results",
				 res,
				 "--run-name",
				 "t",
				 "--agent",
				 agent ? agent : agent_path,
				 "--no-progress" };
	size_t argc = 12;
	for (size_t i = 0; extra && extra[i] && argc < 31; i++)
		argv[argc++] = extra[i];
	argv[argc] = NULL;
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 2);
		execv(hostd_path, (char *const *)argv);
		_exit(127);
	}
	return pid;
}

int hostd_test_wait(pid_t pid)
{
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st), "hostd died of signal %d", WTERMSIG(st));
	return WEXITSTATUS(st);
}

int hostd_test_run(const char *agent, const char *const *extra)
{
	return hostd_test_wait(hostd_test_start(agent, extra));
}

json_object *manifest(void)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/results/t/manifest.json", tmpdir);
	json_object *m = json_object_from_file(path);
	ck_assert_msg(m, "no readable %s", path);
	return m;
}

const char *jstr(json_object *o, const char *key)
{
	json_object *v;
	ck_assert_msg(json_object_object_get_ex(o, key, &v), "no \"%s\" in %s", key,
		      json_object_to_json_string(o));
	return json_object_get_string(v);
}

json_object *participant(json_object *m, const char *node)
{
	json_object *a = json_object_object_get(m, "participants");
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		json_object *p = json_object_array_get_idx(a, i);
		if (!strcmp(jstr(p, "node"), node))
			return p;
	}
	ck_abort_msg("no participant %s", node);
	return NULL;
}

int64_t jint(json_object *o, const char *key)
{
	json_object *v;
	ck_assert_msg(json_object_object_get_ex(o, key, &v), "no \"%s\" in %s", key,
		      json_object_to_json_string(o));
	return json_object_get_int64(v);
}

json_object **read_ndjson(const char *name, size_t *n)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/results/t/%s", tmpdir, name);
	char *text = read_text(path);
	ck_assert_msg(text, "cannot read %s", path);
	json_object **v = calloc(100000, sizeof(*v));
	*n = 0;
	for (char *save, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		v[*n] = json_tokener_parse(line);
		ck_assert_msg(v[*n], "%s: unparsable line: %s", name, line);
		(*n)++;
	}
	return v;
}

void free_ndjson(json_object **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		json_object_put(v[i]);
	free(v);
}

/* The lines of dir/samples.ndjson, into *n; *text holds them (free both). */
static char **sample_lines(const char *dir, size_t *n, char **text)
{
	char path[600];
	snprintf(path, sizeof(path), "%s/samples.ndjson", dir);
	const char *t = read_text(path); /* its buffer is the next call's */
	ck_assert_msg(t, "cannot read %s", path);
	*text = strdup(t);
	char **v = calloc(strlen(*text) + 1, sizeof(*v));
	*n = 0;
	for (char *save, *l = strtok_r(*text, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		v[(*n)++] = l;
	return v;
}

size_t cluster_samples_once(const char *lead, const char *own, const char *member)
{
	size_t nm, na, theirs = 0;
	char *tm, *ta, prefix[80];
	char **lm = sample_lines(own, &nm, &tm), **la = sample_lines(lead, &na, &ta);
	snprintf(prefix, sizeof(prefix), "\"node\":\"%s\\/", member); /* json-c writes / as \/ */
	for (size_t i = 0; i < na; i++)
		theirs += strstr(la[i], prefix) != NULL;
	ck_assert_msg(theirs == nm, "%zu samples of %s in %s, %zu in its own folder %s", theirs,
		      member, lead, nm, own);
	for (size_t i = 0; i < nm; i++) {
		json_object *o = json_tokener_parse(lm[i]), *node = NULL;
		ck_assert_msg(o && json_object_object_get_ex(o, "node", &node),
			      "%s: a sample without node: %s", own, lm[i]);
		char name[200];
		snprintf(name, sizeof(name), "%s/%s", member, json_object_get_string(node));
		json_object_object_add(o, "node", json_object_new_string(name));
		const char *want = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
		int found = 0;
		for (size_t k = 0; k < na; k++)
			found += strcmp(la[k], want) == 0;
		ck_assert_msg(found == 1, "%s's sample %s is in %s %d times as %s", member, lm[i],
			      lead, found, want);
		json_object_put(o);
	}
	free(lm);
	free(la);
	free(tm);
	free(ta);
	return nm;
}

int count_sample(json_object **v, size_t n, const char *node, int step, const char *metric)
{
	int k = 0;
	for (size_t i = 0; i < n; i++) {
		json_object *m;
		/* a failure record has no metric: it counts as no sample */
		if (!json_object_object_get_ex(v[i], "metric", &m))
			continue;
		if (!strcmp(jstr(v[i], "node"), node) && jint(v[i], "step") == step &&
		    !strcmp(json_object_get_string(m), metric))
			k++;
	}
	return k;
}

void describe_failure(json_object *rec, char *out, size_t len)
{
	json_object *log;
	const char *text = NULL;
	char path[512];
	if (json_object_object_get_ex(rec, "log", &log)) {
		snprintf(path, sizeof(path), "%s/results/t/%s", tmpdir, json_object_get_string(log));
		text = read_text(path);
	}
	size_t n = text ? strlen(text) : 0;
	snprintf(out, len, "%s\n--- its log (end): %s", json_object_to_json_string(rec),
		 text ? text + (n > 1500 ? n - 1500 : 0) : "(none)");
}

/* The first failure record of samples.ndjson and the end of its step's
 * log, into out: a degraded run's manifest lists participant failures
 * only, so a failed benchmark step would otherwise go unexplained.  Read
 * here, not with read_ndjson: a diagnosis must not assert, and the file
 * may be missing. */
static void failed_step_diagnosis(char *out, size_t len)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/results/t/samples.ndjson", tmpdir);
	out[0] = '\0';
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char line[4096];
	while (fgets(line, sizeof(line), f)) {
		json_object *o = json_tokener_parse(line);
		if (o && json_object_object_get_ex(o, "failed", NULL)) {
			int k = snprintf(out, len, "\nfailed step: ");
			describe_failure(o, out + k, len - (size_t)k);
			json_object_put(o);
			break;
		}
		json_object_put(o);
	}
	fclose(f);
}

const char *run_diagnosis(void)
{
	static char buf[8192];
	char path[512], step[2048];
	snprintf(path, sizeof(path), "%s/results/t/manifest.json", tmpdir);
	json_object *m = json_object_from_file(path);
	json_object *f = m ? json_object_object_get(m, "failures") : NULL;
	failed_step_diagnosis(step, sizeof(step));
	snprintf(path, sizeof(path), "%s/stderr", tmpdir);
	const char *err = read_text(path);
	size_t len = err ? strlen(err) : 0;
	snprintf(buf, sizeof(buf), "failures: %s%s\nstderr (end): %s",
		 f ? json_object_to_json_string(f) : "(no manifest)", step,
		 err ? err + (len > 3000 ? len - 3000 : 0) : "(none)");
	json_object_put(m);
	return buf;
}

void hostd_test_wait_signal(pid_t pid)
{
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFSIGNALED(st));
}

void hostd_test_teardown_results(void)
{
	char path[600];
	snprintf(path, sizeof(path), "%s/results", tmpdir);
	int r = testlib_rmtree(path);
	ck_assert_msg(r == 0, "cannot remove %s: %s", path, strerror(-r));
}

void hostd_test_wait_first_barrier(int seconds)
{
	/* Polled: the file is written by another process, and inotify on a
	 * path that does not exist yet would need the folder watched too. */
	char path[512];
	snprintf(path, sizeof(path), "%s/results/t/barriers.ndjson", tmpdir);
	struct stat st;
	for (int i = 0; i < seconds * 10 && (stat(path, &st) < 0 || st.st_size == 0); i++)
		usleep(100 * 1000);
	ck_assert_msg(stat(path, &st) == 0 && st.st_size > 0, "no barrier record within %d s; %s",
		      seconds, run_diagnosis());
}

const char *hostd_stderr(void)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/stderr", tmpdir);
	const char *t = read_text(path);
	return t ? t : "";
}

void assert_no_run_folder(void)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/results/t", tmpdir);
	ck_assert_msg(access(path, F_OK) != 0, "%s is left behind; hostd said:\n%s", path,
		      hostd_stderr());
}

int hostd_test_check(const char *extra, char *out, size_t size)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd),
		 "'%s' --check --host-config '%s/h.conf' --guest-config "
		 "'%s/g.conf' --state-dir '%s/state' --results '%s/results' %s 2>&1",
		 hostd_path, tmpdir, tmpdir, tmpdir, tmpdir, extra);
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	size_t n = fread(out, 1, size - 1, p);
	out[n] = '\0';
	int st = pclose(p);
	ck_assert(WIFEXITED(st));
	return WEXITSTATUS(st);
}
