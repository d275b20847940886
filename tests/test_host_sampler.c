// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * host_sampler: libvirt's vcpu.* stats into per-vCPU samples, on typed
 * parameters built here and on libvirt's in-process test driver.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libvirt/virterror.h>

#include "fileio.h"
#include "host_monitor.h"
#include "host_sampler.h"
#include "monitor_store.h"
#include "results.h"
#include "testlib.h"

static struct host_vcpu_snap a, b;

struct got {
	char metric[32][64];
	double value[32];
	unsigned n;
};

static void collect(void *ctx, const char *metric, double value, const char *unit)
{
	struct got *g = ctx;

	ck_assert_str_eq(unit, "%");
	ck_assert_uint_lt(g->n, 32);
	snprintf(g->metric[g->n], 64, "%s", metric);
	g->value[g->n++] = value;
}

static double value_of(const struct got *g, const char *metric)
{
	for (unsigned i = 0; i < g->n; i++)
		if (!strcmp(g->metric[i], metric))
			return g->value[i];
	ck_abort_msg("no sample %s", metric);
	return 0;
}

static void params(struct host_vcpu_snap *s, unsigned long long t0, unsigned long long t1,
		   unsigned long long w0, int extra_bad)
{
	virTypedParameterPtr p = NULL;
	int n = 0, max = 0;

	virTypedParamsAddUInt(&p, &n, &max, "vcpu.current", 2);
	virTypedParamsAddInt(&p, &n, &max, "vcpu.0.state", 1);
	virTypedParamsAddULLong(&p, &n, &max, "vcpu.0.time", t0);
	virTypedParamsAddULLong(&p, &n, &max, "vcpu.0.wait", w0);
	virTypedParamsAddULLong(&p, &n, &max, "vcpu.0.delay", w0 / 2);
	virTypedParamsAddULLong(&p, &n, &max, "vcpu.2.time", t1); /* sparse: vCPU 1 unplugged */
	virTypedParamsAddULLong(&p, &n, &max, "vcpu.2.halted", 1);
	if (extra_bad == 1)
		virTypedParamsAddString(&p, &n, &max, "vcpu.2.wait", "soon");
	if (extra_bad == 2)
		virTypedParamsAddULLong(&p, &n, &max, "vcpu.99999999.time", 1);
	ck_assert_int_eq(host_sampler_parse(p, n, s), extra_bad ? -EINVAL : 0);
	virTypedParamsFree(p, n);
}

START_TEST(test_parse_and_emit)
{
	struct got g = { .n = 0 };

	params(&a, 1000000000ull, 5000000000ull, 100000000ull, 0);
	ck_assert_uint_eq(a.n, 2);
	ck_assert_uint_eq(a.id[1], 2);
	ck_assert_uint_eq(a.have[0], HOST_VCPU_TIME | HOST_VCPU_WAIT | HOST_VCPU_DELAY);
	ck_assert_uint_eq(a.have[1], HOST_VCPU_TIME);
	params(&b, 1500000000ull, 5900000000ull, 300000000ull, 0);
	a.ns = 0;
	b.ns = 2000000000;
	/* 2 s: vCPU 0 ran 0.5 s (25 %) and waited 0.2 s (10 %), vCPU 2 ran 0.9 s */
	ck_assert_uint_eq(host_sampler_emit(&a, &b, collect, &g), 7);
	ck_assert_double_eq_tol(value_of(&g, "vcpu.0.time"), 25, 1e-9);
	ck_assert_double_eq_tol(value_of(&g, "vcpu.0.wait"), 10, 1e-9);
	ck_assert_double_eq_tol(value_of(&g, "vcpu.0.delay"), 5, 1e-9);
	ck_assert_double_eq_tol(value_of(&g, "vcpu.2.time"), 45, 1e-9);
	ck_assert_double_eq_tol(value_of(&g, "vcpu.all.time"), 70, 1e-9);
	ck_assert_double_eq_tol(value_of(&g, "vcpu.all.wait"), 10, 1e-9);
	/* backwards, or no interval: nothing */
	g.n = 0;
	b.ns = 4000000000;
	ck_assert_uint_eq(host_sampler_emit(&b, &a, collect, &g), 0);
	ck_assert_uint_eq(host_sampler_emit(&a, &a, collect, &g), 0);
}
END_TEST

START_TEST(test_parse_refuses)
{
	params(&a, 1, 2, 3, 1);
	params(&a, 1, 2, 3, 2);
}
END_TEST

