/* Settings of parts an app may leave out of its binary (the outbound
 * client, its resolver, the TLS trust, the database): one set in the
 * environment of a binary without its part is ignored with one warning
 * line, so that an environment shared by several apps starts each of them.
 * Their names are declared settings whatever the binary links: an unknown
 * name is what none declares (net/start.c's warning, with a suggestion). */
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

/* Every optional part's setting names, space-separated, one string each. */
extern const char *const ig_optional_setting_names[4];

#endif
