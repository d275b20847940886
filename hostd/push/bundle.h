/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The host's binaries, made to run in a guest that has nothing installed
 * (the busybox demo guest has no glibc): for each binary, the files that go
 * into the harness folder H of the guest:
 *
 *   bin/NAME      a /bin/sh wrapper:  exec H/lib/LOADER --library-path H/lib
 *                 --argv0 NAME H/libexec/NAME "$@"   (a static binary goes
 *                 here itself, without wrapper or libraries)
 *   libexec/NAME  the binary
 *   lib/SONAME    its loader and every library it loads, each once
 *
 * The guest's own loader and libc, if it has any, are never used: the
 * pushed loader runs the binary with the pushed libraries only.  Library
 * code: nothing here logs; errors come back as -errno and one line in err
 * naming the binary and the library.
 */
#ifndef LOCKSTEP_BUNDLE_H
#define LOCKSTEP_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ssh_push.h"

#define BUNDLE_NAME_MAX 64 /* a binary's name in bin/ */
#define BUNDLE_BINARIES_MAX 64
#define BUNDLE_BYTES_MAX (UINT64_C(1) << 31) /* all files together */

struct bundle {
	/* the members, ready for ssh_push_harness (strings owned here) */
	struct ssh_push_file *files;
	size_t nfiles;
	uint64_t bytes;	  /* their sizes, added */
	size_t nbinaries; /* in bin/, each once */
	size_t nlibs;	  /* in lib/, loaders included */
};

/*
 * Resolves each binary (a name looked up in path_env, NULL: hostd's PATH,
 * or an absolute path) and its libraries (elf_deps_resolve with
 * ld_so_conf, NULL: /etc/ld.so.conf).  harness_dir is the guest folder
 * the wrappers name.  -ENOENT: a binary or library is missing; -EEXIST:
 * two different files would get one name; -EINVAL: a bad name; -EFBIG:
 * more than BUNDLE_BYTES_MAX; or elf_deps_resolve's errors.
 */
int bundle_build(const char *const *binaries, size_t n, const char *harness_dir, const char *path_env,
		 const char *ld_so_conf, struct bundle **out, char *err, size_t errlen);
void bundle_free(struct bundle *b); /* accepts NULL */

/* A binary name bin/ can hold: 1 to BUNDLE_NAME_MAX-1 of A-Z a-z 0-9 . _ +
 * -, not starting with '.' or '-'. */
bool bundle_name_valid(const char *name);

/* The wrapper script of bin/NAME; a new string. */
char *bundle_wrapper(const char *harness_dir, const char *loader_name, const char *name);

#endif
