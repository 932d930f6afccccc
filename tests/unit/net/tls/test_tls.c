/* The TLS backend (net/tls/backend.h) in memory, with no socket: a server
 * engine and a client engine pumped against each other. The same source
 * links with net/tls/bearssl.c or net/tls/mbedtls.c. The certificates are
 * made at run time with openssl in a temporary directory: a test CA, an
 * RSA and an ECDSA P-256 leaf (signed by the CA, for localhost and
 * 127.0.0.1) and a second CA that signed nothing of ours. */
#include "net/tls/backend.h"
#include "tests/unit/check.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/ingot-test-tls-XXXXXX";

/* Files read, freed at the end. */
static char *files[64];
static int file_count;

static char *slurp(const char *name, size_t *len)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	if (!f || file_count == 64) {
		if (f)
			fclose(f);
		return NULL;
	}
	char *buf = malloc(1 << 16);
	size_t n = fread(buf, 1, (1 << 16) - 1, f);
	fclose(f);
	buf[n] = 0;
	*len = n;
	files[file_count++] = buf;
	return buf;
}

static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	va_start(ap, fmt);
	int n = snprintf(cmd, sizeof cmd, "cd %s && ", dir);
	vsnprintf(cmd + n, sizeof cmd - (size_t)n, fmt, ap);
	va_end(ap);
	strncat(cmd, " >/dev/null 2>&1", sizeof cmd - strlen(cmd) - 1);
	return system(cmd);
}

static bool make_certs(void)
{
	if (!mkdtemp(dir))
		return false;
	static const char leaf_ext[] =
		"basicConstraints=critical,CA:FALSE\n"
		"keyUsage=critical,digitalSignature,keyEncipherment\n"
		"extendedKeyUsage=serverAuth\n"
		"subjectAltName=DNS:localhost,DNS:*.test.ingot,IP:127.0.0.1,IP:::1\n";
	char path[256];
	snprintf(path, sizeof path, "%s/leaf.ext", dir);
	FILE *f = fopen(path, "w");
	if (!f)
		return false;
	fputs(leaf_ext, f);
	fclose(f);
	const char *ca = "openssl req -x509 -new -nodes -days 2 -newkey ec -pkeyopt ec_paramgen_curve:P-256 "
			 "-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign";
	return sh("%s -keyout ca.key -out ca.pem -subj '/CN=ingot test CA'", ca) == 0 &&
	       sh("%s -keyout other-ca.key -out other-ca.pem -subj '/CN=ingot other CA'", ca) == 0 &&
	       /* RSA, the key in PKCS#1 form ("RSA PRIVATE KEY") */
	       sh("openssl genrsa -traditional -out rsa.key 2048") == 0 &&
	       sh("openssl req -new -key rsa.key -out rsa.csr -subj /CN=localhost") == 0 &&
	       sh("openssl x509 -req -in rsa.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "
		  "-extfile leaf.ext -out rsa.pem") == 0 &&
	       /* ECDSA P-256, the key in SEC1 form after EC PARAMETERS */
	       sh("openssl ecparam -genkey -name prime256v1 -out ec.key") == 0 &&
	       sh("openssl req -new -key ec.key -out ec.csr -subj /CN=localhost") == 0 &&
	       sh("openssl x509 -req -in ec.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "
		  "-extfile leaf.ext -out ec.pem") == 0 &&
	       /* ECDSA P-384: a curve BearSSL's key exchange code does not know */
	       sh("openssl ecparam -genkey -name secp384r1 -out ec384.key") == 0 &&
	       sh("openssl req -new -key ec384.key -out ec384.csr -subj /CN=localhost") == 0 &&
	       sh("openssl x509 -req -in ec384.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "
		  "-extfile leaf.ext -out ec384.pem") == 0 &&
	       /* PKCS#8, and a key that belongs to no certificate */
	       sh("openssl pkcs8 -topk8 -nocrypt -in ec.key -out ec.p8") == 0 &&
	       sh("openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out stray.key") == 0 &&
	       sh("openssl genrsa -out stray-rsa.key 2048") == 0 &&
	       sh("openssl pkcs8 -topk8 -passout pass:secret -in ec.key -out ec.enc") == 0 &&
	       sh("openssl genrsa -traditional -out weak.key 1024 && openssl req -x509 -new -key weak.key "
		  "-days 2 -subj /CN=weak -out weak.pem") == 0;
}

