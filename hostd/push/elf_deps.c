// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A program's loader and libraries, found in the search order of glibc's
 * elf/dl-load.c as its manual page ld.so(8) describes it; the headers come
 * from elf_file.c.
 */
#include "elf_deps.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "xalloc.h"

#define CONF_MAX (1u << 20)
#define CONF_DEPTH_MAX 8
#define CONF_FILES_MAX 256 /* files read for one ld.so.conf, includes and all */

/* ---- ld.so.conf ------------------------------------------------------- */

struct strv {
	char **v;
	size_t n;
};

static bool strv_has(const struct strv *s, const char *x)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i], x) == 0)
			return true;
	return false;
}

static void strv_add(struct strv *s, const char *x)
{
	s->v = xrealloc(s->v, (s->n + 1) * sizeof(*s->v));
	s->v[s->n++] = xstrdup(x);
}

static void strv_free(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

static void conf_add_dir(struct strv *dirs, char *line)
{
	size_t len;

	/* libc5-era "DIR=TYPE" */
	line[strcspn(line, "=")] = '\0';
	len = strlen(line);
	while (len > 1 && line[len - 1] == '/')
		line[--len] = '\0';
	if (line[0] == '/' && len < PATH_MAX && dirs->n < ELF_DEPS_DIRS_MAX && !strv_has(dirs, line))
		strv_add(dirs, line);
}

/* What one ld.so.conf gives, and how many files it took: includes that
 * include themselves end at the limit. */
struct conf_ctx {
	struct strv dirs;
	unsigned files;
};

static void conf_read(const char *path, int depth, struct conf_ctx *c);

static void conf_include(const char *conf, char *patterns, int depth, struct conf_ctx *c)
{
	char *save = NULL;

	for (char *pat = strtok_r(patterns, " \t", &save); pat; pat = strtok_r(NULL, " \t", &save)) {
		char *full;
		glob_t g;

		if (pat[0] == '/') {
			full = xstrdup(pat);
		} else {
			const char *slash = strrchr(conf, '/');
			full = slash ? xasprintf("%.*s/%s", (int)(slash - conf), conf, pat)
				     : xstrdup(pat);
		}
		if (glob(full, 0, NULL, &g) == 0) {
			for (size_t i = 0; i < g.gl_pathc; i++)
				conf_read(g.gl_pathv[i], depth + 1, c);
			globfree(&g);
		}
		free(full);
	}
}

static void conf_read(const char *path, int depth, struct conf_ctx *c)
{
	char *text = NULL, *save = NULL;
	size_t len;

	if (depth > CONF_DEPTH_MAX || c->files >= CONF_FILES_MAX)
		return;
	c->files++;
	if (fileio_read_all(path, CONF_MAX, &text, &len) < 0)
		return;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		line[strcspn(line, "#")] = '\0';
		line += strspn(line, " \t");
		size_t n = strlen(line);
		while (n && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (!n)
			continue;
		if (strncmp(line, "include", 7) == 0 && (line[7] == ' ' || line[7] == '\t'))
			conf_include(path, line + 8, depth, c);
		else if (strncmp(line, "hwcap", 5) == 0 && (line[5] == ' ' || line[5] == '\t'))
			continue;
		else
			conf_add_dir(&c->dirs, line);
	}
	free(text);
}

int elf_deps_conf_dirs(const char *ld_so_conf, char ***dirs, size_t *n)
{
	struct conf_ctx c = { 0 };

	conf_read(ld_so_conf ? ld_so_conf : "/etc/ld.so.conf", 0, &c);
	*dirs = c.dirs.v;
	*n = c.dirs.n;
	return 0;
}

/* Debian's multiarch folder names, which its glibc searches by default. */
static const char *multiarch(const struct elf_file *f)
{
	bool is64 = f->elf_class == ELFCLASS64;

	switch (f->machine) {
	case EM_X86_64: return is64 ? "x86_64-linux-gnu" : "x86_64-linux-gnux32";
	case EM_386: return "i386-linux-gnu";
	case EM_AARCH64: return "aarch64-linux-gnu";
	case EM_ARM: return "arm-linux-gnueabihf";
	case EM_RISCV: return "riscv64-linux-gnu";
	case EM_PPC64: return "powerpc64le-linux-gnu";
	case EM_S390: return "s390x-linux-gnu";
	}
	return NULL;
}

static void system_dirs(const char *ld_so_conf, const struct elf_file *prog, struct strv *s)
{
	const char *ma = multiarch(prog);
	bool is64 = prog->elf_class == ELFCLASS64;
	const char *const defaults[] = { "/lib/%s",
					 "/usr/lib/%s",
					 is64 ? "/lib64" : "/lib",
					 is64 ? "/usr/lib64" : "/usr/lib",
					 "/lib",
					 "/usr/lib" };
	struct conf_ctx c = { 0 };
	char buf[PATH_MAX];

	conf_read(ld_so_conf ? ld_so_conf : "/etc/ld.so.conf", 0, &c);
	*s = c.dirs;
	for (size_t i = ma ? 0 : 2; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
		snprintf(buf, sizeof(buf), defaults[i], ma);
		conf_add_dir(s, buf);
	}
}

/* ---- resolving --------------------------------------------------------- */

/* A file the loader has loaded, in breadth-first order; 0 is the program. */
struct obj {
	char *name; /* the DT_NEEDED name it was found by */
	char *path;
	char *origin; /* $ORIGIN: the folder of path */
	struct elf_file f;
	size_t parent; /* the file that needed it first */
};

struct resolver {
	const struct elf_file *prog;
	struct strv sys; /* ld.so.conf and default folders */
	struct obj *objs;
	size_t nobjs;
	struct elf_deps *out;
};

static char *dirname_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return xstrdup(".");
	return slash == path ? xstrdup("/") : xstrndup(path, (size_t)(slash - path));
}

