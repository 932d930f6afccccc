/* ingot's mbedtls 2.28 configuration (MBEDTLS_CONFIG_FILE), used instead of
 * Debian's config.h when tools/deps/fetch builds the optional TLS backend
 * (make TLS=mbedtls) and when net/tls/mbedtls.c includes mbedtls headers.
 * It holds only what that backend uses: TLS 1.2, both roles, ECDHE with
 * AEAD suites, RSA and ECDSA certificates, no file system, no sockets, no
 * platform entropy (net/tls/mbedtls.c seeds its DRBGs from getrandom(2)),
 * no threading (every mutable object is per core). Changing this file
 * rebuilds the libraries on the next tools/deps/fetch. */
#ifndef INGOT_MBEDTLS_CONFIG_H
#define INGOT_MBEDTLS_CONFIG_H

/* ---- system ---- */

/* Inline assembly: bignum multiply-accumulate and AES-NI/PCLMUL on x86-64
 * (aesni.c compiles to nothing on other targets). */
#define MBEDTLS_HAVE_ASM
#define MBEDTLS_AESNI_C
/* time() for the session cache, gmtime_r() for certificate validity. */
#define MBEDTLS_HAVE_TIME
#define MBEDTLS_HAVE_TIME_DATE
/* Never read /dev/urandom or call getrandom behind our back: the backend
 * passes its own entropy callback to the DRBGs (there is no
 * MBEDTLS_ENTROPY_C, so no default source can be used by accident). */
#define MBEDTLS_NO_PLATFORM_ENTROPY
#define MBEDTLS_NO_DEFAULT_ENTROPY_SOURCES

/* ---- hashes, ciphers, random ---- */

#define MBEDTLS_MD_C
#define MBEDTLS_SHA256_C
#define MBEDTLS_SHA512_C /* SHA-384 suites and signatures */
/* Not for the handshake (SHA-1 is not offered in signature_algorithms and
 * the X.509 profile refuses it): mbedtls cannot even parse a certificate
 * whose signature algorithm it does not know, and several of Mozilla's
 * roots are self-signed with SHA-1. */
#define MBEDTLS_SHA1_C
#define MBEDTLS_CIPHER_C
#define MBEDTLS_AES_C
#define MBEDTLS_GCM_C
#define MBEDTLS_CHACHA20_C
#define MBEDTLS_POLY1305_C
#define MBEDTLS_CHACHAPOLY_C
#define MBEDTLS_CTR_DRBG_C
/* Deterministic ECDSA (RFC 6979): a signature never depends on the DRBG. */
#define MBEDTLS_HMAC_DRBG_C
#define MBEDTLS_ECDSA_DETERMINISTIC

/* ---- public keys ---- */

#define MBEDTLS_BIGNUM_C
#define MBEDTLS_RSA_C
#define MBEDTLS_PKCS1_V15
#define MBEDTLS_ECP_C
#define MBEDTLS_ECDH_C
#define MBEDTLS_ECDSA_C
#define MBEDTLS_ECP_DP_CURVE25519_ENABLED
#define MBEDTLS_ECP_DP_SECP256R1_ENABLED
#define MBEDTLS_ECP_DP_SECP384R1_ENABLED /* keys of many public CAs */
#define MBEDTLS_ECP_NIST_OPTIM
#define MBEDTLS_PK_C
#define MBEDTLS_PK_PARSE_C
#define MBEDTLS_ASN1_PARSE_C
#define MBEDTLS_ASN1_WRITE_C /* ECDSA signatures are DER */
#define MBEDTLS_OID_C
#define MBEDTLS_PEM_PARSE_C
#define MBEDTLS_BASE64_C

/* ---- X.509 ---- */

#define MBEDTLS_X509_USE_C
#define MBEDTLS_X509_CRT_PARSE_C
#define MBEDTLS_X509_CHECK_KEY_USAGE
#define MBEDTLS_X509_CHECK_EXTENDED_KEY_USAGE
/* The client role hands mbedtls the candidate issuers of each certificate
 * through a callback, parsed afresh from DER for each verification, so that
 * no parsed trust anchor is shared between cores (mbedtls caches
 * computations inside key objects). */
#define MBEDTLS_X509_TRUSTED_CERTIFICATE_CALLBACK

/* ---- TLS ---- */

#define MBEDTLS_SSL_TLS_C
#define MBEDTLS_SSL_SRV_C
#define MBEDTLS_SSL_CLI_C
#define MBEDTLS_SSL_PROTO_TLS1_2
#define MBEDTLS_KEY_EXCHANGE_ECDHE_ECDSA_ENABLED
#define MBEDTLS_KEY_EXCHANGE_ECDHE_RSA_ENABLED
#define MBEDTLS_SSL_EXTENDED_MASTER_SECRET
#define MBEDTLS_SSL_ALPN
#define MBEDTLS_SSL_SERVER_NAME_INDICATION
#define MBEDTLS_SSL_ALL_ALERT_MESSAGES
/* Server-side session cache, one per core (no MBEDTLS_THREADING_C). */
#define MBEDTLS_SSL_CACHE_C

/* The only suites compiled in; net/tls/mbedtls.c sets the same order. */
#define MBEDTLS_SSL_CIPHERSUITES                                      \
	MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,              \
		MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,      \
		MBEDTLS_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, \
		MBEDTLS_TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,        \
		MBEDTLS_TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,        \
		MBEDTLS_TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256

/* Record buffers, allocated by mbedtls per connection. A peer may send
 * records of the full 16 KiB, so input stays at the maximum. Output is ours:
 * application data is cut into records of this size, but a handshake
 * message is never split across records by mbedtls 2.28, so the server's
 * whole Certificate message (its chain) must fit; net/tls/mbedtls.c refuses
 * a longer chain at startup. 8 KiB holds a leaf and two RSA-4096
 * intermediates and saves 8 KiB per connection against 16 KiB. */
#define MBEDTLS_SSL_IN_CONTENT_LEN 16384
#define MBEDTLS_SSL_OUT_CONTENT_LEN 8192

#include "mbedtls/check_config.h"

#endif
