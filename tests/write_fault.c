// SPDX-License-Identifier: GPL-2.0-or-later
/* Write errors on demand (see write_fault.h). */
#include <errno.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "write_fault.h"

static int wf_fd = -1, wf_errno;
static unsigned wf_count, wf_nfailed;

void wf_arm(int fd, int err, unsigned count)
{
	wf_fd = fd;
	wf_errno = err;
	wf_count = count;
	wf_nfailed = 0;
}

unsigned wf_failed(void)
{
	return wf_nfailed;
}

static bool wf_fail(int fd)
{
	if (fd != wf_fd || wf_count == 0)
		return false;
	wf_count--;
	wf_nfailed++;
	errno = wf_errno;
	return true;
}

ssize_t write(int fd, const void *buf, size_t n)
{
	if (wf_fail(fd))
		return -1;
	return syscall(SYS_write, fd, buf, n);
}

ssize_t writev(int fd, const struct iovec *iov, int iovcnt)
{
	if (wf_fail(fd))
		return -1;
	return syscall(SYS_writev, fd, iov, iovcnt);
}
