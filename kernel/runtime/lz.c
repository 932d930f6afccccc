/* Unpacking the ig_lz format (kernel/runtime/lz.h): the whole decoder, a
 * loop over tokens with every length and distance checked. */
#include "kernel/runtime/lz.h"

#include <string.h>

size_t ig_lz_unpack(unsigned char *out, size_t cap, const unsigned char *in, size_t len)
{
	size_t i = 0, o = 0;
	while (i < len) {
		unsigned t = in[i++];
		if (t < 0x80) {
			size_t n = t + 1;
			if (n > len - i || n > cap - o)
				return (size_t)-1;
			memcpy(out + o, in + i, n);
			i += n;
			o += n;
			continue;
		}
		size_t n = (t & 0x7f) + IG_LZ_MIN_MATCH;
		if (len - i < 2)
			return (size_t)-1;
		size_t d = in[i] | (size_t)in[i + 1] << 8;
		i += 2;
		if (d == 0 || d > o || n > cap - o)
			return (size_t)-1;
		/* Byte by byte: a match may overlap the bytes it writes. */
		for (size_t k = 0; k < n; k++, o++)
			out[o] = out[o - d];
	}
	return o;
}
