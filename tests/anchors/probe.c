/* A static binary that refers to the BearSSL form of the trust anchors
 * (USE_BEARSSL_FORM), the DER form (USE_DER_FORM), both or neither: the
 * bytes each adds to a --gc-sections link, for tests/anchors/run. */
#include "net/tls/anchors.h"
int main(int argc, char **argv)
{
	(void)argv;
	int r = 0;
	if (USE_BEARSSL_FORM)
		r += ig_builtin_anchor_keys[(size_t)argc % ig_builtin_anchor_count] + ig_builtin_anchor_names[(size_t)argc % ig_builtin_anchor_names_len];
	if (USE_DER_FORM)
		r += ig_builtin_anchor_certs[(size_t)argc % ig_builtin_anchor_cert_count].data[0];
	return r;
}
