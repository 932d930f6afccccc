/* The mbedtls 2.28 backend of net/tls/backend.h (make TLS=mbedtls), built
 * against the project's own configuration (tools/deps/mbedtls_config.h).
 * mbedtls does its I/O through callbacks, so BearSSL's four-buffer engine
 * is emulated with staging buffers inside struct tls_engine: the callbacks
 * set with mbedtls_ssl_set_bio read records from one and write records to
 * another, and every call that moves bytes steps mbedtls as far as it goes.
 *
 * Memory: mbedtls allocates its record buffers (16 KiB in, 8 KiB out) and
 * its handshake and cipher state with calloc, on the request path, and
 * ig_tls_engine_free releases them; that is accepted for the optional backend.
 * struct tls_engine itself is fixed-size (ig_tls_engine_size).
 *
 * Threads: mbedtls is built without locks, and it writes into key objects
 * as it uses them (RSA blinding values, a cached Montgomery constant), so
 * nothing mutable is shared: each core parses its own copy of the server's
 * chain and key and has its own DRBG, configs and session cache; the
 * client's trust anchors stay DER, shared and read-only, and are parsed
 * afresh for each verification (the CA callback).
 * A reload gives a core new credentials: it parses them into a new
 * generation (config, chain, key, session cache) and frees the old one
 * when the last connection begun with it ends.
 * Mutual TLS: the server asks for a client certificate (authmode
 * optional: none, or one that fails, leaves the connection
 * unauthenticated, as BearSSL's tolerant mode does) and checks it against
 * the client CAs through the same CA callback; the leaf's CN is kept. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/random.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/ecp.h>
#include <mbedtls/oid.h>
#include <mbedtls/pem.h>
#include <mbedtls/pk.h>
#include <mbedtls/platform_util.h>
#include <mbedtls/ssl.h>
#include <mbedtls/ssl_cache.h>
#include <mbedtls/ssl_internal.h> /* mbedtls_ssl_flush_output: 2.28 has no public flush */
#include <mbedtls/version.h>
#include <mbedtls/x509_crt.h>

#include "net/tls/anchors.h"
#include "net/tls/backend.h"

/* Staging buffers per connection. Records arrive in IN_STAGE and leave from
 * OUT_STAGE; plaintext waits in RECVAPP_STAGE for the engine above and in
 * SENDAPP_STAGE until a record is made of it. Any size works: smaller means
 * more calls per record, larger more memory per connection (measured with
 * 500 idle connections: about 22 KiB each with 2 KiB stages, 30 KiB with
 * 4 KiB ones). */
#define IN_STAGE      2048
#define OUT_STAGE     2048
#define RECVAPP_STAGE 2048
#define SENDAPP_STAGE 2048

/* The Certificate handshake message must fit one output record (see
 * MBEDTLS_SSL_OUT_CONTENT_LEN in the config): header, list length, and a
 * length before each certificate. */
#define CERT_MSG_OVERHEAD 7
#define CERT_ENTRY_OVERHEAD 3

#define TLS_RECORD_HANDSHAKE 0x16

enum engine_phase {
	PHASE_HANDSHAKE,
	PHASE_OPEN,
	PHASE_CLOSING, /* sending close_notify */
	PHASE_CLOSED,  /* cleanly */
	PHASE_FAILED,
};

struct tls_credentials {
	/* NUL-terminated PEM copies (mbedtls's PEM parsers want the NUL);
	   each core parses its own objects from them. */
	unsigned char *chain_pem, *key_pem;
	size_t chain_len, key_len; /* including the NUL */
	_Atomic unsigned refs;
};

struct tls_anchor {
	const unsigned char *der, *subject; /* subject: the Name's whole DER */
	size_t der_len, subject_len;
};

struct tls_trust {
	unsigned char *owned_der; /* certificates from a PEM bundle */
	size_t count;
	struct tls_anchor anchors[];
};

/* A core's server side, from the time it adopts credentials until the
 * last connection begun with them ends. */
struct server_gen {
	struct tls_core *core;
	mbedtls_ssl_config conf;
	mbedtls_x509_crt chain;
	mbedtls_pk_context key;
	mbedtls_ssl_cache_context cache;
	bool has_cache;
	struct tls_gen_use use;
};

struct tls_core {
	mbedtls_ctr_drbg_context drbg;
	mbedtls_ssl_config client_conf;
	struct server_gen *gen; /* NULL: client role only */
	size_t cache_bytes;     /* what each generation's cache holds */
	/* The engine whose mbedtls call is on this core's stack: the callbacks
	   mbedtls gives only the config's context (CA lookup, session cache)
	   find their connection here. */
	struct tls_engine *active;
};

struct tls_engine {
	mbedtls_ssl_context ssl;
	struct tls_core *core;
	struct server_gen *gen; /* server role: released by ig_tls_engine_free */
	const struct tls_trust *trust;
	enum engine_phase phase;
	int error;
	uint32_t verify_flags; /* at failure: why the peer's chain failed */
	bool started; /* a client's ClientHello waits for the first call */
	bool established, resumed;
	bool peer_cert; /* server: the verify callback saw a client leaf (subject) */
	bool out_blocked;  /* mbedtls holds records that did not fit in out[] */
	bool flush_wanted, close_wanted, close_sent;
	uint8_t peer_alert;   /* the fatal alert received, if any */
	int first_byte;       /* of the peer's first record, -1 before it */
	uint8_t ip_len;       /* client to an IP literal: its address */
	unsigned char ip[16];
	uint8_t offered_id_len; /* client: the session offered for resumption */
	unsigned char offered_id[32];
	char subject[TLS_SUBJECT_MAX]; /* server, mutual TLS: the client leaf's CN */
	size_t in_head, in_tail, out_head, out_tail;
	size_t in_want; /* handshake: the bytes mbedtls asked for last */
	size_t recvapp_head, recvapp_tail, sendapp_len;
	size_t sendapp_inflight; /* handed to mbedtls_ssl_write, not yet done */
	unsigned char in[IN_STAGE], out[OUT_STAGE];
	unsigned char recvapp[RECVAPP_STAGE], sendapp[SENDAPP_STAGE];
};

/* ---- policy ---- */

static const int suites[] = {
	MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	MBEDTLS_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	MBEDTLS_TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	MBEDTLS_TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	MBEDTLS_TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
	0,
};

