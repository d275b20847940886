/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The agent's channel to the host: a virtio-serial character device, a
 * unix stream socket to connect to, or an fd handed over already connected.
 * Opening is one attempt; the caller decides when to try again.
 */
#ifndef GUESTAGENT_ACHAN_H
#define GUESTAGENT_ACHAN_H

#include <limits.h>
#include <stdbool.h>

#define ACHAN_PORT_NAME "org.lockstep.agent.0"

enum achan_mode {
	ACHAN_DISCOVER, /* find the port named ACHAN_PORT_NAME under root */
	ACHAN_PATH,	/* a path: character device or unix socket */
	ACHAN_FD,	/* given, cannot be reopened */
};

struct achan {
	enum achan_mode mode;
	const char *root;    /* DISCOVER: stands for "/" */
	char path[PATH_MAX]; /* PATH, or what DISCOVER found */
	int fd;		     /* -1 when closed */
	bool is_socket;
};

/*
 * Finds the port named name: the vportNpM whose <root>/sys/class/
 * virtio-ports/vportNpM/name holds it; its device is <root>/dev/vportNpM.
 * 0, -ENOENT (no such port yet), or another -errno.
 */
int achan_discover(const char *root, const char *name, char *path, size_t len);

/*
 * One attempt to open (DISCOVER, PATH) or to check (FD) the channel.  The fd
 * ends up non-blocking and close-on-exec.  0; -ENOENT, -ECONNREFUSED,
 * -EAGAIN and the like for "not yet, try again"; -ENOTSUP for a path that is
 * neither a character device nor a socket; -ENAMETOOLONG.
 */
int achan_open(struct achan *c);
void achan_close(struct achan *c);

/* Errors achan_open may stop returning later (the host or the port is not
 * there yet). */
bool achan_error_transient(int err);

#endif
