// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What a config may ask of the machine without running anything: the
 * facts MMTests' include-sizes.sh computes, and the answers to the few
 * command substitutions MMTests' configs use (`uname -m`, `whoami`, `cat
 * /proc/sys/vm/dirty_ratio`, `nas-class.sh`, ...).  Each is read from a fact or from a file
 * under /proc/sys or /sys; nothing is ever run.
 */
#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "config_int.h"
#include "fileio.h"
#include "xalloc.h"

#define HUGE_PAGESIZE_DEFAULT (2u << 20) /* x86-64's, when the node says nothing */
#define SYS_FILE_MAX 4096		 /* bytes read of a /proc/sys or /sys file */
#define CPUINFO_MAX (8 << 20)		 /* bytes read of /proc/cpuinfo */

static void fact_u64(struct config *c, const char *name, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	config_set_fact(c, name, buf);
}

void config__process_facts(struct config *c)
{
	struct utsname u;
	struct passwd *pw = getpwuid(geteuid());
	long page = sysconf(_SC_PAGESIZE);
	char buf[32];

	/* What `uname -m` in a config stands for (MMTests' i386 clamps).  A
	 * guest's config is read on its KVM host, whose machine it shares; a
	 * caller may set the facts to something else before loading. */
	if (uname(&u) != 0)
		memset(&u, 0, sizeof(u));
	config_set_fact(c, CONFIG_MACHINE_FACT, u.machine);
	config_set_fact(c, "KERNEL_RELEASE", u.release);
	config_set_fact(c, "KERNEL_NAME", u.sysname);
	config_set_fact(c, "WHOAMI", pw ? pw->pw_name : "root");
	snprintf(buf, sizeof(buf), "%u", (unsigned)geteuid());
	config_set_fact(c, "UID", buf);
	/* $$: stable for the run, so that a name made with it is the same in
	 * every file and every node */
	snprintf(buf, sizeof(buf), "%ld", (long)getpid());
	config_set_fact(c, CONFIG_PID_FACT, buf);
	fact_u64(c, "PAGESIZE", page > 0 ? (uint64_t)page : 4096);
	fact_u64(c, "WORDSIZE", sizeof(long));
	fact_u64(c, "DOUBLESIZE", sizeof(double));
}

void config_set_include_sizes(struct config *c, uint64_t memtotal, uint64_t huge,
			      const uint64_t *node_bytes, size_t nnodes)
{
	const struct config_var *pv = config__find(&c->facts, "PAGESIZE", 8);
	uint64_t page = pv ? strtoull(pv->value, NULL, 10) : 4096, order = 0;
	size_t order_ids[64];
	char name[48];

	if (huge == 0)
		huge = HUGE_PAGESIZE_DEFAULT;
	if (page == 0)
		page = 4096;
	fact_u64(c, "HUGE_PAGESIZE", huge);
	fact_u64(c, "MEMTOTAL_PAGES", memtotal / page);
	fact_u64(c, "MEMTOTAL_HUGEPAGES", memtotal / huge);
	while ((page << order) < huge && order < 63)
		order++;
	fact_u64(c, "HUGETLB_ORDER", order);
	if (nnodes > 64)
		nnodes = 64;
	/* get_numa_details: sizes by node id, ids ordered by size (numactl's
	 * output through sort -n -k4: the smallest first, ties by id) */
	for (size_t i = 0; i < nnodes; i++) {
		size_t j = i;

		snprintf(name, sizeof(name), "MMTESTS_NODE_SIZE[%zu]", i);
		fact_u64(c, name, node_bytes[i]);
		while (j > 0 && node_bytes[order_ids[j - 1]] > node_bytes[i]) {
			order_ids[j] = order_ids[j - 1];
			j--;
		}
		order_ids[j] = i;
	}
	for (size_t i = 0; i < nnodes; i++) {
		snprintf(name, sizeof(name), "MMTESTS_NODE_ID_BY_SIZE[%zu]", i);
		fact_u64(c, name, order_ids[i]);
	}
	/* $NAME of an array is its element 0, as in bash */
	if (nnodes > 0) {
		fact_u64(c, "MMTESTS_NODE_SIZE", node_bytes[0]);
		fact_u64(c, "MMTESTS_NODE_ID_BY_SIZE", order_ids[0]);
	}
}

void config_set_root(struct config *c, const char *root)
{
	free(c->root);
	c->root = root ? xstrdup(root) : NULL;
}

void config_set_node_elsewhere(struct config *c, bool elsewhere)
{
	c->elsewhere = elsewhere;
}

/*
 * The files under /sys whose text a node's facts say, for a node that is
 * not this machine: its CPUs and NUMA nodes as the kernel lists them
 * ("0-3", "0" for one), its huge page size.  A template guest's facts are
 * its own (GUEST_VCPUS, one NUMA node); an existing domain's are the
 * host's, as for the rest of its plan (docs/benchmarks.md).
 */
static char *fact_file(struct config_lexer *lx, const char *p, size_t n)
{
	static const char *const files[][2] = {
		{ "/sys/devices/system/cpu/online", "NUM_LOGICAL_CPUS" },
		{ "/sys/devices/system/cpu/present", "NUM_LOGICAL_CPUS" },
		{ "/sys/devices/system/cpu/possible", "NUM_LOGICAL_CPUS" },
		{ "/sys/devices/system/node/online", "NUM_NODES" },
		{ "/sys/devices/system/node/possible", "NUM_NODES" },
		{ "/sys/devices/system/node/has_memory", "NUM_NODES" },
		{ "/sys/devices/system/node/has_cpu", "NUM_NODES" },
		{ "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "HUGE_PAGESIZE" },
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (strlen(files[i][0]) != n || memcmp(files[i][0], p, n))
			continue;
		const char *name = files[i][1];
		const struct config_var *v = config__find(&lx->c->facts, name, strlen(name));
		int64_t x = 0;
		if (!v || !config__parse_int(v->value, &x) || x < 1)
			return NULL;
		if (name[0] == 'H')
			return xstrdup(v->value);
		return x == 1 ? xstrdup("0") : xasprintf("0-%" PRId64, x - 1);
	}
	return NULL;
}

/* A path under /proc/sys/ or /sys/ of plain characters, never "..". */
static bool sys_path_ok(const char *p, size_t n)
{
	if (!((n > 10 && !memcmp(p, "/proc/sys/", 10)) || (n > 5 && !memcmp(p, "/sys/", 5))))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!config__is_name_char(p[i]) && !strchr("/.-:", p[i]))
			return false;
	return memmem(p, n, "..", 2) == NULL;
}

/*
 * hostd reads configs as root, also for users of its service: a file a
 * config reads (source, cat) must be one everybody may read, so that no
 * config shows its author, through an error message, what only root may.
 */
int config__readable_by_all(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	/* a FIFO or /dev/stdin would block the reader, /dev/zero feed it */
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	return (st.st_mode & S_IROTH) ? 0 : -EACCES;
}

const char *config__read_why(int r)
{
	if (r == -EINVAL)
		return "not a regular file";
	if (r == -EACCES)
		return "not readable by everybody (hostd reads configs as root)";
	return strerror(-r);
}

/* The text of a /proc or /sys file for the node: from its facts (fact_file)
 * when it is not this machine and they say it, else read here; *guessed
 * then says whether that read stands in for another machine's file. */
static int read_sys(struct config_lexer *lx, size_t at, const char *cmd, const char *p, size_t n,
		    char **out, bool *guessed)
{
	const char *root = lx->c->root ? lx->c->root : "";

	*guessed = false;
	if (lx->c->elsewhere && (*out = fact_file(lx, p, n)) != NULL)
		return 0;
	*guessed = lx->c->elsewhere;
	char *path = xasprintf("%s%.*s", root, (int)n, p), *text = NULL;
	size_t len = 0;
	int r = config__readable_by_all(path);
	/* /proc/cpuinfo: some 1.5 KiB per CPU */
	bool cpuinfo = n == 13 && !memcmp(p, "/proc/cpuinfo", 13);

	if (r == 0)
		r = fileio_read_all(path, cpuinfo ? CPUINFO_MAX : SYS_FILE_MAX, &text, &len);

	free(path);
	if (r < 0)
		return config__error(lx, at,
				     "expected a file that can be read after %s, found "
				     "%.*s: %s",
				     cmd, (int)n, p, config__read_why(r));
	while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
		text[--len] = '\0';
	*out = text;
	return 0;
}

int config__grep_file(struct config_lexer *lx, size_t pos, const char *path, const char *text,
		      bool *found, bool *guessed)
{
	size_t n = strlen(path);
	char *body = NULL;
	int r;

	*found = false;
	if (!(n == 13 && !memcmp(path, "/proc/cpuinfo", 13)) && !sys_path_ok(path, n))
		return config__error(lx, pos,
				     "expected /proc/cpuinfo or a file under /proc/sys or "
				     "/sys after grep -q TEXT, found \"%.60s\"",
				     path);
	r = read_sys(lx, pos, "grep -q", path, n, &body, guessed);
	if (r < 0)
		return r;
	*found = strstr(body, text) != NULL;
	free(body);
	return 0;
}

/* `cat FILE` of a /proc/sys or /sys file: its text, and a warning naming
 * the line when that is hostd's machine's file standing in for a guest's. */
static int cat_sys(struct config_lexer *lx, size_t at, const char *p, size_t n, char **out)
{
	bool guessed;
	int r = read_sys(lx, at, "cat", p, n, out, &guessed);

	if (r == 0 && guessed)
		config__warn(lx->c, lx->file, lx->line, config__column(lx, at),
			     "cat %.*s answered \"%.40s\" from hostd's machine: this node is a "
			     "libvirt guest, whose own file is not known before it runs (set the "
			     "value in the config if it matters)",
			     (int)n, p, *out);
	return r;
}

static bool is(const char *cmd, size_t n, const char *form)
{
	return strlen(form) == n && memcmp(cmd, form, n) == 0;
}

/* The answer of a fact, or NULL when it is not set: what uname says is
 * not what a file's MACHINE=... says. */
static char *fact(struct config_lexer *lx, const char *name)
{
	const struct config_var *v = config__find(&lx->c->facts, name, strlen(name));

	return v ? xstrdup(v->value) : NULL;
}

static int64_t fact_int(struct config_lexer *lx, const char *name)
{
	const struct config_var *v = config__lookup(lx->c, name, strlen(name));
	int64_t x = 0;

	return v && config__parse_int(v->value, &x) ? x : 0;
}

/*
 * MMTests' bin/nas-class.sh: the NAS Parallel Benchmarks' problem class a
 * machine can run, by its rules: B under 2 GiB of memory (class C needs
 * 0.8 GB), C under 16 GiB (class D needs 12.8 GB) or under 16 CPUs, else
 * D.  From the node's facts as the config sees them at this line (after a
 * limit_memory too, as the script's `free` would).  MMTests' own copy now
 * prints C before it reaches these rules: the warning says so, since on a
 * large node the two differ.
 */
static char *nas_class(struct config_lexer *lx, size_t at)
{
	int64_t gib = fact_int(lx, "MEMTOTAL_BYTES") >> 30, cpus = fact_int(lx, "NUM_LOGICAL_CPUS");
	const char *cls = gib < 2 ? "B" : gib < 16 || cpus < 16 ? "C" : "D";

	if (lx->dry)
		return xstrdup("");
	config__warn(lx->c, lx->file, lx->line, config__column(lx, at),
		     "nas-class.sh answered %s from the node's %" PRId64 " GiB and %" PRId64 " CPUs "
		     "(B under 2 GiB, C under 16 GiB or 16 CPUs, else D)%s",
		     cls, gib, cpus,
		     cls[0] == 'C' ? ""
				   : "; MMTests' own copy of the script answers C whatever "
				     "the machine (an early exit skips its rules), so MMTests would run class C "
				     "here");
	return xstrdup(cls);
}

static bool is_nas_class(const char *cmd, size_t n)
{
	static const char name[] = "nas-class.sh";
	size_t k = sizeof(name) - 1;

	return n >= k && !memcmp(cmd + n - k, name, k) && (n == k || cmd[n - k - 1] == '/') &&
	       !memchr(cmd, ' ', n);
}

int config__answer(struct config_lexer *lx, size_t at, const char *cmd, size_t n, char **out)
{
	static const char *const facts[][2] = {
		{ "uname -m", CONFIG_MACHINE_FACT },
		{ "uname -r", "KERNEL_RELEASE" },
		{ "uname -s", "KERNEL_NAME" },
		{ "uname", "KERNEL_NAME" },
		{ "whoami", "WHOAMI" },
		{ "id -un", "WHOAMI" },
		{ "id -u", "UID" },
		{ "nproc", "NUM_LOGICAL_CPUS" },
		{ "getconf PAGESIZE", "PAGESIZE" },
		{ "getconf PAGE_SIZE", "PAGESIZE" },
	};

	*out = NULL;
	for (size_t i = 0; i < sizeof(facts) / sizeof(facts[0]); i++)
		if (is(cmd, n, facts[i][0])) {
			*out = fact(lx, facts[i][1]);
			if (!*out)
				*out = xstrdup("");
			return 0;
		}
	if (is_nas_class(cmd, n)) {
		*out = nas_class(lx, at);
		return 0;
	}
	if (n > 4 && !memcmp(cmd, "cat ", 4)) {
		const char *p = cmd + 4;
		size_t pn = n - 4;

		while (pn > 0 && config__is_blank(*p))
			p++, pn--;
		if (sys_path_ok(p, pn))
			return lx->dry ? (*out = xstrdup(""), 0) : cat_sys(lx, at, p, pn, out);
	}
	return config__error(lx, at,
			     "expected a value, found the command substitution of "
			     "'%.*s': lockstep never runs commands; it answers only " CONFIG_ANSWERS,
			     (int)(n < 60 ? n : 60), cmd);
}
