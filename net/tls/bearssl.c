/* The TLS backend over BearSSL 0.6 (net/tls/backend.h). BearSSL's engine
 * does no I/O and no allocation: a connection is one struct tls_engine
 * (the context and its record buffer) that tls.c takes from a per-core
 * pool. Only startup (credentials, trust anchors) and ig_tls_backend_core_new
 * allocate. TLS 1.2 only, ECDHE with AEAD suites, X25519 and P-256 (a
 * client also offers P-384).
 * The server's session cache is one per credentials, shared by the cores:
 * SO_REUSEPORT sends a returning client to any core. Its lock is taken
 * once per handshake, never for application data.
 * Credentials are counted (a reload replaces them while connections still
 * use the old ones): each core holds one reference per generation it
 * serves, and counts that generation's connections itself, without an
 * atomic per connection.
 * Mutual TLS: the server asks for a client certificate, tolerates none,
 * and checks a chain with BearSSL's minimal engine (which also reads the
 * leaf's CN); a chain that fails leaves the connection unauthenticated
 * (BearSSL's tolerant mode goes on without it), so its requests to an
 * operation that needs the certificate get 401. */
#include "net/tls/anchors.h"
#include "net/tls/backend.h"

#include <bearssl.h>

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <stdatomic.h>
#include <sys/random.h>


/* The leaf certificate is kept (client role, IP literal targets only) to
 * check its iPAddress names, which BearSSL's x509 engine does not. */
#define EE_CAPTURE_MAX 4096

/* The engine's iomode while a record is coming in (BR_IO_IN in BearSSL's
 * inner.h, which is not installed). */
#define IOMODE_RECORD_IN 1

enum key_kind { KEY_RSA, KEY_EC };

/* The session cache BearSSL calls: its LRU under a lock, so that every
 * core serving the same credentials resumes every session; a load that
 * hits marks the connection as resumed. */
struct session_cache {
	const br_ssl_session_cache_class *vtable;
	pthread_mutex_t lock;
	br_ssl_session_cache_lru lru;
	void *store;
	size_t store_bytes;
};

struct tls_credentials {
	br_x509_certificate *chain;
	size_t chain_len;
	enum key_kind kind;
	br_rsa_private_key rsa;
	br_ec_private_key ec;
	const uint16_t *suites;
	size_t suite_count;
	/* Made by the first core that asks; the only part of the credentials
	   that changes after startup, under its own lock. */
	struct session_cache *_Atomic cache;
	_Atomic unsigned refs;
};

struct tls_trust {
	br_x509_trust_anchor *anchors;
	size_t count;
};

/* A core's server credentials, from the time it adopts them until the
 * last connection begun with them ends. */
struct server_gen {
	struct tls_credentials *cred; /* one reference, this generation's */
	struct session_cache *cache;  /* NULL: no resumption */
	struct tls_gen_use use;
};

struct tls_core {
	struct server_gen *gen;   /* NULL: client role only */
	size_t cache_bytes;       /* what each generation's cache asks for */
	br_hmac_drbg_context rng; /* seeds every engine of this core */
};

/* The x509 engine of the client role: BearSSL's minimal engine, plus an
 * iPAddress check when the target is an IP literal. The server role's
 * check of a client's chain (mutual TLS) is the same engine, with no
 * name to check, reading the leaf's CN as it goes. */
struct x509_checker {
	const br_x509_class *vtable;
	br_x509_minimal_context minimal;
	unsigned char ip[16];
	size_t ip_len;       /* 0: the target is a host name */
	bool unverified;     /* no trust given: encrypt, check nothing */
	bool client_cert;    /* server role: a client's chain */
	unsigned cert_index; /* of the certificate being received */
	size_t ee_len;
	bool ee_overflow;
	unsigned char ee[EE_CAPTURE_MAX];
	/* client_cert: the leaf's CN, and the engine told when it verified */
	br_name_element cn;
	char subject[TLS_SUBJECT_MAX];
	bool *verified;
};

enum engine_role { ROLE_SERVER, ROLE_CLIENT };

/* Laid out so that what a server connection touches is contiguous: the
 * context, the flags, the part of the buffer its records fill. The client
 * role's extras come last (an idle connection's RSS is its touched pages). */
struct tls_engine {
	/* Both contexts start with their br_ssl_engine_context. */
	union {
		br_ssl_server_context server;
		br_ssl_client_context client;
	} u;
	struct tls_core *core;
	struct server_gen *gen; /* server role: released by ig_tls_engine_free */
	enum engine_role role;
	bool established, resumed, closing;
	bool peer_verified; /* server role: peer.subject is a verified chain's */
	char error_text[48];
	/* Half-duplex ("mono") buffer: one record in flight at a time, which
	   is how HTTP/1.1 uses a connection; a full-duplex engine would need
	   another 16 KiB per connection. tls.c makes sure a write never waits
	   for unread input. */
	unsigned char iobuf[BR_SSL_BUFSIZE_MONO];
	union {
		struct {
			struct x509_checker x509;
			unsigned char offered_id[32]; /* the session offered again */
			size_t offered_len;
		} client;
		struct x509_checker peer; /* server role, mutual TLS only */
	};
};

static br_ssl_engine_context *eng_of(struct tls_engine *e)
{
	return &e->u.server.eng; /* the same address in either role */
}

/* ---- algorithms ---- */

/* ECDHE on X25519 and P-256, with BearSSL's fastest 64-bit code in 0.6
 * (the m31 implementations; m62/m64 came after 0.6). A client also offers
 * P-384 (br_ec_all_m31): in TLS 1.2 that list also says which curves the
 * client accepts in the server's certificate, and servers check it.
 * Signatures on other curves (P-384 CAs) use br_ec_all_m31. */
static const br_ec_impl *kx_curve(int curve)
{
	if (curve == BR_EC_curve25519)
		return &br_ec_c25519_m31;
	return curve == BR_EC_secp256r1 ? &br_ec_p256_m31 : &br_ec_all_m31;
}

static const unsigned char *kx_generator(int curve, size_t *len)
{
	return kx_curve(curve)->generator(curve, len);
}

static const unsigned char *kx_order(int curve, size_t *len)
{
	return kx_curve(curve)->order(curve, len);
}

static size_t kx_xoff(int curve, size_t *len)
{
	return kx_curve(curve)->xoff(curve, len);
}

static uint32_t kx_mul(unsigned char *g, size_t glen, const unsigned char *x, size_t xlen, int curve)
{
	return kx_curve(curve)->mul(g, glen, x, xlen, curve);
}

static size_t kx_mulgen(unsigned char *r, const unsigned char *x, size_t xlen, int curve)
{
	return kx_curve(curve)->mulgen(r, x, xlen, curve);
}

