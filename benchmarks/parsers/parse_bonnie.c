// SPDX-License-Identifier: GPL-2.0-or-later
/* bonnie++ 1.98 and later (Debian's 2.00a): the CSV line it prints last
 * (alone on stdout with -q), 50 fields:
 *
 *   1.98,2.00a,name,concurrency,seed,size,chunk,seeks,seek_procs,
 *   putc,cpu,put_block,cpu,rewrite,cpu,getc,cpu,get_block,cpu,seeks,cpu,
 *   files,max,min,dirs,file_chunk,
 *   seq_create,cpu,seq_stat,cpu,seq_del,cpu,ran_create,cpu,ran_stat,cpu,ran_del,cpu,
 *   12 latencies (putc ... ran_del), each a number and us, ms or s
 *
 * A test not run leaves its field empty, and one too quick to time prints
 * "+++++": neither is a number, so neither yields a metric (the spec's
 * metrics are all optional); a parse with none at all is an error. */
#include <stdio.h>
#include <string.h>

#include "bench_parse_impl.h"

#define BONNIE_FIELDS 50
#define BONNIE_LAT_FIRST 38

/* the 12 tests, in the order of both their rate and latency fields */
static const struct bonnie_test {
	const char *name, *unit;
	unsigned rate_field;
} tests[] = {
	{ "seqout_char", "KiB/s", 9 },	       { "seqout_block", "KiB/s", 11 },
	{ "seqout_rewrite", "KiB/s", 13 },     { "seqin_char", "KiB/s", 15 },
	{ "seqin_block", "KiB/s", 17 },	       { "random_seeks", "seeks/s", 19 },
	{ "seqcreate_create", "files/s", 26 }, { "seqcreate_stat", "files/s", 28 },
	{ "seqcreate_delete", "files/s", 30 }, { "randcreate_create", "files/s", 32 },
	{ "randcreate_stat", "files/s", 34 },  { "randcreate_delete", "files/s", 36 },
};
#define BONNIE_TESTS (sizeof(tests) / sizeof(tests[0]))

struct field {
	const char *p, *end;
};

static bool field_is(const struct field *f, const char *s)
{
	size_t n = strlen(s);
	return (size_t)(f->end - f->p) == n && memcmp(f->p, s, n) == 0;
}

/* A time's unit, at the end of its field ("us" and "ms" before "s"). */
static const struct {
	const char *suffix;
	double us;
} lat_units[] = { { "us", 1 }, { "ms", 1e3 }, { "s", 1e6 } };

/* One field: empty or "+++++" is no value (*has false); else a number >= 0
 * and nothing else, or with time a number and its unit (in us). */
static int field_value(const struct field *f, const struct bench__line *l, unsigned idx, bool time,
		       bool *has, double *v, char *why, size_t whylen)
{
	char expected[64], q[BENCH_QUOTE_MAX];
	struct bench__cur c = { f->p, f->end };
	double scale = 1;
	*has = false;
	if (f->p == f->end || field_is(f, "+++++"))
		return 0;
	for (size_t i = 0; time && i < sizeof(lat_units) / sizeof(lat_units[0]); i++) {
		size_t n = strlen(lat_units[i].suffix);
		if ((size_t)(c.end - c.p) > n && !memcmp(c.end - n, lat_units[i].suffix, n)) {
			c.end -= n;
			scale = lat_units[i].us;
			break;
		}
	}
	if (time && c.end == f->end)
		return bench__fail(why, whylen,
				   "line %lu: field %u of the bonnie++ CSV line is "
				   "'%s', not a time in us, ms or s",
				   l->no, idx + 1,
				   bench__quote(f->p, (size_t)(f->end - f->p), q, sizeof(q)));
	snprintf(expected, sizeof(expected), "a %s in field %u of the CSV line",
		 time ? "time" : "number", idx + 1);
	int r = bench__value_line(&c, l, expected, NULL, v, why, whylen);
	if (r == 0) {
		*v *= scale;
		*has = true;
	}
	return r;
}

static int bonnie_csv(const struct bench__line *l, struct bench_metrics *m, char *why, size_t whylen)
{
	struct field f[BONNIE_FIELDS];
	size_t n = 0;
	const char *p = l->s, *end = l->s + l->len;

	while (n < BONNIE_FIELDS) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		f[n++] = (struct field){ p, comma ? comma : end };
		if (!comma)
			break;
		p = comma + 1;
	}
	if (n != BONNIE_FIELDS || f[n - 1].end != end)
		return bench__fail(why, whylen,
				   "line %lu: a bonnie++ 1.98 CSV line has %d fields, "
				   "this one %s",
				   l->no, BONNIE_FIELDS, n < BONNIE_FIELDS ? "fewer" : "more");
	size_t before = m->n;
	for (size_t t = 0; t < BONNIE_TESTS; t++) {
		bool has;
		double v;
		int r = field_value(&f[tests[t].rate_field], l, tests[t].rate_field, false, &has,
				    &v, why, whylen);
		if (r == 0 && has)
			r = bench__metric_add(m, why, whylen, v, tests[t].unit, true, "%s",
					      tests[t].name);
		if (r == 0)
			r = field_value(&f[BONNIE_LAT_FIRST + t], l, (unsigned)(BONNIE_LAT_FIRST + t),
					true, &has, &v, why, whylen);
		if (r == 0 && has)
			r = bench__metric_add(m, why, whylen, v, "us", false, "%s_lat", tests[t].name);
		if (r < 0)
			return r;
	}
	if (m->n == before)
		return bench__fail(why, whylen,
				   "line %lu: no test of bonnie++ gave a number "
				   "(every field empty, or +++++: too quick to time)",
				   l->no);
	return 0;
}

int bench__parse_bonnie(const char *out, size_t len, const char *arg, struct bench_metrics *m,
			char *why, size_t whylen)
{
	struct bench__lines it;
	struct bench__line l, csv;
	unsigned long seen = 0;

	(void)arg;
	bench__lines_init(&it, out, len);
	while (bench__line_next(&it, &l)) {
		struct bench__cur c = bench__cur_of(&l);
		if (!bench__eat(&c, "1.98,"))
			continue;
		int r = bench__once(&seen, &l, "bonnie++ CSV line", why, whylen);
		if (r < 0)
			return r;
		csv = l;
	}
	if (!seen)
		return bench__fail(why, whylen,
				   "no bonnie++ CSV line ('1.98,<version>,...'): "
				   "output truncated, or a bonnie++ older than 1.98?");
	return bonnie_csv(&csv, m, why, whylen);
}
