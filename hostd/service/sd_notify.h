/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * systemd's two small protocols, without libsystemd: the notify datagram
 * (READY=1, STATUS=..., STOPPING=1 to $NOTIFY_SOCKET) and socket activation
 * ($LISTEN_FDS/$LISTEN_PID).  Both are no-ops outside systemd.  They return
 * 0 or -errno and never log.
 */
#ifndef LOCKSTEP_SD_NOTIFY_H
#define LOCKSTEP_SD_NOTIFY_H

/* Sends text ("READY=1\nSTATUS=idle") to $NOTIFY_SOCKET: 0 when sent or
 * when there is no such socket (not under systemd), else -errno. */
int sdnotify_send(const char *text);
/* The listening socket systemd passed (fd 3), marked close-on-exec: 1 with
 * *fd set; 0 when none was passed (or it was meant for another process);
 * -EINVAL when more than one was passed or fd 3 is not a stream socket. */
int sdnotify_listen_fd(int *fd);

#endif
