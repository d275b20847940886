// SPDX-License-Identifier: GPL-2.0-or-later
/* fs_mark 3.3 (Debian's fsmark): '#' lines describe the run, then a table
 * with one row per iteration (-L), each the files created so far:
 *
 *   FSUse%        Count         Size    Files/sec     App Overhead
 *       69          100         4096       1495.3             1229
 *       69          200         4096       1947.4              798
 *
 * MMTests records each row's Files/sec.  A step yields one sample per
 * metric, so the rows are summed up: files_sec is their mean,
 * files_sec_min the slowest iteration (how far it sank as the directories
 * filled), app_overhead the mean of the App Overhead column (microseconds
 * spent outside the file system calls, per iteration).  Every line after
 * the header must be a row of five numbers whose Count grows: anything
 * else is a table cut or garbled, an error naming the line. */
#include "bench_parse_impl.h"

#define FSMARK_COLUMNS 5

int bench__parse_fsmark(const char *out, size_t len, const char *arg, struct bench_metrics *m,
			char *why, size_t whylen)
{
	static const char expected[] = "a row '<FSUse%> <Count> <Size> <Files/sec> <App Overhead>'";
	struct bench__lines it;
	struct bench__line l;
	unsigned long header = 0;
	double sum = 0, min = 0, overhead = 0, last_count = -1;
	size_t rows = 0;
	int r;

	(void)arg;
	bench__lines_init(&it, out, len);
	while (bench__line_next(&it, &l)) {
		struct bench__cur c = bench__cur_of(&l);
		double v[FSMARK_COLUMNS];

		if (!header) {
			if (bench__eat_label(&c, "FSUse%") && bench__line_has(&l, "Files/sec"))
				header = l.no;
			continue;
		}
		/* a second run's '#' preamble leads to its header, refused below */
		if (bench__line_blank(&l) || (l.len && l.s[0] == '#'))
			continue;
		if (bench__eat_label(&c, "FSUse%"))
			return bench__once(&header, &l, "table header", why, whylen);
		for (size_t k = 0; k < FSMARK_COLUMNS; k++) {
			r = bench__number_at(&c, &l, expected, &v[k], why, whylen);
			if (r < 0)
				return r;
		}
		if (!bench__rest_blank(&c)) {
			char q[BENCH_QUOTE_MAX];
			return bench__fail(why, whylen, "line %lu: expected %s, found '%s'", l.no,
					   expected, bench__found(&l, c.p, q, sizeof(q)));
		}
		if (v[1] <= last_count)
			return bench__fail(why, whylen,
					   "line %lu: Count %.0f does not grow from the "
					   "row before (%.0f): rows repeated or out of order?",
					   l.no, v[1], last_count);
		last_count = v[1];
		sum += v[3];
		overhead += v[4];
		if (rows == 0 || v[3] < min)
			min = v[3];
		rows++;
	}
	if (!header)
		return bench__fail(why, whylen,
				   "no 'FSUse%% Count Size Files/sec App Overhead' "
				   "table: output truncated?");
	if (!rows)
		return bench__fail(why, whylen,
				   "line %lu: the table has no rows: output truncated?", header);
	r = bench__metric_add(m, why, whylen, sum / (double)rows, "files/s", true, "files_sec");
	if (r == 0)
		r = bench__metric_add(m, why, whylen, min, "files/s", true, "files_sec_min");
	if (r == 0)
		r = bench__metric_add(m, why, whylen, overhead / (double)rows, "us", false,
				      "app_overhead");
	return r;
}
