// SPDX-License-Identifier: GPL-2.0-or-later
#include "bundle.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "elf_deps.h"
#include "xalloc.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

bool bundle_name_valid(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len >= BUNDLE_NAME_MAX || name[0] == '.' || name[0] == '-')
		return false;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("._+-", *p)))
			return false;
	return true;
}

char *bundle_wrapper(const char *harness_dir, const char *loader_name, const char *name)
{
	char *loader = xasprintf("%s/lib/%s", harness_dir, loader_name);
	char *libdir = xasprintf("%s/lib", harness_dir);
	char *real = xasprintf("%s/libexec/%s", harness_dir, name);
	char *q_loader = ssh_push_quote(loader), *q_libdir = ssh_push_quote(libdir);
	char *q_real = ssh_push_quote(real), *q_name = ssh_push_quote(name);
	/* The guest's loader and libc may be absent or another version: the
	 * pushed loader runs the binary with the pushed libraries, and the
	 * guest's ld.so.cache is not consulted. */
	char *text = xasprintf("#!/bin/sh\n"
			       "# made by lockstep's hostd: %s with the loader and libraries "
			       "pushed beside it\n"
			       "exec %s --inhibit-cache --library-path %s --argv0 %s %s \"$@\"\n",
			       name, q_loader, q_libdir, q_name, q_real);

	free(loader);
	free(libdir);
	free(real);
	free(q_loader);
	free(q_libdir);
	free(q_real);
	free(q_name);
	return text;
}

static bool is_executable_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* The binary a name stands for on this host: *found is a new string. */
static int find_binary(const char *name, const char *path_env, char **found, char *err, size_t errlen)
{
	if (strchr(name, '/')) {
		if (name[0] != '/')
			return diag_set(err, errlen, -EINVAL,
					"\"%s\" is a relative path: give a name looked up in PATH or "
					"an absolute path",
					name);
		if (!is_executable_file(name))
			return diag_set(err, errlen, -ENOENT,
					"%s is not an executable file on this host", name);
		*found = xstrdup(name);
		return 0;
	}
	if (!path_env || !*path_env)
		path_env = DEFAULT_PATH;
	for (const char *p = path_env; *p;) {
		size_t len = strcspn(p, ":");

		/* relative entries would depend on hostd's current folder */
		if (len && p[0] == '/' && len < PATH_MAX) {
			char *cand = xasprintf("%.*s/%s", (int)len, p, name);

			if (is_executable_file(cand)) {
				*found = cand;
				return 0;
			}
			free(cand);
		}
		p += len;
		if (*p == ':')
			p++;
	}
	return diag_set(err, errlen, -ENOENT, "%s: not found on this host (PATH=%.300s)", name,
			path_env);
}

struct builder {
	struct bundle *b;
	size_t cap;
	char *err;
	size_t errlen;
};

/* The member called tar_name, or NULL. */
static struct ssh_push_file *member(struct builder *k, const char *tar_name)
{
	for (size_t i = 0; i < k->b->nfiles; i++)
		if (!strcmp(k->b->files[i].name_in_tar, tar_name))
			return &k->b->files[i];
	return NULL;
}

/* Adds a member (a copy of local, or of data); the same file twice under
 * one name is one member, two files under one name are an error. */
