// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * SSH keys: hostd's own, and the guests' host keys (pinned or in a
 * known_hosts file per guest).  The private key is written to a temporary
 * file made with mode 0600 and then hard-linked into place, so that a crash
 * never leaves a half-written key and a second hostd starting at the same
 * moment keeps the first one's key instead of replacing it.
 */
#include "ssh_key.h"

#include <errno.h>
#include <fcntl.h>
#include <libssh/libssh.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "fileio.h"
#include "xalloc.h"

#define PUB_MAX 16384

static int sync_dir_of(const char *path)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	int fd, r = 0;

	if (slash)
		*slash = '\0';
	fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) < 0)
		r = -errno;
	if (fd >= 0)
		close(fd);
	free(dir);
	return r;
}

static int create_key(const char *path, char *err, size_t errlen)
{
	ssh_key key = NULL;
	char *b64 = NULL, *tmp = xasprintf("%s.XXXXXX", path);
	int fd = -1, r = 0;

	if (ssh_pki_generate(SSH_KEYTYPE_ED25519, 0, &key) != SSH_OK ||
	    ssh_pki_export_privkey_base64(key, NULL, NULL, NULL, &b64) != SSH_OK) {
		r = diag_set(err, errlen, -EIO, "libssh could not generate an ed25519 key for %s",
			     path);
		goto out;
	}
	fd = mkostemp(tmp, O_CLOEXEC); /* mode 0600 */
	if (fd < 0) {
		r = diag_set(err, errlen, -errno, "cannot create %s: %s", tmp, strerror(errno));
		goto out;
	}
	r = fileio_write_all(fd, b64, strlen(b64));
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (r == 0 && link(tmp, path) < 0 && errno != EEXIST)
		r = -errno;
	if (r == 0)
		r = sync_dir_of(path);
	if (r < 0)
		diag_set(err, errlen, r, "cannot write the private key %s: %s", path, strerror(-r));
	unlink(tmp);
out:
	if (fd >= 0)
		close(fd);
	if (b64) {
		/* the key material must not linger in freed memory */
		explicit_bzero(b64, strlen(b64));
		ssh_string_free_char(b64);
	}
	ssh_key_free(key);
	free(tmp);
	return r;
}

static int load_key(const char *path, ssh_key *key, char *err, size_t errlen)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return diag_set(err, errlen, -errno, "cannot read the private key %s: %s", path,
				strerror(errno));
	if (!S_ISREG(st.st_mode))
		return diag_set(err, errlen, -EINVAL, "%s is not a regular file", path);
	if (st.st_mode & 077)
		return diag_set(err, errlen, -EPERM,
				"%s has mode %04o: others may read hostd's private key; "
				"run chmod 600 %s",
				path, (unsigned)(st.st_mode & 07777), path);
	if (st.st_uid != geteuid())
		return diag_set(err, errlen, -EPERM, "%s belongs to uid %u, not to hostd's uid %u",
				path, (unsigned)st.st_uid, (unsigned)geteuid());
	if (ssh_pki_import_privkey_file(path, NULL, NULL, NULL, key) != SSH_OK)
		return diag_set(err, errlen, -EINVAL,
				"%s is not a private key libssh can read without a passphrase; "
				"move it away and hostd makes a new one",
				path);
	return 0;
}

static char *public_line_of(ssh_key key)
{
	char host[256] = "localhost", *b64 = NULL, *line;

	if (ssh_pki_export_pubkey_base64(key, &b64) != SSH_OK)
		return NULL;
	if (gethostname(host, sizeof(host)) < 0)
		strcpy(host, "localhost");
	host[sizeof(host) - 1] = '\0';
	line = xasprintf("%s %s lockstep@%s", ssh_key_type_to_char(ssh_key_type(key)), b64, host);
	ssh_string_free_char(b64);
	return line;
}

/* Rewrites the .pub file only when it says something else. */
static int write_public(const char *path, const char *line, char *err, size_t errlen)
{
	char *want = xasprintf("%s\n", line), *have = NULL;
	size_t len = 0;
	int r = 0;

	if (fileio_read_all(path, PUB_MAX, &have, &len) < 0 || strcmp(have, want) != 0) {
		r = fileio_write_atomic(path, want, strlen(want));
		if (r < 0)
			diag_set(err, errlen, r, "cannot write the public key %s: %s", path,
				 strerror(-r));
	}
	free(have);
	free(want);
	return r;
}

