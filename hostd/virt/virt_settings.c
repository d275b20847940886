// SPDX-License-Identifier: GPL-2.0-or-later
#include "virt_settings.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "config_files.h"
#include "fileio.h"
#include "virt_conn.h"
#include "virt_xml.h"
#include "xalloc.h"

#define VAR_PREFIX "GUEST_VAR_"
#define VARS_MAX 64

const char *const virt_settings_keys[] = {
	"LIBVIRT_URI",
	"GUEST_ACCEL",
	"GUEST_DOMAINS",
	"GUESTS",
	"MMTESTS_VMS",
	"GUEST_RESTORE_STATE",
	"GUEST_SHUTDOWN_TIMEOUT",
	"GUEST_READY",
	"GUEST_BOOT_TIMEOUT",
	"GUEST_ADDRESSES",
	"GUEST_SSH_PORT",
	"GUEST_TEMPLATE",
	"GUEST_NAME_PREFIX",
	"GUEST_VCPUS",
	"GUEST_MEMORY_MIB",
	"GUEST_VCPU_PINNING",
	"GUEST_RUNTIME_DIR",
	"GUEST_SSH_PORT_BASE",
	"GUEST_KERNEL",
	"GUEST_INITRD",
	"GUEST_CMDLINE_EXTRA",
	NULL,
};
const char *const virt_settings_prefixes[] = { VAR_PREFIX, NULL };

/* Placeholders every guest gets from us; the rest come from settings. */
static const char *const own_vars[] = {
	"NAME",	       "VCPUS",	  "MEMORY_MIB",	 "SSH_PORT", "CHANNEL_PATH",
	"CONSOLE_LOG", "AUTHKEY", "DOMAIN_TYPE", NULL,
};

static const char *get_or(const struct config *c, const char *key, const char *def)
{
	const char *v = config_get(c, key);
	return v ? v : def;
}

/* libvirt allows more; these are the names that are also safe as node
 * names, file names and socket names. */
