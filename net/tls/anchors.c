/* Expanding the compiled-in trust anchors' records (net/tls/anchors.h,
 * written by tools/anchors) into BearSSL's br_x509_trust_anchor entries:
 * run when net/tls builds the outbound trust (ig_tls_trust_load), which
 * unpacks the names once. */
#include "net/tls/anchors.h"
#include "kernel/runtime/lz.h"

#include <pthread.h>
#include <stdlib.h>

static pthread_once_t names_once = PTHREAD_ONCE_INIT;
static unsigned char *names; /* unpacked, for the process's life */

static void unpack_names(void)
{
	unsigned char *n = malloc(ig_builtin_anchor_names_size);
	if (n && ig_lz_unpack(n, ig_builtin_anchor_names_size, ig_builtin_anchor_names, ig_builtin_anchor_names_len) ==
			 ig_builtin_anchor_names_size)
		names = n;
	else
		free(n);
}

static size_t be16(const unsigned char *p)
{
	return (size_t)p[0] << 8 | p[1];
}

int ig_builtin_anchors_expand(br_x509_trust_anchor *out)
{
	pthread_once(&names_once, unpack_names);
	if (!names)
		return -1;
	/* BearSSL's structures take non-const pointers; it never writes them. */
	unsigned char *p = names, *k = (unsigned char *)ig_builtin_anchor_keys;
	for (size_t i = 0; i < ig_builtin_anchor_count; i++) {
		br_x509_trust_anchor *ta = &out[i];
		unsigned flags = p[0];
		ta->dn.len = be16(p + 1);
		ta->dn.data = p + 3;
		p += 3 + ta->dn.len;
		ta->flags = flags & IG_ANCHOR_REC_CA ? BR_X509_TA_CA : 0;
		if (flags & IG_ANCHOR_REC_EC) {
			ta->pkey.key_type = BR_KEYTYPE_EC;
			ta->pkey.key.ec.curve = k[0];
			ta->pkey.key.ec.qlen = k[1];
			ta->pkey.key.ec.q = k + 2;
			k += 2 + ta->pkey.key.ec.qlen;
		} else {
			br_rsa_public_key *rsa = &ta->pkey.key.rsa;
			ta->pkey.key_type = BR_KEYTYPE_RSA;
			rsa->nlen = be16(k);
			rsa->n = k + 2;
			k += 2 + rsa->nlen;
			rsa->elen = k[0];
			rsa->e = k + 1;
			k += 1 + rsa->elen;
		}
	}
	return 0;
}