static int add_member(struct builder *k, const char *tar_name, unsigned mode, const char *local,
		      const char *data, const char *what)
{
	struct ssh_push_file *f = member(k, tar_name);
	struct stat st;

	if (f) {
		struct stat a, b;

		/* /bin/cat and /usr/bin/cat are one file on a merged /usr */
		if (local && f->local_path && stat(local, &a) == 0 &&
		    stat(f->local_path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			return 0;
		if (data && f->data && !strcmp(data, f->data))
			return 0; /* the same wrapper */
		return diag_set(k->err, k->errlen, -EEXIST, "%s would be %s, which already holds %s",
				what, tar_name, f->local_path ? f->local_path : "a wrapper script");
	}
	if (local && stat(local, &st) < 0)
		return diag_set(k->err, k->errlen, -errno, "%s: cannot read %s: %s", what, local,
				strerror(errno));
	k->b->bytes += local ? (uint64_t)st.st_size : strlen(data);
	if (k->b->bytes > BUNDLE_BYTES_MAX)
		return diag_set(k->err, k->errlen, -EFBIG,
				"%s makes the binaries to push larger than %llu MiB", what,
				(unsigned long long)(BUNDLE_BYTES_MAX >> 20));
	if (k->b->nfiles == k->cap) {
		k->cap = k->cap ? 2 * k->cap : 16;
		k->b->files = xrealloc(k->b->files, k->cap * sizeof(*k->b->files));
	}
	f = &k->b->files[k->b->nfiles++];
	memset(f, 0, sizeof(*f));
	f->name_in_tar = xstrdup(tar_name);
	f->mode = mode;
	if (local) {
		f->local_path = xstrdup(local);
	} else {
		f->data = xstrdup(data);
		f->len = strlen(data);
	}
	return 0;
}

static int add_dynamic(struct builder *k, const char *name, const char *path,
		       const struct elf_deps *d, const char *harness_dir)
{
	char tar[PATH_MAX];
	int r;

	snprintf(tar, sizeof(tar), "lib/%s", d->interp_name);
	if (!bundle_name_valid(d->interp_name))
		return diag_set(k->err, k->errlen, -EINVAL,
				"%s (%s): its loader %s has the name \"%s\"", name, path, d->interp,
				d->interp_name);
	r = add_member(k, tar, 0755, d->interp_real, NULL, name);
	for (size_t i = 0; r == 0 && i < d->nlibs; i++) {
		const struct elf_dep *l = &d->libs[i];

		/* the guest's loader looks the name up in lib/ */
		if (!bundle_name_valid(l->name))
			return diag_set(k->err, k->errlen, -EINVAL,
					"%s (%s) needs the library \"%s\", which is not a plain file "
					"name the loader could look up in a library folder",
					name, path, l->name);
		snprintf(tar, sizeof(tar), "lib/%s", l->name);
		r = add_member(k, tar, 0644, l->real, NULL, name);
	}
	if (r == 0) {
		snprintf(tar, sizeof(tar), "libexec/%s", name);
		r = add_member(k, tar, 0755, path, NULL, name);
	}
	if (r == 0) {
		char *script = bundle_wrapper(harness_dir, d->interp_name, name);

		snprintf(tar, sizeof(tar), "bin/%s", name);
		r = add_member(k, tar, 0755, NULL, script, name);
		free(script);
	}
	return r;
}

static int add_binary(struct builder *k, const char *spec, const char *harness_dir,
		      const char *path_env, const char *ld_so_conf)
{
	const char *slash = strrchr(spec, '/');
	const char *name = slash ? slash + 1 : spec;
	char *path = NULL, tar[PATH_MAX];
	struct elf_deps d;
	int r;

	if (!bundle_name_valid(name))
		return diag_set(k->err, k->errlen, -EINVAL,
				"\"%s\" cannot name a binary in bin/: use 1 to %d of A-Z a-z 0-9 . _ + "
				"- not starting with '.' or '-'",
				spec, BUNDLE_NAME_MAX - 1);
	r = find_binary(spec, path_env, &path, k->err, k->errlen);
	if (r < 0)
		return r;
	r = elf_deps_resolve(path, ld_so_conf, &d);
	if (r == -ENOENT && d.missing[0] && !strcmp(d.needed_by, path) && d.interp &&
	    !strcmp(d.missing, d.interp))
		diag_set(k->err, k->errlen, r, "%s (%s): its loader %s is missing on this host",
			 name, path, d.missing);
	else if (r == -ENOENT && d.missing[0])
		diag_set(k->err, k->errlen, r,
			 "%s (%s) needs the library %s (asked for by %s), which is in none of the "
			 "folders this host's loader searches",
			 name, path, d.missing, d.needed_by);
	else if (r == -ENOEXEC)
		diag_set(k->err, k->errlen, r, "%s (%s) is not an ELF program this host can read%s",
			 name, path, d.missing[0] ? ": it needs libraries but names no loader" : "");
	else if (r < 0)
		diag_set(k->err, k->errlen, r, "%s (%s): cannot read its libraries: %s", name, path,
			 strerror(-r));
	else if (!d.interp) {
		snprintf(tar, sizeof(tar), "bin/%s", name);
		r = add_member(k, tar, 0755, path, NULL, name);
	} else {
		r = add_dynamic(k, name, path, &d, harness_dir);
	}
	elf_deps_fini(&d);
	free(path);
	return r;
}

int bundle_build(const char *const *binaries, size_t n, const char *harness_dir, const char *path_env,
		 const char *ld_so_conf, struct bundle **out, char *err, size_t errlen)
{
	struct builder k = { .b = xcalloc(1, sizeof(struct bundle)), .err = err, .errlen = errlen };
	int r = 0;

	*out = NULL;
	if (!path_env)
		path_env = getenv("PATH");
	if (n > BUNDLE_BINARIES_MAX)
		r = diag_set(err, errlen, -E2BIG, "%zu binaries to push; the limit is %d", n,
			     BUNDLE_BINARIES_MAX);
	if (!harness_dir || harness_dir[0] != '/')
		r = diag_set(err, errlen, -EINVAL, "the harness folder \"%s\" is not absolute",
			     harness_dir ? harness_dir : "");
	for (size_t i = 0; r == 0 && i < n; i++)
		r = add_binary(&k, binaries[i], harness_dir, path_env, ld_so_conf);
	if (r < 0) {
		bundle_free(k.b);
		return r;
	}
	for (size_t i = 0; i < k.b->nfiles; i++) {
		k.b->nbinaries += !strncmp(k.b->files[i].name_in_tar, "bin/", 4);
		k.b->nlibs += !strncmp(k.b->files[i].name_in_tar, "lib/", 4);
	}
	*out = k.b;
	return 0;
}

void bundle_free(struct bundle *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->nfiles; i++) {
		free((char *)b->files[i].name_in_tar);
		free((char *)b->files[i].local_path);
		free((void *)b->files[i].data);
	}
	free(b->files);
	free(b);
}
