// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The config object: variables set by files, facts, warnings, and the
 * "did you mean" helper.  The syntax lives in config_parse.c and
 * config_arith.c, the typed getters in config_get.c.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"
#include "fileio.h"
#include "xalloc.h"

struct config *config_new(void)
{
	struct config *c = xcalloc(1, sizeof(struct config));

	config__process_facts(c);
	return c;
}

static void table_free(struct config_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->vars[i].name);
		free(t->vars[i].value);
	}
	free(t->vars);
	free(t->names);
	free(t->slots);
}

void config_free(struct config *c)
{
	if (!c)
		return;
	table_free(&c->vars);
	table_free(&c->facts);
	for (size_t i = 0; i < c->nfiles; i++)
		free(c->files[i]);
	free(c->files);
	free(c->warnings);
	for (size_t i = 0; i < c->nshipped; i++) {
		free((char *)c->shipped[i].path);
		free((char *)c->shipped[i].name);
		free((char *)c->shipped[i].text);
	}
	free(c->shipped);
	for (size_t i = 0; i < c->nfuncs; i++) {
		free(c->funcs[i].name);
		free(c->funcs[i].body);
	}
	free(c->funcs);
	free(c->root);
	free(c);
}

/* FNV-1a: names are short and the table is small; nothing fancier is needed. */
static uint32_t hash_name(const char *name, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	return h;
}

static size_t find_slot(const struct config_table *t, const char *name, size_t len)
{
	size_t mask = t->nslots - 1, i = hash_name(name, len) & mask;

	for (;; i = (i + 1) & mask) {
		uint32_t v = t->slots[i];

		if (v == 0)
			return i;
		if (strncmp(t->vars[v - 1].name, name, len) == 0 && t->vars[v - 1].name[len] == '\0')
			return i;
	}
}

struct config_var *config__find(const struct config_table *t, const char *name, size_t len)
{
	uint32_t v;

	if (t->n == 0)
		return NULL;
	v = t->slots[find_slot(t, name, len)];
	return v ? &t->vars[v - 1] : NULL;
}

const struct config_var *config__lookup(const struct config *c, const char *name, size_t len)
{
	const struct config_var *v = config__find(&c->vars, name, len);

	return v ? v : config__find(&c->facts, name, len);
}

static void table_grow(struct config_table *t)
{
	t->cap = t->cap ? t->cap * 2 : 16;
	t->vars = xrealloc(t->vars, t->cap * sizeof(*t->vars));
	t->names = xrealloc(t->names, t->cap * sizeof(*t->names));
	free(t->slots);
	t->nslots = t->cap * 2;
	t->slots = xcalloc(t->nslots, sizeof(*t->slots));
	for (size_t i = 0; i < t->n; i++)
		t->slots[find_slot(t, t->vars[i].name, strlen(t->vars[i].name))] = (uint32_t)i + 1;
}

void config__unset(struct config_table *t, const char *name, size_t len)
{
	struct config_var *v = config__find(t, name, len);
	size_t i;

	if (!v)
		return;
	i = (size_t)(v - t->vars);
	free(v->name);
	free(v->value);
	memmove(t->vars + i, t->vars + i + 1, (t->n - i - 1) * sizeof(*t->vars));
	t->n--;
	/* indexes after i moved down: the open addressing is rebuilt */
	memset(t->slots, 0, t->nslots * sizeof(*t->slots));
	for (size_t k = 0; k < t->n; k++) {
		t->names[k] = t->vars[k].name;
		t->slots[find_slot(t, t->vars[k].name, strlen(t->vars[k].name))] = (uint32_t)k + 1;
	}
}

/* -ENOSPC when the table is full and name is new. */
int config__set(struct config_table *t, const char *name, size_t len, const char *value,
		size_t vlen, const char *file, int line, int column)
{
	struct config_var *v = config__find(t, name, len);

	if (!v) {
		if (t->n >= CONFIG_NAMES_MAX)
			return -ENOSPC;
		if (t->n == t->cap)
			table_grow(t);
		v = &t->vars[t->n];
		v->name = xstrndup(name, len);
		v->value = NULL;
		t->names[t->n] = v->name;
		t->slots[find_slot(t, name, len)] = (uint32_t)++t->n;
	}
	free(v->value);
	v->value = xmalloc(vlen + 1);
	memcpy(v->value, value, vlen);
	v->value[vlen] = '\0';
	v->file = file;
	v->line = line;
	v->column = column;
	return 0;
}

/* MMTests' own shell (shellpacks/common.sh) calls these NUMCPUS, NUMNODES
 * and NUMLLCS, and its configs use those names: $((NUMCPUS*4)). */
