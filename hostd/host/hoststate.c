// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cpufreq and transparent huge page state saved before a run changes it,
 * and always put back.
 *
 * The state file is text, one knob a line, paths relative to the sysfs root:
 *
 *   lockstep-hoststate 1
 *   owner <pid> <boot_id>
 *   governor sys/devices/system/cpu/cpu0/cpufreq/scaling_governor powersave
 *   epp sys/devices/system/cpu/cpu0/cpufreq/energy_performance_preference balance_power
 *   no_turbo sys/devices/system/cpu/intel_pstate/no_turbo 0
 *   thp_defrag sys/kernel/mm/transparent_hugepage/defrag madvise
 *
 * It is read back by a later hostd, so it is checked like any input: paths
 * must lie under sys/devices/system/cpu/ and name the knob of their kind
 * (THP's are the two files of sys/kernel/mm/transparent_hugepage/),
 * values are plain words.
 */
#include "hoststate.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "fileio.h"
#include "log.h"
#include "xalloc.h"

#define HS_MAGIC "lockstep-hoststate 1"
#define HS_CPU_DIR "sys/devices/system/cpu"
#define HS_THP_REL "sys/kernel/mm/transparent_hugepage/enabled"
#define HS_THP_DEFRAG_REL "sys/kernel/mm/transparent_hugepage/defrag"
#define HS_CPUS_MAX 8192
#define HS_FILE_MAX (4 << 20)

/* Restored in this order: switching the governor resets EPP in the active
 * pstate drivers, and they refuse an EPP write (EBUSY) while the governor
 * is performance, so EPP goes back last. */
enum hs_kind { HS_GOVERNOR, HS_NO_TURBO, HS_EPP, HS_THP, HS_THP_DEFRAG, HS_NKINDS };

static const char *const hs_kind_name[HS_NKINDS] = { "governor", "no_turbo", "epp", "thp",
						     "thp_defrag" };
/* The file each kind lives in (the last path component). */
static const char *const hs_kind_file[HS_NKINDS] = { "scaling_governor", "no_turbo",
						     "energy_performance_preference", "enabled",
						     "defrag" };

struct hs_knob {
	enum hs_kind kind;
	char *rel;			/* under the sysfs root */
	char old[HOSTSTATE_VALUE_MAX];	/* saved */
	char want[HOSTSTATE_VALUE_MAX]; /* "" when not set by us */
};

struct hoststate {
	char *root;
	char *state_path;
	struct hs_knob *k;
	unsigned n, cap;
};

/* '+': THP's defrag offers "defer+madvise" */
static bool hs_word_valid(const char *s)
{
	if (!*s || strlen(s) >= HOSTSTATE_VALUE_MAX)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '+')
			return false;
	return true;
}

static char *hs_path(const struct hoststate *h, const char *rel)
{
	return xasprintf("%s/%s", h->root, rel);
}

/* A sysfs value: one word and a newline. */
static int hs_read(const struct hoststate *h, const char *rel, char *out)
{
	char *path = hs_path(h, rel);
	char buf[HOSTSTATE_VALUE_MAX + 1];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	free(path);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	/* "always [madvise] never": the choice in effect is the bracketed one */
	char *open_br = strchr(buf, '['), *word = buf;
	if (open_br && strchr(open_br, ']')) {
		word = open_br + 1;
		*strchr(word, ']') = '\0';
		n = (ssize_t)strlen(word);
	}
	if (!hs_word_valid(word))
		return -EINVAL;
	memmove(out, word, (size_t)n + 1);
	return 0;
}

static int hs_write(const struct hoststate *h, const char *rel, const char *value)
{
	char *path = hs_path(h, rel);
	/* O_TRUNC as a shell's ">" does: sysfs ignores it, a test's plain file
	 * needs it. */
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	int r;

	free(path);
	if (fd < 0)
		return -errno;
	r = fileio_write_all(fd, value, strlen(value));
	if (close(fd) < 0 && !r)
		r = -errno; /* sysfs may report a refused value only at close */
	return r;
}

static struct hs_knob *hs_add(struct hoststate *h, enum hs_kind kind, char *rel)
{
	struct hs_knob *k;

	if (h->n == h->cap) {
		h->cap = h->cap ? h->cap * 2 : 16;
		h->k = xrealloc(h->k, h->cap * sizeof(*h->k));
	}
	k = &h->k[h->n++];
	memset(k, 0, sizeof(*k));
	k->kind = kind;
	k->rel = rel;
	return k;
}

static struct hoststate *hs_new(const char *state_dir, const char *root)
{
	struct hoststate *h = xcalloc(1, sizeof(*h));

