// SPDX-License-Identifier: GPL-2.0-or-later
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "achan.h"

/* 1 when <root>/sys/class/virtio-ports/<port>/name holds name. */
static int achan_port_has_name(const char *root, const char *port, const char *name)
{
	char path[PATH_MAX], buf[256];
	ssize_t n;
	int fd;

	if (snprintf(path, sizeof(path), "%s/sys/class/virtio-ports/%s/name", root, port) >=
	    (int)sizeof(path))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return !strcmp(buf, name);
}

int achan_discover(const char *root, const char *name, char *path, size_t len)
{
	char dir[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int r = -ENOENT;

	if (snprintf(dir, sizeof(dir), "%s/sys/class/virtio-ports", root) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || !achan_port_has_name(root, de->d_name, name))
			continue;
		r = snprintf(path, len, "%s/dev/%s", root, de->d_name) >= (int)len ? -ENAMETOOLONG : 0;
		break;
	}
	closedir(d);
	return r;
}

static int achan_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, r;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* Connecting to a unix socket never waits for the peer to accept. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

static int achan_open_path(struct achan *c)
{
	struct stat st;
	int fd;

	if (stat(c->path, &st) < 0)
		return -errno;
	if (S_ISSOCK(st.st_mode)) {
		fd = achan_connect(c->path);
		c->is_socket = true;
	} else if (S_ISCHR(st.st_mode)) {
		fd = open(c->path, O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			fd = -errno;
		c->is_socket = false;
	} else {
		return -ENOTSUP;
	}
	if (fd < 0)
		return fd;
	c->fd = fd;
	return 0;
}

int achan_open(struct achan *c)
{
	int r, fl;

	switch (c->mode) {
	case ACHAN_DISCOVER:
		r = achan_discover(c->root, ACHAN_PORT_NAME, c->path, sizeof(c->path));
		if (r < 0)
			return r;
		/* fall through */
	case ACHAN_PATH:
		r = achan_open_path(c);
		if (r < 0)
			return r;
		break;
	case ACHAN_FD:
		if (c->fd < 0)
			return -EBADF;
		c->is_socket = true;
		fcntl(c->fd, F_SETFD, FD_CLOEXEC);
		break;
	}
	fl = fcntl(c->fd, F_GETFL);
	if (fl < 0 || fcntl(c->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		r = -errno;
		achan_close(c);
		return r;
	}
	return 0;
}

void achan_close(struct achan *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

bool achan_error_transient(int err)
{
	switch (err) {
	case -ENOENT:
	case -ECONNREFUSED:
	case -EAGAIN:
	case -EBUSY:
	case -ENXIO:
	case -ENODEV:
	case -EINTR: return true;
	default: return false;
	}
}
