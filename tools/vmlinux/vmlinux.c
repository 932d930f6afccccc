/* Extracts the uncompressed vmlinux (an ELF file) from an x86 bzImage, for
 * hosts such as Firecracker that boot only an ELF kernel; Debian ships no
 * vmlinux. The payload's place comes from the boot protocol header (2.08+);
 * LZ4 (Debian's choice) is decoded here, other formats by the usual tool.
 *   vmlinux BZIMAGE OUT */
#ifndef _GNU_SOURCE /* fork, pipe, fileno under -std=c11 */
#define _GNU_SOURCE
#endif
#include "kernel/runtime/file.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define LZ4_LEGACY_MAGIC 0x184C2102u
#define LZ4_LEGACY_BLOCK (8u << 20) /* the legacy format's largest block */

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int fail(const char *what)
{
	fprintf(stderr, "vmlinux: %s\n", what);
	return 1;
}

static uint8_t *read_file(const char *path, size_t *len)
{
	return (uint8_t *)ig_read_file(path, (size_t)1 << 30, 0, len, NULL, 0);
}

/* One LZ4 block into out[0..cap); returns the bytes written or -1. Every
 * length is checked: the input is a file from elsewhere. */
static long lz4_block(const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
	size_t i = 0, o = 0;
	while (i < n) {
		unsigned token = in[i++];
		size_t lit = token >> 4;
		if (lit == 15)
			for (unsigned b = 255; b == 255 && i < n; lit += (b = in[i++]))
				;
		if (lit > n - i || lit > cap - o)
			return -1;
		memcpy(out + o, in + i, lit);
		i += lit;
		o += lit;
		if (i == n)
			break; /* the last sequence has literals only */
		if (n - i < 2)
			return -1;
		size_t off = (size_t)in[i] | (size_t)in[i + 1] << 8;
		i += 2;
		size_t match = (token & 15) + 4;
		if ((token & 15) == 15)
			for (unsigned b = 255; b == 255 && i < n; match += (b = in[i++]))
				;
		if (off == 0 || off > o || match > cap - o)
			return -1;
		for (size_t k = 0; k < match; k++, o++) /* may overlap itself */
			out[o] = out[o - off];
	}
	return (long)o;
}

/* The legacy LZ4 frame of the kernel build: magic, then blocks each with a
 * 32-bit size; the build appends the uncompressed size, checked here. */
static int unlz4(const uint8_t *p, size_t n, FILE *out)
{
	uint8_t *buf = malloc(LZ4_LEGACY_BLOCK);
	size_t i = 4, total = 0;
	if (!buf)
		return fail("out of memory");
	while (n - i >= 4) {
		uint32_t size = le32(p + i);
		if (size == LZ4_LEGACY_MAGIC) { /* a concatenated frame */
			i += 4;
			continue;
		}
		if (n - i == 4) { /* the appended size */
			free(buf);
			return size == (uint32_t)total ? 0 : fail("LZ4: length does not match the recorded size");
		}
		i += 4;
		if (size > n - i) {
			free(buf);
			return fail("LZ4: truncated block");
		}
		long got = lz4_block(p + i, size, buf, LZ4_LEGACY_BLOCK);
		if (got < 0 || fwrite(buf, 1, (size_t)got, out) != (size_t)got) {
			free(buf);
			return fail(got < 0 ? "LZ4: corrupt block" : "write failed");
		}
		i += size;
		total += (size_t)got;
	}
	free(buf);
	return i == n ? 0 : fail("LZ4: trailing bytes");
}

/* Other formats: the standard decompressor, fed through a pipe. */
static int external(const char *tool, const uint8_t *p, size_t n, FILE *out)
{
	int fds[2];
	if (pipe(fds) != 0)
		return fail("pipe failed");
	fflush(out);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fds[0], 0);
		dup2(fileno(out), 1);
		close(fds[0]);
		close(fds[1]);
		execlp(tool, tool, "-dc", (char *)NULL);
		fprintf(stderr, "vmlinux: cannot run %s: %s\n", tool, strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	for (size_t off = 0; off < n;) {
		ssize_t w = write(fds[1], p + off, n - off);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	close(fds[1]);
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return fail("the decompressor failed");
	return 0;
}

/* Writes the payload of the bzImage img[0..len) to the file out. */
static int extract(const uint8_t *img, size_t len, const char *path)
{
	/* Boot protocol: "HdrS" at 0x202, version at 0x206, payload_offset and
	 * payload_length at 0x248 (2.08+), relative to the protected-mode code
	 * that starts after the 512-byte sectors of the real-mode setup. */
	if (len < 0x250 || memcmp(img + 0x202, "HdrS", 4) != 0)
		return fail("not a bzImage (no HdrS header)");
	if ((img[0x206] | img[0x207] << 8) < 0x208)
		return fail("boot protocol older than 2.08: no payload fields");
	size_t setup = (img[0x1f1] ? img[0x1f1] : 4) + 1;
	size_t start = setup * 512 + le32(img + 0x248), plen = le32(img + 0x24c);
	if (start > len || plen > len - start || plen < 8)
		return fail("payload outside the file");
	const uint8_t *p = img + start;

	FILE *out = fopen(path, "wb");
	if (!out)
		return fail("cannot create the output");
	int rc;
	/* All but gzip (which records its own) carry the kernel build's 4-byte
	 * size suffix, which the tools would take for garbage. */
	if (le32(p) == LZ4_LEGACY_MAGIC)
		rc = unlz4(p, plen, out);
	else if (p[0] == 0x1f && p[1] == 0x8b)
		rc = external("gzip", p, plen, out);
	else if (memcmp(p, "\xfd" "7zXZ", 6) == 0)
		rc = external("xz", p, plen - 4, out);
	else if (le32(p) == 0xFD2FB528u)
		rc = external("zstd", p, plen - 4, out);
	else if (memcmp(p, "BZh", 3) == 0)
		rc = external("bzip2", p, plen - 4, out);
	else if (p[0] == 0x5d && p[1] == 0 && p[2] == 0)
		rc = external("lzma", p, plen - 4, out);
	else if (memcmp(p, "\x89LZO", 4) == 0)
		rc = external("lzop", p, plen - 4, out);
	else
		rc = fail("unknown payload compression");
	if (fclose(out) != 0 && rc == 0)
		rc = fail("write failed");
	if (rc == 0) {
		/* What came out must be an ELF kernel. */
		uint8_t head[5] = { 0 };
		FILE *f = fopen(path, "rb");
		if (!f || fread(head, 1, 5, f) != 5 || memcmp(head, "\x7f" "ELF\x02", 5) != 0)
			rc = fail("the payload is not a 64-bit ELF file");
		if (f)
			fclose(f);
	}
	return rc;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: vmlinux BZIMAGE OUT\n");
		return 2;
	}
	size_t len;
	uint8_t *img = read_file(argv[1], &len);
	if (!img)
		return fail("cannot read the bzImage");
	int rc = extract(img, len, argv[2]);
	free(img);
	if (rc != 0)
		unlink(argv[2]); /* no partial kernel for a host to boot */
	return rc;
}
