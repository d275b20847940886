// SPDX-License-Identifier: GPL-2.0-or-later
#include "bundle_settings.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "config.h"
#include "xalloc.h"

const char *const bundle_settings_keys[] = { "HARNESS_BINARIES", "GUEST_INSTALLED_BINARIES", NULL };

static bool listed(char *const *v, size_t n, const char *x)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], x))
			return true;
	return false;
}

static void add_word(char ***v, size_t *n, const char *w)
{
	if (listed(*v, *n, w))
		return;
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = xstrdup(w);
}

void bundle_settings_add(struct bundle_list *l, const char *binary)
{
	add_word(&l->push_binaries, &l->npush_binaries, binary);
}

/* The words of key, each checked: a name bin/ can hold, or (paths_ok) an
 * absolute path ending in one. */
static int read_list(const struct config *g, const char *path, const char *key, bool paths_ok,
		     char ***v, size_t *n, struct config_diag *d)
{
	const char *val = config_get(g, key);
	char *copy = xstrdup(val ? val : ""), *save = NULL;
	int r = 0;

	for (char *w = strtok_r(copy, " \t\n", &save); w && r == 0; w = strtok_r(NULL, " \t\n", &save)) {
		const char *slash = strrchr(w, '/');

		if (*n >= BUNDLE_BINARIES_MAX)
			r = config_diag_at(d, g, key, path, "%s names more than %d binaries", key,
					   BUNDLE_BINARIES_MAX);
		else if (slash && !paths_ok)
			r = config_diag_at(d, g, key, path,
					   "%s=\"%s\": \"%s\" is a path; name the binary as the guest's "
					   "PATH finds it",
					   key, val, w);
		else if (slash && (w[0] != '/' || strlen(w) >= PATH_MAX))
			r = config_diag_at(d, g, key, path,
					   "%s: \"%s\" is neither a name looked up in PATH nor an "
					   "absolute path",
					   key, w);
		else if (!bundle_name_valid(slash ? slash + 1 : w))
			r = config_diag_at(d, g, key, path,
					   "%s: \"%s\" cannot name a binary: use 1 to %d of A-Z a-z 0-9 "
					   ". _ + - not starting with '.' or '-'",
					   key, w, BUNDLE_NAME_MAX - 1);
		else
			add_word(v, n, w);
	}
	free(copy);
	return r;
}

int bundle_settings_load(const struct config *g, const char *path, struct bundle_list *l,
			 struct config_diag *d)
{
	int r = read_list(g, path, "HARNESS_BINARIES", true, &l->push_binaries, &l->npush_binaries, d);

	if (r == 0)
		r = read_list(g, path, "GUEST_INSTALLED_BINARIES", false, &l->guest_binaries,
			      &l->nguest_binaries, d);
	return r;
}

int bundle_settings_resolve(struct bundle_list *l, const char *harness_dir, const struct config *g,
			    const char *path, struct config_diag *d)
{
	const char **push = xcalloc(l->npush_binaries + 1, sizeof(*push));
	size_t n = 0;
	char err[1024];
	int r = 0;

	bundle_free(l->bundle);
	l->bundle = NULL;
	for (size_t i = 0; i < l->npush_binaries; i++) {
		const char *slash = strrchr(l->push_binaries[i], '/');
		const char *name = slash ? slash + 1 : l->push_binaries[i];

		if (!listed(l->guest_binaries, l->nguest_binaries, name))
			push[n++] = l->push_binaries[i];
	}
	if (n && harness_dir)
		r = bundle_build(push, n, harness_dir, NULL, NULL, &l->bundle, err, sizeof(err));
	if (r < 0)
		r = config_diag_at(d, g,
				   g && config_get(g, "HARNESS_BINARIES") ? "HARNESS_BINARIES" : NULL,
				   path,
				   "cannot push into the guests: %s; install it on this host, or "
				   "list it in GUEST_INSTALLED_BINARIES when the guests have it",
				   err);
	free(push);
	return r;
}

void bundle_settings_fini(struct bundle_list *l)
{
	for (size_t i = 0; i < l->npush_binaries; i++)
		free(l->push_binaries[i]);
	for (size_t i = 0; i < l->nguest_binaries; i++)
		free(l->guest_binaries[i]);
	free(l->push_binaries);
	free(l->guest_binaries);
	bundle_free(l->bundle);
	l->push_binaries = l->guest_binaries = NULL;
	l->npush_binaries = l->nguest_binaries = 0;
	l->bundle = NULL;
}
