// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Shell functions in a config:
 *
 *   set_sizes() {          name() { ... }, name () {, function name {
 *       export A=1         the body: config lines, read when the function
 *   }                      is called, as if written there
 *   set_sizes
 *
 * Nothing is run either way: a call reads the body's assignments, tests
 * and commands like any other line.  A function the config defines and
 * never calls (MMTests' monitor hooks, which MMTests itself calls) is
 * reported as ignored: lockstep runs no hooks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"
#include "xalloc.h"

#define FUNCS_MAX 256

static bool is_func_char(char ch)
{
	return config__is_name_char(ch) || ch == '-';
}

static struct config_func *find(struct config *c, const char *name, size_t len)
{
	for (size_t i = 0; i < c->nfuncs; i++)
		if (strlen(c->funcs[i].name) == len && !memcmp(c->funcs[i].name, name, len))
			return &c->funcs[i];
	return NULL;
}

/* "{" and the end of the line at lx->pos: a definition's first line. */
static bool brace_ends_line(struct config_lexer *lx)
{
	config__skip_blanks(lx);
	if (lx->pos == lx->len || lx->s[lx->pos] != '{')
		return false;
	lx->pos++;
	config__skip_blanks(lx);
	return lx->pos == lx->len || lx->s[lx->pos] == '#';
}

int config__function(struct config_lexer *lx)
{
	size_t at = lx->pos, name, n = 0;
	bool keyword = lx->len - at > 9 && !memcmp(lx->s + at, "function", 8) &&
		       config__is_blank(lx->s[at + 8]);
	struct config_func *f;

	if (keyword) {
		lx->pos += 8;
		config__skip_blanks(lx);
	}
	name = lx->pos;
	while (name + n < lx->len && is_func_char(lx->s[name + n]))
		n++;
	if (n == 0 || !config__is_name_start(lx->s[name])) {
		lx->pos = at;
		return keyword ? config__error(lx, name,
					       "expected a function name after "
					       "'function'")
			       : 1;
	}
	lx->pos = name + n;
	config__skip_blanks(lx);
	if (lx->len - lx->pos >= 2 && !memcmp(lx->s + lx->pos, "()", 2))
		lx->pos += 2;
	else if (!keyword) {
		/* not a definition: a call, when the name is a function */
		lx->pos = name + n;
		if (lx->pos < lx->len && !config__is_blank(lx->s[lx->pos]) && lx->s[lx->pos] != ';')
			return lx->pos = at, 1;
		f = find(lx->c, lx->s + name, n);
		if (!f)
			return lx->pos = at, 1;
		return config__call(lx, f, at);
	}
	if (!brace_ends_line(lx))
		return config__error(lx, lx->pos,
				     "expected '{' and the end of the line after "
				     "%.*s(): the body follows on the next lines, and '}' alone "
				     "on the last",
				     (int)n, lx->s + name);
	if (lx->c->nfuncs == FUNCS_MAX && !find(lx->c, lx->s + name, n))
		return config__error(lx, name, "expected at most %d functions", FUNCS_MAX);
	free(lx->heredoc.target);
	lx->heredoc = (struct config_heredoc){ .pending = true,
					       .to_func = true,
					       .quoted = true,
					       .dry = lx->dry,
					       .line = lx->line,
					       .target = xstrndup(lx->s + name, n) };
	snprintf(lx->heredoc.delim, sizeof(lx->heredoc.delim), "}");
	return 0;
}

int config__define(struct config_lexer *lx, const char *body, size_t len)
{
	struct config *c = lx->c;
	const struct config_heredoc *h = &lx->heredoc;
	struct config_func *f = find(c, h->target, strlen(h->target));

	if (f) {
		free(f->body);
	} else {
		c->funcs = xrealloc(c->funcs, (c->nfuncs + 1) * sizeof(*c->funcs));
		f = &c->funcs[c->nfuncs++];
		f->name = xstrdup(h->target);
		f->called = false;
		f->warned = false;
	}
	f->body = xstrndup(body, len);
	f->len = len;
	f->file = lx->file;
	f->line = h->line;
	return 0;
}

int config__call(struct config_lexer *lx, struct config_func *f, size_t at)
{
	struct config *c = lx->c;
	int r;

	bool more = false;

	config__skip_blanks(lx);
	if (lx->pos < lx->len && lx->s[lx->pos] == ';') {
		lx->pos++;
		more = true;
	} else if (lx->pos < lx->len && lx->s[lx->pos] != '#') {
		return config__error(lx, lx->pos,
				     "expected the end of the line after %s: a "
				     "function of a config takes no arguments",
				     f->name);
	}
	if (lx->dry)
		return more ? 2 : 0;
	f->called = true;
	if (c->include_depth >= CONFIG_INCLUDE_DEPTH_MAX)
		return config__error(lx, at,
				     "expected at most %d nested calls and source/.; does "
				     "%s call itself?",
				     CONFIG_INCLUDE_DEPTH_MAX, f->name);
	/* the body's lines keep their own numbers in messages */
	c->include_depth++;
	c->first_line = f->line;
	r = config__parse(c, f->file, f->body, f->len, lx->err);
	c->include_depth--;
	return r < 0 ? r : more ? 2 : 0;
}

void config__warn_uncalled(struct config *c)
{
	for (size_t i = 0; i < c->nfuncs; i++) {
		struct config_func *f = &c->funcs[i];

		if (f->called || f->warned)
			continue;
		f->warned = true;
		config__warn(c, f->file, f->line, 0,
			     "function %s is never called by the config: "
			     "ignored (MMTests calls such hooks itself; lockstep runs no hooks)",
			     f->name);
	}
}
