// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * $((...)): 64-bit signed integer arithmetic with + - * / %, signs,
 * parentheses, names and nested $((...)).  Overflow and division by zero
 * are errors, not shell's silent wrap-around: a benchmark parameter that
 * wrapped would be wrong without anyone noticing.
 */
#include <stdio.h>
#include <string.h>

#include "config_int.h"

#define OPS "an operator (+ - * / %%)"

static int expr(struct config_lexer *lx, int64_t *out);

static void skip_blanks(struct config_lexer *lx)
{
	while (lx->pos < lx->len && config__is_blank(lx->s[lx->pos]))
		lx->pos++;
}

static int peek(const struct config_lexer *lx, size_t off)
{
	return lx->pos + off < lx->len ? (unsigned char)lx->s[lx->pos + off] : -1;
}

/* Recursion is bounded: a config may be wrong, never crash the reader. */
static int enter(struct config_lexer *lx, size_t pos)
{
	if (lx->depth >= CONFIG_DEPTH_MAX)
		return config__error(lx, pos,
				     "expected at most %d nested parentheses, signs or "
				     "$((...)) in arithmetic",
				     CONFIG_DEPTH_MAX);
	lx->depth++;
	return 0;
}

static int overflow(struct config_lexer *lx, size_t pos, int64_t a, char op, int64_t b)
{
	return config__error(lx, pos,
			     "expected a result within 64-bit signed integers: "
			     "%lld %c %lld overflows",
			     (long long)a, op, (long long)b);
}

static int name_value(struct config_lexer *lx, size_t at, size_t name, size_t len, int64_t *out)
{
	const struct config_var *v = config__lookup(lx->c, lx->s + name, len);
	char shown[CONFIG_SHOW_SIZE], where[300];
	const char *p;

	if (!v) {
		config__warn_unset(lx, at, lx->s + name, len, true);
		*out = 0;
		return 0;
	}
	/* Shell reads an empty variable as 0 too. */
	for (p = v->value; config__is_blank(*p); p++)
		;
	if (*p == '\0') {
		*out = 0;
		return 0;
	}
	if (config__parse_int(v->value, out))
		return 0;
	if (lx->dry) { /* a branch not taken: its values do not matter */
		*out = 0;
		return 0;
	}
	config__show(v->value, shown, sizeof(shown));
	if (v->file)
		snprintf(where, sizeof(where), "set at %s:%d", v->file, v->line);
	else
		snprintf(where, sizeof(where), "a fact");
	return config__error(lx, at, "expected an integer in %.*s, whose value is %s (%s)",
			     (int)len, lx->s + name, shown, where);
}

