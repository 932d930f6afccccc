/* Expanding the compiled-in trust anchors' records (net/tls/anchors.h,
 * written by tools/anchors) into BearSSL's br_x509_trust_anchor entries:
 * run once, when net/tls builds the outbound trust (ig_tls_trust_load). */
#include "net/tls/anchors.h"

static size_t be16(const unsigned char *p)
{
	return (size_t)p[0] << 8 | p[1];
}

void ig_builtin_anchors_expand(br_x509_trust_anchor *out)
{
	/* BearSSL's structures take non-const pointers; it never writes them. */
	unsigned char *p = (unsigned char *)ig_builtin_anchor_records;
	for (size_t i = 0; i < ig_builtin_anchor_count; i++) {
		br_x509_trust_anchor *ta = &out[i];
		unsigned flags = p[0];
		ta->dn.len = be16(p + 1);
		ta->dn.data = p + 3;
		p += 3 + ta->dn.len;
		ta->flags = flags & IG_ANCHOR_REC_CA ? BR_X509_TA_CA : 0;
		if (flags & IG_ANCHOR_REC_EC) {
			ta->pkey.key_type = BR_KEYTYPE_EC;
			ta->pkey.key.ec.curve = p[0];
			ta->pkey.key.ec.qlen = p[1];
			ta->pkey.key.ec.q = p + 2;
			p += 2 + ta->pkey.key.ec.qlen;
		} else {
			br_rsa_public_key *k = &ta->pkey.key.rsa;
			ta->pkey.key_type = BR_KEYTYPE_RSA;
			k->nlen = be16(p);
			k->n = p + 2;
			p += 2 + k->nlen;
			k->elen = p[0];
			k->e = p + 1;
			p += 1 + k->elen;
		}
	}
}
