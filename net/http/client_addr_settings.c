/* INGOT_TRUSTED_PROXIES, the row of the settings table that says whose
 * Forwarded / X-Forwarded-For a client's address is taken from
 * (client_addr.h), and its check, which parses the CIDRs once at startup. */
#include "client_addr.h"

#include <stddef.h>

/* The setting's one value, the list's text (struct ig_trusted_proxies
 * begins with it): its CIDRs are derived, so the defaults are a pointer,
 * not the whole struct's 560 bytes of the start's rodata. */
static const char *const trusted_defaults = "";
_Static_assert(offsetof(struct ig_trusted_proxies, list) == 0, "the settings' defaults are the list alone");

static const struct ig_option trusted_rows[] = {
	{ "INGOT_TRUSTED_PROXIES", IG_OPT_STR, &ig_trusted_proxies.list, 0, 0,
	  IG_HELP("proxies whose Forwarded/X-Forwarded-For name the client (rate limits' address), comma-separated "
	  "addresses or CIDRs (10.0.0.0/8, 2001:db8::/32); not set: the peer is the client") },
};

__attribute__((cold)) static const char *check_trusted(char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	/* Unset, the usual case: nothing to parse, and the parser's code (in
	   the cold block, net/cold.ld) is not faulted in. */
	if (!*ig_trusted_proxies.list) {
		ig_trusted_proxies.count = 0;
		return NULL;
	}
	return ig_trusted_parse(&ig_trusted_proxies);
}

const struct ig_settings ig_client_addr_settings = {
	.part = "client address", .opts = trusted_rows, .count = IG_COUNTOF(trusted_rows), .check = check_trusted,
	.values = &ig_trusted_proxies, .defaults = &trusted_defaults, .size = sizeof trusted_defaults,
};
