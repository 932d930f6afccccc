/* The rows of the settings table for outbound https trust: a CA bundle and
 * whether it joins or replaces the compiled-in anchors (trust.c loads
 * them). Only the outbound client refers to these, so an app that calls
 * none links neither them nor the anchors (net/start.c lists the rows
 * weakly). A bundle, when set, is read and parsed by the check at startup;
 * without one nothing of TLS runs then. Not in net/cold.ld's cold block:
 * the start reads these. */
#include "tls.h"
#include "kernel/runtime/config.h"

#include <stdio.h>

/* Copied into ig_tls_trust_config by the parse. */
static const struct ig_tls_trust_config trust_defaults = { .ca_file = "", .ca_mode = TLS_CA_ADD };

struct ig_tls_trust_config ig_tls_trust_config;

/* In enum tls_ca_mode's order. */
static const struct ig_choice ca_modes = { &ig_tls_trust_config.ca_mode, "add|replace" };

static const struct ig_option trust_rows[] = {
	{ "INGOT_TLS_CA_FILE", IG_OPT_STR, &ig_tls_trust_config.ca_file, 0, 0,
	  IG_HELP("PEM bundle of trust anchors for outbound https, read at startup") },
	{ "INGOT_TLS_CA_MODE", IG_OPT_CHOICE, (void *)&ca_modes, 0, 0,
	  IG_HELP("add: the bundle joins the compiled-in anchors; replace: only the bundle") },
};


static const char *check_trust(char *err, size_t errlen)
{
	if (ig_tls_trust_config.ca_mode == TLS_CA_REPLACE && !ig_tls_trust_config.ca_file[0])
		return "INGOT_TLS_CA_MODE=replace needs INGOT_TLS_CA_FILE";
	const char *why = NULL;
	if (!ig_tls_trust_config.ca_file[0] || ig_tls_default_trust(&why))
		return NULL;
	snprintf(err, errlen, "%s", why);
	return err;
}

const struct ig_settings ig_tls_trust_settings = {
	.part = "TLS trust (outbound https)", .opts = trust_rows, .count = sizeof trust_rows / sizeof trust_rows[0],
	.check = check_trust, .values = &ig_tls_trust_config, .defaults = &trust_defaults, .size = sizeof ig_tls_trust_config,
};
