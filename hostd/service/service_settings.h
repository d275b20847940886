/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The service's own settings (SERVICE_DEFAULT_SETTINGS), in the config
 * syntax of h.conf; reread on SIGHUP.  Keys, defaults: docs/service.md.
 */
#ifndef LOCKSTEP_SERVICE_SETTINGS_H
#define LOCKSTEP_SERVICE_SETTINGS_H

#include <stdint.h>

#include "config.h"
#include "ctl.h"

struct service_settings {
	char group[64];			 /* SERVICE_GROUP: who besides root may submit */
	uint32_t queue_max;		 /* QUEUE_MAX: experiments waiting, at most */
	uint32_t keep_finished;		 /* KEEP_FINISHED: ended ones remembered */
	char results_root[CTL_PATH_MAX]; /* RESULTS_ROOT: where runs go by default */
	uint32_t user_queue_max;	 /* USER_QUEUE_MAX: waiting, of one submitter */
	uint64_t idle_timeout_ms;	 /* IDLE_TIMEOUT: a client's time for a request */
	uint64_t stop_timeout_ms;	 /* STOP_TIMEOUT: from SIGTERM to SIGKILL of a run */
	char hostd_binary[CTL_PATH_MAX]; /* HOSTD_BINARY: tests only; "": the service's own */
	char host_steps[64];		 /* SERVICE_HOST_STEPS: the group that may run
					    steps on the host; "": root only */
	uint64_t run_timeout_ms;	 /* RUN_TIMEOUT: an experiment's wall time, at most */
};

void service_settings_default(struct service_settings *s);
/* Defaults, then path: 0; 1 when path does not exist (defaults only);
 * -errno with err naming file:line and the value (s untouched then). */
int service_settings_load(const char *path, struct service_settings *s, struct config_diag *err);

#endif
