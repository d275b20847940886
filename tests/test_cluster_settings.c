// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cluster_settings: h.conf's CLUSTER_* keys and ON_HOST_FAILURE, each error
 * naming the file, the line and the value; none set is one host.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cluster_settings.h"
#include "config.h"
#include "testlib.h"

#define BASE                                                                      \
	"CLUSTER_REDIS=127.0.0.1:6379\nCLUSTER_ID=exp-1\nCLUSTER_ROLE=follower\n" \
	"CLUSTER_MEMBER=b\nCLUSTER_MEMBERS=\"a b c\"\n"

/* Loads text as h.conf: the return, s filled, the formatted error in msg. */
static int load(const char *text, struct cluster_settings *s, char *msg, size_t size)
{
	struct config *c = config_new();
	struct config_diag d = { 0 };
	ck_assert_int_eq(config_load_string(c, "h.conf", text, &d), 0);
	int r = cluster_settings_load(c, "h.conf", s, &d);
	msg[0] = 0;
	if (r < 0)
		config_diag_format(&d, msg, size);
	config_free(c);
	return r;
}

START_TEST(test_none_is_one_host)
{
	struct cluster_settings s;
	char msg[600];
	ck_assert_int_eq(load("GUEST_COUNT=2\n", &s, msg, sizeof(msg)), 0);
	ck_assert(!s.enabled);
	cluster_settings_fini(&s);
}
END_TEST

START_TEST(test_follower_read)
{
	struct cluster_settings s;
	char msg[600];
	ck_assert_int_eq(load(BASE "CLUSTER_TIMEOUT=5\nON_HOST_FAILURE=continue\n", &s, msg,
			      sizeof(msg)),
			 0);
	ck_assert(s.enabled);
	ck_assert_str_eq(s.redis_host, "127.0.0.1");
	ck_assert_int_eq(s.redis_port, 6379);
	ck_assert_int_eq(s.role, CLUSTER_FOLLOWER);
	ck_assert_uint_eq(s.nmembers, 3);
	ck_assert_str_eq(s.members[0], "a");
	ck_assert(s.timeout_s == 5);
	ck_assert_int_eq(s.on_failure, CLUSTER_ON_FAILURE_CONTINUE);
	ck_assert_ptr_null(s.password);
	cluster_settings_fini(&s);
}
END_TEST

START_TEST(test_password_file)
{
	char dir[256], path[300], text[600], msg[600];
	struct cluster_settings s;
	testlib_tmpdir(dir, sizeof(dir), "cluster");
	snprintf(path, sizeof(path), "%s/pw", dir);
	FILE *f = fopen(path, "w");
	fputs("s3cret\nignored\n", f);
	fclose(f);
	snprintf(text, sizeof(text), BASE "CLUSTER_PASSWORD_FILE=%s\n", path);
	ck_assert_int_eq(load(text, &s, msg, sizeof(msg)), 0);
	ck_assert_str_eq(s.password, "s3cret");
	cluster_settings_fini(&s);
	snprintf(text, sizeof(text), BASE "CLUSTER_PASSWORD_FILE=%s/none\n", dir);
	ck_assert_int_eq(load(text, &s, msg, sizeof(msg)), -EINVAL);
	char want[400];
	snprintf(want, sizeof(want),
		 "h.conf:6: CLUSTER_PASSWORD_FILE=\"%s/none\" cannot be read: "
		 "No such file or directory",
		 dir);
	ck_assert_str_eq(msg, want);
	cluster_settings_fini(&s);
}
END_TEST

static void expect(const char *text, const char *want)
{
	struct cluster_settings s;
	char msg[600];
	ck_assert_int_eq(load(text, &s, msg, sizeof(msg)), -EINVAL);
	ck_assert_str_eq(msg, want);
	cluster_settings_fini(&s);
}

START_TEST(test_errors_name_line_and_value)
{
	expect("GUEST_COUNT=1\nCLUSTER_ID=x\n",
	       "h.conf:2: CLUSTER_ID is set but CLUSTER_REDIS is not: a cluster run needs "
	       "CLUSTER_REDIS, CLUSTER_ID, CLUSTER_ROLE, CLUSTER_MEMBER and CLUSTER_MEMBERS");
	expect(BASE "CLUSTER_REDIS=h:70000\n",
	       "h.conf:6: CLUSTER_REDIS=\"h:70000\" is not host:port (a port of 1 to 65535)");
	expect(BASE "CLUSTER_ID=\"exp 1\"\n",
	       "h.conf:6: CLUSTER_ID=\"exp 1\" is not an id (1 to 207 printable ASCII characters, no "
	       "spaces or quotes)");
	expect(BASE "CLUSTER_MEMBERS=\"a c\"\n",
	       "h.conf:6: CLUSTER_MEMBERS=\"a c\" does not name this host, CLUSTER_MEMBER=b");
	expect(BASE "CLUSTER_MEMBERS=\"a b a\"\n", "h.conf:6: CLUSTER_MEMBERS: \"a\" is listed twice");
	expect(BASE "CLUSTER_ROLE=leader\n",
	       "h.conf:6: CLUSTER_ROLE=leader but CLUSTER_MEMBERS=\"a b c\" names a as the leader "
	       "(its first member)");
	expect(BASE "CLUSTER_MEMBERS=b\n",
	       "h.conf:6: CLUSTER_MEMBERS=\"b\" names fewer than two members (the leader first, "
	       "then its followers)");
	expect(BASE "ON_HOST_FAILURE=retry\n",
	       "h.conf:6: ON_HOST_FAILURE=\"retry\" is not one of abort, continue");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("cluster_settings");
	TCase *tc = tcase_create("settings");
	tcase_add_test(tc, test_none_is_one_host);
	tcase_add_test(tc, test_follower_read);
	tcase_add_test(tc, test_password_file);
	tcase_add_test(tc, test_errors_name_line_and_value);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testlib_main(suite());
}
