/* The compiled-in trust anchors for the client role: the certificates
 * Debian's ca-certificates package ships (trusted by Mozilla for server
 * authentication, minus Debian's blacklist, plus Debian's extra roots), so
 * a scratch image needs no /etc/ssl. tools/anchors generates them at build
 * time into $(GEN)/anchors.c from the source package recorded in
 * tools/deps/deps.lock; nothing here is edited by hand.
 *
 * Two forms of the same set, in the same order (entry i of one is entry i
 * of the other):
 *   - BearSSL's: subject DN and public key, what br_x509_minimal needs, as
 *     packed records that ig_builtin_anchors_expand (net/tls/anchors.c)
 *     turns into br_x509_trust_anchor entries when the trust is built;
 *   - whole DER certificates, for backends that parse certificates
 *     themselves (mbedtls).
 * Every array of the generated file is its own object (the runtime is built
 * with -fdata-sections), and neither form refers to the other, so the
 * linker's --gc-sections drops the form the linked backend does not use.
 *
 * Read-only data: safe to read from any thread at any time. Adding or
 * replacing anchors from a PEM file (INGOT_TLS_CA_FILE) is net/tls's job
 * (ig_tls_trust_load), not this set's. */
#ifndef NET_TLS_ANCHORS_H
#define NET_TLS_ANCHORS_H

#include <stddef.h>

#include <bearssl_x509.h>

/* BearSSL form, two arrays of ig_builtin_anchor_count records each, one
 * record after the other:
 *   - keys: for RSA the modulus length (2 bytes, big endian), the
 *     modulus, the exponent length (1), the exponent; for EC the curve (1,
 *     BearSSL's BR_EC_*), the point length (1), the point;
 *   - names, packed with ig_lz (kernel/runtime/lz.h) from
 *     ig_builtin_anchor_names_size bytes to ig_builtin_anchor_names_len:
 *     flags (1 byte: IG_ANCHOR_REC_CA, IG_ANCHOR_REC_EC), the DN's length
 *     (2, big endian), the DN.
 * The flags say which kind of key record goes with the name. */
#define IG_ANCHOR_REC_CA 0x01 /* BR_X509_TA_CA */
#define IG_ANCHOR_REC_EC 0x02 /* an EC key, else RSA */
extern const unsigned char ig_builtin_anchor_keys[];
extern const size_t ig_builtin_anchor_count;
extern const unsigned char ig_builtin_anchor_names[];
extern const size_t ig_builtin_anchor_names_len, ig_builtin_anchor_names_size;

/* Fills out[0..ig_builtin_anchor_count) with the compiled-in anchors, in
 * order, and returns 0; or -1 when there is no memory to unpack the names
 * into, or they do not unpack (out then untouched). The names are unpacked
 * once per process, on the first call, and never freed; the entries point
 * into them and into the key records (read-only: BearSSL's structures take
 * non-const pointers but never write them). Any thread may call it. */
int ig_builtin_anchors_expand(br_x509_trust_anchor *out);

/* One whole certificate, DER-encoded. */
struct ig_der {
	const unsigned char *data;
	size_t len;
};

/* DER form: the same certificates, byte for byte as Debian ships them. */
extern const struct ig_der ig_builtin_anchor_certs[];
extern const size_t ig_builtin_anchor_cert_count;

#endif
