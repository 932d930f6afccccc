/* SIGHUP: the JWT key set (net/auth, when linked) and the HTTPS
 * certificate and key read again from their files, on core 0; the
 * certificate is handed to every core, which adopts it on its own loop
 * (ig_server_on_core_wake); open connections keep what they began with.
 * A reload that fails keeps the old material. Only an operator's signal
 * runs this: net/cold.ld keeps it off the startup and request pages. */
#include "server.h"
#include "ingot/log.h"
#include "net/tls/tls.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

/* The newest credentials a reload loaded (the startup's stay with
 * ig_http_server.tls): one reference, replaced by the next reload, so
 * that repeated reloads hold at most this one beyond what cores use. */
static struct tls_credentials *reloaded;

/* Cores told to adopt and not done yet: the last to adopt logs the
 * reload, so that once the line is out every core serves the new
 * certificate. A core's flag raised from 0 counts one, and each time a
 * core takes its flag down counts one off (two reloads before a core
 * turns are one adoption, of the newer). */
static _Atomic int adopting;
/* The reloaded certificate's serial, for the line: written by core 0
 * before any core is told, read by the last to adopt, which may still
 * be reading the last one's when a second SIGHUP writes it: the lock
 * keeps the line's serial whole. */
static char serial[41];
static pthread_mutex_t serial_lock = PTHREAD_MUTEX_INITIALIZER;

static void log_reload(enum ig_log_level level, const char *msg, const char *key, const char *value)
{
	struct ig_logline l;
	if (ig_log_begin(&l, level, msg)) {
		if (key)
			ig_log_cstr(&l, key, value);
		ig_log_end(&l);
	}
}

static void adopted(void)
{
	if (atomic_fetch_sub(&adopting, 1) != 1)
		return;
	char newest[sizeof serial];
	pthread_mutex_lock(&serial_lock);
	memcpy(newest, serial, sizeof serial);
	pthread_mutex_unlock(&serial_lock);
	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_INFO, "TLS certificate reloaded")) {
		ig_log_cstr(&l, "cert", ig_server_config.tls_cert);
		if (newest[0])
			ig_log_cstr(&l, "serial", newest);
		ig_log_end(&l);
	}
}

/* net/auth's, in a binary whose door checks JWTs; NULL otherwise (the
 * runtime is an archive: a weak reference links nothing in). */
void ig_jwks_sighup(void) __attribute__((weak));

void ig_server_reload(void)
{
	if (ig_jwks_sighup)
		ig_jwks_sighup();
	const struct http_config *c = &ig_server_config;
	if (!ig_http_server.tls) {
		log_reload(IG_LOG_INFO, "SIGHUP: nothing to reload", "reason", "TLS is off");
		return;
	}
	if (c->tls_cert_pem[0] || c->tls_key_pem[0]) {
		log_reload(IG_LOG_WARN, "SIGHUP: TLS material not reloaded", "reason",
			   "given as INGOT_TLS_CERT_PEM or INGOT_TLS_KEY_PEM, which cannot change while running");
		return;
	}
	char err[256];
	struct tls_credentials *cred = ig_tls_reload_credentials(c->tls_cert, c->tls_key, err, sizeof err);
	if (!cred) {
		log_reload(IG_LOG_ERROR, "TLS reload failed: the old certificate stays", "error", err);
		return;
	}
	pthread_mutex_lock(&serial_lock);
	ig_tls_credentials_serial_hex(cred, serial, sizeof serial);
	pthread_mutex_unlock(&serial_lock);
	atomic_fetch_add(&adopting, 1); /* until every core is told */
	for (int i = 0; i < ig_http_server.core_count; i++) {
		struct http_core *core = &ig_http_server.cores[i];
		if (!core->tls)
			continue; /* not set up: it serves nothing */
		ig_tls_core_post_credentials(core->tls, cred);
		/* Counted before the flag can be seen, so never below zero. */
		atomic_fetch_add(&adopting, 1);
		if (atomic_exchange(&core->tls_reload_requested, 1))
			atomic_fetch_sub(&adopting, 1); /* already raised: one adoption */
		ig_server_wake_core(core);
	}
	if (reloaded)
		ig_tls_credentials_unref(reloaded);
	reloaded = cred;
	adopted();
}

void ig_server_tls_adopt(struct http_core *core)
{
	if (ig_tls_core_adopt_credentials(core->tls) < 0) {
		struct ig_logline l;
		if (ig_log_begin(&l, IG_LOG_ERROR, "TLS reload failed on a core: it keeps the old certificate")) {
			ig_log_int(&l, "core", core->index);
			ig_log_end(&l);
		}
	}
	adopted();
}
