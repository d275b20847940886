// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * SSH to guests with libssh, in blocking mode with the session timeout set:
 * libssh then bounds every wait (key exchange, window for a write, exit
 * status) by it.  Reads wait on an ssh_event with the same bound.
 */
#include "ssh_push.h"

#include <errno.h>
#include <libssh/libssh.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "clock.h"
#include "diag.h"
#include "ssh_key.h"
#include "tar_writer.h"
#include "xalloc.h"

#define OUTPUT_MAX (1u << 20)
#define ERR_TAIL 1024
#define SINK_BUF 65536

struct ssh_push_session {
	ssh_session ssh;
	char *who; /* "guest NODE (user@host:port)" */
	int timeout_ms;
};

static int vfail(const struct ssh_push_session *s, char *err, size_t errlen, int r, const char *fmt,
		 va_list ap)
{
	return diag_vset(err, errlen, r, s->who, fmt, ap);
}

static int fail(const struct ssh_push_session *s, char *err, size_t errlen, int r, const char *fmt,
		...) __attribute__((format(printf, 5, 6)));

static int fail(const struct ssh_push_session *s, char *err, size_t errlen, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(s, err, errlen, r, fmt, ap);
	va_end(ap);
	return r;
}

/* Puts "who: " in front of a message that ssh_key wrote into err. */
static int prefix_err(const struct ssh_push_session *s, char *err, size_t errlen, int r)
{
	char *msg = xstrdup(errlen ? err : "");

	fail(s, err, errlen, r, "%s", msg);
	free(msg);
	return r;
}

char *ssh_push_quote(const char *str)
{
	size_t n = 3;
	char *out, *o;

	for (const char *c = str; *c; c++)
		n += *c == '\'' ? 4 : 1;
	o = out = xmalloc(n);
	*o++ = '\'';
	for (const char *c = str; *c; c++) {
		if (*c == '\'') {
			memcpy(o, "'\\''", 4);
			o += 4;
		} else {
			*o++ = *c;
		}
	}
	*o++ = '\'';
	*o = '\0';
	return out;
}

/* ---- connecting ---- */

static int target_ok(const struct ssh_push_target *t)
{
	return t->node && t->host && t->user && t->private_key_path && t->port > 0 &&
	       t->port < 65536 && t->timeout_ms > 0 && (t->expected_hostkey || t->known_hosts_path);
}

/* libssh reports connect failures only as text */
static int connect_errno(const char *msg)
{
	if (strstr(msg, "refused"))
		return -ECONNREFUSED;
	if (strstr(msg, "imeout") || strstr(msg, "timed out"))
		return -ETIMEDOUT;
	return -EHOSTUNREACH;
}

