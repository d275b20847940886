/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the tests of hostd --service share (service_testlib.c), on top of
 * hostd_testlib's temporary folder and binaries. */
#ifndef LOCKSTEP_SERVICE_TESTLIB_H
#define LOCKSTEP_SERVICE_TESTLIB_H

#include <json-c/json.h>
#include <sys/types.h>

#include "hostd_testlib.h"

#define NOBODY 65534

extern char hostctl_path[512], sock[512];
extern char out[1 << 16]; /* the last hostctl's stdout */

/* The fixture: tmpdir (0755) with h.conf, g.conf, long.conf and results/. */
void service_test_setup(void);
void service_test_teardown(void);

/* Starts hostd --service (SERVICE_GROUP group; members of users may run
 * steps on the host unless settings_extra says otherwise) with extra lines
 * in its settings file and returns once it said READY=1. */
pid_t start_service_with(const char *group, const char *settings_extra);
pid_t start_service(const char *group);
/* The same, drop() called in the child just before the exec (a service
 * user of the test's; stderr is open already). */
pid_t start_service_dropped(const char *group, const char *settings_extra, void (*drop)(void));
void stop_service(pid_t pid);

/* Runs hostctl CMD ... --socket SOCK as uid (0: as we are; else with
 * group, -1 for none, and gid nobody); stdout into out; its exit status. */
int hostctl_as(uid_t uid, gid_t group, const char *const *args);
#define HOSTCTL(...) hostctl_as(0, 0, (const char *const[]){ __VA_ARGS__, NULL })
/* The same as a user of the user database, with their groups. */
int hostctl_user(const char *user, const char *const *args);
/* What the last hostctl said on stderr. */
const char *hostctl_err(void);

/* Submits tmpdir/h.conf and tmpdir/g (as root) into results/run; the id. */
long submit(const char *g, const char *run);
int wait_exp(long id);
/* The experiment as hostctl status --json ID shows it (caller puts). */
json_object *exp_status(long id);
/* Until results/t holds a sample. */
void wait_first_sample(void);
json_object *run_manifest(const char *run);
/* The service's stderr so far. */
const char *service_log(void);

/* A connection of our own to the service; -1 if it cannot be made. */
int raw_connect(void);
/* One request line as uid (0: as we are; else in group gid); the answer,
 * up to the hang-up or the first line. */
const char *raw_request_as(uid_t uid, gid_t gid, const char *line);

/* A user for a test (made with useradd, own group, also in group users, if
 * missing); their uid and gid. */
void service_test_user(const char *name, uid_t *uid, gid_t *gid);

#endif
