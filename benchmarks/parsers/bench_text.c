// SPDX-License-Identifier: GPL-2.0-or-later
/* Lines, cursors and numbers over untrusted bytes.  Nothing here stops at a
 * NUL or needs one: the output is (pointer, length). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_parse_impl.h"

void bench__lines_init(struct bench__lines *it, const char *out, size_t len)
{
	it->p = out;
	it->end = out + len;
	it->no = 0;
}

bool bench__line_next(struct bench__lines *it, struct bench__line *l)
{
	if (it->p >= it->end)
		return false;
	const char *nl = memchr(it->p, '\n', (size_t)(it->end - it->p));
	const char *stop = nl ? nl : it->end;

	l->s = it->p;
	l->len = (size_t)(stop - it->p);
	if (l->len > 0 && l->s[l->len - 1] == '\r')
		l->len--;
	l->no = ++it->no;
	it->p = nl ? nl + 1 : it->end;
	return true;
}

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r';
}

void bench__skip_blanks(struct bench__cur *c)
{
	while (c->p < c->end && is_blank(*c->p))
		c->p++;
}

bool bench__eat(struct bench__cur *c, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, lit, n) != 0)
		return false;
	c->p += n;
	return true;
}

bool bench__eat_label(struct bench__cur *c, const char *lit)
{
	struct bench__cur t = *c;

	bench__skip_blanks(&t);
	if (!bench__eat(&t, lit))
		return false;
	bench__skip_blanks(&t);
	*c = t;
	return true;
}

bool bench__rest_blank(const struct bench__cur *c)
{
	struct bench__cur t = *c;

	bench__skip_blanks(&t);
	return bench__cur_done(&t);
}

bool bench__line_blank(const struct bench__line *l)
{
	struct bench__cur c = bench__cur_of(l);

	return bench__rest_blank(&c);
}

bool bench__line_has(const struct bench__line *l, const char *lit)
{
	return memmem(l->s, l->len, lit, strlen(lit)) != NULL;
}

static bool is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

size_t bench__number_len(const char *p, const char *end)
{
	const char *q = p;
	size_t digits = 0;

	/* a token longer than any number is none, and is not read to its
	 * end: a megabyte of digits costs no more than 64 */
	if ((size_t)(end - p) > BENCH_NUMBER_MAX + 1)
		end = p + BENCH_NUMBER_MAX + 1;

	if (q < end && (*q == '+' || *q == '-'))
		q++;
	for (; q < end && is_digit(*q); q++)
		digits++;
	if (q < end && *q == '.') {
		q++;
		for (; q < end && is_digit(*q); q++)
			digits++;
	}
	if (digits == 0)
		return 0;
	if (q < end && (*q == 'e' || *q == 'E')) {
		const char *e = q + 1;

		if (e < end && (*e == '+' || *e == '-'))
			e++;
		if (e < end && is_digit(*e)) {
			while (e < end && is_digit(*e))
				e++;
			q = e;
		}
	}
	return (size_t)(q - p);
}

int bench__number(struct bench__cur *c, double *v)
{
	size_t n = bench__number_len(c->p, c->end);
	char buf[BENCH_NUMBER_MAX + 1];

	if (n == 0)
		return -EINVAL;
	/* "1.2.3" is no number; a unit may follow ("0.06s"), and the
	 * caller says what may come after */
	const char *after = c->p + n;
	if (after < c->end && (is_digit(*after) || *after == '.'))
		return -EINVAL;
	if (n > BENCH_NUMBER_MAX)
		return -ERANGE;
	memcpy(buf, c->p, n);
	buf[n] = '\0';
	errno = 0;
	double d = strtod(buf, NULL);
	if (!isfinite(d))
		return -ERANGE;
	*v = d;
	c->p = after;
	return 0;
}

const char *bench__found(const struct bench__line *l, const char *at, char *buf, size_t buflen)
{
	size_t off = at && at > l->s ? (size_t)(at - l->s) : 0;

	/* a long line is shown from a little before the place in question */
	off = off > 12 ? off - 12 : 0;
	if (l->len <= 60 || off == 0 || buflen < 8)
		return bench__quote(l->s, l->len, buf, buflen);
	memcpy(buf, "...", 3);
	bench__quote(l->s + off, l->len - off, buf + 3, buflen - 3);
	return buf;
}

/* a number >= 0 at the cursor; when word, it must end the line or be
 * followed by a blank ("7x" is no number) */
static int number_checked(struct bench__cur *c, const struct bench__line *l, const char *expected,
			  bool word, double *v, char *why, size_t whylen)
{
	char q[BENCH_QUOTE_MAX];
	int r;

	bench__skip_blanks(c);
	const char *start = c->p;
	r = bench__number(c, v);
	if (r == 0 && word && c->p < c->end && !is_blank(*c->p)) {
		c->p = start;
		r = -EINVAL;
	}
	if (r == -ERANGE)
		return bench__fail(why, whylen,
				   "line %lu: expected %s, found a number out of range: '%s'",
				   l->no, expected, bench__found(l, c->p, q, sizeof(q)));
	if (r < 0)
		return bench__fail(why, whylen, "line %lu: expected %s, found '%s'", l->no,
				   expected, bench__found(l, c->p, q, sizeof(q)));
	if (*v < 0)
		return bench__fail(why, whylen, "line %lu: expected %s, found a negative number: '%s'",
				   l->no, expected, bench__found(l, c->p, q, sizeof(q)));
	return 0;
}

int bench__number_at(struct bench__cur *c, const struct bench__line *l, const char *expected,
		     double *v, char *why, size_t whylen)
{
	return number_checked(c, l, expected, true, v, why, whylen);
}

int bench__value_line(struct bench__cur *c, const struct bench__line *l, const char *expected,
		      const char *suffix, double *v, char *why, size_t whylen)
{
	char q[BENCH_QUOTE_MAX];
	int r = number_checked(c, l, expected, false, v, why, whylen);

	if (r < 0)
		return r;
	bench__skip_blanks(c);
	if ((suffix && !bench__eat(c, suffix)) || !bench__rest_blank(c))
		return bench__fail(why, whylen, "line %lu: expected %s, found '%s'", l->no,
				   expected, bench__found(l, c->p, q, sizeof(q)));
	return 0;
}

int bench__once(unsigned long *seen, const struct bench__line *l, const char *what, char *why,
		size_t whylen)
{
	if (*seen)
		return bench__fail(why, whylen,
				   "line %lu: a second %s (the first is line %lu): two runs in one output?",
				   l->no, what, *seen);
	*seen = l->no;
	return 0;
}