int ssh_key_ensure(const char *state_dir, char **private_path, char **public_line, char *err,
		   size_t errlen)
{
	char *dir = xasprintf("%s/ssh", state_dir);
	char *priv = xasprintf("%s/id_ed25519", dir);
	char *pub = xasprintf("%s.pub", priv);
	char *line = NULL;
	ssh_key key = NULL;
	int r;

	r = fileio_mkdir_p(dir, 0700);
	if (r < 0) {
		diag_set(err, errlen, r, "cannot create the folder %s: %s", dir, strerror(-r));
		goto out;
	}
	if (access(priv, F_OK) < 0 && errno == ENOENT) {
		r = create_key(priv, err, errlen);
		if (r < 0)
			goto out;
	}
	r = load_key(priv, &key, err, errlen);
	if (r < 0)
		goto out;
	line = public_line_of(key);
	if (!line) {
		r = diag_set(err, errlen, -EIO, "libssh could not export the public half of %s", priv);
		goto out;
	}
	r = write_public(pub, line, err, errlen);
out:
	ssh_key_free(key);
	if (r == 0) {
		*private_path = priv;
		*public_line = line;
	} else {
		free(priv);
		free(line);
	}
	free(pub);
	free(dir);
	return r;
}

/* ---- guests' host keys ---- */

#define KNOWN_HOSTS_MAX (1 << 20)

int ssh_key_parse_public(const char *line, ssh_key *out)
{
	const char *p = line, *type, *b64;
	size_t type_len, b64_len;
	char *tname, *bname;
	enum ssh_keytypes_e kt;
	int r = -EINVAL;

	p += strspn(p, " \t");
	type = p;
	type_len = strcspn(p, " \t\r\n");
	p += type_len;
	p += strspn(p, " \t");
	b64 = p;
	b64_len = strcspn(p, " \t\r\n");
	if (type_len == 0 || b64_len == 0 || type_len > 64 || b64_len > 16384)
		return -EINVAL;
	tname = xstrndup(type, type_len);
	bname = xstrndup(b64, b64_len);
	kt = ssh_key_type_from_name(tname);
	if (kt != SSH_KEYTYPE_UNKNOWN && ssh_pki_import_pubkey_base64(bname, kt, out) == SSH_OK)
		r = 0;
	free(tname);
	free(bname);
	return r;
}

#define CONSOLE_MARK "LOCKSTEP-HOSTKEY "

int ssh_key_from_console(const char *text, size_t len, char **line)
{
	const char *end = text + len, *p = text, *found = NULL;
	size_t found_len = 0;

	*line = NULL;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *stop = nl ? nl : end;
		const char *mark = memmem(p, (size_t)(stop - p), CONSOLE_MARK, strlen(CONSOLE_MARK));

		if (mark && nl) { /* a line still being written does not count */
			const char *k = mark + strlen(CONSOLE_MARK);
			size_t n = (size_t)(stop - k);
			char *copy;
			ssh_key key = NULL;

			while (n && (k[n - 1] == '\r' || k[n - 1] == ' '))
				n--;
			copy = xstrndup(k, n);
			if (ssh_key_parse_public(copy, &key) == 0) {
				found = k;
				found_len = n;
			}
			ssh_key_free(key);
			free(copy);
		}
		p = stop + 1;
	}
	if (!found)
		return -ENOENT;
	*line = xstrndup(found, found_len);
	return 0;
}

void ssh_key_fingerprint(const ssh_key key, char *out, size_t n)
{
	unsigned char *hash = NULL;
	size_t hlen = 0;
	char *fp;

	snprintf(out, n, "(no fingerprint)");
	if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &hlen) < 0)
		return;
	fp = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hlen);
	if (fp)
		snprintf(out, n, "%s", fp);
	ssh_string_free_char(fp);
	ssh_clean_pubkey_hash(&hash);
}

const char *ssh_key_algorithms(const ssh_key key)
{
	switch (ssh_key_type(key)) {
	case SSH_KEYTYPE_RSA:
		/* the key type is ssh-rsa; SHA-1 signatures are not offered */
		return "rsa-sha2-512,rsa-sha2-256";
	default: return ssh_key_type_to_char(ssh_key_type(key));
	}
}

/* A node name must be a literal known_hosts host pattern. */
static int node_ok(const char *node)
{
	if (!node || !*node)
		return 0;
	for (const unsigned char *c = (const unsigned char *)node; *c; c++)
		if (*c <= ' ' || *c == 0x7f || strchr(",#*?![]|@", *c))
			return 0;
	return 1;
}

static int host_field_has(const char *field, size_t len, const char *node)
{
	size_t nlen = strlen(node);

	while (len) {
		size_t n = 0;

		while (n < len && field[n] != ',')
			n++;
		if (n == nlen && memcmp(field, node, n) == 0)
			return 1;
		field += n;
		len -= n;
		if (len) {
			field++;
			len--;
		}
	}
	return 0;
}

struct kh_scan {
	const char *node;
	ssh_key key; /* the key to find, or NULL */
	int lines;   /* lines for node */
	int matched;
	int first_line;
	char first_fp[96];
	char algs[256];
};