static const char *const fact_aliases[][2] = {
	{ "NUM_LOGICAL_CPUS", "NUMCPUS" },
	{ "NUM_NODES", "NUMNODES" },
	{ "NUM_LLCS", "NUMLLCS" },
};

void config_set_fact(struct config *c, const char *name, const char *value)
{
	/* Facts come from our own code, never from a peer: the cap is a backstop. */
	config__set(&c->facts, name, strlen(name), value, strlen(value), NULL, 0, 0);
	for (size_t i = 0; i < sizeof(fact_aliases) / sizeof(fact_aliases[0]); i++)
		if (strcmp(name, fact_aliases[i][0]) == 0)
			config__set(&c->facts, fact_aliases[i][1], strlen(fact_aliases[i][1]),
				    value, strlen(value), NULL, 0, 0);
}

void config__vdiag(struct config_diag *d, const char *file, int line, int column, const char *fmt,
		   va_list ap)
{
	snprintf(d->file, sizeof(d->file), "%s", file ? file : "");
	d->line = line;
	d->column = column;
	vsnprintf(d->text, sizeof(d->text), fmt, ap);
}

void config__diag(struct config_diag *d, const char *file, int line, int column, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	config__vdiag(d, file, line, column, fmt, ap);
	va_end(ap);
}

void config_diag_format(const struct config_diag *d, char *buf, size_t size)
{
	if (d->line > 0 && d->column > 0)
		snprintf(buf, size, "%s:%d:%d: %s", d->file, d->line, d->column, d->text);
	else if (d->line > 0)
		snprintf(buf, size, "%s:%d: %s", d->file, d->line, d->text);
	else if (d->file[0])
		snprintf(buf, size, "%s: %s", d->file, d->text);
	else
		snprintf(buf, size, "%s", d->text);
}

static void config__vwarn(struct config *c, const char *file, int line, int column, const char *fmt,
			  va_list ap)
{
	/* A broken file could make a warning per character; keep the first ones. */
	if (c->nwarnings > CONFIG_WARNINGS_MAX)
		return;
	if (!c->warnings)
		c->warnings = xcalloc(CONFIG_WARNINGS_MAX + 1, sizeof(*c->warnings));
	if (c->nwarnings == CONFIG_WARNINGS_MAX) {
		config__diag(&c->warnings[c->nwarnings++], file, 0, 0,
			     "more than %d warnings; the rest are not shown", CONFIG_WARNINGS_MAX);
		return;
	}
	config__vdiag(&c->warnings[c->nwarnings++], file, line, column, fmt, ap);
}

void config__warn(struct config *c, const char *file, int line, int column, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	config__vwarn(c, file, line, column, fmt, ap);
	va_end(ap);
}

size_t config_shipped(const struct config *c, const struct config_shipped **out)
{
	*out = c->shipped;
	return c->nshipped;
}

void config_warn_at(const struct config *c, const char *name, const char *fmt, ...)
{
	struct config *w = (struct config *)c; /* warnings are bookkeeping */
	const struct config_var *v = name ? config__find(&c->vars, name, strlen(name)) : NULL;
	va_list ap;

	/* straight to the warning: a vsnprintf into a local buffer here made
	 * gcc's sanitizer build see a "null format string" */
	va_start(ap, fmt);
	config__vwarn(w, v ? v->file : NULL, v ? v->line : 0, v ? v->column : 0, fmt, ap);
	va_end(ap);
}

size_t config_warnings(const struct config *c, const struct config_diag **diags)
{
	*diags = c->warnings;
	return c->nwarnings;
}

void config__show(const char *value, char *buf, size_t size)
{
	/* Each character takes at most 4 bytes ("\x01"); the tail "...\"" and
	 * the NUL take 5. */
	size_t o = 0, i;

	if (size < 16) {
		snprintf(buf, size, "\"\"");
		return;
	}
	buf[o++] = '"';
	for (i = 0; value[i] && i < CONFIG_SHOW_MAX && o + 4 + 5 <= size; i++) {
		unsigned char ch = (unsigned char)value[i];

		if (ch == '"' || ch == '\\') {
			buf[o++] = '\\';
			buf[o++] = (char)ch;
		} else if (ch == '\t') {
			buf[o++] = '\\';
			buf[o++] = 't';
		} else if (ch < 0x20 || ch == 0x7f) {
			o += (size_t)snprintf(buf + o, size - o, "\\x%02x", ch);
		} else {
			buf[o++] = (char)ch;
		}
	}
	if (value[i]) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o++] = '"';
	buf[o] = '\0';
}

char *config__intern_file(struct config *c, const char *file)
{
	c->files = xrealloc(c->files, (c->nfiles + 1) * sizeof(*c->files));
	return c->files[c->nfiles++] = xstrdup(file ? file : "(config)");
}

