// SPDX-License-Identifier: GPL-2.0-or-later
/* iperf3 -J (iperf 3.x): the client's JSON report.  "end" sums every
 * stream: "sum_sent" and "sum_received" (TCP, and UDP since 3.10), and for
 * UDP "sum" with the receiver's jitter and losses.  A report with "error"
 * is the run's failure, whatever else it holds.
 *
 *   send, recv    Mbit/s (10^6 bits), all streams, as MMTests reports them
 *   jitter        ms, UDP only
 *   lost_percent  %, UDP only */
#include <stdio.h>
#include <string.h>

#include "bench_parse_impl.h"

static int iperf3_report(struct json_object *root, struct bench_metrics *m, char *why, size_t whylen)
{
	struct json_object *err, *end, *start, *test, *proto, *sum;
	double send, recv, jitter, lost;
	char q[BENCH_QUOTE_MAX];

	if (!json_object_is_type(root, json_type_object))
		return bench__fail(why, whylen, "the report is not a JSON object");
	if (json_object_object_get_ex(root, "error", &err)) {
		const char *e = json_object_get_string(err);
		return bench__fail(why, whylen, "iperf3 reports an error: %s",
				   bench__quote(e, strlen(e), q, sizeof(q)));
	}
	if (!json_object_object_get_ex(root, "start", &start) ||
	    !json_object_object_get_ex(start, "test_start", &test) ||
	    !json_object_object_get_ex(test, "protocol", &proto) ||
	    !json_object_is_type(proto, json_type_string))
		return bench__fail(why, whylen, "no start.test_start.protocol: not iperf3's report?");
	const char *p = json_object_get_string(proto);
	bool udp = strcmp(p, "UDP") == 0;
	if (!udp && strcmp(p, "TCP") != 0)
		return bench__fail(why, whylen, "start.test_start.protocol is \"%s\", not TCP or UDP",
				   bench__quote(p, strlen(p), q, sizeof(q)));
	if (!json_object_object_get_ex(root, "end", &end) ||
	    !json_object_is_type(end, json_type_object))
		return bench__fail(why, whylen, "no \"end\" in the report: the run did not finish");
	struct json_object *sent, *received;
	if (!json_object_object_get_ex(end, "sum_sent", &sent) ||
	    !json_object_object_get_ex(end, "sum_received", &received))
		return bench__fail(why, whylen,
				   "end: no sum_sent and sum_received (iperf3 before "
				   "3.10 for UDP?)");
	int r = bench__json_num(sent, "end.sum_sent", "bits_per_second", &send, why, whylen);
	if (r == 0)
		r = bench__json_num(received, "end.sum_received", "bits_per_second", &recv, why,
				    whylen);
	if (r == 0)
		r = bench__metric_add(m, why, whylen, send / 1e6, "Mbit/s", true, "send");
	if (r == 0)
		r = bench__metric_add(m, why, whylen, recv / 1e6, "Mbit/s", true, "recv");
	if (r < 0 || !udp)
		return r;
	if (!json_object_object_get_ex(end, "sum", &sum))
		return bench__fail(why, whylen, "end: no \"sum\" with the UDP jitter and losses");
	r = bench__json_num(sum, "end.sum", "jitter_ms", &jitter, why, whylen);
	if (r == 0)
		r = bench__json_num(sum, "end.sum", "lost_percent", &lost, why, whylen);
	if (r == 0)
		r = bench__metric_add(m, why, whylen, jitter, "ms", false, "jitter");
	if (r == 0)
		r = bench__metric_add(m, why, whylen, lost, "%", false, "lost_percent");
	return r;
}

int bench__parse_iperf3_json(const char *out, size_t len, const char *arg, struct bench_metrics *m,
			     char *why, size_t whylen)
{
	(void)arg;
	return bench__parse_json(out, len, "run iperf3 with -J", iperf3_report, m, why, whylen);
}
