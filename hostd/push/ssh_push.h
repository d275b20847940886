/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The SSH side of hostd: connect to a guest with hostd's own key, check its
 * host key, push the harness as one tar stream, run commands, start the
 * agent detached from the session.
 *
 * Every function blocks; hostd runs one guest's whole conversation as one
 * uv_queue_work job.  Sessions are independent, so jobs for different
 * guests may run at once, but one session belongs to one thread at a time.
 * The process calls ssh_init() once, from the main thread, before the
 * first job starts (and ssh_finalize() after the last one ended).
 *
 * Nothing waits forever: connecting, and every read or write after it, gives
 * up after target->timeout_ms without progress.  Errors come back as a
 * negative errno and a one-line message in err that starts with
 * "guest NODE (user@host:port): " and says what failed.  Nothing here logs.
 */
#ifndef LOCKSTEP_SSH_PUSH_H
#define LOCKSTEP_SSH_PUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ssh_push_target {
	const char *node; /* guest name, for messages */
	const char *host;
	int port;
	const char *user;
	const char *private_key_path; /* from ssh_key_ensure */
	/* "ssh-ed25519 AAAA... [comment]": the guest's key, known in advance
	 * (the demo guest prints it on its console).  Pinned: any other key is
	 * refused. */
	const char *expected_hostkey;
	/* Used when expected_hostkey is NULL: this guest's own known_hosts
	 * file.  Its lines are named after the node, not the address, because
	 * a guest behind a forwarded loopback port may get another port next
	 * time (OpenSSH reads it with -o HostKeyAlias=NODE). */
	const char *known_hosts_path;
	int timeout_ms; /* > 0 */
};

enum ssh_push_trust {
	SSH_PUSH_TRUST_PINNED,	 /* matched expected_hostkey */
	SSH_PUSH_TRUST_KNOWN,	 /* matched the known_hosts file */
	SSH_PUSH_TRUST_RECORDED, /* first use: added to known_hosts; warn */
};

struct ssh_push_hostkey {
	enum ssh_push_trust trust;
	char fingerprint[96]; /* "SHA256:..." of the guest's key */
};

struct ssh_push_session;

/*
 * Connects, verifies the host key and authenticates.  A refused host key
 * (-EBADMSG) names both fingerprints and nothing is sent after the key
 * exchange.  hostkey may be NULL.
 */
int ssh_push_connect(const struct ssh_push_target *t, struct ssh_push_session **out,
		     struct ssh_push_hostkey *hostkey, char *err, size_t errlen);
void ssh_push_close(struct ssh_push_session *s); /* accepts NULL */

struct ssh_push_file {
	const char *name_in_tar; /* relative; parents are made 0755 */
	unsigned mode;		 /* 0755 for binaries, 0644 for data */
	const char *local_path;	 /* file to send, or NULL to send... */
	const void *data;	 /* ...these bytes (a generated config) */
	size_t len;
};

struct ssh_push_stats {
	uint64_t bytes; /* tar stream bytes sent */
	double seconds; /* from exec request to tar's exit */
};

/*
 * Sends the files as one ustar stream into `mkdir -p DIR && tar -x -f - -C
 * DIR` on the guest.  Fails unless tar exits 0; its last output lines are
 * in err.  stats may be NULL.
 */
int ssh_push_harness(struct ssh_push_session *s, const char *remote_dir,
		     const struct ssh_push_file *files, size_t n, struct ssh_push_stats *stats,
		     char *err, size_t errlen);

/*
 * Runs command with the guest user's shell and waits for it to exit.
 * Returns 0 when it ran to the end, whatever its exit status (*exit_status,
 * may be NULL; -1 when killed by a signal); *output (may be NULL) gets its
 * stdout, at most 1 MiB (more is -EFBIG).  A non-zero exit puts the end of its stderr into err.
 */
int ssh_push_exec(struct ssh_push_session *s, const char *command, char **output, int *exit_status,
		  char *err, size_t errlen);

/*
 * Starts `cd DIR && setsid COMMAND </dev/null >DIR/LOG 2>&1 &` so that it
 * outlives the session (the shell exits at once and nothing holds the
 * channel open).  command is shell text; quote its arguments with
 * ssh_push_quote.  *pid (may be NULL) gets the guest pid of the process.
 */
int ssh_push_start_detached(struct ssh_push_session *s, const char *remote_dir, const char *command,
			    const char *log_name, long *pid, char *err, size_t errlen);

/* Single-quotes s for a POSIX shell; a new string. */
char *ssh_push_quote(const char *s);

#endif