/* The test driver's "test" domain: read through the real call.  Where the
 * driver has no vCPU stats the call must fail with a message, not crash. */
START_TEST(test_read_test_driver)
{
	virConnectPtr c = virConnectOpen("test:///default");
	virDomainPtr d;
	char why[256] = "";
	int r;

	ck_assert_ptr_nonnull(c);
	d = virDomainLookupByName(c, "test");
	ck_assert_ptr_nonnull(d);
	memset(&a, 0xff, sizeof(a)); /* whatever was there is replaced */
	r = host_sampler_read(d, &a, why, sizeof(why));
	if (r == 0) {
		/* libvirt 9.0's test driver lists no vcpu.* fields: none is fine */
		ck_assert_uint_le(a.n, HOST_VCPUS_MAX);
		for (unsigned i = 0; i < a.n; i++)
			ck_assert(a.have[i] & HOST_VCPU_TIME);
		ck_assert_int_gt(a.ns, 0);
	} else {
		ck_assert_int_eq(r, -EIO);
		ck_assert_str_ne(why, "");
	}
	fprintf(stderr, "test driver vcpu stats: %s (%u vCPUs) %s\n", r == 0 ? "read" : "refused",
		r == 0 ? a.n : 0, why);
	virDomainFree(d);
	virConnectClose(c);
}
END_TEST

/* ---- host_monitor: the loop, the job, the store ---- */

static unsigned fake_reads;

static int fake_read(virDomainPtr dom, struct host_vcpu_snap *s, char *why, size_t size)
{
	struct timespec ts;

	(void)dom;
	(void)why;
	(void)size;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	s->ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	s->ns -= s->ns % 2; /* halves exactly */
	s->n = 2;
	for (unsigned i = 0; i < 2; i++) {
		s->id[i] = i;
		s->have[i] = HOST_VCPU_TIME | HOST_VCPU_DELAY;
		s->time_ns[i] = (uint64_t)s->ns / 2; /* 50 % of a CPU each */
		s->delay_ns[i] = 0;
	}
	__atomic_fetch_add(&fake_reads, 1, __ATOMIC_SEQ_CST);
	return 0;
}

static int failing_read(virDomainPtr dom, struct host_vcpu_snap *s, char *why, size_t size)
{
	(void)dom;
	(void)s;
	snprintf(why, size, "the test says no");
	__atomic_fetch_add(&fake_reads, 1, __ATOMIC_SEQ_CST);
	return -EIO;
}

static int the_guest;

static uint32_t step_three(void *guest)
{
	ck_assert_ptr_eq(guest, &the_guest);
	return 3;
}

static bool hm_closed;

/* The value of the first line about metric in NDJSON text. */
static double value_in(const char *text, const char *metric)
{
	char key[96];
	const char *p, *v;

	snprintf(key, sizeof(key), "\"metric\":\"%s\",", metric);
	p = strstr(text, key);
	ck_assert_msg(p != NULL, "no line about %s", metric);
	v = strstr(p, "\"value\":");
	ck_assert_ptr_nonnull(v);
	return strtod(v + 8, NULL);
}

static void on_hm_closed(void *ctx)
{
	(void)ctx;
	hm_closed = true;
}

/* Closes once five reads were made: jobs run one at a time, so the first
 * four have been handed to the store (the fifth may be dropped by the
 * close), which is three intervals, two of them weighed in summaries. */
static void stop_cb(uv_timer_t *t)
{
	if (__atomic_load_n(&fake_reads, __ATOMIC_SEQ_CST) < 5)
		return;
	host_monitor_close(t->data, on_hm_closed, NULL);
	uv_close((uv_handle_t *)t, NULL);
}

