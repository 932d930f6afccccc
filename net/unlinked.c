/* The warning for settings of parts the binary does not link (unlinked.h).
 * Runs once, at the start, after the settings' parse. */
#include "net/unlinked.h"
#include "kernel/log.h"

#include <stdlib.h>
#include <string.h>

__attribute__((cold)) void ig_unlinked_settings_warn(const struct ig_unlinked_part *parts, size_t n)
{
	char names[512];
	size_t len = 0;
	for (size_t p = 0; p < n; p++) {
		if (parts[p].settings)
			continue;
		for (const char *const *name = parts[p].names; *name; name++) {
			size_t k = strlen(*name);
			if (!getenv(*name) || len + k + 2 > sizeof names)
				continue;
			if (len)
				names[len++] = ',';
			memcpy(names + len, *name, k);
			len += k;
		}
	}
	struct ig_logline l;
	if (len && ig_log_begin(&l, IG_LOG_WARN, "settings of parts this app does not link are ignored")) {
		ig_log_str(&l, "ignored", names, len);
		ig_log_end(&l);
	}
}
