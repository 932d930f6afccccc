/* Outbound https's default trust anchors (tls.h's ig_tls_default_trust):
 * the compiled-in set changed by the settings of trust_settings.c, loaded
 * once. Apart from tls.c, so that a binary without the outbound client
 * links neither this nor the anchors; in net/cold.ld's cold block with the
 * rest of net/tls, as only a CA file's check or a first https call runs it. */
#include "tls.h"
#include "backend.h"
#include "kernel/runtime/file.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_once_t trust_once = PTHREAD_ONCE_INIT;
static const struct tls_trust *default_trust;
static char trust_error[300];

static void load_default_trust(void)
{
	char why[200];
	size_t len = 0;
	char *pem = NULL;
	const char *ca_file = ig_tls_trust_config.ca_file;
	if (ca_file[0] && !(pem = ig_read_file(ca_file, (size_t)16 << 20, 0, &len, why, sizeof why))) {
		snprintf(trust_error, sizeof trust_error, "INGOT_TLS_CA_FILE: %s", why);
		return;
	}
	default_trust = ig_tls_trust_load(pem, len, ig_tls_trust_config.ca_mode == TLS_CA_REPLACE, why, sizeof why);
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
