// SPDX-License-Identifier: GPL-2.0-or-later
/* common/ apart from the config reader: xalloc, clock, fileio, log, sysfacts. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "config_files.h"
#include "diag.h"
#include "fileio.h"
#include "log.h"
#include "sysfacts.h"
#include "testlib.h"
#include "xalloc.h"

static char tmp[64];

static void tmp_setup(void)
{
	testlib_tmpdir(tmp, sizeof(tmp), "common");
}

/* A path below the temporary folder; each call returns a new string. */
static char *at(const char *fmt, ...)
{
	char rel[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	return xasprintf("%s/%s", tmp, rel);
}

/* Writes text to tmp/rel, creating the folders on the way. */
static void put(const char *rel, const char *text)
{
	char *path = at("%s", rel), *slash = strrchr(path, '/');

	*slash = '\0';
	ck_assert_int_eq(fileio_mkdir_p(path, 0755), 0);
	*slash = '/';
	ck_assert_int_eq(fileio_write_atomic(path, text, strlen(text)), 0);
	free(path);
}

static char *slurp(const char *path)
{
	char *buf;
	size_t len;

	ck_assert_int_eq(fileio_read_all(path, 1 << 20, &buf, &len), 0);
	ck_assert_uint_eq(strlen(buf), len);
	return buf;
}

START_TEST(test_xalloc)
{
	char *s = xasprintf("%s-%d", "guest", 7), *d = xstrdup("abc"), *n = xstrndup("abcdef", 3);
	char *z = xmalloc(0);
	int *c = xcalloc(4, sizeof(int));

	ck_assert_str_eq(s, "guest-7");
	ck_assert_str_eq(d, "abc");
	ck_assert_str_eq(n, "abc");
	ck_assert_int_eq(c[0] | c[1] | c[2] | c[3], 0);
	c = xrealloc(c, 1000 * sizeof(int));
	c[999] = 5;
	ck_assert_int_eq(c[999], 5);
	ck_assert_ptr_nonnull(z);
	free(s);
	free(d);
	free(n);
	free(z);
	free(c);
}
END_TEST

START_TEST(test_clock_format)
{
	char buf[32];

	clock_format_utc(0, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1970-01-01T00:00:00.000000Z");
	clock_format_utc(1234567890123456789LL, buf, sizeof(buf));
	ck_assert_str_eq(buf, "2009-02-13T23:31:30.123456Z");
	clock_format_utc(-1000, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1969-12-31T23:59:59.999999Z");
}
END_TEST

START_TEST(test_clock_monotonic)
{
	int64_t a = clock_mono_ns(), b = clock_mono_ns();

	ck_assert_int_ge(b, a);
	/* Later than 2020: the real clock is in nanoseconds since 1970. */
	ck_assert_int_gt(clock_real_ns(), 1577836800LL * NSEC_PER_SEC);
}
END_TEST

START_TEST(test_atomic_write)
{
	char *path = at("state.json"), *tmpfile = at("state.json.tmp"), *got;
	struct stat st;

	ck_assert_int_eq(fileio_write_atomic(path, "first\n", 6), 0);
	got = slurp(path);
	ck_assert_str_eq(got, "first\n");
	free(got);
	ck_assert_int_eq(fileio_write_atomic(path, "second, longer\n", 15), 0);
	got = slurp(path);
	ck_assert_str_eq(got, "second, longer\n");
	free(got);
	ck_assert_int_eq(stat(tmpfile, &st), -1);
	ck_assert_int_eq(errno, ENOENT);
	free(path);
	path = at("missing/dir/x");
	ck_assert_int_eq(fileio_write_atomic(path, "x", 1), -ENOENT);
	free(path);
	free(tmpfile);
}
END_TEST

START_TEST(test_append_sync)
{
	char *path = at("samples.ndjson"), *got;
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fileio_append_sync(fd, "{\"a\":1}\n", 8), 0);
	ck_assert_int_eq(fileio_append_sync(fd, "{\"b\":2}\n", 8), 0);
	close(fd);
	got = slurp(path);
	ck_assert_str_eq(got, "{\"a\":1}\n{\"b\":2}\n");
	free(got);
	ck_assert_int_eq(fileio_append_sync(-1, "x", 1), -EBADF);
	free(path);
}
END_TEST

START_TEST(test_read_all_limit)
{
	char *path = at("ten"), *buf = NULL;
	size_t len = 0;

	put("ten", "0123456789");
	ck_assert_int_eq(fileio_read_all(path, 10, &buf, &len), 0);
	ck_assert_uint_eq(len, 10);
	ck_assert_str_eq(buf, "0123456789");
	free(buf);
	ck_assert_int_eq(fileio_read_all(path, 9, &buf, &len), -EFBIG);
	ck_assert_int_eq(fileio_read_all(path, 0, &buf, &len), -EFBIG);
	free(path);
	path = at("nope");
	ck_assert_int_eq(fileio_read_all(path, 10, &buf, &len), -ENOENT);
	free(path);
	/* /proc files say size 0 and still have content. */
	ck_assert_int_eq(fileio_read_all("/proc/self/status", 1 << 20, &buf, &len), 0);
	ck_assert_ptr_nonnull(strstr(buf, "Name:"));
	free(buf);
}
END_TEST

START_TEST(test_read_all_large)
{
	size_t n = 300000;
	char *data = xmalloc(n), *path = at("big"), *buf;
	size_t len;

	for (size_t i = 0; i < n; i++)
		data[i] = (char)('a' + i % 26);
	ck_assert_int_eq(fileio_write_atomic(path, data, n), 0);
	ck_assert_int_eq(fileio_read_all(path, n, &buf, &len), 0);
	ck_assert_uint_eq(len, n);
	ck_assert_int_eq(memcmp(buf, data, n), 0);
	free(buf);
	free(data);
	free(path);
}
END_TEST

START_TEST(test_mkdir_p)
{
	char *deep = at("a/b//c/d/"), *file = at("a/file"), *below = at("a/file/x");
	struct stat st;

	ck_assert_int_eq(fileio_mkdir_p(deep, 0750), 0);
	ck_assert_int_eq(stat(deep, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_int_eq(fileio_mkdir_p(deep, 0750), 0); /* exists: fine */
	put("a/file", "x");
	ck_assert_int_eq(fileio_mkdir_p(file, 0750), -ENOTDIR);
	ck_assert_int_eq(fileio_mkdir_p(below, 0750), -ENOTDIR);
	ck_assert_int_eq(fileio_mkdir_p("", 0750), -EINVAL);
	free(deep);
	free(file);
	free(below);
}
END_TEST

START_TEST(test_copy)
{
	char *src = at("src"), *dst = at("dst"), *got;

	put("src", "verbatim\nconfig\n");
	put("dst", "something much longer that must be truncated away\n");
	ck_assert_int_eq(fileio_copy(src, dst), 0);
	got = slurp(dst);
	ck_assert_str_eq(got, "verbatim\nconfig\n");
	free(got);
	free(src);
	src = at("none");
	ck_assert_int_eq(fileio_copy(src, dst), -ENOENT);
	free(src);
	free(dst);
}
END_TEST

/* A link planted at the temporary name: the write below a folder fd fails
 * and the link's target is left as it was; by path (private folders) the
 * stale link is removed, never written through. */
START_TEST(test_atomic_write_planted_link)
{
	char *target = at("target"), *link = at("manifest.json.tmp"), *man = at("manifest.json");
	char *got;
	struct stat st;

	put("target", "root's own\n");
	ck_assert_int_eq(chmod(target, 0600), 0);
	ck_assert_int_eq(symlink(target, link), 0);
	int dfd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(dfd, 0);
	ck_assert_int_eq(fileio_write_atomic_at(dfd, "manifest.json", "{}\n", 3, 0640), -EEXIST);
	got = slurp(target);
	ck_assert_str_eq(got, "root's own\n");
	free(got);
	ck_assert_int_eq(lstat(link, &st), 0); /* left for whoever looks */
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_int_eq(stat(man, &st), -1);
	ck_assert_int_eq(fileio_write_atomic_at(dfd, "a/b", "x", 1, 0640), -EINVAL);
	/* the mode asked for, and no temporary file left */
	ck_assert_int_eq(fileio_write_atomic_at(dfd, "other.json", "x", 1, 0640), 0);
	got = at("other.json");
	ck_assert_int_eq(stat(got, &st), 0);
	free(got);
	ck_assert_uint_eq(st.st_mode & 0777, 0640 & ~umask(022));
	close(dfd);

	ck_assert_int_eq(fileio_write_atomic(man, "{}\n", 3), 0);
	got = slurp(target);
	ck_assert_str_eq(got, "root's own\n");
	free(got);
	got = slurp(man);
	ck_assert_str_eq(got, "{}\n");
	free(got);
	free(target);
	free(link);
	free(man);
}
END_TEST

/* Configs by content: a map in use answers every read and nothing else is
 * opened; recording keeps what was read from the disk. */
/* rm -r below a folder fd: the tree goes, what a link in it points to
 * stays, a missing name is no error, and the depth limit holds. */
START_TEST(test_remove_tree)
{
	put("run/nodes/g1/work/deep/file", "x");
	put("run/manifest.json", "{}");
	put("outside/keep", "keep");
	char *target = at("outside"), *link = at("run/nodes/g1/work/link");
	ck_assert_int_eq(symlink(target, link), 0);
	int dfd = open(tmp, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	ck_assert_int_eq(fileio_remove_tree_at(dfd, "run", 2), -ELOOP);
	ck_assert_int_eq(fileio_remove_tree_at(dfd, "run", 16), 0);
	char *run = at("run"), *keep = at("outside/keep");
	ck_assert_int_eq(access(run, F_OK), -1);
	ck_assert_int_eq(access(keep, F_OK), 0);
	ck_assert_int_eq(fileio_remove_tree_at(dfd, "run", 16), 0);
	close(dfd);
	free(target);
	free(link);
	free(run);
	free(keep);
}
END_TEST

START_TEST(test_config_files)
{
	struct config_files *f = config_files_new(), *rec = config_files_new();
	char *text, *path = at("on-disk.conf");
	size_t len;
	struct config_diag d;

	put("on-disk.conf", "A=1\n");
	ck_assert_int_eq(config_files_add(f, "/x/h.conf", "B=2\n"), 0);
	ck_assert_int_eq(config_files_add(f, "/x/h.conf", "B=3\n"), 0); /* replaced */
	ck_assert_uint_eq(config_files_count(f), 1);
	for (int i = 1; i < CONFIG_FILES_MAX; i++) {
		char name[32];
		snprintf(name, sizeof(name), "/f%d", i);
		ck_assert_int_eq(config_files_add(f, name, ""), 0);
	}
	ck_assert_int_eq(config_files_add(f, "/one-more", ""), -E2BIG);

	/* without a map: the disk, recorded while asked */
	config_files_record(rec);
	ck_assert(config_files_exists(path));
	struct config *c = config_new();
	ck_assert_int_eq(config_files_load(c, path, &d), 0);
	ck_assert_str_eq(config_get(c, "A"), "1");
	config_free(c);
	config_files_record(NULL);
	ck_assert_str_eq(config_files_get(rec, path), "A=1\n");

	/* with one: only the map, the disk file unknown */
	config_files_use(f);
	ck_assert(config_files_in_use());
	ck_assert(!config_files_exists(path));
	ck_assert_int_eq(config_files_read(path, &text, &len), -ENOENT);
	ck_assert_int_eq(config_files_read("/x/h.conf", &text, &len), 0);
	ck_assert_str_eq(text, "B=3\n");
	ck_assert_uint_eq(len, 4);
	free(text);
	c = config_new();
	ck_assert_int_eq(config_files_load(c, path, &d), -ENOENT);
	ck_assert_msg(strstr(d.text, "not among the files hostctl submit sent"), "%s", d.text);
	ck_assert_str_eq(d.file, path);
	ck_assert_int_eq(config_files_load(c, "/x/h.conf", &d), 0);
	ck_assert_str_eq(config_get(c, "B"), "3");
	config_free(c);
	config_files_use(NULL);
	config_files_free(f);
	config_files_free(rec);
	free(path);
}
END_TEST

START_TEST(test_write_all_pipe)
{
	int p[2];
	char buf[16] = { 0 };

	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(fileio_write_all(p[1], "hello", 5), 0);
	close(p[1]);
	ck_assert_int_eq(read(p[0], buf, sizeof(buf)), 5);
	ck_assert_str_eq(buf, "hello");
	close(p[0]);
	ck_assert_int_eq(fileio_write_all(-1, "x", 1), -EBADF);
}
END_TEST

/* Runs fn in a child whose stderr is a pipe; returns what it wrote. */
static char *capture_stderr(void (*fn)(void))
{
	size_t len = 0, cap = 65536;
	char *out = xmalloc(cap + 1);
	int p[2], status;
	pid_t pid;
	ssize_t n;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(p[1], STDERR_FILENO);
		close(p[0]);
		close(p[1]);
		fn();
		_exit(0);
	}
	close(p[1]);
	while ((n = read(p[0], out + len, cap - len)) > 0)
		len += (size_t)n;
	close(p[0]);
	out[len] = '\0';
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return out;
}

static void assert_matches(const char *text, const char *pattern)
{
	regex_t re;

	ck_assert_int_eq(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
	ck_assert_msg(regexec(&re, text, 0, NULL, 0) == 0, "'%s' does not match '%s'", text, pattern);
	regfree(&re);
}

static void log_some(void)
{
	log_init("/usr/sbin/hostd", LOG_LVL_INFO);
	log_info("guest %s ready after %d ms", "g1", 42);
	log_debug("not shown at level info");
	log_warn("two\nlines");
	errno = ENOENT;
	log_error("open h.conf: %m");
}

START_TEST(test_log_terminal)
{
	char *out;

	unsetenv("JOURNAL_STREAM");
	out = capture_stderr(log_some);
	assert_matches(out,
		       "^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3} "
		       "hostd: info: guest g1 ready after 42 ms\n"
		       "[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3} "
		       "hostd: warning: two lines\n"
		       "[0-9-]{10} [0-9:.]{12} hostd: error: open h.conf: No such file or directory\n$");
	free(out);
}
END_TEST

static void log_journal(void)
{
	struct stat st;
	char env[64];

	fstat(STDERR_FILENO, &st);
	snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", env, 1);
	log_some();
}

START_TEST(test_log_journal)
{
	char *out = capture_stderr(log_journal);

	ck_assert_str_eq(out, "<6>guest g1 ready after 42 ms\n<4>two lines\n"
			      "<3>open h.conf: No such file or directory\n");
	free(out);
}
END_TEST

static void log_other_stream(void)
{
	/* The service's stream was replaced (e.g. redirected to a file). */
	setenv("JOURNAL_STREAM", "8:12345", 1);
	log_init("agent", LOG_LVL_DEBUG);
	log_debug("x");
}

START_TEST(test_log_journal_mismatch)
{
	char *out = capture_stderr(log_other_stream);

	assert_matches(out, "^[0-9-]{10} [0-9:.]{12} agent: debug: x\n$");
	free(out);
}
END_TEST

static void log_long(void)
{
	char big[10000];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	setenv("JOURNAL_STREAM", "garbage", 1);
	log_init("p", LOG_LVL_ERROR);
	log_info("dropped");
	log_error("%s", big);
}

START_TEST(test_log_long_line)
{
	char *out = capture_stderr(log_long);
	size_t len = strlen(out);

	/* One line, cut short with "..." within the line buffer. */
	ck_assert_uint_eq(len, 4096);
	ck_assert_ptr_eq(strchr(out, '\n'), out + len - 1);
	ck_assert_int_eq(memcmp(out + len - 4, "...\n", 4), 0);
	assert_matches(out, "^[0-9-]{10} [0-9:.]{12} p: error: xxx");
	free(out);
}
END_TEST

/* The status line (hostd's progress) is cleared by the next message, once;
 * a clear with nothing shown writes nothing. */
static void log_with_status(void)
{
	log_init("hostd", LOG_LVL_INFO);
	log_status(NULL);
	log_status("step 1/4");
	log_status("step 2/4");
	log_info("a");
	log_info("b");
	log_status("step 3/4");
	log_debug("not shown: leaves the line");
	log_status(NULL);
	log_status(NULL);
	log_status("");
}

START_TEST(test_log_status)
{
	unsetenv("JOURNAL_STREAM");
	char *out = capture_stderr(log_with_status);
	assert_matches(out, "^\r\x1b\\[Kstep 1/4\r\x1b\\[Kstep 2/4"
			    "\r\x1b\\[K[0-9-]{10} [0-9:.]{12} hostd: info: a\n"
			    "[0-9-]{10} [0-9:.]{12} hostd: info: b\n"
			    "\r\x1b\\[Kstep 3/4\r\x1b\\[K$");
	free(out);
}
END_TEST

/* Issue 14: a guest's text cannot drive a terminal or fake a log line. */
START_TEST(test_log_escape)
{
	char buf[64];
	const char *t = "a\x1b[2J\x07"
			"b\tc\xc2\x9b"
			"31m \xc3\xa9\x7f";
	size_t need = log_escape(t, strlen(t), buf, sizeof(buf));
	ck_assert_str_eq(buf, "a\\x1b[2J\\x07b\tc\\u009b31m \xc3\xa9\\x7f");
	ck_assert_uint_eq(need, strlen(buf));
	/* cut short: never half an escape or half a character */
	need = log_escape(t, strlen(t), buf, 4);
	ck_assert_str_eq(buf, "a");
	ck_assert_uint_gt(need, 4);
	log_escape("\xc3\xa9\xc3\xa9", 4, buf, 4);
	ck_assert_str_eq(buf, "\xc3\xa9");
	log_escape("x", 1, buf, 1);
	ck_assert_str_eq(buf, "");
	/* a NUL inside the length is escaped too */
	log_escape("a\0b", 3, buf, sizeof(buf));
	ck_assert_str_eq(buf, "a\\x00b");
}
END_TEST

static void log_hostile(void)
{
	unsetenv("JOURNAL_STREAM");
	log_init("hostd", LOG_LVL_INFO);
	log_warn("guest-2: agent error %s", "\x1b[2J\r\n2026-01-01 00:00:00.000 hostd: error: fake");
}

START_TEST(test_log_escapes_controls)
{
	char *out = capture_stderr(log_hostile);
	assert_matches(out, "^[0-9-]{10} [0-9:.]{12} hostd: warning: guest-2: agent error "
			    "\\\\x1b\\[2J  2026-01-01 00:00:00.000 hostd: error: fake\n$");
	free(out);
}
END_TEST

static void fake_cpu(int cpu, const char *llc_list)
{
	char rel[256], val[32];
	static const struct {
		int index, level;
	} caches[] = { { 0, 1 }, { 1, 1 }, { 2, 2 }, { 3, 3 } };

	for (size_t i = 0; i < 4; i++) {
		snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/cache/index%d/level", cpu,
			 caches[i].index);
		snprintf(val, sizeof(val), "%d\n", caches[i].level);
		put(rel, val);
		snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list",
			 cpu, caches[i].index);
		if (caches[i].level == 3)
			snprintf(val, sizeof(val), "%s\n", llc_list);
		else
			snprintf(val, sizeof(val), "%d\n", cpu);
		put(rel, val);
	}
}

START_TEST(test_sysfacts_fake)
{
	struct sysfacts f;

	put("sys/devices/system/cpu/online", "0-3,6\n");
	put("sys/devices/system/cpu/possible", "0-7\n");
	put("sys/devices/system/node/node0/cpulist", "0-1\n");
	put("sys/devices/system/node/node1/cpulist", "2-3\n");
	put("sys/devices/system/node/online", "0-1\n");
	fake_cpu(0, "0-1");
	fake_cpu(1, "0-1");
	fake_cpu(2, "2-3,6");
	fake_cpu(3, "2-3,6");
	fake_cpu(6, "2-3,6");
	put("proc/meminfo", "MemTotal:       24555412 kB\nMemFree:         1000 kB\n"
			    "Hugepagesize:       2048 kB\n");
	/* what MMTests' get_numa_details reads: each node's MemTotal */
	put("sys/devices/system/node/node0/meminfo", "Node 0 MemTotal:       16000000 kB\n"
						     "Node 0 MemFree:         1000 kB\n");
	put("sys/devices/system/node/node1/meminfo", "Node 1 MemTotal:        8555412 kB\n");
	put("proc/sys/kernel/random/boot_id", "0f2ab3c4-1111-2222-3333-444455556666\n");
	put("proc/sys/kernel/hostname", "labhost\n");
	put("proc/sys/kernel/osrelease", "6.1.0-test-amd64\n");
	put("sys/devices/system/clocksource/clocksource0/current_clocksource", "tsc\n");
	put("proc/cpuinfo",
	    "processor\t: 0\nvendor_id\t: GenuineIntel\n"
	    "model name\t: Intel(R) Xeon(R) Test CPU @ 2.00GHz\n"
	    "flags\t\t: fpu vme de pse vmx ept\n\nprocessor\t: 1\nmodel name\t: other\n");

	ck_assert_int_eq(sysfacts_read(&f, tmp), 0);
	ck_assert_int_eq(f.num_logical_cpus, 5);
	ck_assert_int_eq(f.num_nodes, 2);
	ck_assert_int_eq(f.num_llcs, 2);
	ck_assert_uint_eq(f.memtotal_bytes, 24555412ULL * 1024);
	ck_assert_uint_eq(f.huge_pagesize, 2048ULL * 1024);
	ck_assert_uint_eq(f.node_mem_bytes[0], 16000000ULL * 1024);
	ck_assert_uint_eq(f.node_mem_bytes[1], 8555412ULL * 1024);
	ck_assert_uint_eq(f.node_mem_bytes[2], 0);
	ck_assert_str_eq(f.boot_id, "0f2ab3c4-1111-2222-3333-444455556666");
	ck_assert_str_eq(f.hostname, "labhost");
	ck_assert_str_eq(f.kernel, "6.1.0-test-amd64");
	ck_assert_str_eq(f.clocksource, "tsc");
	ck_assert_str_eq(f.cpu_model, "Intel(R) Xeon(R) Test CPU @ 2.00GHz");
	ck_assert_int_eq(f.has_hw_virt, 1);
}
END_TEST

START_TEST(test_sysfacts_minimal)
{
	struct sysfacts f;
	char *root = xasprintf("%s///", tmp);

	put("sys/devices/system/cpu/online", "0\n");
	put("proc/cpuinfo", "model name\t: AMD Test\nflags\t\t: fpu svmx notsvm\n");
	ck_assert_int_eq(sysfacts_read(&f, root), 0);
	ck_assert_int_eq(f.num_logical_cpus, 1);
	ck_assert_int_eq(f.num_nodes, 1);
	ck_assert_int_eq(f.num_llcs, 1);
	ck_assert_uint_eq(f.memtotal_bytes, 0);
	ck_assert_uint_eq(f.huge_pagesize, 0);
	ck_assert_uint_eq(f.node_mem_bytes[0], 0); /* the one node has all of nothing */
	ck_assert_str_eq(f.boot_id, "");
	ck_assert_str_eq(f.clocksource, "");
	ck_assert_str_eq(f.cpu_model, "AMD Test");
	ck_assert_int_eq(f.has_hw_virt, 0); /* "svmx" is not "svm" */
	free(root);
}
END_TEST

START_TEST(test_sysfacts_broken)
{
	struct sysfacts f;

	ck_assert_int_eq(sysfacts_read(&f, tmp), -ENOENT);
	put("sys/devices/system/cpu/online", "garbage\n");
	ck_assert_int_eq(sysfacts_read(&f, tmp), -EINVAL);
	put("sys/devices/system/cpu/online", "3-1\n");
	ck_assert_int_eq(sysfacts_read(&f, tmp), -EINVAL);
	put("sys/devices/system/cpu/online", "0-99999999999999999999\n");
	ck_assert_int_eq(sysfacts_read(&f, tmp), -EINVAL);
}
END_TEST

START_TEST(test_sysfacts_real)
{
	struct sysfacts f;
	struct utsname u;

	ck_assert_int_eq(sysfacts_read(&f, "/"), 0);
	ck_assert_int_eq(f.num_logical_cpus, (int)sysconf(_SC_NPROCESSORS_ONLN));
	ck_assert_int_ge(f.num_nodes, 1);
	ck_assert_int_ge(f.num_llcs, 1);
	ck_assert_uint_gt(f.memtotal_bytes, 0);
	ck_assert_int_eq(uname(&u), 0);
	ck_assert_str_eq(f.kernel, u.release);
	ck_assert_uint_eq(strlen(f.boot_id), 36);
}
END_TEST

/* diag.h: the message lands in the caller's buffer, cut to fit, and the
 * code comes back for `return diag_set(...)`. */
static int prefixed(char *err, size_t errlen, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	r = diag_vset(err, errlen, r, "guest g1", fmt, ap);
	va_end(ap);
	return r;
}

START_TEST(test_diag_set)
{
	char err[16] = "untouched";

	ck_assert_int_eq(diag_set(err, sizeof(err), -ENOENT, "no %s", "file"), -ENOENT);
	ck_assert_str_eq(err, "no file");
	ck_assert_int_eq(diag_set(err, sizeof(err), -EINVAL, "%s", "a message too long"), -EINVAL);
	ck_assert_str_eq(err, "a message too l");
	strcpy(err, "untouched");
	ck_assert_int_eq(diag_set(err, 0, -EIO, "nothing"), -EIO);
	ck_assert_str_eq(err, "untouched");
	ck_assert_int_eq(prefixed(err, sizeof(err), -EPIPE, "gone%d", 3), -EPIPE);
	ck_assert_str_eq(err, "guest g1: gone3");
	ck_assert_int_eq(prefixed(err, 8, -EPIPE, "gone"), -EPIPE);
	ck_assert_str_eq(err, "guest g");
}
END_TEST

static Suite *common_suite(void)
{
	Suite *s = suite_create("common");
	TCase *mem = tcase_create("xalloc+clock"), *io = tcase_create("fileio");
	TCase *log = tcase_create("log"), *facts = tcase_create("sysfacts");

	tcase_add_test(mem, test_xalloc);
	tcase_add_test(mem, test_clock_format);
	tcase_add_test(mem, test_clock_monotonic);
	tcase_add_test(mem, test_diag_set);
	tcase_add_checked_fixture(io, tmp_setup, NULL);
	tcase_add_test(io, test_atomic_write);
	tcase_add_test(io, test_atomic_write_planted_link);
	tcase_add_test(io, test_config_files);
	tcase_add_test(io, test_append_sync);
	tcase_add_test(io, test_read_all_limit);
	tcase_add_test(io, test_read_all_large);
	tcase_add_test(io, test_mkdir_p);
	tcase_add_test(io, test_copy);
	tcase_add_test(io, test_remove_tree);
	tcase_add_test(io, test_write_all_pipe);
	tcase_add_test(log, test_log_terminal);
	tcase_add_test(log, test_log_journal);
	tcase_add_test(log, test_log_journal_mismatch);
	tcase_add_test(log, test_log_long_line);
	tcase_add_test(log, test_log_escape);
	tcase_add_test(log, test_log_status);
	tcase_add_test(log, test_log_escapes_controls);
	tcase_add_checked_fixture(facts, tmp_setup, NULL);
	tcase_add_test(facts, test_sysfacts_fake);
	tcase_add_test(facts, test_sysfacts_minimal);
	tcase_add_test(facts, test_sysfacts_broken);
	tcase_add_test(facts, test_sysfacts_real);
	suite_add_tcase(s, mem);
	suite_add_tcase(s, io);
	suite_add_tcase(s, log);
	suite_add_tcase(s, facts);
	return s;
}

int main(void)
{
	return testlib_main(common_suite());
}
