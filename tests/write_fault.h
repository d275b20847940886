/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Write errors on demand: a test binary linked with write_fault.c has its
 * own write(2) and writev(2), which the code under test (and libuv) call
 * instead of libc's.  Armed for one file descriptor, the next `count`
 * writes to it fail with `err` as the kernel's might (ENOBUFS: no buffer
 * memory; EIO: anything else); every other write goes to the kernel.
 */
#ifndef TESTS_WRITE_FAULT_H
#define TESTS_WRITE_FAULT_H

/* fd -1 disarms. */
void wf_arm(int fd, int err, unsigned count);
/* Writes failed since the last wf_arm. */
unsigned wf_failed(void);

#endif