	h->root = xstrdup(root);
	h->state_path = xasprintf("%s/%s", state_dir, HOSTSTATE_FILE);
	return h;
}

static void hs_free(struct hoststate *h)
{
	if (!h)
		return;
	for (unsigned i = 0; i < h->n; i++)
		free(h->k[i].rel);
	free(h->k);
	free(h->root);
	free(h->state_path);
	free(h);
}

/* ---- settings ---------------------------------------------------------- */

static int hs_word_setting(const struct config *c, const char *name, char *out, struct config_diag *err)
{
	const char *v = config_get(c, name), *file = "";
	int line = 0;

	if (!v || !*v)
		return 0;
	if (hs_word_valid(v)) {
		snprintf(out, HOSTSTATE_VALUE_MAX, "%s", v);
		return 0;
	}
	config_where(c, name, &file, &line);
	memset(err, 0, sizeof(*err));
	snprintf(err->file, sizeof(err->file), "%s", file);
	err->line = line;
	snprintf(err->text, sizeof(err->text),
		 "%s is \"%.48s\": expected one word of A-Z a-z 0-9 _ - (e.g. performance)", name, v);
	return -EINVAL;
}

int hoststate_settings_load(const struct config *c, struct hoststate_settings *s,
			    struct config_diag *err)
{
	bool no_turbo;
	int r;

	memset(s, 0, sizeof(*s));
	s->no_turbo = -1;
	if ((r = hs_word_setting(c, "CPUFREQ_GOVERNOR", s->governor, err)) < 0 ||
	    (r = hs_word_setting(c, "CPUFREQ_EPP", s->epp, err)) < 0)
		return r;
	static const char *const thp[] = { "always", "madvise", "never", NULL };
	int choice;
	r = config_get_choice(c, "TRANSPARENT_HUGEPAGES", thp, &choice, err);
	if (r < 0)
		return r;
	if (r == 0)
		snprintf(s->thp, sizeof(s->thp), "%s", thp[choice]);
	static const char *const defrag[] = { "always",	 "defer", "defer+madvise",
					      "madvise", "never", NULL };
	r = config_get_choice(c, "TRANSPARENT_HUGEPAGES_DEFRAG", defrag, &choice, err);
	if (r < 0)
		return r;
	if (r == 0)
		snprintf(s->thp_defrag, sizeof(s->thp_defrag), "%s", defrag[choice]);
	r = config_get_bool(c, "CPUFREQ_NO_TURBO", &no_turbo, err);
	if (r < 0)
		return r;
	if (r == 0)
		s->no_turbo = no_turbo;
	return 0;
}

bool hoststate_settings_empty(const struct hoststate_settings *s)
{
	return !s->governor[0] && !s->epp[0] && s->no_turbo < 0 && !s->thp[0] && !s->thp_defrag[0];
}

/* ---- the state file ---------------------------------------------------- */

static void hs_boot_id(char *out, size_t size)
{
	char *s = NULL;
	size_t len;

	snprintf(out, size, "unknown");
	if (fileio_read_all("/proc/sys/kernel/random/boot_id", 64, &s, &len) == 0) {
		s[strcspn(s, "\n")] = '\0';
		if (hs_word_valid(s))
			snprintf(out, size, "%s", s);
	}
	free(s);
}

static int hs_write_file(const struct hoststate *h)
{
	char boot[HOSTSTATE_VALUE_MAX];
	char *text, *dir;
	size_t len = 0, cap = 256;
	int r;

	hs_boot_id(boot, sizeof(boot));
	text = xmalloc(cap);
	len = (size_t)snprintf(text, cap, "%s\nowner %ld %s\n", HS_MAGIC, (long)getpid(), boot);
	for (unsigned i = 0; i < h->n; i++) {
		const struct hs_knob *k = &h->k[i];
		size_t need = strlen(k->rel) + 2 * HOSTSTATE_VALUE_MAX + 16;

		if (len + need > cap) {
			cap = (len + need) * 2;
			text = xrealloc(text, cap);
		}
		len += (size_t)snprintf(text + len, cap - len, "%s %s %s\n", hs_kind_name[k->kind],
					k->rel, k->old);
	}
	dir = xstrndup(h->state_path, strrchr(h->state_path, '/') - h->state_path);
	r = fileio_mkdir_p(dir, 0700);
	free(dir);
	if (r == 0)
		r = fileio_write_atomic(h->state_path, text, len);
	free(text);
	return r;
}