static uint32_t kx_muladd(unsigned char *a, const unsigned char *b, size_t len, const unsigned char *x,
			  size_t xlen, const unsigned char *y, size_t ylen, int curve)
{
	return kx_curve(curve)->muladd(a, b, len, x, xlen, y, ylen, curve);
}

static const br_ec_impl ec_kx = {
	.supported_curves = (1u << BR_EC_curve25519) | (1u << BR_EC_secp256r1),
	.generator = kx_generator,
	.order = kx_order,
	.xoff = kx_xoff,
	.mul = kx_mul,
	.mulgen = kx_mulgen,
	.muladd = kx_muladd,
};

static const br_ec_impl ec_kx_client = {
	.supported_curves = (1u << BR_EC_curve25519) | (1u << BR_EC_secp256r1) | (1u << BR_EC_secp384r1),
	.generator = kx_generator,
	.order = kx_order,
	.xoff = kx_xoff,
	.mul = kx_mul,
	.mulgen = kx_mulgen,
	.muladd = kx_muladd,
};

/* The engine verifies the ServerKeyExchange signature with its own ec
 * implementation, which knows only the key exchange curves; the server's
 * certificate may be on another (P-521). */
static uint32_t ecdsa_vrfy_all_curves(const br_ec_impl *impl, const void *hash, size_t hash_len,
				      const br_ec_public_key *pk, const void *sig, size_t sig_len)
{
	(void)impl;
	return br_ecdsa_vrfy_asn1_get_default()(&br_ec_all_m31, hash, hash_len, pk, sig, sig_len);
}

/* Server preference: AES-GCM first where the CPU has AES-NI, otherwise
 * ChaCha20-Poly1305 (constant-time AES without it is slow). */
static const uint16_t suites_aesni[] = {
	BR_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,  BR_TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	BR_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,  BR_TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	BR_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, BR_TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
};
static const uint16_t suites_soft[] = {
	BR_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, BR_TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
	BR_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,  BR_TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	BR_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,  BR_TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
};

static const uint16_t *suites_for_cpu(size_t *n)
{
	*n = sizeof suites_aesni / sizeof suites_aesni[0];
	return br_aes_x86ni_ctr_get_vtable() ? suites_aesni : suites_soft;
}

static const char *const alpn_names[] = { "http/1.1" };

/* ChaCha20 with SSE2 and Poly1305 with 64-bit multiplications: every
 * x86_64 CPU has both (the runtime is x86_64 only: kernel/runtime/coro.c),
 * so BearSSL's portable versions, which br_ssl_engine_set_default_chapol
 * links for CPUs without them (2 KiB), could never run. */
static void set_chapol(br_ssl_engine_context *eng)
{
	br_ssl_engine_set_chapol(eng, &br_sslrec_in_chapol_vtable, &br_sslrec_out_chapol_vtable);
	br_ssl_engine_set_chacha20(eng, br_chacha20_sse2_get());
	br_ssl_engine_set_poly1305(eng, br_poly1305_ctmulq_get());
}

/* What both roles share: versions, suites, hashes, PRFs, record ciphers,
 * key exchange curves, the buffer, ALPN and the seed. */
static void engine_common(struct tls_engine *e, struct tls_core *core)
{
	br_ssl_engine_context *eng = eng_of(e);
	e->gen = NULL; /* the pool's memory may hold a freed engine's */
	size_t n;
	const uint16_t *suites = suites_for_cpu(&n);
	br_ssl_engine_set_versions(eng, BR_TLS12, BR_TLS12);
	br_ssl_engine_set_suites(eng, suites, n);
	br_ssl_engine_set_hash(eng, br_sha256_ID, &br_sha256_vtable);
	br_ssl_engine_set_hash(eng, br_sha384_ID, &br_sha384_vtable);
	br_ssl_engine_set_hash(eng, br_sha512_ID, &br_sha512_vtable);
	br_ssl_engine_set_prf_sha256(eng, &br_tls12_sha256_prf);
	br_ssl_engine_set_prf_sha384(eng, &br_tls12_sha384_prf);
	br_ssl_engine_set_default_aes_gcm(eng);
	set_chapol(eng);
	br_ssl_engine_set_ec(eng, &ec_kx);
	br_ssl_engine_set_buffer(eng, e->iobuf, sizeof e->iobuf, 0);
	br_ssl_engine_set_protocol_names(eng, (const char **)alpn_names, 1);
	br_ssl_engine_add_flags(eng, BR_OPT_NO_RENEGOTIATION);
	/* Seeded from the core's generator (itself from getrandom), never
	   from BearSSL's own probing: RDRAND is missing under qemu's TCG and
	   /dev/urandom may not exist in an initramfs, and opening it for
	   every connection would cost three system calls. */
	unsigned char seed[32];
	br_hmac_drbg_generate(&core->rng, seed, sizeof seed);
	eng->rng_os_rand_done = 1;
	br_ssl_engine_inject_entropy(eng, seed, sizeof seed);
	memset(seed, 0, sizeof seed);
	e->core = core;
	e->established = e->resumed = e->closing = e->peer_verified = false;
	e->error_text[0] = 0;
}

/* ---- process-wide ---- */

