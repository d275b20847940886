// SPDX-License-Identifier: GPL-2.0-or-later
/* fio --output-format=json (fio 3.x; the "clat" in microseconds of fio 2.x
 * is read too).  Lines before the first one that starts with '{' (warnings
 * fio prints on stdout) are skipped, and so are lines after the report,
 * but a second report is an error.  One entry in "jobs" is expected: several jobs must be run
 * with --group_reporting, since percentiles of separate jobs cannot be
 * combined after the fact. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "bench_parse_impl.h"

#define fio_num bench__json_num

/* "99.900000": 99.9 -> read.clat_p99.9 */
static int fio_percentiles(struct json_object *pct, const char *path, const char *dir, double scale,
			   struct bench_metrics *m, char *why, size_t whylen)
{
	if (!json_object_is_type(pct, json_type_object))
		return bench__fail(why, whylen, "%s.percentile: expected an object", path);
	json_object_object_foreach(pct, key, val)
	{
		struct bench__cur c = { key, key + strlen(key) };
		char q[BENCH_QUOTE_MAX];
		double p, v;
		int r;

		(void)val;
		if (bench__number(&c, &p) < 0 || !bench__cur_done(&c) || p <= 0 || p > 100)
			return bench__fail(why, whylen, "%s.percentile: \"%s\" is not a percentile",
					   path, bench__quote(key, strlen(key), q, sizeof(q)));
		r = fio_num(pct, path, key, &v, why, whylen);
		if (r == 0)
			r = bench__metric_add(m, why, whylen, v * scale, "us", false, "%s.clat_p%g",
					      dir, p);
		if (r < 0)
			return r;
	}
	return 0;
}

/* one direction of the job: read, write or trim; *done when it did I/O */
static int fio_dir(struct json_object *job, const char *dir, struct bench_metrics *m, bool *done,
		   char *why, size_t whylen)
{
	struct json_object *d, *clat, *pct;
	char path[64], cpath[80];
	double ios, bw, iops, mean, max, scale = 1e-3; /* clat_ns to us */
	int r;

	snprintf(path, sizeof(path), "jobs[0].%s", dir);
	if (!json_object_object_get_ex(job, dir, &d))
		return 0; /* fio leaves out what the job never did */
	if (!json_object_is_type(d, json_type_object))
		return bench__fail(why, whylen, "%s: expected an object", path);
	r = fio_num(d, path, "total_ios", &ios, why, whylen);
	if (r < 0 || ios == 0)
		return r;
	*done = true;
	if (!json_object_object_get_ex(d, "clat_ns", &clat)) {
		scale = 1; /* fio 2.x: "clat" in us */
		if (!json_object_object_get_ex(d, "clat", &clat))
			return bench__fail(why, whylen, "%s: no \"clat_ns\"", path);
	}
	snprintf(cpath, sizeof(cpath), "%s.%s", path, scale == 1 ? "clat" : "clat_ns");
	if (!json_object_is_type(clat, json_type_object))
		return bench__fail(why, whylen, "%s: expected an object", cpath);
	r = fio_num(d, path, "bw_bytes", &bw, why, whylen);
	if (r == 0)
		r = fio_num(d, path, "iops", &iops, why, whylen);
	if (r == 0)
		r = fio_num(clat, cpath, "mean", &mean, why, whylen);
	if (r == 0)
		r = fio_num(clat, cpath, "max", &max, why, whylen);
	if (r == 0)
		r = bench__metric_add(m, why, whylen, bw / (1024 * 1024), "MiB/s", true, "%s.bw", dir);
	if (r == 0)
		r = bench__metric_add(m, why, whylen, iops, "ops/s", true, "%s.iops", dir);
	if (r == 0)
		r = bench__metric_add(m, why, whylen, mean * scale, "us", false, "%s.clat_mean", dir);
	if (r == 0)
		r = bench__metric_add(m, why, whylen, max * scale, "us", false, "%s.clat_max", dir);
	/* --clat_percentiles=0 leaves them out */
	if (r == 0 && json_object_object_get_ex(clat, "percentile", &pct))
		r = fio_percentiles(pct, cpath, dir, scale, m, why, whylen);
	return r;
}

static int fio_report(struct json_object *root, struct bench_metrics *m, char *why, size_t whylen)
{
	static const char *const dirs[] = { "read", "write", "trim" };
	struct json_object *jobs, *job, *name;
	double err;
	bool done = false;
	int r;

	if (!json_object_is_type(root, json_type_object) ||
	    !json_object_object_get_ex(root, "jobs", &jobs) ||
	    !json_object_is_type(jobs, json_type_array))
		return bench__fail(why, whylen, "no \"jobs\" array in the JSON: not fio's report?");
	size_t n = json_object_array_length(jobs);
	if (n != 1)
		return bench__fail(why, whylen,
				   "%zu jobs in the report where one is expected: run fio with --group_reporting",
				   n);
	job = json_object_array_get_idx(jobs, 0);
	if (!json_object_is_type(job, json_type_object))
		return bench__fail(why, whylen, "jobs[0]: expected an object");
	r = fio_num(job, "jobs[0]", "error", &err, why, whylen);
	if (r < 0)
		return r;
	if (err != 0) {
		const char *jn = json_object_object_get_ex(job, "jobname", &name)
					 ? json_object_get_string(name)
					 : "?";
		char q[BENCH_QUOTE_MAX];

		return bench__fail(why, whylen, "job '%s' failed with error %g",
				   bench__quote(jn, strlen(jn), q, sizeof(q)), err);
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		r = fio_dir(job, dirs[i], m, &done, why, whylen);
		if (r < 0)
			return r;
	}
	if (!done)
		return bench__fail(why, whylen, "jobs[0] did no read, write or trim I/O");
	return 0;
}

int bench__parse_fio_json(const char *out, size_t len, const char *arg, struct bench_metrics *m,
			  char *why, size_t whylen)
{
	(void)arg;
	return bench__parse_json(out, len, "run fio with --output-format=json", fio_report, m, why,
				 whylen);
}
