/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Logging for the outer layer of both binaries (library parts never log).
 * One line per message.  When stderr is the journal (JOURNAL_STREAM matches
 * stderr's device:inode) each line gets a "<N>" priority prefix; on a
 * terminal or a file, a timestamp and the program name.
 */
#ifndef LOCKSTEP_LOG_H
#define LOCKSTEP_LOG_H

enum log_level { LOG_LVL_ERROR = 3, LOG_LVL_WARN = 4, LOG_LVL_INFO = 6, LOG_LVL_DEBUG = 7 };

void log_init(const char *program, enum log_level max_level);
void log_msg(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_LVL_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LVL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LVL_DEBUG, __VA_ARGS__)

#endif
