/* Unit tests of kernel/metal/cpio: the initrd's newc archive read in place,
 * built here entry by entry as `cpio -o -H newc` writes them: files found
 * by their path from `/` (names with and without "./"), their bytes and
 * sizes across the 4-byte padding, a directory and a missing name not
 * found, nothing read past the trailer, and a malformed archive (bad magic,
 * a field not hex, data past the end) refused. */
#include "kernel/metal/cpio.h"
#include "tests/unit/check.h"

#include <stdio.h>

static char ar[4096];
static size_t ar_len;

static void entry(const char *name, unsigned mode, const char *body)
{
	size_t namesize = strlen(name) + 1, filesize = body ? strlen(body) : 0;
	ar_len += (size_t)sprintf(ar + ar_len, "070701%08X%08X%08X%08X%08X%08X%08zX%08X%08X%08X%08X%08zX%08X", 1u,
				  mode, 0u, 0u, 1u, 0u, filesize, 0u, 0u, 0u, 0u, namesize, 0u);
	memcpy(ar + ar_len, name, namesize);
	ar_len += namesize;
	while (ar_len % 4)
		ar[ar_len++] = 0;
	if (body)
		memcpy(ar + ar_len, body, filesize);
	ar_len += filesize;
	while (ar_len % 4)
		ar[ar_len++] = 0;
}

static void check_file(const char *path, const char *want, const char *name)
{
	const void *data = NULL;
	size_t size = 0;
	bool found = ig_cpio_find(ar, ar_len, path, &data, &size);
	check_that(found && size == strlen(want) && memcmp(data, want, size) == 0, name, "found %d, size %zu", found,
		   size);
}

static bool absent(const char *path)
{
	const void *data;
	size_t size;
	return !ig_cpio_find(ar, ar_len, path, &data, &size);
}

int main(void)
{
	entry(".", 040755, NULL);
	entry("tls", 040755, NULL);
	entry("tls/cert.pem", 0100644, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
	entry("./tls/key.pem", 0100600, "key!!"); /* 5 bytes: the next header is padded */
	entry("empty", 0100644, "");
	entry("TRAILER!!!", 0, NULL);
	size_t whole = ar_len;
	entry("after", 0100644, "past the trailer");

	check_file("/tls/cert.pem", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
		   "INGOT_TLS_CERT=/tls/cert.pem names tls/cert.pem");
	check_file("/tls/key.pem", "key!!", "a name written with ./ is found from /, after the padded file");
	check_file("tls/key.pem", "key!!", "a relative path is taken from /");
	check_file("/empty", "", "an empty file is found, 0 bytes");
	CHECK(absent("/tls"), "a directory is not a file");
	CHECK(absent("/tls/missing.pem"), "a missing name");
	CHECK(absent("/after"), "nothing is read past the trailer");

	ar_len = whole - 1;
	CHECK(absent("/nothing"), "an archive cut in its trailer: not found, no read past the end");
	ar_len = whole;
	/* The certificate's header: its name follows the 110 bytes. */
	size_t cert_at = 0;
	for (size_t i = 0; i + 12 <= ar_len; i++)
		if (memcmp(ar + i, "tls/cert.pem", 12) == 0) {
			cert_at = i - 110;
			break;
		}
	char saved[8];
	memcpy(saved, ar + cert_at + 6 + 8 * 6, 8);
	memcpy(ar + cert_at + 6 + 8 * 6, "0000FFFF", 8);
	CHECK(absent("/tls/cert.pem"), "a file size past the archive's end is refused");
	CHECK(absent("/tls/key.pem"), "and nothing after it is trusted");
	memcpy(ar + cert_at + 6 + 8 * 6, "0000zz00", 8);
	CHECK(absent("/tls/cert.pem"), "a field that is not hex is refused");
	memcpy(ar + cert_at + 6 + 8 * 6, saved, 8);
	check_file("/tls/cert.pem", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", "restored");
	ar[cert_at + 5] = '7';
	CHECK(absent("/tls/cert.pem"), "a bad magic is refused");
	ar[cert_at + 5] = '2';
	check_file("/tls/cert.pem", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
		   "070702 (with checksums) is read as 070701");
	return check_done();
}
