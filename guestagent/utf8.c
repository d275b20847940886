// SPDX-License-Identifier: GPL-2.0-or-later
#include "utf8.h"

/*
 * The length of the sequence a lead byte starts and the range its second
 * byte must fall in (Unicode table 3-7), which rules out overlong forms,
 * surrogates and code points above U+10FFFF.  0 for a byte that cannot
 * start a sequence.
 */
static unsigned utf8_lead(unsigned char c, unsigned char *lo, unsigned char *hi)
{
	*lo = 0x80;
	*hi = 0xBF;
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		return 2;
	if (c >= 0xE0 && c <= 0xEF) {
		if (c == 0xE0)
			*lo = 0xA0;
		else if (c == 0xED)
			*hi = 0x9F;
		return 3;
	}
	if (c >= 0xF0 && c <= 0xF4) {
		if (c == 0xF0)
			*lo = 0x90;
		else if (c == 0xF4)
			*hi = 0x8F;
		return 4;
	}
	return 0;
}

size_t utf8_sanitize(char *buf, size_t n, bool final)
{
	unsigned char *s = (unsigned char *)buf;
	size_t i = 0;

	while (i < n) {
		unsigned char lo, hi;
		unsigned len = utf8_lead(s[i], &lo, &hi), k;

		if (len == 1) {
			if (s[i] == '\0')
				s[i] = '?';
			i++;
			continue;
		}
		for (k = 1; k < len && i + k < n; k++) {
			unsigned char c = s[i + k];

			if (k == 1 ? (c < lo || c > hi) : (c < 0x80 || c > 0xBF))
				break;
		}
		if (len && k == len) {
			i += len;
			continue;
		}
		/* Valid so far but cut by the end of the buffer: keep it. */
		if (len && i + k == n && !final)
			return i;
		/* Only the lead byte goes: what follows is looked at again. */
		s[i++] = '?';
	}
	return n;
}

/* What json-c makes of a byte inside a string (\n, \", \/, \u001b, ...). */
static size_t utf8_escaped_cost(unsigned char c)
{
	switch (c) {
	case '\b':
	case '\f':
	case '\n':
	case '\r':
	case '\t':
	case '"':
	case '\\':
	case '/': return 2;
	default: return c < 0x20 ? 6 : 1;
	}
}

size_t utf8_chunk_len(const char *s, size_t n, size_t max_raw, size_t max_escaped)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, cost = 0;

	while (i < n) {
		unsigned char lo, hi;
		unsigned len = utf8_lead(u[i], &lo, &hi);
		size_t c;

		/* Input is valid, but never step past n on a stray byte. */
		if (len == 0 || i + len > n)
			len = 1;
		c = u[i] < 0x80 ? utf8_escaped_cost(u[i]) : len;
		if (i + len > max_raw || cost + c > max_escaped)
			break;
		i += len;
		cost += c;
	}
	return i;
}
