// SPDX-License-Identifier: GPL-2.0-or-later
#include "uv_errno.h"

#include <errno.h>
#include <uv.h>

/* libuv's own codes lie in [-4095, -3000] (uv/errno.h: UV__EOF is -4095,
 * UV__EAI_ADDRFAMILY -3000); Linux's errno values are below 200. */
#define UV_OWN_LOWEST (-4095)
#define UV_OWN_HIGHEST (-3000)

_Static_assert(UV_EPIPE == -EPIPE && UV_EINVAL == -EINVAL && UV_ENOMEM == -ENOMEM &&
		       UV_EADDRINUSE == -EADDRINUSE && UV_ECONNRESET == -ECONNRESET,
	       "libuv's UV_E* codes are -errno on Linux");
_Static_assert(UV_EOF >= UV_OWN_LOWEST && UV_EOF <= UV_OWN_HIGHEST &&
		       UV_EAI_ADDRFAMILY >= UV_OWN_LOWEST && UV_EAI_ADDRFAMILY <= UV_OWN_HIGHEST,
	       "libuv's own codes where this file expects them");

int errno_from_uv(int r)
{
	if (r > UV_OWN_HIGHEST || r < UV_OWN_LOWEST)
		return r;
	switch (r) {
	case UV_EOF: return -EPIPE;
	case UV_EAI_MEMORY: return -ENOMEM;
	case UV_EAI_AGAIN: return -EAGAIN;
	case UV_ECHARSET: return -EILSEQ;
	default: return -EIO;
	}
}
