// SPDX-License-Identifier: GPL-2.0-or-later
/* What the parsers of JSON reports share (fio, iperf3): finding the one
 * report in an output, and reading numbers out of it strictly. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_parse_impl.h"

#define BENCH_JSON_MAX (64u << 20) /* bytes of JSON read at most */

int bench__json_num(struct json_object *obj, const char *path, const char *key, double *v,
		    char *why, size_t whylen)
{
	struct json_object *x;

	if (!json_object_object_get_ex(obj, key, &x))
		return bench__fail(why, whylen, "%s: no \"%s\"", path, key);
	if (!json_object_is_type(x, json_type_int) && !json_object_is_type(x, json_type_double))
		return bench__fail(why, whylen, "%s.%s: expected a number, found %s", path, key,
				   json_type_to_name(json_object_get_type(x)));
	*v = json_object_get_double(x);
	if (!isfinite(*v) || *v < 0)
		return bench__fail(why, whylen, "%s.%s: expected a number >= 0, found %g", path,
				   key, *v);
	return 0;
}

/* Lines before the first one that starts with '{' (warnings a tool prints
 * on stdout) are skipped, and so are lines after the report, but a second
 * report is an error. */
int bench__parse_json(const char *out, size_t len, const char *hint,
		      int (*report)(struct json_object *root, struct bench_metrics *m, char *why,
				    size_t whylen),
		      struct bench_metrics *m, char *why, size_t whylen)
{
	struct bench__lines it;
	struct bench__line l;
	bool found = false;
	int r;

	bench__lines_init(&it, out, len);
	while (!found && bench__line_next(&it, &l))
		found = l.len > 0 && l.s[0] == '{';
	if (!found)
		return bench__fail(why, whylen, "no line starts with '{': no JSON report (%s)", hint);
	size_t at = (size_t)(l.s - out), n = len - at;
	if (n > BENCH_JSON_MAX)
		n = BENCH_JSON_MAX;

	struct json_tokener *tok = json_tokener_new();
	struct json_object *root = json_tokener_parse_ex(tok, l.s, (int)n);
	enum json_tokener_error e = json_tokener_get_error(tok);
	size_t end = at + (size_t)json_tokener_get_parse_end(tok);

	if (!root && e == json_tokener_continue)
		r = bench__fail(why, whylen,
				"the JSON from line %lu is cut short: output truncated?", l.no);
	else if (!root)
		r = bench__fail(why, whylen, "the JSON from line %lu is not valid at byte %zu: %s",
				l.no, end, json_tokener_error_desc(e));
	else
		r = report(root, m, why, whylen);
	/* a second report is a second run (or --status-interval): which one
	 * counts is not for the parser to guess */
	while (r == 0 && bench__line_next(&it, &l))
		if ((size_t)(l.s - out) >= end && l.len > 0 && l.s[0] == '{')
			r = bench__fail(why, whylen,
					"line %lu: a second JSON report: two runs in one output?",
					l.no);
	json_object_put(root);
	json_tokener_free(tok);
	return r;
}
