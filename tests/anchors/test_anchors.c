/* Checks the compiled-in trust anchors ($(GEN)/anchors.c, contract in
 * net/tls/anchors.h) against what Debian ships, found by other means than
 * tools/anchors (tests/anchors/run computes the lists), and checks that
 * both forms work: every certificate verifies against its own BearSSL
 * anchor with BearSSL's X.509 engine, and mbedtls parses every DER one.
 *   test_anchors [expect NAME LIST]... [sizes NONE BEARSSL DER BOTH]
 *                [deterministic 0|1] [skip NAME REASON]
 * A LIST holds one "SHA1-HEX label" a line: the set must equal it. sizes
 * are the byte sizes of four static binaries that refer to no form, to
 * one, to both (tests/anchors/run links them). deterministic: whether a
 * second run of tools/anchors wrote the same file; skip: a check that
 * could not run here, reported as skipped. */
#include "net/tls/anchors.h"
#include "tests/unit/check.h"

#include <bearssl.h>
#include <mbedtls/x509_crt.h>
#include <stdlib.h>

static void sha1_hex(const struct ig_der *c, char out[41])
{
	br_sha1_context h;
	unsigned char d[20];
	br_sha1_init(&h);
	br_sha1_update(&h, c->data, c->len);
	br_sha1_out(&h, d);
	for (int i = 0; i < 20; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

static char (*fingerprints)[41];
/* The BearSSL form as net/tls builds its trust from it. */
static br_x509_trust_anchor *anchors;

static long find(const char *sha1)
{
	for (size_t i = 0; i < ig_builtin_anchor_cert_count; i++)
		if (strcmp(fingerprints[i], sha1) == 0)
			return (long)i;
	return -1;
}

static void test_forms_agree(void)
{
	CHECK(ig_builtin_anchor_count > 100, "more than 100 anchors");
	CHECK_INT(ig_builtin_anchor_cert_count, ig_builtin_anchor_count, "both forms hold the same number");
	size_t dup = 0;
	for (size_t i = 0; i < ig_builtin_anchor_cert_count; i++)
		if (find(fingerprints[i]) != (long)i)
			dup++;
	CHECK_INT(dup, 0, "no certificate twice");
}

/* Certificate i as a chain of one, with anchor i as the only anchor, at a
 * time inside its validity (Debian ships expired roots too). */
static unsigned verify_with_own_anchor(size_t i)
{
	const struct ig_der *c = &ig_builtin_anchor_certs[i];
	br_x509_decoder_context dc;
	br_x509_decoder_init(&dc, NULL, NULL);
	br_x509_decoder_push(&dc, c->data, c->len);
	if (br_x509_decoder_last_error(&dc))
		return (unsigned)br_x509_decoder_last_error(&dc);
	br_x509_minimal_context xc;
	br_x509_minimal_init_full(&xc, &anchors[i], 1);
	/* notbefore_days is the decoder's field, not API; BearSSL 0.6 has no
	   other way to read validity. */
	br_x509_minimal_set_time(&xc, dc.notbefore_days + 1, 0);
	const br_x509_class **v = &xc.vtable;
	(*v)->start_chain(v, NULL);
	(*v)->start_cert(v, (uint32_t)c->len);
	(*v)->append(v, c->data, c->len);
	(*v)->end_cert(v);
	return (*v)->end_chain(v);
}

static void test_bearssl_form_verifies(void)
{
	size_t bad = 0, ca = 0;
	for (size_t i = 0; i < ig_builtin_anchor_count; i++) {
		unsigned err = verify_with_own_anchor(i);
		if (err) {
			if (bad++ < 5)
				printf("# certificate %zu does not verify against its anchor: BearSSL error %u\n", i, err);
		}
		ca += (anchors[i].flags & BR_X509_TA_CA) != 0;
	}
	CHECK_INT(bad, 0, "every certificate verifies against its own BearSSL anchor (DN and key right)");
	CHECK_INT(ca, ig_builtin_anchor_count, "every anchor is a CA anchor");
}

static void test_mbedtls_parses_der_form(void)
{
	mbedtls_x509_crt chain;
	mbedtls_x509_crt_init(&chain);
	size_t bad = 0;
	for (size_t i = 0; i < ig_builtin_anchor_cert_count; i++) {
		int ret = mbedtls_x509_crt_parse_der(&chain, ig_builtin_anchor_certs[i].data,
						     ig_builtin_anchor_certs[i].len);
		if (ret && bad++ < 5)
			printf("# certificate %zu: mbedtls_x509_crt_parse_der -0x%04x\n", i, (unsigned)-ret);
	}
	mbedtls_x509_crt_free(&chain);
	CHECK_INT(bad, 0, "mbedtls parses every certificate of the DER form");
}

/* SHA-1 fingerprints from certdata.txt's own comments. */
static const struct {
	const char *label, *sha1;
	bool present;
} known[] = {
	{"ISRG Root X1", "cabd2a79a1076a31f21d253635cb039d4329a5e8", true},
	{"ISRG Root X2", "bdb1b93cd5978d45c6261455f8db95c75ad153af", true},
	{"DigiCert Global Root G2", "df3c24f9bfd666761b268073fe06d1cc8d4f82a4", true},
	{"GlobalSign Root CA", "b1bc968bd4f49d622aa89a81f2150152a41d829c", true},
	{"Amazon Root CA 1", "8da7f965ec5efc37910f1c6e59fdc1cc6a6ede16", true},
	/* Debian's extra/ (Mozilla added it after this certdata.txt) */
	{"Sectigo Public Server Authentication Root E46", "ec8a396c40f02ebc4275d49fab1c1a5b67bed29a", true},
	/* blacklisted by Debian, CKT_NSS_NOT_TRUSTED by Mozilla */
	{"Explicitly Distrust DigiNotar Root CA", "c177cb4be0b4268ef5c7cf459922b9b0ceba212f", false},
	/* trusted for e-mail only */
	{"GlobalSign Secure Mail Root R45", "7618d1f380243d5240c6116aad5777097d8130a0", false},
	{"Certum Root CA", "6252dc40f71143a22fde9ef7348e064251b18118", false},
};

static void test_known_roots(void)
{
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
		char name[160];
		snprintf(name, sizeof name, "%s: %s", known[i].present ? "present" : "absent", known[i].label);
		CHECK((find(known[i].sha1) >= 0) == known[i].present, name);
	}
	size_t diginotar = 0;
	for (size_t i = 0; i < ig_builtin_anchor_count; i++) {
		const br_x500_name *dn = &anchors[i].dn;
		diginotar += memmem(dn->data, dn->len, "DigiNotar", 9) != NULL;
	}
	CHECK_INT(diginotar, 0, "absent: no BearSSL anchor names DigiNotar");
}

/* The set equals the list: every listed fingerprint present, nothing else. */
static void test_equals_list(const char *name, const char *path)
{
	char title[200];
	FILE *f = fopen(path, "r");
	snprintf(title, sizeof title, "%s: the list is readable", name);
	if (!check_that(f != NULL, title, "%s", path))
		return;
	bool *seen = calloc(ig_builtin_anchor_cert_count, sizeof *seen);
	size_t listed = 0, missing = 0, twice = 0, extra = 0;
	char line[512];
	while (fgets(line, sizeof line, f)) {
		char sha1[41];
		if (line[0] == '#' || sscanf(line, "%40s", sha1) != 1)
			continue;
		for (char *c = sha1; *c; c++)
			*c = (char)(*c >= 'A' && *c <= 'F' ? *c - 'A' + 'a' : *c);
		listed++;
		long at = find(sha1);
		if (at < 0) {
			if (missing++ < 5)
				printf("# %s lists, the build lacks: %s", name, line);
		} else if (seen[at]) {
			twice++;
		} else {
			seen[at] = true;
		}
	}
	fclose(f);
	for (size_t i = 0; i < ig_builtin_anchor_cert_count; i++)
		if (!seen[i] && extra++ < 5)
			printf("# the build has, %s does not list: certificate %zu (%s)\n", name, i, fingerprints[i]);
	free(seen);
	snprintf(title, sizeof title, "%s: the same number of certificates", name);
	check_that(listed == ig_builtin_anchor_cert_count, title, "%s lists %zu, the build has %zu", name, listed,
		   ig_builtin_anchor_cert_count);
	snprintf(title, sizeof title, "%s: every listed certificate is in the build", name);
	check_that(missing == 0 && twice == 0, title, "%zu missing, %zu listed twice", missing, twice);
	snprintf(title, sizeof title, "%s: the build has no certificate it does not list", name);
	check_that(extra == 0, title, "%zu more", extra);
}

/* --gc-sections keeps only the form a binary refers to. */
static void test_sizes(long none, long bearssl, long der, long both)
{
	long b = bearssl - none, d = der - none, bd = both - none;
	printf("# bytes added to a static binary: BearSSL form %ld (%.1f KiB), DER form %ld (%.1f KiB), both %ld\n",
	       b, b / 1024.0, d, d / 1024.0, bd);
	check_that(b > 0 && b <= 80 * 1024, "the BearSSL form adds at most 80 KiB to the binary", "%ld bytes", b);
	/* Each alone is well below both together: the other form was dropped
	   (a few KiB of slack for page alignment). */
	check_that(b + d <= bd + 8192 && b + d >= bd - 8192 && b < bd - 65536 && d < bd - 32768,
		   "a binary keeps only the form it refers to", "alone %ld and %ld, together %ld", b, d, bd);
}

int main(int argc, char **argv)
{
	fingerprints = calloc(ig_builtin_anchor_cert_count, sizeof *fingerprints);
	for (size_t i = 0; i < ig_builtin_anchor_cert_count; i++)
		sha1_hex(&ig_builtin_anchor_certs[i], fingerprints[i]);
	anchors = calloc(ig_builtin_anchor_count, sizeof *anchors);
	if (ig_builtin_anchors_expand(anchors) != 0) {
		printf("not ok - the names unpack\n");
		return 1;
	}
	printf("# %zu anchors\n", ig_builtin_anchor_count);
	test_forms_agree();
	test_bearssl_form_verifies();
	test_mbedtls_parses_der_form();
	test_known_roots();
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "expect") == 0 && i + 2 < argc) {
			test_equals_list(argv[i + 1], argv[i + 2]);
			i += 2;
		} else if (strcmp(argv[i], "sizes") == 0 && i + 4 < argc) {
			test_sizes(atol(argv[i + 1]), atol(argv[i + 2]), atol(argv[i + 3]), atol(argv[i + 4]));
			i += 4;
		} else if (strcmp(argv[i], "deterministic") == 0 && i + 1 < argc) {
			CHECK(strcmp(argv[++i], "1") == 0, "tools/anchors writes the same file twice");
		} else if (strcmp(argv[i], "skip") == 0 && i + 2 < argc) {
			printf("ok %u - %s # SKIP %s\n", ++check_count_, argv[i + 1], argv[i + 2]);
			i += 2;
		} else {
			check_that(false, "arguments", "unexpected \"%s\"", argv[i]);
		}
	}
	free(fingerprints);
	return check_done();
}
