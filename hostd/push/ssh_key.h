/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hostd's own SSH identity: one ed25519 key, made once in the state
 * directory and used for every guest.  Users install the public line in
 * their guest images (authorized_keys).  And the checks of guests' host
 * keys that ssh_push_connect makes.
 */
#ifndef LOCKSTEP_SSH_KEY_H
#define LOCKSTEP_SSH_KEY_H

#include <libssh/libssh.h>
#include <stddef.h>

/*
 * Makes STATE_DIR/ssh/id_ed25519 (mode 0600, OpenSSH format, so `ssh -i`
 * can use it too) and id_ed25519.pub the first time; later calls load the
 * existing key and refuse it when group or others can read it.
 * On success *private_path and *public_line are new strings (free them);
 * the line is "ssh-ed25519 AAAA... lockstep@<hostname>".
 * Returns 0, or a negative errno with err naming the file and the fault.
 * Not for concurrent use with the same state_dir from one process.
 */
int ssh_key_ensure(const char *state_dir, char **private_path, char **public_line, char *err,
		   size_t errlen);

/*
 * Guests' host keys.  Messages in err name the file and line; the caller
 * adds which guest it was about.
 */

/* Parses "TYPE BASE64 [comment]" into a public key; 0 or -EINVAL. */
int ssh_key_parse_public(const char *line, ssh_key *out);
/*
 * The demo guest prints its host key on the serial console as
 * "LOCKSTEP-HOSTKEY ssh-ed25519 AAAA...".  Finds the last such line in
 * console text whose key parses (kernel messages may cut a line in two) and
 * returns its "TYPE BASE64" part as a new string in *line.  0, or -ENOENT.
 */
int ssh_key_from_console(const char *text, size_t len, char **line);
/* "SHA256:<base64>", as OpenSSH prints it */
void ssh_key_fingerprint(const ssh_key key, char *out, size_t n);
/* The host key algorithms that select key's type, for SSH_OPTIONS_HOSTKEYS */
const char *ssh_key_algorithms(const ssh_key key);

/*
 * known_hosts files hold "NODE TYPE BASE64" lines (OpenSSH's format, found
 * with -o HostKeyAlias=NODE).  Other hosts' lines are ignored; a line for
 * node that cannot be read is an error naming it.
 *
 * ssh_key_known_hosts_check returns 0 when one of node's lines holds key,
 * 1 when the file has no line for node (missing file included), and
 * -EBADMSG when it has lines for node but none with this key (err names the
 * file, the line and both fingerprints).  If algs is not NULL it gets the
 * algorithms of node's recorded keys (empty when none), so that the caller
 * can ask the guest for a key of the recorded type.
 */
int ssh_key_known_hosts_check(const char *path, const char *node, const ssh_key key, char *err,
			      size_t errlen);
int ssh_key_known_hosts_algorithms(const char *path, const char *node, char *algs, size_t n,
				   char *err, size_t errlen);
/* Appends node's line (made 0644 with its folder) and syncs it to disk. */
int ssh_key_known_hosts_add(const char *path, const char *node, const ssh_key key, char *err,
			    size_t errlen);

#endif