static int number(struct config_lexer *lx, int64_t *out)
{
	size_t at = lx->pos;
	int64_t v = 0;

	if (lx->s[at] == '0' &&
	    (peek(lx, 1) == 'x' || peek(lx, 1) == 'X' || (peek(lx, 1) >= '0' && peek(lx, 1) <= '9')))
		return config__error(lx, at,
				     "expected a decimal number without a leading 0 (a shell "
				     "would read it as %s)",
				     peek(lx, 1) >= '0' && peek(lx, 1) <= '9' ? "octal"
									      : "hexadecimal");
	for (; peek(lx, 0) >= '0' && peek(lx, 0) <= '9'; lx->pos++) {
		int d = peek(lx, 0) - '0';

		if (v > (INT64_MAX - d) / 10)
			return config__error(lx, at, "expected a number within 64-bit signed integers");
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

static int primary(struct config_lexer *lx, int64_t *out);

/* '(' expr ')', a sign, or $((...)): the nesting kinds. */
static int nested(struct config_lexer *lx, int64_t *out)
{
	size_t at = lx->pos;
	char buf[8], ch = lx->s[at];
	int r = enter(lx, at);

	if (r < 0)
		return r;
	if (ch == '(') {
		lx->pos++;
		r = expr(lx, out);
		skip_blanks(lx);
		if (r == 0 && peek(lx, 0) != ')')
			r = config__error(lx, lx->pos,
					  "expected " OPS " or ')' to close the '(' at "
					  "column %d, found %s",
					  config__column(lx, at),
					  config__describe(lx, lx->pos, buf, sizeof(buf)));
		lx->pos++;
	} else if (ch == '$') {
		lx->pos += 3;
		r = config__arith(lx, at, out);
	} else {
		lx->pos++;
		r = primary(lx, out);
		if (r == 0 && ch == '-') {
			if (*out == INT64_MIN && !lx->dry)
				r = config__error(lx, at,
						  "expected a result within 64-bit signed "
						  "integers: -(%lld) overflows",
						  (long long)*out);
			else if (*out != INT64_MIN)
				*out = -*out;
		}
	}
	lx->depth--;
	return r;
}

static int primary(struct config_lexer *lx, int64_t *out)
{
	size_t at, name, len;
	char buf[8];
	int ch, r;

	skip_blanks(lx);
	at = lx->pos;
	ch = peek(lx, 0);
	if (ch == '(' || ch == '-' || ch == '+' ||
	    (ch == '$' && peek(lx, 1) == '(' && peek(lx, 2) == '('))
		return nested(lx, out);
	if (ch >= '0' && ch <= '9')
		return number(lx, out);
	if (config__is_name_start(ch)) {
		while (config__is_name_char(peek(lx, 0)))
			lx->pos++;
		if (lx->pos - at > CONFIG_NAME_MAX)
			return config__error(lx, at + CONFIG_NAME_MAX,
					     "expected a name of at most %d characters",
					     CONFIG_NAME_MAX);
		return name_value(lx, at, at, lx->pos - at, out);
	}
	if (ch == '$' && peek(lx, 1) == '(')
		return config__error(lx, at,
				     "expected a value, found command substitution '$(': "
				     "lockstep never runs commands; write the value itself");
	if (ch == '$') {
		r = config__scan_ref(lx, &name, &len);
		return r < 0 ? r : name_value(lx, at, name, len, out);
	}
	return config__error(lx, at, "expected a number, a name or '(' in arithmetic, found %s",
			     config__describe(lx, at, buf, sizeof(buf)));
}

static int apply(struct config_lexer *lx, size_t pos, char op, int64_t a, int64_t b, int64_t *out)
{
	bool ovf = false;

	switch (op) {
	case '+': ovf = __builtin_add_overflow(a, b, out); break;
	case '-': ovf = __builtin_sub_overflow(a, b, out); break;
	case '*': ovf = __builtin_mul_overflow(a, b, out); break;
	default: /* '/' and '%' */
		if (b == 0 && lx->dry) {
			*out = 0;
			return 0;
		}
		if (b == 0)
			return config__error(lx, pos,
					     "expected a divisor other than 0: %lld %c 0 "
					     "divides by zero",
					     (long long)a, op);
		if (a == INT64_MIN && b == -1) {
			ovf = op == '/';
			*out = 0;
		} else {
			*out = op == '/' ? a / b : a % b;
		}
	}
	return ovf && !lx->dry ? overflow(lx, pos, a, op, b) : 0;
}

/* One precedence level: operands joined by the operators in ops. */
typedef int operand_fn(struct config_lexer *lx, int64_t *out);

static int level(struct config_lexer *lx, const char *ops, operand_fn *operand, int64_t *out)
{
	int r = operand(lx, out);

	while (r == 0) {
		size_t at;
		int64_t rhs;
		int op;

		skip_blanks(lx);
		at = lx->pos;
		op = peek(lx, 0);
		if (op <= 0 || !strchr(ops, op))
			break;
		if (op == '*' && peek(lx, 1) == '*')
			return config__error(lx, at,
					     "expected " OPS ", found '**': there is no power "
					     "operator");
		lx->pos++;
		r = operand(lx, &rhs);
		if (r == 0)
			r = apply(lx, at, (char)op, *out, rhs, out);
	}
	return r;
}

static int term(struct config_lexer *lx, int64_t *out)
{
	return level(lx, "*/%", primary, out);
}

static int expr(struct config_lexer *lx, int64_t *out)
{
	return level(lx, "+-", term, out);
}

int config__arith(struct config_lexer *lx, size_t open, int64_t *out)
{
	char buf[8];
	int r;

	r = expr(lx, out);
	if (r < 0)
		return r;
	skip_blanks(lx);
	if (peek(lx, 0) == ')' && peek(lx, 1) == ')') {
		lx->pos += 2;
		return 0;
	}
	return config__error(lx, lx->pos,
			     "expected " OPS " or '))' to close the $(( at column %d, "
			     "found %s",
			     config__column(lx, open),
			     config__describe(lx, lx->pos, buf, sizeof(buf)));
}