/* One RPATH/RUNPATH entry with $ORIGIN expanded; NULL when it is skipped
 * ($LIB, $PLATFORM, empty, relative: they depend on the loader's platform
 * or current folder, which the guest does not share). */
static char *expand_entry(const char *entry, size_t len, const char *origin)
{
	char out[PATH_MAX];
	size_t o = 0;

	for (size_t i = 0; i < len;) {
		const char *tok = NULL;
		size_t skip = 0;

		if (entry[i] == '$') {
			const char *rest = entry + i + 1;
			size_t left = len - i - 1;

			if (left >= 6 && !strncmp(rest, "ORIGIN", 6) &&
			    (left == 6 || !(rest[6] == '_' || (rest[6] >= 'A' && rest[6] <= 'Z') ||
					    (rest[6] >= 'a' && rest[6] <= 'z') ||
					    (rest[6] >= '0' && rest[6] <= '9'))))
				tok = origin, skip = 7;
			else if (left >= 8 && !strncmp(rest, "{ORIGIN}", 8))
				tok = origin, skip = 9;
			else if ((left >= 3 && !strncmp(rest, "LIB", 3)) ||
				 (left >= 5 && !strncmp(rest, "{LIB}", 5)) ||
				 (left >= 8 && !strncmp(rest, "PLATFORM", 8)) ||
				 (left >= 10 && !strncmp(rest, "{PLATFORM}", 10)))
				return NULL;
		}
		if (tok) {
			size_t n = strlen(tok);
			if (o + n >= sizeof(out))
				return NULL;
			memcpy(out + o, tok, n);
			o += n;
			i += skip;
			continue;
		}
		if (o + 1 >= sizeof(out))
			return NULL;
		out[o++] = entry[i++];
	}
	out[o] = '\0';
	return out[0] == '/' ? xstrdup(out) : NULL;
}

/* Appends the folders of a colon-separated list to dirs. */
static void add_path_list(struct strv *dirs, const char *list, const char *origin)
{
	for (const char *p = list; p && *p;) {
		size_t len = strcspn(p, ":");
		char *dir = dirs->n < ELF_DEPS_DIRS_MAX ? expand_entry(p, len, origin) : NULL;

		if (dir && !strv_has(dirs, dir))
			strv_add(dirs, dir);
		free(dir);
		p += len;
		if (*p == ':')
			p++;
	}
}