static void remove_certs(void)
{
	sh("rm -f ca.* other-ca.* rsa.* ec.* ec384.* stray.key stray-rsa.key weak.* leaf.ext");
	rmdir(dir);
}

/* ---- two engines in memory ---- */

struct pair {
	struct tls_engine *server, *client;
};

/* Moves records one way; returns the bytes moved. */
static size_t move(struct tls_engine *from, struct tls_engine *to)
{
	size_t out_len, in_len;
	unsigned char *out = ig_tls_engine_sendrec_buf(from, &out_len);
	if (!out || !(ig_tls_engine_state(to) & TLS_RECVREC))
		return 0;
	unsigned char *in = ig_tls_engine_recvrec_buf(to, &in_len);
	if (!in)
		return 0;
	size_t n = out_len < in_len ? out_len : in_len;
	memcpy(in, out, n);
	ig_tls_engine_sendrec_ack(from, n);
	ig_tls_engine_recvrec_ack(to, n);
	return n;
}

/* Moves records both ways until nothing moves. */
static void pump(struct pair *p)
{
	for (int guard = 0; guard < 100000; guard++) {
		size_t a = move(p->client, p->server);
		size_t b = move(p->server, p->client);
		if (!a && !b)
			return;
	}
}

static bool handshake(struct pair *p)
{
	pump(p);
	return ig_tls_engine_established(p->server) && ig_tls_engine_established(p->client) &&
	       !(ig_tls_engine_state(p->server) & TLS_CLOSED) && !(ig_tls_engine_state(p->client) & TLS_CLOSED);
}

/* Writes all of data through from's engine into to's, reading as it goes
 * into got (cap bytes). Returns the bytes read. */
static size_t transfer(struct pair *p, struct tls_engine *from, struct tls_engine *to, const unsigned char *data,
		       size_t len, unsigned char *got, size_t cap)
{
	size_t sent = 0, recvd = 0;
	for (int guard = 0; guard < 100000 && recvd < len; guard++) {
		size_t room, avail;
		unsigned char *w = ig_tls_engine_sendapp_buf(from, &room);
		if (w && sent < len) {
			size_t n = len - sent < room ? len - sent : room;
			memcpy(w, data + sent, n);
			ig_tls_engine_sendapp_ack(from, n);
			sent += n;
			if (sent == len)
				ig_tls_engine_flush(from);
		}
		pump(p);
		unsigned char *r;
		while ((r = ig_tls_engine_recvapp_buf(to, &avail)) && recvd < cap) {
			size_t n = avail < cap - recvd ? avail : cap - recvd;
			memcpy(got + recvd, r, n);
			ig_tls_engine_recvapp_ack(to, n);
			recvd += n;
			pump(p);
		}
		if ((ig_tls_engine_state(from) | ig_tls_engine_state(to)) & TLS_CLOSED)
			break;
	}
	return recvd;
}

static struct tls_engine *engine_new(void)
{
	return calloc(1, ig_tls_engine_size());
}

static void pair_free(struct pair *p)
{
	ig_tls_engine_free(p->server);
	ig_tls_engine_free(p->client);
	free(p->server);
	free(p->client);
	*p = (struct pair){ 0 };
}

static bool pair_start(struct pair *p, struct tls_core *server_core, struct tls_core *client_core,
		       const struct tls_trust *trust, const char *name, const struct tls_session *resume)
{
	p->server = engine_new();
	p->client = engine_new();
	struct tls_peer_name peer;
	if (name && ig_tls_peer_name_parse(&peer, name) != 0)
		return false;
	if (ig_tls_engine_init_server(p->server, server_core) != 0 ||
	    ig_tls_engine_init_client(p->client, client_core, trust, name ? &peer : NULL) != 0)
		return false;
	return !resume || ig_tls_engine_session_resume(p->client, resume) == 0;
}

