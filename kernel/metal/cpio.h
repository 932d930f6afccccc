/* The initrd's archive: cpio "newc" (as Linux's initramfs), read in place.
 * Its regular files are the machine's only files, seen at `/` (fds.c opens
 * them read-only). Pure: the archive is bytes the caller hands in. */
#ifndef KERNEL_METAL_CPIO_H
#define KERNEL_METAL_CPIO_H

#include <stdbool.h>
#include <stddef.h>

/* Finds the regular file `path` (leading `/` and `./` ignored, on both the
 * path and the archive's names) in the archive of `len` bytes at `archive`;
 * on true, *data and *size are its bytes, inside the archive. False when it
 * is absent, not a regular file, or the archive is malformed before it
 * (a bad magic, a field that is not hex, a name or data past the end). */
bool ig_cpio_find(const void *archive, size_t len, const char *path, const void **data, size_t *size);

#endif
