// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The only file of common/ that writes to stderr.  Each message becomes one
 * line handed to one write(2), so lines from several threads or processes
 * sharing stderr never interleave mid-line.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

#define LOG_LINE_MAX 4096

static char log_program[64] = "lockstep";
static enum log_level log_max = LOG_LVL_INFO;
static bool log_journal;
/* log_status's line is on the terminal: the next message clears it (any
 * thread may log, so it is taken atomically) */
static atomic_bool log_status_shown;

/* systemd sets JOURNAL_STREAM to "dev:ino" of the stream it connected; if
 * stderr is still that stream, the journal adds its own timestamps and
 * understands "<N>" priorities. */
static bool stderr_is_journal(void)
{
	const char *env = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	int used = 0;

	if (!env || sscanf(env, "%llu:%llu%n", &dev, &ino, &used) != 2 || env[used] != '\0')
		return false;
	if (fstat(STDERR_FILENO, &st) < 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void log_init(const char *program, enum log_level max_level)
{
	const char *base = program ? strrchr(program, '/') : NULL;

	if (program)
		snprintf(log_program, sizeof(log_program), "%s", base ? base + 1 : program);
	log_max = max_level;
	log_journal = stderr_is_journal();
}

static const char *level_name(enum log_level lvl)
{
	switch (lvl) {
	case LOG_LVL_ERROR: return "error";
	case LOG_LVL_WARN: return "warning";
	case LOG_LVL_INFO: return "info";
	case LOG_LVL_DEBUG: return "debug";
	}
	return "log";
}

static size_t format_prefix(enum log_level lvl, char *buf, size_t size)
{
	struct timespec ts;
	struct tm tm;
	int n;

	if (log_journal)
		return (size_t)snprintf(buf, size, "<%d>", (int)lvl);
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	n = snprintf(buf, size, "%04d-%02d-%02d %02d:%02d:%02d.%03ld %s: %s: ", tm.tm_year + 1900,
		     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		     ts.tv_nsec / 1000000, log_program, level_name(lvl));
	return n < 0 ? 0 : (size_t)n >= size ? size - 1 : (size_t)n;
}

size_t log_escape(const char *text, size_t len, char *buf, size_t size)
{
	size_t need = 0, out = 0;
	bool full = size == 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];
		char esc[8];
		size_t n;
		const char *piece = esc;
		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			n = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", c);
		} else if (c == 0xc2 && i + 1 < len && (unsigned char)text[i + 1] >= 0x80 &&
			   (unsigned char)text[i + 1] <= 0x9f) {
			n = (size_t)snprintf(esc, sizeof(esc), "\\u%04x", (unsigned char)text[++i]);
		} else {
			/* a UTF-8 character stays whole: its lead byte and continuations */
			n = 1;
			while (c >= 0xc0 && i + n < len &&
			       ((unsigned char)text[i + n] & 0xc0) == 0x80 && n < 4)
				n++;
			piece = text + i;
			i += n - 1;
		}
		need += n;
		if (!full && out + n < size) {
			memcpy(buf + out, piece, n);
			out += n;
		} else {
			full = true;
		}
	}
	if (size)
		buf[out] = '\0';
	return need;
}

static void write_all_stderr(const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(STDERR_FILENO, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

#define LOG_STATUS_CLEAR "\r\033[K"

void log_status(const char *line)
{
	int saved_errno = errno;
	if (line && line[0]) {
		char buf[LOG_LINE_MAX];
		int n = snprintf(buf, sizeof(buf), LOG_STATUS_CLEAR "%s", line);
		write_all_stderr(buf, n < 0			 ? 0
				      : (size_t)n >= sizeof(buf) ? sizeof(buf) - 1
								 : (size_t)n);
		atomic_store(&log_status_shown, true);
	} else if (atomic_exchange(&log_status_shown, false)) {
		write_all_stderr(LOG_STATUS_CLEAR, sizeof(LOG_STATUS_CLEAR) - 1);
	}
	errno = saved_errno;
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	char line[LOG_LINE_MAX], msg[LOG_LINE_MAX];
	int saved_errno = errno;
	size_t len, room;
	va_list ap;
	int n;

	if (lvl > log_max)
		return;
	len = format_prefix(lvl, line, sizeof(line));
	room = sizeof(line) - len - 1; /* keep one byte for the '\n' */
	errno = saved_errno;	       /* so that "%m" names the caller's error */
	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	bool cut = (size_t)n >= sizeof(msg);
	if (cut)
		n = (int)sizeof(msg) - 1;
	/* One message, one line: the journal and line-based readers rely on it. */
	for (char *p = msg; p < msg + n; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	size_t whole = log_escape(msg, (size_t)n, line + len, room + 1);
	size_t got = strlen(line + len);
	if (whole > got || cut) {
		/* cut short: say so within the line, after a whole character */
		if (got > room - 3)
			got = room - 3;
		while (got > 0 && ((unsigned char)line[len + got] & 0xc0) == 0x80)
			got--;
		memcpy(line + len + got, "...", 3);
		got += 3;
	}
	len += got;
	line[len++] = '\n';
	if (atomic_exchange(&log_status_shown, false))
		write_all_stderr(LOG_STATUS_CLEAR, sizeof(LOG_STATUS_CLEAR) - 1);
	while (write(STDERR_FILENO, line, len) < 0 && errno == EINTR)
		;
	errno = saved_errno;
}