/* Where the loader looks for a library that obj k needs, in order. */
static void search_dirs(const struct resolver *rs, size_t k, struct strv *dirs)
{
	const struct obj *o = &rs->objs[k];

	if (!o->f.runpath) {
		/* DT_RPATH of the chain of loaders, an object with RUNPATH excluded */
		for (size_t a = k;; a = rs->objs[a].parent) {
			const struct obj *l = &rs->objs[a];

			if (!l->f.runpath && l->f.rpath)
				add_path_list(dirs, l->f.rpath, l->origin);
			if (a == 0)
				break;
		}
	}
	if (o->f.runpath)
		add_path_list(dirs, o->f.runpath, o->origin);
	for (size_t i = 0; i < rs->sys.n; i++)
		if (!strv_has(dirs, rs->sys.v[i]))
			strv_add(dirs, rs->sys.v[i]);
}

/* A library the program's loader would accept: same class and machine. */
static bool compatible(const struct elf_file *prog, const struct elf_file *lib)
{
	return lib->elf_class == prog->elf_class && lib->machine == prog->machine &&
	       lib->type == ET_DYN;
}

static bool already_loaded(const struct resolver *rs, const char *name)
{
	const struct elf_deps *d = rs->out;

	if (d->interp && (!strcmp(name, d->interp) || !strcmp(name, d->interp_name)))
		return true;
	for (size_t i = 1; i < rs->nobjs; i++)
		if (!strcmp(rs->objs[i].name, name) ||
		    (rs->objs[i].f.soname && !strcmp(rs->objs[i].f.soname, name)))
			return true;
	return false;
}

/* Finds name for obj k; appends it to objs.  -ENOENT when no folder has a
 * compatible file of that name. */
static int find_one(struct resolver *rs, size_t k, const char *name)
{
	struct strv dirs = { 0 };
	struct elf_file f;
	int r = -ENOENT;

	if (strchr(name, '/')) {
		/* a path: used as it is (a relative one would depend on the cwd) */
		if (name[0] == '/')
			strv_add(&dirs, "");
	} else {
		search_dirs(rs, k, &dirs);
	}
	for (size_t i = 0; i < dirs.n && r == -ENOENT; i++) {
		char *path = dirs.v[i][0] ? xasprintf("%s/%s", dirs.v[i], name) : xstrdup(name);

		if (strlen(path) < PATH_MAX && elf_file_read(path, &f) == 0) {
			if (compatible(rs->prog, &f)) {
				struct obj *o;

				rs->objs = xrealloc(rs->objs, (rs->nobjs + 1) * sizeof(*rs->objs));
				o = &rs->objs[rs->nobjs++];
				o->name = xstrdup(name);
				o->origin = dirname_of(path);
				o->path = path;
				o->f = f;
				o->parent = k;
				path = NULL;
				r = 0;
			} else {
				elf_file_fini(&f);
			}
		}
		free(path);
	}
	strv_free(&dirs);
	return r;
}

static int resolve_interp(struct resolver *rs, const char *prog_path)
{
	struct elf_deps *d = rs->out;
	struct elf_file f;
	char real[PATH_MAX];
	int r;

	d->interp = xstrdup(rs->prog->interp);
	/* a relative one would depend on the current folder */
	r = d->interp[0] == '/' ? elf_file_read(d->interp, &f) : -ENOENT;
	if (r == 0 && (f.elf_class != rs->prog->elf_class || f.machine != rs->prog->machine))
		r = -ENOEXEC;
	if (r == 0 && !realpath(d->interp, real))
		r = -errno;
	if (r < 0) {
		snprintf(d->missing, sizeof(d->missing), "%s", d->interp);
		snprintf(d->needed_by, sizeof(d->needed_by), "%s", prog_path);
		elf_file_fini(&f);
		return r == -ENOEXEC ? -ENOENT : r;
	}
	d->interp_real = xstrdup(real);
	if (f.soname) {
		d->interp_name = f.soname;
		f.soname = NULL;
	} else {
		d->interp_name =
			xstrdup(strrchr(d->interp, '/') ? strrchr(d->interp, '/') + 1 : d->interp);
	}
	elf_file_fini(&f);
	return 0;
}

