// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * System facts read from /sys and /proc below a root prefix, so that tests
 * can point it at a fake tree.  Each fact has a safe default when its file
 * is missing (containers and old kernels lack some of them).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "fileio.h"
#include "sysfacts.h"
#include "xalloc.h"

#define SMALL_FILE_MAX 65536
#define LLC_MAX 4096 /* distinct caches remembered; more means a broken tree */

struct root {
	char path[PATH_MAX];
};

/* Copies src, cut to size - 1 bytes: a name longer than its field is still
 * useful cut short. */
static void set_str(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

static int root_path(const struct root *r, const char *rel, char *buf, size_t size)
{
	if (snprintf(buf, size, "%s%s", r->path, rel) >= (int)size)
		return -ENAMETOOLONG;
	return 0;
}

/* The first line of a small file, without its newline and surrounding blanks. */
static int read_line(const struct root *r, const char *rel, char *out, size_t size)
{
	char path[PATH_MAX], *buf, *s, *e;
	int ret;

	ret = root_path(r, rel, path, sizeof(path));
	if (ret < 0)
		return ret;
	ret = fileio_read_all(path, SMALL_FILE_MAX, &buf, NULL);
	if (ret < 0)
		return ret;
	for (s = buf; *s == ' ' || *s == '\t'; s++)
		;
	e = s + strcspn(s, "\n");
	while (e > s && isspace((unsigned char)e[-1]))
		e--;
	*e = '\0';
	set_str(out, size, s);
	free(buf);
	return 0;
}

/* "0-3,5,7-8" -> 7; -EINVAL on anything else. */
static int count_cpu_list(const char *s)
{
	long count = 0;

	while (*s) {
		char *end;
		long a, b;

		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		a = b = strtol(s, &end, 10);
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				return -EINVAL;
			b = strtol(end + 1, &end, 10);
		}
		if (b < a || b - a >= INT_MAX - count)
			return -EINVAL;
		count += b - a + 1;
		if (*end == ',')
			end++;
		else if (*end != '\0')
			return -EINVAL;
		s = end;
	}
	return count > 0 ? (int)count : -EINVAL;
}

static bool is_numbered(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);

	if (strncmp(name, prefix, n) != 0 || name[n] == '\0')
		return false;
	for (name += n; *name; name++)
		if (!isdigit((unsigned char)*name))
			return false;
	return true;
}

static int count_nodes(const struct root *r)
{
	char path[PATH_MAX];
	struct dirent *de;
	int count = 0;
	DIR *d;

	if (root_path(r, "/sys/devices/system/node", path, sizeof(path)) < 0)
		return 1;
	d = opendir(path);
	if (!d)
		return 1;
	while ((de = readdir(d)))
		count += is_numbered(de->d_name, "node");
	closedir(d);
	return count > 0 ? count : 1;
}

struct llc_set {
	int level;
	size_t n;
	char *lists[LLC_MAX];
};

static void llc_add(struct llc_set *s, int level, const char *list)
{
	if (level < s->level)
		return;
	if (level > s->level) {
		for (size_t i = 0; i < s->n; i++)
			free(s->lists[i]);
		s->n = 0;
		s->level = level;
	}
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->lists[i], list) == 0)
			return;
	if (s->n < LLC_MAX)
		s->lists[s->n++] = xstrdup(list);
}

/* The caches of one CPU: cpuN/cache/indexM/{level,shared_cpu_list}. */
static void scan_cpu_caches(const struct root *r, const char *cpu, struct llc_set *s)
{
	char rel[PATH_MAX], val[4096], dir[PATH_MAX];
	struct dirent *de;
	DIR *d;

	snprintf(rel, sizeof(rel), "/sys/devices/system/cpu/%s/cache", cpu);
	if (root_path(r, rel, dir, sizeof(dir)) < 0 || !(d = opendir(dir)))
		return;
	while ((de = readdir(d))) {
		char list[4096];
		int level;

		if (!is_numbered(de->d_name, "index"))
			continue;
		snprintf(rel, sizeof(rel), "/sys/devices/system/cpu/%s/cache/%s/level", cpu,
			 de->d_name);
		if (read_line(r, rel, val, sizeof(val)) < 0 || sscanf(val, "%d", &level) != 1)
			continue;
		snprintf(rel, sizeof(rel), "/sys/devices/system/cpu/%s/cache/%s/shared_cpu_list",
			 cpu, de->d_name);
		if (read_line(r, rel, list, sizeof(list)) < 0)
			continue;
		llc_add(s, level, list);
	}
	closedir(d);
}

static int count_llcs(const struct root *r)
{
	struct llc_set *s = xcalloc(1, sizeof(*s));
	char path[PATH_MAX];
	struct dirent *de;
	int count;
	DIR *d;

	if (root_path(r, "/sys/devices/system/cpu", path, sizeof(path)) == 0 && (d = opendir(path))) {
		while ((de = readdir(d)))
			if (is_numbered(de->d_name, "cpu"))
				scan_cpu_caches(r, de->d_name, s);
		closedir(d);
	}
	count = s->n > 0 ? (int)s->n : 1;
	for (size_t i = 0; i < s->n; i++)
		free(s->lists[i]);
	free(s);
	return count;
}

