/* cpio newc (cpio.h): a 110-byte header of "070701" (or "070702", with a
 * checksum this ignores) and 13 eight-digit hex fields, the NUL-terminated
 * name, padding to 4, the data, padding to 4; "TRAILER!!!" ends it. */
#include "kernel/metal/cpio.h"

#include <stdint.h>
#include <string.h>

#define HEADER 110
#define F_MODE 1
#define F_FILESIZE 6
#define F_NAMESIZE 11
#define S_IFMT_ 0170000u
#define S_IFREG_ 0100000u

static bool hex8(const char *p, uint32_t *out)
{
	uint32_t v = 0;
	for (int i = 0; i < 8; i++) {
		char c = p[i];
		unsigned d;
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return false;
		v = v << 4 | d;
	}
	*out = v;
	return true;
}

static const char *strip(const char *name)
{
	for (;;) {
		if (name[0] == '/')
			name++;
		else if (name[0] == '.' && name[1] == '/')
			name += 2;
		else
			return name;
	}
}

static size_t pad4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

bool ig_cpio_find(const void *archive, size_t len, const char *path, const void **data, size_t *size)
{
	const char *a = archive, *want = strip(path);
	size_t at = 0;
	while (len - at >= HEADER) {
		const char *h = a + at;
		if (memcmp(h, "07070", 5) != 0 || (h[5] != '1' && h[5] != '2'))
			return false;
		uint32_t f[13];
		for (int i = 0; i < 13; i++)
			if (!hex8(h + 6 + 8 * i, &f[i]))
				return false;
		size_t namesize = f[F_NAMESIZE], filesize = f[F_FILESIZE];
		if (namesize == 0 || namesize > len - at - HEADER)
			return false;
		const char *name = h + HEADER;
		if (name[namesize - 1] != '\0')
			return false;
		size_t data_at = pad4(at + HEADER + namesize);
		if (data_at > len || filesize > len - data_at)
			return false;
		if (strcmp(name, "TRAILER!!!") == 0)
			return false;
		if ((f[F_MODE] & S_IFMT_) == S_IFREG_ && strcmp(strip(name), want) == 0) {
			*data = a + data_at;
			*size = filesize;
			return true;
		}
		at = pad4(data_at + filesize);
		if (at > len)
			return false;
	}
	return false;
}
