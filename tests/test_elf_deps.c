// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostd/push/elf_deps.c: the dependencies of this machine's own programs equal
 * what ldd prints for them (ldd on the host's system binaries is a fair
 * oracle); ELF files made here test the search order, $ORIGIN, loops and
 * class checks; broken, truncated and hostile files fail cleanly.
 */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_deps.h"
#include "testlib.h"

static char tmp[256];

static void setup(void)
{
	testlib_tmpdir(tmp, sizeof(tmp), "elf");
}

static void write_bytes(const char *path, const void *buf, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

static char *tpath(const char *rel)
{
	static char buf[4][PATH_MAX];
	static int k;
	char *p = buf[k++ % 4];
	snprintf(p, PATH_MAX, "%s/%s", tmp, rel);
	return p;
}

/* ---- ELF files made to order ------------------------------------------ */

struct spec {
	bool is32;
	uint16_t machine; /* 0: x86-64 (EM_386 for is32) */
	uint16_t type;	  /* 0: ET_DYN */
	const char *interp;
	const char *needed[8];
	const char *runpath, *rpath, *soname;
};

/* One PT_LOAD mapping the whole file at address 0, then PT_INTERP and
 * PT_DYNAMIC; the string table and the dynamic array follow the headers.
 * Returns the size written into buf (4 KiB). */
#define MAKE_ELF(NAME, EHDR, PHDR, DYN, CLASS)                                                       \
	static size_t NAME(const struct spec *s, unsigned char *buf)                                 \
	{                                                                                            \
		EHDR *e = (EHDR *)buf;                                                               \
		PHDR *ph = (PHDR *)(buf + sizeof(EHDR));                                             \
		size_t off = sizeof(EHDR) + 3 * sizeof(PHDR), str0, nph = 0, ndyn = 0;               \
		DYN dyn[16];                                                                         \
		memset(buf, 0, 4096);                                                                \
		memcpy(e->e_ident, ELFMAG, SELFMAG);                                                 \
		e->e_ident[EI_CLASS] = CLASS;                                                        \
		e->e_ident[EI_DATA] = ELFDATA2LSB;                                                   \
		e->e_ident[EI_VERSION] = EV_CURRENT;                                                 \
		e->e_type = s->type ? s->type : ET_DYN;                                              \
		e->e_machine = s->machine ? s->machine : (CLASS == ELFCLASS32 ? EM_386 : EM_X86_64); \
		e->e_version = EV_CURRENT;                                                           \
		e->e_phoff = sizeof(EHDR);                                                           \
		e->e_phentsize = sizeof(PHDR);                                                       \
		e->e_ehsize = sizeof(EHDR);                                                          \
		ph[nph++] = (PHDR){ .p_type = PT_LOAD, .p_flags = PF_R, .p_align = 4096 };           \
		if (s->interp) {                                                                     \
			size_t n = strlen(s->interp) + 1;                                            \
			ph[nph++] = (PHDR){ .p_type = PT_INTERP,                                     \
					    .p_offset = off,                                         \
					    .p_vaddr = off,                                          \
					    .p_filesz = n,                                           \
					    .p_memsz = n };                                          \
			memcpy(buf + off, s->interp, n);                                             \
			off += n;                                                                    \
		}                                                                                    \
		str0 = off;                                                                          \
		buf[off++] = '\0';                                                                   \
		const char *strs[12] = { 0 };                                                        \
		int tags[12], nstr = 0;                                                              \
		for (int i = 0; i < 8 && s->needed[i]; i++)                                          \
			tags[nstr] = DT_NEEDED, strs[nstr++] = s->needed[i];                         \
		if (s->runpath)                                                                      \
			tags[nstr] = DT_RUNPATH, strs[nstr++] = s->runpath;                          \
		if (s->rpath)                                                                        \
			tags[nstr] = DT_RPATH, strs[nstr++] = s->rpath;                              \
		if (s->soname)                                                                       \
			tags[nstr] = DT_SONAME, strs[nstr++] = s->soname;                            \
		for (int i = 0; i < nstr; i++) {                                                     \
			dyn[ndyn].d_tag = tags[i];                                                   \
			dyn[ndyn++].d_un.d_val = off - str0;                                         \
			memcpy(buf + off, strs[i], strlen(strs[i]) + 1);                             \
			off += strlen(strs[i]) + 1;                                                  \
		}                                                                                    \
		dyn[ndyn].d_tag = DT_STRTAB;                                                         \
		dyn[ndyn++].d_un.d_val = str0;                                                       \
		dyn[ndyn].d_tag = DT_STRSZ;                                                          \
		dyn[ndyn++].d_un.d_val = off - str0;                                                 \
		dyn[ndyn].d_tag = DT_NULL;                                                           \
		dyn[ndyn++].d_un.d_val = 0;                                                          \
		off = (off + 7) & ~(size_t)7;                                                        \
		ph[nph++] = (PHDR){ .p_type = PT_DYNAMIC,                                            \
				    .p_offset = off,                                                 \
				    .p_vaddr = off,                                                  \
				    .p_filesz = ndyn * sizeof(DYN),                                  \
				    .p_memsz = ndyn * sizeof(DYN) };                                 \
		memcpy(buf + off, dyn, ndyn * sizeof(DYN));                                          \
		off += ndyn * sizeof(DYN);                                                           \
		e->e_phnum = (uint16_t)nph;                                                          \
		ph[0].p_filesz = ph[0].p_memsz = off;                                                \
		return off;                                                                          \
	}

MAKE_ELF(make_elf64, Elf64_Ehdr, Elf64_Phdr, Elf64_Dyn, ELFCLASS64)
MAKE_ELF(make_elf32, Elf32_Ehdr, Elf32_Phdr, Elf32_Dyn, ELFCLASS32)

static void make_file(const char *rel, const struct spec *s)
{
	unsigned char buf[4096];
	size_t n = s->is32 ? make_elf32(s, buf) : make_elf64(s, buf);
	char dir[PATH_MAX], cmd[PATH_MAX + 32];
	snprintf(dir, sizeof(dir), "%s", tpath(rel));
	*strrchr(dir, '/') = '\0';
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
	write_bytes(tpath(rel), buf, n, 0755);
}

/* The real loader: resolve_interp reads it, and every program made here
 * names it. */
#define LOADER "/lib64/ld-linux-x86-64.so.2"

static const struct elf_dep *dep_named(const struct elf_deps *d, const char *name)
{
	for (size_t i = 0; i < d->nlibs; i++)
		if (!strcmp(d->libs[i].name, name))
			return &d->libs[i];
	return NULL;
}

/* ---- against ldd ------------------------------------------------------ */

static void check_against_ldd(const char *prog)
{
	if (access(prog, X_OK) != 0) {
		fprintf(stderr, "%s is not installed (rt-tests, sysbench): skipped\n", prog);
		return;
	}
	char cmd[PATH_MAX + 16], line[1024];
	snprintf(cmd, sizeof(cmd), "ldd '%s'", prog);
	FILE *f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	char *want[256];
	size_t nwant = 0;
	char interp[PATH_MAX] = "";
	while (fgets(line, sizeof(line), f) && nwant < 256) {
		char name[512], path[512], real[PATH_MAX];
		if (sscanf(line, " %511s => %511s", name, path) == 2 && path[0] == '/') {
			ck_assert_ptr_nonnull(realpath(path, real));
			want[nwant++] = strdup(real);
		} else if (sscanf(line, " %511s (", name) == 1 && name[0] == '/') {
			ck_assert_ptr_nonnull(realpath(name, interp));
		}
	}
	ck_assert_int_eq(pclose(f), 0);

	struct elf_deps d;
	ck_assert_int_eq(elf_deps_resolve(prog, NULL, &d), 0);
	ck_assert_ptr_nonnull(d.interp_real);
	ck_assert_str_eq(d.interp_real, interp);
	ck_assert_str_eq(d.interp_name, "ld-linux-x86-64.so.2");
	ck_assert_msg(d.nlibs == nwant, "%s: %zu libraries, ldd lists %zu", prog, d.nlibs, nwant);
	for (size_t i = 0; i < nwant; i++) {
		bool found = false;
		for (size_t k = 0; k < d.nlibs && !found; k++)
			found = !strcmp(d.libs[k].real, want[i]);
		ck_assert_msg(found, "%s: ldd lists %s, elf_deps does not", prog, want[i]);
		free(want[i]);
	}
	elf_deps_fini(&d);
}

START_TEST(test_hackbench_like_ldd)
{
	check_against_ldd("/usr/bin/hackbench");
}
END_TEST
START_TEST(test_sysbench_like_ldd)
{
	check_against_ldd("/usr/bin/sysbench");
}
END_TEST
START_TEST(test_ls_like_ldd)
{
	check_against_ldd("/bin/ls");
}
END_TEST

START_TEST(test_static_busybox)
{
	if (access("/bin/busybox", X_OK) != 0)
		return;
	struct elf_deps d;
	ck_assert_int_eq(elf_deps_resolve("/bin/busybox", NULL, &d), 0);
	ck_assert_ptr_null(d.interp);
	ck_assert_uint_eq(d.nlibs, 0);
	elf_deps_fini(&d);
}
END_TEST

/* ---- search order ----------------------------------------------------- */

START_TEST(test_origin_runpath_and_loop)
{
	/* prog in bin/, RUNPATH $ORIGIN/../lib; liba and libb need each other */
	make_file("bin/prog", &(struct spec){ .type = ET_EXEC,
					      .interp = LOADER,
					      .needed = { "liblst-a.so.1" },
					      .runpath = "$ORIGIN/../lib" });
	make_file("lib/liblst-a.so.1", &(struct spec){ .needed = { "liblst-b.so.1" },
						       .runpath = "${ORIGIN}",
						       .soname = "liblst-a.so.1" });
	make_file("lib/liblst-b.so.1",
		  &(struct spec){ .needed = { "liblst-a.so.1", "libc.so.6" }, .runpath = "$ORIGIN" });
	struct elf_deps d;
	ck_assert_int_eq(elf_deps_resolve(tpath("bin/prog"), NULL, &d), 0);
	ck_assert_uint_eq(d.nlibs, 3);
	ck_assert_str_eq(d.libs[0].name, "liblst-a.so.1");
	ck_assert_str_eq(d.libs[0].path, tpath("bin/../lib/liblst-a.so.1"));
	ck_assert_str_eq(d.libs[0].real, tpath("lib/liblst-a.so.1"));
	ck_assert_str_eq(d.libs[1].name, "liblst-b.so.1");
	ck_assert_str_eq(d.libs[2].name, "libc.so.6");
	elf_deps_fini(&d);
}
END_TEST

START_TEST(test_missing_names_both)
{
	make_file("bin/prog", &(struct spec){ .type = ET_EXEC,
					      .interp = LOADER,
					      .needed = { "liblst-a.so.1" },
					      .rpath = "$ORIGIN" });
	make_file("bin/liblst-a.so.1", &(struct spec){ .needed = { "liblst-nope.so.9" } });
	struct elf_deps d;
	ck_assert_int_eq(elf_deps_resolve(tpath("bin/prog"), NULL, &d), -ENOENT);
	ck_assert_str_eq(d.missing, "liblst-nope.so.9");
	ck_assert_str_eq(d.needed_by, tpath("bin/liblst-a.so.1"));
	elf_deps_fini(&d);

	/* a loader that is not there */
	make_file("bin/prog2", &(struct spec){ .type = ET_EXEC,
					       .interp = "/nonexistent/ld.so.1",
					       .needed = { "libc.so.6" } });
	ck_assert_int_eq(elf_deps_resolve(tpath("bin/prog2"), NULL, &d), -ENOENT);
	ck_assert_str_eq(d.missing, "/nonexistent/ld.so.1");
	elf_deps_fini(&d);
}
END_TEST

/* The exe's DT_RPATH serves its libraries' libraries too, unless they
 * have a RUNPATH; a RUNPATH serves only its own file's. */
START_TEST(test_rpath_chain_and_runpath_scope)
{
	make_file("bin/prog", &(struct spec){ .type = ET_EXEC,
					      .interp = LOADER,
					      .needed = { "liblst-a.so.1", "liblst-r.so.1" },
					      .rpath = "$ORIGIN/../r" });
	make_file("r/liblst-a.so.1", &(struct spec){ .needed = { "liblst-c.so.1" } });
	make_file("r/liblst-c.so.1", &(struct spec){ 0 });
	/* r has a RUNPATH: the exe's RPATH no longer applies to its needs */
	make_file("r/liblst-r.so.1",
		  &(struct spec){ .needed = { "liblst-d.so.1" }, .runpath = "/nonexistent" });
	make_file("r/liblst-d.so.1", &(struct spec){ 0 });
	struct elf_deps d;
	ck_assert_int_eq(elf_deps_resolve(tpath("bin/prog"), NULL, &d), -ENOENT);
	ck_assert_str_eq(d.missing, "liblst-d.so.1");
	elf_deps_fini(&d);

	make_file("r/liblst-r.so.1",
		  &(struct spec){ .needed = { "liblst-d.so.1" }, .runpath = "$ORIGIN" });
	ck_assert_int_eq(elf_deps_resolve(tpath("bin/prog"), NULL, &d), 0);
	ck_assert_uint_eq(d.nlibs, 4);
	ck_assert_ptr_nonnull(dep_named(&d, "liblst-c.so.1"));
	ck_assert_ptr_nonnull(dep_named(&d, "liblst-d.so.1"));
	elf_deps_fini(&d);
}
END_TEST

START_TEST(test_wrong_class_skipped)
{
	char conf[PATH_MAX + 64];
	/* ld.so.conf lists a folder with a 32-bit and one with a 64-bit copy */
	snprintf(conf, sizeof(conf), "# test\n%s/l32\nhwcap 0 nosegneg\n%s/l64=libc6\n", tmp, tmp);
	write_bytes(tpath("ld.so.conf"), conf, strlen(conf), 0644);
	make_file("l32/liblst-x.so.1", &(struct spec){ .is32 = true });
	make_file("l64/liblst-x.so.1", &(struct spec){ 0 });
	make_file("bin/prog",
		  &(struct spec){ .type = ET_EXEC, .interp = LOADER, .needed = { "liblst-x.so.1" } });
	struct elf_deps d;
	ck_assert_int_eq(elf_deps_resolve(tpath("bin/prog"), tpath("ld.so.conf"), &d), 0);
	ck_assert_uint_eq(d.nlibs, 1);
	ck_assert_str_eq(d.libs[0].path, tpath("l64/liblst-x.so.1"));
	elf_deps_fini(&d);
	/* a 32-bit program is not given the x86-64 loader */
	make_file("bin/prog32", &(struct spec){ .is32 = true, .type = ET_EXEC, .interp = LOADER });
	ck_assert_int_eq(elf_deps_resolve(tpath("bin/prog32"), tpath("ld.so.conf"), &d), -ENOENT);
	elf_deps_fini(&d);
}
END_TEST

START_TEST(test_conf_includes)
{
	char text[PATH_MAX * 2];
	ck_assert_int_eq(mkdir(tpath("conf.d"), 0755), 0);
	/* includes itself: the depth and file limits end it */
	snprintf(text, sizeof(text), "include conf.d/*.conf\ninclude %s/ld.so.conf\n/a//\n", tmp);
	write_bytes(tpath("ld.so.conf"), text, strlen(text), 0644);
	const char *one = "/b\n  /c  # comment\nrelative\n";
	write_bytes(tpath("conf.d/1.conf"), one, strlen(one), 0644);
	write_bytes(tpath("conf.d/2.conf"), "/a\n", 3, 0644);
	char **dirs;
	size_t n;
	ck_assert_int_eq(elf_deps_conf_dirs(tpath("ld.so.conf"), &dirs, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(dirs[0], "/b");
	ck_assert_str_eq(dirs[1], "/c");
	ck_assert_str_eq(dirs[2], "/a");
	for (size_t i = 0; i < n; i++)
		free(dirs[i]);
	free(dirs);
	ck_assert_int_eq(elf_deps_conf_dirs(tpath("none.conf"), &dirs, &n), 0);
	ck_assert_uint_eq(n, 0);
	free(dirs);
}
END_TEST

/* ---- hostile files ---------------------------------------------------- */

static int parse_bytes(const void *buf, size_t len)
{
	struct elf_file f;
	int r = elf_file_parse(buf, len, &f);
	elf_file_fini(&f);
	return r;
}

START_TEST(test_truncated_ls)
{
	int fd = open("/bin/ls", O_RDONLY);
	ck_assert_int_ge(fd, 0);
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);
	unsigned char *buf = malloc((size_t)st.st_size);
	ck_assert_int_eq(read(fd, buf, (size_t)st.st_size), st.st_size);
	close(fd);
	struct elf_file f;
	ck_assert_int_eq(elf_file_parse(buf, (size_t)st.st_size, &f), 0);
	ck_assert_str_eq(f.interp, LOADER);
	ck_assert_uint_ge(f.nneeded, 2);
	elf_file_fini(&f);
	/* every cut fails or parses, and never reads past the end (ASan) */
	size_t good = 0;
	for (size_t len = 0; len < (size_t)st.st_size; len += len < 8192 ? 1 : 4093) {
		unsigned char *cut = malloc(len ? len : 1);
		memcpy(cut, buf, len);
		int r = parse_bytes(cut, len);
		ck_assert_msg(r == 0 || r == -ENOEXEC, "cut at %zu: %d", len, r);
		good += r == 0;
		free(cut);
	}
	/* the headers and the dynamic strings are all needed */
	ck_assert_uint_lt(good, 64);
	/* flipped bytes in the headers: deterministic, no crash */
	unsigned seed = 1;
	for (int i = 0; i < 2000; i++) {
		size_t at[4];
		unsigned char was[4];
		for (int k = 0; k < 4; k++) {
			seed = seed * 1103515245 + 12345;
			at[k] = (seed >> 8) % 4096;
			was[k] = buf[at[k]];
			buf[at[k]] = (unsigned char)(seed >> 3);
		}
		int r = parse_bytes(buf, (size_t)st.st_size);
		ck_assert(r == 0 || r == -ENOEXEC);
		for (int k = 3; k >= 0; k--)
			buf[at[k]] = was[k];
	}
	free(buf);
}
END_TEST

START_TEST(test_hostile_made)
{
	unsigned char buf[4096];
	struct spec s = { .type = ET_EXEC, .interp = LOADER, .needed = { "libc.so.6" } };
	size_t n = make_elf64(&s, buf);
	ck_assert_int_eq(parse_bytes(buf, n), 0);
	Elf64_Ehdr *e = (Elf64_Ehdr *)buf;
	Elf64_Phdr *ph = (Elf64_Phdr *)(buf + sizeof(*e));

	/* not ELF, empty, big-endian, a relocatable object */
	ck_assert_int_eq(parse_bytes("#!/bin/sh\necho hi\n", 18), -ENOEXEC);
	ck_assert_int_eq(parse_bytes("", 0), -ENOEXEC);
	e->e_ident[EI_DATA] = ELFDATA2MSB;
	ck_assert_int_eq(parse_bytes(buf, n), -ENOEXEC);
	e->e_ident[EI_DATA] = ELFDATA2LSB;
	e->e_type = ET_REL;
	ck_assert_int_eq(parse_bytes(buf, n), -ENOEXEC);
	e->e_type = ET_EXEC;

	/* program headers: too many, past the end, wrong entry size */
	e->e_phnum = 60000;
	ck_assert_int_eq(parse_bytes(buf, n), -ENOEXEC);
	e->e_phnum = 3;
	e->e_phoff = UINT64_MAX - 8;
	ck_assert_int_eq(parse_bytes(buf, n), -ENOEXEC);
	e->e_phoff = sizeof(*e);
	e->e_phentsize = 12;
	ck_assert_int_eq(parse_bytes(buf, n), -ENOEXEC);
	e->e_phentsize = sizeof(*ph);

	/* PT_INTERP without its NUL, empty, or past the end */
	ph[1].p_filesz--;
	ck_assert_int_eq(parse_bytes(buf, n), -ENOEXEC);
	ph[1].p_filesz = 1;
	ck_assert_int_eq(parse_bytes(buf, n), -ENOEXEC);
	ph[1].p_filesz = sizeof(LOADER);
	ph[1].p_offset = n + 100;
	ck_assert_int_eq(parse_bytes(buf, n), -ENOEXEC);
	ph[1].p_offset = ph[1].p_vaddr;
	ck_assert_int_eq(parse_bytes(buf, n), 0);

	/* DT_STRTAB at an address no PT_LOAD maps; DT_NEEDED past DT_STRSZ */
	Elf64_Dyn *dyn = (Elf64_Dyn *)(buf + ph[2].p_offset);
	ck_assert_int_eq(dyn[1].d_tag, DT_STRTAB);
	dyn[1].d_un.d_val += 1 << 20;
	ck_assert_int_eq(parse_bytes(buf, n), -ENOEXEC);
	dyn[1].d_un.d_val -= 1 << 20;
	dyn[0].d_un.d_val = 5000;
	ck_assert_int_eq(parse_bytes(buf, n), -ENOEXEC);
	dyn[0].d_un.d_val = 1;
	ck_assert_int_eq(parse_bytes(buf, n), 0);
	/* a string table at the very end whose string has no NUL */
	memset(buf + n, 'x', 4);
	ph[0].p_filesz = ph[0].p_memsz = n + 4;
	dyn[0].d_un.d_val = 0;
	dyn[1].d_un.d_val = n;
	ck_assert_int_eq(dyn[2].d_tag, DT_STRSZ);
	dyn[2].d_un.d_val = UINT64_MAX;
	ck_assert_int_eq(parse_bytes(buf, n + 4), -ENOEXEC);
}
END_TEST

START_TEST(test_too_many_needed)
{
	/* 300 DT_NEEDED entries pointing at one name */
	size_t ndyn = 303, size = 4096 + ndyn * sizeof(Elf64_Dyn);
	unsigned char *buf = calloc(1, size);
	Elf64_Ehdr *e = (Elf64_Ehdr *)buf;
	Elf64_Phdr *ph = (Elf64_Phdr *)(buf + sizeof(*e));
	memcpy(e->e_ident, ELFMAG, SELFMAG);
	e->e_ident[EI_CLASS] = ELFCLASS64;
	e->e_ident[EI_DATA] = ELFDATA2LSB;
	e->e_ident[EI_VERSION] = EV_CURRENT;
	e->e_type = ET_DYN;
	e->e_machine = EM_X86_64;
	e->e_phoff = sizeof(*e);
	e->e_phentsize = sizeof(*ph);
	e->e_phnum = 2;
	ph[0] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_filesz = size };
	ph[1] = (Elf64_Phdr){ .p_type = PT_DYNAMIC,
			      .p_offset = 4096,
			      .p_vaddr = 4096,
			      .p_filesz = ndyn * sizeof(Elf64_Dyn) };
	memcpy(buf + 1024, "\0libx.so", 9);
	Elf64_Dyn *d = (Elf64_Dyn *)(buf + 4096);
	d[0] = (Elf64_Dyn){ .d_tag = DT_STRTAB, .d_un.d_val = 1024 };
	d[1] = (Elf64_Dyn){ .d_tag = DT_STRSZ, .d_un.d_val = 9 };
	for (size_t i = 2; i < ndyn - 1; i++)
		d[i] = (Elf64_Dyn){ .d_tag = DT_NEEDED, .d_un.d_val = 1 };
	ck_assert_int_eq(parse_bytes(buf, size), -ENOEXEC);
	/* within the limit it parses */
	d[200] = (Elf64_Dyn){ .d_tag = DT_NULL };
	ck_assert_int_eq(parse_bytes(buf, size), 0);
	free(buf);
}
END_TEST

START_TEST(test_not_regular_files)
{
	struct elf_file f;
	ck_assert_int_eq(elf_file_read(tmp, &f), -EISDIR);
	ck_assert_int_eq(mkfifo(tpath("fifo"), 0600), 0);
	/* never blocks waiting for a writer */
	ck_assert_int_eq(elf_file_read(tpath("fifo"), &f), -ENOEXEC);
	ck_assert_int_eq(elf_file_read(tpath("none"), &f), -ENOENT);
	struct elf_deps d;
	ck_assert_int_eq(elf_deps_resolve("/etc/passwd", NULL, &d), -ENOEXEC);
	elf_deps_fini(&d);
}
END_TEST

/* Every file of the fuzzer's seed folder parses or fails cleanly. */
START_TEST(test_fuzz_seeds)
{
	const char *src = getenv("LOCKSTEP_SOURCE_ROOT");
	ck_assert_ptr_nonnull(src);
	char cmd[PATH_MAX + 64], line[PATH_MAX];
	snprintf(cmd, sizeof(cmd), "ls -1 '%s/tests/fuzz/elf'", src);
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	int seen = 0;
	while (fgets(line, sizeof(line), p)) {
		char path[PATH_MAX * 2];
		line[strcspn(line, "\n")] = '\0';
		snprintf(path, sizeof(path), "%s/tests/fuzz/elf/%s", src, line);
		struct elf_file f;
		int r = elf_file_read(path, &f);
		ck_assert_msg(r == 0 || r == -ENOEXEC, "%s: %d", path, r);
		elf_file_fini(&f);
		seen++;
	}
	pclose(p);
	ck_assert_int_ge(seen, 3);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("elf-deps");
	TCase *tc = tcase_create("ldd");
	tcase_add_test(tc, test_hackbench_like_ldd);
	tcase_add_test(tc, test_sysbench_like_ldd);
	tcase_add_test(tc, test_ls_like_ldd);
	tcase_add_test(tc, test_static_busybox);
	suite_add_tcase(s, tc);
	tc = tcase_create("search");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_origin_runpath_and_loop);
	tcase_add_test(tc, test_missing_names_both);
	tcase_add_test(tc, test_rpath_chain_and_runpath_scope);
	tcase_add_test(tc, test_wrong_class_skipped);
	tcase_add_test(tc, test_conf_includes);
	suite_add_tcase(s, tc);
	tc = tcase_create("hostile");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_truncated_ls);
	tcase_add_test(tc, test_hostile_made);
	tcase_add_test(tc, test_too_many_needed);
	tcase_add_test(tc, test_not_regular_files);
	tcase_add_test(tc, test_fuzz_seeds);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
