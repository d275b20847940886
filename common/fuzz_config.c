// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target over config_load_string: whatever the bytes, the reader
 * returns 0 or -EINVAL with a diagnostic, and never crashes, leaks or reads
 * out of bounds.  Seeds: tests/fuzz/config/.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const known[] = { "MMTESTS", "MMTESTS_ITERATIONS", "GUEST_COUNT",
				     "HACKBENCH_GROUPS", NULL };
static const char *const prefixes[] = { "COMMAND_", NULL };
static const char *const choices[] = { "tsc", "kvm-clock", "hpet", NULL };

static void use_values(struct config *c)
{
	struct config_diag err;
	const char **names;
	size_t n = config_names(c, &names);

	for (size_t i = 0; i < n; i++) {
		int64_t v;
		double s;
		bool b;
		int k;

		if (config_get_int(c, names[i], -1000, 1000, &v, &err) < 0 && !err.text[0])
			abort();
		config_get_seconds(c, names[i], 0, 3600, &s, &err);
		config_get_bool(c, names[i], &b, &err);
		config_get_choice(c, names[i], choices, &k, &err);
	}
	config_check_known_ex(c, known, prefixes, config_mmtests_ignored);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config_diag err = { 0 };
	const struct config_diag *w;
	struct config *c = config_new();
	char *text = xmalloc(size + 1), line[1024];
	int r;

	memcpy(text, data, size);
	text[size] = '\0';
	config_set_fact(c, "NUM_LOGICAL_CPUS", "8");
	config_set_fact(c, "NUM_NODES", "2");
	config_set_fact(c, "MEMTOTAL_BYTES", "25144741888");
	r = config_load_string(c, "fuzz.conf", text, &err);
	/* An error always says where and what. */
	if (r != 0 && (r != -EINVAL || err.line < 1 || err.column < 1 || !err.text[0]))
		abort();
	if (r == 0)
		use_values(c);
	config_diag_format(&err, line, sizeof(line));
	for (size_t i = 0, n = config_warnings(c, &w); i < n; i++)
		config_diag_format(&w[i], line, sizeof(line));
	config_free(c);
	free(text);
	return 0;
}