static int fill_random(void *buf, size_t len)
{
	unsigned char *p = buf;
	while (len) {
		/* Blocks until the kernel's pool is initialised: a weak seed is
		   never an option. */
		ssize_t n = getrandom(p, len, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int ig_tls_backend_init(char *err, size_t errlen)
{
	unsigned char probe[32];
	if (fill_random(probe, sizeof probe) != 0) {
		int e = errno;
		snprintf(err, errlen, "TLS needs getrandom(2), which failed: %s", strerror(e));
		return e == EAGAIN ? IG_TLS_NO_ENTROPY : -1;
	}
	memset(probe, 0, sizeof probe);
	return 0;
}

const char *ig_tls_backend_name(void)
{
	return "bearssl 0.6";
}

bool ig_tls_backend_shares_session_cache(void)
{
	return true;
}

/* ---- PEM ---- */

struct blob {
	unsigned char *data;
	size_t len, cap;
	bool failed;
};

static void blob_append(void *ctx, const void *p, size_t n)
{
	struct blob *b = ctx;
	if (b->failed)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 2048;
		while (cap < b->len + n)
			cap *= 2;
		unsigned char *d = realloc(b->data, cap);
		if (!d) {
			b->failed = true;
			return;
		}
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

/* Calls fn for every PEM object of text; fn owns der (malloc'd) and
 * returns 0 to go on. Returns 0, or -1 with a message. */
typedef int pem_fn(void *arg, const char *name, unsigned char *der, size_t len, char *err, size_t errlen);

static int pem_each(const char *text, size_t len, pem_fn *fn, void *arg, char *err, size_t errlen)
{
	br_pem_decoder_context pc;
	br_pem_decoder_init(&pc);
	struct blob b = { 0 };
	char name[128] = "";
	bool inside = false;
	/* The decoder needs a newline after the last END line. */
	for (int pass = 0; pass < 2; pass++) {
		const char *p = pass ? "\n" : text;
		size_t left = pass ? 1 : len;
		while (left) {
			size_t used = br_pem_decoder_push(&pc, p, left);
			p += used;
			left -= used;
			switch (br_pem_decoder_event(&pc)) {
			case BR_PEM_BEGIN_OBJ:
				snprintf(name, sizeof name, "%s", br_pem_decoder_name(&pc));
				b = (struct blob){ 0 };
				br_pem_decoder_setdest(&pc, blob_append, &b);
				inside = true;
				break;
			case BR_PEM_END_OBJ:
				if (!inside)
					break;
				inside = false;
				if (b.failed) {
					free(b.data);
					snprintf(err, errlen, "out of memory");
					return -1;
				}
				if (fn(arg, name, b.data, b.len, err, errlen) != 0)
					return -1;
				b = (struct blob){ 0 };
				break;
			case BR_PEM_ERROR:
				free(b.data);
				snprintf(err, errlen, "malformed PEM");
				return -1;
			default:
				break;
			}
		}
	}
	if (inside) {
		free(b.data);
		snprintf(err, errlen, "truncated PEM (no END line)");
		return -1;
	}
	return 0;
}

/* ---- credentials ---- */

struct chain_collect {
	br_x509_certificate *certs;
	size_t count;
};

static int collect_cert(void *arg, const char *name, unsigned char *der, size_t len, char *err, size_t errlen)
{
	struct chain_collect *c = arg;
	if (strcmp(name, "CERTIFICATE") != 0 && strcmp(name, "X509 CERTIFICATE") != 0) {
		free(der);
		return 0;
	}
	br_x509_certificate *n = realloc(c->certs, (c->count + 1) * sizeof *n);
	if (!n) {
		free(der);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	c->certs = n;
	c->certs[c->count++] = (br_x509_certificate){ .data = der, .data_len = len };
	return 0;
}

struct key_collect {
	unsigned char *der;
	size_t len;
};

static int collect_key(void *arg, const char *name, unsigned char *der, size_t len, char *err, size_t errlen)
{
	struct key_collect *k = arg;
	if (strstr(name, "ENCRYPTED")) {
		free(der);
		snprintf(err, errlen, "it is encrypted; ingot needs it unencrypted");
		return -1;
	}
	if (k->der || (strcmp(name, "PRIVATE KEY") != 0 && strcmp(name, "RSA PRIVATE KEY") != 0 &&
		       strcmp(name, "EC PRIVATE KEY") != 0)) {
		free(der); /* EC PARAMETERS, a second key: not ours */
		return 0;
	}
	k->der = der;
	k->len = len;
	return 0;
}

static void free_chain(br_x509_certificate *certs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(certs[i].data);
	free(certs);
}

/* Byte strings equal once leading zeros are ignored (DER integers). */
static bool same_unsigned(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen)
{
	while (alen && *a == 0)
		a++, alen--;
	while (blen && *b == 0)
		b++, blen--;
	return alen == blen && memcmp(a, b, alen) == 0;
}

/* The modulus decides: BearSSL recovers e only from keys whose primes are
 * 3 mod 4 (its own), so e is not compared. */
static int rsa_matches(const br_rsa_private_key *sk, const br_rsa_public_key *pk, char *err, size_t errlen)
{
	br_rsa_compute_modulus modulus = br_rsa_compute_modulus_get_default();
	unsigned char n[4096 / 8]; /* BearSSL's RSA limit (BR_MAX_RSA_SIZE, internal) */
	size_t nlen = modulus(NULL, sk);
	if (nlen > sizeof n) {
		snprintf(err, errlen, "RSA keys over 4096 bits are not supported");
		return -1;
	}
	if (nlen == 0 || modulus(n, sk) != nlen) {
		snprintf(err, errlen, "the RSA key is malformed");
		return -1;
	}
	if (!same_unsigned(n, nlen, pk->n, pk->nlen)) {
		snprintf(err, errlen, "it does not match the certificate");
		return -1;
	}
	return 0;
}

static int ec_matches(const br_ec_private_key *sk, const br_ec_public_key *pk, char *err, size_t errlen)
{
	unsigned char q[BR_EC_KBUF_PUB_MAX_SIZE];
	if (sk->curve != pk->curve) {
		snprintf(err, errlen, "it does not match the certificate (another curve)");
		return -1;
	}
	size_t qlen = br_ec_compute_pub(&br_ec_all_m31, NULL, q, sk);
	if (qlen == 0) {
		snprintf(err, errlen, "its curve is not supported");
		return -1;
	}
	if (qlen != pk->qlen || memcmp(q, pk->q, qlen) != 0) {
		snprintf(err, errlen, "it does not match the certificate");
		return -1;
	}
	return 0;
}

static unsigned char *dup_bytes(const void *p, size_t n)
{
	unsigned char *d = malloc(n ? n : 1);
	if (d)
		memcpy(d, p, n);
	return d;
}

/* Copies the decoded key out of the decoder (which holds it in itself). */
static int take_key(struct tls_credentials *c, const br_skey_decoder_context *dk, char *err, size_t errlen)
{
	int type = br_skey_decoder_key_type(dk);
	if (type == BR_KEYTYPE_RSA) {
		const br_rsa_private_key *k = br_skey_decoder_get_rsa(dk);
		if (k->n_bitlen < 2048) {
			snprintf(err, errlen, "an RSA key of %u bits is too weak: at least 2048", (unsigned)k->n_bitlen);
			return -1;
		}
		c->kind = KEY_RSA;
		c->rsa = (br_rsa_private_key){
			.n_bitlen = k->n_bitlen,
			.p = dup_bytes(k->p, k->plen), .plen = k->plen,
			.q = dup_bytes(k->q, k->qlen), .qlen = k->qlen,
			.dp = dup_bytes(k->dp, k->dplen), .dplen = k->dplen,
			.dq = dup_bytes(k->dq, k->dqlen), .dqlen = k->dqlen,
			.iq = dup_bytes(k->iq, k->iqlen), .iqlen = k->iqlen,
		};
		if (!c->rsa.p || !c->rsa.q || !c->rsa.dp || !c->rsa.dq || !c->rsa.iq) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		return 0;
	}
	if (type == BR_KEYTYPE_EC) {
		const br_ec_private_key *k = br_skey_decoder_get_ec(dk);
		if (k->curve != BR_EC_secp256r1 && k->curve != BR_EC_secp384r1 && k->curve != BR_EC_secp521r1) {
			snprintf(err, errlen, "its curve is not supported (P-256, P-384 or P-521)");
			return -1;
		}
		c->kind = KEY_EC;
		c->ec = (br_ec_private_key){ .curve = k->curve, .x = dup_bytes(k->x, k->xlen), .xlen = k->xlen };
		if (!c->ec.x) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		return 0;
	}
	snprintf(err, errlen, "malformed, or of an unsupported type");
	return -1;
}

static void free_key(struct tls_credentials *c)
{
	if (c->kind == KEY_RSA) {
		void *parts[] = { c->rsa.p, c->rsa.q, c->rsa.dp, c->rsa.dq, c->rsa.iq };
		for (size_t i = 0; i < 5; i++)
			free(parts[i]);
	} else {
		free(c->ec.x);
	}
}

/* Decodes the leaf and checks it against the key; every other
 * certificate of the chain must decode too. *about_key tells which input
 * the message is about. */
static int check_chain(const struct tls_credentials *c, bool *about_key, char *err, size_t errlen)
{
	for (size_t i = 0; i < c->chain_len; i++) {
		br_x509_decoder_context dc;
		br_x509_decoder_init(&dc, NULL, NULL);
		br_x509_decoder_push(&dc, c->chain[i].data, c->chain[i].data_len);
		const br_x509_pkey *pk = br_x509_decoder_get_pkey(&dc);
		if (!pk) {
			snprintf(err, errlen, "certificate %zu of the chain is malformed (BearSSL error %d)", i + 1,
				 br_x509_decoder_last_error(&dc));
			return -1;
		}
		if (i > 0)
			continue;
		*about_key = true;
		if (c->kind == KEY_RSA) {
			if (pk->key_type != BR_KEYTYPE_RSA) {
				snprintf(err, errlen, "it is an RSA key, but the certificate's key is not");
				return -1;
			}
			if (rsa_matches(&c->rsa, &pk->key.rsa, err, errlen) != 0)
				return -1;
		} else {
			if (pk->key_type != BR_KEYTYPE_EC) {
				snprintf(err, errlen, "it is an EC key, but the certificate's key is not");
				return -1;
			}
			if (ec_matches(&c->ec, &pk->key.ec, err, errlen) != 0)
				return -1;
		}
	}
	return 0;
}

struct tls_credentials *ig_tls_credentials_load(const char *cert_pem, size_t cert_len,
					     const char *key_pem, size_t key_len,
					     char *err, size_t errlen)
{
	struct tls_credentials *c = calloc(1, sizeof *c);
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	struct chain_collect chain = { 0 };
	struct key_collect key = { 0 };
	char why[160];
	if (pem_each(cert_pem, cert_len, collect_cert, &chain, why, sizeof why) != 0) {
		snprintf(err, errlen, "certificate: %s", why);
		goto fail;
	}
	if (chain.count == 0) {
		snprintf(err, errlen, "certificate: no PEM CERTIFICATE found");
		goto fail;
	}
	c->chain = chain.certs;
	c->chain_len = chain.count;
	if (pem_each(key_pem, key_len, collect_key, &key, why, sizeof why) != 0) {
		snprintf(err, errlen, "private key: %s", why);
		goto fail;
	}
	if (!key.der) {
		snprintf(err, errlen, "private key: no PEM PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY found");
		goto fail;
	}
	br_skey_decoder_context dk;
	br_skey_decoder_init(&dk);
	br_skey_decoder_push(&dk, key.der, key.len);
	int kerr = br_skey_decoder_last_error(&dk);
	if (kerr != 0) {
		snprintf(err, errlen, "private key: malformed (BearSSL error %d)", kerr);
		goto fail;
	}
	if (take_key(c, &dk, why, sizeof why) != 0) {
		snprintf(err, errlen, "private key: %s", why);
		goto fail_key;
	}
	memset(&dk, 0, sizeof dk);
	bool about_key = false;
	if (check_chain(c, &about_key, why, sizeof why) != 0) {
		snprintf(err, errlen, "%s: %s", about_key ? "private key" : "certificate", why);
		goto fail_key;
	}
	memset(key.der, 0, key.len);
	free(key.der);
	c->suites = suites_for_cpu(&c->suite_count);
	atomic_init(&c->refs, 1);
	return c;
fail_key:
	free_key(c);
fail:
	memset(&dk, 0, sizeof dk);
	if (key.der) {
		memset(key.der, 0, key.len);
		free(key.der);
	}
	free_chain(chain.certs, chain.count);
	free(c);
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
	struct session_cache *sc = atomic_load(&c->cache);
	if (sc) {
		munmap(sc->store, sc->store_bytes);
		pthread_mutex_destroy(&sc->lock);
		free(sc);
	}
	free_key(c);
	free_chain(c->chain, c->chain_len);
	free(c);
}

/* ---- trust anchors ---- */

struct anchors_collect {
	br_x509_trust_anchor *list;
	size_t count;
};

static int collect_anchor(void *arg, const char *name, unsigned char *der, size_t len, char *err, size_t errlen)
{
	struct anchors_collect *a = arg;
	if (strcmp(name, "CERTIFICATE") != 0 && strcmp(name, "X509 CERTIFICATE") != 0 &&
	    strcmp(name, "TRUSTED CERTIFICATE") != 0) {
		free(der);
		return 0;
	}
	struct blob dn = { 0 };
	br_x509_decoder_context dc;
	br_x509_decoder_init(&dc, blob_append, &dn);
	br_x509_decoder_push(&dc, der, len);
	const br_x509_pkey *pk = br_x509_decoder_get_pkey(&dc);
	free(der);
	if (!pk || dn.failed) {
		free(dn.data);
		snprintf(err, errlen, "certificate %zu is malformed", a->count + 1);
		return -1;
	}
	br_x509_trust_anchor ta = { .dn = { dn.data, dn.len }, .flags = br_x509_decoder_isCA(&dc) ? BR_X509_TA_CA : 0 };
	ta.pkey.key_type = pk->key_type;
	if (pk->key_type == BR_KEYTYPE_RSA) {
		ta.pkey.key.rsa = (br_rsa_public_key){ dup_bytes(pk->key.rsa.n, pk->key.rsa.nlen), pk->key.rsa.nlen,
						       dup_bytes(pk->key.rsa.e, pk->key.rsa.elen), pk->key.rsa.elen };
	} else {
		ta.pkey.key.ec = (br_ec_public_key){ pk->key.ec.curve, dup_bytes(pk->key.ec.q, pk->key.ec.qlen),
						     pk->key.ec.qlen };
	}
	br_x509_trust_anchor *n = realloc(a->list, (a->count + 1) * sizeof *n);
	if (!n) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	a->list = n;
	a->list[a->count++] = ta;
	return 0;
}

/* The bundle's anchors after room for `before` more, which the caller
 * fills (the compiled-in set); NULL with err. */
static struct tls_trust *trust_new(const char *pem, size_t pem_len, size_t before, char *err, size_t errlen)
{
	struct anchors_collect added = { 0 };
	if (pem && pem_each(pem, pem_len, collect_anchor, &added, err, errlen) != 0)
		return NULL; /* startup: what was collected is not worth freeing */
	if (pem && added.count == 0) {
		snprintf(err, errlen, "no certificate in the PEM bundle");
		return NULL;
	}
	struct tls_trust *t = calloc(1, sizeof *t);
	if (!t || !(t->anchors = calloc(before + added.count + 1, sizeof *t->anchors))) {
		free(t);
		free(added.list);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (added.count)
		memcpy(t->anchors + before, added.list, added.count * sizeof *t->anchors);
	free(added.list);
	t->count = before + added.count;
	return t;
}

struct tls_trust *ig_tls_trust_load(const char *pem, size_t pem_len, bool replace_builtin,
				 char *err, size_t errlen)
{
	size_t builtin = replace_builtin ? 0 : ig_builtin_anchor_count;
	struct tls_trust *t = trust_new(pem, pem_len, builtin, err, errlen);
	if (t && builtin && ig_builtin_anchors_expand(t->anchors) != 0) {
		free(t->anchors);
		free(t);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	return t;
}

struct tls_trust *ig_tls_trust_load_pem(const char *pem, size_t pem_len, char *err, size_t errlen)
{
	return trust_new(pem, pem_len, 0, err, errlen);
}

/* ---- per core ---- */

static struct tls_engine *engine_of_server(br_ssl_server_context *sc)
{
	return (struct tls_engine *)((char *)sc - offsetof(struct tls_engine, u.server));
}

static void cache_save(const br_ssl_session_cache_class **ctx, br_ssl_server_context *sc,
		       const br_ssl_session_parameters *params)
{
	struct session_cache *c = (struct session_cache *)(void *)ctx;
	/* A resumed session would come back without its certificate (an
	   abbreviated handshake sends none): it is not kept, so that a
	   client certificate always comes with a full handshake. */
	if (engine_of_server(sc)->peer_verified)
		return;
	pthread_mutex_lock(&c->lock);
	c->lru.vtable->save(&c->lru.vtable, sc, params);
	pthread_mutex_unlock(&c->lock);
}

static int cache_load(const br_ssl_session_cache_class **ctx, br_ssl_server_context *sc,
		      br_ssl_session_parameters *params)
{
	struct session_cache *c = (struct session_cache *)(void *)ctx;
	pthread_mutex_lock(&c->lock);
	int hit = c->lru.vtable->load(&c->lru.vtable, sc, params);
	pthread_mutex_unlock(&c->lock);
	if (hit)
		engine_of_server(sc)->resumed = true;
	return hit;
}

static const br_ssl_session_cache_class cache_class = {
	.context_size = sizeof(struct session_cache),
	.save = cache_save,
	.load = cache_load,
};

#define SESSION_CACHE_MAX ((size_t)0x7fffffff)

/* The credentials' cache, made once (cores start concurrently). */
static struct session_cache *shared_cache(struct tls_credentials *cred, size_t bytes)
{
	static pthread_mutex_t making = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&making);
	struct session_cache *c = atomic_load(&cred->cache);
	/* BearSSL's LRU addresses its store with 32-bit offsets. */
	if (bytes > SESSION_CACHE_MAX)
		bytes = SESSION_CACHE_MAX;
	if (!c && (c = calloc(1, sizeof *c))) {
		/* Touched only as sessions are stored (about 100 bytes each). */
		void *store = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				   -1, 0);
		if (store == MAP_FAILED) {
			free(c);
			c = NULL;
		} else {
			c->vtable = &cache_class;
			c->store = store;
			c->store_bytes = bytes;
			pthread_mutex_init(&c->lock, NULL);
			br_ssl_session_cache_lru_init(&c->lru, store, bytes);
			atomic_store(&cred->cache, c);
		}
	}
	pthread_mutex_unlock(&making);
	return c;
}

static void gen_free(struct server_gen *g)
{
	ig_tls_credentials_unref(g->cred);
	free(g);
}

__attribute__((cold)) int ig_tls_backend_core_set_credentials(struct tls_core *core, const struct tls_credentials *cred)
{
	struct server_gen *g = calloc(1, sizeof *g);
	if (!g)
		return -1;
	g->cred = (struct tls_credentials *)cred;
	ig_tls_credentials_ref(g->cred);
	if (core->cache_bytes)
		g->cache = shared_cache(g->cred, core->cache_bytes);
	struct server_gen *old = core->gen;
	core->gen = g;
	if (old && tls_gen_retire(&old->use))
		gen_free(old);
	return 0;
}

struct tls_core *ig_tls_backend_core_new(const struct tls_credentials *server, size_t session_cache_bytes)
{
	struct tls_core *core = calloc(1, sizeof *core);
	if (!core)
		return NULL;
	unsigned char seed[48];
	if (fill_random(seed, sizeof seed) != 0) {
		free(core);
		return NULL;
	}
	br_hmac_drbg_init(&core->rng, &br_sha256_vtable, seed, sizeof seed);
	memset(seed, 0, sizeof seed);
	core->cache_bytes = session_cache_bytes;
	if (server && ig_tls_backend_core_set_credentials(core, server) != 0) {
		free(core);
		return NULL;
	}
	return core;
}

/* ---- per connection ---- */

size_t ig_tls_engine_size(void)
{
	return sizeof(struct tls_engine);
}

size_t ig_tls_engine_heap_bytes(void)
{
	return 0; /* its buffer is in the engine */
}

/* Mutual TLS (ig_tls_backend_set_client_ca): NULL, off. */
static const struct tls_trust *client_ca;
static void peer_checker_init(struct tls_engine *e, const struct tls_trust *ca);

int ig_tls_engine_init_server(struct tls_engine *e, struct tls_core *core)
{
	struct server_gen *g = core->gen;
	if (!g)
		return -1;
	const struct tls_credentials *c = g->cred;
	br_ssl_server_context *sc = &e->u.server;
	br_ssl_server_zero(sc);
	e->role = ROLE_SERVER;
	engine_common(e, core);
	br_ssl_engine_set_suites(&sc->eng, c->suites, c->suite_count);
	br_ssl_engine_add_flags(&sc->eng, BR_OPT_ENFORCE_SERVER_PREFERENCES);
	if (c->kind == KEY_RSA)
		br_ssl_server_set_single_rsa(sc, c->chain, c->chain_len, &c->rsa, BR_KEYTYPE_SIGN,
					     br_rsa_private_get_default(), br_rsa_pkcs1_sign_get_default());
	else
		br_ssl_server_set_single_ec(sc, c->chain, c->chain_len, &c->ec, BR_KEYTYPE_SIGN, BR_KEYTYPE_EC,
					    &br_ec_all_m31, br_ecdsa_sign_asn1_get_default());
	if (g->cache)
		br_ssl_server_set_cache(sc, &g->cache->vtable);
	if (client_ca)
		peer_checker_init(e, client_ca);
	if (!br_ssl_server_reset(sc))
		return -1;
	e->gen = g;
	g->use.conns++;
	return 0;
}

/* -- client certificate check: BearSSL's minimal engine, plus iPAddress -- */

static struct x509_checker *checker_of(const br_x509_class **ctx)
{
	return (struct x509_checker *)(void *)ctx;
}

static void xc_start_chain(const br_x509_class **ctx, const char *server_name)
{
	struct x509_checker *x = checker_of(ctx);
	x->cert_index = 0;
	x->ee_len = 0;
	x->ee_overflow = false;
	/* An IP literal is not a DNS name: BearSSL must not compare it; a
	   client's certificate names no host. */
	x->minimal.vtable->start_chain(&x->minimal.vtable,
				       x->ip_len || x->unverified || x->client_cert ? NULL : server_name);
}

static void xc_start_cert(const br_x509_class **ctx, uint32_t length)
{
	struct x509_checker *x = checker_of(ctx);
	x->minimal.vtable->start_cert(&x->minimal.vtable, length);
}

static void xc_append(const br_x509_class **ctx, const unsigned char *buf, size_t len)
{
	struct x509_checker *x = checker_of(ctx);
	if (x->ip_len && x->cert_index == 0) {
		if (x->ee_len + len > sizeof x->ee)
			x->ee_overflow = true;
		else
			memcpy(x->ee + x->ee_len, buf, len), x->ee_len += len;
	}
	x->minimal.vtable->append(&x->minimal.vtable, buf, len);
}

static void xc_end_cert(const br_x509_class **ctx)
{
	struct x509_checker *x = checker_of(ctx);
	x->cert_index++;
	x->minimal.vtable->end_cert(&x->minimal.vtable);
}

/* A DER element: tag, then the value at *val of *vlen bytes. Returns the
 * bytes the whole element takes, or 0 if malformed. */
static size_t der_next(const unsigned char *p, size_t len, unsigned *tag, const unsigned char **val, size_t *vlen)
{
	if (len < 2)
		return 0;
	*tag = p[0];
	size_t hdr = 2, n = p[1];
	if (n & 0x80) {
		size_t k = n & 0x7f;
		if (k == 0 || k > 3 || len < 2 + k)
			return 0;
		n = 0;
		for (size_t i = 0; i < k; i++)
			n = (n << 8) | p[2 + i];
		hdr += k;
	}
	if (n > len - hdr)
		return 0;
	*val = p + hdr;
	*vlen = n;
	return hdr + n;
}

size_t ig_tls_credentials_serial(const struct tls_credentials *c, unsigned char *out, size_t cap)
{
	/* Certificate { TBSCertificate { [0] version OPTIONAL, serial, ... } } */
	unsigned tag;
	const unsigned char *v;
	size_t vlen;
	if (!der_next(c->chain[0].data, c->chain[0].data_len, &tag, &v, &vlen) || tag != 0x30 ||
	    !der_next(v, vlen, &tag, &v, &vlen) || tag != 0x30)
		return 0;
	const unsigned char *field;
	size_t flen, used = der_next(v, vlen, &tag, &field, &flen);
	if (used && tag == 0xa0)
		used = der_next(v + used, vlen - used, &tag, &field, &flen);
	if (!used || tag != 0x02 || flen > cap)
		return 0;
	memcpy(out, field, flen);
	return flen;
}

/* True if the certificate (DER) lists ip among its subjectAltName
 * iPAddress entries. */
static bool cert_has_ip(const unsigned char *cert, size_t len, const unsigned char *ip, size_t iplen)
{
	static const unsigned char san_oid[] = { 0x55, 0x1d, 0x11 };
	unsigned tag;
	const unsigned char *v;
	size_t vlen;
	if (!der_next(cert, len, &tag, &v, &vlen) || tag != 0x30) /* Certificate */
		return false;
	if (!der_next(v, vlen, &tag, &v, &vlen) || tag != 0x30) /* tbsCertificate */
		return false;
	const unsigned char *p = v, *end = v + vlen;
	while (p < end) {
		const unsigned char *f;
		size_t flen, used = der_next(p, (size_t)(end - p), &tag, &f, &flen);
		if (!used)
			return false;
		p += used;
		if (tag != 0xa3) /* [3] extensions */
			continue;
		if (!der_next(f, flen, &tag, &f, &flen) || tag != 0x30)
			return false;
		for (const unsigned char *q = f, *qend = f + flen; q < qend;) {
			const unsigned char *ext;
			size_t elen, u = der_next(q, (size_t)(qend - q), &tag, &ext, &elen);
			if (!u || tag != 0x30)
				return false;
			q += u;
			const unsigned char *oid, *item;
			size_t olen, ilen, k = der_next(ext, elen, &tag, &oid, &olen);
			if (!k || tag != 0x06 || olen != sizeof san_oid || memcmp(oid, san_oid, olen) != 0)
				continue;
			ext += k, elen -= k;
			k = der_next(ext, elen, &tag, &item, &ilen);
			if (k && tag == 0x01) { /* critical */
				ext += k, elen -= k;
				k = der_next(ext, elen, &tag, &item, &ilen);
			}
			if (!k || tag != 0x04 || !der_next(item, ilen, &tag, &item, &ilen) || tag != 0x30)
				return false;
			for (const unsigned char *g = item, *gend = item + ilen; g < gend;) {
				const unsigned char *name;
				size_t nlen, gu = der_next(g, (size_t)(gend - g), &tag, &name, &nlen);
				if (!gu)
					return false;
				g += gu;
				if (tag == 0x87 && nlen == iplen && memcmp(name, ip, iplen) == 0)
					return true;
			}
			return false;
		}
		return false;
	}
	return false;
}

static unsigned xc_end_chain(const br_x509_class **ctx)
{
	struct x509_checker *x = checker_of(ctx);
	unsigned err = x->minimal.vtable->end_chain(&x->minimal.vtable);
	if (x->client_cert) {
		if (err == BR_ERR_OK && x->cert_index) {
			*x->verified = true;
			if (x->cn.status != 1)
				x->subject[0] = 0;
		}
		return err;
	}
	/* Unverified: the key is taken from a chain no anchor vouches for
	   (minimal's get_pkey gives it for NOT_TRUSTED); anything else, a
	   malformed chain, still fails. */
	if (x->unverified)
		return err == BR_ERR_X509_NOT_TRUSTED ? BR_ERR_OK : err;
	if (err != BR_ERR_OK || !x->ip_len)
		return err;
	if (x->ee_overflow || !cert_has_ip(x->ee, x->ee_len, x->ip, x->ip_len))
		return BR_ERR_X509_BAD_SERVER_NAME;
	return BR_ERR_OK;
}

static const br_x509_pkey *xc_get_pkey(const br_x509_class *const *ctx, unsigned *usages)
{
	const struct x509_checker *x = (const struct x509_checker *)(const void *)ctx;
	return x->minimal.vtable->get_pkey(&x->minimal.vtable, usages);
}

static const br_x509_class checker_class = {
	.context_size = sizeof(struct x509_checker),
	.start_chain = xc_start_chain,
	.start_cert = xc_start_cert,
	.append = xc_append,
	.end_cert = xc_end_cert,
	.end_chain = xc_end_chain,
	.get_pkey = xc_get_pkey,
};

/* BearSSL's minimal engine against trust (NULL: no anchors), its hashes
 * and signature checks. */
static void checker_init(struct x509_checker *x, const struct tls_trust *trust)
{
	br_x509_minimal_init(&x->minimal, &br_sha256_vtable, trust ? trust->anchors : NULL, trust ? trust->count : 0);
	br_x509_minimal_set_hash(&x->minimal, br_sha256_ID, &br_sha256_vtable);
	br_x509_minimal_set_hash(&x->minimal, br_sha384_ID, &br_sha384_vtable);
	br_x509_minimal_set_hash(&x->minimal, br_sha512_ID, &br_sha512_vtable);
	br_x509_minimal_set_rsa(&x->minimal, br_rsa_pkcs1_vrfy_get_default());
	br_x509_minimal_set_ecdsa(&x->minimal, &br_ec_all_m31, br_ecdsa_vrfy_asn1_get_default());
	x->vtable = &checker_class;
}

/* -- mutual TLS: the client's chain -- */

int ig_tls_backend_set_client_ca(const struct tls_trust *ca, char *err, size_t errlen)
{
	(void)err, (void)errlen;
	client_ca = ca;
	return 0;
}

/* id-at-commonName (2.5.4.3), as br_name_element wants it: length first. */
static const unsigned char cn_oid[] = { 3, 0x55, 0x04, 0x03 };

static void peer_checker_init(struct tls_engine *e, const struct tls_trust *ca)
{
	br_ssl_server_context *sc = &e->u.server;
	struct x509_checker *x = &e->peer;
	checker_init(x, ca);
	x->client_cert = true;
	x->ip_len = 0;
	x->unverified = false;
	x->verified = &e->peer_verified;
	x->cn = (br_name_element){ .oid = cn_oid, .buf = x->subject, .len = sizeof x->subject };
	x->subject[0] = 0;
	br_x509_minimal_set_name_elements(&x->minimal, &x->cn, 1);
	br_ssl_engine_set_x509(&sc->eng, &x->vtable);
	/* The CertificateVerify's signature, with the certificate's key. */
	br_ssl_engine_set_rsavrfy(&sc->eng, br_rsa_pkcs1_vrfy_get_default());
	br_ssl_engine_set_ecdsa(&sc->eng, ecdsa_vrfy_all_curves);
	br_ssl_server_set_trust_anchor_names_alt(sc, ca->anchors, ca->count);
	br_ssl_engine_add_flags(&sc->eng, BR_OPT_TOLERATE_NO_CLIENT_AUTH);
}

const char *ig_tls_engine_peer_subject(struct tls_engine *e)
{
	return e->role == ROLE_SERVER && e->established && e->peer_verified ? e->peer.subject : NULL;
}

int ig_tls_engine_init_client(struct tls_engine *e, struct tls_core *core,
			   const struct tls_trust *trust, const struct tls_peer_name *peer)
{
	br_ssl_client_context *cc = &e->u.client;
	struct x509_checker *x = &e->client.x509;
	br_ssl_client_zero(cc);
	e->role = ROLE_CLIENT;
	engine_common(e, core);
	br_ssl_engine_set_ec(&cc->eng, &ec_kx_client);
	br_ssl_engine_set_rsavrfy(&cc->eng, br_rsa_pkcs1_vrfy_get_default());
	br_ssl_engine_set_ecdsa(&cc->eng, ecdsa_vrfy_all_curves);

	checker_init(x, trust);
	x->client_cert = false;
	x->ip_len = peer ? peer->ip_len : 0;
	if (x->ip_len)
		memcpy(x->ip, peer->ip, x->ip_len);
	x->unverified = !trust;
	e->client.offered_len = 0;
	br_ssl_engine_set_x509(&cc->eng, &x->vtable);
	/* No SNI for an IP literal (RFC 6066); its check is ours. */
	const char *sni = peer && !x->ip_len ? peer->host : NULL;
	if (!sni && !x->ip_len && !x->unverified)
		return -1; /* verification needs a name */
	return br_ssl_client_reset(cc, sni, 0) ? 0 : -1;
}

void ig_tls_engine_free(struct tls_engine *e)
{
	/* BearSSL allocated nothing; the server's credentials are counted. */
	struct server_gen *g = e->gen;
	if (g) {
		e->gen = NULL;
		if (tls_gen_release(&g->use))
			gen_free(g);
	}
}

bool ig_tls_engine_session_get(struct tls_engine *e, struct tls_session *s)
{
	if (e->role != ROLE_CLIENT || !e->established || sizeof(br_ssl_session_parameters) > sizeof s->data)
		return false;
	br_ssl_session_parameters p;
	br_ssl_engine_get_session_parameters(eng_of(e), &p);
	if (p.session_id_len == 0)
		return false;
	memcpy(s->data, &p, sizeof p);
	s->len = sizeof p;
	return true;
}

int ig_tls_engine_session_resume(struct tls_engine *e, const struct tls_session *s)
{
	if (e->role != ROLE_CLIENT || s->len != sizeof(br_ssl_session_parameters))
		return -1;
	br_ssl_session_parameters p;
	memcpy(&p, s->data, sizeof p);
	if (p.session_id_len > sizeof e->client.offered_id)
		return -1;
	br_ssl_engine_set_session_parameters(eng_of(e), &p);
	memcpy(e->client.offered_id, p.session_id, p.session_id_len);
	e->client.offered_len = p.session_id_len;
	/* Nothing has left yet: the ClientHello is made again, offering it. */
	struct x509_checker *x = &e->client.x509;
	const char *sni = br_ssl_engine_get_server_name(eng_of(e));
	return br_ssl_client_reset(&e->u.client, x->ip_len || !*sni ? NULL : sni, 1) ? 0 : -1;
}

/* ---- the record engine ---- */

unsigned ig_tls_engine_state(struct tls_engine *e)
{
	br_ssl_engine_context *eng = eng_of(e);
	unsigned st = br_ssl_engine_current_state(eng);
	if ((eng->application_data & 1) && !e->established)
		e->established = true;
	/* BearSSL waits for the peer's close_notify after sending its own;
	   the contract ends at ours being sent. It cannot be written while a
	   record is coming in (one buffer), and BearSSL does not go back to
	   writing it once that record is discarded: closing again does. */
	if (e->closing && !(st & (BR_SSL_SENDREC | BR_SSL_CLOSED)) && eng->iomode != IOMODE_RECORD_IN) {
		br_ssl_engine_close(eng);
		st = br_ssl_engine_current_state(eng);
		if (!(st & (BR_SSL_SENDREC | BR_SSL_CLOSED)) && eng->iomode != IOMODE_RECORD_IN)
			return TLS_CLOSED;
	}
	return st;
}

unsigned char *ig_tls_engine_sendrec_buf(struct tls_engine *e, size_t *len)
{
	return br_ssl_engine_sendrec_buf(eng_of(e), len);
}

void ig_tls_engine_sendrec_ack(struct tls_engine *e, size_t len)
{
	br_ssl_engine_sendrec_ack(eng_of(e), len);
}

unsigned char *ig_tls_engine_recvrec_buf(struct tls_engine *e, size_t *len)
{
	return br_ssl_engine_recvrec_buf(eng_of(e), len);
}

void ig_tls_engine_recvrec_ack(struct tls_engine *e, size_t len)
{
	br_ssl_engine_recvrec_ack(eng_of(e), len);
}

unsigned char *ig_tls_engine_sendapp_buf(struct tls_engine *e, size_t *len)
{
	return br_ssl_engine_sendapp_buf(eng_of(e), len);
}

void ig_tls_engine_sendapp_ack(struct tls_engine *e, size_t len)
{
	br_ssl_engine_sendapp_ack(eng_of(e), len);
}

unsigned char *ig_tls_engine_recvapp_buf(struct tls_engine *e, size_t *len)
{
	return br_ssl_engine_recvapp_buf(eng_of(e), len);
}

void ig_tls_engine_recvapp_ack(struct tls_engine *e, size_t len)
{
	br_ssl_engine_recvapp_ack(eng_of(e), len);
}

void ig_tls_engine_flush(struct tls_engine *e)
{
	br_ssl_engine_flush(eng_of(e), 0);
}

void ig_tls_engine_close(struct tls_engine *e)
{
	br_ssl_engine_context *eng = eng_of(e);
	if (br_ssl_engine_current_state(eng) & BR_SSL_CLOSED)
		return;
	br_ssl_engine_close(eng);
	/* A failure while closing is reported as such, not as "sent". */
	e->closing = !(br_ssl_engine_current_state(eng) & BR_SSL_CLOSED) || br_ssl_engine_last_error(eng) == 0;
}

bool ig_tls_engine_established(struct tls_engine *e)
{
	if (!e->established && (eng_of(e)->application_data & 1))
		e->established = true;
	return e->established;
}

int ig_tls_engine_error(struct tls_engine *e)
{
	return br_ssl_engine_last_error(eng_of(e));
}

const char *ig_tls_engine_error_text(struct tls_engine *e)
{
	int err = br_ssl_engine_last_error(eng_of(e));
	switch (err) {
	case BR_ERR_OK: return "no error";
	case BR_ERR_X509_NOT_TRUSTED: return "certificate not trusted";
	case BR_ERR_X509_BAD_SERVER_NAME: return "host name mismatch";
	case BR_ERR_X509_EXPIRED: return "certificate expired or not yet valid";
	case BR_ERR_X509_NOT_CA: return "certificate chain: an issuer is not a CA";
	case BR_ERR_X509_FORBIDDEN_KEY_USAGE: return "certificate key usage forbids this use";
	case BR_ERR_X509_WEAK_PUBLIC_KEY: return "certificate key too weak";
	case BR_ERR_X509_EMPTY_CHAIN: return "no certificate sent";
	case BR_ERR_BAD_VERSION:
	case BR_ERR_UNSUPPORTED_VERSION: return "unsupported protocol version";
	case BR_ERR_BAD_CIPHER_SUITE: return "no shared cipher suite";
	case BR_ERR_NO_RANDOM: return "no entropy";
	case BR_ERR_BAD_MAC: return "record authentication failed";
	case BR_ERR_TOO_LARGE: return "record too large";
	case BR_ERR_IO: return "I/O error";
	}
	if (err >= BR_ERR_X509_OK && err < BR_ERR_X509_OK + 64)
		snprintf(e->error_text, sizeof e->error_text, "certificate invalid (BearSSL error %d)", err);
	else if (err >= BR_ERR_SEND_FATAL_ALERT)
		snprintf(e->error_text, sizeof e->error_text, "sent fatal alert %d", err - BR_ERR_SEND_FATAL_ALERT);
	else if (err >= BR_ERR_RECV_FATAL_ALERT)
		snprintf(e->error_text, sizeof e->error_text, "peer sent fatal alert %d", err - BR_ERR_RECV_FATAL_ALERT);
	else
		snprintf(e->error_text, sizeof e->error_text, "protocol error (BearSSL error %d)", err);
	return e->error_text;
}

const char *ig_tls_engine_version(struct tls_engine *e)
{
	switch (eng_of(e)->session.version) {
	case BR_TLS12: return "TLSv1.2";
	case BR_TLS11: return "TLSv1.1";
	case BR_TLS10: return "TLSv1.0";
	default: return NULL;
	}
}

const char *ig_tls_engine_suite(struct tls_engine *e)
{
	switch (eng_of(e)->session.cipher_suite) {
	case BR_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: return "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256";
	case BR_TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: return "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256";
	case BR_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: return "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384";
	case BR_TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: return "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384";
	case BR_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: return "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256";
	case BR_TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: return "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256";
	default: return NULL;
	}
}

const char *ig_tls_engine_alpn(struct tls_engine *e)
{
	return br_ssl_engine_get_selected_protocol(eng_of(e));
}

bool ig_tls_engine_resumed(struct tls_engine *e)
{
	if (e->role == ROLE_SERVER)
		return e->resumed;
	/* A client resumed if the server accepted the session it offered. */
	const br_ssl_session_parameters *p = &eng_of(e)->session;
	return e->established && e->client.offered_len && p->session_id_len == e->client.offered_len &&
	       memcmp(p->session_id, e->client.offered_id, p->session_id_len) == 0;
}
