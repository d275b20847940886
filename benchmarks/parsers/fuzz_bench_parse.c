// SPDX-License-Identifier: GPL-2.0-or-later
/* libFuzzer target of one parser, BENCH_FUZZ_PARSER ("hackbench", ...):
 * meson builds this file once per parser.  For a parser that takes an
 * argument, the input's first line is the argument (an empty one is none)
 * and the rest the output.  Beyond the sanitizers, it checks what every
 * parse promises: metrics that are named, finite and at least one on
 * success; a reason on failure. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench_parse.h"

#ifndef BENCH_FUZZ_PARSER
#error "build with -DBENCH_FUZZ_PARSER=\"<parser name>\""
#endif

static void check(bool ok)
{
	if (!ok)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct bench_metrics m;
	const struct bench_parser *p = bench_parser_find(BENCH_FUZZ_PARSER);
	const char *out = (const char *)data;
	char arg[256], why[512];
	bool has_arg = false;

	check(p != NULL);
	if (p->arg_help) {
		const char *nl = memchr(data, '\n', size);
		size_t n = nl ? (size_t)(nl - out) : size;

		if (n >= sizeof(arg))
			return 0;
		memcpy(arg, data, n);
		arg[n] = '\0';
		has_arg = n > 0 && !memchr(arg, '\0', n);
		out += nl ? n + 1 : n;
		size -= nl ? n + 1 : n;
	}
	/* the output is not NUL-terminated: a copy of exactly its size lets
	 * ASan catch a read past its end */
	char *copy = malloc(size ? size : 1);
	memcpy(copy, out, size);
	why[0] = '\0';
	int r = bench_parse(p, copy, size, has_arg ? arg : NULL, &m, why, sizeof(why));
	free(copy);

	check(r == 0 || r == -EBADMSG || r == -EINVAL);
	if (r < 0) {
		check(why[0] != '\0' && memchr(why, '\0', sizeof(why)) != NULL);
		check(m.n == 0);
		return 0;
	}
	check(m.n >= 1 && m.n <= BENCH_METRICS_MAX);
	for (size_t i = 0; i < m.n; i++) {
		check(m.v[i].name[0] != '\0');
		check(strspn(m.v[i].name, "abcdefghijklmnopqrstuvwxyz0123456789_.-") ==
		      strlen(m.v[i].name));
		check(isfinite(m.v[i].value));
	}
	return 0;
}