/* A path read back from the file may only name a knob of its kind. */
static bool hs_rel_valid(const char *rel, enum hs_kind kind)
{
	const char *base = strrchr(rel, '/');

	if (kind == HS_THP)
		return !strcmp(rel, HS_THP_REL);
	if (kind == HS_THP_DEFRAG)
		return !strcmp(rel, HS_THP_DEFRAG_REL);
	if (strncmp(rel, HS_CPU_DIR "/", strlen(HS_CPU_DIR) + 1) || strstr(rel, "..") ||
	    strstr(rel, "//") || !base || strcmp(base + 1, hs_kind_file[kind]))
		return false;
	for (const char *p = rel; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("/._-", *p))
			return false;
	return true;
}

static int hs_parse_line(struct hoststate *h, char *line, unsigned lineno)
{
	char *save = NULL;
	char *kind = strtok_r(line, " ", &save), *rel = strtok_r(NULL, " ", &save),
	     *val = strtok_r(NULL, " ", &save);
	int k;

	for (k = 0; k < HS_NKINDS; k++)
		if (kind && !strcmp(kind, hs_kind_name[k]))
			break;
	if (k == HS_NKINDS || !rel || !val || strtok_r(NULL, " ", &save) ||
	    !hs_rel_valid(rel, (enum hs_kind)k) || !hs_word_valid(val) || h->n >= 4 * HS_CPUS_MAX) {
		log_error("%s:%u: not a line this hostd wrote; the state file is kept, restore by "
			  "hand and remove it",
			  h->state_path, lineno);
		return -EINVAL;
	}
	snprintf(hs_add(h, (enum hs_kind)k, xstrdup(rel))->old, HOSTSTATE_VALUE_MAX, "%s", val);
	return 0;
}

/* Whether the hostd that wrote the file still runs: same boot, and its pid
 * runs a program of our name (a reused pid would run something else). */
static bool hs_owner_alive(const char *owner_line)
{
	char boot[HOSTSTATE_VALUE_MAX], our_boot[HOSTSTATE_VALUE_MAX];
	char *path, *comm = NULL, *self = NULL;
	size_t len;
	long pid;
	bool alive = false;

	if (sscanf(owner_line, "owner %ld %63s", &pid, boot) != 2 || pid <= 0 || pid == getpid())
		return false;
	hs_boot_id(our_boot, sizeof(our_boot));
	if (strcmp(boot, our_boot))
		return false;
	path = xasprintf("/proc/%ld/comm", pid);
	if (fileio_read_all(path, 64, &comm, &len) == 0 &&
	    fileio_read_all("/proc/self/comm", 64, &self, &len) == 0)
		alive = !strcmp(comm, self);
	free(path);
	free(comm);
	free(self);
	return alive;
}

static int hs_load_file(struct hoststate *h, const char *text)
{
	char *copy = xstrdup(text), *save = NULL, *line;
	unsigned lineno = 0;
	int r = 0;

	for (line = strtok_r(copy, "\n", &save); line && !r; line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		if (lineno == 1 && strcmp(line, HS_MAGIC)) {
			log_error("%s: does not start with \"%s\"; kept, restore by hand and remove it",
				  h->state_path, HS_MAGIC);
			r = -EINVAL;
		} else if (lineno == 2 && hs_owner_alive(line)) {
			log_error("%s: written by a hostd that is still running (%s); not touching "
				  "host state",
				  h->state_path, line);
			r = -EBUSY;
		} else if (lineno > 2) {
			r = hs_parse_line(h, line, lineno);
		}
	}
	if (!r && lineno < 2)
		r = -EINVAL;
	free(copy);
	return r;
}

/* ---- restore ----------------------------------------------------------- */

/* Puts every knob back; a CPU that went away has nothing to restore. */
static int hs_put_back(struct hoststate *h)
{
	int first = 0;

	for (int kind = 0; kind < HS_NKINDS; kind++) {
		for (unsigned i = 0; i < h->n; i++) {
			struct hs_knob *k = &h->k[i];
			char now[HOSTSTATE_VALUE_MAX];
			int r;

			if ((int)k->kind != kind)
				continue;
			r = hs_read(h, k->rel, now);
			if (r == 0 && !strcmp(now, k->old))
				continue;
			if (r == -ENOENT) {
				log_warn("%s/%s is gone: cannot put back \"%s\"", h->root, k->rel,
					 k->old);
				continue;
			}
			r = hs_write(h, k->rel, k->old);
			if (r < 0) {
				log_error("cannot put back %s/%s to \"%s\": %s", h->root, k->rel,
					  k->old, strerror(-r));
				if (!first)
					first = r;
			}
		}
	}
	return first;
}

