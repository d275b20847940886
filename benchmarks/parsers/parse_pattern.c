// SPDX-License-Identifier: GPL-2.0-or-later
/* The "pattern" parser: one number out of a tool's output, found by a
 * pattern such as "Time: {}" or "{} ops/s" (README.md has the syntax).
 *
 * The pattern is text around one "{}".  The text before it matches anywhere
 * in a line; the number follows it after any blanks; the text after "{}"
 * follows the number after any blanks; what comes after that is free.  A
 * blank in the pattern matches one or more blanks (space, tab).  With no
 * text before "{}", the number must start the line or follow a blank.  The
 * first line that matches gives the value. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bench_parse_impl.h"

#define PATTERN_MAX 200

struct pat {
	const char *pre, *pre_end, *post, *post_end;
};

static bool blank(char ch)
{
	return ch == ' ' || ch == '\t';
}

int bench__check_pattern_arg(const char *arg, char *why, size_t whylen)
{
	const char *hole = arg ? strstr(arg, "{}") : NULL;

	if (!arg) {
		snprintf(why, whylen, "pattern parser: needs a pattern such as 'Time: {}'");
		return -EINVAL;
	}
	for (const char *p = arg; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e) {
			snprintf(why, whylen, "pattern '%s': byte 0x%02x at %zu is not printable ASCII",
				 arg, (unsigned char)*p, (size_t)(p - arg));
			return -EINVAL;
		}
	if (strlen(arg) > PATTERN_MAX) {
		snprintf(why, whylen, "pattern '%.40s...': longer than %d characters", arg,
			 PATTERN_MAX);
		return -EINVAL;
	}
	if (!hole || strstr(hole + 2, "{}")) {
		snprintf(why, whylen, "pattern '%s': needs exactly one '{}' where the number is", arg);
		return -EINVAL;
	}
	return 0;
}

static void pat_split(struct pat *p, const char *arg)
{
	const char *hole = strstr(arg, "{}");

	p->pre = arg;
	p->pre_end = hole;
	p->post = hole + 2;
	p->post_end = arg + strlen(arg);
	/* blanks next to "{}" or at either end match nothing of their own */
	while (p->pre < p->pre_end && blank(*p->pre))
		p->pre++;
	while (p->pre_end > p->pre && blank(p->pre_end[-1]))
		p->pre_end--;
	while (p->post < p->post_end && blank(*p->post))
		p->post++;
	while (p->post_end > p->post && blank(p->post_end[-1]))
		p->post_end--;
}

/* the literal [lit, end) at the cursor, a blank matching blanks */
static bool lit_match(struct bench__cur *c, const char *lit, const char *end)
{
	struct bench__cur t = *c;

	while (lit < end) {
		if (blank(*lit)) {
			if (t.p >= t.end || !blank(*t.p))
				return false;
			while (lit < end && blank(*lit))
				lit++;
			bench__skip_blanks(&t);
			continue;
		}
		if (t.p >= t.end || *t.p != *lit)
			return false;
		t.p++;
		lit++;
	}
	*c = t;
	return true;
}

/* 1: the line matches with *v; 0: it does not (*near when it has the text
 * before "{}"); -ERANGE: it matches with a number beyond a double */
static int pat_line(const struct pat *p, const struct bench__line *l, double *v, bool *near)
{
	bool has_pre = p->pre < p->pre_end;

	for (const char *s = l->s; s < l->s + l->len; s++) {
		struct bench__cur c = { s, l->s + l->len };

		if (has_pre && !lit_match(&c, p->pre, p->pre_end))
			continue;
		if (!has_pre && s > l->s && !blank(s[-1]))
			continue;
		*near = *near || has_pre;
		bench__skip_blanks(&c);
		int r = bench__number(&c, v);
		if (r == -EINVAL)
			continue;
		if (r == -ERANGE) /* is it the number of the pattern? */
			c.p += bench__number_len(c.p, c.end);
		bench__skip_blanks(&c);
		if (!lit_match(&c, p->post, p->post_end))
			continue;
		return r < 0 ? r : 1;
	}
	return 0;
}

int bench__parse_pattern(const char *out, size_t len, const char *arg, struct bench_metrics *m,
			 char *why, size_t whylen)
{
	char q[BENCH_QUOTE_MAX], qa[BENCH_QUOTE_MAX];
	struct bench__lines it;
	struct bench__line l, first_near = { 0 };
	struct pat p;
	double v = 0;
	int r = 0;

	pat_split(&p, arg);
	bench__quote(arg, strlen(arg), qa, sizeof(qa));
	bench__lines_init(&it, out, len);
	while (r == 0 && bench__line_next(&it, &l)) {
		bool near = false;

		r = pat_line(&p, &l, &v, &near);
		if (near && !first_near.no)
			first_near = l;
	}
	if (r == -ERANGE)
		return bench__fail(why, whylen, "line %lu: the number of '%s' is out of range: '%s'",
				   l.no, qa, bench__quote(l.s, l.len, q, sizeof(q)));
	if (r == 1)
		return bench__metric_add(m, why, whylen, v, "", false, "value");
	if (first_near.no)
		return bench__fail(why, whylen, "line %lu: expected '%s', found '%s'", first_near.no,
				   qa, bench__quote(first_near.s, first_near.len, q, sizeof(q)));
	return bench__fail(why, whylen, "no line matches '%s': output truncated?", qa);
}
