/* Reading a small file whole: the TLS certificate, key and CA bundle, the
 * resolver's /etc/hosts and resolv.conf, and the host tools' inputs. One
 * read loop (EINTR, short reads) and one set of messages for all of them.
 * Not for the request path: it allocates with malloc. */
#ifndef KERNEL_FILE_H
#define KERNEL_FILE_H

#include <stddef.h>

/* Read only the first max bytes of a larger file instead of failing. */
#define IG_FILE_PREFIX 1u

/* The bytes of the regular file at path, NUL-terminated (malloc'd; *len
 * does not count the NUL), or NULL with errno set and "cannot read PATH:
 * why" in err (err may be NULL). A file larger than max bytes fails, or with
 * IG_FILE_PREFIX is cut to its first max bytes. */
char *ig_read_file(const char *path, size_t max, unsigned flags, size_t *len, char *err, size_t errlen);

#endif
