// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * $(echo WORDS | sed 's/PATTERN/REPLACEMENT/FLAGS') and `echo WORDS`: what
 * MMTests' configs write to edit a value (config-hpc-parsec-pthreads-full
 * drops a benchmark from MMTESTS so), answered without running echo or
 * sed.  The words are read as a command's arguments (quotes, $NAME,
 * $((...))); the script is sed's s command, read here:
 *
 *   PATTERN       plain characters, '.' for any one character, '^' and '$'
 *                 at its ends for the ends of a line; \X is X.  Anything of
 *                 a regular expression beyond that (* [ \( \{ \+ \? \| \1)
 *                 is an error naming it, never a guess.
 *   REPLACEMENT   '&' is what matched, \n a newline, \X is X; \1..\9 is an
 *                 error (there are no groups).
 *   FLAGS         nothing (the first match of each line) or g (every one).
 *
 * The delimiter is the character after s, as in sed.  Nothing else of sed
 * (other commands, options but -e, several scripts) is read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"
#include "xalloc.h"

#define SED_PATTERN_MAX 256 /* characters of a pattern: matching is O(line * pattern) */

struct sed_atom {
	char c;
	bool any; /* '.' */
};

struct sed_script {
	struct sed_atom pat[SED_PATTERN_MAX];
	size_t npat;
	bool bol, eol; /* ^ and $ */
	char *repl;    /* with SED_MATCH where '&' was */
	size_t nrepl;
	bool global;
};

/* In repl, the byte that stands for what matched: a script, being a C
 * string, holds no NUL of its own. */
#define SED_MATCH '\0'

struct growbuf {
	char *s;
	size_t len, cap;
};

static void put(struct growbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->s = xrealloc(b->s, b->cap);
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

/* sed's error at the script's column, with what and where in the script. */
static int script_error(struct config_lexer *lx, size_t pos, const char *script, size_t i,
			const char *why)
{
	char found[8] = "the end";

	if (i < strlen(script))
		snprintf(found, sizeof(found), "'%c'", script[i]);
	return config__error(lx, pos,
			     "expected sed 's/PATTERN/REPLACEMENT/' with a plain pattern, "
			     "found %s at character %zu of '%.60s': %s",
			     found, i + 1, script, why);
}

/* The pattern of the script, from script[*i] up to the delimiter. */
static int read_pattern(struct config_lexer *lx, size_t pos, const char *script, size_t *i,
			char delim, struct sed_script *s)
{
	size_t start = *i;

	for (; script[*i] && script[*i] != delim; ++*i) {
		char c = script[*i];
		bool any = false;

		if (c == '\\') {
			c = script[++*i];
			if (!c)
				break;
			if (strchr("(){}+?|123456789<>bBwWsS`'", c) && c != delim)
				return script_error(lx, pos, script, *i,
						    "a regular expression; "
						    "lockstep's sed reads plain text, '.', '^' and '$'");
		} else if (c == '^' && *i == start) {
			s->bol = true;
			continue;
		} else if (c == '$' && script[*i + 1] == delim) {
			s->eol = true;
			continue;
		} else if (c == '*' || c == '[' || c == ']') {
			return script_error(lx, pos, script, *i,
					    "a regular expression; lockstep's sed "
					    "reads plain text, '.', '^' and '$' (a backslash before "
					    "the character means the character)");
		} else if (c == '.') {
			any = true;
		}
		if (s->npat == SED_PATTERN_MAX)
			return script_error(lx, pos, script, *i,
					    "a pattern longer than lockstep reads");
		s->pat[s->npat++] = (struct sed_atom){ .c = c, .any = any };
	}
	if (script[*i] != delim)
		return script_error(lx, pos, script, *i, "the pattern's closing delimiter is missing");
	if (s->npat == 0 && !s->bol && !s->eol)
		return script_error(lx, pos, script, *i,
				    "an empty pattern (sed's \"the last one\") "
				    "means nothing here");
	++*i;
	return 0;
}

static int read_replacement(struct config_lexer *lx, size_t pos, const char *script, size_t *i,
			    char delim, struct sed_script *s)
{
	struct growbuf b = { 0 };

	put(&b, "", 0);
	for (; script[*i] && script[*i] != delim; ++*i) {
		char c = script[*i];

		if (c == '&') {
			c = SED_MATCH;
		} else if (c == '\\') {
			c = script[++*i];
			if (!c)
				break;
			if (c >= '1' && c <= '9') {
				free(b.s);
				return script_error(lx, pos, script, *i,
						    "a back-reference; the "
						    "pattern has no groups");
			}
			if (c == 'n')
				c = '\n';
		}
		put(&b, &c, 1);
	}
	if (script[*i] != delim) {
		free(b.s);
		return script_error(lx, pos, script, *i,
				    "the replacement's closing delimiter is "
				    "missing");
	}
	++*i;
	s->repl = b.s;
	s->nrepl = b.len;
	return 0;
}

static int read_script(struct config_lexer *lx, size_t pos, const char *script, struct sed_script *s)
{
	size_t i = 2;
	char delim;
	int r;

	memset(s, 0, sizeof(*s));
	if (script[0] != 's' || !script[1] || script[1] == '\\' || script[1] == '\n')
		return script_error(lx, pos, script, 0, "sed's s command is the one lockstep reads");
	delim = script[1];
	r = read_pattern(lx, pos, script, &i, delim, s);
	if (r == 0)
		r = read_replacement(lx, pos, script, &i, delim, s);
	if (r == 0 && script[i] == 'g')
		s->global = true, i++;
	if (r == 0 && script[i]) {
		free(s->repl);
		s->repl = NULL;
		return script_error(lx, pos, script, i, "after s/// only the flag g is read");
	}
	return r;
}

static bool match_at(const struct sed_script *s, const char *line, size_t n, size_t at)
{
	if (s->npat > n - at || (s->bol && at > 0) || (s->eol && at + s->npat != n))
		return false;
	for (size_t k = 0; k < s->npat; k++)
		if (!s->pat[k].any && s->pat[k].c != line[at + k])
			return false;
	return true;
}

/* One line of the input, edited, into b. */
static void edit_line(const struct sed_script *s, const char *line, size_t n, struct growbuf *b)
{
	size_t i = 0;
	bool done = false;

	while (i <= n) {
		if (!done && match_at(s, line, n, i)) {
			for (size_t k = 0; k < s->nrepl; k++)
				put(b, s->repl[k] == SED_MATCH ? line + i : s->repl + k,
				    s->repl[k] == SED_MATCH ? s->npat : 1);
			done = !s->global;
			if (s->npat > 0) {
				i += s->npat;
				continue;
			}
			/* an empty match (^ or $ alone): the character after it stays */
		}
		if (i < n)
			put(b, line + i, 1);
		i++;
	}
}

/* A word, split into fields as the shell splits an unquoted one (on
 * blanks and newlines, empty fields dropped), appended to words. */
static void put_fields(struct growbuf *words, const char *w, size_t n, bool split, bool *any)
{
	size_t i = 0;

	if (!split) {
		if (*any)
			put(words, " ", 1);
		put(words, w, n);
		*any = true;
		return;
	}
	for (;;) {
		size_t f;

		while (i < n && strchr(" \t\n", w[i]))
			i++;
		if (i == n)
			return;
		for (f = i; i < n && !strchr(" \t\n", w[i]); i++)
			;
		if (*any)
			put(words, " ", 1);
		put(words, w + f, i - f);
		*any = true;
	}
}

/* The next word up to lx->len into lx->out, *at its place: 0, 1 at the
 * end, -EINVAL. */
static int next_word(struct config_lexer *lx, size_t *at, const char *expected)
{
	int r;

	config__skip_blanks(lx);
	if (lx->pos >= lx->len)
		return 1;
	*at = lx->pos;
	lx->out_len = 0;
	r = config__parse_word(lx, expected);
	if (r == 0 && lx->pos == *at) /* a ';' */
		r = config__error(lx, *at, "%s", expected);
	return r;
}

/* The words of echo up to lx->len, joined by a blank. */
static int echo_words(struct config_lexer *lx, struct growbuf *words)
{
	bool first = true, any = false;

	put(words, "", 0);
	for (;;) {
		size_t at;
		int r = next_word(lx, &at, "expected a word or '|' after echo");

		if (r != 0)
			return r < 0 ? r : 0;
		/* -n: no newline, which $(...) drops anyway */
		if (first && lx->pos - at == 2 && !memcmp(lx->s + at, "-n", 2)) {
			first = false;
			continue;
		}
		first = false;
		/* a word with no quote in it is split; "a  b" keeps its blanks */
		put_fields(words, lx->out ? lx->out : "", lx->out_len,
			   !memchr(lx->s + at, '"', lx->pos - at) &&
				   !memchr(lx->s + at, '\'', lx->pos - at),
			   &any);
	}
}

/* sed [-e] SCRIPT from lx->pos to lx->len: the script, and its column. */
static int sed_args(struct config_lexer *lx, char **script, size_t *script_pos)
{
	size_t at;
	int r;

	config__skip_blanks(lx);
	at = lx->pos;
	if (lx->len - at < 3 || memcmp(lx->s + at, "sed", 3) ||
	    (lx->len - at > 3 && !config__is_blank(lx->s[at + 3])))
		return config__error(lx, at,
				     "expected sed after 'echo ... |': lockstep answers no "
				     "other pipeline");
	lx->pos += 3;
	*script = NULL;
	for (int k = 0; k < 2; k++) {
		r = next_word(lx, &at, "expected sed's script");
		if (r < 0)
			return r;
		if (r == 1)
			break;
		/* the source, not the value: a dry read (a branch not taken)
		 * builds none */
		if (k == 0 && lx->pos - at == 2 && !memcmp(lx->s + at, "-e", 2))
			continue;
		*script = xstrndup(lx->out ? lx->out : "", lx->out_len);
		*script_pos = at;
		break;
	}
	config__skip_blanks(lx);
	if (!*script || lx->pos < lx->len) {
		free(*script);
		*script = NULL;
		return config__error(lx, lx->pos,
				     "expected sed [-e] 's/PATTERN/REPLACEMENT/' and "
				     "nothing more");
	}
	return 0;
}

/* The '|' of the pipeline in [p, end), outside quotes; end when none,
 * and *second the place of a second one (or end). */
static size_t find_bar(const struct config_lexer *lx, size_t p, size_t end, size_t *second)
{
	size_t bar = end;
	char q = 0;

	*second = end;
	for (size_t i = p; i < end; i++) {
		char c = lx->s[i];

		if (c == '\\' && q != '\'')
			i++;
		else if (q && c == q)
			q = 0;
		else if (!q && (c == '\'' || c == '"'))
			q = c;
		else if (!q && c == '|' && bar == end)
			bar = i;
		else if (!q && c == '|') {
			*second = i;
			break;
		}
	}
	return bar;
}

static int edit(struct config_lexer *lx, size_t at, const struct sed_script *s,
		const struct growbuf *in, char **out)
{
	struct growbuf b = { 0 };

	put(&b, "", 0);
	for (const char *line = in->s, *nl; line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		edit_line(s, line, nl ? (size_t)(nl - line) : strlen(line), &b);
		if (nl)
			put(&b, "\n", 1);
		if (b.len > CONFIG_VALUE_MAX) {
			free(b.s);
			return config__error(lx, at, "expected a value of at most %d bytes from sed",
					     CONFIG_VALUE_MAX);
		}
	}
	*out = b.s;
	return 0;
}

int config__echo_sed(struct config_lexer *lx, size_t at, size_t p, size_t end, char **out)
{
	size_t save_len = lx->len, save_pos = lx->pos, second, bar, script_pos = 0;
	char *save_out = lx->out, *script = NULL;
	size_t save_out_len = lx->out_len, save_out_cap = lx->out_cap;
	bool save_cmd = lx->in_command;
	enum config_word save_word = lx->word;
	struct growbuf words = { 0 };
	struct sed_script s;
	int r;

	while (p < end && config__is_blank(lx->s[p]))
		p++;
	if (end - p < 4 || memcmp(lx->s + p, "echo", 4) ||
	    (end - p > 4 && !config__is_blank(lx->s[p + 4])))
		return 1;
	bar = find_bar(lx, p, end, &second);
	if (second < end)
		return config__error(lx, second,
				     "expected echo ... | sed 's/A/B/' with one '|', "
				     "found another");
	/* the words and the script are read in place, as a command's
	 * arguments, into a value of their own */
	lx->out = NULL;
	lx->out_len = lx->out_cap = 0;
	lx->in_command = false;
	lx->word = CONFIG_WORD_VALUE;
	lx->pos = p + 4;
	lx->len = bar;
	r = echo_words(lx, &words);
	if (r == 0 && bar < end) {
		lx->pos = bar + 1;
		lx->len = end;
		r = sed_args(lx, &script, &script_pos);
	}
	free(lx->out);
	lx->out = save_out;
	lx->out_len = save_out_len;
	lx->out_cap = save_out_cap;
	lx->in_command = save_cmd;
	lx->word = save_word;
	lx->len = save_len;
	lx->pos = save_pos;
	if (r == 0 && (lx->dry || !script)) {
		*out = words.s; /* dry: "" or what was read; either way unused */
		words.s = NULL;
	} else if (r == 0) {
		r = read_script(lx, script_pos, script, &s);
		if (r == 0) {
			r = edit(lx, at, &s, &words, out);
			free(s.repl);
		}
	}
	free(script);
	free(words.s);
	return r;
}
