/* lwIP's compiler and platform header for ingot: C11 with stdint, a
 * little-endian x86_64, and what lwIP prints or asserts going to stderr
 * (the console, on bare metal). Assertions are compiled in only under the
 * sanitizers (make lwip-asan), where a broken invariant should stop. */
#ifndef NET_LWIP_ARCH_CC_H
#define NET_LWIP_ARCH_CC_H

#include <stdio.h>
#include <stdlib.h>

#define LWIP_TIMEVAL_PRIVATE 0
#ifndef BYTE_ORDER
#define BYTE_ORDER LITTLE_ENDIAN
#endif

#define LWIP_PLATFORM_DIAG(x) \
	do { \
		printf x; \
	} while (0)

#if defined(__SANITIZE_ADDRESS__)
#define LWIP_PLATFORM_ASSERT(x) \
	do { \
		fprintf(stderr, "lwip: assertion \"%s\" failed at %s:%d\n", x, __FILE__, __LINE__); \
		abort(); \
	} while (0)
#else
#define LWIP_NOASSERT 1
#define LWIP_PLATFORM_ASSERT(x) \
	do { \
	} while (0)
#endif

#endif
