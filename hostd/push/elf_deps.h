/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a dynamically linked program needs to run elsewhere: its dynamic
 * loader and every shared library, found the way this host's loader would
 * find them.  The files are read, never executed (no ldd: `ldd x` runs x's
 * own loader, which an untrusted file may name), and every size, count and
 * string taken from a file is bounded, because the file may be anything.
 *
 * Only the native byte order is read; 32- and 64-bit files both are, and a
 * library whose class or machine differs from the program's is skipped as
 * the loader skips it (the i386 files in /usr/lib32 for an x86-64 program).
 *
 * Functions return 0 or a negative errno and never log.
 */
#ifndef LOCKSTEP_ELF_DEPS_H
#define LOCKSTEP_ELF_DEPS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ELF_DEPS_FILE_MAX (UINT64_C(1) << 31) /* larger is not a program */
#define ELF_DEPS_PHNUM_MAX 512
#define ELF_DEPS_DYN_MAX 4096	/* entries of PT_DYNAMIC read */
#define ELF_DEPS_NEEDED_MAX 256 /* DT_NEEDED of one file */
#define ELF_DEPS_STR_MAX 4096	/* one string: a name, a RUNPATH */
#define ELF_DEPS_LIBS_MAX 1024	/* libraries of one program, all levels */
#define ELF_DEPS_DIRS_MAX 256	/* folders of ld.so.conf */

/* One ELF file, as its headers say. */
struct elf_file {
	unsigned char elf_class; /* ELFCLASS32 or ELFCLASS64 */
	uint16_t type;		 /* ET_EXEC, ET_DYN */
	uint16_t machine;	 /* EM_X86_64, ... */
	bool dynamic;		 /* has PT_DYNAMIC */
	char *interp;		 /* PT_INTERP, or NULL: static */
	char *soname;		 /* DT_SONAME, or NULL */
	char *runpath;		 /* DT_RUNPATH as written, or NULL */
	char *rpath;		 /* DT_RPATH as written, or NULL */
	char **needed;		 /* DT_NEEDED, in order */
	size_t nneeded;
};

/*
 * Parses a file's headers.  -ENOEXEC: not an ELF file of the native byte
 * order, or headers that point outside it or break a limit above; -EFBIG:
 * larger than ELF_DEPS_FILE_MAX; -errno from open/read.
 */
int elf_file_read(const char *path, struct elf_file *out);
/* The same on bytes in memory (the fuzzer's entry). */
int elf_file_parse(const void *buf, size_t len, struct elf_file *out);
void elf_file_fini(struct elf_file *f); /* accepts a zeroed one */

/* One library of a program. */
struct elf_dep {
	char *name; /* the DT_NEEDED name it was asked for (its soname) */
	char *path; /* where the loader would open it */
	char *real; /* that path with symlinks resolved: the file to copy */
};

struct elf_deps {
	struct elf_file prog; /* the program's own headers */
	char *interp;	      /* the loader (PT_INTERP), NULL when static */
	char *interp_real;
	char *interp_name;    /* its DT_SONAME, else the basename of PT_INTERP */
	struct elf_dep *libs; /* in the loader's (breadth-first) order, loader excluded */
	size_t nlibs;
	/* After -ENOENT: the library (or loader) that was not found and the
	 * file that needs it, for the caller's message. */
	char missing[ELF_DEPS_STR_MAX];
	char needed_by[PATH_MAX];
};

/*
 * Resolves path's loader and libraries, recursively, each once.  Search
 * order per library (glibc's, LD_LIBRARY_PATH and the ld.so.cache left
 * out): DT_RPATH of the file and of the files that loaded it (unless the
 * file has DT_RUNPATH), DT_RUNPATH of the file, the folders of ld_so_conf
 * (NULL: /etc/ld.so.conf, with its include lines), then the default
 * folders (/lib/<multiarch>, /usr/lib/<multiarch>, /lib64, /usr/lib64,
 * /lib, /usr/lib).  $ORIGIN is expanded; entries with $LIB or $PLATFORM,
 * and empty ones (the loader's current folder), are skipped.
 * A static file gives interp NULL and no libraries.
 * -ENOENT: a library or the loader is missing (see missing, needed_by);
 * -E2BIG: more than ELF_DEPS_LIBS_MAX libraries; else elf_file_read's.
 */
int elf_deps_resolve(const char *path, const char *ld_so_conf, struct elf_deps *out);
void elf_deps_fini(struct elf_deps *d); /* accepts a zeroed one */

/* The folders of an ld.so.conf file, its includes followed (globs, at most
 * 8 levels deep), in order, each once; a missing file gives none. */
int elf_deps_conf_dirs(const char *ld_so_conf, char ***dirs, size_t *n);

#endif
