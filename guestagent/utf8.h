/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Turning a child's raw output into text the protocol accepts: strictly
 * valid UTF-8 without NUL, cut into pieces that fit one output message.
 */
#ifndef GUESTAGENT_UTF8_H
#define GUESTAGENT_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Replaces, in place, every byte that is not part of a valid UTF-8 sequence
 * (and every NUL) with '?', so the length never changes.  Returns how many
 * bytes are done: all n when final, else it stops before a sequence that is
 * valid so far but cut by the end of buf (at most 3 bytes), which the caller
 * keeps and passes again in front of the next read.
 */
size_t utf8_sanitize(char *buf, size_t n, bool final);

/*
 * The length of the longest prefix of valid UTF-8 text s[0..n) that has at
 * most max_raw bytes, costs at most max_escaped bytes once escaped as a JSON
 * string, and does not split a sequence.
 */
size_t utf8_chunk_len(const char *s, size_t n, size_t max_raw, size_t max_escaped);

#endif
