// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The rest of the shell flow MMTests' configs use, beside if ... fi
 * (config_cond.c):
 *
 *   [ $X -lt 4 ] && export X=4        the statement is read when the test
 *   [ -z "$Y" ] || Y=default          says so, dry otherwise
 *   case $NAS_CLASS in                literal (glob) patterns, | between
 *   C|c) X=1 ;;                       them, the first match taken, ;; to
 *   *) die "no class $NAS_CLASS" ;;   end a branch
 *   esac
 *
 * A case lives on the same stack as if blocks, so that branches nest and
 * are read dry the same way.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"
#include "xalloc.h"

static bool at_word(const struct config_lexer *lx, const char *w)
{
	size_t n = strlen(w), p = lx->pos;

	return lx->len - p >= n && !memcmp(lx->s + p, w, n) &&
	       (p + n == lx->len || config__is_blank(lx->s[p + n]) || lx->s[p + n] == ';');
}

int config__test_statement(struct config_lexer *lx)
{
	bool res = false, dry = lx->dry;
	int r = config__bracket(lx, &res, "the start of the line");

	while (r == 0) {
		bool is_and, runs;

		config__skip_blanks(lx);
		if (lx->len - lx->pos < 2 ||
		    (memcmp(lx->s + lx->pos, "&&", 2) != 0 && memcmp(lx->s + lx->pos, "||", 2) != 0))
			return config__error(lx, lx->pos,
					     "expected '&&' or '||' and a statement "
					     "after the test: a test alone does nothing");
		is_and = lx->s[lx->pos] == '&';
		lx->pos += 2;
		config__skip_blanks(lx);
		/* as the shell: && reads its right side when the left held, || when not */
		runs = is_and == res;
		lx->dry = dry || !runs;
		if (at_word(lx, "[") || at_word(lx, "[[")) {
			bool rhs = false;

			r = config__bracket(lx, &rhs, is_and ? "'&&'" : "'||'");
			lx->dry = dry;
			if (runs)
				res = rhs;
			continue;
		}
		if (lx->pos == lx->len || lx->s[lx->pos] == '#') {
			lx->dry = dry;
			return config__error(lx, lx->pos, "expected a statement after '%s'",
					     is_and ? "&&" : "||");
		}
		r = config__statements(lx);
		lx->dry = dry;
		return r;
	}
	return r;
}

int config__case(struct config_lexer *lx)
{
	struct config_if *top;
	size_t at = lx->pos;
	bool outer = !lx->dry;
	char *word;
	int r;

	if (lx->nifs == CONFIG_IF_DEPTH_MAX)
		return config__error(lx, at, "expected at most %d nested 'if' and 'case' blocks",
				     CONFIG_IF_DEPTH_MAX);
	lx->pos += 4;
	config__skip_blanks(lx);
	lx->out_len = 0;
	r = config__parse_word(lx, "expected a word after 'case'");
	if (r < 0)
		return r;
	word = xstrndup(lx->out ? lx->out : "", lx->out_len);
	config__skip_blanks(lx);
	if (!at_word(lx, "in")) {
		free(word);
		return config__error(lx, lx->pos, "expected 'in' after the word of 'case'");
	}
	lx->pos += 2;
	config__skip_blanks(lx);
	if (lx->pos < lx->len && lx->s[lx->pos] != '#') {
		free(word);
		return config__error(lx, lx->pos,
				     "expected the end of the line after 'case ... "
				     "in': each pattern on a line of its own");
	}
	top = &lx->ifs[lx->nifs++];
	*top = (struct config_if){ .line = lx->line,
				   .column = config__column(lx, at),
				   .is_case = true,
				   .word = word,
				   .taken = !outer,
				   .in_else = true /* a pattern is expected */ };
	config__update_dry(lx);
	return 0;
}

/* PAT|PAT) at lx->pos: the branch is taken when one matches, and no
 * earlier one was. */
static int patterns(struct config_lexer *lx, struct config_if *top)
{
	bool match = false;

	for (;;) {
		size_t p = lx->pos;
		char pat[256];

		while (p < lx->len && !strchr("|) \t", lx->s[p]))
			p++;
		if (p == lx->pos || p == lx->len || p - lx->pos >= sizeof(pat))
			return config__error(lx, lx->pos,
					     "expected a pattern and ')' in the case of "
					     "line %d, or 'esac'",
					     top->line);
		snprintf(pat, sizeof(pat), "%.*s", (int)(p - lx->pos), lx->s + lx->pos);
		/* quotes around a literal pattern change nothing for it */
		if ((pat[0] == '"' || pat[0] == '\'') && strlen(pat) > 1 &&
		    pat[strlen(pat) - 1] == pat[0]) {
			memmove(pat, pat + 1, strlen(pat));
			pat[strlen(pat) - 1] = '\0';
		}
		match |= fnmatch(pat, top->word, 0) == 0;
		lx->pos = p;
		config__skip_blanks(lx);
		if (lx->pos < lx->len && lx->s[lx->pos] == ')')
			break;
		if (lx->pos == lx->len || lx->s[lx->pos] != '|')
			return config__error(lx, lx->pos, "expected '|' or ')' after the pattern");
		lx->pos++;
		config__skip_blanks(lx);
	}
	lx->pos++;
	top->active = !top->taken && match;
	top->taken |= match;
	top->in_else = false;
	config__update_dry(lx);
	return 0;
}

int config__case_line(struct config_lexer *lx)
{
	struct config_if *top = &lx->ifs[lx->nifs - 1];

	if (at_word(lx, "esac")) {
		free(top->word);
		top->word = NULL;
		lx->nifs--;
		config__update_dry(lx);
		lx->pos += 4;
		config__skip_blanks(lx);
		if (lx->pos < lx->len && lx->s[lx->pos] == ';')
			lx->pos++;
		return 0;
	}
	if (lx->len - lx->pos >= 2 && !memcmp(lx->s + lx->pos, ";;", 2)) {
		lx->pos += 2;
		top->active = false;
		top->in_else = true;
		config__update_dry(lx);
		return 0;
	}
	if (top->in_else)
		return patterns(lx, top);
	return 1;
}
