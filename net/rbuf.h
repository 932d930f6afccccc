/* The read buffer behind an engine's lend (net/transport.h), as both HTTP
 * engines keep it: a fixed-size block from a per-core pool, taken when
 * bytes are about to arrive, with the unread bytes [pos, len) moved to its
 * front once its tail is used up. Giving it back is the engine's. */
#ifndef NET_RBUF_H
#define NET_RBUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernel/runtime/pool.h"

/* Room for incoming bytes in *buf (size bytes, taken from pool if NULL):
 * returns where they go and sets *cap, or NULL when the pool is empty or
 * the buffer holds size unread bytes (reading pauses). */
static inline char *ig_rbuf_lend(struct ig_pool *pool, char **buf, uint32_t *pos, uint32_t *len,
				 size_t size, size_t *cap)
{
	if (!*buf) {
		*buf = ig_pool_take(pool);
		if (!*buf)
			return NULL;
		*pos = *len = 0;
	}
	if (*len == size && *pos > 0) {
		memmove(*buf, *buf + *pos, *len - *pos);
		*len -= *pos;
		*pos = 0;
	}
	*cap = size - *len;
	return *cap ? *buf + *len : NULL;
}

#endif