static int set_options(struct ssh_push_session *s, const struct ssh_push_target *t,
		       const char *hostkey_algs)
{
	long sec = t->timeout_ms / 1000, usec = (t->timeout_ms % 1000) * 1000L;
	bool no = false;
	int port = t->port;

	/* nothing from ~/.ssh: the key, the host keys and the timeouts are ours */
	if (ssh_options_set(s->ssh, SSH_OPTIONS_PROCESS_CONFIG, &no) < 0 ||
	    ssh_options_set(s->ssh, SSH_OPTIONS_HOST, t->host) < 0 ||
	    ssh_options_set(s->ssh, SSH_OPTIONS_PORT, &port) < 0 ||
	    ssh_options_set(s->ssh, SSH_OPTIONS_USER, t->user) < 0 ||
	    ssh_options_set(s->ssh, SSH_OPTIONS_TIMEOUT, &sec) < 0 ||
	    ssh_options_set(s->ssh, SSH_OPTIONS_TIMEOUT_USEC, &usec) < 0 ||
	    ssh_options_set(s->ssh, SSH_OPTIONS_KNOWNHOSTS, "/dev/null") < 0 ||
	    ssh_options_set(s->ssh, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null") < 0)
		return -EINVAL;
	if (hostkey_algs && *hostkey_algs &&
	    ssh_options_set(s->ssh, SSH_OPTIONS_HOSTKEYS, hostkey_algs) < 0)
		return -EINVAL;
	return 0;
}

static int verify_hostkey(struct ssh_push_session *s, const struct ssh_push_target *t,
			  ssh_key expected, struct ssh_push_hostkey *hk, char *err, size_t errlen)
{
	ssh_key offered = NULL;
	char fp[96], want[96];
	int r;

	if (ssh_get_server_publickey(s->ssh, &offered) != SSH_OK)
		return fail(s, err, errlen, -EPROTO, "no host key after the key exchange: %s",
			    ssh_get_error(s->ssh));
	ssh_key_fingerprint(offered, fp, sizeof(fp));
	snprintf(hk->fingerprint, sizeof(hk->fingerprint), "%s", fp);
	if (expected) {
		hk->trust = SSH_PUSH_TRUST_PINNED;
		r = 0;
		if (ssh_key_cmp(offered, expected, SSH_KEY_CMP_PUBLIC) != 0) {
			ssh_key_fingerprint(expected, want, sizeof(want));
			r = fail(s, err, errlen, -EBADMSG,
				 "HOST KEY MISMATCH: expected %s (the pinned key), the guest "
				 "offered %s; refusing to authenticate or send anything",
				 want, fp);
		}
	} else {
		r = ssh_key_known_hosts_check(t->known_hosts_path, t->node, offered, err, errlen);
		if (r == 0) {
			hk->trust = SSH_PUSH_TRUST_KNOWN;
		} else if (r == 1) {
			hk->trust = SSH_PUSH_TRUST_RECORDED;
			r = ssh_key_known_hosts_add(t->known_hosts_path, t->node, offered, err, errlen);
		}
		if (r < 0)
			prefix_err(s, err, errlen, r);
	}
	ssh_key_free(offered);
	return r;
}

static int authenticate(struct ssh_push_session *s, const struct ssh_push_target *t, char *err,
			size_t errlen)
{
	ssh_key key = NULL;
	int rc;

	if (ssh_pki_import_privkey_file(t->private_key_path, NULL, NULL, NULL, &key) != SSH_OK)
		return fail(s, err, errlen, -EINVAL, "cannot read hostd's private key %s",
			    t->private_key_path);
	rc = ssh_userauth_publickey(s->ssh, NULL, key);
	ssh_key_free(key);
	if (rc == SSH_AUTH_SUCCESS)
		return 0;
	if (rc == SSH_AUTH_DENIED || rc == SSH_AUTH_PARTIAL)
		return fail(s, err, errlen, -EACCES,
			    "user %s did not accept hostd's key %s.pub; add that line to "
			    "the guest's authorized_keys",
			    t->user, t->private_key_path);
	return fail(s, err, errlen, -EIO, "authentication failed: %s", ssh_get_error(s->ssh));
}

/* The pinned key, and which algorithms to ask the guest for. */
static int hostkey_policy(struct ssh_push_session *s, const struct ssh_push_target *t,
			  ssh_key *expected, char *algs, size_t n, char *err, size_t errlen)
{
	int r;

	if (t->expected_hostkey) {
		if (ssh_key_parse_public(t->expected_hostkey, expected) < 0)
			return fail(s, err, errlen, -EINVAL,
				    "the expected host key \"%.60s\" is not \"TYPE BASE64\"",
				    t->expected_hostkey);
		snprintf(algs, n, "%s", ssh_key_algorithms(*expected));
		return 0;
	}
	r = ssh_key_known_hosts_algorithms(t->known_hosts_path, t->node, algs, n, err, errlen);
	return r < 0 ? prefix_err(s, err, errlen, r) : 0;
}

int ssh_push_connect(const struct ssh_push_target *t, struct ssh_push_session **out,
		     struct ssh_push_hostkey *hostkey, char *err, size_t errlen)
{
	struct ssh_push_session *s = xcalloc(1, sizeof(*s));
	struct ssh_push_hostkey hk_local;
	ssh_key expected = NULL;
	char algs[256] = "";
	int r;

	*out = NULL;
	s->who = xasprintf("guest %s (%s@%s:%d)", t->node ? t->node : "?", t->user ? t->user : "?",
			   t->host ? t->host : "?", t->port);
	s->timeout_ms = t->timeout_ms;
	if (!hostkey)
		hostkey = &hk_local;
	memset(hostkey, 0, sizeof(*hostkey));
	if (!target_ok(t)) {
		r = fail(s, err, errlen, -EINVAL,
			 "incomplete SSH target (needs node, host, port 1-65535, user, key, "
			 "timeout > 0, and a pinned host key or a known_hosts file)");
		goto out;
	}
	r = hostkey_policy(s, t, &expected, algs, sizeof(algs), err, errlen);
	if (r < 0)
		goto out;
	s->ssh = ssh_new();
	if (!s->ssh)
		abort(); /* libssh's allocation failed: as xmalloc does */
	r = set_options(s, t, algs);
	if (r < 0) {
		fail(s, err, errlen, r, "libssh rejected an option: %s", ssh_get_error(s->ssh));
		goto out;
	}
	if (ssh_connect(s->ssh) != SSH_OK) {
		const char *msg = ssh_get_error(s->ssh);

		r = fail(s, err, errlen, connect_errno(msg), "cannot connect within %d ms: %s",
			 t->timeout_ms, msg);
		goto out;
	}
	r = verify_hostkey(s, t, expected, hostkey, err, errlen);
	if (r == 0)
		r = authenticate(s, t, err, errlen);
out:
	ssh_key_free(expected);
	if (r < 0)
		ssh_push_close(s);
	else
		*out = s;
	return r;
}

void ssh_push_close(struct ssh_push_session *s)
{
	if (!s)
		return;
	if (s->ssh) {
		ssh_disconnect(s->ssh);
		ssh_free(s->ssh);
	}
	free(s->who);
	free(s);
}

/* ---- channels ---- */

struct capture {
	char *out; /* stdout, NUL-terminated, at most OUTPUT_MAX */
	size_t len, cap;
	bool overflow;
	char tail[ERR_TAIL]; /* the end of stderr */
	size_t tail_len;
};

static void capture_out(struct capture *c, const char *data, size_t n)
{
	if (c->overflow || c->len + n > OUTPUT_MAX) {
		c->overflow = true;
		return;
	}
	if (c->len + n + 1 > c->cap) {
		c->cap = c->len + n + 1 > 2 * c->cap ? c->len + n + 1 : 2 * c->cap;
		c->out = xrealloc(c->out, c->cap);
	}
	memcpy(c->out + c->len, data, n);
	c->len += n;
	c->out[c->len] = '\0';
}

static void capture_err(struct capture *c, const char *data, size_t n)
{
	if (n >= sizeof(c->tail)) {
		data += n - sizeof(c->tail);
		n = sizeof(c->tail);
	}
	if (c->tail_len + n > sizeof(c->tail)) {
		size_t drop = c->tail_len + n - sizeof(c->tail);

		memmove(c->tail, c->tail + drop, c->tail_len - drop);
		c->tail_len -= drop;
	}
	memcpy(c->tail + c->tail_len, data, n);
	c->tail_len += n;
}

/* The stderr tail as one line, for a message. */
static const char *tail_line(struct capture *c)
{
	size_t n = c->tail_len;

	while (n && (c->tail[n - 1] == '\n' || c->tail[n - 1] == '\r'))
		n--;
	if (n == sizeof(c->tail))
		n--;
	c->tail[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (c->tail[i] == '\n' || c->tail[i] == '\r')
			c->tail[i] = ' ';
	return n ? c->tail : "(no output on stderr)";
}

static int open_exec(struct ssh_push_session *s, const char *command, ssh_channel *out, char *err,
		     size_t errlen)
{
	ssh_channel ch = ssh_channel_new(s->ssh);

	*out = NULL;
	if (!ch)
		return fail(s, err, errlen, -EIO, "cannot make a channel: %s", ssh_get_error(s->ssh));
	if (ssh_channel_open_session(ch) != SSH_OK) {
		fail(s, err, errlen, -EIO, "cannot open a session channel: %s", ssh_get_error(s->ssh));
		ssh_channel_free(ch);
		return -EIO;
	}
	if (ssh_channel_request_exec(ch, command) != SSH_OK) {
		fail(s, err, errlen, -EIO, "cannot run `%.80s`: %s", command, ssh_get_error(s->ssh));
		ssh_channel_free(ch);
		return -EIO;
	}
	*out = ch;
	return 0;
}

static void close_channel(ssh_channel ch)
{
	if (!ch)
		return;
	ssh_channel_close(ch);
	ssh_channel_free(ch);
}

/* The stdout and stderr that wait in libssh's buffers. */
static int take_output(ssh_channel ch, struct capture *c, bool *progress)
{
	char buf[16384];

	for (int is_err = 0; is_err < 2; is_err++) {
		int n = ssh_channel_read_nonblocking(ch, buf, sizeof(buf), is_err);

		if (n == SSH_ERROR)
			return -EIO;
		if (n > 0 && is_err)
			capture_err(c, buf, (size_t)n);
		else if (n > 0)
			capture_out(c, buf, (size_t)n);
		*progress |= n > 0;
	}
	return 0;
}

/*
 * Reads stdout and stderr until EOF, giving up after timeout_ms without
 * either.  One event loop for both streams: waiting on stdout alone would
 * stall while the remote fills the window with stderr.
 */
static int drain(struct ssh_push_session *s, ssh_channel ch, struct capture *c, const char *what,
		 char *err, size_t errlen)
{
	ssh_event ev = ssh_event_new();
	int64_t last = clock_mono_ns();
	int r = 0;

	if (!ev || ssh_event_add_session(ev, s->ssh) != SSH_OK) {
		ssh_event_free(ev);
		return fail(s, err, errlen, -ENOMEM, "libssh could not make an event");
	}
	for (;;) {
		bool progress = false;
		int64_t left_ms;

		if (take_output(ch, c, &progress) < 0) {
			r = fail(s, err, errlen, -EIO, "reading the output of `%.80s`: %s", what,
				 ssh_get_error(s->ssh));
			break;
		}
		if (progress) {
			last = clock_mono_ns();
			continue;
		}
		if (ssh_channel_is_eof(ch) || ssh_channel_is_closed(ch))
			break;
		left_ms = s->timeout_ms - (clock_mono_ns() - last) / 1000000;
		if (left_ms <= 0) {
			r = fail(s, err, errlen, -ETIMEDOUT,
				 "`%.80s` neither printed anything nor ended within %d ms", what,
				 s->timeout_ms);
			break;
		}
		/* SSH_AGAIN is a quiet slice: the clock above decides */
		if (ssh_event_dopoll(ev, (int)left_ms) == SSH_ERROR) {
			r = fail(s, err, errlen, -EIO, "waiting for `%.80s`: %s", what,
				 ssh_get_error(s->ssh));
			break;
		}
	}
	ssh_event_remove_session(ev, s->ssh);
	ssh_event_free(ev);
	return r;
}

int ssh_push_exec(struct ssh_push_session *s, const char *command, char **output, int *exit_status,
		  char *err, size_t errlen)
{
	struct capture c = { 0 };
	ssh_channel ch;
	int r, status_local;

	if (!exit_status)
		exit_status = &status_local;
	*exit_status = -1;
	if (output)
		*output = NULL;
	r = open_exec(s, command, &ch, err, errlen);
	if (r < 0)
		return r;
	ssh_channel_send_eof(ch); /* it gets no stdin */
	r = drain(s, ch, &c, command, err, errlen);
	if (r == 0) {
		*exit_status = ssh_channel_get_exit_status(ch);
		if (c.overflow)
			r = fail(s, err, errlen, -EFBIG, "`%.80s` printed more than %u bytes",
				 command, OUTPUT_MAX);
		else if (*exit_status != 0)
			fail(s, err, errlen, 0, "`%.80s` exited %d: %s", command, *exit_status,
			     tail_line(&c));
	}
	close_channel(ch);
	if (r == 0 && output)
		*output = c.out ? c.out : xstrdup("");
	else
		free(c.out);
	return r;
}

int ssh_push_start_detached(struct ssh_push_session *s, const char *remote_dir, const char *command,
			    const char *log_name, long *pid, char *err, size_t errlen)
{
	char *dir = ssh_push_quote(remote_dir);
	char *log = ssh_push_quote(log_name ? log_name : "/dev/null");
	char *out = NULL, *end;
	/* No descriptor of the session may stay open in the child, or the
	 * guest's sshd keeps the channel (and this call) waiting for it. */
	char *cmd = xasprintf("command -v setsid >/dev/null 2>&1 || "
			      "{ echo 'setsid: not found in PATH' >&2; exit 127; }; "
			      "cd %s && { setsid %s </dev/null >%s 2>&1 & echo $!; }",
			      dir, command, log);
	int status, r;
	long p;

	r = ssh_push_exec(s, cmd, &out, &status, err, errlen);
	if (r == 0 && status != 0)
		r = -EIO; /* err already says how it exited */
	if (r == 0) {
		errno = 0;
		p = strtol(out, &end, 10);
		if (errno || end == out || p <= 1 || end[strspn(end, " \r\n")] != '\0')
			r = fail(s, err, errlen, -EPROTO,
				 "starting `%.80s` in %s printed \"%.40s\", not a pid", command,
				 remote_dir, out);
		else if (pid)
			*pid = p;
	}
	free(out);
	free(cmd);
	free(log);
	free(dir);
	return r;
}

/* ---- the harness ---- */

struct push_sink {
	struct ssh_push_session *s;
	ssh_channel ch;
	char *buf;
	size_t used;
	uint64_t sent; /* bytes the channel took */
	int werr;      /* the channel failed (not a local file) */
};

static int channel_write_all(struct push_sink *k, const char *p, size_t len)
{
	while (len) {
		uint32_t chunk = len > (1u << 20) ? 1u << 20 : (uint32_t)len;
		/* blocks for window space at most the session timeout; a short
		 * count then means the guest stopped reading */
		int n = ssh_channel_write(k->ch, p, chunk);

		if (n == SSH_ERROR)
			return k->werr = -EPIPE;
		if (n == 0)
			return k->werr = -ETIMEDOUT;
		p += n;
		len -= (size_t)n;
		k->sent += (uint64_t)n;
	}
	return 0;
}

static int sink_flush(struct push_sink *k)
{
	int r = channel_write_all(k, k->buf, k->used);

	k->used = 0;
	return r;
}

/* Batches tar's 512-byte headers and file chunks into large channel writes. */
static int sink_write(void *opaque, const void *data, size_t len)
{
	struct push_sink *k = opaque;
	int r;

	if (k->used + len > SINK_BUF) {
		r = sink_flush(k);
		if (r < 0)
			return r;
	}
	if (len >= SINK_BUF)
		return channel_write_all(k, data, len);
	memcpy(k->buf + k->used, data, len);
	k->used += len;
	return 0;
}

/* Checks everything before the first byte goes out. */
static int check_files(struct ssh_push_session *s, const char *remote_dir,
		       const struct ssh_push_file *files, size_t n, char *err, size_t errlen)
{
	struct stat st;

	if (!remote_dir || !*remote_dir || strpbrk(remote_dir, "\n\r"))
		return fail(s, err, errlen, -EINVAL, "bad remote folder \"%s\"",
			    remote_dir ? remote_dir : "");
	for (size_t i = 0; i < n; i++) {
		const struct ssh_push_file *f = &files[i];
		const char *name = f->name_in_tar ? f->name_in_tar : "";
		int r = tar_writer_check_name(name);

		if (r < 0)
			return fail(s, err, errlen, r,
				    "harness member \"%s\" is not a relative path without "
				    "\"..\" that fits ustar (255 bytes)",
				    name);
		if (f->mode & ~07777u)
			return fail(s, err, errlen, -EINVAL, "harness member %s: mode %o", name,
				    f->mode);
		if (!f->local_path && !f->data && f->len)
			return fail(s, err, errlen, -EINVAL, "harness member %s has no content", name);
		if (f->local_path && stat(f->local_path, &st) < 0)
			return fail(s, err, errlen, -errno, "cannot read %s for %s: %s",
				    f->local_path, name, strerror(errno));
		if (f->local_path && !S_ISREG(st.st_mode))
			return fail(s, err, errlen, -EINVAL, "%s (for %s) is not a regular file",
				    f->local_path, name);
	}
	return 0;
}

/* Emits the parent folders of name that were not emitted yet. */
static int add_parents(struct tar_writer *tw, const char *name, char ***dirs, size_t *ndirs)
{
	for (const char *slash = strchr(name, '/'); slash; slash = strchr(slash + 1, '/')) {
		char *dir = xstrndup(name, (size_t)(slash - name));
		bool seen = false;
		int r;

		for (size_t i = 0; i < *ndirs && !seen; i++)
			seen = strcmp((*dirs)[i], dir) == 0;
		if (seen) {
			free(dir);
			continue;
		}
		r = tar_writer_add_dir(tw, dir, 0755);
		*dirs = xrealloc(*dirs, (*ndirs + 1) * sizeof(**dirs));
		(*dirs)[(*ndirs)++] = dir;
		if (r < 0)
			return r;
	}
	return 0;
}

static int write_tar(struct tar_writer *tw, const struct ssh_push_file *files, size_t n, size_t *failed)
{
	char **dirs = NULL;
	size_t ndirs = 0;
	int r = 0;

	for (size_t i = 0; i < n && r == 0; i++) {
		const struct ssh_push_file *f = &files[i];

		*failed = i;
		r = add_parents(tw, f->name_in_tar, &dirs, &ndirs);
		if (r == 0 && f->local_path)
			r = tar_writer_add_file(tw, f->name_in_tar, f->mode, f->local_path);
		else if (r == 0)
			r = tar_writer_add_data(tw, f->name_in_tar, f->mode, f->data, f->len);
	}
	if (r == 0)
		r = tar_writer_finish(tw);
	for (size_t i = 0; i < ndirs; i++)
		free(dirs[i]);
	free(dirs);
	return r;
}

/* After a failed write: what the guest's tar said, if it said anything. */
static int push_failed(struct push_sink *k, const char *cmd, int r, char *err, size_t errlen)
{
	unsigned long long sent = k->sent;
	struct ssh_push_session *s = k->s;
	struct capture c = { 0 };
	char ignore[8];

	if (r == -ETIMEDOUT)
		return fail(s, err, errlen, r,
			    "the guest stopped reading the harness after %llu bytes "
			    "(no window for %d ms)",
			    sent, s->timeout_ms);
	if (drain(s, k->ch, &c, cmd, ignore, sizeof(ignore)) == 0 && c.tail_len) {
		fail(s, err, errlen, -EIO, "`%.80s` stopped after %llu bytes, exit status %d: %s",
		     cmd, sent, ssh_channel_get_exit_status(k->ch), tail_line(&c));
	} else {
		fail(s, err, errlen, -EIO, "sending the harness failed after %llu bytes: %s", sent,
		     ssh_get_error(s->ssh));
	}
	free(c.out);
	return -EIO;
}

int ssh_push_harness(struct ssh_push_session *s, const char *remote_dir,
		     const struct ssh_push_file *files, size_t n, struct ssh_push_stats *stats,
		     char *err, size_t errlen)
{
	struct push_sink k = { .s = s };
	struct capture c = { 0 };
	struct tar_writer tw;
	char *dir = NULL, *cmd = NULL;
	size_t failed = 0;
	int64_t t0;
	int r, status;

	r = check_files(s, remote_dir, files, n, err, errlen);
	if (r < 0)
		return r;
	t0 = clock_mono_ns();
	dir = ssh_push_quote(remote_dir);
	cmd = xasprintf("mkdir -p %s && tar -x -f - -C %s", dir, dir);
	r = open_exec(s, cmd, &k.ch, err, errlen);
	if (r < 0)
		goto out;
	k.buf = xmalloc(SINK_BUF);
	tar_writer_init(&tw, sink_write, &k, time(NULL));
	r = write_tar(&tw, files, n, &failed);
	if (r == 0)
		r = sink_flush(&k);
	if (r < 0 && (k.werr || failed >= n)) {
		r = push_failed(&k, cmd, r, err, errlen);
		goto out;
	}
	if (r < 0) {
		fail(s, err, errlen, r, "cannot send %s as %s: %s",
		     files[failed].local_path ? files[failed].local_path : "(data)",
		     files[failed].name_in_tar, strerror(-r));
		goto out;
	}
	ssh_channel_send_eof(k.ch);
	r = drain(s, k.ch, &c, cmd, err, errlen);
	if (r < 0)
		goto out;
	status = ssh_channel_get_exit_status(k.ch);
	if (status != 0) {
		r = fail(s, err, errlen, -EIO, "`%.80s` exited %d: %s", cmd, status, tail_line(&c));
		goto out;
	}
	if (stats) {
		stats->bytes = tw.bytes;
		stats->seconds = (double)(clock_mono_ns() - t0) / NSEC_PER_SEC;
	}
out:
	close_channel(k.ch);
	free(c.out);
	free(k.buf);
	free(cmd);
	free(dir);
	return r;
}