int hoststate_restore(struct hoststate *h)
{
	int r;

	if (!h)
		return 0;
	r = hs_put_back(h);
	if (r == 0 && unlink(h->state_path) < 0 && errno != ENOENT)
		r = -errno;
	else if (r < 0)
		log_error("%s kept: the next start of hostd tries again", h->state_path);
	hs_free(h);
	return r;
}

int hoststate_recover(const char *state_dir, const char *sysfs_root)
{
	struct hoststate *h = hs_new(state_dir, sysfs_root);
	char *text = NULL;
	size_t len;
	int r = fileio_read_all(h->state_path, HS_FILE_MAX, &text, &len);

	if (r == -ENOENT) {
		hs_free(h);
		return 0;
	}
	if (r < 0) {
		log_error("cannot read %s: %s", h->state_path, strerror(-r));
	} else if ((r = hs_load_file(h, text)) == 0) {
		log_warn("%s: a hostd died holding host state; putting back %u values",
			 h->state_path, h->n);
		free(text);
		r = hoststate_restore(h);
		return r < 0 ? r : 1;
	}
	free(text);
	hs_free(h);
	return r;
}

/* ---- save and set ------------------------------------------------------ */

/* cpuN folders that have a cpufreq folder, in the order readdir gives. */
static int hs_scan(struct hoststate *h, const struct hoststate_settings *s)
{
	char *dir = hs_path(h, HS_CPU_DIR);
	DIR *d = opendir(dir);
	struct dirent *e;
	int r = 0;

	if (!d) {
		r = -errno;
		log_error("cannot list %s: %s", dir, strerror(-r));
		free(dir);
		return r;
	}
	while ((e = readdir(d)) && !r) {
		char *rel;

		if (strncmp(e->d_name, "cpu", 3) || !isdigit((unsigned char)e->d_name[3]) ||
		    strspn(e->d_name + 3, "0123456789") != strlen(e->d_name + 3))
			continue;
		if (h->n >= 2 * HS_CPUS_MAX) {
			r = -E2BIG;
			break;
		}
		static const enum hs_kind per_cpu[] = { HS_GOVERNOR, HS_EPP };

		for (size_t j = 0; j < 2 && !r; j++) {
			enum hs_kind kind = per_cpu[j];
			struct hs_knob *k;

			rel = xasprintf("%s/%s/cpufreq/%s", HS_CPU_DIR, e->d_name, hs_kind_file[kind]);
			k = hs_add(h, kind, rel);
			r = hs_read(h, rel, k->old);
			if (r == -ENOENT) { /* no cpufreq, or no EPP: nothing to save */
				free(rel);
				h->n--;
				r = 0;
				continue;
			}
			if (r < 0) {
				log_error("cannot read %s/%s: %s", h->root, rel, strerror(-r));
				continue;
			}
			snprintf(k->want, sizeof(k->want), "%s",
				 kind == HS_GOVERNOR ? s->governor : s->epp);
		}
	}
	closedir(d);
	free(dir);
	return r;
}

static int hs_scan_no_turbo(struct hoststate *h, const struct hoststate_settings *s)
{
	char *rel = xstrdup(HS_CPU_DIR "/intel_pstate/no_turbo");
	struct hs_knob *k = hs_add(h, HS_NO_TURBO, rel);
	int r = hs_read(h, rel, k->old);

	if (r == -ENOENT) {
		free(rel);
		h->n--;
		return 0;
	}
	if (r < 0)
		log_error("cannot read %s/%s: %s", h->root, rel, strerror(-r));
	else if (s->no_turbo >= 0)
		snprintf(k->want, sizeof(k->want), "%d", s->no_turbo);
	return r;
}

/* Only when asked: a run that leaves THP alone does not save it. */
static int hs_scan_thp(struct hoststate *h, enum hs_kind kind, const char *rel, const char *want)
{
	if (!want[0])
		return 0;
	struct hs_knob *k = hs_add(h, kind, xstrdup(rel));
	int r = hs_read(h, k->rel, k->old);

	if (r == -ENOENT) {
		free(k->rel);
		h->n--;
		return 0;
	}
	if (r < 0)
		log_error("cannot read %s/%s: %s", h->root, k->rel, strerror(-r));
	else
		snprintf(k->want, sizeof(k->want), "%s", want);
	return r;
}

