/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Logging for the outer layer of both binaries (library parts never log).
 * One line per message: newlines become spaces and every other control
 * character is escaped (log_escape), whatever the text came from.  When stderr is the journal (JOURNAL_STREAM matches
 * stderr's device:inode) each line gets a "<N>" priority prefix; on a
 * terminal or a file, a timestamp and the program name.
 */
#ifndef LOCKSTEP_LOG_H
#define LOCKSTEP_LOG_H

enum log_level { LOG_LVL_ERROR = 3, LOG_LVL_WARN = 4, LOG_LVL_INFO = 6, LOG_LVL_DEBUG = 7 };

void log_init(const char *program, enum log_level max_level);
/* Text from a peer made safe for a terminal, a log or a file a person
 * reads: every control character (C0 but tab, DEL, and U+0080..U+009F)
 * becomes "\xNN" ("\u00NN" for C1), so no escape sequence, carriage
 * return or fake log line gets through.  Writes at most size - 1 bytes and
 * a NUL, never half an escape or half a UTF-8 character; returns the
 * length the whole escaped text has (as snprintf). */
size_t log_escape(const char *text, size_t len, char *buf, size_t size);
void log_msg(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A status line at the bottom of a terminal (hostd's progress line):
 * "\r\033[K" and line, no newline.  Every message clears it before its
 * own line, so no caller has to; it shows again at the next log_status.
 * NULL (or "") clears it now, when it is shown. */
void log_status(const char *line);

#define log_error(...) log_msg(LOG_LVL_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LVL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LVL_DEBUG, __VA_ARGS__)

#endif