static bool str_eq(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

static bool is_aead(const char *suite)
{
	return suite && strncmp(suite, "TLS_ECDHE_", 10) == 0 &&
	       (strstr(suite, "_GCM_") || strstr(suite, "CHACHA20_POLY1305"));
}

/* ---- credentials ---- */

/* Credentials and trust live as long as the process (the contract has no
 * free); kept here so that the leak checker sees them reachable. */
static const void *kept[32];
static int kept_count;

static const void *keep(const void *p)
{
	if (p && kept_count < 32)
		kept[kept_count++] = p;
	return p;
}

static struct tls_credentials *load(const char *cert, const char *key, char *err, size_t errlen)
{
	size_t cl = 0, kl = 0;
	char *c = slurp(cert, &cl), *k = slurp(key, &kl);
	if (!c || !k) {
		snprintf(err, errlen, "missing test file");
		return NULL;
	}
	return (struct tls_credentials *)keep(ig_tls_credentials_load(c, cl, k, kl, err, errlen));
}

static void test_credentials(void)
{
	char err[256] = "";
	check_that(load("rsa.pem", "rsa.key", err, sizeof err) != NULL, "credentials: RSA chain and PKCS#1 key load", "%s", err);
	CHECK(load("ec.pem", "ec.key", err, sizeof err) != NULL,
	      "credentials: ECDSA P-256 chain and SEC1 key (after EC PARAMETERS) load");
	CHECK(load("ec.pem", "ec.p8", err, sizeof err) != NULL, "credentials: a PKCS#8 key loads");

	err[0] = 0;
	CHECK(load("ec.pem", "stray.key", err, sizeof err) == NULL && strstr(err, "does not match"),
	      "credentials: a key of another certificate is refused, saying so");
	err[0] = 0;
	CHECK(load("rsa.pem", "stray-rsa.key", err, sizeof err) == NULL && strstr(err, "does not match"),
	      "credentials: an RSA key of another certificate is refused, saying so");
	err[0] = 0;
	CHECK(load("rsa.pem", "ec.key", err, sizeof err) == NULL && err[0],
	      "credentials: an EC key for an RSA certificate is refused");
	err[0] = 0;
	CHECK(load("ca.key", "ec.key", err, sizeof err) == NULL && strstr(err, "certificate"),
	      "credentials: a key where the certificate should be is refused");
	err[0] = 0;
	CHECK(load("ec.pem", "ec.pem", err, sizeof err) == NULL && strstr(err, "key"),
	      "credentials: a certificate where the key should be is refused");
	err[0] = 0;
	CHECK(load("ec.pem", "ec.enc", err, sizeof err) == NULL && strstr(err, "encrypted"),
	      "credentials: an encrypted key is refused, saying so");
	err[0] = 0;
	CHECK(load("weak.pem", "weak.key", err, sizeof err) == NULL && strstr(err, "2048"),
	      "credentials: an RSA key under 2048 bits is refused");

	static const char garbage[] = "-----BEGIN CERTIFICATE-----\nnot base64 at all!\n-----END CERTIFICATE-----\n";
	size_t kl;
	char *key = slurp("ec.key", &kl);
	err[0] = 0;
	CHECK(ig_tls_credentials_load(garbage, sizeof garbage - 1, key, kl, err, sizeof err) == NULL && err[0],
	      "credentials: garbage PEM is refused with a message");
	static const char bad_der[] = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
	err[0] = 0;
	CHECK(ig_tls_credentials_load(bad_der, sizeof bad_der - 1, key, kl, err, sizeof err) == NULL && err[0],
	      "credentials: a certificate that is not DER is refused");
	err[0] = 0;
	CHECK(ig_tls_credentials_load("", 0, key, kl, err, sizeof err) == NULL && err[0],
	      "credentials: an empty certificate is refused");
}

/* ---- handshakes ---- */

static void test_handshakes(void)
{
	char err[256] = "";
	struct tls_credentials *rsa = load("rsa.pem", "rsa.key", err, sizeof err);
	struct tls_credentials *ec = load("ec.pem", "ec.key", err, sizeof err);
	size_t len;
	char *ca_pem = slurp("ca.pem", &len);
	const struct tls_trust *trust = keep(ig_tls_trust_load(ca_pem, len, true, err, sizeof err));
	char *other_pem = slurp("other-ca.pem", &len);
	const struct tls_trust *other = keep(ig_tls_trust_load(other_pem, len, true, err, sizeof err));
	CHECK(trust && other, "trust: a PEM CA bundle loads (replacing the built-in set)");
	err[0] = 0;
	CHECK(ig_tls_trust_load("junk", 4, true, err, sizeof err) == NULL && err[0],
	      "trust: a bundle without a certificate is refused");
	if (!rsa || !ec || !trust || !other)
		return;

	struct tls_core *rsa_core = (struct tls_core *)keep(ig_tls_backend_core_new(rsa, 64 * 1024));
	struct tls_core *ec_core = (struct tls_core *)keep(ig_tls_backend_core_new(ec, 64 * 1024));
	struct tls_core *nocache_core = (struct tls_core *)keep(ig_tls_backend_core_new(ec, 0));
	struct tls_core *client_core = (struct tls_core *)keep(ig_tls_backend_core_new(NULL, 0));
	CHECK(rsa_core && ec_core && nocache_core && client_core, "per-core state is created");

	struct pair p;
	CHECK(pair_start(&p, rsa_core, client_core, trust, "localhost", NULL) && handshake(&p),
	      "RSA: the handshake succeeds with the right CA and host name");
	CHECK(str_eq(ig_tls_engine_version(p.server), "TLSv1.2") && str_eq(ig_tls_engine_version(p.client), "TLSv1.2"),
	      "RSA: TLS 1.2 negotiated");
	CHECK(is_aead(ig_tls_engine_suite(p.server)) && strstr(ig_tls_engine_suite(p.server), "_RSA_") &&
		      str_eq(ig_tls_engine_suite(p.server), ig_tls_engine_suite(p.client)),
	      "RSA: an ECDHE_RSA AEAD suite, the same on both sides");
	CHECK(str_eq(ig_tls_engine_alpn(p.server), "http/1.1") && str_eq(ig_tls_engine_alpn(p.client), "http/1.1"),
	      "RSA: ALPN http/1.1 on both sides");
	CHECK(!ig_tls_engine_resumed(p.server) && !ig_tls_engine_resumed(p.client), "RSA: a first handshake is full");

	static unsigned char big[100000], got[100000];
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (unsigned char)(i * 7 + i / 251);
	static const char req[] = "GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n";
	unsigned char small[64];
	size_t n = transfer(&p, p.client, p.server, (const unsigned char *)req, sizeof req - 1, small, sizeof small);
	CHECK(n == sizeof req - 1 && memcmp(small, req, n) == 0, "application data: client to server");
	n = transfer(&p, p.server, p.client, big, sizeof big, got, sizeof got);
	CHECK(n == sizeof big && memcmp(got, big, n) == 0, "application data: 100 kB server to client, over records");
	memset(got, 0, sizeof got);
	n = transfer(&p, p.client, p.server, big, sizeof big, got, sizeof got);
	CHECK(n == sizeof big && memcmp(got, big, n) == 0, "application data: 100 kB client to server");

	ig_tls_engine_close(p.client);
	pump(&p);
	CHECK((ig_tls_engine_state(p.client) & TLS_CLOSED) && ig_tls_engine_error(p.client) == 0,
	      "close: close_notify sent, the closing side ends cleanly");
	/* The closing side is done once its close_notify left: the answer
	   goes nowhere (a server would have closed its socket by then). */
	unsigned char *sink;
	while ((sink = ig_tls_engine_sendrec_buf(p.server, &len)))
		ig_tls_engine_sendrec_ack(p.server, len);
	CHECK((ig_tls_engine_state(p.server) & TLS_CLOSED) && ig_tls_engine_error(p.server) == 0,
	      "close: the peer's close_notify ends the other side cleanly");
	pair_free(&p);

	CHECK(pair_start(&p, ec_core, client_core, trust, "localhost", NULL) && handshake(&p),
	      "ECDSA: the handshake succeeds with the right CA and host name");
	CHECK(str_eq(ig_tls_engine_version(p.client), "TLSv1.2") && is_aead(ig_tls_engine_suite(p.client)) &&
		      strstr(ig_tls_engine_suite(p.client), "_ECDSA_") && str_eq(ig_tls_engine_alpn(p.client), "http/1.1"),
	      "ECDSA: TLS 1.2, an ECDHE_ECDSA AEAD suite, ALPN http/1.1");
	struct tls_session session = { 0 };
	CHECK(ig_tls_engine_session_get(p.client, &session), "resumption: the client gets its session");
	pair_free(&p);

	CHECK(pair_start(&p, ec_core, client_core, trust, "localhost", &session) && handshake(&p) &&
		      ig_tls_engine_resumed(p.server) && ig_tls_engine_resumed(p.client),
	      "resumption: a second connection resumes from the server's session cache");
	n = transfer(&p, p.client, p.server, (const unsigned char *)req, sizeof req - 1, small, sizeof small);
	CHECK(n == sizeof req - 1 && memcmp(small, req, n) == 0, "resumption: application data flows after it");
	pair_free(&p);

	CHECK(pair_start(&p, nocache_core, client_core, trust, "localhost", &session) && handshake(&p) &&
		      !ig_tls_engine_resumed(p.server) && !ig_tls_engine_resumed(p.client),
	      "resumption: without a session cache the handshake is full");
	pair_free(&p);

	CHECK(pair_start(&p, ec_core, client_core, trust, "a.test.ingot", NULL) && handshake(&p),
	      "host name: a wildcard name of the certificate matches");
	pair_free(&p);
	CHECK(pair_start(&p, ec_core, client_core, trust, "localhost.", NULL) && handshake(&p),
	      "host name: a trailing dot (an absolute name) is ignored");
	pair_free(&p);

	struct tls_credentials *ec384 = load("ec384.pem", "ec384.key", err, sizeof err);
	struct tls_core *ec384_core = ec384 ? (struct tls_core *)keep(ig_tls_backend_core_new(ec384, 0)) : NULL;
	bool ok384 = ec384_core && pair_start(&p, ec384_core, client_core, trust, "localhost", NULL) && handshake(&p);
	check_that(ok384 && strstr(ig_tls_engine_suite(p.client), "_ECDSA_"),
		   "ECDSA P-384 certificate: the client verifies the server's key exchange signature", "error \"%s\"",
		   p.client ? ig_tls_engine_error_text(p.client) : err);
	if (ok384) {
		n = transfer(&p, p.client, p.server, (const unsigned char *)req, sizeof req - 1, small, sizeof small);
		CHECK(n == sizeof req - 1 && memcmp(small, req, n) == 0, "ECDSA P-384 certificate: application data flows");
	}
	if (p.server)
		pair_free(&p);

	CHECK(pair_start(&p, rsa_core, client_core, trust, "127.0.0.1", NULL) && handshake(&p),
	      "IP literal: matches the certificate's iPAddress (IPv4)");
	pair_free(&p);
	CHECK(pair_start(&p, rsa_core, client_core, trust, "::1", NULL) && handshake(&p),
	      "IP literal: matches the certificate's iPAddress (IPv6)");
	pair_free(&p);

	struct {
		const char *name, *host, *want;
		struct tls_core *core;
		const struct tls_trust *trust;
	} refused[] = {
		{ "refused without the CA (RSA)", "localhost", "not trusted", rsa_core, other },
		{ "refused without the CA (ECDSA)", "localhost", "not trusted", ec_core, other },
		{ "refused for a wrong host name (RSA)", "wrong.example", "host name", rsa_core, trust },
		{ "refused for a wrong host name (ECDSA)", "test.ingot", "host name", ec_core, trust },
		{ "refused for an IP the certificate does not name", "127.0.0.2", "host name", rsa_core, trust },
	};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		bool started = pair_start(&p, refused[i].core, client_core, refused[i].trust, refused[i].host, NULL);
		bool ok = started && !handshake(&p);
		const char *why = started ? ig_tls_engine_error_text(p.client) : "";
		check_that(ok && (ig_tls_engine_state(p.client) & TLS_CLOSED) && ig_tls_engine_error(p.client) != 0 &&
				   strstr(why, refused[i].want) && !ig_tls_engine_established(p.client),
			   refused[i].name, "error \"%s\"", why);
		pair_free(&p);
	}

	/* A client that sends garbage instead of a ClientHello. */
	struct tls_engine *s = engine_new();
	ig_tls_engine_init_server(s, rsa_core);
	size_t cap;
	unsigned char *in = ig_tls_engine_recvrec_buf(s, &cap);
	static const char junk[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	size_t k = cap < sizeof junk - 1 ? cap : sizeof junk - 1;
	memcpy(in, junk, k);
	ig_tls_engine_recvrec_ack(s, k);
	CHECK((ig_tls_engine_state(s) & TLS_CLOSED) && ig_tls_engine_error(s) != 0 && !ig_tls_engine_established(s),
	      "a server fed plain HTTP fails with an error");
	ig_tls_engine_free(s);
	free(s);
}

/* The one reading of a server name both backends take. */
/* A reload: a core given new credentials serves them, with a new session
 * cache, to new connections, while one begun before keeps working on the
 * old; the old go with the last of their connections and references (the
 * leak checker of the .asan build sees any that stay). */
static void test_reload(void)
{
	char err[256] = "";
	size_t cl, kl, len;
	char *c = slurp("rsa.pem", &cl), *k = slurp("rsa.key", &kl);
	struct tls_credentials *rsa = c && k ? ig_tls_credentials_load(c, cl, k, kl, err, sizeof err) : NULL;
	c = slurp("ec.pem", &cl), k = slurp("ec.key", &kl);
	struct tls_credentials *ec = c && k ? ig_tls_credentials_load(c, cl, k, kl, err, sizeof err) : NULL;
	char *ca_pem = slurp("ca.pem", &len);
	const struct tls_trust *trust = keep(ig_tls_trust_load(ca_pem, len, true, err, sizeof err));
	struct tls_core *core = (struct tls_core *)keep(ig_tls_backend_core_new(rsa, 64 * 1024));
	struct tls_core *client_core = (struct tls_core *)keep(ig_tls_backend_core_new(NULL, 0));
	CHECK(rsa && ec && trust && core && client_core, "reload: credentials and cores");
	if (!rsa || !ec || !trust || !core || !client_core)
		return;
	/* The core holds its own references: the loader's go now. */
	ig_tls_credentials_unref(rsa);

	struct pair old;
	CHECK(pair_start(&old, core, client_core, trust, "localhost", NULL) && handshake(&old) &&
		      strstr(ig_tls_engine_suite(old.client), "_RSA_"),
	      "reload: before it, the first credentials (RSA) serve");
	struct tls_session session = { 0 };
	CHECK(ig_tls_engine_session_get(old.client, &session), "reload: the client keeps its session");
	struct pair p;
	CHECK(pair_start(&p, core, client_core, trust, "localhost", &session) && handshake(&p) &&
		      ig_tls_engine_resumed(p.server),
	      "reload: before it, the session resumes");
	pair_free(&p);

	CHECK(ig_tls_backend_core_set_credentials(core, ec) == 0, "reload: the core adopts new credentials");
	ig_tls_credentials_unref(ec);
	CHECK(pair_start(&p, core, client_core, trust, "localhost", NULL) && handshake(&p) &&
		      strstr(ig_tls_engine_suite(p.client), "_ECDSA_"),
	      "reload: a new connection gets the new credentials (ECDSA)");
	pair_free(&p);
	CHECK(pair_start(&p, core, client_core, trust, "localhost", &session) && handshake(&p) &&
		      !ig_tls_engine_resumed(p.server) && !ig_tls_engine_resumed(p.client),
	      "reload: a session of the old credentials does not resume (a new cache)");
	pair_free(&p);

	static const char req[] = "GET /json HTTP/1.1\r\nHost: localhost\r\n\r\n";
	unsigned char got[64];
	size_t n = transfer(&old, old.client, old.server, (const unsigned char *)req, sizeof req - 1, got, sizeof got);
	CHECK(n == sizeof req - 1 && memcmp(got, req, n) == 0, "reload: the connection begun before still carries data");
	n = transfer(&old, old.server, old.client, (const unsigned char *)req, sizeof req - 1, got, sizeof got);
	CHECK(n == sizeof req - 1 && memcmp(got, req, n) == 0, "reload: both ways");
	pair_free(&old); /* the RSA generation goes with it */

	/* Repeated reloads to the same credentials: each makes a generation,
	   and each generation without a connection goes at once. */
	for (int i = 0; i < 3; i++) {
		c = slurp(i % 2 ? "ec.pem" : "rsa.pem", &cl), k = slurp(i % 2 ? "ec.key" : "rsa.key", &kl);
		struct tls_credentials *next = ig_tls_credentials_load(c, cl, k, kl, err, sizeof err);
		CHECK(next && ig_tls_backend_core_set_credentials(core, next) == 0, "reload: again");
		if (next)
			ig_tls_credentials_unref(next);
	}
	CHECK(pair_start(&p, core, client_core, trust, "localhost", NULL) && handshake(&p) &&
		      strstr(ig_tls_engine_suite(p.client), "_RSA_"),
	      "reload: the newest credentials serve");
	pair_free(&p);
}

static void test_peer_name(void)
{
	struct tls_peer_name n;
	CHECK(ig_tls_peer_name_parse(&n, "api.test.") == 0 && strcmp(n.host, "api.test") == 0 && n.ip_len == 0,
	      "peer name: a host name loses its trailing dot");
	CHECK(ig_tls_peer_name_parse(&n, "127.0.0.1") == 0 && n.ip_len == 4 && n.ip[0] == 127 && !n.host[0],
	      "peer name: an IPv4 address is an address, no SNI");
	CHECK(ig_tls_peer_name_parse(&n, "[::1]") == 0 && n.ip_len == 16 && n.ip[15] == 1 && !n.host[0],
	      "peer name: an IPv6 address in brackets is an address");
	CHECK(ig_tls_peer_name_parse(&n, "::1") == 0 && n.ip_len == 16, "peer name: a bare IPv6 address");
	char longname[256];
	memset(longname, 'a', 254);
	longname[254] = 0;
	CHECK(ig_tls_peer_name_parse(&n, "") != 0 && ig_tls_peer_name_parse(&n, ".") != 0 &&
		      ig_tls_peer_name_parse(&n, longname) != 0,
	      "peer name: empty, a lone dot and 254 bytes are refused");
	longname[253] = '.';
	CHECK(ig_tls_peer_name_parse(&n, longname) == 0 && strlen(n.host) == 253,
	      "peer name: 253 bytes and a trailing dot fit");
}

int main(void)
{
	char err[256];
	test_peer_name();
	CHECK(ig_tls_backend_init(err, sizeof err) == 0, "the backend seeds from getrandom");
	check_that(ig_tls_backend_name() && ig_tls_backend_name()[0], "the backend has a name", NULL);
	if (!make_certs()) {
		check_that(false, "openssl makes the test certificates", "in %s", dir);
		remove_certs();
		return check_done();
	}
	test_credentials();
	test_handshakes();
	test_reload();
	remove_certs();
	for (int i = 0; i < file_count; i++)
		free(files[i]);
	return check_done();
}
