/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hostd --service: owns the host for a queue of experiments, run one at a
 * time, each as a hostd child of its own; a control socket for hostctl.
 * See docs/service.md.
 */
#ifndef LOCKSTEP_SERVICE_H
#define LOCKSTEP_SERVICE_H

#include <stdbool.h>

#define SERVICE_DEFAULT_SOCKET "/run/lockstep/hostd.sock"
#define SERVICE_DEFAULT_SETTINGS "/etc/lockstep/hostd-service.conf"

struct service_options {
	const char *socket_path;   /* unless systemd passed a socket */
	const char *state_dir;	   /* the queue goes in STATE_DIR/service */
	const char *settings_path; /* SERVICE_DEFAULT_SETTINGS; missing is fine */
	const char *group;	   /* NULL: SERVICE_GROUP of the settings */
	/* passed on to every experiment's hostd when set */
	const char *agent, *guest_agent, *sysfs_root;
	bool verbose;
};

/* Runs until SIGTERM or SIGINT; the exit status of hostd. */
int service_main(const struct service_options *opt);

#endif
