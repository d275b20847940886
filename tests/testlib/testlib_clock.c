// SPDX-License-Identifier: GPL-2.0-or-later
#include "testlib.h"

static int64_t fake_now;

int64_t testlib_clock_now(void)
{
	return fake_now;
}

void testlib_clock_set(int64_t now_ns)
{
	fake_now = now_ns;
}

int64_t testlib_clock_advance(int64_t delta_ns)
{
	fake_now += delta_ns;
	return fake_now;
}