static const struct {
	int id;
	const char *iana;
} suite_names[] = {
	{MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"},
	{MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"},
	{MBEDTLS_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	 "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"},
	{MBEDTLS_TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"},
	{MBEDTLS_TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"},
	{MBEDTLS_TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
	 "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"},
};

/* Key exchange: X25519 and P-256. A client also offers P-384: in TLS 1.2
 * the list also says which curves the client accepts in the server's
 * certificate, and mbedtls checks that certificate's key against it. */
static const mbedtls_ecp_group_id server_curves[] = {
	MBEDTLS_ECP_DP_CURVE25519, MBEDTLS_ECP_DP_SECP256R1, MBEDTLS_ECP_DP_NONE,
};
static const mbedtls_ecp_group_id client_curves[] = {
	MBEDTLS_ECP_DP_CURVE25519, MBEDTLS_ECP_DP_SECP256R1, MBEDTLS_ECP_DP_SECP384R1, MBEDTLS_ECP_DP_NONE,
};

static const int sig_hashes[] = {MBEDTLS_MD_SHA256, MBEDTLS_MD_SHA384, MBEDTLS_MD_SHA512, MBEDTLS_MD_NONE};

static const char *alpn_protocols[] = {"http/1.1", NULL};

/* Peer certificates: SHA-2 signatures, RSA of 2048 bits or more, P-256/384. */
static const mbedtls_x509_crt_profile cert_profile = {
	.allowed_mds = MBEDTLS_X509_ID_FLAG(MBEDTLS_MD_SHA256) | MBEDTLS_X509_ID_FLAG(MBEDTLS_MD_SHA384) |
		       MBEDTLS_X509_ID_FLAG(MBEDTLS_MD_SHA512),
	.allowed_pks = 0xFFFFFFF,
	.allowed_curves = MBEDTLS_X509_ID_FLAG(MBEDTLS_ECP_DP_SECP256R1) |
			  MBEDTLS_X509_ID_FLAG(MBEDTLS_ECP_DP_SECP384R1),
	.rsa_min_bitlen = 2048,
};

/* ---- randomness ---- */

/* The DRBGs' only entropy source, for seeding and every reseed. getrandom
 * blocks until the kernel's pool is initialised (early boot as PID 1) rather
 * than return weak bytes; a failure fails the handshake. */
static int entropy_getrandom(void *unused, unsigned char *buf, size_t len)
{
	(void)unused;
	while (len > 0) {
		ssize_t n = getrandom(buf, len, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return MBEDTLS_ERR_CTR_DRBG_ENTROPY_SOURCE_FAILED;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int seed_drbg(mbedtls_ctr_drbg_context *drbg)
{
	static const unsigned char personal[] = "ingot tls core";
	mbedtls_ctr_drbg_init(drbg);
	return mbedtls_ctr_drbg_seed(drbg, entropy_getrandom, NULL, personal, sizeof personal - 1);
}

static pthread_once_t warm_once = PTHREAD_ONCE_INIT;
static int warm_error; /* errno of getrandom, or an mbedtls code */

/* mbedtls fills some globals on first use (AES tables, the CPU feature
 * probe, lists of curves and ciphers) without a lock: they are filled here,
 * once, before two cores could race on them. Seeding a DRBG runs AES and
 * proves that getrandom works. */
static void warm_up(void)
{
	unsigned char probe[32];
	mbedtls_ctr_drbg_context drbg;
	if (entropy_getrandom(NULL, probe, sizeof probe) != 0) {
		warm_error = errno ? errno : EIO;
		return;
	}
	mbedtls_platform_zeroize(probe, sizeof probe);
	int ret = seed_drbg(&drbg);
	mbedtls_ctr_drbg_free(&drbg);
	if (ret != 0) {
		warm_error = ret;
		return;
	}
	(void)mbedtls_ecp_grp_id_list();
	(void)mbedtls_cipher_list();
	(void)mbedtls_ssl_list_ciphersuites();
}

int ig_tls_backend_init(char *err, size_t errlen)
{
	pthread_once(&warm_once, warm_up);
	if (warm_error > 0) {
		snprintf(err, errlen, "getrandom(2) failed: %s (TLS has no weaker fallback)", strerror(warm_error));
		return warm_error == EAGAIN ? IG_TLS_NO_ENTROPY : -1;
	}
	if (warm_error < 0) {
		snprintf(err, errlen, "cannot seed the random generator (mbedtls -0x%04x)", (unsigned)-warm_error);
		return -1;
	}
	return 0;
}

const char *ig_tls_backend_name(void)
{
	return "mbedtls " MBEDTLS_VERSION_STRING;
}

bool ig_tls_backend_shares_session_cache(void)
{
	return false; /* one per core */
}

/* ---- server credentials ---- */

static unsigned char *nul_terminated(const char *text, size_t len)
{
	unsigned char *copy = malloc(len + 1);
	if (copy) {
		memcpy(copy, text, len);
		copy[len] = 0;
	}
	return copy;
}

static void free_secret(unsigned char *buf, size_t len)
{
	if (buf) {
		mbedtls_platform_zeroize(buf, len);
		free(buf);
	}
}

static int check_chain(const mbedtls_x509_crt *chain, int parse_ret, char *err, size_t errlen)
{
	if (chain->raw.p == NULL) {
		if (parse_ret == MBEDTLS_ERR_PK_UNKNOWN_PK_ALG || parse_ret == MBEDTLS_ERR_ECP_FEATURE_UNAVAILABLE ||
		    parse_ret == MBEDTLS_ERR_PK_UNKNOWN_NAMED_CURVE)
			snprintf(err, errlen, "certificate: unsupported key type or curve (RSA, P-256 or P-384)");
		else
			snprintf(err, errlen, "certificate: no PEM certificate parses (mbedtls -0x%04x)",
				 (unsigned)-parse_ret);
		return -1;
	}
	if (parse_ret != 0) {
		snprintf(err, errlen, "certificate chain: %d certificate(s) do not parse", parse_ret);
		return -1;
	}
	size_t msg = CERT_MSG_OVERHEAD;
	for (const mbedtls_x509_crt *c = chain; c; c = c->next)
		msg += CERT_ENTRY_OVERHEAD + c->raw.len;
	if (msg > MBEDTLS_SSL_OUT_CONTENT_LEN) {
		snprintf(err, errlen,
			 "certificate chain is %zu bytes; the mbedtls build sends at most %d "
			 "(MBEDTLS_SSL_OUT_CONTENT_LEN in tools/deps/mbedtls_config.h)",
			 msg, MBEDTLS_SSL_OUT_CONTENT_LEN);
		return -1;
	}
	if (mbedtls_x509_crt_check_key_usage(chain, MBEDTLS_X509_KU_DIGITAL_SIGNATURE) != 0) {
		snprintf(err, errlen, "certificate: its key usage does not allow digital signatures (needed by ECDHE)");
		return -1;
	}
	if (mbedtls_x509_crt_check_extended_key_usage(chain, MBEDTLS_OID_SERVER_AUTH,
						      MBEDTLS_OID_SIZE(MBEDTLS_OID_SERVER_AUTH)) != 0) {
		snprintf(err, errlen, "certificate: its extended key usage does not include serverAuth");
		return -1;
	}
	return 0;
}

/* pem: the NUL-terminated key text (PKCS#8 encryption is not even
 * recognised without PKCS#5 support, so the text tells). */
static int check_key(const mbedtls_pk_context *key, int parse_ret, const unsigned char *pem,
		     const mbedtls_x509_crt *leaf, char *err, size_t errlen)
{
	if (parse_ret == MBEDTLS_ERR_PK_PASSWORD_REQUIRED || parse_ret == MBEDTLS_ERR_PK_PASSWORD_MISMATCH ||
	    (parse_ret != 0 && strstr((const char *)pem, "ENCRYPTED"))) {
		snprintf(err, errlen, "private key: encrypted keys are not supported");
		return -1;
	}
	if (parse_ret == MBEDTLS_ERR_PK_UNKNOWN_PK_ALG || parse_ret == MBEDTLS_ERR_PK_UNKNOWN_NAMED_CURVE ||
	    parse_ret == MBEDTLS_ERR_ECP_FEATURE_UNAVAILABLE || parse_ret == MBEDTLS_ERR_PK_FEATURE_UNAVAILABLE) {
		snprintf(err, errlen, "private key: unsupported type or curve (RSA, P-256 or P-384)");
		return -1;
	}
	if (parse_ret != 0) {
		snprintf(err, errlen, "private key: does not parse as PEM RSA or EC (mbedtls -0x%04x)",
			 (unsigned)-parse_ret);
		return -1;
	}
	mbedtls_pk_type_t type = mbedtls_pk_get_type(key);
	if (type != MBEDTLS_PK_RSA && type != MBEDTLS_PK_ECKEY) {
		snprintf(err, errlen, "private key: neither RSA nor EC");
		return -1;
	}
	if (type == MBEDTLS_PK_RSA && mbedtls_pk_get_bitlen(key) < 2048) {
		snprintf(err, errlen, "private key: RSA of %zu bits; at least 2048 are needed",
			 mbedtls_pk_get_bitlen(key));
		return -1;
	}
	if (mbedtls_pk_check_pair(&leaf->pk, key) != 0) {
		snprintf(err, errlen, "private key does not match the certificate (the first in the chain)");
		return -1;
	}
	return 0;
}

/* Parses chain and key into *chain and *key; 0 or -1 with a message. */
static int parse_credentials(const struct tls_credentials *cred, mbedtls_x509_crt *chain,
			     mbedtls_pk_context *key, char *err, size_t errlen)
{
	mbedtls_x509_crt_init(chain);
	mbedtls_pk_init(key);
	int ret = mbedtls_x509_crt_parse(chain, cred->chain_pem, cred->chain_len);
	if (check_chain(chain, ret, err, errlen) != 0)
		return -1;
	ret = mbedtls_pk_parse_key(key, cred->key_pem, cred->key_len, NULL, 0);
	return check_key(key, ret, cred->key_pem, chain, err, errlen);
}

struct tls_credentials *ig_tls_credentials_load(const char *cert_pem, size_t cert_len, const char *key_pem,
					     size_t key_len, char *err, size_t errlen)
{
	struct tls_credentials *cred = calloc(1, sizeof *cred);
	if (!cred) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	cred->chain_pem = nul_terminated(cert_pem, cert_len);
	cred->key_pem = nul_terminated(key_pem, key_len);
	cred->chain_len = cert_len + 1;
	cred->key_len = key_len + 1;
	if (!cred->chain_pem || !cred->key_pem) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	mbedtls_x509_crt chain;
	mbedtls_pk_context key;
	int ret = parse_credentials(cred, &chain, &key, err, errlen);
	mbedtls_x509_crt_free(&chain);
	mbedtls_pk_free(&key);
	if (ret == 0) {
		atomic_init(&cred->refs, 1);
		return cred;
	}
fail:
	free(cred->chain_pem);
	free_secret(cred->key_pem, cred->key_len);
	free(cred);
	return NULL;
}

__attribute__((cold)) void ig_tls_credentials_ref(struct tls_credentials *c)
{
	atomic_fetch_add(&c->refs, 1);
}

__attribute__((cold)) void ig_tls_credentials_unref(struct tls_credentials *c)
{
	if (atomic_fetch_sub(&c->refs, 1) != 1)
		return;
	free(c->chain_pem);
	free_secret(c->key_pem, c->key_len);
	free(c);
}

size_t ig_tls_credentials_serial(const struct tls_credentials *c, unsigned char *out, size_t cap)
{
	mbedtls_x509_crt leaf;
	mbedtls_x509_crt_init(&leaf);
	size_t n = 0;
	if (mbedtls_x509_crt_parse(&leaf, c->chain_pem, c->chain_len) >= 0 && leaf.raw.p && leaf.serial.len <= cap) {
		n = leaf.serial.len;
		memcpy(out, leaf.serial.p, n);
	}
	mbedtls_x509_crt_free(&leaf);
	return n;
}

/* ---- trust anchors ---- */

/* Finds the subject Name inside a DER certificate without parsing the rest:
 * Certificate { TBSCertificate { [0] version OPTIONAL, serial, signature,
 * issuer, validity, subject, ... } ... }. */
static int der_subject(const unsigned char *der, size_t len, struct tls_anchor *a)
{
	unsigned char *p = (unsigned char *)der, *end = p + len;
	size_t n;
	const int seq = MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE;
	if (mbedtls_asn1_get_tag(&p, end, &n, seq) != 0)
		return -1;
	end = p + n;
	if (mbedtls_asn1_get_tag(&p, end, &n, seq) != 0)
		return -1;
	end = p + n;
	if (mbedtls_asn1_get_tag(&p, end, &n, MBEDTLS_ASN1_CONTEXT_SPECIFIC | MBEDTLS_ASN1_CONSTRUCTED) == 0)
		p += n;
	if (mbedtls_asn1_get_tag(&p, end, &n, MBEDTLS_ASN1_INTEGER) != 0)
		return -1;
	p += n;
	for (int skip = 0; skip < 3; skip++) { /* signature, issuer, validity */
		if (mbedtls_asn1_get_tag(&p, end, &n, seq) != 0)
			return -1;
		p += n;
	}
	unsigned char *subject = p;
	if (mbedtls_asn1_get_tag(&p, end, &n, seq) != 0)
		return -1;
	a->der = der;
	a->der_len = len;
	a->subject = subject;
	a->subject_len = (size_t)(p - subject) + n;
	return 0;
}

static const char pem_begin[] = "-----BEGIN CERTIFICATE-----";
static const char pem_end[] = "-----END CERTIFICATE-----";

/* Decodes every certificate of a PEM bundle that mbedtls can parse into one
 * block of DER (*out, sizes in *sizes); returns the count or -1. */
static long decode_bundle(const char *pem, size_t pem_len, unsigned char **out, size_t **sizes)
{
	unsigned char *text = nul_terminated(pem, pem_len);
	unsigned char *der = NULL;
	size_t *lens = NULL, used = 0;
	long count = 0;
	if (!text)
		return -1;
	for (const char *at = strstr((char *)text, pem_begin); at; at = strstr(at, pem_begin)) {
		mbedtls_pem_context ctx;
		size_t taken = 0, n;
		mbedtls_pem_init(&ctx);
		int ret = mbedtls_pem_read_buffer(&ctx, pem_begin, pem_end, (const unsigned char *)at, NULL, 0,
						  &taken);
		at += ret == 0 ? taken : sizeof pem_begin - 1;
		const unsigned char *buf = ret == 0 ? ctx.buf : NULL;
		n = ctx.buflen;
		mbedtls_x509_crt check;
		mbedtls_x509_crt_init(&check);
		if (buf && mbedtls_x509_crt_parse_der(&check, buf, n) == 0) {
			unsigned char *grown = realloc(der, used + n);
			size_t *more = realloc(lens, (size_t)(count + 1) * sizeof *lens);
			if (grown)
				der = grown;
			if (more)
				lens = more;
			if (!grown || !more)
				count = -1;
			else {
				memcpy(der + used, buf, n);
				used += n;
				lens[count++] = n;
			}
		}
		mbedtls_x509_crt_free(&check);
		mbedtls_pem_free(&ctx);
		if (count < 0)
			break;
	}
	free(text);
	if (count <= 0) {
		free(der);
		free(lens);
		der = NULL;
		lens = NULL;
	}
	*out = der;
	*sizes = lens;
	return count;
}

/* The compiled-in certificates given (builtin of them, or none) and the
 * bundle's; NULL with err. */
static struct tls_trust *trust_new(const char *pem, size_t pem_len, const struct ig_der *certs, size_t builtin,
				   char *err, size_t errlen)
{
	unsigned char *bundle = NULL;
	size_t *sizes = NULL;
	long from_pem = 0;
	if (pem) {
		from_pem = decode_bundle(pem, pem_len, &bundle, &sizes);
		if (from_pem < 0) {
			snprintf(err, errlen, "out of memory");
			return NULL;
		}
		if (from_pem == 0) {
			snprintf(err, errlen, "no usable certificate in the CA bundle");
			return NULL;
		}
	}
	size_t max = builtin + (size_t)from_pem;
	struct tls_trust *t = calloc(1, sizeof *t + max * sizeof t->anchors[0]);
	if (!t) {
		free(bundle);
		free(sizes);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	t->owned_der = bundle;
	for (size_t i = 0; i < builtin; i++)
		if (der_subject(certs[i].data, certs[i].len,
				&t->anchors[t->count]) == 0)
			t->count++;
	const unsigned char *p = bundle;
	for (long i = 0; i < from_pem; p += sizes[i++])
		if (der_subject(p, sizes[i], &t->anchors[t->count]) == 0)
			t->count++;
	free(sizes);
	if (t->count == 0) {
		snprintf(err, errlen, "no trust anchors");
		free(t->owned_der);
		free(t);
		return NULL;
	}
	return t;
}

struct tls_trust *ig_tls_trust_load(const char *pem, size_t pem_len, bool replace_builtin, char *err,
				 size_t errlen)
{
	return trust_new(pem, pem_len, ig_builtin_anchor_certs, replace_builtin ? 0 : ig_builtin_anchor_cert_count, err,
			 errlen);
}

struct tls_trust *ig_tls_trust_load_pem(const char *pem, size_t pem_len, char *err, size_t errlen)
{
	return trust_new(pem, pem_len, NULL, 0, err, errlen);
}

/* mbedtls asks, for each certificate of the peer's chain, which trusted
 * certificates could have issued it; the answer is parsed here, per
 * verification, from DER (no copy), and mbedtls frees it. */
static int find_issuers(void *core_ptr, const mbedtls_x509_crt *child, mbedtls_x509_crt **issuers)
{
	struct tls_core *core = core_ptr;
	const struct tls_trust *t = core->active ? core->active->trust : NULL;
	mbedtls_x509_crt *list = NULL;
	*issuers = NULL;
	for (size_t i = 0; t && i < t->count; i++) {
		const struct tls_anchor *a = &t->anchors[i];
		if (a->subject_len != child->issuer_raw.len || memcmp(a->subject, child->issuer_raw.p, a->subject_len))
			continue;
		if (!list) {
			list = malloc(sizeof *list);
			if (!list)
				return MBEDTLS_ERR_X509_ALLOC_FAILED;
			mbedtls_x509_crt_init(list);
		}
		(void)mbedtls_x509_crt_parse_der_nocopy(list, a->der, a->der_len); /* skipped if it fails */
	}
	if (list && list->raw.p == NULL) {
		mbedtls_x509_crt_free(list);
		free(list);
		list = NULL;
	}
	*issuers = list;
	return 0;
}

/* Client to an IP literal: mbedtls 2.28 matches only DNS names, so the
 * leaf's iPAddress entries are checked here. */
static int verify_ip(void *engine, mbedtls_x509_crt *crt, int depth, uint32_t *flags)
{
	const struct tls_engine *e = engine;
	if (depth != 0)
		return 0;
	for (const mbedtls_x509_sequence *san = &crt->subject_alt_names; san; san = san->next)
		if (san->buf.tag == (MBEDTLS_ASN1_CONTEXT_SPECIFIC | 7) && san->buf.len == e->ip_len &&
		    memcmp(san->buf.p, e->ip, e->ip_len) == 0)
			return 0;
	*flags |= MBEDTLS_X509_BADCERT_CN_MISMATCH;
	return 0;
}

/* Client without trust (PostgreSQL's sslmode=require and prefer): mbedtls
 * calls this for each certificate of the chain after judging it, and a
 * cleared flag set means that nothing is held against it. */
static int accept_unverified(void *engine, mbedtls_x509_crt *crt, int depth, uint32_t *flags)
{
	(void)engine;
	(void)crt;
	(void)depth;
	*flags = 0;
	return 0;
}

/* ---- per core ---- */

/* The session cache's lookup, which also tells the connection that it is
 * being resumed (mbedtls 2.28 has no getter): mbedtls resumes when the
 * cached session's suite is the one it chose. */
static int cache_get(void *gen_ptr, mbedtls_ssl_session *session)
{
	struct server_gen *g = gen_ptr;
	int ret = mbedtls_ssl_cache_get(&g->cache, session);
	struct tls_engine *e = g->core->active;
	if (ret == 0 && e && e->ssl.session_negotiate &&
	    session->ciphersuite == e->ssl.session_negotiate->ciphersuite)
		e->resumed = true;
	return ret;
}

static const struct tls_trust *client_ca;

static int cache_set(void *gen_ptr, const mbedtls_ssl_session *session)
{
	struct server_gen *g = gen_ptr;
	/* A session whose client certificate verified is not kept: resumed,
	   it would come back without it (backend.h). */
	if (client_ca && session->verify_result == 0)
		return 0;
	return mbedtls_ssl_cache_set(&g->cache, session);
}

static int configure(struct tls_core *core, mbedtls_ssl_config *conf, int endpoint)
{
	mbedtls_ssl_config_init(conf);
	if (mbedtls_ssl_config_defaults(conf, endpoint, MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT))
		return -1;
	mbedtls_ssl_conf_min_version(conf, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
	mbedtls_ssl_conf_max_version(conf, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
	mbedtls_ssl_conf_ciphersuites(conf, suites);
	mbedtls_ssl_conf_curves(conf, endpoint == MBEDTLS_SSL_IS_SERVER ? server_curves : client_curves);
	mbedtls_ssl_conf_sig_hashes(conf, sig_hashes);
	mbedtls_ssl_conf_cert_profile(conf, &cert_profile);
	mbedtls_ssl_conf_rng(conf, mbedtls_ctr_drbg_random, &core->drbg);
	return mbedtls_ssl_conf_alpn_protocols(conf, alpn_protocols) == 0 ? 0 : -1;
}

static void gen_free(struct server_gen *g)
{
	mbedtls_ssl_config_free(&g->conf);
	mbedtls_x509_crt_free(&g->chain);
	mbedtls_pk_free(&g->key);
	if (g->has_cache)
		mbedtls_ssl_cache_free(&g->cache);
	free(g);
}

__attribute__((cold)) int ig_tls_backend_core_set_credentials(struct tls_core *core, const struct tls_credentials *cred)
{
	struct server_gen *g = calloc(1, sizeof *g);
	if (!g)
		return -1;
	g->core = core;
	char ignored[160];
	/* configure's defaults come first: the config is freed on failure. */
	if (configure(core, &g->conf, MBEDTLS_SSL_IS_SERVER) != 0 ||
	    parse_credentials(cred, &g->chain, &g->key, ignored, sizeof ignored) != 0 ||
	    mbedtls_ssl_conf_own_cert(&g->conf, &g->chain, &g->key) != 0) {
		gen_free(g);
		return -1;
	}
	if (client_ca) {
		mbedtls_ssl_conf_authmode(&g->conf, MBEDTLS_SSL_VERIFY_OPTIONAL);
		mbedtls_ssl_conf_ca_cb(&g->conf, find_issuers, core);
	}
	/* An entry holds a session plus the allocator's overhead. */
	size_t entries = core->cache_bytes / (sizeof(mbedtls_ssl_cache_entry) + 32);
	if (entries > 0) {
		mbedtls_ssl_cache_init(&g->cache);
		g->has_cache = true;
		mbedtls_ssl_cache_set_max_entries(&g->cache, entries > INT32_MAX ? INT32_MAX : (int)entries);
		mbedtls_ssl_conf_session_cache(&g->conf, g, cache_get, cache_set);
	}
	struct server_gen *old = core->gen;
	core->gen = g;
	if (old && tls_gen_retire(&old->use))
		gen_free(old);
	return 0;
}

struct tls_core *ig_tls_backend_core_new(const struct tls_credentials *server, size_t session_cache_bytes)
{
	/* A client-only process may not have called ig_tls_backend_init. */
	pthread_once(&warm_once, warm_up);
	struct tls_core *core = warm_error ? NULL : calloc(1, sizeof *core);
	if (!core)
		return NULL;
	if (seed_drbg(&core->drbg) != 0 || configure(core, &core->client_conf, MBEDTLS_SSL_IS_CLIENT) != 0)
		goto fail;
	mbedtls_ssl_conf_authmode(&core->client_conf, MBEDTLS_SSL_VERIFY_REQUIRED);
	mbedtls_ssl_conf_ca_cb(&core->client_conf, find_issuers, core);
	core->cache_bytes = session_cache_bytes;
	if (server && ig_tls_backend_core_set_credentials(core, server) != 0)
		goto fail;
	return core;
fail:
	/* Startup only (a core that cannot start): the half-built configs hold
	   nothing worth more than this simple release. */
	mbedtls_ctr_drbg_free(&core->drbg);
	free(core);
	return NULL;
}

/* ---- per connection: the staging buffers as mbedtls's I/O ---- */

static int bio_recv(void *engine, unsigned char *buf, size_t len)
{
	struct tls_engine *e = engine;
	size_t have = e->in_tail - e->in_head;
	if (have == 0) {
		e->in_want = len;
		return MBEDTLS_ERR_SSL_WANT_READ;
	}
	if (e->first_byte < 0)
		e->first_byte = e->in[e->in_head];
	size_t n = have < len ? have : len;
	memcpy(buf, e->in + e->in_head, n);
	e->in_head += n;
	if (e->in_head == e->in_tail)
		e->in_head = e->in_tail = 0;
	return (int)n;
}

static int bio_send(void *engine, const unsigned char *buf, size_t len)
{
	struct tls_engine *e = engine;
	if (e->out_head > 0) {
		memmove(e->out, e->out + e->out_head, e->out_tail - e->out_head);
		e->out_tail -= e->out_head;
		e->out_head = 0;
	}
	size_t room = OUT_STAGE - e->out_tail;
	if (room == 0) {
		e->out_blocked = true;
		return MBEDTLS_ERR_SSL_WANT_WRITE;
	}
	size_t n = room < len ? room : len;
	memcpy(e->out + e->out_tail, buf, n);
	e->out_tail += n;
	/* mbedtls offers all it holds; with a remainder it calls again and
	   gets WANT_WRITE. */
	e->out_blocked = n < len;
	return (int)n;
}

/* ---- per connection: stepping mbedtls ---- */

static bool fail(struct tls_engine *e, int err)
{
	e->error = err;
	e->verify_flags = mbedtls_ssl_get_verify_result(&e->ssl);
	if (err == MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE && e->ssl.in_msg)
		e->peer_alert = e->ssl.in_msg[1];
	e->phase = PHASE_FAILED;
	return true;
}

static bool wants_io(int ret)
{
	return ret == MBEDTLS_ERR_SSL_WANT_READ || ret == MBEDTLS_ERR_SSL_WANT_WRITE;
}

static bool advance_handshake(struct tls_engine *e)
{
	int ret = mbedtls_ssl_handshake(&e->ssl);
	if (wants_io(ret))
		return false;
	if (ret != 0)
		return fail(e, ret);
	e->established = true;
	e->phase = PHASE_OPEN;
	/* A client resumed if the server took the session it offered. */
	const mbedtls_ssl_session *s = mbedtls_ssl_get_session_pointer(&e->ssl);
	if (e->offered_id_len && s && s->id_len == e->offered_id_len &&
	    memcmp(s->id, e->offered_id, s->id_len) == 0)
		e->resumed = true;
	return true;
}

static bool sendapp_due(const struct tls_engine *e)
{
	return e->sendapp_inflight > 0 ||
	       (e->sendapp_len > 0 && (e->flush_wanted || e->close_wanted || e->sendapp_len == SENDAPP_STAGE));
}

/* One record of application data. mbedtls_ssl_write's contract after
 * WANT_WRITE: the record is made, and the same call is repeated until it
 * returns the length. */
static bool write_app(struct tls_engine *e)
{
	size_t n = e->sendapp_inflight ? e->sendapp_inflight : e->sendapp_len;
	int ret = mbedtls_ssl_write(&e->ssl, e->sendapp, n);
	if (ret == MBEDTLS_ERR_SSL_WANT_WRITE) {
		e->sendapp_inflight = n;
		return false;
	}
	if (ret < 0)
		return fail(e, ret);
	size_t done = (size_t)ret;
	memmove(e->sendapp, e->sendapp + done, e->sendapp_len - done);
	e->sendapp_len -= done;
	e->sendapp_inflight = 0;
	if (e->sendapp_len == 0)
		e->flush_wanted = false;
	return true;
}

static bool read_app(struct tls_engine *e)
{
	if (e->recvapp_head > 0) {
		memmove(e->recvapp, e->recvapp + e->recvapp_head, e->recvapp_tail - e->recvapp_head);
		e->recvapp_tail -= e->recvapp_head;
		e->recvapp_head = 0;
	}
	size_t room = RECVAPP_STAGE - e->recvapp_tail;
	if (room == 0 || (e->in_head == e->in_tail && mbedtls_ssl_get_bytes_avail(&e->ssl) == 0 &&
			  !mbedtls_ssl_check_pending(&e->ssl)))
		return false;
	int ret = mbedtls_ssl_read(&e->ssl, e->recvapp + e->recvapp_tail, room);
	if (ret > 0) {
		e->recvapp_tail += (size_t)ret;
		return true;
	}
	if (ret == 0 || wants_io(ret))
		return false;
	if (ret == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY) {
		/* TLS 1.2: answer with our close_notify, drop pending writes. */
		e->sendapp_len = e->sendapp_inflight = 0;
		e->phase = PHASE_CLOSING;
		return true;
	}
	return fail(e, ret);
}

static bool advance_open(struct tls_engine *e)
{
	if (sendapp_due(e))
		return write_app(e);
	if (e->close_wanted) {
		e->phase = PHASE_CLOSING;
		return true;
	}
	return read_app(e);
}

static bool advance_closing(struct tls_engine *e)
{
	if (!e->close_sent) {
		e->close_sent = true;
		int ret = mbedtls_ssl_close_notify(&e->ssl);
		if (ret != 0 && !wants_io(ret))
			return fail(e, ret);
		return true;
	}
	e->phase = PHASE_CLOSED;
	return true;
}

/* One move; false when nothing more can happen until bytes move. */
static bool advance(struct tls_engine *e)
{
	if (e->phase == PHASE_CLOSED || e->phase == PHASE_FAILED)
		return false;
	/* Records mbedtls could not hand over come first: nothing may be
	   written behind them. An application record in flight completes
	   through write_app instead (mbedtls_ssl_write's contract). */
	if (e->out_blocked) {
		if (e->sendapp_inflight > 0)
			return write_app(e);
		int ret = mbedtls_ssl_flush_output(&e->ssl);
		if (wants_io(ret))
			return false;
		if (ret != 0)
			return fail(e, ret);
		e->out_blocked = false;
		return true;
	}
	switch (e->phase) {
	case PHASE_HANDSHAKE:
		return advance_handshake(e);
	case PHASE_OPEN:
		return advance_open(e);
	case PHASE_CLOSING:
		return advance_closing(e);
	default:
		return false;
	}
}

static void pump(struct tls_engine *e)
{
	if (e->phase == PHASE_CLOSED || e->phase == PHASE_FAILED)
		return;
	struct tls_engine *outer = e->core->active;
	e->core->active = e;
	while (advance(e))
		;
	e->core->active = outer;
}

/* Room for network bytes. During the handshake only what mbedtls asked
 * for, so that records are taken one at a time as BearSSL does: the caller
 * sees the handshake complete before whatever follows it (application
 * data, a close_notify) is processed. */
static size_t in_room(const struct tls_engine *e)
{
	size_t staged = e->in_tail - e->in_head, room = IN_STAGE - staged;
	if (e->phase == PHASE_HANDSHAKE) {
		size_t want = e->in_want > staged ? e->in_want - staged : 0;
		return want < room ? want : room;
	}
	return room;
}

/* A client writes its ClientHello on the first call after init and
 * ig_tls_engine_session_resume. */
static void start(struct tls_engine *e)
{
	if (!e->started) {
		e->started = true;
		pump(e);
	}
}

/* ---- per connection: the contract ---- */

size_t ig_tls_engine_size(void)
{
	return sizeof(struct tls_engine);
}

size_t ig_tls_engine_heap_bytes(void)
{
	/* mbedtls_ssl_setup's two record buffers; the handshake's own state
	   comes and goes with it (calloc'd, a few KiB, not counted). */
	return MBEDTLS_SSL_IN_BUFFER_LEN + MBEDTLS_SSL_OUT_BUFFER_LEN;
}

static int engine_setup(struct tls_engine *e, struct tls_core *core, const mbedtls_ssl_config *conf)
{
	memset(e, 0, offsetof(struct tls_engine, in));
	e->core = core;
	e->first_byte = -1;
	e->in_want = 5; /* a record header */
	e->started = true;
	mbedtls_ssl_init(&e->ssl);
	if (mbedtls_ssl_setup(&e->ssl, conf) != 0) {
		mbedtls_ssl_free(&e->ssl);
		e->phase = PHASE_FAILED;
		e->error = MBEDTLS_ERR_SSL_ALLOC_FAILED;
		return -1;
	}
	mbedtls_ssl_set_bio(&e->ssl, e, bio_send, bio_recv, NULL);
	return 0;
}

int ig_tls_backend_set_client_ca(const struct tls_trust *ca, char *err, size_t errlen)
{
	(void)err, (void)errlen;
	client_ca = ca;
	return 0;
}

/* Keeps the client leaf's CN; the chain's verdict is mbedtls's. */
static int capture_subject(void *engine, mbedtls_x509_crt *crt, int depth, uint32_t *flags)
{
	(void)flags;
	struct tls_engine *e = engine;
	if (depth != 0)
		return 0;
	e->peer_cert = true;
	e->subject[0] = 0;
	for (const mbedtls_x509_name *n = &crt->subject; n; n = n->next)
		if (n->oid.p && MBEDTLS_OID_CMP(MBEDTLS_OID_AT_CN, &n->oid) == 0) {
			if (n->val.len < sizeof e->subject) {
				memcpy(e->subject, n->val.p, n->val.len);
				e->subject[n->val.len] = 0;
			}
			break;
		}
	return 0;
}

const char *ig_tls_engine_peer_subject(struct tls_engine *e)
{
	return client_ca && e->gen && e->established && e->peer_cert && e->ssl.session &&
			       e->ssl.session->verify_result == 0
		       ? e->subject
		       : NULL;
}

int ig_tls_engine_init_server(struct tls_engine *e, struct tls_core *core)
{
	struct server_gen *g = core->gen;
	if (!g) {
		memset(e, 0, offsetof(struct tls_engine, in));
		e->phase = PHASE_FAILED;
		e->error = MBEDTLS_ERR_SSL_BAD_INPUT_DATA;
		return -1;
	}
	if (engine_setup(e, core, &g->conf) != 0)
		return -1;
	if (client_ca) {
		e->trust = client_ca; /* find_issuers reads the active engine's */
		mbedtls_ssl_set_verify(&e->ssl, capture_subject, e);
	}
	e->gen = g;
	g->use.conns++;
	return 0;
}

int ig_tls_engine_init_client(struct tls_engine *e, struct tls_core *core, const struct tls_trust *trust,
			   const struct tls_peer_name *peer)
{
	if (engine_setup(e, core, &core->client_conf) != 0)
		return -1;
	e->started = false;
	e->trust = trust;
	e->ip_len = peer ? peer->ip_len : 0;
	if (e->ip_len)
		memcpy(e->ip, peer->ip, e->ip_len);
	/* No SNI for an address (RFC 6066). */
	if (peer && !e->ip_len && mbedtls_ssl_set_hostname(&e->ssl, peer->host) != 0)
		goto fail;
	if (!trust) {
		/* Encrypted, unverified: every certificate's flags cleared as
		   the chain is checked (no anchors: it would fail as not
		   trusted). */
		mbedtls_ssl_set_verify(&e->ssl, accept_unverified, e);
		return 0;
	}
	if (!peer)
		goto fail;
	if (e->ip_len)
		/* The name check of an address is ours. */
		mbedtls_ssl_set_verify(&e->ssl, verify_ip, e);
	return 0;
fail:
	mbedtls_ssl_free(&e->ssl);
	e->phase = PHASE_FAILED;
	e->error = MBEDTLS_ERR_SSL_BAD_INPUT_DATA;
	return -1;
}

void ig_tls_engine_free(struct tls_engine *e)
{
	mbedtls_ssl_free(&e->ssl);
	/* After the context: it points into the generation's config. */
	struct server_gen *g = e->gen;
	if (g) {
		e->gen = NULL;
		if (tls_gen_release(&g->use))
			gen_free(g);
	}
}

bool ig_tls_engine_session_get(struct tls_engine *e, struct tls_session *s)
{
	const mbedtls_ssl_session *session = mbedtls_ssl_get_session_pointer(&e->ssl);
	if (!e->established || e->ssl.conf->endpoint != MBEDTLS_SSL_IS_CLIENT || !session || session->id_len == 0)
		return false;
	return mbedtls_ssl_session_save(session, s->data, sizeof s->data, &s->len) == 0;
}

int ig_tls_engine_session_resume(struct tls_engine *e, const struct tls_session *s)
{
	mbedtls_ssl_session session;
	mbedtls_ssl_session_init(&session);
	int ret = e->started || s->len > sizeof s->data ? -1 : mbedtls_ssl_session_load(&session, s->data, s->len);
	if (ret == 0 && (session.id_len == 0 || session.id_len > sizeof e->offered_id))
		ret = -1;
	if (ret == 0)
		ret = mbedtls_ssl_set_session(&e->ssl, &session);
	if (ret == 0) {
		memcpy(e->offered_id, session.id, session.id_len);
		e->offered_id_len = (uint8_t)session.id_len;
	}
	mbedtls_ssl_session_free(&session);
	return ret == 0 ? 0 : -1;
}

unsigned ig_tls_engine_state(struct tls_engine *e)
{
	start(e);
	unsigned s = e->out_tail > e->out_head ? TLS_SENDREC : 0;
	bool app_waiting = e->recvapp_tail > e->recvapp_head;
	bool room_in = in_room(e) > 0;
	switch (e->phase) {
	case PHASE_HANDSHAKE:
		if (room_in)
			s |= TLS_RECVREC;
		break;
	case PHASE_OPEN:
		if (room_in)
			s |= TLS_RECVREC;
		if (!e->close_wanted && e->sendapp_len < SENDAPP_STAGE)
			s |= TLS_SENDAPP;
		/* fall through */
	case PHASE_CLOSING:
	case PHASE_CLOSED:
		/* Plaintext that came before the peer's close_notify is still
		   delivered. */
		if (app_waiting)
			s |= TLS_RECVAPP;
		break;
	case PHASE_FAILED:
		/* Closed at once, as BearSSL reports a failure; a fatal alert
		   still waiting stays offered (SENDREC) to whoever wants it. */
		return s | TLS_CLOSED;
	}
	if (e->phase == PHASE_CLOSED)
		return s ? s : TLS_CLOSED;
	return s;
}

unsigned char *ig_tls_engine_sendrec_buf(struct tls_engine *e, size_t *len)
{
	start(e);
	*len = e->out_tail - e->out_head;
	return *len ? e->out + e->out_head : NULL;
}

void ig_tls_engine_sendrec_ack(struct tls_engine *e, size_t len)
{
	e->out_head += len;
	if (e->out_head >= e->out_tail)
		e->out_head = e->out_tail = 0;
	pump(e);
}

unsigned char *ig_tls_engine_recvrec_buf(struct tls_engine *e, size_t *len)
{
	start(e);
	if (e->phase != PHASE_HANDSHAKE && e->phase != PHASE_OPEN) {
		*len = 0;
		return NULL;
	}
	if (e->in_head > 0) {
		memmove(e->in, e->in + e->in_head, e->in_tail - e->in_head);
		e->in_tail -= e->in_head;
		e->in_head = 0;
	}
	*len = in_room(e);
	return *len ? e->in + e->in_tail : NULL;
}

void ig_tls_engine_recvrec_ack(struct tls_engine *e, size_t len)
{
	start(e);
	e->in_tail += len;
	pump(e);
}

unsigned char *ig_tls_engine_sendapp_buf(struct tls_engine *e, size_t *len)
{
	if (e->phase != PHASE_OPEN || e->close_wanted) {
		*len = 0;
		return NULL;
	}
	*len = SENDAPP_STAGE - e->sendapp_len;
	return *len ? e->sendapp + e->sendapp_len : NULL;
}

void ig_tls_engine_sendapp_ack(struct tls_engine *e, size_t len)
{
	e->sendapp_len += len;
	if (e->sendapp_len == SENDAPP_STAGE)
		pump(e);
}

unsigned char *ig_tls_engine_recvapp_buf(struct tls_engine *e, size_t *len)
{
	*len = e->recvapp_tail - e->recvapp_head;
	return *len ? e->recvapp + e->recvapp_head : NULL;
}

void ig_tls_engine_recvapp_ack(struct tls_engine *e, size_t len)
{
	e->recvapp_head += len;
	if (e->recvapp_head >= e->recvapp_tail)
		e->recvapp_head = e->recvapp_tail = 0;
	pump(e);
}

void ig_tls_engine_flush(struct tls_engine *e)
{
	if (e->sendapp_len > 0) {
		e->flush_wanted = true;
		pump(e);
	}
}

void ig_tls_engine_close(struct tls_engine *e)
{
	start(e);
	if (e->phase == PHASE_HANDSHAKE) {
		/* mbedtls sends close_notify only after a handshake. */
		e->phase = PHASE_CLOSED;
		return;
	}
	if (e->phase == PHASE_OPEN) {
		e->close_wanted = true;
		pump(e);
	}
}

bool ig_tls_engine_established(struct tls_engine *e)
{
	return e->established;
}

int ig_tls_engine_error(struct tls_engine *e)
{
	return e->error;
}

/* ---- per connection: reports ---- */

static const char *verify_text(uint32_t flags)
{
	if (flags & MBEDTLS_X509_BADCERT_NOT_TRUSTED)
		return "certificate not trusted";
	if (flags & MBEDTLS_X509_BADCERT_CN_MISMATCH)
		return "host name mismatch";
	if (flags & MBEDTLS_X509_BADCERT_EXPIRED)
		return "certificate expired";
	if (flags & MBEDTLS_X509_BADCERT_FUTURE)
		return "certificate not yet valid";
	if (flags & (MBEDTLS_X509_BADCERT_BAD_MD | MBEDTLS_X509_BADCERT_BAD_PK | MBEDTLS_X509_BADCERT_BAD_KEY))
		return "certificate key or signature too weak or unsupported";
	if (flags & (MBEDTLS_X509_BADCERT_KEY_USAGE | MBEDTLS_X509_BADCERT_EXT_KEY_USAGE))
		return "certificate not valid for a TLS server";
	return "certificate verification failed";
}

static const char *alert_text(uint8_t alert)
{
	switch (alert) {
	case MBEDTLS_SSL_ALERT_MSG_HANDSHAKE_FAILURE:
		return "peer alert: handshake failure";
	case MBEDTLS_SSL_ALERT_MSG_BAD_CERT:
		return "peer alert: bad certificate";
	case MBEDTLS_SSL_ALERT_MSG_UNSUPPORTED_CERT:
		return "peer alert: unsupported certificate";
	case MBEDTLS_SSL_ALERT_MSG_CERT_EXPIRED:
		return "peer alert: certificate expired";
	case MBEDTLS_SSL_ALERT_MSG_CERT_UNKNOWN:
		return "peer alert: certificate unknown";
	case MBEDTLS_SSL_ALERT_MSG_UNKNOWN_CA:
		return "peer alert: unknown CA";
	case MBEDTLS_SSL_ALERT_MSG_PROTOCOL_VERSION:
		return "peer alert: protocol version";
	case MBEDTLS_SSL_ALERT_MSG_INSUFFICIENT_SECURITY:
		return "peer alert: insufficient security";
	case MBEDTLS_SSL_ALERT_MSG_DECODE_ERROR:
		return "peer alert: decode error";
	case MBEDTLS_SSL_ALERT_MSG_DECRYPT_ERROR:
		return "peer alert: decrypt error";
	case MBEDTLS_SSL_ALERT_MSG_BAD_RECORD_MAC:
		return "peer alert: bad record MAC";
	case MBEDTLS_SSL_ALERT_MSG_UNRECOGNIZED_NAME:
		return "peer alert: unrecognized name";
	case MBEDTLS_SSL_ALERT_MSG_NO_APPLICATION_PROTOCOL:
		return "peer alert: no application protocol";
	case MBEDTLS_SSL_ALERT_MSG_INTERNAL_ERROR:
		return "peer alert: internal error";
	default:
		return "peer sent a fatal alert";
	}
}

const char *ig_tls_engine_error_text(struct tls_engine *e)
{
	int err = e->error;
	if (err == 0)
		return e->phase == PHASE_FAILED ? "failed" : "closed";
	if (!e->established && e->first_byte >= 0 && e->first_byte != TLS_RECORD_HANDSHAKE)
		return "not TLS (plain text on a TLS connection?)";
	switch (err) {
	case MBEDTLS_ERR_X509_CERT_VERIFY_FAILED:
	case MBEDTLS_ERR_SSL_BAD_HS_CERTIFICATE:
		return verify_text(e->verify_flags);
	case MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE:
		return alert_text(e->peer_alert);
	case MBEDTLS_ERR_SSL_NO_CIPHER_CHOSEN:
	case MBEDTLS_ERR_SSL_NO_USABLE_CIPHERSUITE:
		return "no shared cipher suite";
	case MBEDTLS_ERR_SSL_BAD_HS_PROTOCOL_VERSION:
		return "unsupported protocol version";
	case MBEDTLS_ERR_SSL_INVALID_MAC:
		return "bad record MAC";
	case MBEDTLS_ERR_SSL_INVALID_RECORD:
	case MBEDTLS_ERR_SSL_UNEXPECTED_RECORD:
	case MBEDTLS_ERR_SSL_UNEXPECTED_MESSAGE:
		return "malformed record";
	case MBEDTLS_ERR_SSL_ALLOC_FAILED:
	case MBEDTLS_ERR_X509_ALLOC_FAILED:
		return "out of memory";
	case MBEDTLS_ERR_CTR_DRBG_ENTROPY_SOURCE_FAILED:
		return "random generator failed";
	case MBEDTLS_ERR_SSL_BAD_INPUT_DATA:
		return "bad engine setup";
	default:
		return e->established ? "TLS error" : "handshake failure";
	}
}

const char *ig_tls_engine_version(struct tls_engine *e)
{
	return e->established ? mbedtls_ssl_get_version(&e->ssl) : NULL;
}

const char *ig_tls_engine_suite(struct tls_engine *e)
{
	if (!e->established)
		return NULL;
	int id = mbedtls_ssl_get_ciphersuite_id(mbedtls_ssl_get_ciphersuite(&e->ssl));
	for (size_t i = 0; i < sizeof suite_names / sizeof suite_names[0]; i++)
		if (suite_names[i].id == id)
			return suite_names[i].iana;
	return NULL;
}

const char *ig_tls_engine_alpn(struct tls_engine *e)
{
	return e->established ? mbedtls_ssl_get_alpn_protocol(&e->ssl) : NULL;
}

bool ig_tls_engine_resumed(struct tls_engine *e)
{
	return e->resumed;
}