/* Breadth-first, as the loader maps them: every DT_NEEDED of the program,
 * then theirs. */
static int resolve_all(struct resolver *rs)
{
	for (size_t k = 0; k < rs->nobjs; k++) {
		for (size_t i = 0; i < rs->objs[k].f.nneeded; i++) {
			const char *name = rs->objs[k].f.needed[i];

			if (already_loaded(rs, name))
				continue;
			if (rs->nobjs > ELF_DEPS_LIBS_MAX)
				return -E2BIG;
			if (find_one(rs, k, name) < 0) {
				snprintf(rs->out->missing, sizeof(rs->out->missing), "%s", name);
				snprintf(rs->out->needed_by, sizeof(rs->out->needed_by), "%s",
					 rs->objs[k].path);
				return -ENOENT;
			}
		}
	}
	return 0;
}

static int fill_libs(struct resolver *rs)
{
	struct elf_deps *d = rs->out;

	d->libs = xcalloc(rs->nobjs, sizeof(*d->libs));
	for (size_t i = 1; i < rs->nobjs; i++) {
		char real[PATH_MAX];

		if (!realpath(rs->objs[i].path, real))
			return -errno;
		d->libs[d->nlibs].name = xstrdup(rs->objs[i].name);
		d->libs[d->nlibs].path = xstrdup(rs->objs[i].path);
		d->libs[d->nlibs].real = xstrdup(real);
		d->nlibs++;
	}
	return 0;
}

int elf_deps_resolve(const char *path, const char *ld_so_conf, struct elf_deps *out)
{
	struct resolver rs = { .out = out };
	char real[PATH_MAX];
	int r;

	memset(out, 0, sizeof(*out));
	r = elf_file_read(path, &out->prog);
	if (r < 0)
		return r;
	if (!out->prog.interp && out->prog.nneeded == 0)
		return 0; /* static, static-pie included */
	if (!out->prog.interp) {
		/* libraries and no loader: only another loader could run it */
		snprintf(out->missing, sizeof(out->missing), "(PT_INTERP)");
		snprintf(out->needed_by, sizeof(out->needed_by), "%s", path);
		return -ENOEXEC;
	}
	if (!realpath(path, real))
		return -errno;
	rs.prog = &out->prog;
	r = resolve_interp(&rs, path);
	if (r < 0)
		return r;
	system_dirs(ld_so_conf, rs.prog, &rs.sys);
	rs.objs = xcalloc(1, sizeof(*rs.objs));
	rs.nobjs = 1;
	rs.objs[0].name = xstrdup(path);
	rs.objs[0].path = xstrdup(path);
	rs.objs[0].origin = dirname_of(real);
	rs.objs[0].f = out->prog; /* shared, not freed below */
	r = resolve_all(&rs);
	if (r == 0)
		r = fill_libs(&rs);
	for (size_t i = 0; i < rs.nobjs; i++) {
		free(rs.objs[i].name);
		free(rs.objs[i].path);
		free(rs.objs[i].origin);
		if (i > 0)
			elf_file_fini(&rs.objs[i].f);
	}
	free(rs.objs);
	strv_free(&rs.sys);
	return r;
}

void elf_deps_fini(struct elf_deps *d)
{
	elf_file_fini(&d->prog);
	free(d->interp);
	free(d->interp_real);
	free(d->interp_name);
	for (size_t i = 0; i < d->nlibs; i++) {
		free(d->libs[i].name);
		free(d->libs[i].path);
		free(d->libs[i].real);
	}
	free(d->libs);
	memset(d, 0, sizeof(*d));
}