static void read_meminfo(const struct root *r, struct sysfacts *f)
{
	char path[PATH_MAX], line[256];
	unsigned long long kb;
	FILE *fp;

	if (root_path(r, "/proc/meminfo", path, sizeof(path)) < 0 || !(fp = fopen(path, "re")))
		return;
	while (fgets(line, sizeof(line), fp))
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1 && kb < UINT64_MAX / 1024)
			f->memtotal_bytes = kb * 1024;
		else if (sscanf(line, "Hugepagesize: %llu kB", &kb) == 1 && kb < UINT64_MAX / 1024)
			f->huge_pagesize = kb * 1024;
	fclose(fp);
}

/* "Node 0 MemTotal:  24576 kB" of each node's meminfo; a node without one
 * has all the memory when it is the only node. */
static void read_node_memory(const struct root *r, struct sysfacts *f)
{
	for (int n = 0; n < f->num_nodes && n < SYSFACTS_NODES_MAX; n++) {
		char path[PATH_MAX], rel[64], line[256];
		unsigned long long kb;
		int id;
		FILE *fp;

		snprintf(rel, sizeof(rel), "/sys/devices/system/node/node%d/meminfo", n);
		if (root_path(r, rel, path, sizeof(path)) < 0 || !(fp = fopen(path, "re")))
			continue;
		while (fgets(line, sizeof(line), fp))
			if (sscanf(line, "Node %d MemTotal: %llu kB", &id, &kb) == 2 &&
			    kb < UINT64_MAX / 1024) {
				f->node_mem_bytes[n] = kb * 1024;
				break;
			}
		fclose(fp);
	}
	if (f->num_nodes == 1 && f->node_mem_bytes[0] == 0)
		f->node_mem_bytes[0] = f->memtotal_bytes;
}

static bool has_word(const char *s, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = s; (p = strstr(p, word)); p += n)
		if ((p == s || isspace((unsigned char)p[-1])) &&
		    (p[n] == '\0' || isspace((unsigned char)p[n])))
			return true;
	return false;
}

/* Only the first CPU's block matters: model and flags are the same on all. */
static void read_cpuinfo(const struct root *r, struct sysfacts *f)
{
	char path[PATH_MAX], *line = NULL;
	bool model = false, flags = false;
	size_t cap = 0;
	FILE *fp;

	if (root_path(r, "/proc/cpuinfo", path, sizeof(path)) < 0 || !(fp = fopen(path, "re")))
		return;
	while ((!model || !flags) && getline(&line, &cap, fp) > 0) {
		char *colon = strchr(line, ':'), *v;

		if (!colon)
			continue;
		for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
			;
		v[strcspn(v, "\n")] = '\0';
		if (!model && strncmp(line, "model name", 10) == 0) {
			set_str(f->cpu_model, sizeof(f->cpu_model), v);
			model = true;
		} else if (!flags && strncmp(line, "flags", 5) == 0) {
			f->has_hw_virt = has_word(v, "vmx") || has_word(v, "svm");
			flags = true;
		}
	}
	free(line);
	fclose(fp);
}

static void read_identity(const struct root *r, struct sysfacts *f, bool real_root)
{
	struct utsname u;

	/* uname(2) is the truth for the running system; a fake tree has files. */
	if (real_root && uname(&u) == 0) {
		set_str(f->hostname, sizeof(f->hostname), u.nodename);
		set_str(f->kernel, sizeof(f->kernel), u.release);
	} else {
		read_line(r, "/proc/sys/kernel/hostname", f->hostname, sizeof(f->hostname));
		read_line(r, "/proc/sys/kernel/osrelease", f->kernel, sizeof(f->kernel));
	}
}

int sysfacts_read(struct sysfacts *f, const char *root)
{
	struct root r;
	char val[4096];
	size_t len;
	int n;

	memset(f, 0, sizeof(*f));
	if (!root || !*root)
		root = "/";
	len = strlen(root);
	while (len > 0 && root[len - 1] == '/')
		len--;
	if (len >= sizeof(r.path))
		return -ENAMETOOLONG;
	memcpy(r.path, root, len);
	r.path[len] = '\0';

	n = read_line(&r, "/sys/devices/system/cpu/online", val, sizeof(val));
	if (n == 0)
		n = count_cpu_list(val);
	if (n < 0 && len == 0) {
		long online = sysconf(_SC_NPROCESSORS_ONLN);

		n = online > 0 && online <= INT_MAX ? (int)online : n;
	}
	if (n < 0)
		return n;
	f->num_logical_cpus = n;
	f->num_nodes = count_nodes(&r);
	f->num_llcs = count_llcs(&r);
	read_meminfo(&r, f);
	read_node_memory(&r, f);
	read_line(&r, "/proc/sys/kernel/random/boot_id", f->boot_id, sizeof(f->boot_id));
	read_line(&r, "/sys/devices/system/clocksource/clocksource0/current_clocksource",
		  f->clocksource, sizeof(f->clocksource));
	read_cpuinfo(&r, f);
	read_identity(&r, f, len == 0);
	return 0;
}