static void hs_warn_absent(const struct hoststate *h, const struct hoststate_settings *s)
{
	bool seen[HS_NKINDS] = { false };

	for (unsigned i = 0; i < h->n; i++)
		seen[h->k[i].kind] = true;
	if (s->governor[0] && !seen[HS_GOVERNOR])
		log_warn("CPUFREQ_GOVERNOR=%s ignored: no CPU under %s/%s has cpufreq", s->governor,
			 h->root, HS_CPU_DIR);
	if (s->epp[0] && !seen[HS_EPP])
		log_warn("CPUFREQ_EPP=%s ignored: no CPU has energy_performance_preference", s->epp);
	if (s->thp[0] && !seen[HS_THP])
		log_warn("TRANSPARENT_HUGEPAGES=%s ignored: %s/%s does not exist", s->thp, h->root,
			 HS_THP_REL);
	if (s->thp_defrag[0] && !seen[HS_THP_DEFRAG])
		log_warn("TRANSPARENT_HUGEPAGES_DEFRAG=%s ignored: %s/%s does not exist",
			 s->thp_defrag, h->root, HS_THP_DEFRAG_REL);
	if (s->no_turbo >= 0 && !seen[HS_NO_TURBO])
		log_warn("CPUFREQ_NO_TURBO ignored: %s/%s/intel_pstate/no_turbo does not exist",
			 h->root, HS_CPU_DIR);
}

int hoststate_save(const char *state_dir, const char *sysfs_root,
		   const struct hoststate_settings *s, struct hoststate **out)
{
	struct hoststate *h;
	int r;

	*out = NULL;
	if (hoststate_settings_empty(s))
		return 0;
	h = hs_new(state_dir, sysfs_root);
	r = hs_scan(h, s);
	if (!r)
		r = hs_scan_no_turbo(h, s);
	if (!r)
		r = hs_scan_thp(h, HS_THP, HS_THP_REL, s->thp);
	if (!r)
		r = hs_scan_thp(h, HS_THP_DEFRAG, HS_THP_DEFRAG_REL, s->thp_defrag);
	if (!r) {
		hs_warn_absent(h, s);
		if (h->n == 0) {
			hs_free(h);
			return 0;
		}
		r = hs_write_file(h);
		if (r < 0)
			log_error("cannot save host state to %s: %s; changing nothing",
				  h->state_path, strerror(-r));
	}
	if (r < 0) {
		hs_free(h);
		return r;
	}
	*out = h;
	return 0;
}

/* A governor the kernel does not offer is refused before anything changes. */
static int hs_check_available(const struct hoststate *h, const struct hs_knob *k)
{
	char *rel = xstrndup(k->rel, strrchr(k->rel, '/') - k->rel);
	char *path = xasprintf("%s/%s/scaling_available_governors", h->root, rel);
	char *avail = NULL, *save = NULL;
	size_t len;
	int r = fileio_read_all(path, 4096, &avail, &len);

	if (r == 0) {
		r = -EINVAL;
		for (char *w = strtok_r(avail, " \n", &save); w; w = strtok_r(NULL, " \n", &save))
			if (!strcmp(w, k->want))
				r = 0;
		if (r < 0)
			log_error("CPUFREQ_GOVERNOR=%s: %s offers only: %s", k->want, path,
				  avail[0] ? avail : "(nothing)");
	} else if (r == -ENOENT) {
		r = 0;
	}
	free(avail);
	free(path);
	free(rel);
	return r;
}

int hoststate_set(struct hoststate *h)
{
	for (unsigned i = 0; i < h->n; i++)
		if (h->k[i].kind == HS_GOVERNOR && h->k[i].want[0] &&
		    hs_check_available(h, &h->k[i]) < 0)
			return -EINVAL;
	for (int kind = 0; kind < HS_NKINDS; kind++) {
		for (unsigned i = 0; i < h->n; i++) {
			struct hs_knob *k = &h->k[i];
			int r;

			if ((int)k->kind != kind || !k->want[0])
				continue;
			r = hs_write(h, k->rel, k->want);
			if (r < 0) {
				log_error("cannot set %s/%s to \"%s\": %s", h->root, k->rel,
					  k->want, strerror(-r));
				return r;
			}
		}
	}
	return 0;
}

int hoststate_apply(const char *state_dir, const char *sysfs_root,
		    const struct hoststate_settings *s, struct hoststate **out)
{
	int r = hoststate_save(state_dir, sysfs_root, s, out);

	if (r < 0 || !*out)
		return r;
	r = hoststate_set(*out);
	if (r < 0) {
		hoststate_restore(*out);
		*out = NULL;
	}
	return r;
}

unsigned hoststate_count(const struct hoststate *h)
{
	return h ? h->n : 0;
}
