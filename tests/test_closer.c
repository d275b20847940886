// SPDX-License-Identifier: GPL-2.0-or-later
/* hostd/monitor/closer.c on a real libuv loop: an object with a timer and
 * a worker job out is destroyed once both are back, then its owner hears. */
#include <check.h>
#include <stdlib.h>
#include <uv.h>

#include "closer.h"
#include "testlib.h"

/* What the test's object went through, in order: 'D' destroyed, 'd' the
 * owner's done callback. */
static char trail[8];
static int ntrail;

struct obj {
	struct closer closer;
	uv_timer_t timer;
	uv_work_t work;
	int jobs_back;
};

static void obj_destroy(void *p)
{
	trail[ntrail++] = 'D';
	free(p);
}

static void owner_done(void *ctx)
{
	trail[ntrail++] = 'd';
	*(int *)ctx += 1;
}

static struct obj *obj_new(uv_loop_t *loop)
{
	struct obj *o = calloc(1, sizeof(*o));

	ck_assert_ptr_nonnull(o);
	closer_init(&o->closer, obj_destroy, o);
	ck_assert_int_eq(uv_timer_init(loop, &o->timer), 0);
	closer_hold(&o->closer);
	ntrail = 0;
	return o;
}

static void job(uv_work_t *w)
{
	(void)w;
	uv_sleep(50);
}

static void job_back(uv_work_t *w, int status)
{
	struct obj *o = w->data;

	ck_assert_int_eq(status, 0);
	/* still there: the job was out when its owner closed it */
	ck_assert_int_eq(ntrail, 0);
	o->jobs_back++;
	closer_release(&o->closer);
}

START_TEST(test_destroyed_after_timer_and_job)
{
	uv_loop_t loop;
	int done = 0;

	ck_assert_int_eq(uv_loop_init(&loop), 0);
	struct obj *o = obj_new(&loop);
	o->work.data = o;
	ck_assert_int_eq(uv_queue_work(&loop, &o->work, job, job_back), 0);
	closer_hold(&o->closer);
	closer_close(&o->closer, owner_done, &done);
	closer_close_handle(&o->closer, (uv_handle_t *)&o->timer);
	ck_assert_int_eq(ntrail, 0);
	uv_run(&loop, UV_RUN_DEFAULT);
	ck_assert_int_eq(done, 1);
	ck_assert_int_eq(ntrail, 2);
	ck_assert_msg(trail[0] == 'D' && trail[1] == 'd', "order %.2s, not Dd", trail);
	ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

START_TEST(test_nothing_out_destroyed_at_settle)
{
	uv_loop_t loop;
	int done = 0;

	ck_assert_int_eq(uv_loop_init(&loop), 0);
	struct obj *o = obj_new(&loop);
	uv_close((uv_handle_t *)&o->timer, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	closer_release(&o->closer); /* not closing: nothing happens */
	ck_assert_int_eq(ntrail, 0);
	closer_close(&o->closer, owner_done, &done);
	ck_assert_int_eq(ntrail, 0);
	closer_settle(&o->closer);
	ck_assert_int_eq(done, 1);
	ck_assert_int_eq(ntrail, 2);
	ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

START_TEST(test_null_is_done_at_once)
{
	int done = 0;

	ntrail = 0;
	closer_close(NULL, owner_done, &done);
	ck_assert_int_eq(done, 1);
	ck_assert_int_eq(ntrail, 1);
	closer_close(NULL, NULL, NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("closer");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_destroyed_after_timer_and_job);
	tcase_add_test(tc, test_nothing_out_destroyed_at_settle);
	tcase_add_test(tc, test_null_is_done_at_once);
	suite_add_tcase(s, tc);
	return testlib_main(s);
}
