/* The TLS backend with no TLS at all (net/tls/backend.h; make TLS=none):
 * for images that must stay small, such as the unikernel, whose size
 * limit BearSSL's engine, X.509 code and trust anchors would eat into.
 * Loading credentials or trust fails with NO_TLS, so a certificate setting
 * stops the start and an https:// call fails with IG_CLIENT_TLS. With
 * neither, no tls_core or tls_engine is ever made: the engine calls below
 * only satisfy the contract and report a closed engine. */
#include "net/tls/backend.h"

#include <stdio.h>

#define NO_TLS "this build has no TLS (built with TLS=none; use TLS=bearssl or TLS=mbedtls)"

int ig_tls_backend_init(char *err, size_t errlen)
{
	snprintf(err, errlen, "%s", NO_TLS);
	return -1;
}

struct tls_credentials *ig_tls_credentials_load(const char *cert_pem, size_t cert_len, const char *key_pem,
					     size_t key_len, char *err, size_t errlen)
{
	(void)cert_pem, (void)cert_len, (void)key_pem, (void)key_len;
	snprintf(err, errlen, "%s", NO_TLS);
	return NULL;
}

struct tls_trust *ig_tls_trust_load(const char *pem, size_t pem_len, bool replace_builtin, char *err, size_t errlen)
{
	(void)pem, (void)pem_len, (void)replace_builtin;
	snprintf(err, errlen, "%s", NO_TLS);
	return NULL;
}

struct tls_trust *ig_tls_trust_load_pem(const char *pem, size_t pem_len, char *err, size_t errlen)
{
	return ig_tls_trust_load(pem, pem_len, true, err, errlen);
}

int ig_tls_backend_set_client_ca(const struct tls_trust *ca, char *err, size_t errlen)
{
	(void)ca;
	snprintf(err, errlen, "%s", NO_TLS);
	return -1;
}

/* Nothing is ever loaded, so there is nothing to count or adopt. */
void ig_tls_credentials_ref(struct tls_credentials *c)
{
	(void)c;
}

void ig_tls_credentials_unref(struct tls_credentials *c)
{
	(void)c;
}

size_t ig_tls_credentials_serial(const struct tls_credentials *c, unsigned char *out, size_t cap)
{
	(void)c, (void)out, (void)cap;
	return 0;
}

int ig_tls_backend_core_set_credentials(struct tls_core *core, const struct tls_credentials *server)
{
	(void)core, (void)server;
	return -1;
}

struct tls_core *ig_tls_backend_core_new(const struct tls_credentials *server, size_t session_cache_bytes)
{
	(void)server, (void)session_cache_bytes;
	return NULL;
}

size_t ig_tls_engine_size(void)
{
	return 0;
}

size_t ig_tls_engine_heap_bytes(void)
{
	return 0;
}

int ig_tls_engine_init_server(struct tls_engine *e, struct tls_core *core)
{
	(void)e, (void)core;
	return -1;
}

int ig_tls_engine_init_client(struct tls_engine *e, struct tls_core *core, const struct tls_trust *trust,
			   const struct tls_peer_name *peer)
{
	(void)e, (void)core, (void)trust, (void)peer;
	return -1;
}

void ig_tls_engine_free(struct tls_engine *e)
{
	(void)e;
}

bool ig_tls_engine_session_get(struct tls_engine *e, struct tls_session *s)
{
	(void)e, (void)s;
	return false;
}

int ig_tls_engine_session_resume(struct tls_engine *e, const struct tls_session *s)
{
	(void)e, (void)s;
	return -1;
}

unsigned ig_tls_engine_state(struct tls_engine *e)
{
	(void)e;
	return TLS_CLOSED;
}

/* No buffer is ever ready: each of the four is empty. */
static unsigned char *no_buffer(struct tls_engine *e, size_t *len)
{
	(void)e;
	*len = 0;
	return NULL;
}

unsigned char *ig_tls_engine_sendrec_buf(struct tls_engine *e, size_t *len) { return no_buffer(e, len); }
unsigned char *ig_tls_engine_recvrec_buf(struct tls_engine *e, size_t *len) { return no_buffer(e, len); }
unsigned char *ig_tls_engine_sendapp_buf(struct tls_engine *e, size_t *len) { return no_buffer(e, len); }
unsigned char *ig_tls_engine_recvapp_buf(struct tls_engine *e, size_t *len) { return no_buffer(e, len); }

static void no_ack(struct tls_engine *e, size_t len)
{
	(void)e, (void)len;
}

void ig_tls_engine_sendrec_ack(struct tls_engine *e, size_t len) { no_ack(e, len); }
void ig_tls_engine_recvrec_ack(struct tls_engine *e, size_t len) { no_ack(e, len); }
void ig_tls_engine_sendapp_ack(struct tls_engine *e, size_t len) { no_ack(e, len); }
void ig_tls_engine_recvapp_ack(struct tls_engine *e, size_t len) { no_ack(e, len); }

void ig_tls_engine_flush(struct tls_engine *e)
{
	(void)e;
}

void ig_tls_engine_close(struct tls_engine *e)
{
	(void)e;
}

bool ig_tls_engine_established(struct tls_engine *e)
{
	(void)e;
	return false;
}

int ig_tls_engine_error(struct tls_engine *e)
{
	(void)e;
	return -1;
}

const char *ig_tls_engine_error_text(struct tls_engine *e)
{
	(void)e;
	return NO_TLS;
}

const char *ig_tls_engine_version(struct tls_engine *e)
{
	(void)e;
	return "none";
}

const char *ig_tls_engine_suite(struct tls_engine *e)
{
	(void)e;
	return "none";
}

const char *ig_tls_engine_alpn(struct tls_engine *e)
{
	(void)e;
	return NULL;
}

bool ig_tls_engine_resumed(struct tls_engine *e)
{
	(void)e;
	return false;
}

const char *ig_tls_engine_peer_subject(struct tls_engine *e)
{
	(void)e;
	return NULL;
}

const char *ig_tls_backend_name(void)
{
	return "none";
}

bool ig_tls_backend_shares_session_cache(void)
{
	return false;
}
