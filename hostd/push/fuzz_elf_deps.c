// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: the ELF reader on arbitrary bytes.  Whatever the input,
 * it returns 0 or -ENOEXEC/-EFBIG without reading outside the buffer, and a
 * file it accepts has strings that are non-empty, NUL-terminated and within
 * the limits of elf_deps.h.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf_deps.h"

static void check_str(const char *s, size_t max)
{
	if (s && (s[0] == '\0' || strlen(s) > max))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_file f;
	int r = elf_file_parse(data, size, &f);

	if (r != 0 && r != -ENOEXEC && r != -EFBIG)
		abort();
	if (r == 0) {
		check_str(f.interp, PATH_MAX - 1);
		check_str(f.soname, ELF_DEPS_STR_MAX);
		check_str(f.runpath, ELF_DEPS_STR_MAX);
		check_str(f.rpath, ELF_DEPS_STR_MAX);
		if (f.nneeded > ELF_DEPS_NEEDED_MAX)
			abort();
		for (size_t i = 0; i < f.nneeded; i++)
			check_str(f.needed[i], ELF_DEPS_STR_MAX);
	}
	elf_file_fini(&f);
	return 0;
}