int config_load_string(struct config *c, const char *file, const char *text, struct config_diag *err)
{
	return config__parse(c, config__intern_file(c, file), text, strlen(text), err);
}

int config_load_file(struct config *c, const char *path, struct config_diag *err)
{
	size_t len;
	char *text;
	int r;

	r = fileio_read_all(path, CONFIG_FILE_MAX, &text, &len);
	if (r == -EFBIG) {
		config__diag(err, path, 0, 0,
			     "expected a config of at most %d bytes; is this the right file?",
			     CONFIG_FILE_MAX);
		return r;
	}
	if (r < 0) {
		config__diag(err, path, 0, 0, "cannot read: %s", strerror(-r));
		return r;
	}
	r = config__parse(c, config__intern_file(c, path), text, len, err);
	free(text);
	return r;
}

int config_override(struct config *c, const char *assignment, struct config_diag *err)
{
	const char *eq = strchr(assignment, '=');
	size_t len = eq ? (size_t)(eq - assignment) : 0;
	bool valid = len > 0 && len <= CONFIG_NAME_MAX && config__is_name_start(assignment[0]);

	for (size_t i = 1; valid && i < len; i++)
		valid = config__is_name_char(assignment[i]);
	if (!valid) {
		config__diag(err, "--set", 0, 0,
			     "expected NAME=VALUE, found \"%.64s\": a name is "
			     "letters, digits and '_', not starting with a digit",
			     assignment);
		return -EINVAL;
	}
	if (strlen(eq + 1) > CONFIG_VALUE_MAX) {
		config__diag(err, "--set", 0, 0, "expected a value of at most %d bytes for %.*s",
			     CONFIG_VALUE_MAX, (int)len, assignment);
		return -EINVAL;
	}
	if (config__set(&c->vars, assignment, len, eq + 1, strlen(eq + 1),
			config__intern_file(c, "--set"), 0, 0) < 0) {
		config__diag(err, "--set", 0, 0,
			     "expected at most %d distinct names; %.*s would be "
			     "one more",
			     CONFIG_NAMES_MAX, (int)len, assignment);
		return -EINVAL;
	}
	return 0;
}

const char *config_get(const struct config *c, const char *name)
{
	const struct config_var *v = config__find(&c->vars, name, strlen(name));

	return v ? v->value : NULL;
}

bool config_where(const struct config *c, const char *name, const char **file, int *line)
{
	const struct config_var *v = config__find(&c->vars, name, strlen(name));

	if (!v)
		return false;
	if (file)
		*file = v->file;
	if (line)
		*line = v->line;
	return true;
}

size_t config_names(const struct config *c, const char ***names)
{
	*names = c->vars.names;
	return c->vars.n;
}

const char *config_first_set(const struct config *c, const char *const *names)
{
	for (; *names; names++)
		if (config_get(c, *names))
			return *names;
	return NULL;
}

static bool has_prefix(const char *name, const char *const *prefixes)
{
	for (; prefixes && *prefixes; prefixes++)
		if (strncmp(name, *prefixes, strlen(*prefixes)) == 0)
			return true;
	return false;
}

/* The entry of list that name is (an entry may end in '*', a prefix, and
 * carry ": why" after the name), or NULL. */
static const char *listed(const char *name, const char *const *list)
{
	for (; list && *list; list++) {
		size_t n = strcspn(*list, ":");

		if (n > 0 && (*list)[n - 1] == '*' ? strncmp(name, *list, n - 1) == 0
						   : strlen(name) == n && !strncmp(name, *list, n))
			return *list;
	}
	return NULL;
}

static void warn_unknown(struct config *w, const struct config_var *v, const char *const *known)
{
	struct config_suggest s;

	config__suggest_init(&s, v->name, strlen(v->name));
	for (const char *const *k = known; *k && w->nwarnings < CONFIG_WARNINGS_MAX; k++)
		config__suggest_try(&s, *k);
	if (config__suggest_result(&s))
		config__warn(w, v->file, v->line, v->column, "unknown name %s, did you mean %s?",
			     v->name, config__suggest_result(&s));
	else
		config__warn(w, v->file, v->line, v->column, "unknown name %s", v->name);
}