START_TEST(test_host_monitor)
{
	virConnectPtr c = virConnectOpen("test:///default");
	virDomainPtr d = virDomainLookupByName(c, "test");
	char top[256], path[512], *text = NULL;
	struct results *res;
	struct monitor_store *ms;
	struct host_monitor *hm;
	uv_loop_t loop;
	uv_timer_t stop;
	size_t len;

	testlib_tmpdir(top, sizeof(top), "hostmon");
	ck_assert_int_eq(results_open(top, "run", &res), 0);
	ms = monitor_store_new(res);
	ck_assert_int_eq(uv_loop_init(&loop), 0);
	fake_reads = 0;
	hm = host_monitor_new(&loop, ms, 20, step_three);
	host_monitor_add(hm, "vm-1", d, &the_guest);
	host_monitor_set_reader(hm, _i ? failing_read : fake_read);
	host_monitor_start(hm);
	uv_timer_init(&loop, &stop);
	stop.data = hm;
	uv_timer_start(&stop, stop_cb, 10, 10);
	hm_closed = false;
	ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
	ck_assert(hm_closed);
	ck_assert_int_eq(uv_loop_close(&loop), 0);
	ck_assert_uint_eq(monitor_store_step_done(ms, "vm-1", 3, "b", 1), _i ? 0 : 2);
	ck_assert_int_eq(monitor_store_close(ms), 0);
	ck_assert_int_eq(results_close(res), 0);
	snprintf(path, sizeof(path), "%s/run/nodes/vm-1/monitors/vcpu.ndjson", top);
	if (_i) {
		ck_assert_int_ne(access(path, F_OK), 0);
	} else {
		ck_assert_int_eq(fileio_read_all(path, 1 << 20, &text, &len), 0);
		ck_assert_ptr_nonnull(strstr(text, "\"step\":3,"));
		ck_assert_double_eq_tol(value_in(text, "vcpu.1.time"), 50, 1e-6);
		ck_assert_double_eq_tol(value_in(text, "vcpu.all.time"), 100, 1e-6);
		free(text);
		snprintf(path, sizeof(path), "%s/run/samples.ndjson", top);
		ck_assert_int_eq(fileio_read_all(path, 1 << 20, &text, &len), 0);
		ck_assert_double_eq_tol(value_in(text, "vcpu_time_pct"), 100, 1e-6);
		ck_assert_double_eq_tol(value_in(text, "vcpu_delay_pct"), 0, 1e-6);
		free(text);
	}
	virDomainFree(d);
	virConnectClose(c);
}
END_TEST

/* A real TCG guest under the system libvirtd: a transient domain with no
 * disk (it sits in the firmware, its vCPU threads run). */
START_TEST(test_read_qemu)
{
	virConnectPtr c = virConnectOpen("qemu:///system");
	virDomainPtr d;
	char why[256] = "", xml[512];

	ck_assert_ptr_nonnull(c);
	/* named after the pid, as every test guest (tests/README.md) */
	snprintf(xml, sizeof(xml),
		 "<domain type='qemu'><name>lockstep-test-%d-vcpu</name>"
		 "<memory unit='MiB'>64</memory><vcpu>2</vcpu>"
		 "<os><type arch='x86_64'>hvm</type></os><devices/></domain>",
		 (int)getpid());
	d = virDomainCreateXML(c, xml, VIR_DOMAIN_START_AUTODESTROY);
	ck_assert_msg(d != NULL, "cannot start a TCG domain: %s", virGetLastErrorMessage());
	usleep(500 * 1000);
	ck_assert_int_eq(host_sampler_read(d, &a, why, sizeof(why)), 0);
	usleep(500 * 1000);
	ck_assert_int_eq(host_sampler_read(d, &b, why, sizeof(why)), 0);
	ck_assert_uint_eq(b.n, 2);
	ck_assert_uint_eq(b.id[1], 1);
	ck_assert(b.have[0] & HOST_VCPU_TIME);
	fprintf(stderr, "qemu vCPU 0: time %llu ns, wait %llu, delay %llu (fields %u)\n",
		(unsigned long long)b.time_ns[0], (unsigned long long)b.wait_ns[0],
		(unsigned long long)b.delay_ns[0], b.have[0]);
	virDomainDestroy(d);
	virDomainFree(d);
	virConnectClose(c);
}
END_TEST

static void quiet(void *ud, virErrorPtr e)
{
	(void)ud;
	(void)e;
}

/* With "qemu": only the real guest, skipped (77) without a system libvirtd. */
int main(int argc, char **argv)
{
	Suite *s = suite_create("host-sampler");
	TCase *tc = tcase_create("host-sampler");

	if (virInitialize() < 0)
		return 1;
	virSetErrorFunc(NULL, quiet);
	if (argc > 1 && !strcmp(argv[1], "qemu")) {
		virConnectPtr c = virConnectOpen("qemu:///system");

		if (!c) {
			fprintf(stderr, "no system libvirtd (tools/start-libvirt): skipped\n");
			return 77;
		}
		virConnectClose(c);
		tcase_add_test(tc, test_read_qemu);
	} else {
		tcase_add_test(tc, test_parse_and_emit);
		tcase_add_test(tc, test_parse_refuses);
		tcase_add_test(tc, test_read_test_driver);
		tcase_add_loop_test(tc, test_host_monitor, 0, 2);
	}
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
