/* Outbound https's default trust: the rows of the settings table (a CA
 * bundle and whether it joins or replaces the compiled-in anchors) and the
 * anchors they make. Only the outbound client refers to this file, so an
 * app that calls none links neither it nor the anchors (net/start.c lists
 * the rows weakly). A bundle, when set, is read and parsed by the check at
 * startup; without one nothing of TLS runs then. */
#include "tls.h"
#include "backend.h"
#include "kernel/config.h"
#include "kernel/file.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* Copied into tls_trust_config by the parse. */
static const struct tls_trust_config trust_defaults = { .ca_file = "", .ca_mode = TLS_CA_ADD };

struct tls_trust_config tls_trust_config;

/* In enum tls_ca_mode's order. */
static const struct ig_choice ca_modes = { &tls_trust_config.ca_mode, "add|replace" };

static const struct ig_option trust_rows[] = {
	{ "INGOT_TLS_CA_FILE", IG_OPT_STR, &tls_trust_config.ca_file, 0, 0,
	  "PEM bundle of trust anchors for outbound https, read at startup" },
	{ "INGOT_TLS_CA_MODE", IG_OPT_CHOICE, (void *)&ca_modes, 0, 0,
	  "add: the bundle joins the compiled-in anchors; replace: only the bundle" },
};

static pthread_once_t trust_once = PTHREAD_ONCE_INIT;
static const struct tls_trust *default_trust;
static char trust_error[300];

static void load_default_trust(void)
{
	char why[200];
	size_t len = 0;
	char *pem = NULL;
	const char *ca_file = tls_trust_config.ca_file;
	if (ca_file[0] && !(pem = ig_read_file(ca_file, (size_t)16 << 20, 0, &len, why, sizeof why))) {
		snprintf(trust_error, sizeof trust_error, "INGOT_TLS_CA_FILE: %s", why);
		return;
	}
	default_trust = tls_trust_load(pem, len, tls_trust_config.ca_mode == TLS_CA_REPLACE, why, sizeof why);
	if (!default_trust && ca_file[0])
		snprintf(trust_error, sizeof trust_error, "INGOT_TLS_CA_FILE %s: %s", ca_file, why);
	else if (!default_trust) /* the compiled-in set: none with TLS=none */
		snprintf(trust_error, sizeof trust_error, "%s", why);
	free(pem);
}

const struct tls_trust *ig_tls_default_trust(const char **err)
{
	pthread_once(&trust_once, load_default_trust);
	if (!default_trust && err)
		*err = trust_error;
	return default_trust;
}

static const char *check_trust(char *err, size_t errlen)
{
	if (tls_trust_config.ca_mode == TLS_CA_REPLACE && !tls_trust_config.ca_file[0])
		return "INGOT_TLS_CA_MODE=replace needs INGOT_TLS_CA_FILE";
	const char *why = NULL;
	if (!tls_trust_config.ca_file[0] || ig_tls_default_trust(&why))
		return NULL;
	snprintf(err, errlen, "%s", why);
	return err;
}

const struct ig_settings ig_tls_trust_settings = {
	.part = "TLS trust (outbound https)", .opts = trust_rows, .count = sizeof trust_rows / sizeof trust_rows[0],
	.check = check_trust, .values = &tls_trust_config, .defaults = &trust_defaults, .size = sizeof tls_trust_config,
};
