/* Settings of parts an app may leave out of its binary (the outbound
 * client, its resolver, the TLS trust, the database): net/start.c names
 * them, and one set in the environment of a binary without its part is
 * ignored with one warning line, so that an environment shared by several
 * apps starts each of them. Any other unknown name is ignored silently,
 * as before. */
#ifndef NET_UNLINKED_H
#define NET_UNLINKED_H

#include <stddef.h>

#include "kernel/config.h"

struct ig_unlinked_part {
	const struct ig_settings *settings; /* NULL: the part is not linked */
	const char *const *names;           /* its settings' names, NULL-ended */
};

/* Logs one warning naming every setting of an unlinked part that the
 * environment sets; nothing when there is none. */
void ig_unlinked_settings_warn(const struct ig_unlinked_part *parts, size_t n);

#endif