static void kh_add_alg(struct kh_scan *sc, const char *alg)
{
	size_t used = strlen(sc->algs);

	if (strstr(sc->algs, alg))
		return;
	snprintf(sc->algs + used, sizeof(sc->algs) - used, "%s%s", used ? "," : "", alg);
}

static int kh_line(struct kh_scan *sc, const char *path, int lineno, const char *line, char *err,
		   size_t errlen)
{
	const char *p = line + strspn(line, " \t");
	size_t hosts_len = strcspn(p, " \t");
	ssh_key k = NULL;

	/* markers (@revoked, @cert-authority) and hashed names are OpenSSH's */
	if (!*p || *p == '#' || *p == '@' || !host_field_has(p, hosts_len, sc->node))
		return 0;
	if (ssh_key_parse_public(p + hosts_len, &k) < 0)
		return diag_set(err, errlen, -EINVAL,
				"%s:%d: the line for %s is not \"%s TYPE BASE64\"; fix or delete it",
				path, lineno, sc->node, sc->node);
	if (sc->lines++ == 0) {
		sc->first_line = lineno;
		ssh_key_fingerprint(k, sc->first_fp, sizeof(sc->first_fp));
	}
	kh_add_alg(sc, ssh_key_algorithms(k));
	if (sc->key && ssh_key_cmp(k, sc->key, SSH_KEY_CMP_PUBLIC) == 0)
		sc->matched = 1;
	ssh_key_free(k);
	return 0;
}

static int kh_scan(const char *path, struct kh_scan *sc, char *err, size_t errlen)
{
	char *buf = NULL, *line, *nl;
	size_t len = 0;
	int lineno = 0, r;

	if (!node_ok(sc->node))
		return diag_set(err, errlen, -EINVAL,
				"guest name \"%s\" cannot name a known_hosts line (no spaces, "
				"commas or wildcards)",
				sc->node ? sc->node : "");
	r = fileio_read_all(path, KNOWN_HOSTS_MAX, &buf, &len);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return diag_set(err, errlen, r, "cannot read %s: %s", path, strerror(-r));
	for (line = buf; line && r == 0; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		r = kh_line(sc, path, ++lineno, line, err, errlen);
	}
	free(buf);
	return r;
}

int ssh_key_known_hosts_check(const char *path, const char *node, const ssh_key key, char *err,
			      size_t errlen)
{
	struct kh_scan sc = { .node = node, .key = key };
	char fp[96];
	int r = kh_scan(path, &sc, err, errlen);

	if (r < 0)
		return r;
	if (sc.matched)
		return 0;
	if (sc.lines == 0)
		return 1;
	ssh_key_fingerprint(key, fp, sizeof(fp));
	return diag_set(err, errlen, -EBADMSG,
			"HOST KEY CHANGED: %s:%d records %s for %s, but the guest offered %s; "
			"refusing to connect.  If the guest was rebuilt on purpose, delete "
			"the line(s) for %s from %s",
			path, sc.first_line, sc.first_fp, node, fp, node, path);
}

int ssh_key_known_hosts_algorithms(const char *path, const char *node, char *algs, size_t n,
				   char *err, size_t errlen)
{
	struct kh_scan sc = { .node = node };
	int r = kh_scan(path, &sc, err, errlen);

	if (r == 0)
		snprintf(algs, n, "%s", sc.algs);
	return r;
}

int ssh_key_known_hosts_add(const char *path, const char *node, const ssh_key key, char *err,
			    size_t errlen)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/'), *b64 = NULL, *line = NULL;
	int fd = -1, r = 0;

	if (!node_ok(node)) {
		r = diag_set(err, errlen, -EINVAL,
			     "guest name \"%s\" cannot name a known_hosts line", node ? node : "");
		goto out;
	}
	if (slash && slash != dir) {
		*slash = '\0';
		r = fileio_mkdir_p(dir, 0700);
		if (r < 0) {
			diag_set(err, errlen, r, "cannot create the folder %s: %s", dir, strerror(-r));
			goto out;
		}
	}
	if (ssh_pki_export_pubkey_base64(key, &b64) != SSH_OK) {
		r = diag_set(err, errlen, -EIO, "libssh could not export %s's host key", node);
		goto out;
	}
	line = xasprintf("%s %s %s\n", node, ssh_key_type_to_char(ssh_key_type(key)), b64);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		r = -errno;
	if (r == 0)
		r = fileio_append_sync(fd, line, strlen(line));
	if (r == 0)
		r = sync_dir_of(path);
	if (r < 0)
		diag_set(err, errlen, r, "cannot append to %s: %s", path, strerror(-r));
out:
	if (fd >= 0)
		close(fd);
	ssh_string_free_char(b64);
	free(line);
	free(dir);
	return r;
}
