/* Settings of parts an app may leave out of its binary (the outbound
 * client, its resolver, the TLS trust, the database): one set in the
 * environment of a binary without its part is ignored with one warning
 * line, so that an environment shared by several apps starts each of them.
 * Any other unknown name is ignored silently, as before. */
#ifndef NET_UNLINKED_H
#define NET_UNLINKED_H

#include "kernel/runtime/config.h"

/* Each part's settings, NULL where it is not linked (net/start.c). */
struct ig_linked_parts {
	const struct ig_settings *client, *dns, *trust, *pg;
};

/* Logs one warning naming every setting of an unlinked part that the
 * environment sets; nothing when there is none. */
void ig_unlinked_settings_warn(const struct ig_linked_parts *linked);

#endif