/* One warning naming every ignored name set by one file, cut short to fit. */
static void warn_ignored(struct config *w, size_t *idx, size_t n, size_t first)
{
	static const char head[] = "ignored MMTests settings (lockstep does not act on them): ";
	const char *file = w->vars.vars[idx[first]].file;
	char text[sizeof(((struct config_diag *)0)->text)];
	size_t len = 0, left = 0;

	len = (size_t)snprintf(text, sizeof(text), "%s", head);
	for (size_t i = first; i < n; i++) {
		const struct config_var *v;
		size_t vlen;

		if (idx[i] == SIZE_MAX || w->vars.vars[idx[i]].file != file)
			continue;
		v = &w->vars.vars[idx[i]];
		vlen = strlen(v->name);
		idx[i] = SIZE_MAX;
		/* room for ", NAME" and a later ", and 9999 more" */
		if (left == 0 && len + 2 + vlen + 20 < sizeof(text))
			len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s",
						len > sizeof(head) - 1 ? ", " : "", v->name);
		else
			left++;
	}
	if (left)
		snprintf(text + len, sizeof(text) - len, ", and %zu more", left);
	config__warn(w, file, 0, 0, "%s", text);
}

size_t config_check_known_ex(const struct config *c, const char *const *known,
			     const char *const *prefixes, const char *const *ignored)
{
	/* Warnings are bookkeeping, not part of what the config says. */
	struct config *w = (struct config *)c;
	size_t count = 0, nignored = 0, *idx = NULL;

	for (size_t i = 0; i < c->vars.n; i++) {
		const struct config_var *v = &c->vars.vars[i];

		if (listed(v->name, known) || has_prefix(v->name, prefixes))
			continue;
		const char *entry = listed(v->name, ignored);

		if (entry && strchr(entry, ':')) {
			/* a reason worth its own line, at the name's place */
			config__warn(w, v->file, v->line, v->column, "%s ignored%s", v->name,
				     strchr(entry, ':'));
			continue;
		}
		if (entry) {
			if (!idx)
				idx = xmalloc(c->vars.n * sizeof(*idx));
			idx[nignored++] = i;
			continue;
		}
		warn_unknown(w, v, known);
		count++;
	}
	for (size_t i = 0; i < nignored; i++)
		if (idx[i] != SIZE_MAX)
			warn_ignored(w, idx, nignored, i);
	free(idx);
	return count;
}

size_t config_check_known(const struct config *c, const char *const *known, const char *const *prefixes)
{
	return config_check_known_ex(c, known, prefixes, NULL);
}

/*
 * Optimal string alignment distance (Levenshtein plus transpositions of two
 * neighbours), case-insensitive.  Returns limit + 1 as soon as the answer is
 * known to exceed limit, which keeps comparing many names cheap.
 */
unsigned config__distance(const char *a, size_t la, const char *b, size_t lb, unsigned limit)
{
	unsigned rows[3][CONFIG_NAME_MAX + 1], *prev2 = rows[0], *prev = rows[1], *cur = rows[2], *swap;

	if (la > CONFIG_NAME_MAX || lb > CONFIG_NAME_MAX)
		return limit + 1;
	if ((la > lb ? la - lb : lb - la) > limit)
		return limit + 1;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned row_min;

		cur[0] = row_min = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			int ca = tolower((unsigned char)a[i - 1]),
			    cb = tolower((unsigned char)b[j - 1]);
			unsigned cost = ca != cb, d = prev[j - 1] + cost;

			if (prev[j] + 1 < d)
				d = prev[j] + 1;
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && prev2[j - 2] + 1 < d)
				d = prev2[j - 2] + 1;
			cur[j] = d;
			if (d < row_min)
				row_min = d;
		}
		if (row_min > limit)
			return limit + 1;
		swap = prev2;
		prev2 = prev;
		prev = cur;
		cur = swap;
	}
	return prev[lb] <= limit ? prev[lb] : limit + 1;
}

void config__suggest_init(struct config_suggest *s, const char *name, size_t len)
{
	size_t third = len / 3;

	s->name = name;
	s->len = len;
	s->best = NULL;
	/* Close enough: within max(2, len/3) edits, and never a complete rewrite. */
	s->best_dist = (unsigned)(third > 2 ? third : 2);
	if (s->best_dist >= len)
		s->best_dist = len > 0 ? (unsigned)len - 1 : 0;
	s->best_dist++; /* best_dist is now the first distance that is too far */
}

void config__suggest_try(struct config_suggest *s, const char *candidate)
{
	size_t len = strlen(candidate);
	unsigned d;

	if (s->best_dist == 0)
		return;
	d = config__distance(s->name, s->len, candidate, len, s->best_dist - 1);
	if (d == 0) {
		/* Only the case differs (or it is the name itself): nothing beats that. */
		if (len != s->len || strncmp(s->name, candidate, len) != 0) {
			s->best = candidate;
			s->best_dist = 0;
		}
	} else if (d < s->best_dist) {
		s->best_dist = d;
		s->best = candidate;
	}
}

void config__suggest_table(struct config_suggest *s, const struct config_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		config__suggest_try(s, t->vars[i].name);
}

const char *config__suggest_result(const struct config_suggest *s)
{
	return s->best;
}