static bool name_valid(const char *s, size_t max)
{
	size_t n = strlen(s);
	if (!n || n > max || s[0] == '.' || s[0] == '-')
		return false;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

static int split_words(const char *s, char ***out, size_t *n)
{
	char **v = NULL;
	size_t k = 0;
	for (const char *p = s;;) {
		p += strspn(p, " \t\n");
		if (!*p)
			break;
		size_t len = strcspn(p, " \t\n");
		if (k >= 4096)
			break;
		v = xrealloc(v, (k + 1) * sizeof(*v));
		v[k++] = xstrndup(p, len);
		p += len;
	}
	*out = v;
	*n = k;
	return 0;
}

static void free_words(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static int load_names(const struct config *c, const char *path, unsigned guest_count,
		      struct virt_settings *s, struct config_diag *d)
{
	/* MMTests calls the list MMTESTS_VMS; GUESTS and GUEST_DOMAINS are ours */
	static const char *const lists[] = { "MMTESTS_VMS", "GUESTS", "GUEST_DOMAINS", NULL };
	const char *key = config_first_set(c, lists);
	const char *domains = key ? config_get(c, key) : NULL;
	if (domains) {
		s->origin = VIRT_ORIGIN_EXISTING;
		split_words(domains, &s->names, &s->count);
		if (s->count == 0)
			return config_diag_at(d, c, key, path,
					      "%s is empty: name one domain per guest", key);
		if (guest_count != VIRT_COUNT_UNSET && s->count != guest_count)
			return config_diag_at(d, c, key, path,
					      "%s names %zu domain%s but GUEST_COUNT is %u: "
					      "name one domain per guest, or leave GUEST_COUNT out",
					      key, s->count, s->count == 1 ? "" : "s", guest_count);
		for (size_t i = 0; i < s->count; i++) {
			if (!name_valid(s->names[i], VIRT_NAME_MAX))
				return config_diag_at(d, c, key, path,
						      "%s: \"%s\" is not a name hostd uses: 1 to %d "
						      "of A-Z a-z 0-9 . _ -, not starting with . or -",
						      key, s->names[i], VIRT_NAME_MAX);
			for (size_t j = 0; j < i; j++)
				if (strcmp(s->names[i], s->names[j]) == 0)
					return config_diag_at(d, c, key, path, "%s names \"%s\" twice",
							      key, s->names[i]);
		}
		return 0;
	}
	if (guest_count == VIRT_COUNT_UNSET)
		guest_count = 1;
	const char *prefix = get_or(c, "GUEST_NAME_PREFIX", "lockstep-guest");
	if (!name_valid(prefix, VIRT_NAME_MAX - 5))
		return config_diag_at(d, c, "GUEST_NAME_PREFIX", path,
				      "GUEST_NAME_PREFIX=\"%s\": 1 to %d of A-Z a-z 0-9 . _ -, not starting "
				      "with . or -",
				      prefix, VIRT_NAME_MAX - 5);
	s->origin = VIRT_ORIGIN_TEMPLATE;
	s->count = guest_count;
	s->names = xcalloc(guest_count ? guest_count : 1, sizeof(*s->names));
	for (size_t i = 0; i < s->count; i++)
		s->names[i] = xasprintf("%s%zu", prefix, i + 1);
	return 0;
}

/* Digits at *p (at most 4); advances *p. */
static int cpu_number(const char **p, const char *end, unsigned *v)
{
	const char *q = *p;
	*v = 0;
	while (q < end && *q >= '0' && *q <= '9' && q - *p < 4)
		*v = *v * 10 + (unsigned)(*q++ - '0');
	if (q == *p || (q < end && *q >= '0' && *q <= '9'))
		return -EINVAL;
	*p = q;
	return 0;
}

/* "N" or "N-M" in p[0..n): a libvirt cpuset in out. */
static int parse_cpus(const char *p, size_t n, char *out, size_t outlen)
{
	const char *end = p + n;
	unsigned a, b;
	if (cpu_number(&p, end, &a) < 0)
		return -EINVAL;
	if (p == end) {
		snprintf(out, outlen, "%u", a);
		return 0;
	}
	if (*p++ != '-' || cpu_number(&p, end, &b) < 0 || p != end || b < a)
		return -EINVAL;
	snprintf(out, outlen, "%u-%u", a, b);
	return 0;
}

int virt_settings_cputune(const char *spec, unsigned vcpus, char **block, char *why, size_t len)
{
	size_t cap = 32 + (size_t)vcpus * 64, at;
	char *b = xmalloc(cap);
	unsigned v = 0;
	const char *p = spec;

	at = (size_t)snprintf(b, cap, "<cputune>");
	for (;;) {
		size_t n = strcspn(p, ",");
		char cpus[32];
		if (parse_cpus(p, n, cpus, sizeof(cpus)) < 0) {
			snprintf(why, len, "\"%.*s\" is neither a CPU number nor a range a-b",
				 (int)(n < 32 ? n : 32), p);
			goto fail;
		}
		if (v == vcpus) {
			snprintf(why, len, "\"%s\" pins more than the guest's %u vCPU%s", spec,
				 vcpus, vcpus == 1 ? "" : "s");
			goto fail;
		}
		at += (size_t)snprintf(b + at, cap - at, "<vcpupin vcpu='%u' cpuset='%s'/>", v++, cpus);
		if (!p[n])
			break;
		p += n + 1;
	}
	if (v != vcpus) {
		snprintf(why, len, "\"%s\" pins %u vCPU%s; the guest has %u", spec, v,
			 v == 1 ? "" : "s", vcpus);
		goto fail;
	}
	snprintf(b + at, cap - at, "</cputune>");
	*block = b;
	return 0;
fail:
	free(b);
	return -EINVAL;
}

static int load_pinning(const struct config *c, const char *path, struct virt_settings *s,
			struct config_diag *d)
{
	const char *pin = config_get(c, "GUEST_VCPU_PINNING");
	char **words, why[256];
	size_t n;
	int r = 0;

	if (!pin)
		return 0;
	split_words(pin, &words, &n);
	if (n != s->count) {
		r = config_diag_at(d, c, "GUEST_VCPU_PINNING", path,
				   "GUEST_VCPU_PINNING has %zu entr%s but there are %zu guests: one per guest, "
				   "its vCPUs' host CPUs separated by commas (\"0,1 2,3\")",
				   n, n == 1 ? "y" : "ies", s->count);
		goto out;
	}
	s->cputune = xcalloc(n ? n : 1, sizeof(*s->cputune));
	for (size_t i = 0; i < n; i++) {
		if (virt_settings_cputune(words[i], s->vcpus, &s->cputune[i], why, sizeof(why)) < 0) {
			r = config_diag_at(d, c, "GUEST_VCPU_PINNING", path,
					   "GUEST_VCPU_PINNING, guest %zu: %s", i + 1, why);
			goto out;
		}
	}
out:
	free_words(words, n);
	return r;
}

static void add_var(struct virt_settings *s, const char *name, const char *value)
{
	s->vars = xrealloc(s->vars, (s->nvars + 1) * sizeof(*s->vars));
	s->vars[s->nvars].name = xstrdup(name);
	s->vars[s->nvars].value = xstrdup(value);
	s->nvars++;
}

static bool is_own(const char *name)
{
	for (size_t i = 0; own_vars[i]; i++)
		if (strcmp(own_vars[i], name) == 0)
			return true;
	return false;
}

static int load_vars(const struct config *c, const char *path, struct virt_settings *s,
		     struct config_diag *d)
{
	const char **names;
	size_t n = config_names(c, &names);

	add_var(s, "KERNEL", get_or(c, "GUEST_KERNEL", VIRT_DEMO_DIR "/vmlinux"));
	add_var(s, "INITRD", get_or(c, "GUEST_INITRD", VIRT_DEMO_DIR "/initrd.img"));
	add_var(s, "CMDLINE_EXTRA", get_or(c, "GUEST_CMDLINE_EXTRA", ""));
	for (size_t i = 0; i < n; i++) {
		if (strncmp(names[i], VAR_PREFIX, strlen(VAR_PREFIX)) != 0)
			continue;
		const char *var = names[i] + strlen(VAR_PREFIX);
		if (!*var || is_own(var) || strcmp(var, "KERNEL") == 0 ||
		    strcmp(var, "INITRD") == 0 || strcmp(var, "CMDLINE_EXTRA") == 0)
			return config_diag_at(d, c, names[i], path,
					      "%s: @%s@ is filled by hostd%s; choose another name",
					      names[i], var,
					      *var && !is_own(var) ? " from its own key" : "");
		if (s->nvars >= VARS_MAX)
			return config_diag_at(d, c, names[i], path, "more than %d GUEST_VAR_ names",
					      VARS_MAX);
		add_var(s, var, config_get(c, names[i]));
	}
	return 0;
}

/* Reads the template and fills it once with stand-ins: every error a
 * template can have shows up now, not when the first guest starts. */
static int check_template(const struct config *c, const char *path, struct virt_settings *s,
			  struct config_diag *d)
{
	const char *key = config_get(c, "GUEST_TEMPLATE") ? "GUEST_TEMPLATE" : NULL;
	size_t n = s->nvars + 8, len;
	struct virt_template_var *v = xcalloc(n, sizeof(*v));
	bool *used = xcalloc(n, sizeof(*used));
	char err[512], *xml = NULL, *chan = NULL;
	int r;

	/* one a config names is a user's file: under the service it comes
	 * with the configs (config_files.h), never from its path */
	if (key)
		r = config_files_read(s->template_path, &s->template_text, &len);
	else
		r = fileio_read_all(s->template_path, VIRT_TEMPLATE_MAX, &s->template_text, &len);
	if (r == 0 && len > VIRT_TEMPLATE_MAX) {
		free(s->template_text);
		s->template_text = NULL;
		r = -EFBIG;
	}
	if (r < 0) {
		r = config_diag_at(d, c, key, path, "GUEST_TEMPLATE=%s cannot be read: %s",
				   s->template_path,
				   r == -EFBIG ? "larger than 1 MiB"
				   : r == -ENOENT && key && config_files_in_use()
					   ? "not among the files hostctl submit sent"
					   : strerror(-r));
		goto out;
	}
	for (size_t i = 0; own_vars[i]; i++)
		v[i] = (struct virt_template_var){ own_vars[i], "1" };
	memcpy(v + 8, s->vars, s->nvars * sizeof(*v));
	r = virt_template_fill(s->template_text, s->template_path, v, n, used, &xml, err, sizeof(err));
	if (r < 0) {
		r = config_diag_at(d, c, key, path, "GUEST_TEMPLATE: %s", err);
		goto out;
	}
	if (!used[0]) {
		r = config_diag_at(d, c, key, path,
				   "GUEST_TEMPLATE=%s has no @NAME@: every guest needs a name of its own",
				   s->template_path);
		goto out;
	}
	r = virt_xml_channel_path(xml, VIRT_AGENT_CHANNEL, &chan);
	if (r == -EINVAL || r == -ENOENT) {
		r = config_diag_at(d, c, key, path,
				   r == -EINVAL
					   ? "GUEST_TEMPLATE=%s is not well-formed XML once filled"
					   : "GUEST_TEMPLATE=%s has no <channel type='unix'> with "
					     "<target type='virtio' name='" VIRT_AGENT_CHANNEL "'/>",
				   s->template_path);
		goto out;
	}
	r = 0;
	s->template_has_ssh_port = used[3];
	for (size_t i = 0; i < s->nvars; i++) {
		const char *name = s->vars[i].name;
		struct stat st;
		bool is_file = strcmp(name, "KERNEL") == 0 || strcmp(name, "INITRD") == 0;
		if (is_file && used[8 + i] && stat(s->vars[i].value, &st) < 0) {
			r = config_diag_at(d, c,
					   strcmp(name, "KERNEL") == 0 ? "GUEST_KERNEL" : "GUEST_INITRD",
					   path,
					   "GUEST_%s=%s: %s (the demo guest is built by "
					   "vm-templates/build-demo-guest)",
					   name, s->vars[i].value, strerror(errno));
			goto out;
		}
	}
out:
	free(chan);
	free(xml);
	free(used);
	free(v);
	return r;
}

static int load_template(const struct config *c, const char *path, const char *default_template,
			 struct virt_settings *s, struct config_diag *d)
{
	int64_t vcpus = 1, mem = 256, base = 22200;
	const char *t = get_or(c, "GUEST_TEMPLATE", default_template);

	if (!t || !*t)
		return config_diag_at(d, c, NULL, path,
				      "set GUEST_TEMPLATE (a domain XML template) or GUEST_DOMAINS "
				      "(existing domains) for GUEST_KIND=libvirt");
	/* a relative template is next to the config that names it, as a lab
	 * keeps them together, wherever hostd is started from */
	const char *slash = strrchr(path, '/');
	if (t[0] != '/' && slash && t != default_template)
		s->template_path = xasprintf("%.*s/%s", (int)(slash - path), path, t);
	else
		s->template_path = xstrdup(t);
	if (config_get_int(c, "GUEST_VCPUS", 1, VIRT_VCPUS_MAX, &vcpus, d) < 0 ||
	    config_get_int(c, "GUEST_MEMORY_MIB", 16, 1 << 24, &mem, d) < 0 ||
	    config_get_int(c, "GUEST_SSH_PORT_BASE", 1, 65535 - (int64_t)s->count, &base, d) < 0)
		return -EINVAL;
	s->vcpus = (unsigned)vcpus;
	s->memory_mib = (unsigned)mem;
	s->ssh_port_base = (int)base;
	s->runtime_dir = xstrdup(get_or(c, "GUEST_RUNTIME_DIR", "/run/lockstep"));
	if (s->runtime_dir[0] != '/')
		return config_diag_at(d, c, "GUEST_RUNTIME_DIR", path,
				      "GUEST_RUNTIME_DIR=%s is not an absolute path", s->runtime_dir);
	for (size_t i = 0; i < s->count; i++) {
		char *p = virt_settings_channel_path(s, i);
		size_t n = strlen(p);
		free(p);
		if (n >= sizeof(((struct sockaddr_un *)0)->sun_path))
			return config_diag_at(d, c, "GUEST_RUNTIME_DIR", path,
					      "GUEST_RUNTIME_DIR=%s makes channel socket paths of %zu bytes; "
					      "a unix socket path has at most %zu: choose a shorter folder",
					      s->runtime_dir, n,
					      sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
	}
	if (load_pinning(c, path, s, d) < 0 || load_vars(c, path, s, d) < 0)
		return -EINVAL;
	return check_template(c, path, s, d);
}

int virt_settings_load(const struct config *c, const char *path, unsigned guest_count,
		       const char *default_template, struct virt_settings *s, struct config_diag *d)
{
	static const char *const accels[] = { "auto", "kvm", "tcg", NULL };
	static const char *const readies[] = { "console", "none", NULL };
	int accel = VIRT_ACCEL_AUTO, ready, r;
	int64_t ssh_port = 22;
	char why[384];

	memset(s, 0, sizeof(*s));
	/* as virsh: LIBVIRT_DEFAULT_URI when h.conf names no connection */
	const char *env_uri = getenv("LIBVIRT_DEFAULT_URI");
	s->uri = xstrdup(get_or(c, "LIBVIRT_URI", env_uri && *env_uri ? env_uri : VIRT_URI_DEFAULT));
	s->restore_state = true;
	s->shutdown_timeout_s = 60;
	s->boot_timeout_s = 120;
	if (config_get_choice(c, "GUEST_ACCEL", accels, &accel, d) < 0 ||
	    load_names(c, path, guest_count, s, d) < 0)
		return -EINVAL;
	s->accel = (enum virt_accel_mode)accel;
	ready = s->origin == VIRT_ORIGIN_TEMPLATE ? 0 : 1;
	if (config_get_choice(c, "GUEST_READY", readies, &ready, d) < 0 ||
	    config_get_bool(c, "GUEST_RESTORE_STATE", &s->restore_state, d) < 0 ||
	    config_get_seconds(c, "GUEST_SHUTDOWN_TIMEOUT", 0, 3600, &s->shutdown_timeout_s, d) < 0 ||
	    config_get_seconds(c, "GUEST_BOOT_TIMEOUT", 0.1, 86400, &s->boot_timeout_s, d) < 0 ||
	    config_get_int(c, "GUEST_SSH_PORT", 1, 65535, &ssh_port, d) < 0)
		return -EINVAL;
	s->wait_console = ready == 0;
	s->ssh_port = (int)ssh_port;
	const char *addrs = config_get(c, "GUEST_ADDRESSES");
	if (addrs && addrs[strspn(addrs, " \t\n")]) { /* empty: ask libvirt */
		r = virt_addr_parse_list(addrs, s->count, s->ssh_port, &s->addrs, why, sizeof(why));
		if (r < 0)
			return config_diag_at(d, c, "GUEST_ADDRESSES", path, "GUEST_ADDRESSES %s", why);
	}
	if (s->origin == VIRT_ORIGIN_TEMPLATE)
		return load_template(c, path, default_template, s, d);
	return 0;
}

void virt_settings_fini(struct virt_settings *s)
{
	free(s->uri);
	free_words(s->names, s->count);
	free(s->addrs);
	free(s->template_path);
	free(s->template_text);
	if (s->cputune)
		free_words(s->cputune, s->count);
	free(s->runtime_dir);
	for (size_t i = 0; i < s->nvars; i++) {
		free((char *)s->vars[i].name);
		free((char *)s->vars[i].value);
	}
	free(s->vars);
	memset(s, 0, sizeof(*s));
}

char *virt_settings_channel_path(const struct virt_settings *s, size_t i)
{
	return xasprintf("%s/%s.agent.sock", s->runtime_dir, s->names[i]);
}

char *virt_settings_console_path(const struct virt_settings *s, size_t i)
{
	return xasprintf("%s/%s.console.log", s->runtime_dir, s->names[i]);
}
